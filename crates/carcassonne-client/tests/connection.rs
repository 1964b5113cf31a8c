//! The client against small scripted servers on real 127.0.0.1 sockets.

use carcassonne_client::{ClientError, CommandOutcome, Connection};
use futures_util::{SinkExt, StreamExt};
use protocol::{ClientMessage, ErrorBody, ErrorCode, ServerMessage};
use std::future::Future;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use uuid::Uuid;

type ServerWs = WebSocketStream<TcpStream>;

/// Accepts one WebSocket connection, sends the welcome and hands the socket to `script`.
async fn serve_one<F, Fut>(script: F) -> (String, JoinHandle<()>)
where
    F: FnOnce(ServerWs) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.expect("accept");
        let mut ws = tokio_tungstenite::accept_async(tcp)
            .await
            .expect("handshake");
        send(
            &mut ws,
            &ServerMessage::Welcome {
                protocol_version: protocol::PROTOCOL_VERSION,
                rules_version: "rules/test".to_owned(),
                server_version: "test".to_owned(),
            },
        )
        .await;
        script(ws).await;
    });
    (format!("ws://{addr}/ws"), task)
}

async fn send(ws: &mut ServerWs, msg: &ServerMessage) {
    let text = serde_json::to_string(msg).expect("encode");
    ws.send(Message::text(text)).await.expect("send");
}

async fn recv(ws: &mut ServerWs) -> ClientMessage {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(t))) => return serde_json::from_str(t.as_str()).expect("decode"),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            other => panic!("expected a text frame, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn command_waits_for_its_ack_and_keeps_earlier_messages() -> Result<(), ClientError> {
    let match_id = Uuid::new_v4();
    let (url, server) = serve_one(move |mut ws| async move {
        let got = recv(&mut ws).await;
        assert_eq!(
            got,
            ClientMessage::Command {
                id: "c1".to_owned(),
                command: rules::Command::Pass {}
            }
        );
        let diff = ServerMessage::Diff {
            match_id,
            seq: 3,
            by_server: None,
            events: Vec::new(),
            patch: Vec::new(),
        };
        send(&mut ws, &diff).await;
        let other_ack = ServerMessage::Ack {
            id: "c0".to_owned(),
            match_id,
            seq: 2,
        };
        send(&mut ws, &other_ack).await;
        let ack = ServerMessage::Ack {
            id: "c1".to_owned(),
            match_id,
            seq: 3,
        };
        send(&mut ws, &ack).await;
        let _ = recv(&mut ws).await;
        let refusal = ErrorBody {
            id: Some("c2".to_owned()),
            code: ErrorCode::Rule,
            rule_code: Some("wrong_phase".to_owned()),
            rule: Some("B4".to_owned()),
            message: "no".to_owned(),
            retry_after_ms: None,
        };
        send(&mut ws, &ServerMessage::Error(refusal)).await;
    })
    .await;

    let mut conn = Connection::connect(&url).await?;
    conn.set_read_timeout(Some(Duration::from_secs(5)));
    assert_eq!(conn.welcome().protocol_version, protocol::PROTOCOL_VERSION);
    let outcome = conn.command("c1", rules::Command::Pass {}).await?;
    assert_eq!(outcome, CommandOutcome::Accepted { match_id, seq: 3 });
    let first = conn.next_message().await?;
    assert!(
        matches!(first, Some(ServerMessage::Diff { seq: 3, .. })),
        "{first:?}"
    );
    let second = conn.next_message().await?;
    assert!(
        matches!(second, Some(ServerMessage::Ack { seq: 2, .. })),
        "{second:?}"
    );
    match conn.command("c2", rules::Command::Pass {}).await? {
        CommandOutcome::Rejected(body) => assert_eq!(body.rule.as_deref(), Some("B4")),
        other => panic!("expected a refusal, got {other:?}"),
    }
    server.await.expect("server script");
    Ok(())
}

/// `next_text` hands over what `command` queued first, then frames exactly as sent (a field the
/// protocol types do not know included), then `None` when the server closes.
#[tokio::test]
async fn next_text_gives_queued_messages_then_frames_as_sent() -> Result<(), ClientError> {
    let match_id = Uuid::new_v4();
    let raw = format!(
        r#"{{"type":"diff","match_id":"{match_id}","seq":4,"events":[],"patch":[],"extra":1}}"#
    );
    let sent = raw.clone();
    let (url, server) = serve_one(move |mut ws| async move {
        let _ = recv(&mut ws).await;
        let queued = ServerMessage::Authenticated { match_id, seat: 0 };
        send(&mut ws, &queued).await;
        let ack = ServerMessage::Ack {
            id: "c1".to_owned(),
            match_id,
            seq: 3,
        };
        send(&mut ws, &ack).await;
        ws.send(Message::text(sent)).await.expect("send");
        ws.close(None).await.expect("close");
        while ws.next().await.is_some() {}
    })
    .await;
    let mut conn = Connection::connect(&url).await?;
    conn.set_read_timeout(Some(Duration::from_secs(5)));
    let outcome = conn.command("c1", rules::Command::Pass {}).await?;
    assert_eq!(outcome, CommandOutcome::Accepted { match_id, seq: 3 });
    let first = conn.next_text().await?.map(|t| t.as_str().to_owned());
    let parsed = first.as_deref().map(serde_json::from_str::<ServerMessage>);
    assert!(
        matches!(
            parsed,
            Some(Ok(ServerMessage::Authenticated { seat: 0, .. }))
        ),
        "{first:?}"
    );
    let second = conn.next_text().await?;
    assert_eq!(second.as_ref().map(|t| t.as_str()), Some(raw.as_str()));
    assert_eq!(conn.next_text().await?, None);
    server.await.expect("server script");
    Ok(())
}

