//! One actor task per match. It alone owns the match's [`rules::Game`]: no lock is ever taken
//! around game state, and matches never wait on each other. Its inbox is bounded; everything it
//! sends to clients goes through their own bounded queues with `try_send`, so a slow client can
//! only lose its own connection, never slow the match.
//!
//! The hot path for a command: dedupe its id, apply it through the rules, diff the public view,
//! write the record (persist), and only then ack the sender and fan the diff out (broadcast).
//! Commands that arrive together are written together: the actor drains up to `max_batch`
//! queued commands, applies them one after the other, and stores all their records in one
//! transaction before answering any of them. On SQLite the store goes further and commits the
//! batches of all matches that are waiting at that moment in one transaction (see
//! [`crate::store::SqliteStore`]); Postgres coalesces concurrent commits itself.
//!
//! Resumes: a subscriber that gives `since` gets the diffs after it from the in-memory window
//! (the last `diff_window` diffs), or, further back, from the store (each record keeps its
//! events and the patch as sent); a snapshot when `since` is absent, ahead, or more than
//! `max_store_resume` behind. Diffs that do not fit in the client's queue at once are streamed by
//! a [`CatchUp`] task as the queue drains, while live diffs are held for the client: a resume is
//! never the reason a client is too slow.
//!
//! Memory: a match nobody follows or holds for `match_idle_ms` drops its window and leaves the
//! registry; the next lookup replays it from the store.

use crate::config::Config;
use crate::store::{CommandRow, MatchStatus, Store, StoreError};
use axum::extract::ws::Utf8Bytes;
use chrono::Utc;
use protocol::{ErrorBody, ErrorCode, PatchOp, Seq, ServerMessage};
use rules::{Command, Event, Game, REPLAY_VERSION, Setup};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tracing::{Instrument, debug, error, info, info_span, warn};
use uuid::Uuid;

/// How many refused command ids each seat of a match has remembered, to answer a repeated id with
/// the same error. Per seat, so that one seat's refusals never push out another's.
const REJECTED_CACHE: usize = 256;

/// Live diffs held for a subscriber while its older diffs are read from the store; beyond this
/// it is dropped as too slow.
const MAX_CATCH_UP_BUFFER: usize = 1024;

/// The sending side of one client connection, as seen by match actors.
#[derive(Debug, Clone)]
pub struct ConnHandle {
    pub id: u64,
    tx: mpsc::Sender<Utf8Bytes>,
    too_slow: Arc<TooSlow>,
    /// Notified by the connection's writer each time it has written queued frames: a catch-up
    /// waiting for room in the queue goes on.
    drained: Arc<Notify>,
}

/// Raised when a connection's queue overflows; the connection task closes the socket with
/// `close::TOO_SLOW`.
#[derive(Debug, Default)]
pub struct TooSlow {
    raised: AtomicBool,
    notify: Notify,
}

impl TooSlow {
    pub fn raise(&self) {
        self.raised.store(true, Ordering::Release);
        self.notify.notify_one();
    }
    pub async fn wait(&self) {
        self.notify.notified().await;
    }
    pub fn is_raised(&self) -> bool {
        self.raised.load(Ordering::Acquire)
    }
}

impl ConnHandle {
    pub fn new(
        id: u64,
        tx: mpsc::Sender<Utf8Bytes>,
        too_slow: Arc<TooSlow>,
        drained: Arc<Notify>,
    ) -> Self {
        ConnHandle {
            id,
            tx,
            too_slow,
            drained,
        }
    }

    /// Tells the connection to close as too slow.
    pub fn push_too_slow(&self) {
        self.too_slow.raise();
    }

