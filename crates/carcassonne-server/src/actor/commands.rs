//! The command pipeline: dedupe → apply → diff → record → persist, then ack and broadcast.
//! A client's command and the server's own (a decision's default at its deadline) take the same
//! path; the server's has no one to ack and an id `server:<why>:<seq>` (see `timers::Why`).

use super::dedupe::{IdKey, id_key};
use super::guard::guarded;
use super::timers::Origin;
use super::{Actor, ActorMsg, ActorState, CommandMsg};
use crate::outbox::{self, ConnHandle, Publication};
use crate::store::{Append, CommandRow, MatchStatus};
use crate::wire::{Frame, ack_frame, diff_frame, error_frame, frame};
use chrono::Utc;
use protocol::{ErrorBody, ErrorCode, Seq, ServerMessage, ServerMove};
use rules::{Command, Event};
use serde::ser::Error as _;
use tokio::time::Instant;
use tracing::{error, info, warn};
use uuid::Uuid;

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
        by_server: Option<ServerMove>,
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
        let diff = diff_frame(match_id, seq, by_server, &events, &patch);
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
    pub(super) poisoned: bool,
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
pub(super) enum Outcome {
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
        let ActorState::Ready(loaded) = &mut self.state else {
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
        loaded.deadlines.come_back(seat);
        self.stage_from(batch, Some(conn), seat, id, command, arrived);
    }

