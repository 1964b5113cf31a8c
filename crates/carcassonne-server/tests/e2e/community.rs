//! A player's own account over real sockets, on both stores: "my games" (whose turn, the
//! result, the filters and pages, nobody else's matches), a password change (the other
//! sessions and their sockets end), an admin's one-time reset link, the deletion of an account
//! (a placeholder name in its matches, its chat gone) and the export of one's own data.

use crate::common::*;
use crate::lobby::{call, join, lobby_of, ready, ws_as};
use client::Connection;
use protocol::admin::AdminMatchSummary;
use protocol::{
    AccountExport, ClientMessage, MyMatchStatus, MyMatches, ServerMessage, SessionCreated, close,
};
use serde_json::{Value, json};
use uuid::Uuid;

on_both_stores!(
    my_games_show_whose_turn_results_and_pages,
    a_password_change_ends_the_other_sessions,
    a_reset_link_sets_a_password_once,
    a_deleted_account_leaves_a_placeholder_and_no_chat,
    the_export_holds_only_the_callers_data,
);

pub(crate) const PASSWORD: &str = "correct horse";

/// A registered account: its id and session token.
pub(crate) async fn registered(server: &TestServer, name: &str) -> (Uuid, String) {
    let (status, v) = call(
        server,
        "POST",
        "/api/accounts",
        None,
        Some(json!({"name": name, "password": PASSWORD})),
    )
    .await;
    assert_eq!(status, 201, "{v}");
    let s: SessionCreated = serde_json::from_value(v).expect("session");
    (s.account.id, s.token)
}

/// Logs in: the status and body.
pub(crate) async fn login(server: &TestServer, name: &str, password: &str) -> (u16, Value) {
    call(
        server,
        "POST",
        "/api/sessions",
        None,
        Some(json!({"name": name, "password": password})),
    )
    .await
}

/// A started two-seat lobby match between two accounts (host on seat 0), with `lobby_extra`
/// merged into the lobby's options; its id.
pub(crate) async fn lobby_match(
    server: &TestServer,
    host: &str,
    guest: &str,
    lobby_extra: Value,
) -> Uuid {
    let mut body = json!({"name": "Table", "seats": 2});
    if let (Some(b), Some(extra)) = (body.as_object_mut(), lobby_extra.as_object()) {
        b.extend(extra.clone());
    }
    let (s, v) = call(server, "POST", "/api/lobbies", Some(host), Some(body)).await;
    assert_eq!(s, 201, "{v}");
    let lobby = lobby_of(v).id;
    let (s, v) = join(server, lobby, guest, json!({})).await;
    assert_eq!(s, 200, "{v}");
    ready(server, lobby, host).await;
    ready(server, lobby, guest).await;
    let (s, v) = call(
        server,
        "POST",
        &format!("/api/lobbies/{lobby}/start"),
        Some(host),
        None,
    )
    .await;
    assert_eq!(s, 201, "{v}");
    serde_json::from_value(v["match_id"].clone()).expect("match id")
}

/// A follower on a session connection that holds the account's seat.
pub(crate) async fn seated(server: &TestServer, token: &str, match_id: Uuid) -> Follower {
    let mut conn = ws_as(server, token).await;
    let seat = conn.take_seat(match_id).await.expect("take seat");
    conn.subscribe(match_id, None).await.expect("subscribe");
    Follower::from_conn(conn, match_id, Some(seat.seat))
}