    /// Queues a frame without waiting. False when the connection is gone or too slow (then it is
    /// told to close): the caller drops it. Once a connection is too slow nothing more is queued
    /// for it, so that what it still receives before the close has no hole.
    pub fn push(&self, frame: Utf8Bytes) -> bool {
        if self.too_slow.is_raised() {
            return false;
        }
        match self.tx.try_send(frame) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.too_slow.raise();
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    /// Free places in the queue that a catch-up leaves to live frames (replies, the diffs of
    /// other matches): a quarter of the queue.
    fn headroom(&self) -> usize {
        self.tx.max_capacity().div_ceil(4)
    }

    /// How many frames may be queued at once now without eating into the headroom.
    fn room(&self) -> usize {
        self.tx.capacity().saturating_sub(self.headroom())
    }

    /// Queues a catch-up frame as the queue drains: waits while the queue is fuller than its
    /// headroom allows. A client that reads nothing for `patience` is too slow (and told so).
    /// False when the frame was not queued.
    async fn push_paced(&self, frame: Utf8Bytes, patience: Duration) -> bool {
        loop {
            if self.too_slow.is_raised() || self.tx.is_closed() {
                return false;
            }
            // Registered before the check, so that a drain between the two is not missed.
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if self.room() > 0 {
                return self.push(frame);
            }
            if tokio::time::timeout(patience, drained).await.is_err() {
                debug!("catch-up: the client read nothing in time");
                self.too_slow.raise();
                return false;
            }
        }
    }
}

/// Serializes a server message once, for any number of receivers.
pub fn frame(msg: &ServerMessage) -> Utf8Bytes {
    match serde_json::to_string(msg) {
        Ok(s) => Utf8Bytes::from(s),
        Err(e) => {
            // Not reachable with the protocol's types (no non-string map keys); say so loudly.
            error!(error = %e, "cannot serialize a server message");
            Utf8Bytes::from(
                r#"{"type":"error","code":"internal","message":"serialization failed"}"#,
            )
        }
    }
}

pub fn error_frame(code: ErrorCode, id: Option<String>, message: impl Into<String>) -> Utf8Bytes {
    frame(&ServerMessage::Error(ErrorBody {
        id,
        code,
        rule_code: None,
        rule: None,
        message: message.into(),
    }))
}

#[derive(Debug)]
pub enum ActorMsg {
    Command {
        conn: ConnHandle,
        seat: u8,
        id: String,
        command: Command,
    },
    Subscribe {
        conn: ConnHandle,
        since: Option<Seq>,
    },
    Unsubscribe {
        conn_id: u64,
    },
    /// Finish what is queued before this message, then stop.
    Shutdown,
    /// A catch-up task (off the actor's path) ended.
    CaughtUp {
        conn_id: u64,
        token: u64,
        outcome: CatchUpOutcome,
    },
    /// For the admin API and tests: the current seq and view.
    Inspect {
        reply: oneshot::Sender<Option<(Seq, rules::View)>>,
    },
}

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
    resume_slots: Arc<Semaphore>,
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
    fn retire(&self, id: Uuid, generation: u64, rx: &mpsc::Receiver<ActorMsg>) -> bool {
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

    fn forget(&self, id: Uuid, generation: u64) {
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

/// The snapshot frame at the current seq, built once per seq.
fn snapshot_frame(match_id: Uuid, l: &mut Loaded) -> Utf8Bytes {
    if let Some(f) = &l.snapshot {
        return f.clone();
    }
    let f = frame(&ServerMessage::Snapshot {
        match_id,
        seq: l.seq,
        view: l.game.view(),
    });
    l.snapshot = Some(f.clone());
    f
}

/// Where a catch-up takes the diffs it streams.
enum CatchUpSource {
    /// Already in memory (from the diff window).
    Frames(Vec<Utf8Bytes>),
    /// The diffs `after < seq <= upto`, read from the store; `slot` is held until the read is
    /// done.
    Store {
        store: Store,
        after: Seq,
        slot: OwnedSemaphorePermit,
    },
}

/// How a catch-up ended.
#[derive(Debug)]
pub enum CatchUpOutcome {
    /// Every diff up to `upto` is queued for the client.
    Sent { upto: Seq },
    /// The store could not serve it; nothing was queued.
    StoreFailed(String),
    /// The client is gone or too slow (and told so).
    Dropped,
}

/// One resume's diffs, streamed to one client as its queue drains (a resume is never the reason
/// a client is too slow), then reported to the actor, which sends the live diffs held meanwhile.
struct CatchUp {
    match_id: Uuid,
    conn: ConnHandle,
    token: u64,
    /// The diffs end here.
    upto: Seq,
    source: CatchUpSource,
    inbox: mpsc::Sender<ActorMsg>,
    /// How long the client may read nothing before it is too slow.
    patience: Duration,
}

impl CatchUp {
    async fn run(mut self) {
        let source = std::mem::replace(&mut self.source, CatchUpSource::Frames(Vec::new()));
        let outcome = match self.frames(source).await {
            Err(e) => CatchUpOutcome::StoreFailed(e),
            Ok(frames) => {
                let mut sent = true;
                for f in frames {
                    if !self.conn.push_paced(f, self.patience).await {
                        sent = false;
                        break;
                    }
                }
                if sent {
                    CatchUpOutcome::Sent { upto: self.upto }
                } else {
                    CatchUpOutcome::Dropped
                }
            }
        };
        let _ = self
            .inbox
            .send(ActorMsg::CaughtUp {
                conn_id: self.conn.id,
                token: self.token,
                outcome,
            })
            .await;
    }

    /// The frames to send: from memory, or read from the store (the slot is freed as soon as
    /// the read is done) and serialized here.
    async fn frames(&self, source: CatchUpSource) -> Result<Vec<Utf8Bytes>, String> {
        let (store, after, slot) = match source {
            CatchUpSource::Frames(frames) => return Ok(frames),
            CatchUpSource::Store { store, after, slot } => (store, after, slot),
        };
        let (match_id, upto) = (self.match_id, self.upto);
        let rows = store.commands_between(match_id, after, upto).await;
        drop(slot);
        let rows = rows.map_err(|e| e.to_string())?;
        if rows.len() as u64 != upto - after {
            return Err(format!(
                "{} stored diffs, expected {}",
                rows.len(),
                upto - after
            ));
        }
        rows.into_iter()
            .map(|row| {
                let patch = row.patch.ok_or("a command stored without its patch")?;
                let events: Vec<Event> =
                    serde_json::from_str(&row.events).map_err(|e| e.to_string())?;
                let patch: Vec<PatchOp> =
                    serde_json::from_str(&patch).map_err(|e| e.to_string())?;
                Ok(frame(&ServerMessage::Diff {
                    match_id,
                    seq: row.seq,
                    events,
                    patch,
                }))
            })
            .collect()
    }
}

/// The loaded match.
struct Loaded {
    game: Game,
    seq: Seq,
    /// The public view at `seq` as JSON: the left side of the next diff.
    view_json: serde_json::Value,
    /// The snapshot frame at `seq`, built on first demand.
    snapshot: Option<Utf8Bytes>,
    /// The last diffs, oldest first: `(seq, frame)`.
    window: VecDeque<(Seq, Utf8Bytes)>,
    /// Every accepted command: (seat, client id) → seq.
    accepted: HashMap<(u8, String), Seq>,
    /// Recently refused command ids and their answers, bounded per seat.
    rejected: HashMap<(u8, String), ErrorBody>,
    /// Per seat, its refused ids in `rejected`, oldest first.
    rejected_order: HashMap<u8, VecDeque<String>>,
}

enum State {
    Ready(Box<Loaded>),
    Failed { code: ErrorCode, message: String },
}

struct Actor {
    id: Uuid,
    generation: u64,
    registry: Arc<Registry>,
    store: Store,
    config: Arc<Config>,
    state: State,
    subscribers: Vec<Subscriber>,
    /// To hand to resume tasks; weak, so that the actor alone does not keep itself reachable.
    inbox: mpsc::WeakSender<ActorMsg>,
    next_token: u64,
    stopping: bool,
    _alive: mpsc::Sender<()>,
}

struct Subscriber {
    conn: ConnHandle,
    /// While its older diffs are read from the store: the resume's token and the live diffs
    /// that arrived meanwhile, sent after them.
    catch_up: Option<(u64, Vec<Utf8Bytes>)>,
}

impl Subscriber {
    /// Delivers a live diff, or holds it during a catch-up. False: drop this subscriber.
    fn deliver(&mut self, diff: &Utf8Bytes) -> bool {
        match &mut self.catch_up {
            None => self.conn.push(diff.clone()),
            Some((_, held)) if held.len() < MAX_CATCH_UP_BUFFER => {
                held.push(diff.clone());
                true
            }
            Some(_) => {
                self.conn.push_too_slow();
                false
            }
        }
    }
}

/// An accepted command, serialized for the store and the wire before anything is stored: the
/// view after it (the left side of the next diff), its record's events and patch, and its diff
/// frame. If any of it cannot be serialized the command fails; no placeholder is ever stored.
#[derive(Debug)]
struct Encoded {
    view: serde_json::Value,
    events: String,
    patch: String,
    diff: Utf8Bytes,
}

impl Encoded {
    fn new(
        match_id: Uuid,
        seq: Seq,
        before: &serde_json::Value,
        view: &impl serde::Serialize,
        events: Vec<Event>,
    ) -> Result<Encoded, serde_json::Error> {
        let view = serde_json::to_value(view)?;
        let patch: Vec<PatchOp> =
            serde_json::from_value(serde_json::to_value(json_patch::diff(before, &view))?)?;
        let events_json = serde_json::to_string(&events)?;
        let patch_json = serde_json::to_string(&patch)?;
        let diff = serde_json::to_string(&ServerMessage::Diff {
            match_id,
            seq,
            events,
            patch,
        })?;
        Ok(Encoded {
            view,
            events: events_json,
            patch: patch_json,
            diff: Utf8Bytes::from(diff),
        })
    }
}

/// A command applied in memory and waiting for its batch to be written.
enum Staged {
    Accepted {
        conn: ConnHandle,
        id: String,
        seq: Seq,
        /// The `Diff` frame, serialized once for every subscriber.
        diff: Utf8Bytes,
    },
    /// An answer that needs no write (a refusal or a repeated id); sent after the batch so that a
    /// client's answers keep the order of its commands.
    Reply {
        conn: ConnHandle,
        id: String,
        frame: Utf8Bytes,
    },
}

#[derive(Default)]
struct Batch {
    staged: Vec<Staged>,
    records: Vec<CommandRow>,
    /// Ids accepted in this batch and not yet stored: (seat, id) → seq.
    pending: HashMap<(u8, String), Seq>,
    finished: bool,
    /// The rules panicked on a command: the game in memory is not trusted any more; the batch
    /// stores what came before, and the match is reloaded from the store.
    poisoned: bool,
}

impl Batch {
    /// An answer for one sender only, sent once the batch is stored.
    fn reply(&mut self, conn: ConnHandle, id: String, frame: Utf8Bytes) {
        self.staged.push(Staged::Reply { conn, id, frame });
    }
}

/// Runs rules code, turning a panic (a bug) into an error instead of the end of the actor.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into())
    })
}

