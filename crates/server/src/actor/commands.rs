//! The command pipeline: dedupe → apply → diff → record → persist, then ack and broadcast.
//! A client's command and the server's own (a decision's default at its deadline) take the same
//! path; the server's has no one to ack and an id `server:<why>:<seq>` (see `timers::Why`).

use super::replay::guarded;
use super::timers::{Origin, Why, now_millis};
use super::{Actor, ActorMsg, CommandMsg, State};
use crate::outbox::ConnHandle;
use crate::store::{Append, CommandRow, MatchStatus};
use crate::wire::{Frame, ack_frame, diff_frame, error_frame, frame};
use chrono::Utc;
use protocol::{ErrorBody, ErrorCode, Seq, ServerMessage};
use rules::{Command, DecisionId, Event};
use serde::ser::Error as _;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use std::time::Duration;
use tokio::time::Instant;
use tracing::{error, info, warn};
use uuid::Uuid;

/// How many refused command ids each seat of a match has remembered, to answer a repeated id with
/// the same error. Per seat, so that one seat's refusals never push out another's.
const REJECTED_CACHE: usize = 256;

/// An accepted command's (seat, client id), as the dedupe table keeps it: the first 128 bits of
/// SHA-256 over the seat and the id. 16 bytes whatever the id's length, and no allocation; two
/// different ids of one seat sharing a key is a 2^-128 event (and would only refuse the second
/// one as a repeat: a command is never applied twice).
pub(super) type IdKey = [u8; 16];

