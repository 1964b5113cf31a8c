//! Match id → actor: spawning (and loading), idle retirement, shutdown, the resume slots.

use super::timers::{Millis, now_millis};
use super::{Actor, ActorMsg, ActorState};
use crate::config::Config;
use crate::meters::Metrics;
use crate::queue;
use crate::store::Store;
use protocol::{ErrorCode, Seq};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc, oneshot};
use tracing::{Instrument, info_span};
use uuid::Uuid;

/// A cheap handle on a match actor.
#[derive(Debug, Clone)]
pub struct MatchHandle {
    pub id: Uuid,
    generation: u64,
    pub tx: queue::Sender<ActorMsg>,
}

/// Match id → actor. The mutex guards only the map (lookups and inserts), never game state, and
/// is never held across an `.await`.
#[derive(Debug)]
pub struct Registry {
    inner: Mutex<RegistryInner>,
    /// Store reads for resumes in flight, over all matches (`Config::store_resume_slots`).
    pub(super) resume_slots: Arc<Semaphore>,
    store: Store,
    config: Arc<Config>,
    pub(crate) metrics: Arc<Metrics>,
    /// To the waker task: (when, match) of a match that left memory with a deadline pending.
    waker: mpsc::Sender<(Millis, Uuid)>,
    /// Cluster mode: who owns each match decides whether it gets an actor or a proxy here.
    cluster: OnceLock<Arc<crate::cluster::Cluster>>,
    /// The rating task, told of every match that ends here.
    ratings: OnceLock<crate::ratings::Ratings>,
    /// The your-turn notice task, told of every match's waiting seats after each batch.
    notices: OnceLock<crate::webhooks::Notices>,
}

/// Matches waiting in the waker's queue before an idle match with a far deadline must stay in
/// memory instead of leaving.
const WAKER_QUEUE: usize = 4_096;

#[derive(Debug)]
struct RegistryInner {
    map: HashMap<Uuid, MatchHandle>,
    next_generation: u64,
    /// Each actor holds a clone; shutdown waits until all are dropped. `None` once closed.
    alive: Option<mpsc::Sender<()>>,
    alive_rx: Option<mpsc::Receiver<()>>,
}

#[derive(Debug, thiserror::Error)]
#[error("the server is shutting down")]
pub struct Closed;

/// What loading a match gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadOutcome {
    Ready { seq: Seq, finished: bool },
    Failed { code: ErrorCode, message: String },
}

impl Registry {
    /// The server's configuration (a lobby's match takes its decision timeout from it).
    /// The store (the lobby's bots read a match's public history from it).
    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn new(store: Store, config: Arc<Config>, metrics: Arc<Metrics>) -> Arc<Self> {
        let (alive, alive_rx) = mpsc::channel(1);
        let (waker, wake_rx) = mpsc::channel(WAKER_QUEUE);
        let registry = Arc::new(Registry {
            resume_slots: Arc::new(Semaphore::new(config.matches.store_resume_slots)),
            inner: Mutex::new(RegistryInner {
                map: HashMap::new(),
                next_generation: 0,
                alive: Some(alive),
                alive_rx: Some(alive_rx),
            }),
            store,
            config,
            metrics,
            waker,
            cluster: OnceLock::new(),
            ratings: OnceLock::new(),
            notices: OnceLock::new(),
        });
        tokio::spawn(wake_matches(Arc::downgrade(&registry), wake_rx));
        registry
    }

    /// Hands every match that ends from now on to the rating task (set once, at start).
    pub fn set_ratings(&self, ratings: crate::ratings::Ratings) {
        let _ = self.ratings.set(ratings);
    }

    /// The rating task, once the server started it.
    pub fn ratings(&self) -> Option<&crate::ratings::Ratings> {
        self.ratings.get()
    }

    /// A match ended (its end is stored): the rating task rates it if it is rated.
    pub(super) fn ended(&self, id: Uuid) {
        if let Some(r) = self.ratings.get() {
            r.ended(id);
        }
    }

    /// Tells the notice task of every match's waiting seats from now on (set once, at start).
    pub fn set_notices(&self, notices: crate::webhooks::Notices) {
        let _ = self.notices.set(notices);
    }

    /// The notice task, once the server started it.
    pub fn notices(&self) -> Option<&crate::webhooks::Notices> {
        self.notices.get()
    }

    /// A batch was committed: who a decision waits for now (never waits). Nothing is built or
    /// sent while no account has a webhook; a webhook set meanwhile hears from the next move.
    pub(super) fn turn(&self, state: impl FnOnce() -> Option<crate::webhooks::TurnState>) {
        if let Some(n) = self.notices.get()
            && n.any_hooks()
            && let Some(s) = state()
        {
            n.turn(s);
        }
    }

    /// Asks the waker to load the match at `at` (its next deadline), so that it may leave memory
    /// now. False when the waker's queue is full: the match stays.
    pub(super) fn wake_later(&self, id: Uuid, at: Millis) -> bool {
        self.waker.try_send((at, id)).is_ok()
    }