/// Why a replay could not resume a match.
#[derive(Debug, thiserror::Error)]
enum LoadError {
    #[error("no such match")]
    Unknown,
    #[error("store: {0}")]
    Store(#[from] StoreError),
    #[error(
        "the match was stored with replay version {stored}, this server replays {REPLAY_VERSION}"
    )]
    RulesVersion { stored: String },
    #[error("the match is marked broken")]
    Broken,
    #[error("corrupt record: {0}")]
    Corrupt(String),
    #[error("replay diverged at seq {seq}: {detail}")]
    Diverged { seq: Seq, detail: String },
}

impl Actor {
    async fn run(
        mut self,
        mut rx: mpsc::Receiver<ActorMsg>,
        on_loaded: Option<oneshot::Sender<LoadOutcome>>,
    ) {
        let outcome = self.load().await;
        if let Some(reply) = on_loaded {
            let _ = reply.send(outcome.clone());
        }
        if let LoadOutcome::Failed { .. } = outcome {
            // Answer what is queued, then leave: a later lookup tries again from the store.
            self.registry.forget(self.id, self.generation);
            rx.close();
            while let Some(msg) = rx.recv().await {
                self.handle_failed(msg);
            }
            return;
        }

        let idle = self.config.match_idle();
        loop {
            let first = tokio::select! {
                msg = rx.recv() => msg,
                () = tokio::time::sleep(idle) => {
                    self.shrink();
                    if self.subscribers.is_empty()
                        && self.registry.retire(self.id, self.generation, &rx)
                    {
                        debug!("idle: leaving memory");
                        break;
                    }
                    continue;
                }
            };
            let Some(first) = first else { break };
            let mut msgs = vec![first];
            while msgs.len() < self.config.max_batch.max(1) {
                match rx.try_recv() {
                    Ok(m) => msgs.push(m),
                    Err(_) => break,
                }
            }
            self.handle_all(msgs).await;
            if matches!(self.state, State::Failed { .. }) {
                // A reload after a failed write failed too: leave, so that the next lookup
                // tries the store afresh. Subscribers are told to resync (close 4001), since no
                // diff will reach them from here.
                for sub in self.subscribers.drain(..) {
                    sub.conn.push_too_slow();
                }
                self.registry.forget(self.id, self.generation);
                rx.close();
                while let Ok(msg) = rx.try_recv() {
                    self.handle_failed(msg);
                }
                break;
            }
            if self.stopping {
                // Everything queued before `Shutdown` has been answered; refuse the rest.
                self.registry.forget(self.id, self.generation);
                rx.close();
                while let Ok(msg) = rx.try_recv() {
                    self.handle_failed(msg);
                }
                break;
            }
        }
        debug!("match actor stopped");
    }