#[tokio::test]
async fn reading_answers_the_servers_pings() -> Result<(), ClientError> {
    let match_id = Uuid::new_v4();
    let (url, server) = serve_one(move |mut ws| async move {
        ws.send(Message::Ping(b"hb".to_vec().into()))
            .await
            .expect("ping");
        match tokio::time::timeout(Duration::from_secs(5), ws.next()).await {
            Ok(Some(Ok(Message::Pong(payload)))) => assert_eq!(&payload[..], b"hb"),
            other => panic!("expected a pong, got {other:?}"),
        }
        let snapshot_free = ServerMessage::Authenticated { match_id, seat: 1 };
        send(&mut ws, &snapshot_free).await;
    })
    .await;
    let mut conn = Connection::connect(&url).await?;
    conn.set_read_timeout(Some(Duration::from_secs(5)));
    let msg = conn.next_message().await?;
    assert_eq!(
        msg,
        Some(ServerMessage::Authenticated { match_id, seat: 1 })
    );
    server.await.expect("server script");
    Ok(())
}

#[tokio::test]
async fn the_close_code_is_kept() -> Result<(), ClientError> {
    let (url, server) = serve_one(|mut ws| async move {
        let frame = CloseFrame {
            code: protocol::close::TOO_SLOW.into(),
            reason: "too slow".into(),
        };
        ws.close(Some(frame)).await.expect("close");
        while ws.next().await.is_some() {}
    })
    .await;
    let mut conn = Connection::connect(&url).await?;
    conn.set_read_timeout(Some(Duration::from_secs(5)));
    assert_eq!(conn.next_message().await?, None);
    let close = conn.close_frame().map(|c| (c.code, c.reason.as_str()));
    assert_eq!(close, Some((protocol::close::TOO_SLOW, "too slow")));
    server.await.expect("server script");
    Ok(())
}

#[tokio::test]
async fn a_refused_token_is_a_typed_error() -> Result<(), ClientError> {
    let (url, server) = serve_one(|mut ws| async move {
        assert!(matches!(recv(&mut ws).await, ClientMessage::Auth { token } if token == "nope"));
        let refusal = ErrorBody {
            id: None,
            code: ErrorCode::BadToken,
            rule_code: None,
            rule: None,
            message: "no such seat".to_owned(),
            retry_after_ms: None,
        };
        send(&mut ws, &ServerMessage::Error(refusal)).await;
    })
    .await;
    let mut conn = Connection::connect(&url).await?;
    conn.set_read_timeout(Some(Duration::from_secs(5)));
    match conn.auth("nope").await {
        Err(ClientError::Refused(body)) => assert_eq!(body.code, ErrorCode::BadToken),
        other => panic!("expected a refusal, got {other:?}"),
    }
    server.await.expect("server script");
    Ok(())
}

#[tokio::test]
async fn a_silent_server_times_out() -> Result<(), ClientError> {
    let (url, server) = serve_one(|mut ws| async move {
        // Keep the socket open until the client goes away.
        while ws.next().await.is_some() {}
    })
    .await;
    let mut conn = Connection::connect(&url).await?;
    conn.set_read_timeout(Some(Duration::from_millis(100)));
    let err = conn.next_message().await.err();
    assert!(matches!(err, Some(ClientError::Timeout(_))), "{err:?}");
    conn.set_read_timeout(Some(Duration::from_secs(5)));
    conn.close().await?;
    server.await.expect("server script");
    Ok(())
}

#[tokio::test]
async fn a_first_frame_other_than_welcome_is_refused() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.expect("accept");
        let mut ws = tokio_tungstenite::accept_async(tcp)
            .await
            .expect("handshake");
        ws.send(Message::text("{\"type\":\"hello\"}"))
            .await
            .expect("send");
        while ws.next().await.is_some() {}
    });
    let err = Connection::connect(&format!("ws://{addr}/ws")).await.err();
    assert!(matches!(err, Some(ClientError::Decode { .. })), "{err:?}");
    server.abort();
}

