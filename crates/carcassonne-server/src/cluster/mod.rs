//! Cluster mode (`--nats-url`): several nodes share one Postgres and one NATS server, and any
//! node serves any client.
//!
//! Each match, and each open lobby ([`lobbies`]), is run by exactly one node: the one holding its
//! lease in Postgres
//! ([`crate::store::leases`]). A node takes the lease when a match is first touched there and
//! nobody else holds it ([`ownership`]), renews all its leases in one statement every
//! `--lease-renew`, and writes the match's log under the lease's epoch, so that a node that lost
//! a lease can never write again (the fence). A node that loses a lease stops the match's actor
//! at once.
//!
//! A match touched on a node that does not own it gets a proxy there instead of an actor
//! ([`proxy`]): the proxy forwards what the node's connections send (commands, subscriptions)
//! to the owner with NATS request/reply, and the owner ([`owner`]) hands each to its actor as if
//! from a connection of its own whose queue is relayed back over NATS, one subject per
//! connection, to the node holding the socket: its answers, snapshots and resumes. The match's
//! live diffs cross once: the owner publishes each on the match's subject while a connection of
//! another node follows it, and every node with followers there hands it to each of them in seq
//! order ([`fanout`]). The actor, its persist-then-broadcast order, its resumes and its secrets
//! are the same for a local or a relayed connection.
//!
//! When an owner goes away (killed, cut off, drained), its proxies see it (no heartbeat, no
//! responder, a relay's end) and close their clients' sockets with 4003 (reconnect with
//! `since`, after what was queued); a client that reconnects reaches a node that loads the match from Postgres once
//! the lease is free, and resumes after the last seq it saw.

mod broadcast;
mod fanout;
mod forward;
mod lobbies;
mod meters;
mod owner;
mod ownership;
mod proxy;
mod rooms;

pub use forward::{Broadcast, ChatNews, Forward, News, Op, Reply, Subjects};
pub use meters::ClusterMeters;
pub use ownership::Claim;
pub use proxy::ForwardError;
pub(crate) use proxy::run as proxy_run;

use crate::actor::Registry;
use crate::config::Config;
use crate::outbox::ConnHandle;
use crate::store::{Fence, LeaseKey, Leases, Store};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tracing::{Instrument, info, info_span, warn};
use uuid::Uuid;

/// Why a node could not join its cluster.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("cluster mode needs Postgres")]
    NotPostgres,
    #[error("cannot connect to the NATS server (--nats-url): {0}")]
    Connect(String),
    #[error("cannot subscribe on the NATS server: {0}")]
    Subscribe(String),
}

/// A connection relayed to or from another node: (edge node, connection id there, match).
type RemoteKey = (Arc<str>, u64, Uuid);

