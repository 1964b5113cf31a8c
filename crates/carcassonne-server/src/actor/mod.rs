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
//! [`crate::store::sqlite_writer`]); Postgres coalesces concurrent commits itself.
//!
//! Resumes: a subscriber that gives `since` gets the diffs after it from the in-memory window
//! (the last `diff_window` diffs within `diff_window_bytes`), or, further back, from the store
//! (each record keeps its events and the patch as sent); a snapshot when `since` is absent, ahead, or more than
//! `max_store_resume` behind. Diffs that do not fit in the client's queue at once are streamed by
//! a catch-up task (see `subscribers`) as the queue drains, while live diffs are held for the
//! client: a resume is never the reason a client is too slow.
//!
//! Deadlines: a decision of a player who is not the active one (a pawn choice) must be answered
//! within the match's decision timeout; the loop sleeps until the earliest deadline and then
//! applies the decision's default as a command of the server (`server:deadline:<seq>`), through
//! the same pipeline as a client's command (see `timers` and `commands`).
//!
//! Game clocks: with a clock, the active player's decisions fall due when their bank runs out;
//! the server applies the default (`server:clock:<seq>`) and marks them away, and an away
//! player's decisions are played at once (`server:away:<seq>`) until a command comes from their
//! seat. Same sleep, same pipeline (see `timers`).
//!
//! Memory: a match that got no message for `QUIET` drops what it can rebuild (its views, the
//! cached snapshot and, when nobody follows it, the diff window); one nobody follows or holds
//! for `--match-idle` leaves the registry, and the next lookup replays it from the store. One with a deadline pending leaves only
//! when the deadline is more than `--match-idle` away: the registry's waker reloads it then.

mod commands;
mod dedupe;
mod firing;
mod guard;
mod registry;
pub mod replay;
mod subscribers;
pub mod timers;
mod views;

pub use registry::{Closed, LoadOutcome, MatchHandle, Registry};
pub use subscribers::CatchUpOutcome;

use crate::config::Config;
use crate::outbox::ConnHandle;
use crate::queue;
use crate::store::{MatchStatus, Store};
use crate::wire::error_frame;
use commands::Batch;
use dedupe::Dedupe;
use protocol::{ErrorCode, Seq};
use replay::LoadError;
use rules::{Command, Game};
use std::sync::Arc;
use std::time::Duration;
use subscribers::{Subscriber, Window};
use timers::Deadlines;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tracing::{debug, error, warn};
use uuid::Uuid;
use views::Views;

/// A client's command (or a bot's), as it waits in a match's inbox.
#[derive(Debug)]
pub struct CommandMsg {
    pub conn: ConnHandle,
    pub seat: u8,
    pub id: String,
    pub command: Command,
    /// When the command arrived on its connection (for the ack latency metric).
    pub arrived: Instant,
}

#[derive(Debug)]
pub enum ActorMsg {
    /// Boxed: a message waiting in the inbox takes the size of the largest, and a command is
    /// three times the size of the others.
    Command(Box<CommandMsg>),
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
    /// Admin: end the match for good once what is queued before is stored. The status
    /// `aborted` is stored, subscribers are told, and every later message is refused with
    /// `aborted`. Answers the seq the match ended at.
    Abort {
        reply: oneshot::Sender<Result<Seq, ErrorCode>>,
    },
    /// How loading went (the actor reads its inbox only once it has loaded).
    Loaded(oneshot::Sender<LoadOutcome>),
    /// Admin: the seat's away mark was stored (`away`) or cleared; the actor follows it.
    Away {
        seat: u8,
        away: bool,
    },
    /// Cluster mode: this node lost the match's lease (another node may run it now). The actor
    /// stops at once, its subscribers told to reconnect; nothing more is written (the fence).
    LeaseLost,
    /// Cluster mode: this node stopped and let the match go (a proxy to it ends; an actor,
    /// which this node's own claim made, ignores it).
    OwnerLeft(Arc<str>),
}

/// What a match moved to another node answers.
const MOVED: &str = "the match moved to another node: reconnect and send it again";

/// How long a match goes without a message before it drops its views and cached snapshot
/// (rebuilt from the game on the next move or subscription) and, if nobody follows it, its diff
/// window: a match played at a human pace holds no view between moves; one played fast keeps
/// them and skips building a view per move.
const QUIET: Duration = Duration::from_secs(10);

/// The loaded match.
struct Loaded {
    game: Game,
    seq: Seq,
    /// The public views and the snapshot frame at `seq`, kept between moves.
    views: Views,
    /// The last diffs, for resumes from memory.
    window: Window,
    /// The answers to repeated command ids.
    dedupe: Dedupe,
    /// When the open decisions opened, and their deadlines.
    deadlines: Deadlines,
    /// The wake time as stored (`matches.wake_at`): kept equal to `deadlines.next_due()`.
    stored_wake: Option<timers::Millis>,
}

