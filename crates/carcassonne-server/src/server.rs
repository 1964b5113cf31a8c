//! Running a server: open the store, serve at once while the unfinished matches whose deadline
//! is due load in the background (those due later at their deadline, a few recently played as a
//! warm-up, the others on first touch), shut down gracefully.

use crate::actor::{LoadOutcome, Registry};
use crate::config::Config;
use crate::http;
use crate::lobby::Lobbies;
use crate::meters::Metrics;
use crate::state::{Lifecycle, Shared};
use crate::store::{PoolSettings, Store, StoreError};
use axum::serve::ListenerExt;
use futures_util::StreamExt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::time::timeout;
use tracing::{error, info, warn};
use uuid::Uuid;

/// How often recorded histogram samples are folded into their buckets between scrapes.
const METRICS_UPKEEP: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("store: {0}")]
    Store(#[from] StoreError),
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    #[error("configuration: {0}")]
    Config(#[from] crate::config::ConfigError),
    #[error("cluster: {0}")]
    Cluster(#[from] crate::cluster::ClusterError),
}

/// Checks the configuration ([`Config::validate`]), opens the store, serves at once (recovery
/// runs in the background), serves until `shutdown` completes, then shuts down gracefully: stop
/// accepting, refuse new commands, let every match finish what is queued, close sockets with
/// 1001, close the store.
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    config.validate()?;
    let mut config = config;
    // Resolved once: the default reads the open-files limit.
    config.conn.max_connections = Some(config.conn.connection_limit());
    let config = Arc::new(config);
    let store = Store::open_with(
        config.store.url(),
        &config.store.data_dir,
        &pool_settings(&config.store),
    )
    .await?;
    let metrics = Arc::new(Metrics::new(store.kind()));
    if let Some(m) = &metrics.store_sync {
        store.attach_sync_meters(m.clone());
    }
    let registry = Registry::new(store.clone(), Arc::clone(&config), Arc::clone(&metrics));
    registry.set_ratings(crate::ratings::Ratings::start(store.clone()));
    registry.set_notices(crate::webhooks::Notices::start(
        store.clone(),
        config.webhooks.clone(),
    ));
    let cluster = match config.cluster.nats_url() {
        Some(url) => Some(crate::cluster::Cluster::start(&config, &store, &registry, url).await?),
        None => None,
    };
    let lobbies = Lobbies::start(
        store.clone(),
        Arc::clone(&registry),
        config.matches.allow_test_setups,
        config.limits.max_open_lobbies,
    )
    .await?;

    let (lifecycle_tx, lifecycle_rx) = watch::channel(Lifecycle::Running);
    let (connections, _) = watch::channel(0usize);
    let shared = Arc::new(Shared {
        config: Arc::clone(&config),
        store: store.clone(),
        registry: Arc::clone(&registry),
        lobbies,
        lifecycle: lifecycle_rx,
        connections,
        next_conn: AtomicU64::new(1),
        chat: Default::default(),
        limits: Arc::new(crate::limits::AddrLimits::new(&config.limits)),
        metrics: Arc::clone(&metrics),
        live_sessions: Default::default(),
    });
    shared.limits.spawn_cleanup();
    if let Some(cluster) = &cluster {
        cluster.attach(&shared).await?;
    }
    let retention = crate::retention::spawn(store.clone(), &config.retention, Arc::clone(&metrics));
    let upkeep = tokio::spawn(async move {
        let mut every = tokio::time::interval(METRICS_UPKEEP);
        loop {
            every.tick().await;
            metrics.upkeep();
        }
    });
    // Matches load in the background (and on first touch): the listener serves at once. A
    // cluster node loads none at start: each match is loaded by the node that first touches it,
    // and the due ones by whichever node adopts them (`cluster::ownership`).
    let recovery = tokio::spawn({
        let (store, registry) = (store.clone(), Arc::clone(&registry));
        let (warm_up, parallel) = (config.matches.warm_up, config.matches.recovery_parallel);
        let single = cluster.is_none();
        async move {
            if single {
                recover(store, registry, warm_up, parallel).await;
            }
        }
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
    info!(
        %addr,
        store = store.kind(),
        max_connections = config.conn.connection_limit(),
        "listening"
    );

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
    recovery.abort();
    if let Some(task) = retention {
        task.abort();
    }
    let grace = config.shutdown_grace;
    let _ = stop_accepting.send(());
    lifecycle_tx.send_replace(Lifecycle::Draining);
    if let Some(cluster) = &cluster {
        cluster.drain();
        // The lobbies' leases go first: the next node a request touches decides for them.
        cluster.release_lobbies().await;
    }
    if timeout(grace, registry.shutdown()).await.is_err() {
        warn!("some matches did not stop in time");
    }
    if let Some(cluster) = &cluster {
        // The leases were given back as the actors stopped; the other nodes' clients of these
        // matches are told to reconnect.
        cluster.stop().await;
    }
    lifecycle_tx.send_replace(Lifecycle::Closing);
    let mut live = shared.connections.subscribe();
    if timeout(grace, live.wait_for(|n| *n == 0)).await.is_err() {
        warn!("some connections did not close in time");
    }
    if !server.is_finished() && timeout(grace, &mut server).await.is_err() {
        server.abort();
    }
    upkeep.abort();
    store.close().await;
    info!("stopped");
    Ok(())
}

/// The pools' settings from the store's flags.
fn pool_settings(c: &crate::config::StoreConfig) -> PoolSettings {
    PoolSettings {
        size: c.db_pool_size,
        acquire_timeout: c.db_acquire_timeout,
        idle_timeout: Some(c.db_idle_timeout),
        max_lifetime: Some(c.db_max_lifetime),
    }
}

/// How far ahead of now the start's recovery loads a match with a deadline at once rather than
/// handing it to the registry's waker: the waker would load it about now anyway, and loading it
/// here, soonest first, lets its replay finish before its deadline. A few seconds: longer than a
/// replay (milliseconds) even with the start's loads queued, short next to any decision timeout
/// or clock, so that the matches whose deadlines are minutes away stay out of memory.
const WAKE_HORIZON_MS: i64 = 5_000;

/// The start's recovery, in the background while the server serves. The unfinished matches
/// with a deadline pending are found by the indexed `wake_at` (soonest first); those due within
/// [`WAKE_HORIZON_MS`] (a deadline passed while the server was down among them) load at once,
/// so that they fire on time; the others are handed to the registry's waker, which loads each
/// at its wake time (and a client's touch loads it earlier, its own timers taking over). Then a
/// warm-up of at most `warm_up` unfinished matches without a deadline, the most recently played
/// first. Any other match is replayed on its first touch. A match whose replay diverges is
/// marked broken when it loads.
async fn recover(store: Store, registry: Arc<Registry>, warm_up: usize, parallel: usize) {
    let started = std::time::Instant::now();
    let waking = match store.waking().await {
        Ok(waking) => waking,
        Err(e) => {
            error!(error = %e, "cannot list the matches with a deadline");
            Vec::new()
        }
    };
    let horizon = crate::actor::timers::now_millis().saturating_add(WAKE_HORIZON_MS);
    let (due, later): (Vec<_>, Vec<_>) = waking.into_iter().partition(|&(_, at)| at <= horizon);
    // Handed over first (a queue's worth at a time, which the waker drains into its heap): the
    // loads below may take a while, and the waker fires these meanwhile if their time comes.
    let scheduled = later.len();
    for (id, at) in later {
        if !registry.wake_at(id, at).await {
            return; // shutting down
        }
    }
    let due: Vec<Uuid> = due.into_iter().map(|(id, _)| id).collect();
    let (loaded, failed) = load_all(&registry, due, parallel).await;
    info!(
        loaded,
        failed,
        scheduled,
        ms = started.elapsed().as_millis() as u64,
        "recovery: matches with a deadline due loaded, the others scheduled"
    );
    let recent = match store.recently_played(warm_up).await {
        Ok(ids) => ids,
        Err(e) => {
            error!(error = %e, "cannot list the matches to warm up");
            Vec::new()
        }
    };
    let (warm, failed) = load_all(&registry, recent, parallel).await;
    info!(
        loaded = warm,
        failed,
        ms = started.elapsed().as_millis() as u64,
        "recovery: warm-up finished"
    );
}

/// Loads the matches, `parallel` at a time: (loaded, failed).
async fn load_all(registry: &Arc<Registry>, ids: Vec<Uuid>, parallel: usize) -> (usize, usize) {
    let mut outcomes = futures_util::stream::iter(ids)
        .map(|id| async move { (id, registry.load(id).await) })
        .buffer_unordered(parallel.max(1));
    let (mut loaded, mut failed) = (0, 0);
    while let Some((id, outcome)) = outcomes.next().await {
        match outcome {
            LoadOutcome::Ready { seq, .. } => {
                loaded += 1;
                tracing::debug!(match_id = %id, seq, "resumed");
            }
            LoadOutcome::Failed { code, message } => {
                failed += 1;
                error!(match_id = %id, ?code, %message, "match not resumed");
            }
        }
    }
    (loaded, failed)
}
