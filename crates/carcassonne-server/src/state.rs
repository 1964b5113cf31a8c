//! What every request handler and connection shares, and where the server is in its life.

use crate::actor::Registry;
use crate::config::Config;
use crate::lobby::Lobbies;
use crate::meters::Metrics;
use crate::store::Store;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use tokio::sync::watch;

/// Where the server is in its life. Connections watch it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
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
    /// The lobby actor.
    pub lobbies: Lobbies,
    pub lifecycle: watch::Receiver<Lifecycle>,
    /// Number of live WebSocket connections.
    pub connections: watch::Sender<usize>,
    pub next_conn: AtomicU64,
    pub metrics: Arc<Metrics>,
    /// Chat rooms: fanned out by the sending connection, not the actors.
    pub chat: crate::chat::ChatHub,
    /// The per-address rate limits.
    pub limits: Arc<crate::limits::AddrLimits>,
    /// The WebSocket connections of each account session, closed when it is revoked.
    pub live_sessions: crate::accounts::LiveSessions,
}

impl Shared {
    /// Closes the sockets of a revoked session (`None`: of all the account's sessions), on this
    /// node and, in a cluster, on every other.
    pub fn revoke_live(&self, account: uuid::Uuid, session: Option<uuid::Uuid>) {
        self.live_sessions.revoke(account, session);
        if let Some(cluster) = self.registry.cluster() {
            cluster.tell_all(crate::cluster::News::Revoke { account, session });
        }
    }
}
