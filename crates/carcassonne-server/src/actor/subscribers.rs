//! Subscriptions: the diff window, resumes from memory or from the store (streamed by a
//! [`CatchUp`] task as the client's queue drains), snapshots, and what a quiet match drops.
//!
//! Cluster mode: a subscriber may be the stand-in of another node's connection. Its resume goes
//! through its stand-in as any other's, and ends with a live mark (the seq it has everything up
//! to); its live diffs then reach its node in the match's publications, once for every node and
//! connection ([`crate::outbox::Publisher`]), which that node fans out.

use super::{Actor, ActorMsg, ActorState, Loaded};
use crate::meters::ResumeKind;
use crate::outbox::{self, ConnHandle};
use crate::store::Store;
use crate::wire::{Frame, frame, live_mark};
use protocol::{PatchOp, Seq, ServerMessage};
use rules::Event;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OwnedSemaphorePermit;
use tracing::{Instrument, debug};
use uuid::Uuid;

/// Live diffs held for a subscriber while its older diffs are read from the store; beyond this
/// it is dropped as too slow.
const MAX_CATCH_UP_BUFFER: usize = 1024;

/// The last diffs of a match, oldest first, for resumes from memory: at most `max_len` of them
/// and at most `max_bytes` of frames (the frames are most of a live match's memory, ≈ 900 bytes
/// a move, so the byte budget is what bounds it). Older resumes are read from the store.
#[derive(Debug, Default)]
pub(super) struct Window {
    frames: VecDeque<(Seq, Frame)>,
    /// The frames' bytes.
    bytes: usize,
}

impl Window {
    /// Adds the diff of `seq` (the next seq), then forgets the oldest diffs beyond the bounds;
    /// a diff alone larger than `max_bytes` is not kept (nor any before it).
    pub(super) fn push(&mut self, seq: Seq, diff: Frame, max_len: usize, max_bytes: usize) {
        self.bytes += diff.len();
        self.frames.push_back((seq, diff));
        while self.frames.len() > max_len || self.bytes > max_bytes {
            match self.frames.pop_front() {
                Some((_, f)) => self.bytes -= f.len(),
                None => break,
            }
        }
    }

    /// The window holds every diff after `since`.
    fn covers(&self, since: Seq) -> bool {
        self.frames
            .front()
            .is_some_and(|(first, _)| *first <= since + 1)
    }

    /// The diffs after `since`.
    fn after(&self, since: Seq) -> Vec<Frame> {
        self.frames
            .iter()
            .filter(|(q, _)| *q > since)
            .map(|(_, f)| f.clone())
            .collect()
    }

    /// Forgets every diff and frees the memory.
    pub(super) fn clear(&mut self) {
        *self = Window::default();
    }
}

/// The snapshot frame at the current seq, built once per seq.
fn snapshot_frame(match_id: Uuid, loaded: &mut Loaded) -> Frame {
    loaded
        .views
        .snapshot(match_id, loaded.seq, &loaded.game, &loaded.deadlines)
}

/// Where a catch-up takes the diffs it streams.
enum CatchUpSource {
    /// Already in memory (from the diff window).
    Frames(Vec<Frame>),
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
    inbox: crate::queue::Sender<ActorMsg>,
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
    async fn frames(&self, source: CatchUpSource) -> Result<Vec<Frame>, String> {
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
                    by_server: protocol::ServerMove::of(&row.command_id),
                    events,
                    patch,
                }))
            })
            .collect()
    }
}

pub(super) struct Subscriber {
    pub(super) conn: ConnHandle,
    /// A stand-in of another node's connection: its live diffs go out in the match's
    /// publications, never through its own queue.
    pub(super) relayed: bool,
    /// While its older diffs are read from the store: the resume's token and the live diffs
    /// that arrived meanwhile, sent after them (none for a relayed one: its node holds them).
    catch_up: Option<(u64, Vec<Frame>)>,
}

impl Subscriber {
    fn new(conn: ConnHandle, catch_up: Option<(u64, Vec<Frame>)>) -> Subscriber {
        Subscriber {
            relayed: outbox::is_stand_in(conn.id),
            conn,
            catch_up,
        }
    }

