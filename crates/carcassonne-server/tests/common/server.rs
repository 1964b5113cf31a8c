//! Real servers on 127.0.0.1 ephemeral ports, each in its own thread and tokio runtime (so that a
//! test can kill one abruptly by dropping its runtime), and matches created on them.

use protocol::{CreateMatch, MatchCreated};
use rules::Colour;
use server::Config;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::oneshot;

/// Longest a graceful stop of a test server may take (see [`TestServer::stop`]).
const STOP_BOUND: Duration = Duration::from_secs(30);

/// With `TEST_LOG` set (`1`, or a filter such as `server=debug`), the servers' logs go to the
/// test's captured output: shown when a test fails (or with `--nocapture`).
fn test_log() {
    let Some(filter) = std::env::var("TEST_LOG").ok().filter(|v| !v.is_empty()) else {
        return;
    };
    let filter = if filter == "1" {
        "info".to_string()
    } else {
        filter
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_test_writer()
        .try_init();
}

/// A running server in its own thread and runtime.
pub struct TestServer {
    pub addr: SocketAddr,
    graceful: Option<oneshot::Sender<()>>,
    kill: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    pub fn start(config: Config) -> TestServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let (graceful, graceful_rx) = oneshot::channel::<()>();
        let (kill, kill_rx) = oneshot::channel::<()>();
        test_log();
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
                    _ = kill_rx => {} // abrupt: drop everything, no graceful path
                }
            });
            rt.shutdown_timeout(Duration::ZERO);
        });
        TestServer {
            addr,
            graceful: Some(graceful),
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    /// A handle on a server started elsewhere (a process of the server binary): it neither owns
    /// nor stops it.
    pub fn attach(addr: SocketAddr) -> TestServer {
        TestServer {
            addr,
            graceful: None,
            kill: None,
            thread: None,
        }
    }

    pub fn http(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn ws(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// A graceful stop (like SIGTERM), bounded: the server's three grace periods (5 s each in tests) and the
    /// store's close, with room to spare. A stop that hangs (a store whose close waits for a
    /// connection nobody gives back, say) fails the test instead of stalling the suite; the
    /// drop then kills the server.
    pub async fn stop(mut self) {
        if let Some(tx) = self.graceful.take() {
            let _ = tx.send(());
        }
        tokio::time::timeout(STOP_BOUND, self.join())
            .await
            .expect("the server stopped gracefully in time");
    }

    /// Like a crash: the runtime is dropped with every task in it, mid-flight.
    pub async fn kill(mut self) {
        if let Some(tx) = self.kill.take() {
            let _ = tx.send(());
        }
        self.join().await;
    }

    async fn join(&mut self) {
        if let Some(t) = self.thread.take() {
            tokio::task::spawn_blocking(move || t.join())
                .await
                .expect("join task")
                .expect("server thread panicked");
        }
    }
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

pub async fn create(server: &TestServer, players: usize) -> MatchCreated {
    let colours = [Colour::Red, Colour::Blue, Colour::Green, Colour::Yellow];
    let req = CreateMatch {
        players: colours[..players].to_vec(),
        modules: Default::default(),
        meeples: None,
        draw_order: None,
        clock: None,
    };
    client::create_match(&server.http(), &req)
        .await
        .expect("create match")
}

/// The seat tokens of a created match, in seat order.
pub fn seat_tokens(created: &MatchCreated) -> Vec<String> {
    created.seats.iter().map(|s| s.token.clone()).collect()
}
