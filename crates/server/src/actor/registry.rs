//! Match id → actor: spawning (and loading), idle retirement, shutdown, the resume slots.

use super::{Actor, ActorMsg, State};
use crate::config::Config;
use crate::store::Store;
use protocol::{ErrorCode, Seq};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{Semaphore, mpsc, oneshot};
use tracing::{Instrument, info_span};
use uuid::Uuid;

/// A cheap handle on a match actor.
#[derive(Debug, Clone)]
pub struct MatchHandle {
    pub id: Uuid,
    generation: u64,
    pub tx: mpsc::Sender<ActorMsg>,
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
}

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
    pub fn new(store: Store, config: Arc<Config>) -> Arc<Self> {
        let (alive, alive_rx) = mpsc::channel(1);
        Arc::new(Registry {
            resume_slots: Arc::new(Semaphore::new(
                config.store_resume_slots.min(Semaphore::MAX_PERMITS),
            )),
            inner: Mutex::new(RegistryInner {
                map: HashMap::new(),
                next_generation: 0,
                alive: Some(alive),
                alive_rx: Some(alive_rx),
            }),
            store,
            config,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RegistryInner> {
        // A panic while holding this short lock cannot leave the map inconsistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The running actor of a match, started (and loaded from the store) if needed.
    pub fn get_or_load(self: &Arc<Self>, id: Uuid) -> Result<MatchHandle, Closed> {
        self.spawn_if_absent(id, None)
    }

    fn spawn_if_absent(
        self: &Arc<Self>,
        id: Uuid,
        on_loaded: Option<oneshot::Sender<LoadOutcome>>,
    ) -> Result<MatchHandle, Closed> {
        let mut inner = self.lock();
        let Some(alive) = inner.alive.clone() else {
            return Err(Closed);
        };
        if let Some(h) = inner.map.get(&id)
            && !h.tx.is_closed()
        {
            if let Some(reply) = on_loaded {
                // Already running: ask it how it loaded through the queue, in order.
                let _ = h.tx.try_send(ActorMsg::Inspect {
                    reply: forward_load(reply),
                });
            }
            return Ok(h.clone());
        }
        let generation = inner.next_generation;
        inner.next_generation += 1;
        let (tx, rx) = mpsc::channel(self.config.match_inbox.max(1));
        let handle = MatchHandle { id, generation, tx };
        inner.map.insert(id, handle.clone());
        let actor = Actor {
            id,
            generation,
            registry: Arc::clone(self),
            store: self.store.clone(),
            config: Arc::clone(&self.config),
            state: State::Failed {
                code: ErrorCode::Unavailable,
                message: "loading".into(),
            },
            subscribers: Vec::new(),
            inbox: handle.tx.downgrade(),
            next_token: 0,
            stopping: false,
            deadline_backoff: None,
            _alive: alive,
        };
        let span = info_span!("match", id = %id);
        tokio::spawn(actor.run(rx, on_loaded).instrument(span));
        Ok(handle)
    }

    /// Loads a match now and reports how it went (used at start to resume unfinished matches).
    pub async fn load(self: &Arc<Self>, id: Uuid) -> LoadOutcome {
        let (tx, rx) = oneshot::channel();
        match self.spawn_if_absent(id, Some(tx)) {
            Ok(_) => rx.await.unwrap_or(LoadOutcome::Failed {
                code: ErrorCode::Unavailable,
                message: "the match actor stopped".into(),
            }),
            Err(Closed) => LoadOutcome::Failed {
                code: ErrorCode::Unavailable,
                message: Closed.to_string(),
            },
        }
    }

    /// Removes an actor that has nothing to do. Only when no one but the registry holds its
    /// sender and its inbox is empty: then no message can reach it any more, and the next
    /// lookup starts a fresh actor from the store.
    pub(super) fn retire(&self, id: Uuid, generation: u64, rx: &mpsc::Receiver<ActorMsg>) -> bool {
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

    pub(super) fn forget(&self, id: Uuid, generation: u64) {
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

/// Turns an `Inspect` answer into a load outcome for a caller of [`Registry::load`] that found the
/// actor already running.
fn forward_load(
    reply: oneshot::Sender<LoadOutcome>,
) -> oneshot::Sender<Option<(Seq, rules::View)>> {
    let (tx, rx) = oneshot::channel::<Option<(Seq, rules::View)>>();
    tokio::spawn(async move {
        let outcome = match rx.await {
            Ok(Some((seq, view))) => LoadOutcome::Ready {
                seq,
                finished: view.finished,
            },
            _ => LoadOutcome::Failed {
                code: ErrorCode::Unavailable,
                message: "the match could not be loaded".into(),
            },
        };
        let _ = reply.send(outcome);
    });
    tx
}