/// This node's part of the cluster.
#[derive(Debug)]
pub struct Cluster {
    node: Arc<str>,
    /// This process: the node id, `+`, a number made at start (see [`Forward::edge`]).
    edge: Arc<str>,
    nats: async_nats::Client,
    subjects: Subjects,
    leases: Leases,
    store: Store,
    ttl: Duration,
    renew: Duration,
    forward_timeout: Duration,
    /// Room in a relayed connection's queue, as in a local one's.
    outgoing_queue: usize,
    match_idle: Duration,
    registry: Weak<Registry>,
    /// The matches whose lease this node holds, with the epoch it holds them under.
    owned: Mutex<HashMap<Uuid, i64>>,
    /// The open lobbies whose lease this node holds: it decides for them.
    lobbies: Mutex<HashMap<Uuid, Arc<Fence>>>,
    /// Edge side: the local connections whose frames come back from an owner, by (match, conn).
    routes: Mutex<HashMap<(Uuid, u64), ConnHandle>>,
    /// Edge side: the local followers of the matches owned elsewhere whose diffs are read here.
    fanouts: Mutex<HashMap<Uuid, Arc<fanout::Followers>>>,
    /// Owner side: the stand-ins of other nodes' connections, each relayed to its node.
    remotes: Mutex<owner::Remotes>,
    /// When each node's heartbeat was last heard, and from which of its processes.
    heard: Mutex<HashMap<String, (Instant, String)>>,
    started: Instant,
    /// Ids of the stand-ins: from [`crate::outbox::REMOTE_IDS_FROM`], apart from the node's own
    /// connections and its bots.
    next_remote: AtomicU64,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    meters: ClusterMeters,
    /// Set when the node starts to stop: the matches it lets go from then on are handed over.
    draining: std::sync::atomic::AtomicBool,
    handed: Mutex<Vec<Uuid>>,
    /// The chat rooms with members on this node, followed on NATS (set by `attach`).
    rooms: std::sync::OnceLock<Arc<rooms::ChatRooms>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section here is a map operation that cannot leave the map half-changed.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Cluster {
    /// Connects to NATS, subscribes this node's subjects, starts the heartbeat and the lease
    /// upkeep, and makes `registry` run matches as a cluster node.
    pub async fn start(
        config: &Config,
        store: &Store,
        registry: &Arc<Registry>,
        url: &str,
    ) -> Result<Arc<Cluster>, ClusterError> {
        let leases = store.leases().ok_or(ClusterError::NotPostgres)?;
        let node: Arc<str> = config.cluster.node_id().into();
        let meters = ClusterMeters::new(&registry.metrics, &node);
        let reconnects = meters.reconnects.clone();
        // Set by a loss, so that only connections made again are counted.
        let lost = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut options = async_nats::ConnectOptions::new()
            .name(format!("carcassonne-server {node}"))
            .event_callback(move |event| {
                let (reconnects, lost) = (reconnects.clone(), Arc::clone(&lost));
                async move {
                    use std::sync::atomic::Ordering::Relaxed;
                    match event {
                        async_nats::Event::Connected if lost.swap(false, Relaxed) => {
                            info!("connected to NATS again");
                            reconnects.increment(1);
                        }
                        async_nats::Event::Disconnected => {
                            lost.store(true, Relaxed);
                            warn!("lost the connection to NATS");
                        }
                        _ => {}
                    }
                }
            })
            .request_timeout(Some(config.cluster.forward_timeout));
        if let Some(token) = config.cluster.nats_token() {
            options = options.token(token.to_owned());
        }
        // The error names the server's address, never the URL's credentials.
        let nats = options
            .connect(url)
            .await
            .map_err(|e| ClusterError::Connect(e.kind().to_string()))?;
        let subjects = Subjects::new(&config.cluster.nats_prefix);
        let subscribe = |subject: String| {
            let nats = nats.clone();
            async move {
                nats.subscribe(subject)
                    .await
                    .map_err(|e| ClusterError::Subscribe(e.to_string()))
            }
        };
        let forwards = subscribe(subjects.forward(&node)).await?;
        let start = getrandom::u32().unwrap_or(std::process::id());
        let edge: Arc<str> = format!("{node}+{start:08x}").into();
        let relays = subscribe(subjects.relays_of(&edge)).await?;
        let heartbeats = subscribe(subjects.alive_all()).await?;
        let cluster = Arc::new(Cluster {
            node: Arc::clone(&node),
            edge,
            nats,
            subjects,
            leases,
            store: store.clone(),
            ttl: config.cluster.lease_ttl,
            renew: config.cluster.lease_renew,
            forward_timeout: config.cluster.forward_timeout,
            outgoing_queue: config.conn.outgoing_queue,
            match_idle: config.matches.match_idle,
            registry: Arc::downgrade(registry),
            owned: Mutex::default(),
            lobbies: Mutex::default(),
            routes: Mutex::default(),
            fanouts: Mutex::default(),
            remotes: Mutex::default(),
            heard: Mutex::default(),
            started: Instant::now(),
            next_remote: AtomicU64::new(crate::outbox::REMOTE_IDS_FROM),
            tasks: Mutex::default(),
            meters,
            draining: Default::default(),
            handed: Mutex::default(),
            rooms: Default::default(),
        });
        let span = info_span!("cluster", node = %node);
        let tasks = vec![
            tokio::spawn(owner::serve(Arc::clone(&cluster), forwards).instrument(span.clone())),
            tokio::spawn(proxy::relay_in(Arc::clone(&cluster), relays).instrument(span.clone())),
            tokio::spawn(listen(Arc::clone(&cluster), heartbeats).instrument(span.clone())),
            tokio::spawn(ownership::upkeep(Arc::clone(&cluster)).instrument(span)),
        ];
        *lock(&cluster.tasks) = tasks;
        registry.join_cluster(Arc::clone(&cluster));
        info!(node = %node, "joined the cluster");
        Ok(cluster)
    }

    /// This node's id.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// How many matches this node owns.
    pub fn owned_count(&self) -> usize {
        lock(&self.owned).len()
    }

    /// Whether this node holds the match's lease (runs its actor).
    pub fn owns(&self, id: Uuid) -> bool {
        lock(&self.owned).contains_key(&id)
    }

    /// Whether another node holds the match's lease (not expired): then that node runs the
    /// match and whatever belongs with it (its bots), and nobody else can take it before the
    /// lease runs out. An unreachable store counts as held, so that nothing is taken over on a
    /// guess.
    pub async fn held_elsewhere(&self, id: Uuid) -> bool {
        match self.leases.owner(LeaseKey::of_match(id)).await {
            Ok(Some(lease)) => lease.node != *self.node,
            Ok(None) => false,
            Err(_) => true,
        }
    }

    /// How often this node renews its leases: the pace of anything that waits for one.
    pub fn renew_period(&self) -> Duration {
        self.renew
    }

    /// Before the registry's shutdown: the matches let go from now on are handed over.
    pub fn drain(&self) {
        self.draining
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Whether the node is stopping.
    pub(crate) fn draining(&self) -> bool {
        self.draining.load(std::sync::atomic::Ordering::Acquire)
    }

    /// After the registry's shutdown gave the leases back: asks the other nodes to load the
    /// matches at once (before their clients reconnect), tells the other nodes' clients of these
    /// matches to reconnect (their relays end), then ends the background tasks.
    pub async fn stop(&self) {
        let handed: Vec<Uuid> = std::mem::take(&mut *lock(&self.handed));
        if !handed.is_empty() {
            info!(matches = handed.len(), "handing the matches over");
            self.tell_all(News::Adopt {
                node: self.node.to_string(),
                matches: handed,
            });
        }
        let stand_ins: Vec<ConnHandle> = lock(&self.remotes).take_where(|_| true);
        for conn in &stand_ins {
            conn.close_moved();
        }
        // The relays publish their ends before the connection to NATS is flushed.
        tokio::time::sleep(Duration::from_millis(50)).await;
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
        if let Some(rooms) = self.rooms.get() {
            rooms.stop();
        }
        let _ = self.nats.flush().await;
    }

    /// Whether `node` was heard within a lease's length (any node is given that long after
    /// this one starts, before its first heartbeat could arrive).
    pub(crate) fn is_alive(&self, node: &str) -> bool {
        match lock(&self.heard).get(node) {
            Some((at, _)) => at.elapsed() < self.ttl,
            None => self.started.elapsed() < self.ttl,
        }
    }

    /// Whether the process `edge` (`<node>+<start number>`) may still read its relays: its node
    /// is heard, and not from a later process.
    pub(crate) fn edge_alive(&self, edge: &str) -> bool {
        let node = edge.split('+').next().unwrap_or(edge);
        if !self.is_alive(node) {
            return false;
        }
        lock(&self.heard)
            .get(node)
            .is_none_or(|(_, current)| current == edge)
    }
}

/// Publishes this node's heartbeat every `--lease-renew` and records the others'.
async fn listen(cluster: Arc<Cluster>, mut heartbeats: async_nats::Subscriber) {
    let mut every = tokio::time::interval(cluster.renew);
    let own = cluster.subjects.alive(&cluster.node);
    loop {
        tokio::select! {
            _ = every.tick() => {
                let me = bytes::Bytes::copy_from_slice(cluster.edge.as_bytes());
                if let Err(e) = cluster.nats.publish(own.clone(), me).await {
                    warn!(error = %e, "cannot publish the heartbeat");
                }
            }
            beat = heartbeats.next() => match beat {
                Some(m) => {
                    if let Some(node) = cluster.subjects.parse_alive(&m.subject) {
                        let edge = String::from_utf8_lossy(&m.payload).into_owned();
                        lock(&cluster.heard).insert(node, (Instant::now(), edge));
                    }
                }
                None => return,
            }
        }
    }
}