impl Loaded {
    /// `timeout_ms`: the server's decision timeout, for a match that stored none.
    fn new(mut r: replay::Replayed, timeout_ms: u64) -> Result<Loaded, LoadError> {
        r.deadlines
            .set_timeout(r.decision_timeout_ms.unwrap_or(timeout_ms));
        // A replay's vectors grew by doubling: keep what the match played. No view is built:
        // the first command builds it (a match loaded by the warm-up may never get one).
        r.game.shrink_to_fit();
        Ok(Loaded {
            game: r.game,
            seq: r.seq,
            views: Views::new(r.names),
            window: Window::default(),
            dedupe: Dedupe::new(r.accepted),
            deadlines: r.deadlines,
            stored_wake: r.stored_wake,
        })
    }
}

/// Why the run loop woke.
enum Wake {
    Msgs(Vec<ActorMsg>),
    Deadline,
    Idle,
    Closed,
}

/// A match loaded and played, or why it cannot be.
enum ActorState {
    Ready(Box<Loaded>),
    Failed { code: ErrorCode, message: String },
}

struct Actor {
    id: Uuid,
    generation: u64,
    registry: Arc<Registry>,
    store: Store,
    config: Arc<Config>,
    state: ActorState,
    subscribers: Vec<Subscriber>,
    /// Cluster mode, while connections of other nodes follow the match: its diffs for them,
    /// published once whatever their number.
    publisher: Option<crate::outbox::Publisher>,
    /// To hand to resume tasks; weak, so that the actor alone does not keep itself reachable.
    inbox: queue::WeakSender<ActorMsg>,
    next_token: u64,
    stopping: bool,
    /// After a failed write of the server's own commands, no deadline fires before this (a
    /// store that keeps failing must not be hammered).
    deadline_backoff: Option<Instant>,
    /// The lease its appends are written under (cluster mode); `None` on a single node. Shared:
    /// the actor lives in its task's future, which stays small for idle matches.
    fence: Option<std::sync::Arc<crate::store::Fence>>,
    _alive: mpsc::Sender<()>,
}