    /// Whether its diffs reach it through the publications now (its resume is over): an ack for
    /// it may then ride with the diff it answers.
    pub(super) fn follows_publications(&self) -> bool {
        self.relayed && self.catch_up.is_none()
    }

    /// Delivers a live diff, or holds it during a catch-up. False: drop this subscriber.
    pub(super) fn deliver(&mut self, diff: &Frame) -> bool {
        if self.relayed {
            // Published for its node; kept while its stand-in is read.
            return !self.conn.is_gone();
        }
        match &mut self.catch_up {
            None => self.conn.push(diff.clone()),
            Some((_, held)) if held.len() < MAX_CATCH_UP_BUFFER => {
                held.push(diff.clone());
                true
            }
            Some(_) => {
                self.conn.close_too_slow();
                false
            }
        }
    }
}

impl Actor {
    /// Sends what a subscriber lacks: nothing when it is up to date, the diffs after `since`
    /// from memory or (further back) from the store, or a snapshot when `since` is absent, ahead
    /// of us, or so old that a snapshot is cheaper.
    pub(super) fn subscribe(&mut self, conn: ConnHandle, since: Option<Seq>) {
        self.subscribers.retain(|sub| sub.conn.id != conn.id);
        if outbox::is_stand_in(conn.id) && self.publisher.is_none() {
            // Before its resume is answered: every diff after it is published.
            self.publisher = self.registry.cluster().map(|c| c.publisher(self.id));
        }
        if let Some(kind) = self.catch_up(conn, since) {
            self.registry.metrics.resumed(kind);
        }
    }

    /// Brings `conn` from `since` to the current seq and makes it a live subscriber: at once when
    /// what it lacks fits in its queue, else through a [`CatchUp`] task that streams the diffs
    /// as the queue drains while live diffs are held for it. Says what served it (`None` when
    /// the match is not loaded).
    fn catch_up(&mut self, conn: ConnHandle, since: Option<Seq>) -> Option<ResumeKind> {
        let ActorState::Ready(loaded) = &mut self.state else {
            return None;
        };
        let seq = loaded.seq;
        let kind = match since {
            Some(s) if s == seq => ResumeKind::Current,
            Some(s) if s < seq && loaded.window.covers(s) => ResumeKind::Window,
            Some(s) if s < seq && seq - s <= self.config.matches.max_store_resume => {
                ResumeKind::Store
            }
            _ => ResumeKind::Snapshot,
        };
        let source = match (kind, since) {
            (ResumeKind::Current, _) => None,
            (ResumeKind::Window, Some(s)) => {
                let frames = loaded.window.after(s);
                if frames.len() > conn.room() {
                    Some(CatchUpSource::Frames(frames))
                } else if frames.into_iter().all(|f| conn.push(f)) {
                    None
                } else {
                    return Some(kind);
                }
            }
            (ResumeKind::Store, Some(s)) => {
                // A free resume slot, else a snapshot: a flood of resumes must not tie up the
                // store that every match writes to.
                match Arc::clone(&self.registry.resume_slots).try_acquire_owned() {
                    Ok(slot) => Some(CatchUpSource::Store {
                        store: self.store.clone(),
                        after: s,
                        slot,
                    }),
                    Err(_) if conn.push(snapshot_frame(self.id, loaded)) => {
                        return self.subscribed(conn, ResumeKind::Snapshot, seq);
                    }
                    Err(_) => return Some(ResumeKind::Snapshot),
                }
            }
            _ if conn.push(snapshot_frame(self.id, loaded)) => None,
            _ => return Some(kind),
        };
        let (source, inbox) = match (source, self.inbox.upgrade()) {
            (Some(source), Some(inbox)) => (source, inbox),
            (None, _) => return self.subscribed(conn, kind, seq),
            // Retiring: nothing may reach this actor any more, and neither will this answer.
            (Some(_), None) => return Some(kind),
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
            patience: self.config.conn.write_timeout,
        };
        tokio::spawn(task.run().in_current_span());
        self.subscribers
            .push(Subscriber::new(conn, Some((token, Vec::new()))));
        Some(kind)
    }

    /// `conn` is up to date at `seq`: a live subscriber from now on (a relayed one is told so).
    fn subscribed(&mut self, conn: ConnHandle, kind: ResumeKind, seq: Seq) -> Option<ResumeKind> {
        let sub = Subscriber::new(conn, None);
        if !sub.relayed || sub.conn.push(live_mark(seq)) {
            self.subscribers.push(sub);
        }
        Some(kind)
    }

