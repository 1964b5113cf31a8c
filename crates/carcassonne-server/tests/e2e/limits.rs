//! Abuse limits over real sockets, on both stores: each rate limit (commands,
//! chat, lobby follows per connection; chat, lobby actions and account creation per address)
//! trips with `rate_limited` and a `retry_after_ms`, and lets the next one through after that
//! wait on the same connection; the caps on open lobbies and sessions per account refuse with
//! their codes until one is closed or revoked.

use crate::chat::two_player_match;
use crate::common::*;
use crate::lobby::{call, guest};
use client::Connection;
use protocol::{ClientMessage, ErrorBody, ErrorCode, ServerMessage};
use serde_json::{Value, json};
use server::config::Rate;
use std::time::Duration;
use uuid::Uuid;

on_both_stores!(
    command_chat_and_lobby_follow_limits_trip_and_recover,
    account_and_lobby_action_limits_trip_and_recover,
    caps_on_open_lobbies_and_sessions,
);

fn rate(burst: u32, secs: u64) -> Rate {
    Rate {
        burst,
        period: Duration::from_secs(secs),
    }
}

async fn chat(conn: &mut Connection, match_id: Uuid, text: &str) -> ServerMessage {
    conn.send(&ClientMessage::Chat {
        match_id: Some(match_id),
        lobby_id: None,
        text: text.into(),
    })
    .await
    .expect("send");
    // Its own echo, or a refusal (others' chat stays queued).
    conn.wait_for(|m| match m {
        ServerMessage::Error(_) => true,
        ServerMessage::Chat(l) => l.text == text,
        _ => false,
    })
    .await
    .expect("an answer")
}

/// A `rate_limited` refusal: its wait.
#[track_caller]
fn limited(msg: &ServerMessage) -> Duration {
    match msg {
        ServerMessage::Error(ErrorBody {
            code: ErrorCode::RateLimited,
            retry_after_ms: Some(ms),
            ..
        }) => {
            assert!(*ms > 0);
            Duration::from_millis(*ms)
        }
        other => panic!("expected rate_limited, got {other:?}"),
    }
}

#[track_caller]
fn echoed(msg: &ServerMessage, text: &str) {
    assert!(
        matches!(msg, ServerMessage::Chat(l) if l.text == text),
        "expected the echo of {text:?}, got {msg:?}"
    );
}

async fn command_chat_and_lobby_follow_limits_trip_and_recover(db: &TestDb) {
    let mut config = db.config();
    config.limits.command_rate_conn = rate(3, 6);
    config.limits.chat_rate_conn = rate(2, 4);
    config.limits.chat_rate_addr = rate(3, 6);
    config.limits.lobby_rate_conn = rate(3, 6);
    let server = TestServer::start(config);
    let (_, match_id, players) = two_player_match(&server).await;
    let mut players = players.into_iter();
    let (_, _, mut ca) = players.next().expect("ann");
    let (_, _, mut cb) = players.next().expect("bo");
    // (two_player_match said one lobby chat from Ann: one of her connection's and address's
    // chat tokens is spent. Wait for both buckets to be full again.)
    tokio::time::sleep(Duration::from_secs(2)).await;

    // Chat per connection: two pass, the third waits; the connection stays open.
    echoed(&chat(&mut ca, match_id, "one").await, "one");
    echoed(&chat(&mut ca, match_id, "two").await, "two");
    let wait = limited(&chat(&mut ca, match_id, "three").await);
    // Chat per address: Bo's connection has tokens left, the address (both on 127.0.0.1) not.
    echoed(&chat(&mut cb, match_id, "bo one").await, "bo one");
    let wait_b = limited(&chat(&mut cb, match_id, "bo two").await);
    tokio::time::sleep(wait.max(wait_b)).await;
    echoed(
        &chat(&mut ca, match_id, "after the wait").await,
        "after the wait",
    );

    // Commands per connection: refused ones count too (the limit is on what is sent).
    let mut waited = None;
    for i in 0..6 {
        let id = format!("c{i}");
        ca.send_command(&id, rules::Command::Pass {})
            .await
            .expect("send");
        let answer = ca
            .wait_for(|m| match m {
                ServerMessage::Error(b) => b.id.as_deref() == Some(id.as_str()),
                ServerMessage::Ack { id: got, .. } => *got == id,
                _ => false,
            })
            .await
            .expect("an answer");
        if let ServerMessage::Error(b) = &answer
            && b.code == ErrorCode::RateLimited
        {
            assert!(i >= 3, "limited after {i} commands");
            waited = Some(limited(&answer));
            break;
        }
    }
    let wait = waited.expect("the command limit tripped");
    tokio::time::sleep(wait).await;
    ca.send_command("again", rules::Command::Pass {})
        .await
        .expect("send");
    let answer = ca
        .wait_for(|m| matches!(m, ServerMessage::Error(b) if b.id.as_deref() == Some("again")))
        .await
        .expect("an answer");
    assert!(
        matches!(&answer, ServerMessage::Error(b) if b.code != ErrorCode::RateLimited),
        "still limited: {answer:?}"
    );

    // Lobby follows per connection: an unknown lobby is answered by the lobby actor
    // (`unknown_lobby`); over the limit the connection answers `rate_limited` itself.
    let follow = async |c: &mut Connection| {
        c.subscribe_lobby(Uuid::new_v4()).await.expect("send");
        c.wait_for(|m| matches!(m, ServerMessage::Error(b) if b.id.is_none()))
            .await
            .expect("a refusal")
    };
    let mut wait = None;
    for _ in 0..5 {
        let answer = follow(&mut ca).await;
        match &answer {
            ServerMessage::Error(b) if b.code == ErrorCode::UnknownLobby => {}
            _ => {
                wait = Some(limited(&answer));
                break;
            }
        }
    }
    tokio::time::sleep(wait.expect("the lobby follow limit tripped")).await;
    let answer = follow(&mut ca).await;
    assert!(
        matches!(&answer, ServerMessage::Error(b) if b.code == ErrorCode::UnknownLobby),
        "{answer:?}"
    );
    server.stop().await;
}