pub(crate) async fn my_matches(server: &TestServer, token: &str, query: &str) -> MyMatches {
    let (s, v) = call(
        server,
        "GET",
        &format!("/api/me/matches{query}"),
        Some(token),
        None,
    )
    .await;
    assert_eq!(s, 200, "{v}");
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

#[track_caller]
pub(crate) fn refused(got: (u16, Value), status: u16, code: &str) {
    assert_eq!(
        (got.0, got.1["code"].as_str()),
        (status, Some(code)),
        "{}",
        got.1
    );
}

/// Waits until the server closes `conn`; the close code.
pub(crate) async fn closed_with(conn: &mut Connection) -> Option<u16> {
    while let Ok(Some(_)) = conn.next_message().await {}
    conn.close_frame().map(|c| c.code)
}

async fn my_games_show_whose_turn_results_and_pages(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (ann, ta) = registered(&server, "Ann").await;
    let (bo, tb) = registered(&server, "Bo").await;
    let m1 = lobby_match(&server, &ta, &tb, json!({})).await;

    let a = my_matches(&server, &ta, "").await;
    assert_eq!(a.matches.len(), 1, "{a:?}");
    let mine = &a.matches[0];
    assert_eq!(
        (mine.match_id, mine.status, mine.seat),
        (m1, MyMatchStatus::Running, 0)
    );
    assert_eq!((mine.turn, mine.your_turn, mine.seq), (Some(0), true, 0));
    assert!(mine.turn_since.is_some() && mine.finished_at.is_none());
    let names: Vec<_> = mine.players.iter().map(|p| p.name.clone()).collect();
    assert_eq!(names, [Some("Ann".to_string()), Some("Bo".to_string())]);
    assert!(mine.players[0].you && !mine.players[1].you);
    let b = my_matches(&server, &tb, "").await;
    assert_eq!((b.matches[0].seat, b.matches[0].your_turn), (1, false));

    // Refusals; another account sees none of these matches.
    refused(
        call(&server, "GET", "/api/me/matches", None, None).await,
        401,
        "unauthenticated",
    );
    refused(
        call(
            &server,
            "GET",
            "/api/me/matches?status=won",
            Some(&ta),
            None,
        )
        .await,
        400,
        "malformed",
    );
    refused(
        call(&server, "GET", "/api/me/matches?limit=0", Some(&ta), None).await,
        400,
        "malformed",
    );
    let (_, tc) = registered(&server, "Cy").await;
    assert!(my_matches(&server, &tc, "").await.matches.is_empty());

    // A move by Ann passes the turn to Bo, and both lists say so.
    let mut seats = vec![
        seated(&server, &ta, m1).await,
        seated(&server, &tb, m1).await,
    ];
    let mut rng = Rng::new(0x6a3e5);
    loop {
        play(&mut seats, &mut [], &mut rng, 1).await;
        let b = my_matches(&server, &tb, "").await;
        if b.matches[0].turn == Some(1) {
            assert_eq!(b.matches[0].seq, seats[0].seq().expect("seq"));
            assert!(b.matches[0].your_turn);
            assert!(!my_matches(&server, &ta, "").await.matches[0].your_turn);
            break;
        }
    }
    // To the end: finished, with the scores and each player's place.
    play(&mut seats, &mut [], &mut rng, usize::MAX).await;
    assert!(seats[0].view().finished);
    let scores: Vec<u32> = seats[0].view().players.iter().map(|p| p.score).collect();
    let fin = my_matches(&server, &ta, "?status=finished").await;
    assert_eq!(fin.matches.len(), 1);
    let f = &fin.matches[0];
    assert_eq!(f.status, MyMatchStatus::Finished);
    assert_eq!(f.scores.as_deref(), Some(&scores[..]));
    let best = scores.iter().max().copied();
    assert_eq!(f.place == Some(1), Some(scores[0]) == best, "{f:?}");
    assert!(f.finished_at.is_some() && f.turn.is_none() && !f.your_turn);
    assert!(
        my_matches(&server, &ta, "?status=running")
            .await
            .matches
            .is_empty()
    );

    // Pages: newest first, one at a time.
    let m2 = lobby_match(&server, &tb, &ta, json!({})).await;
    let p1 = my_matches(&server, &ta, "?limit=1").await;
    assert_eq!(
        p1.matches.iter().map(|m| m.match_id).collect::<Vec<_>>(),
        [m2]
    );
    assert_eq!(p1.matches[0].seat, 1, "Ann joined Bo's lobby");
    let cursor = p1.next_cursor.expect("a next page");
    let p2 = my_matches(&server, &ta, &format!("?limit=1&cursor={cursor}")).await;
    assert_eq!(
        p2.matches.iter().map(|m| m.match_id).collect::<Vec<_>>(),
        [m1]
    );
    let last = my_matches(
        &server,
        &ta,
        &format!("?limit=1&cursor={}", p2.next_cursor.expect("cursor")),
    )
    .await;
    assert!(last.matches.is_empty() && last.next_cursor.is_none());
    let _ = (ann, bo);
    server.stop().await;
}

async fn a_password_change_ends_the_other_sessions(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (_, t1) = registered(&server, "Ann").await;
    let (s, v) = login(&server, "Ann", PASSWORD).await;
    assert_eq!(s, 201, "{v}");
    let t2 = v["token"].as_str().expect("token").to_string();
    let mut other = ws_as(&server, &t2).await;

    let change = |old: &str, new: &str| json!({"old_password": old, "new_password": new});
    let put = |token: String, body: Value| {
        let server = &server;
        async move { call(server, "PUT", "/api/me/password", Some(&token), Some(body)).await }
    };
    refused(
        put(t1.clone(), change("wrong horse", "battery staple")).await,
        403,
        "bad_credentials",
    );
    refused(
        put(t1.clone(), change(PASSWORD, "short")).await,
        400,
        "bad_password",
    );
    refused(
        call(
            &server,
            "PUT",
            "/api/me/password",
            None,
            Some(change(PASSWORD, "battery staple")),
        )
        .await,
        401,
        "unauthenticated",
    );
    let (s, v) = put(t1.clone(), change(PASSWORD, "battery staple")).await;
    assert_eq!(s, 204, "{v}");

    // The other session is gone, its socket closed; this one goes on.
    assert_eq!(closed_with(&mut other).await, Some(close::SESSION_REVOKED));
    refused(
        call(&server, "GET", "/api/me", Some(&t2), None).await,
        401,
        "unknown_session",
    );
    assert_eq!(
        call(&server, "GET", "/api/me", Some(&t1), None).await.0,
        200
    );
    refused(
        login(&server, "Ann", PASSWORD).await,
        401,
        "bad_credentials",
    );
    assert_eq!(login(&server, "Ann", "battery staple").await.0, 201);

    // A guest has no password to change.
    let (s, v) = call(
        &server,
        "POST",
        "/api/accounts/guest",
        None,
        Some(json!({"name": "Gus"})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let guest = v["token"].as_str().expect("token").to_string();
    refused(
        put(guest, change(PASSWORD, "battery staple")).await,
        400,
        "bad_password",
    );
    server.stop().await;
}

async fn a_reset_link_sets_a_password_once(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (ann, ta) = registered(&server, "Ann").await;
    let path = format!("/api/admin/accounts/{ann}/password-reset");
    // Only an admin issues one.
    refused(
        call(&server, "POST", &path, Some(&ta), None).await,
        401,
        "bad_token",
    );
    let (s, body) = admin_http(&server, "POST", &path, "").await;
    assert_eq!(s, 201, "{body}");
    let link: protocol::moderation::ResetLink = serde_json::from_str(&body).expect("a link");
    assert_eq!(link.path, format!("/#reset={}", link.token));

    let reset = |token: &str, password: &str| json!({"token": token, "password": password});
    refused(
        call(
            &server,
            "POST",
            "/api/password-resets",
            None,
            Some(reset(&link.token, "short")),
        )
        .await,
        400,
        "bad_password",
    );
    let (s, v) = call(
        &server,
        "POST",
        "/api/password-resets",
        None,
        Some(reset(&link.token, "battery staple")),
    )
    .await;
    assert_eq!(s, 204, "{v}");
    // Every session ended; the new password logs in, the old one does not; the link is spent.
    refused(
        call(&server, "GET", "/api/me", Some(&ta), None).await,
        401,
        "unknown_session",
    );
    refused(
        login(&server, "Ann", PASSWORD).await,
        401,
        "bad_credentials",
    );
    assert_eq!(login(&server, "Ann", "battery staple").await.0, 201);
    refused(
        call(
            &server,
            "POST",
            "/api/password-resets",
            None,
            Some(reset(&link.token, "another one")),
        )
        .await,
        400,
        "bad_reset",
    );
    refused(
        call(
            &server,
            "POST",
            "/api/password-resets",
            None,
            Some(reset("nope", "another one")),
        )
        .await,
        400,
        "bad_reset",
    );
    // A link past its time is refused.
    let (s, body) = admin_http(&server, "POST", &path, "").await;
    assert_eq!(s, 201, "{body}");
    let late: protocol::moderation::ResetLink = serde_json::from_str(&body).expect("a link");
    let n = db
        .execute("UPDATE password_resets SET expires_at = '2000-01-01T00:00:00+00:00' WHERE used_at IS NULL")
        .await;
    assert_eq!(n, 1);
    refused(
        call(
            &server,
            "POST",
            "/api/password-resets",
            None,
            Some(reset(&late.token, "another one")),
        )
        .await,
        400,
        "bad_reset",
    );
    // A guest gets no link; the trail has the issue, never the token.
    let (s, v) = call(
        &server,
        "POST",
        "/api/accounts/guest",
        None,
        Some(json!({"name": "Gus"})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let gus = v["account"]["id"].as_str().expect("id").to_string();
    let (s, _) = admin_http(
        &server,
        "POST",
        &format!("/api/admin/accounts/{gus}/password-reset"),
        "",
    )
    .await;
    assert_eq!(s, 404);
    let trail = admin_json(&server, "/api/admin/actions").await.to_string();
    assert!(
        trail.contains("password_reset") && !trail.contains(&link.token),
        "{trail}"
    );
    server.stop().await;
}

/// Says `text` at the table and waits for its echo (stored and delivered): the line.
pub(crate) async fn say(conn: &mut Connection, match_id: Uuid, text: &str) -> protocol::ChatLine {
    conn.send(&ClientMessage::Chat {
        match_id: Some(match_id),
        lobby_id: None,
        text: text.into(),
    })
    .await
    .expect("send");
    match conn
        .wait_for(|m| matches!(m, ServerMessage::Chat(l) if l.text == text))
        .await
        .expect("the echo")
    {
        ServerMessage::Chat(line) => line,
        _ => unreachable!(),
    }
}

/// A match's chat history as `token` reads it: the texts.
async fn chat_texts(server: &TestServer, token: &str, match_id: Uuid) -> Vec<String> {
    let (s, v) = call(
        server,
        "GET",
        &format!("/api/matches/{match_id}/chat"),
        Some(token),
        None,
    )
    .await;
    assert_eq!(s, 200, "{v}");
    v["chat"]
        .as_array()
        .expect("chat")
        .iter()
        .filter_map(|l| l["text"].as_str().map(str::to_string))
        .collect()
}

async fn a_deleted_account_leaves_a_placeholder_and_no_chat(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (ann, ta) = registered(&server, "Ann").await;
    let (_, tb) = registered(&server, "Bo").await;
    let m = lobby_match(&server, &ta, &tb, json!({})).await;
    let mut ca = ws_as(&server, &ta).await;
    ca.take_seat(m).await.expect("seat");
    ca.subscribe(m, None).await.expect("subscribe");
    let line = say(&mut ca, m, "good luck").await;
    assert!(line.id.is_some(), "a stored line has its id");
    let mut cb = ws_as(&server, &tb).await;
    cb.take_seat(m).await.expect("seat");
    cb.subscribe(m, None).await.expect("subscribe");
    say(&mut cb, m, "thanks").await;
    assert_eq!(chat_texts(&server, &tb, m).await, ["good luck", "thanks"]);

    let del = |token: &str, password: &str| {
        let (server, token, body) = (&server, token.to_string(), json!({"password": password}));
        async move { call(server, "DELETE", "/api/me", Some(&token), Some(body)).await }
    };
    refused(del(&ta, "wrong horse").await, 403, "bad_credentials");
    let (s, v) = del(&ta, PASSWORD).await;
    assert_eq!(s, 204, "{v}");
    // Gone: its session and socket, its log-in, its chat; its seat keeps a placeholder.
    assert_eq!(closed_with(&mut ca).await, Some(close::SESSION_REVOKED));
    refused(
        call(&server, "GET", "/api/me", Some(&ta), None).await,
        401,
        "unknown_session",
    );
    refused(
        login(&server, "Ann", PASSWORD).await,
        401,
        "bad_credentials",
    );
    assert_eq!(chat_texts(&server, &tb, m).await, ["thanks"]);
    let b = my_matches(&server, &tb, "").await;
    assert_eq!(
        b.matches[0].players[0].name.as_deref(),
        Some("deleted player")
    );
    let s: AdminMatchSummary =
        serde_json::from_value(admin_json(&server, &format!("/api/admin/matches/{m}")).await)
            .expect("summary");
    assert_eq!(s.players[0].name.as_deref(), Some("deleted player"));
    assert_eq!(s.players[0].account, Some(ann));
    assert!(
        s.players[0].away_since.is_some(),
        "the server plays the seat as away"
    );
    // The name is free again.
    registered(&server, "Ann").await;
    server.stop().await;
}

async fn the_export_holds_only_the_callers_data(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (ann, ta) = registered(&server, "Ann").await;
    let (bo, tb) = registered(&server, "Bo").await;
    let m = lobby_match(&server, &ta, &tb, json!({})).await;
    for (token, text) in [(&ta, "from Ann"), (&tb, "from Bo")] {
        let mut c = ws_as(&server, token).await;
        c.take_seat(m).await.expect("seat");
        c.subscribe(m, None).await.expect("subscribe");
        say(&mut c, m, text).await;
    }
    refused(
        call(&server, "GET", "/api/me/export", None, None).await,
        401,
        "unauthenticated",
    );
    for (id, token, text) in [(ann, &ta, "from Ann"), (bo, &tb, "from Bo")] {
        let (s, v) = call(&server, "GET", "/api/me/export", Some(token), None).await;
        assert_eq!(s, 200, "{v}");
        let e: AccountExport = serde_json::from_value(v).expect("an export");
        assert_eq!(e.account.id, id);
        assert_eq!(
            e.matches.iter().map(|x| x.match_id).collect::<Vec<_>>(),
            [m]
        );
        assert_eq!(
            e.chat.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(),
            [text]
        );
        assert!(e.chat.iter().all(|l| l.from.account_id == Some(id)));
        assert_eq!(e.sessions.len(), 1);
    }
    server.stop().await;
}
