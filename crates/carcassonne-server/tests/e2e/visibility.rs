//! Who sees what, over real sockets on both stores: a private lobby's invite code is shown to its
//! members only (REST and `subscribe_lobby`); a player's second connection that has not taken
//! the seat is a player at the match's chat (no spectator lines, its words on the table); the
//! admin's chat log refuses a negative cursor.

use crate::chat::two_player_match;
use crate::common::*;
use crate::lobby::{PrivateLobby, call, guest, join, private_lobby, ws_as};
use client::Connection;
use protocol::{ChatChannel, ChatLine, ClientMessage, ErrorCode, ServerMessage};
use serde_json::{Value, json};
use uuid::Uuid;

on_both_stores!(
    a_private_lobby_shows_its_invite_code_to_its_members_only,
    a_players_second_connection_is_a_player_at_the_chat,
    the_admin_chat_log_refuses_a_negative_cursor,
);

async fn get_lobby(server: &TestServer, id: Uuid, token: Option<&str>, code: &str) -> Value {
    let path = format!("/api/lobbies/{id}?invite_code={code}");
    let (s, v) = call(server, "GET", &path, token, None).await;
    assert_eq!(s, 200, "{v}");
    v
}

async fn a_private_lobby_shows_its_invite_code_to_its_members_only(db: &TestDb) {
    let server = TestServer::start(db.config());
    let PrivateLobby {
        host,
        friend,
        stranger,
        id,
        code,
    } = private_lobby(&server, 3).await;

    // Readers who give the code but hold no seat: the lobby without its code.
    for token in [Some(stranger.as_str()), None] {
        let v = get_lobby(&server, id, token, &code).await;
        assert_eq!(v["id"], json!(id), "{v}");
        assert!(v["invite_code"].is_null(), "a non-member saw the code: {v}");
    }
    let v = get_lobby(&server, id, Some(&host), "").await;
    assert_eq!(v["invite_code"], json!(code), "the host reads it");

    // A member sees it: in the join's answer, on a read, in the lobby's pushes.
    let (s, v) = join(&server, id, &friend, json!({"invite_code": code})).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["invite_code"], json!(code), "the joiner's answer");
    let v = get_lobby(&server, id, Some(&friend), "").await;
    assert_eq!(v["invite_code"], json!(code));
    let mut conn = ws_as(&server, &friend).await;
    conn.subscribe_lobby(id).await.expect("send");
    match conn
        .wait_for(|m| matches!(m, ServerMessage::Lobby { .. }))
        .await
        .expect("the lobby's state")
    {
        ServerMessage::Lobby { lobby } => {
            assert_eq!(lobby.invite_code.as_deref(), Some(code.as_str()))
        }
        _ => unreachable!(),
    }
    // Once it left, it is a stranger again, from the leave's own answer on.
    let (s, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{id}/leave"),
        Some(&friend),
        None,
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert!(v["invite_code"].is_null(), "one who left saw the code: {v}");
    let v = get_lobby(&server, id, Some(&friend), &code).await;
    assert!(v["invite_code"].is_null(), "{v}");
    server.stop().await;
}

/// The next chat line on a connection (other messages are skipped).
async fn next_chat(conn: &mut Connection) -> ChatLine {
    match conn
        .wait_for(|m| matches!(m, ServerMessage::Chat(_)))
        .await
        .expect("a chat line")
    {
        ServerMessage::Chat(line) => line,
        _ => unreachable!(),
    }
}

async fn say(conn: &mut Connection, match_id: Uuid, text: &str) {
    conn.send(&ClientMessage::Chat {
        match_id: Some(match_id),
        lobby_id: None,
        text: text.into(),
    })
    .await
    .expect("send chat");
}

async fn watch(conn: &mut Connection, match_id: Uuid) {
    conn.subscribe(match_id, None).await.expect("subscribe");
    conn.wait_for(|m| matches!(m, ServerMessage::Snapshot { .. }))
        .await
        .expect("the snapshot");
}

async fn a_players_second_connection_is_a_player_at_the_chat(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (_, match_id, mut players) = two_player_match(&server).await;
    let ann_token = players[0].1.clone();
    // Ann's second device follows the match without taking her seat; a spectator with an
    // account watches too.
    let mut second = ws_as(&server, &ann_token).await;
    watch(&mut second, match_id).await;
    let (_, cy) = guest(&server, "Cy").await;
    let mut spectator = ws_as(&server, &cy).await;
    watch(&mut spectator, match_id).await;

    // A spectator line reaches the spectators only.
    say(&mut spectator, match_id, "nice move").await;
    let line = next_chat(&mut spectator).await;
    assert_eq!(line.channel, ChatChannel::Spectators);
    // Bo speaks at the table: the second device's next line is Bo's, not the spectator's.
    say(&mut players[1].2, match_id, "thanks").await;
    let line = next_chat(&mut second).await;
    assert_eq!(
        (line.channel, line.text.as_str(), line.from.seat),
        (ChatChannel::Table, "thanks", Some(1)),
        "the second device received spectator chat"
    );
    for conn in [&mut players[1].2, &mut spectator] {
        assert_eq!(next_chat(conn).await.text, "thanks");
    }

    // The second device speaks at the table as Ann's seat, heard by Bo and the spectator.
    say(&mut second, match_id, "from my phone").await;
    for conn in [&mut second, &mut players[1].2, &mut spectator] {
        let line = next_chat(conn).await;
        assert_eq!(
            (line.channel, line.text.as_str(), line.from.seat),
            (ChatChannel::Table, "from my phone", Some(0))
        );
    }
    // Seatless it still is: a command from it is a spectator's.
    let out = second
        .command("phone-1", rules::Command::Pass {})
        .await
        .expect("an answer");
    match out {
        client::CommandOutcome::Rejected(b) => assert_eq!(b.code, ErrorCode::Spectator),
        other => panic!("expected spectator, got {other:?}"),
    }
    server.stop().await;
}

async fn the_admin_chat_log_refuses_a_negative_cursor(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let id = created.match_id;
    for bad in ["-1", "x", "18446744073709551615"] {
        let (status, text) = admin_http(
            &server,
            "GET",
            &format!("/api/admin/matches/{id}/chat?after={bad}"),
            "",
        )
        .await;
        let v: Value = serde_json::from_str(&text).expect("an error body");
        assert_eq!(
            (status, v["code"].as_str()),
            (400, Some("malformed")),
            "after={bad}: {text}"
        );
    }
    let v = admin_json(&server, &format!("/api/admin/matches/{id}/chat?after=0")).await;
    assert_eq!(v["chat"], json!([]));
    server.stop().await;
}