/// Repeats a REST call until it is refused with 429; the refusal's wait.
async fn until_429(mut call: impl AsyncFnMut(usize) -> (u16, Value), within: usize) -> Duration {
    for i in 0..within {
        let (status, v) = call(i).await;
        if status == 429 {
            assert_eq!(v["code"], "rate_limited", "{v}");
            let ms = v["retry_after_ms"].as_u64().expect("retry_after_ms");
            assert!(ms > 0);
            return Duration::from_millis(ms);
        }
        assert!(status < 300, "{status}: {v}");
    }
    panic!("no 429 within {within} calls");
}

async fn account_and_lobby_action_limits_trip_and_recover(db: &TestDb) {
    let mut config = db.config();
    config.limits.account_rate_addr = rate(3, 6);
    config.limits.lobby_rate_addr = rate(4, 8);
    let server = TestServer::start(config);
    let wait = until_429(
        async |i| {
            call(
                &server,
                "POST",
                "/api/accounts/guest",
                None,
                Some(json!({"name": format!("G{i}")})),
            )
            .await
        },
        10,
    )
    .await;
    tokio::time::sleep(wait).await;
    let (status, v) = call(
        &server,
        "POST",
        "/api/accounts/guest",
        None,
        Some(json!({"name": "Later"})),
    )
    .await;
    assert_eq!(status, 201, "{v}");
    let token = v["token"].as_str().expect("token").to_string();

    // Lobby actions: create, then ready on and off until refused; the wait lets one through.
    let (status, v) = call(
        &server,
        "POST",
        "/api/lobbies",
        Some(&token),
        Some(json!({"name": "Busy", "seats": 2})),
    )
    .await;
    assert_eq!(status, 201, "{v}");
    let ready = format!("/api/lobbies/{}/ready", v["id"].as_str().expect("id"));
    let wait = until_429(
        async |i| {
            call(
                &server,
                "POST",
                &ready,
                Some(&token),
                Some(json!({"ready": i % 2 == 0})),
            )
            .await
        },
        10,
    )
    .await;
    // Reads are not limited.
    let (status, _) = call(&server, "GET", "/api/lobbies", None, None).await;
    assert_eq!(status, 200);
    tokio::time::sleep(wait).await;
    let (status, v) = call(
        &server,
        "POST",
        &ready,
        Some(&token),
        Some(json!({"ready": true})),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    server.stop().await;
}

async fn caps_on_open_lobbies_and_sessions(db: &TestDb) {
    let mut config = db.config();
    config.limits.max_open_lobbies = 1;
    config.limits.max_sessions = 2;
    let server = TestServer::start(config);

    // Open lobbies per account: the second is refused until the first closes.
    let (_, token) = guest(&server, "Host").await;
    let create = async |name: &str| {
        call(
            &server,
            "POST",
            "/api/lobbies",
            Some(&token),
            Some(json!({"name": name, "seats": 2})),
        )
        .await
    };
    let (status, v) = create("First").await;
    assert_eq!(status, 201, "{v}");
    let first = v["id"].as_str().expect("id").to_string();
    let (status, v) = create("Second").await;
    assert_eq!(
        (status, v["code"].as_str()),
        (409, Some("too_many_lobbies")),
        "{v}"
    );
    let (status, v) = call(
        &server,
        "POST",
        &format!("/api/lobbies/{first}/leave"),
        Some(&token),
        None,
    )
    .await;
    assert_eq!(status, 204, "{v}");
    let (status, v) = create("Second").await;
    assert_eq!(status, 201, "{v}");

    // Sessions per account: registering opens one, one log-in more, then refused until one is
    // revoked.
    let creds = json!({"name": "Ada", "password": "correct horse"});
    let (status, v) = call(&server, "POST", "/api/accounts", None, Some(creds.clone())).await;
    assert_eq!(status, 201, "{v}");
    let (status, v) = call(&server, "POST", "/api/sessions", None, Some(creds.clone())).await;
    assert_eq!(status, 201, "{v}");
    let second = v["token"].as_str().expect("token").to_string();
    let (status, v) = call(&server, "POST", "/api/sessions", None, Some(creds.clone())).await;
    assert_eq!(
        (status, v["code"].as_str()),
        (409, Some("too_many_sessions")),
        "{v}"
    );
    let (me, v) = call(&server, "GET", "/api/sessions", Some(&second), None).await;
    assert_eq!(me, 200, "{v}");
    let current = v
        .as_array()
        .and_then(|s| s.iter().find(|s| s["current"] == true))
        .and_then(|s| s["id"].as_str())
        .expect("the current session")
        .to_string();
    let (status, _) = call(
        &server,
        "DELETE",
        &format!("/api/sessions/{current}"),
        Some(&second),
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (status, v) = call(&server, "POST", "/api/sessions", None, Some(creds)).await;
    assert_eq!(status, 201, "{v}");
    server.stop().await;
}