    /// Stops publishing once no connection of another node follows the match.
    pub(super) fn unpublish_if_unfollowed(&mut self) {
        if self.publisher.is_some() && !self.subscribers.iter().any(|s| s.relayed) {
            self.publisher = None;
        }
    }

    /// Ends a catch-up: the live diffs held meanwhile follow (or, when they no longer fit at
    /// once, another round streams them). If the store could not serve it, a snapshot instead.
    pub(super) fn caught_up(&mut self, conn_id: u64, token: u64, outcome: CatchUpOutcome) {
        let Some(pos) = self.subscribers.iter().position(|sub| {
            sub.conn.id == conn_id && matches!(sub.catch_up, Some((t, _)) if t == token)
        }) else {
            // Unsubscribed or resubscribed meanwhile. The node of a relayed one counts a mark
            // for each of its resumes: this one's says nothing (the later resume's is as high).
            if let Some(sub) = self.subscribers.iter().find(|s| s.conn.id == conn_id)
                && sub.relayed
            {
                sub.conn.push(live_mark(0));
            }
            return;
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
                if let ActorState::Ready(loaded) = &mut self.state
                    && sub.conn.push(snapshot_frame(self.id, loaded))
                    && (!sub.relayed || sub.conn.push(live_mark(loaded.seq)))
                {
                    self.subscribers.push(sub);
                }
            }
            CatchUpOutcome::Sent { upto } => {
                if held.len() > sub.conn.room() {
                    // Another round of the same resume: not counted again.
                    let _ = self.catch_up(sub.conn, Some(upto));
                } else if held.into_iter().all(|f| sub.conn.push(f))
                    && (!sub.relayed || sub.conn.push(live_mark(upto)))
                {
                    self.subscribers.push(sub);
                }
            }
        }
    }

    /// Forgets the subscribers whose connection is gone, and drops what only speeds up the next
    /// move or subscription: the views (the next command
    /// builds the one at `seq` from the game), the cached snapshot, what the game's vectors
    /// reserved beyond their length, and, when nobody follows the match, the diff window (a
    /// player who comes back resumes from the store). A followed match keeps its window: its
    /// players are the ones who reconnect after a network blip, all at once.
    pub(super) fn drop_spares(&mut self) {
        self.subscribers.retain(|sub| !sub.conn.is_gone());
        self.unpublish_if_unfollowed();
        if let ActorState::Ready(loaded) = &mut self.state {
            loaded.views.clear();
            loaded.game.shrink_to_fit();
            if self.subscribers.is_empty() {
                loaded.window.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(seq: Seq, len: usize) -> Frame {
        Frame::from(format!("{seq:>len$}"))
    }

    /// The window keeps the newest diffs within both bounds: a count, and the frames' bytes.
    #[test]
    fn the_window_is_bounded_by_count_and_by_bytes() {
        let mut w = Window::default();
        for seq in 1..=10 {
            w.push(seq, diff(seq, 100), 4, 1_000);
        }
        assert_eq!(w.after(0).len(), 4, "the count bounds it");
        assert!(w.covers(6) && !w.covers(5));
        assert_eq!(w.bytes, 400);
        for seq in 11..=20 {
            w.push(seq, diff(seq, 300), 64, 1_000);
        }
        assert_eq!(w.after(0).len(), 3, "the bytes bound it");
        assert_eq!(w.bytes, 900);
        assert!(w.covers(17) && !w.covers(16));
        assert_eq!(
            w.after(18).iter().map(Frame::as_str).collect::<Vec<_>>(),
            [format!("{:>300}", 19), format!("{:>300}", 20)]
        );
        // One diff over the budget: nothing is kept, and a resume goes to the store.
        w.push(21, diff(21, 1_001), 64, 1_000);
        assert_eq!((w.after(0).len(), w.bytes), (0, 0));
        assert!(!w.covers(20));
        w.push(22, diff(22, 10), 64, 1_000);
        assert!(w.covers(21) && !w.covers(20));
        w.clear();
        assert_eq!((w.after(0).len(), w.bytes), (0, 0));
    }
}
