//! A match's history for its players and spectators, over real HTTP on both stores: the log
//! from the opening on, in pages, with the same events the admin log stores and nothing of the
//! setup; the chat a player may read (the table) and a spectator (both channels); a private
//! lobby's match only with its invite code, a seat, or a player's session; `GET /api/whoami`
//! answers "no one" without an error.

use crate::chat::two_player_match;
use crate::common::*;
use crate::lobby::{PrivateLobby, call, join, private_lobby, ready};
use client::Connection;
use protocol::{ChatChannel, ClientMessage, MatchChat, MatchLog, ServerMessage};
use serde_json::{Value, json};
use uuid::Uuid;

on_both_stores!(
    the_log_holds_every_move_from_the_opening_in_pages,
    the_chat_history_is_what_the_reader_may_read,
    a_private_matchs_history_needs_the_invite_code_or_a_seat,
    whoami_answers_no_one_without_an_error,
);

async fn get(server: &TestServer, path: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    let (status, body) = http(server, "GET", path, headers, "").await;
    let v = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
    (status, v)
}

async fn log_page(server: &TestServer, path: &str) -> MatchLog {
    let (s, v) = get(server, path, &[]).await;
    assert_eq!(s, 200, "{path}: {v}");
    serde_json::from_value(v).expect("a match log")
}

async fn the_log_holds_every_move_from_the_opening_in_pages(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = client::create_match(
        &server.http(),
        &protocol::CreateMatch {
            players: vec![rules::Colour::Red, rules::Colour::Blue],
            modules: rules::Modules::all(),
            meeples: None,
            draw_order: None,
            clock: None,
        },
    )
    .await
    .expect("create");
    let id = created.match_id;
    let moves = play_random_moves(&server, &created, 12).await;

    // The newest page reaches the opening: seq 0 (the game's start) and every move after it.
    let whole = log_page(&server, &format!("/api/matches/{id}/log")).await;
    let seqs: Vec<u64> = whole.entries.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..=moves).collect::<Vec<_>>());
    assert_eq!(whole.before, None);
    assert_eq!(whole.entries[0].seat, None);
    assert!(
        matches!(whole.entries[0].events[0], rules::Event::GameStarted { .. }),
        "{:?}",
        whole.entries[0]
    );
    // The events are the stored ones (the admin's log), and the answer names no secret.
    let admin = admin_json(&server, &format!("/api/admin/matches/{id}/log")).await;
    for (entry, stored) in whole.entries[1..]
        .iter()
        .zip(admin["commands"].as_array().expect("commands"))
    {
        assert_eq!(json!(entry.events), stored["events"]);
        assert_eq!(json!(entry.seat), stored["seat"]);
        assert_eq!(entry.by_server, None, "players made every move");
    }
    let (_, text) = http(&server, "GET", &format!("/api/matches/{id}/log"), &[], "").await;
    for secret in ["seed", "pile_order", "draw_order", "stack"] {
        assert!(
            !text.contains(&format!("\"{secret}\"")),
            "{secret} in {text}"
        );
    }

    // Pages of five, newest first, back to the opening.
    let mut path = format!("/api/matches/{id}/log?limit=5");
    let mut seen = Vec::new();
    loop {
        let page = log_page(&server, &path).await;
        let mut s: Vec<u64> = page.entries.iter().map(|e| e.seq).collect();
        s.append(&mut seen);
        seen = s;
        match page.before {
            Some(b) => path = format!("/api/matches/{id}/log?before={b}&limit=5"),
            None => break,
        }
    }
    assert_eq!(seen, (0..=moves).collect::<Vec<_>>());

    // Refusals.
    let (s, v) = get(&server, &format!("/api/matches/{id}/log?limit=0"), &[]).await;
    assert_eq!((s, v["code"].as_str()), (400, Some("malformed")), "{v}");
    let (s, v) = get(
        &server,
        &format!("/api/matches/{}/log", Uuid::new_v4()),
        &[],
    )
    .await;
    assert_eq!((s, v["code"].as_str()), (404, Some("unknown_match")), "{v}");
    server.stop().await;
}

/// Plays `n` random legal moves over the wire; returns the seq reached.
async fn play_random_moves(server: &TestServer, created: &protocol::MatchCreated, n: u64) -> u64 {
    let mut seats = Vec::new();
    for st in &created.seats {
        let mut c = Connection::connect(&server.ws()).await.expect("connect");
        c.auth(&st.token).await.expect("auth");
        seats.push(c);
    }
    let mut follower = Connection::connect(&server.ws()).await.expect("connect");
    follower
        .subscribe(created.match_id, None)
        .await
        .expect("subscribe");
    let mut mirror = client::Mirror::new(created.match_id);
    let mut rng = 3;
    for seq in 0..n {
        while mirror.seq() != Some(seq) {
            let m = follower.next_message().await.expect("read").expect("open");
            mirror.apply(&m).expect("mirror");
        }
        let view = mirror.view_typed().expect("view").expect("some");
        let (player, command) =
            rules::bot::random_move_from(&view.decisions, || rules::bot::splitmix64(&mut rng))
                .expect("a move");
        let out = seats[usize::from(player)]
            .command(&format!("m{seq}"), command)
            .await
            .expect("command");
        assert!(
            matches!(out, client::CommandOutcome::Accepted { .. }),
            "{out:?}"
        );
    }
    n
}