    /// Handles drained messages in order; consecutive commands share one write.
    async fn handle_all(&mut self, msgs: Vec<ActorMsg>) {
        let mut batch = Batch::default();
        for msg in msgs {
            if self.stopping {
                self.handle_failed(msg);
                continue;
            }
            match msg {
                ActorMsg::Command {
                    conn,
                    seat,
                    id,
                    command,
                } => self.stage(&mut batch, conn, seat, id, command),
                other => {
                    // Anything else must see only stored state.
                    self.commit(std::mem::take(&mut batch)).await;
                    self.handle_other(other);
                }
            }
        }
        self.commit(batch).await;
    }

    fn handle_other(&mut self, msg: ActorMsg) {
        match msg {
            ActorMsg::Command { .. } => {} // handled by `stage`
            ActorMsg::Subscribe { conn, since } => self.subscribe(conn, since),
            ActorMsg::Unsubscribe { conn_id } => {
                self.subscribers.retain(|sub| sub.conn.id != conn_id);
            }
            ActorMsg::CaughtUp {
                conn_id,
                token,
                outcome,
            } => self.caught_up(conn_id, token, outcome),
            ActorMsg::Shutdown => self.stopping = true,
            ActorMsg::Inspect { reply } => {
                let answer = match &self.state {
                    State::Ready(l) => Some((l.seq, l.game.view())),
                    State::Failed { .. } => None,
                };
                let _ = reply.send(answer);
            }
        }
    }