impl Actor {
    async fn run(mut self, mut rx: queue::Receiver<ActorMsg>) {
        if let LoadOutcome::Failed { .. } = Box::pin(self.load()).await {
            // Answer what is queued, then leave: a later lookup tries again from the store.
            self.registry.forget(self.id, self.generation);
            rx.close();
            while let Some(msg) = rx.recv().await {
                self.handle_failed(msg);
            }
            return;
        }

        self.sync_wake().await;
        let idle = self.config.matches.match_idle;
        // A quiet match first drops what only speeds up the next move (the views, the
        // snapshot, the window if nobody follows it), long before it may leave memory.
        let quiet = idle.min(QUIET);
        let mut quiet_for = Duration::ZERO;
        loop {
            let due = self.next_deadline();
            let wake = tokio::select! {
                msg = rx.recv() => match msg {
                    Some(first) => {
                        self.registry
                            .metrics
                            .inbox_depth
                            .record((rx.len() + 1) as f64);
                        let mut msgs = vec![first];
                        while msgs.len() < self.config.matches.max_batch {
                            match rx.try_recv() {
                                Some(m) => msgs.push(m),
                                None => break,
                            }
                        }
                        Wake::Msgs(msgs)
                    }
                    None => Wake::Closed,
                },
                () = tokio::time::sleep_until(due.unwrap_or_else(Instant::now)), if due.is_some() => {
                    Wake::Deadline
                }
                () = tokio::time::sleep(quiet) => Wake::Idle,
            };
            if !matches!(wake, Wake::Idle) {
                quiet_for = Duration::ZERO;
            }
            match wake {
                Wake::Closed => break,
                Wake::Idle => {
                    quiet_for += quiet;
                    self.drop_spares();
                    if quiet_for < idle {
                        continue;
                    }
                    if self.subscribers.is_empty()
                        && self.may_leave(idle)
                        && self.registry.retire(self.id, self.generation, &rx)
                    {
                        debug!("idle: leaving memory");
                        break;
                    }
                    continue;
                }
                // Boxed, as the load below: the task keeps only what the loop needs between
                // messages, not the largest future it ever awaits (a store write).
                Wake::Deadline => Box::pin(self.fire_deadlines()).await,
                Wake::Msgs(msgs) => Box::pin(self.handle_all(msgs)).await,
            }
            self.sync_wake().await;
            if matches!(self.state, ActorState::Failed { .. }) {
                // A reload after a failed write failed too: leave, so that the next lookup
                // tries the store afresh. Subscribers are told to resync (close 4001), since no
                // diff will reach them from here.
                let moved =
                    matches!(&self.state, ActorState::Failed { message, .. } if message == MOVED);
                for sub in self.subscribers.drain(..) {
                    if moved {
                        sub.conn.close_moved();
                    } else {
                        sub.conn.close_too_slow();
                    }
                }
                self.registry.forget(self.id, self.generation);
                rx.close();
                while let Some(msg) = rx.try_recv() {
                    self.handle_failed(msg);
                }
                break;
            }
            if self.stopping {
                // Everything queued before `Shutdown` has been answered; refuse the rest.
                self.registry.forget(self.id, self.generation);
                rx.close();
                while let Some(msg) = rx.try_recv() {
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
                ActorMsg::Command(c) => {
                    let CommandMsg {
                        conn,
                        seat,
                        id,
                        command,
                        arrived,
                    } = *c;
                    self.stage(&mut batch, conn, seat, id, command, arrived);
                }
                ActorMsg::Abort { reply } => {
                    self.commit(std::mem::take(&mut batch)).await;
                    Box::pin(self.abort(reply)).await;
                }
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
            ActorMsg::Command(_) | ActorMsg::Abort { .. } => {} // handled by `handle_all`
            ActorMsg::Subscribe { conn, since } => self.subscribe(conn, since),
            ActorMsg::Unsubscribe { conn_id } => {
                self.subscribers.retain(|sub| sub.conn.id != conn_id);
                self.unpublish_if_unfollowed();
            }
            ActorMsg::CaughtUp {
                conn_id,
                token,
                outcome,
            } => self.caught_up(conn_id, token, outcome),
            ActorMsg::Shutdown => self.stopping = true,
            ActorMsg::LeaseLost => self.moved(),
            ActorMsg::OwnerLeft(_) => {}
            ActorMsg::Inspect { reply } => {
                let answer = match &self.state {
                    ActorState::Ready(loaded) => Some((loaded.seq, loaded.game.view())),
                    ActorState::Failed { .. } => None,
                };
                let _ = reply.send(answer);
            }
            ActorMsg::Loaded(reply) => {
                let _ = reply.send(self.load_outcome());
            }
            ActorMsg::Away { seat, away } => {
                if let ActorState::Ready(loaded) = &mut self.state {
                    loaded.deadlines.set_away(seat, away);
                }
            }
        }
    }

    /// How loading went, as the state says.
    fn load_outcome(&self) -> LoadOutcome {
        match &self.state {
            ActorState::Ready(loaded) => LoadOutcome::Ready {
                seq: loaded.seq,
                finished: loaded.game.is_finished(),
            },
            ActorState::Failed { code, message } => LoadOutcome::Failed {
                code: *code,
                message: message.clone(),
            },
        }
    }

    /// Answers a message when the match cannot be played (failed to load, or stopping).
    fn handle_failed(&mut self, msg: ActorMsg) {
        let (code, message) = match &self.state {
            ActorState::Failed { code, message } => (*code, message.clone()),
            ActorState::Ready(_) => (ErrorCode::Unavailable, "the server is shutting down".into()),
        };
        refuse(msg, code, &message, &self.registry.metrics, || {
            self.load_outcome()
        });
    }

    /// A match that no command moved yet: who the opening's decisions wait for (the first
    /// player), for the your-turn notices that later batches give after each commit.
    fn opening_notice(&mut self) {
        let ActorState::Ready(loaded) = &mut self.state else {
            return;
        };
        if loaded.seq != 0 {
            return;
        }
        let (game, deadlines, views) = (&loaded.game, &loaded.deadlines, &mut loaded.views);
        let match_id = self.id;
        self.registry.turn(|| {
            let view = views.take(game, deadlines);
            let waiting = views::waiting_in(&view);
            views.put_back(view);
            Some(crate::webhooks::TurnState {
                match_id,
                seq: 0,
                waiting,
            })
        });
    }

    /// The lease is lost (cluster mode): the match stops here, as a failed one does.
    fn moved(&mut self) {
        warn!("the match moved to another node");
        self.state = ActorState::Failed {
            code: ErrorCode::Unavailable,
            message: MOVED.into(),
        };
    }

    /// Reads the match and replays its commands through the rules, checking that each gives the
    /// stored events: a match whose history the rules no longer reproduce is not resumed.
    async fn load(&mut self) -> LoadOutcome {
        let timeout =
            u64::try_from(self.config.matches.decision_timeout.as_millis()).unwrap_or(u64::MAX);
        let loaded = replay::load(&self.store, self.id, None)
            .await
            .and_then(|r| Loaded::new(r, timeout));
        match loaded {
            Ok(loaded) => {
                let outcome = LoadOutcome::Ready {
                    seq: loaded.seq,
                    finished: loaded.game.is_finished(),
                };
                debug!(seq = loaded.seq, "loaded");
                self.state = ActorState::Ready(Box::new(loaded));
                self.opening_notice();
                outcome
            }
            Err(e) => {
                let code = match e {
                    LoadError::Unknown => ErrorCode::UnknownMatch,
                    LoadError::Aborted => ErrorCode::Aborted,
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
                self.state = ActorState::Failed {
                    code,
                    message: message.clone(),
                };
                LoadOutcome::Failed { code, message }
            }
        }
    }

    /// Ends the match for good: stores `aborted`, tells the subscribers, and leaves the state
    /// failed, so that the run loop stops and every later message is refused with `aborted`.
    async fn abort(&mut self, reply: oneshot::Sender<Result<Seq, ErrorCode>>) {
        let seq = match &self.state {
            ActorState::Ready(loaded) if loaded.game.is_finished() => {
                let _ = reply.send(Err(ErrorCode::NotActive));
                return;
            }
            ActorState::Ready(loaded) => loaded.seq,
            ActorState::Failed { code, .. } => {
                let _ = reply.send(Err(*code));
                return;
            }
        };
        if let Err(e) = self.store.set_status(self.id, MatchStatus::Aborted).await {
            error!(error = %e, "cannot store the abort");
            let _ = reply.send(Err(ErrorCode::Internal));
            return;
        }
        warn!(seq, "aborted by an admin");
        let message = "an admin aborted the match";
        for sub in self.subscribers.drain(..) {
            sub.conn
                .push(error_frame(ErrorCode::Aborted, None, message.to_string()));
        }
        self.publisher = None;
        self.state = ActorState::Failed {
            code: ErrorCode::Aborted,
            message: message.into(),
        };
        let _ = reply.send(Ok(seq));
    }

    async fn reload(&mut self) {
        let outcome = self.load().await;
        if let LoadOutcome::Ready { seq, .. } = outcome {
            warn!(seq, "reloaded from the store after a failed write");
            // Subscribers may have missed nothing (nothing was broadcast), but their state is
            // at most our seq; a snapshot sets them straight cheaply. Those of other nodes stay:
            // their nodes deliver the next published diff, or resume them on a gap.
            let subs = std::mem::take(&mut self.subscribers);
            for sub in subs {
                if sub.relayed {
                    self.subscribers.push(sub);
                } else {
                    self.subscribe(sub.conn, None);
                }
            }
        }
    }
}

/// Answers a message that no match will handle (`code`, `message`); a load's question gets
/// `outcome`.
pub(crate) fn refuse(
    msg: ActorMsg,
    code: ErrorCode,
    message: &str,
    metrics: &crate::meters::Metrics,
    outcome: impl FnOnce() -> LoadOutcome,
) {
    match msg {
        ActorMsg::Command(c) => {
            metrics.refused(code);
            c.conn.push(error_frame(code, Some(c.id), message));
        }
        ActorMsg::Subscribe { conn, .. } => {
            conn.push(error_frame(code, None, message));
        }
        ActorMsg::Inspect { reply } => {
            let _ = reply.send(None);
        }
        ActorMsg::Abort { reply } => {
            let _ = reply.send(Err(code));
        }
        ActorMsg::Loaded(reply) => {
            let _ = reply.send(outcome());
        }
        ActorMsg::Unsubscribe { .. }
        | ActorMsg::Shutdown
        | ActorMsg::CaughtUp { .. }
        | ActorMsg::Away { .. }
        | ActorMsg::LeaseLost
        | ActorMsg::OwnerLeft(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use std::mem::size_of;

    /// The size of what a match holds: a message waiting in the inbox takes the size of the
    /// largest, the task keeps its run loop's future, and the loaded match is one box. So a
    /// command is boxed (112 bytes inline), the loop boxes the store writes it awaits (3.8 KB of
    /// future otherwise), and the kept views are boxed (336 bytes each inline).
    #[test]
    fn what_an_idle_match_holds_stays_small() {
        fn future_size<A, B, F, G: FnOnce(A, B) -> F>(_: &G) -> usize {
            size_of::<F>()
        }
        assert!(
            size_of::<super::ActorMsg>() <= 64,
            "{}",
            size_of::<super::ActorMsg>()
        );
        let run = future_size(&super::Actor::run);
        assert!(run <= 1_024, "the run loop's future: {run} bytes");
        // The loaded match is boxed whole: its game, views (boxed: none while quiet), window,
        // dedupe table and deadlines.
        let loaded = size_of::<super::Loaded>();
        assert!(loaded <= 1_280, "the loaded match: {loaded} bytes");
    }
}