    /// Asks the waker to load a match that is not in memory at `at` (its stored wake time): the
    /// start's recovery, for every match whose deadline is not due yet. Waits for room in the
    /// waker's queue (which it drains at once into its heap) rather than dropping the match.
    /// False when the waker is gone (shutting down).
    pub async fn wake_at(&self, id: Uuid, at: Millis) -> bool {
        self.waker.send((at, id)).await.is_ok()
    }

    /// Runs matches as a node of `cluster` from now on: a match gets an actor here only while
    /// this node holds its lease, and a proxy to its owner otherwise.
    pub fn join_cluster(&self, cluster: Arc<crate::cluster::Cluster>) {
        let _ = self.cluster.set(cluster);
    }

    /// The cluster this node is part of, if any.
    pub fn cluster(&self) -> Option<&Arc<crate::cluster::Cluster>> {
        self.cluster.get()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RegistryInner> {
        // A panic while holding this short lock cannot leave the map inconsistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The running actor of a match, started (and loaded from the store) if needed.
    pub fn get_or_load(self: &Arc<Self>, id: Uuid) -> Result<MatchHandle, Closed> {
        let mut inner = self.lock();
        let Some(alive) = inner.alive.clone() else {
            return Err(Closed);
        };
        if let Some(h) = inner.map.get(&id)
            && !h.tx.is_closed()
        {
            return Ok(h.clone());
        }
        let generation = inner.next_generation;
        inner.next_generation += 1;
        let (tx, rx) = queue::channel(self.config.matches.match_inbox);
        let handle = MatchHandle { id, generation, tx };
        inner.map.insert(id, handle.clone());
        let actor = Actor {
            id,
            generation,
            registry: Arc::clone(self),
            store: self.store.clone(),
            config: Arc::clone(&self.config),
            state: ActorState::Failed {
                code: ErrorCode::Unavailable,
                message: "loading".into(),
            },
            subscribers: Vec::new(),
            publisher: None,
            inbox: handle.tx.downgrade(),
            next_token: 0,
            stopping: false,
            deadline_backoff: None,
            fence: None,
            _alive: alive,
        };
        let span = info_span!("match", match_id = %id);
        match self.cluster.get() {
            None => {
                tokio::spawn(actor.run(rx).instrument(span));
            }
            Some(cluster) => {
                tokio::spawn(run_in_cluster(Arc::clone(cluster), actor, rx).instrument(span));
            }
        }
        Ok(handle)
    }

    /// Loads a match now and reports how it went (the start's background recovery).
    pub async fn load(self: &Arc<Self>, id: Uuid) -> LoadOutcome {
        let stopped = || LoadOutcome::Failed {
            code: ErrorCode::Unavailable,
            message: "the match actor stopped".into(),
        };
        let handle = match self.get_or_load(id) {
            Ok(h) => h,
            Err(Closed) => {
                return LoadOutcome::Failed {
                    code: ErrorCode::Unavailable,
                    message: Closed.to_string(),
                };
            }
        };
        // The actor reads its inbox only once it has loaded, so the answer says how it went.
        let (reply, answer) = oneshot::channel();
        if handle.tx.send(ActorMsg::Loaded(reply)).await.is_err() {
            return stopped();
        }
        answer.await.unwrap_or_else(|_| stopped())
    }

    /// Removes an actor that has nothing to do. Only when no one but the registry holds its
    /// sender and its inbox is empty: then no message can reach it any more, and the next
    /// lookup starts a fresh actor from the store.
    pub(crate) fn retire(&self, id: Uuid, generation: u64, rx: &queue::Receiver<ActorMsg>) -> bool {
        let mut inner = self.lock();
        let ours = inner
            .map
            .get(&id)
            .is_some_and(|h| h.generation == generation);
        if !ours {
            return true; // replaced or removed already: nobody new can reach us
        }
        if rx.sender_strong_count() <= 1 && rx.is_empty() {
            inner.map.remove(&id);
            return true;
        }
        false
    }

    pub(crate) fn forget(&self, id: Uuid, generation: u64) {
        let mut inner = self.lock();
        if inner
            .map
            .get(&id)
            .is_some_and(|h| h.generation == generation)
        {
            inner.map.remove(&id);
        }
    }

    /// Stops taking new matches, lets every actor finish what is queued, and waits for them.
    pub async fn shutdown(&self) {
        let (handles, alive_rx) = {
            let mut inner = self.lock();
            inner.alive = None;
            let handles: Vec<MatchHandle> = inner.map.values().cloned().collect();
            (handles, inner.alive_rx.take())
        };
        for h in handles {
            // `send` waits for room: what is queued before it is processed first.
            let _ = h.tx.send(ActorMsg::Shutdown).await;
        }
        if let Some(mut rx) = alive_rx {
            let _ = rx.recv().await;
        }
    }

    /// The match's actor (or proxy) if one runs here, without starting one.
    pub fn running(&self, id: Uuid) -> Option<MatchHandle> {
        self.lock()
            .map
            .get(&id)
            .filter(|h| !h.tx.is_closed())
            .cloned()
    }

    /// Whether the match has a live actor (loading or loaded) in memory.
    pub fn is_running(&self, id: Uuid) -> bool {
        self.lock().map.get(&id).is_some_and(|h| !h.tx.is_closed())
    }

    /// How many actors are in memory.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A match's task in cluster mode: the actor while this node holds the lease (given back when
/// the actor stops), a proxy to the owner when another node holds it.
async fn run_in_cluster(
    cluster: Arc<crate::cluster::Cluster>,
    mut actor: Actor,
    mut rx: queue::Receiver<ActorMsg>,
) {
    use crate::cluster::Claim;
    let (registry, id, generation) = (Arc::clone(&actor.registry), actor.id, actor.generation);
    match cluster.claim(id).await {
        Claim::Owned(fence) => {
            // Keeps the registry's shutdown waiting until the lease is given back.
            let alive = actor._alive.clone();
            actor.fence = Some(Arc::clone(&fence));
            actor.run(rx).await;
            cluster.let_go(id, &fence).await;
            drop(alive);
        }
        Claim::Elsewhere(owner) => {
            let alive = actor._alive.clone();
            drop(actor);
            crate::cluster::proxy_run(cluster, registry, id, generation, owner, rx).await;
            drop(alive);
        }
        Claim::Failed { code, message } => {
            registry.forget(id, generation);
            rx.close();
            while let Some(msg) = rx.recv().await {
                super::refuse(msg, code, &message, &registry.metrics, || {
                    LoadOutcome::Failed {
                        code,
                        message: message.clone(),
                    }
                });
            }
        }
    }
}

/// The waker: one task for every match out of memory with a deadline pending (one that left
/// memory, or one the start's recovery did not load), a min-heap of (when, match); at each time
/// it loads the match, whose actor then fires what is due. A match loaded before its time (a
/// client touched it) fires with its own timers; its entry then loads a live match, which does
/// nothing, or was overtaken by the time it asked when it left memory again. It keeps
/// one time per match (the latest asked): asking again for the same time adds nothing, and an
/// entry overtaken by a newer time is skipped when it comes up, so a match that cannot leave
/// memory and asks at every idle period never grows the heap. Ends when the registry is gone or
/// closed.
async fn wake_matches(registry: Weak<Registry>, mut rx: mpsc::Receiver<(Millis, Uuid)>) {
    let mut waker = Waker::default();
    loop {
        let next = waker.next();
        let wait = next.map_or(Duration::ZERO, |at| {
            Duration::from_millis(u64::try_from(at.saturating_sub(now_millis())).unwrap_or(0))
        });
        tokio::select! {
            msg = rx.recv() => match msg {
                Some((at, id)) => {
                    waker.ask(at, id);
                    // What else is queued (the recovery's many), before the next sleep.
                    for _ in 1..WAKER_QUEUE {
                        let Ok((at, id)) = rx.try_recv() else { break };
                        waker.ask(at, id);
                    }
                }
                None => return,
            },
            () = tokio::time::sleep(wait), if next.is_some() => {
                for id in waker.due(now_millis()) {
                    let Some(registry) = registry.upgrade() else {
                        return;
                    };
                    if registry.get_or_load(id).is_err() {
                        return; // shutting down
                    }
                }
            }
        }
    }
}

/// The waker's schedule: a min-heap of (when, match) and the one current time of each match.
#[derive(Debug, Default)]
struct Waker {
    heap: BinaryHeap<Reverse<(Millis, Uuid)>>,
    /// Each scheduled match's current time; heap entries that differ are stale.
    current: HashMap<Uuid, Millis>,
}

impl Waker {
    /// Schedules `id` at `at`, replacing its earlier time.
    fn ask(&mut self, at: Millis, id: Uuid) {
        if self.current.insert(id, at) != Some(at) {
            self.heap.push(Reverse((at, id)));
        }
    }

    /// The earliest time in the heap (perhaps a stale entry's: waking for it costs one look).
    fn next(&self) -> Option<Millis> {
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    /// The matches due at `now`, each once, stale entries dropped.
    fn due(&mut self, now: Millis) -> Vec<Uuid> {
        let mut ids = Vec::new();
        while let Some(&Reverse((at, id))) = self.heap.peek() {
            if at > now {
                break;
            }
            self.heap.pop();
            if self.current.get(&id) == Some(&at) {
                self.current.remove(&id);
                ids.push(id);
            }
        }
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asking again for the same time adds no entry; a newer time replaces the older one, whose
    /// entry is skipped; each due match comes out once, in time order.
    #[test]
    fn the_waker_keeps_one_time_per_match() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let mut w = Waker::default();
        for _ in 0..100 {
            w.ask(50, a);
        }
        assert_eq!(w.heap.len(), 1, "the same time asked again");
        w.ask(10, b);
        w.ask(70, a);
        assert_eq!(w.next(), Some(10));
        assert_eq!(w.due(9), Vec::<Uuid>::new());
        assert_eq!(w.due(60), vec![b], "a's stale time 50 is skipped");
        assert_eq!(w.due(100), vec![a]);
        assert_eq!(w.due(1000), Vec::<Uuid>::new());
        assert!(w.heap.is_empty() && w.current.is_empty());
    }
}
