//! Chat over real sockets, on both stores: a lobby's members chat, players at
//! the table, spectators in their own channel (which players never receive), mutes, refusals
//! (too long, control characters, not a member), and the admin reading the stored chat.

use crate::common::*;
use crate::lobby::{call, guest, join, lobby_of, ready, ws_as};
use client::Connection;
use protocol::admin::AdminMatchChat;
use protocol::{ChatChannel, ChatLine, ClientMessage, ErrorCode, MuteTarget, ServerMessage};
use serde_json::json;
use uuid::Uuid;

on_both_stores!(
    chat_reaches_the_lobby_the_table_the_spectators_and_the_admin_log,
    bad_chat_is_refused_and_the_connection_goes_on,
);

/// The next chat message on a connection (other messages stay queued).
async fn next_chat(conn: &mut Connection) -> ChatLine {
    match conn
        .wait_for(|m| matches!(m, ServerMessage::Chat(_)))
        .await
        .expect("a chat message")
    {
        ServerMessage::Chat(line) => line,
        _ => unreachable!(),
    }
}

/// The next error without a command id.
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

/// Subscribes and waits for the snapshot. The connection joins the match's chat room when it
/// asks the actor for the subscription, so once the snapshot is here, chat said by others reaches
/// it (without the wait, a line said at once could be delivered before the join, and missed).
async fn watch(conn: &mut Connection, match_id: Uuid) {
    conn.subscribe(match_id, None).await.expect("subscribe");
    conn.wait_for(|m| matches!(m, ServerMessage::Snapshot { .. }))
        .await
        .expect("the match's snapshot");
}

async fn say_match(conn: &mut Connection, match_id: Uuid, text: &str) {
    conn.send(&ClientMessage::Chat {
        match_id: Some(match_id),
        lobby_id: None,
        text: text.into(),
    })
    .await
    .expect("send chat");
}

/// Says something at a match and reads its own echo (so that it was stored and delivered).
async fn say_and_echo(conn: &mut Connection, match_id: Uuid, text: &str) -> ChatLine {
    say_match(conn, match_id, text).await;
    let echo = next_chat(conn).await;
    assert_eq!(echo.text, text);
    echo
}

