//! The authoritative Carcassonne server.
//!
//! - [`store`]: the durable command log, on SQLite (default) or Postgres.
//! - [`actor`]: one task per match owning its `rules::Game`; persist, then broadcast.
//! - [`conn`]: one task per WebSocket connection with a bounded outgoing queue.
//! - [`http`]: `POST /api/matches`, `GET /healthz`, the admin log, and the `/ws` upgrade.
//!
//! [`run`] takes a bound listener, a [`Config`] and a shutdown future, so that tests run real
//! servers on ephemeral ports and stop them at will.

pub mod actor;
pub mod config;
pub mod conn;
pub mod http;
pub mod store;
pub mod web;

pub use config::{Config, LogFormat};
pub use store::{Store, StoreError};

use actor::{LoadOutcome, Registry};
use axum::serve::ListenerExt;
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::time::timeout;
use tracing::{error, info, warn};

/// Where the server is in its life. Connections watch it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Running,
    /// New commands are refused; queued ones finish.
    Draining,
    /// Sockets close with 1001 after sending what is queued.
    Closing,
}

/// What every request handler and connection shares. No game state in here.
#[derive(Debug)]
pub struct Shared {
    pub config: Arc<Config>,
    pub store: Store,
    pub registry: Arc<Registry>,
    pub phase: watch::Receiver<Phase>,
    /// Number of live WebSocket connections.
    pub connections: watch::Sender<usize>,
    pub next_conn: AtomicU64,
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("store: {0}")]
    Store(#[from] StoreError),
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
}

/// Tokens are stored only as their SHA-256, so a leaked database does not seat anyone.
pub fn token_hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Opens the store, resumes unfinished matches, serves until `shutdown` completes, then shuts
/// down gracefully: stop accepting, refuse new commands, let every match finish what is queued,
/// close sockets with 1001, close the store.
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let config = Arc::new(config);
    let store = Store::open(config.database_url.as_deref(), &config.data_dir).await?;
    let registry = Registry::new(store.clone(), Arc::clone(&config));
    recover(&store, &registry).await?;

    let (phase_tx, phase_rx) = watch::channel(Phase::Running);
    let (connections, _) = watch::channel(0usize);
    let shared = Arc::new(Shared {
        config: Arc::clone(&config),
        store: store.clone(),
        registry: Arc::clone(&registry),
        phase: phase_rx,
        connections,
        next_conn: AtomicU64::new(1),
    });
    let app = http::router(Arc::clone(&shared));
    let addr = listener.local_addr()?;
    let (stop_accepting, stop_rx) = oneshot::channel::<()>();
    // Every reply is a small write that the client waits for: with Nagle's algorithm on, a
    // write that follows an unacknowledged one (the diff after its ack) waits for the client's
    // delayed ACK, about 40 ms.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            warn!(error = %e, "cannot set TCP_NODELAY");
        }
    });
    let mut server = tokio::spawn(
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async move {
            let _ = stop_rx.await;
        })
        .into_future(),
    );
    info!(%addr, store = store.kind(), "listening");

    tokio::select! {
        () = shutdown => {}
        res = &mut server => {
            // The accept loop ended on its own: report it, then clean up the same way.
            match res {
                Ok(Ok(())) => warn!("the HTTP server stopped"),
                Ok(Err(e)) => error!(error = %e, "the HTTP server failed"),
                Err(e) => error!(error = %e, "the HTTP server task failed"),
            }
        }
    }
    info!("shutting down");
    let grace = config.shutdown_grace();
    let _ = stop_accepting.send(());
    phase_tx.send_replace(Phase::Draining);
    if timeout(grace, registry.shutdown()).await.is_err() {
        warn!("some matches did not stop in time");
    }
    phase_tx.send_replace(Phase::Closing);
    let mut live = shared.connections.subscribe();
    if timeout(grace, live.wait_for(|n| *n == 0)).await.is_err() {
        warn!("some connections did not close in time");
    }
    if !server.is_finished() && timeout(grace, &mut server).await.is_err() {
        server.abort();
    }
    store.close().await;
    info!("stopped");
    Ok(())
}

/// Replays every unfinished match through the rules, a few at a time, and keeps the good ones
/// running. A match whose replay diverges is marked broken (logged) and not served.
async fn recover(store: &Store, registry: &Arc<Registry>) -> Result<(), StoreError> {
    let ids = store.unfinished().await?;
    if ids.is_empty() {
        return Ok(());
    }
    let total = ids.len();
    let outcomes: Vec<_> = futures_util::stream::iter(ids)
        .map(|id| async move { (id, registry.load(id).await) })
        .buffer_unordered(4)
        .collect()
        .await;
    let mut resumed = 0;
    for (id, outcome) in outcomes {
        match outcome {
            LoadOutcome::Ready { seq, .. } => {
                resumed += 1;
                tracing::debug!(match_id = %id, seq, "resumed");
            }
            LoadOutcome::Failed { code, message } => {
                error!(match_id = %id, ?code, %message, "match not resumed");
            }
        }
    }
    info!(resumed, total, "recovered unfinished matches");
    Ok(())
}

/// Logs as text or JSON lines; `RUST_LOG` filters (default `info`).
pub fn init_tracing(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_hash_is_sha256_hex() {
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
