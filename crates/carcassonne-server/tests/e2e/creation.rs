//! The limits on what creates something, over real sockets: a burst of match creations from one
//! address gets `rate_limited` (429 with `Retry-After`) past `--match-rate-addr` while the server
//! answers everyone else at once; with `--anonymous-matches off` only an account session creates
//! a match; and the server binary refuses to start with an admin token under 16 characters.

use crate::common::*;
use server::client_addr::ProxyRange;
use server::config::Rate;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MATCH: &str = r#"{"players":["red","blue"]}"#;
const BURST: u32 = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_match_creations_is_limited_and_the_server_stays_responsive() {
    let db = TestDb::sqlite();
    let mut config = db.config();
    config.limits.match_rate_addr = Rate {
        burst: BURST,
        period: Duration::from_secs(600),
    };
    // The test plays a proxy, so that the burst and the bystander have addresses of their own.
    config.conn.trusted_proxies = vec![ProxyRange::parse("127.0.0.1").expect("range")];
    let server = std::sync::Arc::new(TestServer::start(config));
    let flood = [
        ("Content-Type", "application/json"),
        ("X-Forwarded-For", "198.51.100.1"),
    ];
    let mut tasks = Vec::new();
    for _ in 0..4 * BURST {
        let server = std::sync::Arc::clone(&server);
        tasks.push(tokio::spawn(async move {
            http_with_head(&server, "POST", "/api/matches", &flood, MATCH).await
        }));
    }
    let (mut created, mut limited) = (0, 0);
    for t in tasks {
        let (status, head, body) = t.await.expect("task");
        match status {
            201 => created += 1,
            429 => {
                limited += 1;
                let retry: u64 = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("retry-after:")
                            .map(|v| v.trim().to_string())
                    })
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("no Retry-After in {head}"));
                assert!(retry >= 1, "{head}");
                let v: serde_json::Value = serde_json::from_str(&body).expect("json");
                assert_eq!(v["code"], "rate_limited", "{body}");
                assert!(
                    v["retry_after_ms"].as_u64().is_some_and(|ms| ms > 0),
                    "{body}"
                );
            }
            other => panic!("POST /api/matches answered {other}: {body}"),
        }
    }
    assert_eq!((created, limited), (BURST, 3 * BURST));

    // Everyone else is answered: health, another address's match, the WebSocket.
    let (status, body) = http(&server, "GET", "/healthz", &[], "").await;
    assert_eq!((status, body.as_str()), (200, "ok"));
    let other = [
        ("Content-Type", "application/json"),
        ("X-Forwarded-For", "198.51.100.2"),
    ];
    let (status, _, body) = http_with_head(&server, "POST", "/api/matches", &other, MATCH).await;
    assert_eq!(status, 201, "{body}");
    let created = serde_json::from_str::<protocol::MatchCreated>(&body).expect("created");
    let mut conn = client::Connection::connect(&server.ws())
        .await
        .expect("connect");
    conn.auth(&created.seats[0].token).await.expect("a seat");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_anonymous_matches_only_an_account_creates_one() {
    let db = TestDb::sqlite();
    let mut config = db.config();
    config.matches.anonymous_matches = false;
    let server = TestServer::start(config);
    let json = ("Content-Type", "application/json");
    let (status, body) = http_exact(&server, "POST", "/api/matches", &[json], MATCH).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("unauthenticated"), "{body}");
    let bogus = ("Authorization", "Bearer not-a-session");
    let (status, body) = http_exact(&server, "POST", "/api/matches", &[json, bogus], MATCH).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("unknown_session"), "{body}");

    let (status, body) = http(
        &server,
        "POST",
        "/api/accounts/guest",
        &[],
        r#"{"name":"Host"}"#,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).expect("json");
    let bearer = format!("Bearer {}", v["token"].as_str().expect("token"));
    let auth = ("Authorization", bearer.as_str());
    let (status, body) = http_exact(&server, "POST", "/api/matches", &[json, auth], MATCH).await;
    assert_eq!(status, 201, "{body}");
}

/// The server binary with `ADMIN_TOKEN` set: how it ended (or `None`: still running after
/// `READ_TIMEOUT`, killed) and what it wrote to stderr.
fn start_with_admin_token(token: &str) -> (Option<std::process::ExitStatus>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_carcassonne-server"))
        .args(["--bind", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data"))
        .env("ADMIN_TOKEN", token)
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the server binary");
    let deadline = Instant::now() + READ_TIMEOUT;
    let status = loop {
        match child.try_wait().expect("wait") {
            Some(status) => break Some(status),
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let mut stderr = String::new();
    if let Some(mut err) = child.stderr.take() {
        use std::io::Read;
        let _ = err.read_to_string(&mut stderr);
    }
    (status, stderr)
}

#[test]
fn a_short_admin_token_stops_the_server_at_start() {
    let (status, stderr) = start_with_admin_token("hunter2-short");
    let status = status.unwrap_or_else(|| panic!("the server kept running; stderr: {stderr}"));
    assert!(!status.success(), "{status:?}");
    assert!(
        stderr.contains("admin token") && stderr.contains("at least 16"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("hunter2"),
        "the token was printed: {stderr}"
    );
}