/// Two guests in a started two-seat lobby match, both seated and subscribed; the lobby id, the
/// match id, and each player's (account, token, connection).
pub(crate) async fn two_player_match(
    server: &TestServer,
) -> (Uuid, Uuid, Vec<(Uuid, String, Connection)>) {
    let a = guest(server, "Ann").await;
    let b = guest(server, "Bo").await;
    let (s, v) = call(
        server,
        "POST",
        "/api/lobbies",
        Some(&a.1),
        Some(json!({"name": "Chatty", "seats": 2})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let lobby = lobby_of(v).id;
    let (s, v) = join(server, lobby, &b.1, json!({})).await;
    assert_eq!(s, 200, "{v}");
    let mut ca = ws_as(server, &a.1).await;
    let mut cb = ws_as(server, &b.1).await;
    for c in [&mut ca, &mut cb] {
        c.subscribe_lobby(lobby).await.expect("send");
        // The lobby's state comes once the connection is in the lobby's room: only then may
        // the other member speak (each connection joins on its own task, and under load the
        // second may not have joined yet when the first speaks).
        c.wait_for(|m| matches!(m, ServerMessage::Lobby { .. }))
            .await
            .expect("the lobby's state");
    }

    // Lobby chat: both members receive it.
    ca.send(&ClientMessage::Chat {
        match_id: None,
        lobby_id: Some(lobby),
        text: "ready when you are".into(),
    })
    .await
    .expect("send");
    for c in [&mut ca, &mut cb] {
        let line = next_chat(c).await;
        assert_eq!(
            (line.channel, line.lobby_id, line.text.as_str()),
            (ChatChannel::Lobby, Some(lobby), "ready when you are")
        );
        assert_eq!(line.from.account_id, Some(a.0));
        assert_eq!(line.from.name.as_deref(), Some("Ann"));
    }

    ready(server, lobby, &a.1).await;
    ready(server, lobby, &b.1).await;
    let (s, v) = call(
        server,
        "POST",
        &format!("/api/lobbies/{lobby}/start"),
        Some(&a.1),
        None,
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let match_id: Uuid = serde_json::from_value(v["match_id"].clone()).expect("match id");
    for c in [&mut ca, &mut cb] {
        c.take_seat(match_id).await.expect("take seat");
        watch(c, match_id).await;
    }
    (lobby, match_id, vec![(a.0, a.1, ca), (b.0, b.1, cb)])
}

async fn chat_reaches_the_lobby_the_table_the_spectators_and_the_admin_log(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (lobby, match_id, players) = two_player_match(&server).await;
    let mut players = players.into_iter();
    let (ann, _, mut ca) = players.next().expect("ann");
    let (_bo, _, mut cb) = players.next().expect("bo");

    // A spectator with an account watches; an outsider's lobby chat is refused.
    let (cy, cy_token) = guest(&server, "Cy").await;
    let mut cc = ws_as(&server, &cy_token).await;
    cc.send(&ClientMessage::Chat {
        match_id: None,
        lobby_id: Some(lobby),
        text: "let me in".into(),
    })
    .await
    .expect("send");
    assert_eq!(next_error(&mut cc).await, ErrorCode::NotInChat);
    watch(&mut cc, match_id).await;

    // Table chat reaches the other player and the spectator.
    let sent = say_and_echo(&mut ca, match_id, "good luck").await;
    assert_eq!(
        (sent.channel, sent.from.seat, sent.from.account_id),
        (ChatChannel::Table, Some(0), Some(ann))
    );
    for c in [&mut cb, &mut cc] {
        let line = next_chat(c).await;
        assert_eq!(line, sent);
    }

    // Spectator chat reaches spectators only: the players' next chat is the table's.
    let rail = say_and_echo(&mut cc, match_id, "nice opening").await;
    assert_eq!(
        (rail.channel, rail.from.seat),
        (ChatChannel::Spectators, None)
    );
    assert_eq!(rail.from.account_id, Some(cy));
    say_and_echo(&mut cb, match_id, "thanks").await;
    let seen = next_chat(&mut ca).await;
    assert_eq!(
        (seen.text.as_str(), seen.channel),
        ("thanks", ChatChannel::Table)
    );
    assert_eq!(next_chat(&mut cc).await.text, "thanks");

    // Bo mutes Ann's seat: Ann's next message does not reach Bo; after unmuting it does.
    cb.send(&ClientMessage::Mute(MuteTarget {
        account_id: None,
        match_id: Some(match_id),
        seat: Some(0),
    }))
    .await
    .expect("send");
    say_and_echo(&mut cb, match_id, "muting you").await; // the mute is in place
    assert_eq!(next_chat(&mut ca).await.text, "muting you");
    say_and_echo(&mut ca, match_id, "you cannot hear this").await;
    cb.send(&ClientMessage::Unmute(MuteTarget {
        account_id: None,
        match_id: Some(match_id),
        seat: Some(0),
    }))
    .await
    .expect("send");
    say_and_echo(&mut cb, match_id, "unmuted").await;
    assert_eq!(next_chat(&mut ca).await.text, "unmuted");
    // Muting by account works the same for the spectator (who heard all of the above).
    let mut heard = Vec::new();
    while heard.last().map(String::as_str) != Some("unmuted") {
        heard.push(next_chat(&mut cc).await.text);
    }
    assert_eq!(heard, ["muting you", "you cannot hear this", "unmuted"]);
    cc.send(&ClientMessage::Mute(MuteTarget {
        account_id: Some(ann),
        match_id: None,
        seat: None,
    }))
    .await
    .expect("send");
    say_and_echo(&mut cc, match_id, "quiet please").await;
    say_and_echo(&mut ca, match_id, "back again").await;
    assert_eq!(next_chat(&mut cb).await.text, "back again");
    say_and_echo(&mut cb, match_id, "welcome back").await;
    // The spectator heard Bo, not Ann.
    heard.clear();
    while heard.last().map(String::as_str) != Some("welcome back") {
        heard.push(next_chat(&mut cc).await.text);
    }
    assert!(
        !heard.iter().any(|t| t == "back again"),
        "a muted account reached the spectator: {heard:?}"
    );

    // The admin reads all of it, both channels, in order.
    let log: AdminMatchChat = serde_json::from_value(
        admin_json(&server, &format!("/api/admin/matches/{match_id}/chat")).await,
    )
    .expect("chat log");
    let texts: Vec<&str> = log.chat.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "good luck",
            "nice opening",
            "thanks",
            "muting you",
            "you cannot hear this",
            "unmuted",
            "quiet please",
            "back again",
            "welcome back"
        ]
    );
    assert_eq!(log.chat[1].channel, ChatChannel::Spectators);
    // A page of two, then the rest.
    let page: AdminMatchChat = serde_json::from_value(
        admin_json(
            &server,
            &format!("/api/admin/matches/{match_id}/chat?limit=2"),
        )
        .await,
    )
    .expect("chat page");
    assert_eq!(page.chat.len(), 2);
    let after = page.next_after.expect("a next page");
    let rest: AdminMatchChat = serde_json::from_value(
        admin_json(
            &server,
            &format!("/api/admin/matches/{match_id}/chat?after={after}"),
        )
        .await,
    )
    .expect("chat page");
    assert_eq!(rest.chat.len(), 7);
    assert_eq!(rest.next_after, None);
    // Not for anyone else.
    let (status, _) = http(
        &server,
        "GET",
        &format!("/api/admin/matches/{match_id}/chat"),
        &[],
        "",
    )
    .await;
    assert_ne!(status, 200);
    server.stop().await;
}

async fn bad_chat_is_refused_and_the_connection_goes_on(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (_, match_id, players) = two_player_match(&server).await;
    let (_, _, mut ca) = players.into_iter().next().expect("ann");
    say_match(&mut ca, match_id, &"x".repeat(protocol::MAX_CHAT_CHARS + 1)).await;
    assert_eq!(next_error(&mut ca).await, ErrorCode::BadChat);
    say_match(&mut ca, match_id, "bell\u{7}").await;
    assert_eq!(next_error(&mut ca).await, ErrorCode::BadChat);
    say_match(&mut ca, match_id, "   ").await;
    assert_eq!(next_error(&mut ca).await, ErrorCode::BadChat);
    ca.send(&ClientMessage::Chat {
        match_id: Some(match_id),
        lobby_id: Some(match_id),
        text: "both".into(),
    })
    .await
    .expect("send");
    assert_eq!(next_error(&mut ca).await, ErrorCode::BadChat);
    ca.send(&ClientMessage::Mute(MuteTarget {
        account_id: None,
        match_id: Some(match_id),
        seat: None,
    }))
    .await
    .expect("send");
    assert_eq!(next_error(&mut ca).await, ErrorCode::BadChat);
    // Exactly the limit (in characters, not bytes) is fine.
    say_and_echo(&mut ca, match_id, &"é".repeat(protocol::MAX_CHAT_CHARS)).await;
    // Mutes are bounded per connection: one past the cap is refused, the connection goes on.
    for _ in 0..=server::conn::MAX_MUTES {
        ca.send(&ClientMessage::Mute(MuteTarget {
            account_id: Some(uuid::Uuid::new_v4()),
            match_id: None,
            seat: None,
        }))
        .await
        .expect("send");
    }
    assert_eq!(next_error(&mut ca).await, ErrorCode::BadChat);

    // An anonymous spectator may read but not speak; a stranger cannot speak at the table.
    let mut anon = Connection::connect(&server.ws()).await.expect("connect");
    anon.set_read_timeout(Some(READ_TIMEOUT));
    anon.subscribe(match_id, None).await.expect("subscribe");
    say_match(&mut anon, match_id, "hi").await;
    assert_eq!(next_error(&mut anon).await, ErrorCode::NotInChat);
    say_and_echo(&mut ca, match_id, "still here").await;
    assert_eq!(next_chat(&mut anon).await.text, "still here");
    server.stop().await;
}