/// Answers one HTTP request with `status` and `body`, and returns the request text.
async fn http_once(status: &'static str, body: String) -> (String, JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.expect("accept");
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        // Read the head, then as many body bytes as Content-Length says.
        loop {
            let n = tcp.read(&mut buf).await.expect("read");
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request).into_owned();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().to_owned())
                    })
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
            assert!(n > 0, "the client hung up mid-request");
        }
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        tcp.write_all(response.as_bytes()).await.expect("write");
        String::from_utf8_lossy(&request).into_owned()
    });
    (format!("http://{addr}"), task)
}

#[tokio::test]
async fn create_match_posts_json_and_reads_the_tokens() -> Result<(), ClientError> {
    let match_id = Uuid::new_v4();
    let created = protocol::MatchCreated {
        match_id,
        seats: vec![protocol::SeatToken {
            seat: 0,
            colour: rules::Colour::Red,
            token: "t0".to_owned(),
        }],
    };
    let body = serde_json::to_string(&created).map_err(ClientError::Encode)?;
    let (base, server) = http_once("201 Created", body).await;
    let request = protocol::CreateMatch {
        players: vec![rules::Colour::Red, rules::Colour::Blue],
        modules: rules::Modules::default(),
        meeples: None,
        draw_order: None,
        clock: None,
    };
    let answer = carcassonne_client::create_match(&format!("{base}/"), &request).await?;
    assert_eq!(answer, created);
    let seen = server.await.expect("server");
    assert!(seen.starts_with("POST /api/matches HTTP/1.1\r\n"), "{seen}");
    assert!(
        seen.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{seen}"
    );
    assert!(seen.ends_with(r#"{"players":["red","blue"],"modules":{"tollkeepers":false},"meeples":null,"draw_order":null}"#), "{seen}");
    Ok(())
}

#[tokio::test]
async fn create_match_reports_a_refusal_with_its_status() {
    let (base, server) = http_once("400 Bad Request", "\"no players\"".to_owned()).await;
    let request = protocol::CreateMatch {
        players: Vec::new(),
        modules: rules::Modules::default(),
        meeples: None,
        draw_order: None,
        clock: None,
    };
    let err = carcassonne_client::create_match(&base, &request)
        .await
        .err();
    assert!(
        matches!(&err, Some(ClientError::HttpStatus { status: 400, body }) if body.contains("no players")),
        "{err:?}"
    );
    server.await.expect("server");
}

/// A follower takes its seat, applies the snapshot and the diffs that follow it in order, and
/// reports a diff that skips a seq as a typed error.
#[tokio::test]
async fn a_follower_mirrors_in_order_and_reports_a_gap()
-> Result<(), carcassonne_client::FollowError> {
    let match_id = Uuid::new_v4();
    let (game, _) = rules::Game::start(rules::Setup::new(
        vec![rules::Colour::Red, rules::Colour::Blue],
        1,
    ))
    .expect("setup");
    let view = game.view();
    let (url, server) = serve_one(move |mut ws| async move {
        assert_eq!(
            recv(&mut ws).await,
            ClientMessage::Auth {
                token: "t1".to_owned()
            }
        );
        send(&mut ws, &ServerMessage::Authenticated { match_id, seat: 1 }).await;
        assert_eq!(
            recv(&mut ws).await,
            ClientMessage::Subscribe {
                match_id,
                since: None
            }
        );
        let snapshot = ServerMessage::Snapshot {
            match_id,
            seq: 4,
            view: Box::new(view.into()),
        };
        send(&mut ws, &snapshot).await;
        for seq in [5, 7] {
            let diff = ServerMessage::Diff {
                match_id,
                seq,
                by_server: None,
                events: Vec::new(),
                patch: Vec::new(),
            };
            send(&mut ws, &diff).await;
        }
        let _ = ws.next().await;
    })
    .await;

    let mut conn = Connection::connect(&url).await?;
    conn.set_read_timeout(Some(Duration::from_secs(5)));
    let mut follower = carcassonne_client::Follower::join(conn, match_id, Some("t1"), None).await?;
    assert_eq!(follower.seat, Some(1));
    assert_eq!(follower.new_id(), "s1-c1");
    follower.sync_to(5).await?;
    assert_eq!(
        (follower.snapshots, follower.diff_seqs.clone()),
        (1, vec![5])
    );
    assert_eq!(follower.view()?.players.len(), 2);
    let gap = follower.sync_to(6).await;
    assert!(
        matches!(
            gap,
            Err(carcassonne_client::FollowError::Mirror(
                carcassonne_client::MirrorError::Gap { have: 5, got: 7 }
            ))
        ),
        "{gap:?}"
    );
    assert_eq!(
        follower.diff_seqs,
        vec![5],
        "a diff that did not apply is not recorded"
    );
    drop(follower);
    server.await.expect("server script");
    Ok(())
}