    /// Answers a message when the match cannot be played (failed to load, or stopping).
    fn handle_failed(&mut self, msg: ActorMsg) {
        let (code, message) = match &self.state {
            State::Failed { code, message } => (*code, message.clone()),
            State::Ready(_) => (ErrorCode::Unavailable, "the server is shutting down".into()),
        };
        match msg {
            ActorMsg::Command { conn, id, .. } => {
                conn.push(error_frame(code, Some(id), message));
            }
            ActorMsg::Subscribe { conn, .. } => {
                conn.push(error_frame(code, None, message));
            }
            ActorMsg::Inspect { reply } => {
                let _ = reply.send(None);
            }
            ActorMsg::Unsubscribe { .. } | ActorMsg::Shutdown | ActorMsg::CaughtUp { .. } => {}
        }
    }

    /// Reads the match and replays its commands through the rules, checking that each gives the
    /// stored events: a match whose history the rules no longer reproduce is not resumed.
    async fn load(&mut self) -> LoadOutcome {
        match self.replay().await {
            Ok(loaded) => {
                let outcome = LoadOutcome::Ready {
                    seq: loaded.seq,
                    finished: loaded.game.is_finished(),
                };
                debug!(seq = loaded.seq, "loaded");
                self.state = State::Ready(Box::new(loaded));
                outcome
            }
            Err(e) => {
                let code = match e {
                    LoadError::Unknown => ErrorCode::UnknownMatch,
                    LoadError::Store(_) => ErrorCode::Internal,
                    _ => ErrorCode::Unavailable,
                };
                if let LoadError::Diverged { .. } | LoadError::Corrupt(_) = e {
                    error!(error = %e, "match cannot be resumed: marking it broken");
                    if let Err(se) = self.store.set_status(self.id, MatchStatus::Broken).await {
                        error!(error = %se, "cannot mark the match broken");
                    }
                } else if !matches!(e, LoadError::Unknown) {
                    warn!(error = %e, "match cannot be loaded");
                }
                let message = match e {
                    LoadError::Unknown => "no such match".to_string(),
                    LoadError::Store(_) => "the store failed".to_string(),
                    other => other.to_string(),
                };
                self.state = State::Failed {
                    code,
                    message: message.clone(),
                };
                LoadOutcome::Failed { code, message }
            }
        }
    }

