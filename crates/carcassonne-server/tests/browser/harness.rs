//! What every browser test shares: a server on the embedded store that a test can kill and
//! start again on the same port, Chromium, matches created over HTTP or from the start page,
//! and reading a page's state against the server's own view.

use crate::cdp::{Browser, Page, WAIT};
use client::Connection;
use protocol::{CreateMatch, MatchCreated, ServerMessage};
use rules::scenario::Scenario;
use serde_json::Value;
use server::Config;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;
use tokio::sync::oneshot;

/// The admin token of every test server (the admin console's tests sign in with it).
pub(crate) const ADMIN_TOKEN: &str = "browser-admin-token";

/// A server in its own thread and runtime, on a given listener, so that a test can kill it
/// abruptly and start another on the same port and store.
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    kill: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    pub(crate) fn start(addr: SocketAddr, data: &Path) -> Server {
        let listener = std::net::TcpListener::bind(addr).expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let mut config = Config::default();
        config.matches.allow_test_setups = true;
        config.store.data_dir = data.to_path_buf();
        config.conn.heartbeat_interval = Duration::from_secs(1);
        config.conn.heartbeat_timeout = Duration::from_secs(15);
        config.shutdown_grace = Duration::from_secs(2);
        config.admin.admin_token = Some(ADMIN_TOKEN.into());
        config.limits.relax(); // the limits' own tests narrow them
        let (kill, kill_rx) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                tokio::select! {
                    res = server::run(listener, config, std::future::pending()) => {
                        if let Err(e) = res { panic!("server failed: {e}"); }
                    }
                    _ = kill_rx => {}
                }
            });
            rt.shutdown_timeout(Duration::ZERO);
        });
        Server {
            addr,
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    pub(crate) fn http(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub(crate) fn ws(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// Like a crash: every task dropped mid-flight, sockets cut.
    pub(crate) fn kill(mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
    }
}

pub(crate) fn scenario(name: &str) -> Scenario {
    let path = format!(
        "{}/../carcassonne-rules/scenarios/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("scenario")).expect("parses")
}

pub(crate) async fn create(server: &Server, s: &Scenario) -> MatchCreated {
    let req = CreateMatch {
        players: s.setup.players.clone(),
        modules: s.setup.modules.clone(),
        meeples: None,
        draw_order: s.setup.draw_order.clone(),
        clock: None,
    };
    client::create_match(&server.http(), &req)
        .await
        .expect("create match")
}

/// The server's own public view of the match, from a fresh snapshot.
pub(crate) async fn server_view(server: &Server, id: uuid::Uuid) -> (u64, Value) {
    let mut c = Connection::connect(&server.ws()).await.expect("connect");
    c.subscribe(id, None).await.expect("subscribe");
    let m = tokio::time::timeout(
        WAIT,
        c.wait_for(|m| matches!(m, ServerMessage::Snapshot { .. })),
    )
    .await
    .expect("snapshot in time")
    .expect("snapshot");
    let ServerMessage::Snapshot { seq, view, .. } = m else {
        unreachable!()
    };
    (seq, serde_json::to_value(view).expect("view json"))
}

/// A page of one seat, loaded and showing the match.
pub(crate) async fn seat_page(b: &Browser, server: &Server, token: &str) -> Page {
    let p = b.page(1280, 720).await;
    p.goto(&format!("{}/#token={token}", server.http())).await;
    p.wait(
        "window.carcassonne && window.carcassonne.view",
        "the first view",
    )
    .await;
    p
}

pub(crate) async fn page_seq(p: &Page) -> Option<u64> {
    p.eval("window.carcassonne.seq").await.as_u64()
}

/// Waits until the page has applied `seq`.
pub(crate) async fn wait_seq(p: &Page, seq: u64) {
    p.wait(
        &format!("window.carcassonne.seq >= {seq} && document.getElementById('seq').textContent == '{seq}'"),
        &format!("seq {seq}"),
    )
    .await;
}

pub(crate) async fn page_view(p: &Page) -> Value {
    p.eval("window.carcassonne.view").await
}

pub(crate) async fn page_scores(p: &Page) -> Vec<u64> {
    let v = p
        .eval(
            "[...document.querySelectorAll('#players td.score')].map(td => Number(td.textContent))",
        )
        .await;
    v.as_array()
        .expect("scores")
        .iter()
        .filter_map(Value::as_u64)
        .collect()
}

pub(crate) fn scores(view: &Value) -> Vec<u64> {
    view["players"]
        .as_array()
        .expect("players")
        .iter()
        .filter_map(|p| p["score"].as_u64())
        .collect()
}

pub(crate) fn free_addr() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr")
}

/// Chromium and a server on the embedded store in a fresh data directory; `None` (after the
/// notice) when Chromium is missing outside CI.
pub(crate) async fn browser_and_server() -> Option<(Browser, tempfile::TempDir, Server)> {
    let b = Browser::launch().await?;
    let data = tempfile::tempdir().expect("tmp");
    let server = Server::start(free_addr(), data.path());
    Some((b, data, server))
}

pub(crate) async fn text_of(p: &Page, js: &str) -> String {
    p.eval(js).await.as_str().unwrap_or_default().to_string()
}

/// Ticks `option` on the start page, creates the match and returns the first seat's link.
pub(crate) async fn create_from_start_page(p: &Page, server: &Server, option: &str) -> String {
    p.goto(&format!("{}/#test", server.http())).await;
    p.click(option).await;
    p.click("#create-form button").await;
    p.wait(
        "document.querySelectorAll('#created a').length === 3",
        "seat and watch links",
    )
    .await;
    text_of(
        p,
        "document.querySelector('#created a.seat-link').getAttribute('href')",
    )
    .await
}

/// Plays `moves` random legal commands (the rules crate's bot, any seat's open decision) over the
/// wire; returns the seq reached (fewer when the game ends first).
pub(crate) async fn play_randomly(
    server: &Server,
    created: &MatchCreated,
    moves: u64,
    mut rng: u64,
) -> u64 {
    let id = created.match_id;
    let ws = server.ws();
    let mut seats = seat_connections(server, created).await;
    let mut follower = Connection::connect(&ws).await.expect("connect");
    follower.subscribe(id, None).await.expect("subscribe");
    let mut mirror = client::Mirror::new(id);
    let mut seq = 0;
    while seq < moves {
        while mirror.seq() != Some(seq) {
            let m = tokio::time::timeout(WAIT, follower.next_message())
                .await
                .expect("a message in time")
                .expect("read")
                .expect("open");
            mirror.apply(&m).expect("mirror");
        }
        let view = mirror.view_typed().expect("view").expect("some");
        if view.finished {
            break;
        }
        let (player, command) =
            rules::bot::random_move_from(&view.decisions, || rules::bot::splitmix64(&mut rng))
                .expect("a move");
        let out = seats[usize::from(player)]
            .command(&format!("r{seq}"), command)
            .await
            .expect("command");
        assert!(
            matches!(out, client::CommandOutcome::Accepted { .. }),
            "{out:?}"
        );
        seq += 1;
    }
    seq
}

/// One native connection per seat of `created`, each holding its seat, in seat order (for
/// tests that need moves made over the wire, not the clicks that make them).
pub(crate) async fn seat_connections(server: &Server, created: &MatchCreated) -> Vec<Connection> {
    let mut seats = Vec::new();
    for st in &created.seats {
        let mut c = Connection::connect(&server.ws()).await.expect("connect");
        c.auth(&st.token).await.expect("auth");
        seats.push(c);
    }
    seats
}

/// The final scores a scenario expects, in seat order.
pub(crate) fn expected_scores(s: &Scenario) -> Vec<u64> {
    s.expect
        .scores
        .iter()
        .flatten()
        .map(|&x| u64::from(x))
        .collect()
}
