//! A real server (the server crate's `run`) on a 127.0.0.1 ephemeral port, in a thread and
//! runtime of its own, on a SQLite store in a temporary directory; and a random player for the
//! seats a test plays itself.

#![allow(dead_code)] // each test binary uses its own part

use carcassonne_client::bot::Rng;
use carcassonne_client::{ClientError, MatchEvent, MatchStream};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::oneshot;

/// With `TEST_LOG` set (a filter such as `carcassonne_client=debug,server=info`), the logs of
/// the client and the server go to the test's captured output.
fn test_log() {
    if let Some(filter) = std::env::var("TEST_LOG").ok().filter(|v| !v.is_empty()) {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_test_writer()
            .try_init();
    }
}

/// A server running until dropped (abruptly) or restarted (gracefully).
pub struct TestServer {
    pub addr: SocketAddr,
    /// Ends the server like SIGTERM: in-flight commands finish, connections close with 1001.
    graceful: Option<oneshot::Sender<()>>,
    /// Ends it at once, like a crash.
    kill: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    relaxed: bool,
    dir: Option<tempfile::TempDir>,
}

impl TestServer {
    /// A server with every rate limit as wide as it goes.
    pub fn start() -> TestServer {
        TestServer::launch(true, tempfile::tempdir().expect("temp dir"), None)
    }

    /// A server with the default rate limits, as a bot meets them in production.
    pub fn with_default_limits() -> TestServer {
        TestServer::launch(false, tempfile::tempdir().expect("temp dir"), None)
    }

    /// Stops the server gracefully and starts it again on the same address and store.
    pub async fn restart(mut self) -> TestServer {
        if let Some(tx) = self.graceful.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            tokio::task::spawn_blocking(move || t.join())
                .await
                .expect("join task")
                .expect("the server thread");
        }
        let dir = self.dir.take().expect("the store's directory");
        TestServer::launch(self.relaxed, dir, Some(self.addr))
    }

    fn launch(relaxed: bool, dir: tempfile::TempDir, addr: Option<SocketAddr>) -> TestServer {
        test_log();
        let mut config = server::Config::default();
        config.store.data_dir = dir.path().join("data");
        if relaxed {
            config.limits.relax();
        }
        config.conn.heartbeat_interval = Duration::from_secs(1);
        config.shutdown_grace = Duration::from_secs(2);
        let listener = listen(addr.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0))));
        let addr = listener.local_addr().expect("addr");
        let (graceful, graceful_rx) = oneshot::channel::<()>();
        let (kill, kill_rx) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let shutdown = async move {
                    let _ = graceful_rx.await;
                };
                tokio::select! {
                    res = server::run(listener, config, shutdown) => {
                        if let Err(e) = res {
                            panic!("server failed: {e}");
                        }
                    }
                    _ = kill_rx => {}
                }
            });
            rt.shutdown_timeout(Duration::ZERO);
        });
        TestServer {
            addr,
            graceful: Some(graceful),
            kill: Some(kill),
            thread: Some(thread),
            relaxed,
            dir: Some(dir),
        }
    }

    pub fn http(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// A listening socket on `addr` that may take the port of a server just stopped (its
/// connections still in TIME_WAIT).
fn listen(addr: SocketAddr) -> std::net::TcpListener {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_reuseaddr(true).expect("SO_REUSEADDR");
    socket.bind(addr).expect("bind");
    let listener = socket.listen(1024).expect("listen");
    listener.into_std().expect("a std listener")
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.kill.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What one seat saw of a match it played to the end.
#[derive(Debug, Default)]
pub struct Played {
    /// The seqs of the snapshots and diffs, in the order handed out.
    pub snapshots: Vec<u64>,
    pub diffs: Vec<u64>,
    /// Both, in the order handed out: (`true` for a snapshot, seq).
    pub views: Vec<(bool, u64)>,
    pub acks: usize,
    pub refusals: Vec<protocol::ErrorBody>,
    /// `Connected` events after the first: (attempts, close code).
    pub reconnects: Vec<(u32, Option<u16>)>,
    pub finished: bool,
}

/// Plays `game`'s seat with random legal moves until the match ends; `on_diff` runs after each
/// diff (a test cuts the network there).
pub async fn play_random(
    game: &mut MatchStream,
    seed: u64,
    mut on_diff: impl FnMut(u64),
) -> Result<Played, ClientError> {
    let mut rng = Rng::new(seed);
    let mut played = Played::default();
    while let Some(event) = game.next().await? {
        match event {
            MatchEvent::Connected {
                attempts, after, ..
            } if attempts > 0 || !played.snapshots.is_empty() => {
                played.reconnects.push((attempts, after.map(|c| c.code)));
            }
            MatchEvent::Snapshot { seq } => {
                played.snapshots.push(seq);
                played.views.push((true, seq));
            }
            MatchEvent::Diff { seq, .. } => {
                played.diffs.push(seq);
                played.views.push((false, seq));
                on_diff(seq);
            }
            MatchEvent::YourTurn { decisions } => {
                let command = rules::bot::random_command(&decisions[0], || rng.next_u64())
                    .expect("an open decision has an answer");
                game.send(command).await?;
            }
            MatchEvent::Ack { .. } => played.acks += 1,
            MatchEvent::Refused(error) => played.refusals.push(error),
            MatchEvent::Finished => {
                played.finished = true;
                break;
            }
            _ => {}
        }
    }
    Ok(played)
}

/// Whether the views handed out never go back and skip nothing: each diff is the seq after
/// the view before it; a snapshot is not behind it.
pub fn no_gap_no_repeat(played: &Played) -> bool {
    let mut at: Option<u64> = None;
    played.views.iter().all(|&(snapshot, seq)| {
        let ok = if snapshot {
            at.is_none_or(|a| seq >= a)
        } else {
            at.is_some_and(|a| seq == a + 1)
        };
        at = Some(seq);
        ok
    })
}

/// Whether `seqs` run from `first` up by one each.
pub fn consecutive(seqs: &[u64], first: u64) -> bool {
    seqs.iter().enumerate().all(|(i, s)| *s == first + i as u64)
}