    async fn replay(&self) -> Result<Loaded, LoadError> {
        let row = self
            .store
            .load_match(self.id)
            .await?
            .ok_or(LoadError::Unknown)?;
        if row.status == MatchStatus::Broken {
            return Err(LoadError::Broken);
        }
        if !rules::replays(&row.rules_version) {
            return Err(LoadError::RulesVersion {
                stored: row.rules_version,
            });
        }
        let setup: Setup = serde_json::from_str(&row.setup)
            .map_err(|e| LoadError::Corrupt(format!("setup: {e}")))?;
        let (mut game, _) =
            Game::start(setup).map_err(|e| LoadError::Corrupt(format!("setup: {e}")))?;
        let mut accepted = HashMap::new();
        let mut seq: Seq = 0;
        for rec in self.store.commands(self.id, 0).await? {
            if rec.seq != seq + 1 {
                return Err(LoadError::Corrupt(format!("seq {} follows {seq}", rec.seq)));
            }
            let command: Command = serde_json::from_str(&rec.command)
                .map_err(|e| LoadError::Corrupt(format!("command {}: {e}", rec.seq)))?;
            let stored: Vec<Event> = serde_json::from_str(&rec.events)
                .map_err(|e| LoadError::Corrupt(format!("events {}: {e}", rec.seq)))?;
            let events = guarded(|| game.apply(rec.seat, command))
                .map_err(|p| LoadError::Diverged {
                    seq: rec.seq,
                    detail: format!("the rules panicked: {p}"),
                })?
                .map_err(|e| LoadError::Diverged {
                    seq: rec.seq,
                    detail: format!("the rules now refuse it: {e}"),
                })?;
            if events != stored {
                return Err(LoadError::Diverged {
                    seq: rec.seq,
                    detail: "the events differ from the stored ones".into(),
                });
            }
            seq = rec.seq;
            accepted.insert((rec.seat, rec.command_id), seq);
        }
        let view_json = serde_json::to_value(game.view())
            .map_err(|e| LoadError::Corrupt(format!("view: {e}")))?;
        Ok(Loaded {
            game,
            seq,
            view_json,
            snapshot: None,
            window: VecDeque::new(),
            accepted,
            rejected: HashMap::new(),
            rejected_order: HashMap::new(),
        })
    }

    /// Applies one command in memory and stages its answer.
    fn stage(
        &mut self,
        batch: &mut Batch,
        conn: ConnHandle,
        seat: u8,
        id: String,
        command: Command,
    ) {
        let State::Ready(l) = &mut self.state else {
            self.handle_failed(ActorMsg::Command {
                conn,
                seat,
                id,
                command,
            });
            return;
        };
        let key = (seat, id);
        if batch.poisoned {
            let frame = error_frame(ErrorCode::Busy, Some(key.1.clone()), "try again");
            batch.reply(conn, key.1, frame);
            return;
        }
        // A repeated id gets the first answer and changes nothing.
        if let Some(&seq) = l.accepted.get(&key).or_else(|| batch.pending.get(&key)) {
            let frame = frame(&ServerMessage::Ack {
                id: key.1.clone(),
                match_id: self.id,
                seq,
            });
            batch.reply(conn, key.1, frame);
            return;
        }
        if let Some(body) = l.rejected.get(&key) {
            let frame = frame(&ServerMessage::Error(body.clone()));
            batch.reply(conn, key.1, frame);
            return;
        }
        if l.game.is_finished() {
            let frame = error_frame(
                ErrorCode::Unavailable,
                Some(key.1.clone()),
                "the match is finished",
            );
            batch.reply(conn, key.1, frame);
            return;
        }
        let command_json = match serde_json::to_string(&command) {
            Ok(s) => s,
            Err(e) => {
                let frame = error_frame(ErrorCode::Internal, Some(key.1.clone()), e.to_string());
                batch.reply(conn, key.1, frame);
                return;
            }
        };
        let applied = guarded(|| -> Result<_, rules::RuleError> {
            let events = l.game.apply(seat, command)?;
            Ok((events, l.game.view(), l.game.is_finished()))
        });
        let applied = match applied {
            Ok(a) => a,
            Err(panic) => {
                error!(seat, id = %key.1, %panic, "the rules panicked on a command");
                batch.poisoned = true;
                let frame = error_frame(
                    ErrorCode::Internal,
                    Some(key.1.clone()),
                    "the server failed on this command; nothing was applied",
                );
                batch.reply(conn, key.1, frame);
                return;
            }
        };
        match applied {
            Err(e) => {
                let body = ErrorBody {
                    id: Some(key.1.clone()),
                    code: ErrorCode::Rule,
                    rule_code: Some(e.code().to_string()),
                    rule: Some(e.rule().to_string()),
                    message: e.to_string(),
                };
                let frame = frame(&ServerMessage::Error(body.clone()));
                let order = l.rejected_order.entry(seat).or_default();
                if order.len() >= REJECTED_CACHE
                    && let Some(old) = order.pop_front()
                {
                    l.rejected.remove(&(seat, old));
                }
                order.push_back(key.1.clone());
                l.rejected.insert(key.clone(), body);
                batch.reply(conn, key.1, frame);
            }
            Ok((events, view, finished)) => {
                let seq = l.seq + 1;
                let encoded = match Encoded::new(self.id, seq, &l.view_json, &view, events) {
                    Ok(e) => e,
                    Err(e) => {
                        // Nothing can be stored for it, and the game in memory has moved on:
                        // the command failed, and the match is reloaded from the store once
                        // what came before it in the batch is stored.
                        error!(seat, id = %key.1, error = %e, "cannot serialize an accepted command");
                        batch.poisoned = true;
                        let frame = error_frame(
                            ErrorCode::Internal,
                            Some(key.1.clone()),
                            "the server failed on this command; nothing was applied",
                        );
                        batch.reply(conn, key.1, frame);
                        return;
                    }
                };
                l.view_json = encoded.view;
                l.seq = seq;
                l.snapshot = None;
                batch.records.push(CommandRow {
                    seq,
                    seat,
                    command_id: key.1.clone(),
                    command: command_json,
                    events: encoded.events,
                    patch: Some(encoded.patch),
                    created_at: Utc::now(),
                });
                let diff = encoded.diff;
                batch.pending.insert(key.clone(), seq);
                batch.finished |= finished;
                batch.staged.push(Staged::Accepted {
                    conn,
                    id: key.1,
                    seq,
                    diff,
                });
            }
        }
    }

