//! Exhausted resources. Past `--max-connections`, a WebSocket upgrade gets 503 `unavailable`
//! with `Retry-After`, a match already running keeps playing, and a closed connection frees its
//! place. The server binary run with a low open-files limit, and more WebSocket connections
//! opened than the limit allows: new connections are refused or wait (the accept loop backs off
//! on `EMFILE`); the process stays up, a match already running keeps playing over the
//! connections it has, and once connections close the server serves again. Linux only (the
//! limit is set with the shell's `ulimit -n`).

#![cfg(target_os = "linux")]

use crate::common::*;
use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

on_both_stores!(
    a_server_out_of_file_descriptors_delays_new_connections_and_recovers,
    upgrades_past_the_connection_limit_get_503_and_matches_play_on,
);

/// The open-files limit the server runs under: its own files (the store, the runtime, the
/// listener) take a few dozen, the rest are sockets.
const NOFILE: u32 = 128;
/// How long a client waits for an upgrade before counting it as refused.
const UPGRADE_WAIT: Duration = Duration::from_secs(2);

/// The server binary under `ulimit -n NOFILE`, killed on drop.
fn start(db: &TestDb) -> ServerProcess {
    let store = match db {
        TestDb::Sqlite(dir) => vec![
            "--data-dir".to_string(),
            dir.path().join("data").display().to_string(),
        ],
        TestDb::Postgres { url, .. } => vec!["--database-url".to_string(), url.clone()],
    };
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -n {NOFILE} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_carcassonne-server"))
        .args(["--bind", "127.0.0.1:0", "--log-format", "json"])
        .args(["--allow-test-setups", "--heartbeat-interval", "1s"])
        .args(["--command-rate-addr", "1000000/1s"])
        .args(store);
    ServerProcess::spawn(cmd)
}

/// A WebSocket that gets the server's `welcome` within [`UPGRADE_WAIT`], or `None`.
async fn open(addr: SocketAddr) -> Option<client::Connection> {
    let url = format!("ws://{addr}/ws");
    let mut conn = tokio::time::timeout(UPGRADE_WAIT, client::Connection::connect(&url))
        .await
        .ok()?
        .ok()?;
    conn.set_read_timeout(Some(READ_TIMEOUT));
    Some(conn)
}

async fn a_server_out_of_file_descriptors_delays_new_connections_and_recovers(db: &TestDb) {
    let mut process = start(db);
    let server = TestServer::attach(process.addr);
    let created = create(&server, 2).await;
    let mut seats = join_seats(&server, &created).await;
    let mut rng = Rng::new(11);
    assert_eq!(play(&mut seats, &mut [], &mut rng, 4).await, 4);

    // More connections than the limit allows: open until the server stops answering, then a
    // few more to see it refuse them all.
    let mut held = Vec::new();
    let (mut attempted, mut refused) = (0, 0);
    while attempted < 2 * NOFILE as usize && refused < 5 {
        attempted += 1;
        match open(process.addr).await {
            Some(conn) if refused == 0 => held.push(conn),
            Some(_) => panic!(
                "a connection opened after one was refused ({} held)",
                held.len()
            ),
            None => refused += 1,
        }
    }
    eprintln!(
        "limit {NOFILE}: {attempted} connections attempted, {} opened, {refused} refused or delayed",
        held.len()
    );
    assert!(
        refused > 0,
        "{attempted} connections all opened under {NOFILE}"
    );
    assert!(held.len() < NOFILE as usize);
    assert!(process.alive(), "the server died out of file descriptors");

    // The running match keeps playing over the connections it has.
    let before = seats[0].seq();
    assert_eq!(play(&mut seats, &mut [], &mut rng, 6).await, 6);
    assert!(seats[0].seq() > before, "no move was played");
    assert!(process.alive());

    // Connections close: the server accepts again (the accept loop retries every second).
    drop(held);
    let started = Instant::now();
    let conn = loop {
        if let Some(conn) = open(process.addr).await {
            break conn;
        }
        assert!(
            started.elapsed() < READ_TIMEOUT,
            "the server did not accept again"
        );
    };
    drop(conn);
    let (status, body) = client::http_get(&format!("{}/healthz", server.http()))
        .await
        .expect("healthz");
    assert_eq!((status, body.as_str()), (200, "ok"));
    let mut watchers = [Follower::join(&server, created.match_id, None, None).await];
    assert_eq!(play(&mut seats, &mut watchers, &mut rng, 2).await, 2);
    assert!(process.alive());
}

/// The server's connection limit in the test below: the two seats and two idle connections.
const MAX_CONNECTIONS: usize = 4;

async fn upgrades_past_the_connection_limit_get_503_and_matches_play_on(db: &TestDb) {
    use tokio_tungstenite::tungstenite::Error as WsError;
    let mut config = db.config();
    config.conn.max_connections = Some(MAX_CONNECTIONS);
    let server = TestServer::start(config);
    let created = create(&server, 2).await;
    let mut seats = join_seats(&server, &created).await;
    let mut rng = Rng::new(5);
    assert_eq!(play(&mut seats, &mut [], &mut rng, 2).await, 2);
    let mut idle = Vec::new();
    for _ in seats.len()..MAX_CONNECTIONS {
        idle.push(
            client::Connection::connect(&server.ws())
                .await
                .expect("within the limit"),
        );
    }

    for _ in 0..3 {
        let refused = tokio_tungstenite::connect_async(server.ws())
            .await
            .map(|_| ());
        let Err(WsError::Http(response)) = refused else {
            panic!("an upgrade past the limit was not refused: {refused:?}");
        };
        assert_eq!(response.status(), 503);
        let retry: u64 = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()?.parse().ok())
            .unwrap_or_else(|| panic!("no Retry-After: {:?}", response.headers()));
        assert!(retry >= 1);
        let body: serde_json::Value =
            serde_json::from_slice(response.body().as_deref().unwrap_or_default())
                .expect("a JSON error body");
        assert_eq!(body["code"], "unavailable", "{body}");
        assert!(
            body["retry_after_ms"].as_u64().is_some_and(|ms| ms > 0),
            "{body}"
        );
    }

    // The match plays on over the connections it has.
    assert_eq!(play(&mut seats, &mut [], &mut rng, 4).await, 4);

    // Closed connections free their places (once their tasks end): a new one is served.
    for mut c in idle {
        c.close().await.expect("close");
    }
    let started = Instant::now();
    let mut watchers = loop {
        match client::Connection::connect(&server.ws()).await {
            Ok(mut conn) => {
                conn.set_read_timeout(Some(READ_TIMEOUT));
                let joined = client::Follower::join(conn, created.match_id, None, None).await;
                break [Follower::from(joined.expect("a watcher joins"))];
            }
            Err(e) => assert_eq!(e.http_status(), Some(503), "{e}"),
        }
        assert!(started.elapsed() < READ_TIMEOUT, "no place came free");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(play(&mut seats, &mut watchers, &mut rng, 2).await, 2);
}