    /// Applies one command in memory, from a client (`conn`) or from the server (`None`), and
    /// stages its answer. The server's refusals are logged: no one waits for them.
    pub(super) fn stage_from(
        &mut self,
        batch: &mut Batch,
        conn: Option<ConnHandle>,
        seat: u8,
        id: String,
        command: Command,
        arrived: Instant,
    ) -> Outcome {
        let ActorState::Ready(loaded) = &mut self.state else {
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
        if let Some(frame) = loaded.dedupe.answer(self.id, &key, &idk, &batch.pending) {
            metrics.duplicate();
            reply(batch, key.1, frame);
            return Outcome::NotApplied;
        }
        if loaded.game.is_finished() {
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
        let before = loaded.views.take(&loaded.game, &loaded.deadlines);
        let applied = guarded(|| -> Result<_, rules::RuleError> {
            let events = loaded.game.apply(seat, command)?;
            Ok((events, loaded.game.is_finished()))
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
                    loaded.dedupe.remember_refusal(seat, body);
                }
                loaded.views.put_back(before);
                reply(batch, key.1, frame);
                Outcome::Refused
            }
            Ok((events, finished)) => {
                let seq = loaded.seq + 1;
                loaded.deadlines.sync_game(
                    &loaded.game,
                    created_at.timestamp_millis(),
                    Origin::of(seat, &key.1),
                );
                let view = loaded.views.next(&loaded.game, &loaded.deadlines);
                // Placed tiles never change: only the squares placed since the last view can
                // differ, and the differ compares only those.
                let placed: Vec<_> = loaded.game.placed_since(before.view.board.len()).collect();
                let patch = PATCH_WRITER
                    .with_borrow_mut(|w| w.match_view_patch_json_touched(&before, &view, &placed));
                // A client's id never starts with `server:` (refused at the gate).
                let by_server = ServerMove::of(&key.1);
                let encoded = match Encoded::new(self.id, seq, by_server, patch, events) {
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
                loaded.views.advanced(before, view);
                loaded.seq = seq;
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
                ActorState::Ready(loaded) => {
                    let due = loaded.deadlines.next_due();
                    (due != loaded.stored_wake).then_some(due)
                }
                ActorState::Failed { .. } => None,
            };
            let started = Instant::now();
            let commands = batch.records.len();
            let last_seq = batch.records.last().map(|r| r.seq);
            let append = Append {
                records: std::mem::take(&mut batch.records),
                status,
                wake,
                fence: self.fence.clone(),
            };
            let written = self.store.write(self.id, append).await;
            metrics.store_commit.record(started.elapsed().as_secs_f64());
            metrics.store_batch.record(commands as f64);
            if let Err(e) = written {
                let fenced = matches!(e, crate::store::StoreError::Fenced { .. });
                let (code, message) = if fenced {
                    (ErrorCode::Unavailable, super::MOVED)
                } else if e.is_outage() {
                    error!(error = %e, commands, "store unreachable");
                    (
                        ErrorCode::Unavailable,
                        "the store is not reachable; nothing was applied: send the command again",
                    )
                } else {
                    error!(error = %e, commands, "store write failed");
                    (
                        ErrorCode::Internal,
                        "the store failed; nothing was applied: send the command again",
                    )
                };
                for s in batch.staged {
                    let (conn, id) = match s {
                        Staged::Accepted { conn, id, .. } => {
                            metrics.refused(code);
                            (conn, Some(id))
                        }
                        Staged::Reply { conn, id, .. } => (Some(conn), Some(id)),
                    };
                    let Some(conn) = conn else { continue };
                    conn.push(error_frame(code, id, message));
                }
                if fenced {
                    // Another node runs the match now: nothing here is the truth any more.
                    self.moved();
                } else {
                    Box::pin(self.reload()).await;
                }
                return false;
            }
            if batch.finished {
                info!(seq = last_seq, "match finished");
                self.registry.ended(self.id);
            }
            if let (Some(due), ActorState::Ready(loaded)) = (wake, &mut self.state) {
                loaded.stored_wake = due;
            }
        }
        let ActorState::Ready(loaded) = &mut self.state else {
            return true;
        };
        loaded.dedupe.stored(batch.pending);
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
                    let mut riding = None;
                    if let Some(conn) = conn {
                        let ack = ack_frame(&id, self.id, seq);
                        // A connection of another node that follows the publications gets its
                        // ack with the diff, so that its node hands it over before the diff.
                        if self.publisher.is_some()
                            && outbox::is_stand_in(conn.id)
                            && self
                                .subscribers
                                .iter()
                                .any(|s| s.conn.id == conn.id && s.follows_publications())
                        {
                            riding = Some((conn.id, ack));
                        } else {
                            conn.push(ack);
                        }
                        metrics.ack_latency.record(arrived.elapsed().as_secs_f64());
                    }
                    // Slow subscribers are dropped (and told to resync), never waited for.
                    self.subscribers.retain_mut(|sub| sub.deliver(&diff));
                    if let Some(p) = &self.publisher {
                        let publication = Publication {
                            diff: diff.clone(),
                            ack: riding,
                        };
                        if !p.publish(publication) {
                            // Publishing lags: the other nodes' connections are told to
                            // reconnect (with `since`), and publishing starts again with them.
                            self.publisher = None;
                            self.subscribers.retain(|s| {
                                if s.relayed {
                                    s.conn.close_too_slow();
                                }
                                !s.relayed
                            });
                        }
                    }
                    let m = &self.config.matches;
                    loaded
                        .window
                        .push(seq, diff, m.diff_window, m.diff_window_bytes);
                }
            }
        }
        if self.publisher.is_some() && !self.subscribers.iter().any(|s| s.relayed) {
            self.publisher = None;
        }
        // Who a decision waits for now, for the your-turn notices (a finished match: no one).
        let seq = loaded.seq;
        let views = &loaded.views;
        let match_id = self.id;
        self.registry.turn(|| {
            Some(crate::webhooks::TurnState {
                match_id,
                seq,
                waiting: views.waiting()?,
            })
        });
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

    /// A view that fails to serialize fails the command: nothing (no `null` patch) is stored or
    /// acknowledged.
    #[test]
    fn a_serialization_failure_fails_the_command() {
        let failed = Encoded::new(
            Uuid::nil(),
            2,
            None,
            Err(serde_json::Error::custom("cannot")),
            Vec::new(),
        );
        assert!(failed.is_err());
        let patch = serde_json::to_string(&[PatchOp::Replace {
            path: "/turn".to_owned(),
            value: serde_json::json!(2),
        }]);
        let ok = Encoded::new(Uuid::nil(), 2, None, patch, Vec::new());
        let ok = ok.map_err(|e| e.to_string());
        assert!(
            matches!(&ok, Ok(e) if e.patch == r#"[{"op":"replace","path":"/turn","value":2}]"#
                && e.events == "[]"
                && e.diff.as_str().contains(r#""seq":2"#)),
            "{ok:?}"
        );
    }
}
