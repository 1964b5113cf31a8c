//! Accounts, lobbies and spectators over real sockets, on both stores:
//! guests through a lobby to a started match and its end, a registered account on a second
//! device, private lobbies and matches behind their invite code, the host role passing on,
//! kicks, a lobby across a restart, bots, spectators refused when commanding, and every
//! validation error.

use crate::common::*;
use client::{ClientError, CommandOutcome, Connection};
use protocol::{
    ErrorCode, LobbyList, LobbyState, LobbyStatus, Occupant, ServerMessage, SessionCreated, close,
};
use rules::Command;
use serde_json::{Value, json};
use uuid::Uuid;

on_both_stores!(
    four_guests_play_a_lobby_match_to_its_end,
    a_registered_account_takes_its_seat_from_a_second_device,
    a_private_lobby_and_its_match_need_the_invite_code,
    the_host_role_passes_on_kicks_and_an_empty_lobby_closes,
    a_lobby_survives_a_restart,
    names_and_options_are_validated,
);

/// One REST call with an optional session (bearer); the status and the JSON body (`null` when
/// empty).
pub(crate) async fn call(
    server: &TestServer,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth
        .as_deref()
        .map(|a| vec![("Authorization", a)])
        .unwrap_or_default();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let (status, text) = http(server, method, path, &headers, &body).await;
    let value = if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{method} {path}: {e}: {text}"))
    };
    (status, value)
}

/// Expects a refusal with this status and code.
#[track_caller]
fn refused(got: (u16, Value), status: u16, code: &str) {
    assert_eq!(
        (got.0, got.1["code"].as_str()),
        (status, Some(code)),
        "{}",
        got.1
    );
}

pub(crate) fn lobby_of(v: Value) -> LobbyState {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("not a lobby: {e}: {v}"))
}

/// A guest account: its id and session token.
pub(crate) async fn guest(server: &TestServer, name: &str) -> (Uuid, String) {
    let (status, v) = call(
        server,
        "POST",
        "/api/accounts/guest",
        None,
        Some(json!({"name": name})),
    )
    .await;
    assert_eq!(status, 201, "{v}");
    let s: SessionCreated = serde_json::from_value(v).expect("session");
    assert_eq!(s.account.name, name.trim());
    (s.account.id, s.token)
}

/// A WebSocket connection with a session as bearer; reads the `identified` that follows the
/// welcome.
pub(crate) async fn ws_as(server: &TestServer, token: &str) -> Connection {
    let auth = format!("Bearer {token}");
    let mut conn = Connection::connect_with_headers(&server.ws(), &[("Authorization", &auth)])
        .await
        .expect("connect with a session");
    conn.set_read_timeout(Some(READ_TIMEOUT));
    match conn.next_message().await.expect("read") {
        Some(ServerMessage::Identified { .. }) => {}
        other => panic!("expected identified, got {other:?}"),
    }
    conn
}

/// Reads lobby pushes until one has at least `version`.
async fn lobby_push(conn: &mut Connection, version: u64) -> LobbyState {
    loop {
        let msg = conn
            .wait_for(|m| {
                matches!(
                    m,
                    ServerMessage::Lobby { .. } | ServerMessage::LobbyClosed { .. }
                )
            })
            .await
            .expect("a lobby push");
        match msg {
            ServerMessage::Lobby { lobby } if lobby.version >= version => return lobby,
            ServerMessage::Lobby { .. } => {}
            other => panic!("expected a lobby state, got {other:?}"),
        }
    }
}

/// The next error (without command id) on a connection.
async fn next_error(conn: &mut Connection) -> ErrorCode {
    match conn
        .wait_for(|m| matches!(m, ServerMessage::Error(b) if b.id.is_none()))
        .await
        .expect("an error")
    {
        ServerMessage::Error(b) => b.code,
        _ => unreachable!(),
    }
}