/// The key of a seat's command id.
pub(super) fn id_key(seat: u8, id: &str) -> IdKey {
    let digest = Sha256::new()
        .chain_update([seat])
        .chain_update(id.as_bytes())
        .finalize();
    let mut key = [0; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

/// What a match remembers of command ids, to give a repeated id its first answer: every accepted
/// id, and the recently refused ones (bounded per seat). It is the only guard against storing an
/// id twice (migration 0010 dropped the store's unique index on ids): it is rebuilt from the
/// store by every load's replay, and one actor owns each match.
#[derive(Debug, Default)]
pub(super) struct Dedupe {
    /// Every accepted command: its (seat, id) key and seq, in seq order. Sized by what the match
    /// played (24 bytes a command, no per-id allocation); a linear scan, since a match has a few
    /// hundred commands at most and a repeated id is rare.
    accepted: Vec<(IdKey, Seq)>,
    /// Recently refused command ids and their answers, bounded per seat.
    rejected: HashMap<(u8, String), ErrorBody>,
    /// Per seat, its refused ids in `rejected`, oldest first.
    rejected_order: HashMap<u8, VecDeque<String>>,
}

impl Dedupe {
    /// `accepted`: every accepted command's key and seq, as a replay gives them.
    pub(super) fn new(mut accepted: Vec<(IdKey, Seq)>) -> Self {
        accepted.shrink_to_fit();
        Dedupe {
            accepted,
            ..Dedupe::default()
        }
    }

    /// The first answer to a repeated id (accepted before, accepted earlier in this batch, or
    /// refused recently), or `None` for a new id. `idk`: the id's [`id_key`], hashed once per
    /// command by the caller (it is also what the command is remembered by).
    fn answer(
        &self,
        match_id: Uuid,
        key: &(u8, String),
        idk: &IdKey,
        pending: &[(IdKey, Seq)],
    ) -> Option<Frame> {
        let seq = pending
            .iter()
            .chain(&self.accepted)
            .find(|(k, _)| k == idk)
            .map(|&(_, seq)| seq);
        if let Some(seq) = seq {
            return Some(ack_frame(&key.1, match_id, seq));
        }
        self.rejected
            .get(key)
            .map(|body| frame(&ServerMessage::Error(body.clone())))
    }

    /// Remembers a refusal, forgetting the seat's oldest one beyond [`REJECTED_CACHE`].
    fn remember_refusal(&mut self, seat: u8, body: ErrorBody) {
        let Some(id) = body.id.clone() else { return };
        let order = self.rejected_order.entry(seat).or_default();
        if order.len() >= REJECTED_CACHE
            && let Some(old) = order.pop_front()
        {
            self.rejected.remove(&(seat, old));
        }
        order.push_back(id.clone());
        self.rejected.insert((seat, id), body);
    }

    /// Remembers the ids of a stored batch (their keys and seqs).
    fn stored(&mut self, pending: Vec<(IdKey, Seq)>) {
        let start = self.accepted.len();
        self.accepted.extend(pending);
        self.accepted[start..].sort_unstable_by_key(|&(_, seq)| seq);
    }
}
/// An accepted command, serialized for the store and the wire before anything is stored: its
/// record's events and patch, and its diff frame. If any of it cannot be serialized the command
/// fails; no placeholder is ever stored.
#[derive(Debug)]
struct Encoded {
    events: String,
    patch: String,
    diff: Frame,
}

impl Encoded {
    /// `patch`: the JSON of the typed diff from the view before the command to the view after
    /// it (`protocol::diff::match_view_patch_json`), or why it could not be serialized.
    fn new(
        match_id: Uuid,
        seq: Seq,
        patch: Result<String, serde_json::Error>,
        events: Vec<Event>,
    ) -> Result<Encoded, serde_json::Error> {
        let patch = patch?;
        // Sized for a move's events up front: grown from empty, the text is copied at each
        // doubling on the way to its few hundred bytes.
        let mut text = Vec::with_capacity(512);
        serde_json::to_writer(&mut text, &events)?;
        let events = String::from_utf8(text).map_err(serde_json::Error::custom)?;
        // Serialized once: the frame is written around the record's text.
        let diff = diff_frame(match_id, seq, &events, &patch);
        Ok(Encoded {
            events,
            patch,
            diff,
        })
    }
}

thread_local! {
    /// The diff's working buffers, kept by the thread rather than by each match (a few kB
    /// that a quiet match need not hold): a move's patch allocates only its own text.
    static PATCH_WRITER: std::cell::RefCell<protocol::diff::PatchWriter> =
        std::cell::RefCell::default();
}

/// Most defaults one firing applies before the loop looks at its inbox again (a match whose
/// players are all away plays on in steps, never starving its clients).
const MAX_DEFAULTS_PER_BATCH: usize = 64;

/// How long deadlines wait after the server's own commands could not be stored.
const DEADLINE_BACKOFF: Duration = Duration::from_secs(1);

/// A command applied in memory and waiting for its batch to be written.
enum Staged {
    Accepted {
        /// The sender to ack; `None` for the server's own command.
        conn: Option<ConnHandle>,
        id: String,
        seq: Seq,
        /// The `Diff` frame, serialized once for every subscriber.
        diff: Frame,
        arrived: Instant,
    },
    /// An answer that needs no write (a refusal or a repeated id); sent after the batch so that a
    /// client's answers keep the order of its commands.
    Reply {
        conn: ConnHandle,
        id: String,
        frame: Frame,
    },
}

#[derive(Default)]
pub(super) struct Batch {
    staged: Vec<Staged>,
    records: Vec<CommandRow>,
    /// Ids accepted in this batch and not yet stored: their keys and seqs, in seq order.
    pending: Vec<(IdKey, Seq)>,
    finished: bool,
    /// The rules panicked on a command: the game in memory is not trusted any more; the batch
    /// stores what came before, and the match is reloaded from the store.
    poisoned: bool,
}

impl Batch {
    /// An answer for one sender only, sent once the batch is stored.
    fn reply(&mut self, conn: ConnHandle, id: String, frame: Frame) {
        self.staged.push(Staged::Reply { conn, id, frame });
    }

    /// The server failed on a command (a panic in the rules, a serialization failure): the game
    /// in memory is not trusted any more, the command is refused, and the match is reloaded once
    /// what came before it is stored.
    fn fail(&mut self, conn: Option<ConnHandle>, id: String) {
        self.poisoned = true;
        let frame = error_frame(
            ErrorCode::Internal,
            Some(id.clone()),
            "the server failed on this command; nothing was applied",
        );
        if let Some(conn) = conn {
            self.reply(conn, id, frame);
        }
    }
}

/// What staging a command did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Accepted,
    /// The rules refused it.
    Refused,
    /// Not applied for another reason (a repeated id, a finished match, a server failure).
    NotApplied,
}

impl Actor {
    /// Applies a client's command in memory and stages its answer.
    pub(super) fn stage(
        &mut self,
        batch: &mut Batch,
        conn: ConnHandle,
        seat: u8,
        id: String,
        command: Command,
        arrived: Instant,
    ) {
        let State::Ready(l) = &mut self.state else {
            self.handle_failed(ActorMsg::Command(Box::new(CommandMsg {
                conn,
                seat,
                id,
                command,
                arrived,
            })));
            return;
        };
        // Any command from the seat, even one the rules refuse, brings an away player back.
        l.deadlines.come_back(seat);
        self.stage_from(batch, Some(conn), seat, id, command, arrived);
    }

    /// Applies one command in memory, from a client (`conn`) or from the server (`None`), and
    /// stages its answer. The server's refusals are logged: no one waits for them.
    fn stage_from(
        &mut self,
        batch: &mut Batch,
        conn: Option<ConnHandle>,
        seat: u8,
        id: String,
        command: Command,
        arrived: Instant,
    ) -> Outcome {
        let State::Ready(l) = &mut self.state else {
            return Outcome::NotApplied;
        };
        let metrics = &self.registry.metrics;
        let key = (seat, id);
        let reply = |batch: &mut Batch, id: String, frame: Frame| match &conn {
            Some(conn) => batch.reply(conn.clone(), id, frame),
            None => warn!(seat, %id, answer = frame.as_str(), "the server's command not applied"),
        };
        if batch.poisoned {
            metrics.refused(ErrorCode::Busy);
            let frame = error_frame(ErrorCode::Busy, Some(key.1.clone()), "try again");
            reply(batch, key.1, frame);
            return Outcome::NotApplied;
        }
        // A repeated id gets the first answer and changes nothing.
        let idk = id_key(seat, &key.1);
        if let Some(frame) = l.dedupe.answer(self.id, &key, &idk, &batch.pending) {
            metrics.duplicate();
            reply(batch, key.1, frame);
            return Outcome::NotApplied;
        }
        if l.game.is_finished() {
            metrics.refused(ErrorCode::Unavailable);
            let frame = error_frame(
                ErrorCode::Unavailable,
                Some(key.1.clone()),
                "the match is finished",
            );
            reply(batch, key.1, frame);
            return Outcome::NotApplied;
        }
        let command_json = match serde_json::to_string(&command) {
            Ok(s) => s,
            Err(e) => {
                metrics.refused(ErrorCode::Internal);
                let frame = error_frame(ErrorCode::Internal, Some(key.1.clone()), e.to_string());
                reply(batch, key.1, frame);
                return Outcome::NotApplied;
            }
        };
        // One time for the record and for the decisions it opens: a replay reads it back.
        let created_at = Utc::now();
        // The view at `seq`, before the game moves on.
        let before = l.take_view();
        let applied = guarded(|| -> Result<_, rules::RuleError> {
            let events = l.game.apply(seat, command)?;
            Ok((events, l.game.is_finished()))
        });
        let applied = match applied {
            Ok(a) => a,
            Err(panic) => {
                error!(seat, command_id = %key.1, %panic, "the rules panicked on a command");
                metrics.refused(ErrorCode::Internal);
                batch.fail(conn, key.1);
                return Outcome::NotApplied;
            }
        };
        match applied {
            Err(e) => {
                metrics.refused(ErrorCode::Rule);
                let body = ErrorBody::from(&e).with_id(key.1.clone());
                let frame = frame(&ServerMessage::Error(body.clone()));
                if conn.is_some() {
                    l.dedupe.remember_refusal(seat, body);
                }
                l.view = Some(before);
                reply(batch, key.1, frame);
                Outcome::Refused
            }
            Ok((events, finished)) => {
                let seq = l.seq + 1;
                l.deadlines.sync_game(
                    &l.game,
                    created_at.timestamp_millis(),
                    Origin::of(seat, &key.1),
                );
                let view = l.next_view();
                // Placed tiles never change: only the squares placed since the last view can
                // differ, and the differ compares only those.
                let placed: Vec<_> = l.game.placed_since(before.view.board.len()).collect();
                let patch = PATCH_WRITER
                    .with_borrow_mut(|w| w.match_view_patch_json_touched(&before, &view, &placed));
                let encoded = match Encoded::new(self.id, seq, patch, events) {
                    Ok(e) => e,
                    Err(e) => {
                        // Nothing can be stored for it, and the game in memory has moved on:
                        // the command failed, and the match is reloaded from the store once
                        // what came before it in the batch is stored.
                        error!(seat, command_id = %key.1, error = %e, "cannot serialize an accepted command");
                        metrics.refused(ErrorCode::Internal);
                        batch.fail(conn, key.1);
                        return Outcome::NotApplied;
                    }
                };
                l.spare = Some(before);
                l.view = Some(view);
                l.seq = seq;
                l.snapshot = None;
                batch.records.push(CommandRow {
                    seq,
                    seat,
                    command_id: key.1.clone(),
                    command: command_json,
                    events: encoded.events,
                    patch: Some(encoded.patch),
                    created_at,
                });
                let diff = encoded.diff;
                batch.pending.push((idk, seq));
                batch.finished |= finished;
                batch.staged.push(Staged::Accepted {
                    conn,
                    id: key.1,
                    seq,
                    diff,
                    arrived,
                });
                Outcome::Accepted
            }
        }
    }

    /// When the loop must wake for the next deadline, if one is pending.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        let State::Ready(l) = &self.state else {
            return None;
        };
        if self.stopping {
            return None;
        }
        let at = l.deadlines.next_due()?;
        let wait = u64::try_from(at.saturating_sub(now_millis())).unwrap_or(0);
        let when = Instant::now() + Duration::from_millis(wait);
        Some(self.deadline_backoff.map_or(when, |b| when.max(b)))
    }

    /// Whether an idle match may leave memory: nothing pending, or a deadline more than `idle`
    /// away, which the registry's waker then reloads it for (a near one keeps it: cheaper than
    /// a reload).
    pub(super) fn may_leave(&self, idle: Duration) -> bool {
        let State::Ready(l) = &self.state else {
            return true;
        };
        let Some(at) = l.deadlines.next_due() else {
            return true;
        };
        let far = now_millis().saturating_add(i64::try_from(idle.as_millis()).unwrap_or(i64::MAX));
        at > far && self.registry.wake_later(self.id, at)
    }

    /// Applies the default of every decision that is due, as commands of the server (seat: the
    /// decision's player; id: `server:<why>:<seq>`), stored and broadcast like a client's. One
    /// at a time, asking again after each: a default opens the next decision, which for an
    /// away player is due at once (a whole turn goes in one batch). A player whose clock ran
    /// out is marked away.
    pub(super) async fn fire_deadlines(&mut self) {
        let mut batch = Batch::default();
        for _ in 0..MAX_DEFAULTS_PER_BATCH {
            let State::Ready(l) = &mut self.state else {
                break;
            };
            let now = now_millis();
            let Some((decision, why)) = l.deadlines.first_due(now) else {
                break;
            };
            if why == Why::Clock
                && let Some((player, _)) = l.game.default_command(decision)
            {
                info!(player, "the player's clock ran out: marked away");
                l.deadlines.mark_away(player, now);
            }
            self.stage_default(&mut batch, decision, why);
            if batch.poisoned {
                break;
            }
        }
        let stored = self.commit(batch).await;
        self.deadline_backoff = (!stored).then(|| Instant::now() + DEADLINE_BACKOFF);
    }

    /// Stages the default of `decision`; one that cannot be applied (a bug) is logged and not
    /// tried again while the decision stays open.
    fn stage_default(&mut self, batch: &mut Batch, decision: DecisionId, why: Why) {
        let State::Ready(l) = &mut self.state else {
            return;
        };
        let Some((player, command)) = l.game.default_command(decision) else {
            error!(%decision, "a due decision has no default: not fired again");
            l.deadlines.stall(decision);
            return;
        };
        let id = why.command_id(l.seq + 1);
        info!(%decision, player, %id, "due: the server applies the default");
        if self.stage_from(batch, None, player, id, command, Instant::now()) != Outcome::Accepted
            && let State::Ready(l) = &mut self.state
        {
            error!(%decision, "a decision's default was not applied: not fired again");
            l.deadlines.stall(decision);
        }
    }

    /// Persist, then broadcast: writes the batch's records in one transaction, and only when that
    /// succeeded acks and sends the diffs. If the write fails nothing is acknowledged and the
    /// match is reloaded from the store, which is the truth. False: the write failed.
    pub(super) async fn commit(&mut self, mut batch: Batch) -> bool {
        if batch.staged.is_empty() {
            return true;
        }
        // Before any answer of the batch: whoever reads the seats after one sees the marks.
        self.save_away_marks().await;
        let poisoned = batch.poisoned;
        let metrics = &self.registry.metrics;
        if !batch.records.is_empty() {
            let status = batch.finished.then_some(MatchStatus::Finished);
            // The wake time after the batch, in the same transaction when it changed.
            let wake = match &self.state {
                State::Ready(l) => {
                    let due = l.deadlines.next_due();
                    (due != l.stored_wake).then_some(due)
                }
                State::Failed { .. } => None,
            };
            let started = Instant::now();
            let commands = batch.records.len();
            let last_seq = batch.records.last().map(|r| r.seq);
            let append = Append {
                records: std::mem::take(&mut batch.records),
                status,
                wake,
            };
            let written = self.store.write(self.id, append).await;
            metrics.store_commit.record(started.elapsed().as_secs_f64());
            metrics.store_batch.record(commands as f64);
            if let Err(e) = written {
                error!(error = %e, commands, "store write failed");
                for s in batch.staged {
                    let (conn, id) = match s {
                        Staged::Accepted { conn, id, .. } => {
                            metrics.refused(ErrorCode::Internal);
                            (conn, Some(id))
                        }
                        Staged::Reply { conn, id, .. } => (Some(conn), Some(id)),
                    };
                    let Some(conn) = conn else { continue };
                    conn.push(error_frame(
                        ErrorCode::Internal,
                        id,
                        "the store failed; nothing was applied: send the command again",
                    ));
                }
                Box::pin(self.reload()).await;
                return false;
            }
            if batch.finished {
                info!(seq = last_seq, "match finished");
            }
            if let (Some(due), State::Ready(l)) = (wake, &mut self.state) {
                l.stored_wake = due;
            }
        }
        let State::Ready(l) = &mut self.state else {
            return true;
        };
        l.dedupe.stored(batch.pending);
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
                    arrived,
                } => {
                    metrics.accepted();
                    if let Some(conn) = conn {
                        conn.push(ack_frame(&id, self.id, seq));
                        metrics.ack_latency.record(arrived.elapsed().as_secs_f64());
                    }
                    // Slow subscribers are dropped (and told to resync), never waited for.
                    self.subscribers.retain_mut(|sub| sub.deliver(&diff));
                    let m = &self.config.matches;
                    l.window.push(seq, diff, m.diff_window, m.diff_window_bytes);
                }
            }
        }
        if poisoned {
            Box::pin(self.reload()).await;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::PatchOp;

    /// Before the fix a view that failed to serialize became `null` (and a patch to `null` was
    /// stored and acknowledged); now the command fails.
    #[test]
    fn a_serialization_failure_fails_the_command() {
        let failed = Encoded::new(
            Uuid::nil(),
            2,
            Err(serde_json::Error::custom("cannot")),
            Vec::new(),
        );
        assert!(failed.is_err());
        let patch = serde_json::to_string(&[PatchOp::Replace {
            path: "/turn".to_owned(),
            value: serde_json::json!(2),
        }]);
        let ok = Encoded::new(Uuid::nil(), 2, patch, Vec::new());
        let ok = ok.map_err(|e| e.to_string());
        assert!(
            matches!(&ok, Ok(e) if e.patch == r#"[{"op":"replace","path":"/turn","value":2}]"#
                && e.events == "[]"
                && e.diff.as_str().contains(r#""seq":2"#)),
            "{ok:?}"
        );
    }

    /// `Dedupe::answer`, hashing the id as the actor does.
    fn answer(d: &Dedupe, m: Uuid, key: &(u8, String), pending: &[(IdKey, Seq)]) -> Option<Frame> {
        d.answer(m, key, &id_key(key.0, &key.1), pending)
    }

    fn refusal(id: &str) -> ErrorBody {
        ErrorBody::new(ErrorCode::Rule, format!("no {id}")).with_id(id)
    }

    /// A repeated id gets its first answer: the ack of an accepted (or pending) id, the same
    /// error for a refused one; each seat remembers its own last `REJECTED_CACHE` refusals.
    #[test]
    fn dedupe_answers_repeated_ids_and_bounds_refusals_per_seat() {
        let m = Uuid::nil();
        let mut d = Dedupe::new(vec![(id_key(0, "a"), 1)]);
        let pending = vec![(id_key(1, "b"), 2)];
        let ack = |f: Option<Frame>| f.map(|f| f.as_str().to_string()).unwrap_or_default();
        assert!(ack(answer(&d, m, &(0, "a".into()), &pending)).contains(r#""seq":1"#));
        assert!(ack(answer(&d, m, &(1, "b".into()), &pending)).contains(r#""seq":2"#));
        assert_eq!(
            answer(&d, m, &(1, "a".into()), &pending),
            None,
            "ids are per seat"
        );
        for i in 0..REJECTED_CACHE {
            d.remember_refusal(0, refusal(&format!("r{i}")));
        }
        d.remember_refusal(1, refusal("r0"));
        assert!(ack(answer(&d, m, &(0, "r0".into()), &pending)).contains("no r0"));
        d.remember_refusal(0, refusal("one more"));
        assert_eq!(
            answer(&d, m, &(0, "r0".into()), &pending),
            None,
            "the oldest is forgotten"
        );
        assert!(ack(answer(&d, m, &(0, "r1".into()), &pending)).contains("no r1"));
        assert!(ack(answer(&d, m, &(1, "r0".into()), &pending)).contains("no r0"));
        d.stored(pending);
        assert!(ack(answer(&d, m, &(1, "b".into()), &[])).contains(r#""seq":2"#));
    }

    /// Accepted ids are kept as 16-byte keys in seq order, whatever their length: a repeated
    /// id, however old, gets the seq it was first acked with; the same id of another seat, or a
    /// new one, is new.
    #[test]
    fn accepted_ids_take_a_fixed_size_and_keep_their_first_seq() {
        let m = Uuid::nil();
        let long = |i: u64| format!("{i}-{}", "x".repeat(200));
        let mut d = Dedupe::new(vec![(id_key(0, &long(1)), 1)]);
        for batch in 0..10u64 {
            let pending: Vec<_> = (0..10)
                .map(|i| {
                    let seq = 2 + batch * 10 + i;
                    (id_key((seq % 2) as u8, &long(seq)), seq)
                })
                .collect();
            d.stored(pending);
        }
        assert_eq!(d.accepted.len(), 101);
        assert!(d.accepted.windows(2).all(|w| w[0].1 + 1 == w[1].1));
        assert!(
            d.accepted.capacity() * size_of::<(IdKey, Seq)>() <= 2 * 101 * 24,
            "no id is kept whole"
        );
        let empty = [];
        let seq = |f: Option<Frame>| {
            f.and_then(|f| serde_json::from_str::<serde_json::Value>(f.as_str()).ok())
                .and_then(|v| v["seq"].as_u64())
        };
        assert_eq!(seq(answer(&d, m, &(0, long(1)), &empty)), Some(1));
        assert_eq!(seq(answer(&d, m, &(1, long(57)), &empty)), Some(57));
        assert_eq!(
            answer(&d, m, &(0, long(57)), &empty),
            None,
            "another seat's id"
        );
        assert_eq!(answer(&d, m, &(0, long(102)), &empty), None, "a new id");
        assert_ne!(id_key(0, "ab"), id_key(1, "ab"));
        assert_ne!(id_key(0, "ab"), id_key(0, "ab "));
    }
}