    /// Persist, then broadcast: writes the batch's records in one transaction, and only when that
    /// succeeded acks and sends the diffs. If the write fails nothing is acknowledged and the
    /// match is reloaded from the store, which is the truth.
    async fn commit(&mut self, batch: Batch) {
        if batch.staged.is_empty() {
            return;
        }
        let poisoned = batch.poisoned;
        if !batch.records.is_empty() {
            let status = batch.finished.then_some(MatchStatus::Finished);
            if let Err(e) = self.store.append(self.id, &batch.records, status).await {
                error!(error = %e, commands = batch.records.len(), "store write failed");
                for s in batch.staged {
                    let (conn, id) = match s {
                        Staged::Accepted { conn, id, .. } => (conn, Some(id)),
                        Staged::Reply { conn, id, .. } => (conn, Some(id)),
                    };
                    conn.push(error_frame(
                        ErrorCode::Internal,
                        id,
                        "the store failed; nothing was applied: send the command again",
                    ));
                }
                self.reload().await;
                return;
            }
            if batch.finished {
                info!(seq = batch.records.last().map(|r| r.seq), "match finished");
            }
        }
        let State::Ready(l) = &mut self.state else {
            return;
        };
        l.accepted.extend(batch.pending);
        for s in batch.staged {
            match s {
                Staged::Reply { conn, frame, .. } => {
                    conn.push(frame);
                }
                Staged::Accepted {
                    conn,
                    id,
                    seq,
                    diff,
                } => {
                    conn.push(frame(&ServerMessage::Ack {
                        id,
                        match_id: self.id,
                        seq,
                    }));
                    // Slow subscribers are dropped (and told to resync), never waited for.
                    self.subscribers.retain_mut(|sub| sub.deliver(&diff));
                    l.window.push_back((seq, diff));
                    while l.window.len() > self.config.diff_window {
                        l.window.pop_front();
                    }
                }
            }
        }
        if poisoned {
            self.reload().await;
        }
    }

    async fn reload(&mut self) {
        let outcome = self.load().await;
        if let LoadOutcome::Ready { seq, .. } = outcome {
            warn!(seq, "reloaded from the store after a failed write");
            // Subscribers may have missed nothing (nothing was broadcast), but their state is
            // at most our seq; a snapshot sets them straight cheaply.
            let subs = std::mem::take(&mut self.subscribers);
            for sub in subs {
                self.subscribe(sub.conn, None);
            }
        }
    }

    /// Sends what a subscriber lacks: nothing when it is up to date, the diffs after `since`
    /// from memory or (further back) from the store, or a snapshot when `since` is absent, ahead
    /// of us, or so old that a snapshot is cheaper.
    fn subscribe(&mut self, conn: ConnHandle, since: Option<Seq>) {
        self.subscribers.retain(|sub| sub.conn.id != conn.id);
        self.catch_up(conn, since);
    }