pub(crate) async fn ready(server: &TestServer, lobby: Uuid, token: &str) -> LobbyState {
    let (s, v) = call(
        server,
        "POST",
        &format!("/api/lobbies/{lobby}/ready"),
        Some(token),
        Some(json!({"ready": true})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    lobby_of(v)
}

pub(crate) async fn join(
    server: &TestServer,
    lobby: Uuid,
    token: &str,
    body: Value,
) -> (u16, Value) {
    call(
        server,
        "POST",
        &format!("/api/lobbies/{lobby}/join"),
        Some(token),
        Some(body),
    )
    .await
}

async fn list(server: &TestServer, query: &str) -> LobbyList {
    let (s, v) = call(server, "GET", &format!("/api/lobbies{query}"), None, None).await;
    assert_eq!(s, 200, "{v}");
    serde_json::from_value(v).expect("lobby list")
}

/// Plays the seats of `players` until the match ends, while the server's bots play the others:
/// any player with an open decision answers it; when none has one, a bot must move, and its
/// move arrives as the next diff. Returns the players' moves.
async fn play_with_bots(players: &mut [Follower], rng: &mut Rng) -> usize {
    for p in players.iter_mut() {
        p.sync_first().await;
    }
    let mut moves = 0;
    for _ in 0..5_000 {
        let view = players[0].view();
        if view.finished {
            return moves;
        }
        let seq = players[0].seq().expect("seq");
        let mine = players.iter().enumerate().find_map(|(i, p)| {
            let seat = p.seat?;
            let d = view.decisions.iter().find(|d| d.player() == seat)?;
            Some((i, d.clone()))
        });
        let next = match mine {
            Some((i, d)) => {
                let command = rules::bot::random_command(&d, || rng.next_u64()).expect("an answer");
                let p = &mut players[i];
                let id = p.new_id();
                moves += 1;
                match p.command(&id, command).await {
                    CommandOutcome::Accepted { seq, .. } => seq,
                    CommandOutcome::Rejected(e) => panic!("a legal move was refused: {e:?}"),
                }
            }
            // A bot's turn: its move is the next seq.
            None => seq + 1,
        };
        for p in players.iter_mut() {
            p.sync_to(next).await;
        }
    }
    panic!("the match did not end");
}

/// A player's follower over a session connection: takes the account's seat and subscribes.
async fn seated(server: &TestServer, token: &str, match_id: Uuid) -> Follower {
    let mut conn = ws_as(server, token).await;
    let seat = conn.take_seat(match_id).await.expect("take seat");
    conn.subscribe(match_id, None).await.expect("subscribe");
    Follower::from_conn(conn, match_id, Some(seat.seat))
}

async fn four_guests_play_a_lobby_match_to_its_end(db: &TestDb) {
    let server = TestServer::start(db.config());
    let mut players = Vec::new();
    for name in ["Ann", "Bo", "Cy", "Di"] {
        players.push(guest(&server, name).await);
    }
    let tokens: Vec<&str> = players.iter().map(|(_, t)| t.as_str()).collect();
    let (s, v) = call(
        &server,
        "POST",
        "/api/lobbies",
        Some(tokens[0]),
        Some(
            json!({"name": "Friday", "seats": 4, "modules": {"tollkeepers": true},
                    "clock": {"bank_ms": 300000, "increment_ms": 20000}}),
        ),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let lobby = lobby_of(v);
    let id = lobby.id;
    assert_eq!(lobby.host, Some(players[0].0));
    assert_eq!(lobby.clock.map(|c| c.bank_ms), Some(300_000));

    // Everyone follows the lobby; each join reaches the host's connection.
    let mut conns = Vec::new();
    for t in &tokens {
        let mut c = ws_as(&server, t).await;
        if conns.is_empty() {
            c.subscribe_lobby(id).await.expect("send");
            assert_eq!(lobby_push(&mut c, 1).await.version, 1);
        }
        conns.push(c);
    }
    for (i, t) in tokens.iter().enumerate().skip(1) {
        let (s, v) = join(&server, id, t, json!({})).await;
        assert_eq!(s, 200, "{v}");
        conns[i].subscribe_lobby(id).await.expect("send");
        let seen = lobby_push(&mut conns[0], lobby_of(v).version).await;
        assert!(
            matches!(&seen.seats[i].occupant, Some(Occupant::Player { account_id, .. }) if *account_id == players[i].0),
            "{seen:?}"
        );
    }
    let found = list(&server, "?module=tollkeepers").await;
    assert!(found.lobbies.iter().any(|l| l.id == id));
    assert!(
        !list(&server, "?module=messages")
            .await
            .lobbies
            .iter()
            .any(|l| l.id == id)
    );
    assert!(
        !list(&server, "?free_seats=1")
            .await
            .lobbies
            .iter()
            .any(|l| l.id == id)
    );

    let start = format!("/api/lobbies/{id}/start");
    refused(
        call(&server, "POST", &start, Some(tokens[0]), None).await,
        409,
        "not_ready",
    );
    let mut last = lobby;
    for t in &tokens {
        last = ready(&server, id, t).await;
    }
    refused(
        call(&server, "POST", &start, Some(tokens[1]), None).await,
        403,
        "not_host",
    );
    let (s, v) = call(&server, "POST", &start, Some(tokens[0]), None).await;
    assert_eq!(s, 201, "{v}");
    let match_id: Uuid = serde_json::from_value(v["match_id"].clone()).expect("match id");
    refused(
        call(&server, "POST", &start, Some(tokens[0]), None).await,
        409,
        "lobby_started",
    );

    // Every follower gets the started lobby with the match id, and takes its seat.
    let mut seats = Vec::new();
    for (i, mut c) in conns.into_iter().enumerate() {
        let l = lobby_push(&mut c, last.version + 1).await;
        assert_eq!(
            (l.status, l.match_id),
            (LobbyStatus::Started, Some(match_id))
        );
        let seat = c.take_seat(match_id).await.expect("take seat");
        assert_eq!(usize::from(seat.seat), i);
        c.subscribe(match_id, None).await.expect("subscribe");
        seats.push(Follower::from_conn(c, match_id, Some(seat.seat)));
    }
    // Another account holds no seat there; seat tokens are not needed by players.
    let (_, stranger_token) = guest(&server, "Eve").await;
    let mut stranger = ws_as(&server, &stranger_token).await;
    match stranger.take_seat(match_id).await {
        Err(ClientError::Refused(b)) => assert_eq!(b.code, ErrorCode::NotYourSeat),
        other => panic!("expected not_your_seat, got {other:?}"),
    }

    // The running public match is listed to watch; a spectator follows it without a seat.
    let watch = list(&server, "").await;
    let m = watch
        .matches
        .iter()
        .find(|m| m.match_id == match_id)
        .expect("listed to watch");
    assert_eq!(m.players, vec!["Ann", "Bo", "Cy", "Di"]);
    let mut spectator = Follower::join(&server, match_id, None, None).await;
    spectator.sync_first().await;
    match spectator.command("sneaky", Command::Pass {}).await {
        CommandOutcome::Rejected(b) => assert_eq!(b.code, ErrorCode::Spectator, "{b:?}"),
        other => panic!("a spectator's command was accepted: {other:?}"),
    }

    for f in seats.iter_mut() {
        f.sync_first().await;
    }
    // The lobby's clock runs in its match: four banks of 5 min, only the first player's running.
    let view = seats[0].mirror.view().cloned().expect("a view");
    let clocks = view["clocks"]
        .as_array()
        .expect("clocks in the match's view");
    assert_eq!(clocks.len(), 4, "{view}");
    for (i, c) in clocks.iter().enumerate() {
        assert!(c["remaining_ms"].as_u64() <= Some(300_000), "{c}");
        assert_eq!(c["running_since"].is_u64(), i == 0, "{c}");
    }
    let mut rng = Rng::new(12);
    let mut watchers = vec![spectator];
    let mut moves = 0;
    while answer_one(&mut seats, &mut watchers, &mut rng)
        .await
        .is_some()
    {
        moves += 1;
        assert!(moves < 5_000, "the match did not end");
    }
    let spectator = &watchers[0];
    assert!(spectator.view().finished);
    let last_seq = spectator.seq().expect("seq");
    // Diffs from the first snapshot on, without a hole.
    let first = spectator.diff_seqs.first().copied().expect("diffs");
    assert_eq!(spectator.diff_seqs, (first..=last_seq).collect::<Vec<_>>());
    assert_eq!(spectator.view(), seats[0].view());
    // A finished match is no longer offered to watch.
    assert!(
        !list(&server, "")
            .await
            .matches
            .iter()
            .any(|m| m.match_id == match_id)
    );
}

async fn a_registered_account_takes_its_seat_from_a_second_device(db: &TestDb) {
    let server = TestServer::start(db.config());
    let creds = json!({"name": "Ada", "password": "analytical engine"});
    let (s, v) = call(&server, "POST", "/api/accounts", None, Some(creds.clone())).await;
    assert_eq!(s, 201, "{v}");
    let first: SessionCreated = serde_json::from_value(v).expect("session");
    assert_eq!(first.account.kind, protocol::AccountKind::Registered);
    // Names are unique among registered accounts, whatever the case; guests cannot take them.
    refused(
        call(
            &server,
            "POST",
            "/api/accounts",
            None,
            Some(json!({"name": " ADA ", "password": "something else"})),
        )
        .await,
        409,
        "name_taken",
    );
    refused(
        call(
            &server,
            "POST",
            "/api/accounts/guest",
            None,
            Some(json!({"name": "ada"})),
        )
        .await,
        409,
        "name_taken",
    );
    refused(
        call(
            &server,
            "POST",
            "/api/sessions",
            None,
            Some(json!({"name": "Ada", "password": "wrong password"})),
        )
        .await,
        401,
        "bad_credentials",
    );
    refused(
        call(
            &server,
            "POST",
            "/api/sessions",
            None,
            Some(json!({"name": "Nobody", "password": "analytical engine"})),
        )
        .await,
        401,
        "bad_credentials",
    );

    // Ada plays against a bot.
    let (s, v) = call(
        &server,
        "POST",
        "/api/lobbies",
        Some(&first.token),
        Some(json!({"name": "Ada vs bot", "seats": 2})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let id = lobby_of(v).id;
    let (s, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{id}/bot"),
        Some(&first.token),
        Some(json!({"seat": 1})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        lobby_of(v).seats[1].occupant,
        Some(Occupant::Bot {
            level: protocol::BotLevel::Easy
        })
    );
    ready(&server, id, &first.token).await;
    let (s, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{id}/start"),
        Some(&first.token),
        None,
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let match_id: Uuid = serde_json::from_value(v["match_id"].clone()).expect("match id");

    // Another device logs in with a session of its own; the browser gets it as a strict HttpOnly
    // cookie, and the WebSocket accepts the cookie.
    let (status, head) = raw_post(&server, "/api/sessions", &creds.to_string()).await;
    assert_eq!(status, 201, "{head}");
    let cookie = head
        .lines()
        .find_map(|l| {
            l.strip_prefix("set-cookie: ")
                .or_else(|| l.strip_prefix("Set-Cookie: "))
        })
        .expect("a session cookie");
    assert!(
        cookie.contains("HttpOnly")
            && cookie.contains("SameSite=Strict")
            && cookie.contains("Path=/"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().expect("name=value").to_string();
    let second_token = pair
        .strip_prefix("session=")
        .expect("session cookie")
        .to_string();
    let (s, v) = call(&server, "GET", "/api/me", Some(&second_token), None).await;
    assert_eq!((s, v["name"].as_str()), (200, Some("Ada")));
    let (s, v) = call(&server, "GET", "/api/sessions", Some(&second_token), None).await;
    assert_eq!(s, 200, "{v}");
    let sessions = v.as_array().expect("a list");
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions.iter().filter(|s| s["current"] == true).count(), 1);

    let mut conn = Connection::connect_with_headers(&server.ws(), &[("Cookie", &pair)])
        .await
        .expect("connect with the cookie");
    conn.set_read_timeout(Some(READ_TIMEOUT));
    let seat = conn
        .take_seat(match_id)
        .await
        .expect("the second device takes the seat");
    assert_eq!(seat.seat, 0);
    conn.subscribe(match_id, None).await.expect("subscribe");
    let me = Follower::from_conn(conn, match_id, Some(0));

    // The first device's session is revoked from the second: it opens nothing any more, and
    // the connections it opened before are closed with 4002, the one holding a seat too.
    let mut old_device = ws_as(&server, &first.token).await;
    let mut old_seat = ws_as(&server, &first.token).await;
    let other_match = create(&server, 2).await;
    old_seat
        .auth(&other_match.seats[1].token)
        .await
        .expect("the old device holds a seat");
    let path = format!("/api/sessions/{}", first.session_id);
    let (s, _) = call(&server, "DELETE", &path, Some(&second_token), None).await;
    assert_eq!(s, 204);
    for (what, conn) in [("idle", &mut old_device), ("seated", &mut old_seat)] {
        // Read to the end: what was queued before the close, then the close.
        while let Ok(Some(_)) = conn.next_message().await {}
        assert_eq!(
            conn.close_frame().map(|c| c.code),
            Some(close::SESSION_REVOKED),
            "the {what} connection of a revoked session"
        );
    }
    refused(
        call(&server, "GET", "/api/me", Some(&first.token), None).await,
        401,
        "unknown_session",
    );
    refused(
        call(&server, "DELETE", &path, Some(&second_token), None).await,
        404,
        "unknown_session",
    );
    match Connection::connect_with_headers(
        &server.ws(),
        &[("Authorization", &format!("Bearer {}", first.token))],
    )
    .await
    {
        Err(ClientError::WebSocket(e)) => match *e {
            tokio_tungstenite::tungstenite::Error::Http(r) => assert_eq!(r.status(), 401),
            other => panic!("unexpected refusal {other:?}"),
        },
        Err(other) => panic!("unexpected refusal {other:?}"),
        Ok(_) => panic!("a revoked session opened a WebSocket"),
    }

    // Ada plays her seat to the end against the server's bot.
    let mut me = [me];
    let moves = play_with_bots(&mut me, &mut Rng::new(5)).await;
    assert!(moves > 0);
    assert!(me[0].view().finished);

    // Log out everywhere: the last session goes too.
    let (s, _) = call(
        &server,
        "DELETE",
        "/api/sessions",
        Some(&second_token),
        None,
    )
    .await;
    assert_eq!(s, 204);
    refused(
        call(&server, "GET", "/api/me", Some(&second_token), None).await,
        401,
        "unknown_session",
    );
}

/// A POST without a session, as JSON; the status and the response head.
async fn raw_post(server: &TestServer, path: &str, body: &str) -> (u16, String) {
    let json = [("Content-Type", "application/json")];
    let (status, head, _) = http_with_head(server, "POST", path, &json, body).await;
    (status, head)
}

/// Three guests (the host, a friend, a stranger) and a private lobby of `seats` that the host
/// created.
pub(crate) struct PrivateLobby {
    pub host: String,
    pub friend: String,
    pub stranger: String,
    pub id: Uuid,
    pub code: String,
}

pub(crate) async fn private_lobby(server: &TestServer, seats: u8) -> PrivateLobby {
    let (_, host) = guest(server, "Host").await;
    let (_, friend) = guest(server, "Friend").await;
    let (_, stranger) = guest(server, "Stranger").await;
    let (s, v) = call(
        server,
        "POST",
        "/api/lobbies",
        Some(&host),
        Some(json!({"name": "Family", "seats": seats, "public": false})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let lobby = lobby_of(v);
    let code = lobby
        .invite_code
        .expect("the host sees a private lobby's invite code");
    PrivateLobby {
        host,
        friend,
        stranger,
        id: lobby.id,
        code,
    }
}

async fn a_private_lobby_and_its_match_need_the_invite_code(db: &TestDb) {
    let server = TestServer::start(db.config());
    let PrivateLobby {
        host,
        friend,
        stranger,
        id,
        code,
    } = private_lobby(&server, 2).await;
    assert!(
        !list(&server, "").await.lobbies.iter().any(|l| l.id == id),
        "a private lobby is not listed"
    );

    // Without the code: not readable, not joinable, not followed.
    refused(
        call(
            &server,
            "GET",
            &format!("/api/lobbies/{id}"),
            Some(&stranger),
            None,
        )
        .await,
        403,
        "invite_required",
    );
    refused(
        join(&server, id, &stranger, json!({})).await,
        403,
        "invite_required",
    );
    refused(
        join(&server, id, &stranger, json!({"invite_code": "WRONG123"})).await,
        403,
        "invite_required",
    );
    let mut snoop = ws_as(&server, &stranger).await;
    snoop.subscribe_lobby(id).await.expect("send");
    assert_eq!(next_error(&mut snoop).await, ErrorCode::InviteRequired);
    // With it: readable and joinable.
    let (s, _) = call(
        &server,
        "GET",
        &format!("/api/lobbies/{id}?invite_code={code}"),
        None,
        None,
    )
    .await;
    assert_eq!(s, 200);
    // The stranger joins with the code and follows; once kicked, the pushes stop.
    let (s, v) = join(&server, id, &stranger, json!({"invite_code": code})).await;
    assert_eq!(s, 200, "{v}");
    snoop.subscribe_lobby(id).await.expect("send");
    lobby_push(&mut snoop, 2).await;
    let (s, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{id}/kick"),
        Some(&host),
        Some(json!({"seat": 1})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(next_error(&mut snoop).await, ErrorCode::NotInLobby);
    let (s, v) = join(
        &server,
        id,
        &friend,
        json!({"invite_code": code.to_lowercase()}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let mut friend_conn = ws_as(&server, &friend).await;
    friend_conn.subscribe_lobby(id).await.expect("send");
    assert!(lobby_push(&mut friend_conn, 1).await.invite_code.is_some());

    ready(&server, id, &host).await;
    ready(&server, id, &friend).await;
    let (s, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{id}/start"),
        Some(&host),
        None,
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let match_id: Uuid = serde_json::from_value(v["match_id"].clone()).expect("match id");
    assert!(
        !list(&server, "")
            .await
            .matches
            .iter()
            .any(|m| m.match_id == match_id),
        "a private match is not listed"
    );

    // A spectator needs the code; a player does not.
    let mut watcher = Connection::connect(&server.ws()).await.expect("connect");
    watcher.set_read_timeout(Some(READ_TIMEOUT));
    watcher.subscribe(match_id, None).await.expect("send");
    assert_eq!(next_error(&mut watcher).await, ErrorCode::InviteRequired);
    watcher
        .watch(match_id, "WRONG123", None)
        .await
        .expect("send");
    assert_eq!(next_error(&mut watcher).await, ErrorCode::InviteRequired);
    watcher.watch(match_id, &code, None).await.expect("send");
    let mut watcher = Follower::from_conn(watcher, match_id, None);
    watcher.sync_first().await;

    let seat = friend_conn.take_seat(match_id).await.expect("take seat");
    friend_conn.subscribe(match_id, None).await.expect("send");
    let mut friend_f = Follower::from_conn(friend_conn, match_id, Some(seat.seat));
    friend_f.sync_first().await;
    let mut host_conn = ws_as(&server, &host).await;
    let seat0 = host_conn.take_seat(match_id).await.expect("take seat");
    host_conn.subscribe(match_id, None).await.expect("send");
    let mut host_f = Follower::from_conn(host_conn, match_id, Some(seat0.seat));
    host_f.sync_first().await;

    // Moves reach the spectator, whose own commands are refused.
    let mut seats = vec![host_f, friend_f];
    let mut watchers = vec![watcher];
    let mut rng = Rng::new(7);
    for _ in 0..6 {
        answer_one(&mut seats, &mut watchers, &mut rng)
            .await
            .expect("a move");
    }
    let w = &mut watchers[0];
    assert_eq!(w.seq(), seats[0].seq());
    assert!(!w.diff_seqs.is_empty());
    match w.command("mine", Command::Pass {}).await {
        CommandOutcome::Rejected(b) => assert_eq!(b.code, ErrorCode::Spectator),
        other => panic!("a spectator's command was accepted: {other:?}"),
    }
}

async fn the_host_role_passes_on_kicks_and_an_empty_lobby_closes(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (a_id, a) = guest(&server, "A").await;
    let (b_id, b) = guest(&server, "B").await;
    let (c_id, c) = guest(&server, "C").await;
    let (s, v) = call(
        &server,
        "POST",
        "/api/lobbies",
        Some(&a),
        Some(json!({"name": "Rotating", "seats": 3})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let id = lobby_of(v).id;
    join(&server, id, &b, json!({"seat": 2, "colour": "black"})).await;
    let (s, v) = join(&server, id, &c, json!({})).await;
    assert_eq!(s, 200, "{v}");
    let l = lobby_of(v);
    assert_eq!(l.seats[2].colour, Some(rules::Colour::Black));
    assert_eq!(l.seats[1].colour, Some(rules::Colour::Green));
    let mut c_conn = ws_as(&server, &c).await;
    c_conn.subscribe_lobby(id).await.expect("send");
    let v0 = lobby_push(&mut c_conn, 1).await.version;

    // The host leaves: the next player after the host's seat (C on seat 1) becomes host.
    let (s, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{id}/leave"),
        Some(&a),
        None,
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let pushed = lobby_push(&mut c_conn, v0 + 1).await;
    assert_eq!(pushed.host, Some(c_id));
    assert!(pushed.seats[0].occupant.is_none());
    // Only the host kicks.
    refused(
        call(
            &server,
            "POST",
            &format!("/api/lobbies/{id}/kick"),
            Some(&b),
            Some(json!({"seat": 1})),
        )
        .await,
        403,
        "not_host",
    );
    refused(
        call(
            &server,
            "POST",
            &format!("/api/lobbies/{id}/kick"),
            Some(&a),
            Some(json!({"seat": 2})),
        )
        .await,
        403,
        "not_host",
    );
    let (s, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{id}/kick"),
        Some(&c),
        Some(json!({"seat": 2})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let pushed = lobby_push(&mut c_conn, lobby_of(v).version).await;
    assert!(pushed.seats[2].occupant.is_none());
    refused(
        call(
            &server,
            "POST",
            &format!("/api/lobbies/{id}/ready"),
            Some(&b),
            Some(json!({"ready": true})),
        )
        .await,
        403,
        "not_in_lobby",
    );
    let _ = (a_id, b_id);

    // The last player leaves: the lobby closes, followers are told, and it is gone.
    let (s, _) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{id}/leave"),
        Some(&c),
        None,
    )
    .await;
    assert_eq!(s, 204);
    let closed = c_conn
        .wait_for(|m| matches!(m, ServerMessage::LobbyClosed { .. }))
        .await
        .expect("lobby_closed");
    assert_eq!(closed, ServerMessage::LobbyClosed { lobby_id: id });
    refused(
        call(&server, "GET", &format!("/api/lobbies/{id}"), None, None).await,
        404,
        "unknown_lobby",
    );
}

async fn a_lobby_survives_a_restart(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (_, a) = guest(&server, "Keeper").await;
    let (_, b) = guest(&server, "Guest").await;
    let (s, v) = call(&server, "POST", "/api/lobbies", Some(&a), Some(json!({"name": "Overnight", "seats": 3, "modules": {"france": true, "chips": true, "messages": true}, "meeples": 8}))).await;
    assert_eq!(s, 201, "{v}");
    let id = lobby_of(v).id;
    join(&server, id, &b, json!({})).await;
    let before = ready(&server, id, &b).await;
    server.stop().await;

    let server = TestServer::start(db.config());
    let (s, v) = call(&server, "GET", &format!("/api/lobbies/{id}"), None, None).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(lobby_of(v), before);
    // Sessions survive too; the lobby goes on: a bot fills the last seat and the match starts
    // with the chosen modules, the bot playing its seat.
    let (s, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{id}/bot"),
        Some(&a),
        Some(json!({"seat": 2})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    ready(&server, id, &a).await;
    let (s, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{id}/start"),
        Some(&a),
        None,
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let match_id: Uuid = serde_json::from_value(v["match_id"].clone()).expect("match id");
    let (_, view) = server_view(&server, match_id).await;
    assert_eq!(view["players"].as_array().map(Vec::len), Some(3), "{view}");
    assert!(view.to_string().contains("france"), "the France map is on");
    // The started lobby is kept, read-only, across a restart while its match runs.
    server.stop().await;
    let server = TestServer::start(db.config());
    let (s, v) = call(
        &server,
        "GET",
        &format!("/api/lobbies/{id}"),
        Some(&a),
        None,
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(lobby_of(v).match_id, Some(match_id));
    refused(join(&server, id, &b, json!({})).await, 409, "lobby_started");
    // The view names the seats from the lobby, across the restart: the accounts, and the bot.
    let (_, view) = server_view(&server, match_id).await;
    assert_eq!(
        view["names"],
        json!([{"name": "Keeper"}, {"name": "Guest"}, {"name": "Bot (easy)", "bot": true}]),
        "{view}"
    );
    // The bot was resumed with the match: the two players and the bot play it to the end.
    let mut players = [
        seated(&server, &a, match_id).await,
        seated(&server, &b, match_id).await,
    ];
    assert!(play_with_bots(&mut players, &mut Rng::new(9)).await > 0);
    let bot_moved = players[0]
        .events
        .iter()
        .any(|e| matches!(e, rules::Event::TilePlaced { player: 2, .. }));
    assert!(bot_moved, "the bot placed tiles after the restart");
}

async fn names_and_options_are_validated(db: &TestDb) {
    let server = TestServer::start(db.config());
    for bad in ["", "   ", "a\u{7}b", "abcdefghijklmnopqrstuvwxy"] {
        refused(
            call(
                &server,
                "POST",
                "/api/accounts/guest",
                None,
                Some(json!({"name": bad})),
            )
            .await,
            400,
            "bad_name",
        );
    }
    refused(
        call(
            &server,
            "POST",
            "/api/accounts",
            None,
            Some(json!({"name": "Short", "password": "1234567"})),
        )
        .await,
        400,
        "bad_password",
    );
    refused(
        call(
            &server,
            "POST",
            "/api/accounts/guest",
            None,
            Some(json!({"name": "x", "admin": true})),
        )
        .await,
        400,
        "malformed",
    );
    refused(
        call(&server, "GET", "/api/me", None, None).await,
        401,
        "unauthenticated",
    );
    refused(
        call(&server, "GET", "/api/me", Some("not-a-session"), None).await,
        401,
        "unknown_session",
    );
    let (_, t) = guest(&server, "  Valid Name  ").await;
    let (s, v) = call(&server, "GET", "/api/me", Some(&t), None).await;
    assert_eq!(
        (s, v["name"].as_str(), v["kind"].as_str()),
        (200, Some("Valid Name"), Some("guest"))
    );

    let create = |body: Value| {
        let t = t.clone();
        let server = &server;
        async move { call(server, "POST", "/api/lobbies", Some(&t), Some(body)).await }
    };
    refused(
        call(
            &server,
            "POST",
            "/api/lobbies",
            None,
            Some(json!({"name": "x", "seats": 2})),
        )
        .await,
        401,
        "unauthenticated",
    );
    for bad in [
        json!({"name": "x", "seats": 1}),
        json!({"name": "x", "seats": 7}),
        json!({"name": "", "seats": 2}),
        json!({"name": "x".repeat(49), "seats": 2}),
        json!({"name": "x", "seats": 2, "meeples": 0}),
        json!({"name": "x", "seats": 2, "meeples": 13}),
        json!({"name": "x", "seats": 2, "modules": {"chips": true}}),
        json!({"name": "x", "seats": 2, "clock": {"bank_ms": 5000, "increment_ms": 0}}),
        json!({"name": "x", "seats": 2, "clock": {"bank_ms": 300000, "increment_ms": 700000000}}),
    ] {
        refused(create(bad.clone()).await, 400, "bad_option");
    }
    refused(
        create(json!({"name": "x", "seats": 2, "modules": {"carcassonne_2": true}})).await,
        400,
        "malformed",
    );
    refused(
        call(&server, "GET", "/api/lobbies?module=river", None, None).await,
        400,
        "bad_option",
    );
    refused(
        call(
            &server,
            "GET",
            &format!("/api/lobbies/{}", Uuid::new_v4()),
            None,
            None,
        )
        .await,
        404,
        "unknown_lobby",
    );

    let (s, v) = create(json!({"name": "Full", "seats": 2})).await;
    assert_eq!(s, 201, "{v}");
    let id = lobby_of(v).id;
    refused(
        join(&server, id, &t, json!({})).await,
        409,
        "already_in_lobby",
    );
    let (_, u) = guest(&server, "Second").await;
    let (_, w) = guest(&server, "Third").await;
    refused(
        join(&server, id, &u, json!({"seat": 0})).await,
        409,
        "seat_taken",
    );
    refused(
        join(&server, id, &u, json!({"seat": 9})).await,
        409,
        "seat_taken",
    );
    refused(
        join(&server, id, &u, json!({"colour": "red"})).await,
        409,
        "colour_taken",
    );
    let (s, v) = join(&server, id, &u, json!({"colour": "pink"})).await;
    assert_eq!(s, 200, "{v}");
    refused(join(&server, id, &w, json!({})).await, 409, "seat_taken");
    refused(
        call(
            &server,
            "POST",
            &format!("/api/lobbies/{id}/colour"),
            Some(&t),
            Some(json!({"colour": "pink"})),
        )
        .await,
        409,
        "colour_taken",
    );
    let (s, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{id}/colour"),
        Some(&t),
        Some(json!({"colour": "yellow"})),
    )
    .await;
    assert_eq!(
        (s, lobby_of(v).seats[0].colour),
        (200, Some(rules::Colour::Yellow))
    );
    refused(
        call(
            &server,
            "POST",
            &format!("/api/lobbies/{id}/kick"),
            Some(&t),
            Some(json!({"seat": 0})),
        )
        .await,
        400,
        "bad_option",
    );
    refused(
        call(
            &server,
            "POST",
            &format!("/api/lobbies/{id}/bot"),
            Some(&t),
            Some(json!({"seat": 1})),
        )
        .await,
        409,
        "seat_taken",
    );

    // A command from a connection that holds no seat and watches nothing: unauthenticated;
    // take_seat without a session: unauthenticated.
    let mut anon = Connection::connect(&server.ws()).await.expect("connect");
    anon.set_read_timeout(Some(READ_TIMEOUT));
    match anon.take_seat(Uuid::new_v4()).await {
        Err(ClientError::Refused(b)) => assert_eq!(b.code, ErrorCode::Unauthenticated),
        other => panic!("expected unauthenticated, got {other:?}"),
    }
    let mut known = ws_as(&server, &w).await;
    known.subscribe_lobby(Uuid::new_v4()).await.expect("send");
    assert_eq!(next_error(&mut known).await, ErrorCode::UnknownLobby);

    // Log out: this session only.
    let (s, _) = call(&server, "DELETE", "/api/sessions/current", Some(&w), None).await;
    assert_eq!(s, 204);
    refused(
        call(&server, "GET", "/api/me", Some(&w), None).await,
        401,
        "unknown_session",
    );
    let (s, _) = call(&server, "GET", "/api/me", Some(&u), None).await;
    assert_eq!(s, 200);
}