async fn say(conn: &mut Connection, match_id: Uuid, text: &str) {
    conn.send(&ClientMessage::Chat {
        match_id: Some(match_id),
        lobby_id: None,
        text: text.into(),
    })
    .await
    .expect("send chat");
    conn.wait_for(|m| matches!(m, ServerMessage::Chat(l) if l.text == text))
        .await
        .expect("the echo");
}

async fn chat_page(server: &TestServer, path: &str, headers: &[(&str, &str)]) -> MatchChat {
    let (s, v) = get(server, path, headers).await;
    assert_eq!(s, 200, "{path}: {v}");
    serde_json::from_value(v).expect("a chat page")
}

async fn the_chat_history_is_what_the_reader_may_read(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (_, match_id, players) = two_player_match(&server).await;
    let mut players = players.into_iter();
    let (_, ann_token, mut ca) = players.next().expect("ann");
    // A spectator with an account says something in the spectators' channel.
    let (_, cy_token) = crate::lobby::guest(&server, "Cy").await;
    let mut cc = crate::lobby::ws_as(&server, &cy_token).await;
    cc.subscribe(match_id, None).await.expect("subscribe");
    cc.wait_for(|m| matches!(m, ServerMessage::Snapshot { .. }))
        .await
        .expect("snapshot");
    say(&mut ca, match_id, "one").await;
    say(&mut cc, match_id, "from the rail").await;
    say(&mut ca, match_id, "two").await;
    say(&mut ca, match_id, "three").await;

    let path = format!("/api/matches/{match_id}/chat");
    let texts = |c: &MatchChat| c.chat.iter().map(|l| l.text.clone()).collect::<Vec<_>>();
    // A spectator (anyone, here) reads both channels; a player the table's only.
    let all = chat_page(&server, &path, &[]).await;
    assert_eq!(texts(&all), ["one", "from the rail", "two", "three"]);
    assert_eq!(all.chat[1].channel, ChatChannel::Spectators);
    let bearer = format!("Bearer {ann_token}");
    let player = chat_page(&server, &path, &[("Authorization", &bearer)]).await;
    assert_eq!(texts(&player), ["one", "two", "three"]);
    // Pages of two, back to the first line.
    let last = chat_page(&server, &format!("{path}?limit=2"), &[]).await;
    assert_eq!(texts(&last), ["two", "three"]);
    let before = last.before.expect("an earlier page");
    let first = chat_page(&server, &format!("{path}?limit=2&before={before}"), &[]).await;
    assert_eq!(texts(&first), ["one", "from the rail"]);
    assert_eq!(first.before, None);
    server.stop().await;
}

async fn a_private_matchs_history_needs_the_invite_code_or_a_seat(db: &TestDb) {
    let server = TestServer::start(db.config());
    let PrivateLobby {
        host,
        friend,
        stranger,
        id,
        code,
    } = private_lobby(&server, 2).await;
    let (s, v) = join(&server, id, &friend, json!({"invite_code": code})).await;
    assert_eq!(s, 200, "{v}");
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

    for path in [
        format!("/api/matches/{match_id}/log"),
        format!("/api/matches/{match_id}/chat"),
    ] {
        // Nobody, a stranger's session, a wrong code: refused.
        let stranger_bearer = format!("Bearer {stranger}");
        for headers in [
            vec![],
            vec![("Authorization", stranger_bearer.as_str())],
            vec![("X-Invite-Code", "WRONG")],
        ] {
            let (s, v) = get(&server, &path, &headers).await;
            assert_eq!(
                (s, v["code"].as_str()),
                (403, Some("invite_required")),
                "{path} {headers:?}: {v}"
            );
        }
        // The code, or a player's session: read.
        let friend_bearer = format!("Bearer {friend}");
        for headers in [
            vec![("X-Invite-Code", code.as_str())],
            vec![("Authorization", friend_bearer.as_str())],
        ] {
            let (s, v) = get(&server, &path, &headers).await;
            assert_eq!(s, 200, "{path} {headers:?}: {v}");
        }
    }
    server.stop().await;
}

async fn whoami_answers_no_one_without_an_error(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (s, v) = call(&server, "GET", "/api/whoami", None, None).await;
    assert_eq!((s, v), (200, json!({"account": null})));
    let (s, v) = call(&server, "GET", "/api/whoami", Some("not-a-session"), None).await;
    assert_eq!((s, v), (200, json!({"account": null})));
    let (id, token) = crate::lobby::guest(&server, "Ann").await;
    let (s, v) = call(&server, "GET", "/api/whoami", Some(&token), None).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["account"]["id"], json!(id));
    assert_eq!(v["account"]["name"], json!("Ann"));
    server.stop().await;
}