    /// Brings `conn` from `since` to the current seq and makes it a live subscriber: at once when
    /// what it lacks fits in its queue, else through a [`CatchUp`] task that streams the diffs
    /// as the queue drains while live diffs are held for it.
    fn catch_up(&mut self, conn: ConnHandle, since: Option<Seq>) {
        let State::Ready(l) = &mut self.state else {
            return;
        };
        let seq = l.seq;
        let in_window = |s: Seq| l.window.front().is_some_and(|(first, _)| *first <= s + 1);
        let source = match since {
            Some(s) if s == seq => None,
            Some(s) if s < seq && in_window(s) => {
                let frames: Vec<Utf8Bytes> = l
                    .window
                    .iter()
                    .filter(|(q, _)| *q > s)
                    .map(|(_, f)| f.clone())
                    .collect();
                if frames.len() > conn.room() {
                    Some(CatchUpSource::Frames(frames))
                } else if frames.into_iter().all(|f| conn.push(f)) {
                    None
                } else {
                    return;
                }
            }
            Some(s) if s < seq && seq - s <= self.config.max_store_resume => {
                // A free resume slot, else a snapshot: a flood of resumes must not tie up the
                // store that every match writes to.
                match Arc::clone(&self.registry.resume_slots).try_acquire_owned() {
                    Ok(slot) => Some(CatchUpSource::Store {
                        store: self.store.clone(),
                        after: s,
                        slot,
                    }),
                    Err(_) if conn.push(snapshot_frame(self.id, l)) => None,
                    Err(_) => return,
                }
            }
            _ if conn.push(snapshot_frame(self.id, l)) => None,
            _ => return,
        };
        let (source, inbox) = match (source, self.inbox.upgrade()) {
            (Some(source), Some(inbox)) => (source, inbox),
            (None, _) => {
                self.subscribers.push(Subscriber {
                    conn,
                    catch_up: None,
                });
                return;
            }
            // Retiring: nothing may reach this actor any more, and neither will this answer.
            (Some(_), None) => return,
        };
        self.next_token += 1;
        let token = self.next_token;
        let task = CatchUp {
            match_id: self.id,
            conn: conn.clone(),
            token,
            upto: seq,
            source,
            inbox,
            patience: self.config.write_timeout(),
        };
        tokio::spawn(task.run().in_current_span());
        self.subscribers.push(Subscriber {
            conn,
            catch_up: Some((token, Vec::new())),
        });
    }

    /// Ends a catch-up: the live diffs held meanwhile follow (or, when they no longer fit at
    /// once, another round streams them). If the store could not serve it, a snapshot instead.
    fn caught_up(&mut self, conn_id: u64, token: u64, outcome: CatchUpOutcome) {
        let Some(pos) = self.subscribers.iter().position(|sub| {
            sub.conn.id == conn_id && matches!(sub.catch_up, Some((t, _)) if t == token)
        }) else {
            return; // unsubscribed or resubscribed meanwhile
        };
        let mut sub = self.subscribers.swap_remove(pos);
        let held = sub
            .catch_up
            .take()
            .map(|(_, held)| held)
            .unwrap_or_default();
        match outcome {
            CatchUpOutcome::Dropped => {} // the connection closes as too slow
            CatchUpOutcome::StoreFailed(e) => {
                debug!(error = %e, "resume from the store failed: sending a snapshot");
                // The snapshot is at the current seq: it covers the held diffs too.
                if let State::Ready(l) = &mut self.state
                    && sub.conn.push(snapshot_frame(self.id, l))
                {
                    self.subscribers.push(sub);
                }
            }
            CatchUpOutcome::Sent { upto } => {
                if held.len() > sub.conn.room() {
                    self.catch_up(sub.conn, Some(upto));
                } else if held.into_iter().all(|f| sub.conn.push(f)) {
                    self.subscribers.push(sub);
                }
            }
        }
    }

    /// Frees what only serves active play; the next resume costs a snapshot.
    fn shrink(&mut self) {
        if let State::Ready(l) = &mut self.state
            && self.subscribers.is_empty()
        {
            l.window = VecDeque::new();
            l.snapshot = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::ser::Error as _;

    /// Stands for a view whose serialization fails (no real view does today).
    struct Unserializable;

    impl serde::Serialize for Unserializable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(S::Error::custom("cannot"))
        }
    }

    /// Before the fix a view that failed to serialize became `null` (and a patch to `null` was
    /// stored and acknowledged); now the command fails.
    #[test]
    fn a_serialization_failure_fails_the_command() {
        let before = serde_json::json!({"turn": 1});
        let failed = Encoded::new(Uuid::nil(), 2, &before, &Unserializable, Vec::new());
        assert!(failed.is_err());
        let ok = Encoded::new(
            Uuid::nil(),
            2,
            &before,
            &serde_json::json!({"turn": 2}),
            Vec::new(),
        );
        let ok = ok.map_err(|e| e.to_string());
        assert!(
            matches!(&ok, Ok(e) if e.patch == r#"[{"op":"replace","path":"/turn","value":2}]"#
                && e.events == "[]"
                && e.diff.as_str().contains(r#""seq":2"#)),
            "{ok:?}"
        );
    }
}
