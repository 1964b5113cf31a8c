//! The edge's side of a match's published diffs. A node whose connections follow a match owned
//! elsewhere subscribes once to the match's subject and hands each diff to them: the diff
//! crosses NATS once for the node, however many of its connections follow.
//!
//! What is a connection's own still travels on its relay: its answers, and its resume (a
//! subscription with `since` goes to the owner, whose actor sends the snapshot or the diffs it
//! lacks, then a live mark: "it has everything up to seq N"). From its subscription to that mark
//! the diffs published meanwhile are held for it; after the mark it gets those after N, then
//! each new one. Each connection's last seq is kept: a diff at or below it is skipped, and one
//! beyond the next (a publication lost on the way) holds it again while the owner resumes it
//! from its last seq. So a connection sees every diff once, in order, whichever of the two
//! subjects brings it first.
//!
//! An ack riding with a diff (the command of a connection here that follows the match) is handed
//! to its connection before the diff.

use super::forward::{ACK, ACK_CONN, ACK_EDGE, Forward, Op, Reply};
use super::{Cluster, lock};
use crate::outbox::ConnHandle;
use crate::wire::{Frame, diff_seq};
use futures_util::StreamExt;
use metrics::Counter;
use protocol::Seq;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use tokio::task::JoinHandle;
use tracing::debug;
use uuid::Uuid;

/// Published diffs held for a connection while it resumes; beyond this it is too slow.
const MAX_HELD: usize = 1024;

/// One match's followers on this node: shared by its proxy (who follows), the relay (the live
/// marks) and the task that reads the match's subject (the diffs).
#[derive(Debug)]
pub(super) struct Followers {
    match_id: Uuid,
    /// The node the proxy forwards to: a resume goes there.
    owner: Arc<str>,
    cluster: Weak<Cluster>,
    fanned_out: Counter,
    by_conn: Mutex<HashMap<u64, Follower>>,
}

#[derive(Debug)]
struct Follower {
    conn: ConnHandle,
    /// The last seq it was given (by a live mark or a diff); `None` before its first mark.
    last: Option<Seq>,
    /// Resumes asked for it and not marked live yet: while any is, diffs are held.
    pending: u32,
    /// The diffs published while it resumes, in the order they came.
    held: Vec<(Seq, Frame)>,
}

/// What handing a diff to a live follower came to.
enum Handed {
    /// Queued, or skipped as one it has.
    Done,
    /// Beyond the next: held, and it must resume from its last seq.
    Gap,
    /// Its connection is gone or too slow.
    Gone,
}

impl Follower {
    fn hand(&mut self, seq: Seq, diff: Frame, fanned_out: &Counter) -> Handed {
        let Some(last) = self.last else {
            self.held.push((seq, diff));
            return Handed::Done;
        };
        if seq <= last {
            return Handed::Done;
        }
        if seq > last + 1 {
            self.held.push((seq, diff));
            return Handed::Gap;
        }
        if !self.conn.push(diff) {
            return Handed::Gone;
        }
        fanned_out.increment(1);
        self.last = Some(seq);
        Handed::Done
    }

    /// Holds a diff while it resumes; false when it holds too many (then it is too slow).
    fn hold(&mut self, seq: Seq, diff: Frame) -> bool {
        if self.held.len() >= MAX_HELD {
            self.conn.close_too_slow();
            return false;
        }
        self.held.push((seq, diff));
        true
    }

    /// Hands over what was held, in order, until a gap (the rest stays held).
    fn flush(&mut self, fanned_out: &Counter) -> Handed {
        let held = std::mem::take(&mut self.held);
        let mut rest = held.into_iter();
        while let Some((seq, diff)) = rest.next() {
            match self.hand(seq, diff, fanned_out) {
                Handed::Done => {}
                Handed::Gap => {
                    self.held.extend(rest);
                    return Handed::Gap;
                }
                Handed::Gone => return Handed::Gone,
            }
        }
        Handed::Done
    }
}

impl Followers {
    /// A connection asks the owner for its resume (or its first view): diffs are held for it
    /// until the resume's live mark.
    pub(super) fn follow(&self, conn: &ConnHandle) {
        let mut by_conn = lock(&self.by_conn);
        let f = by_conn.entry(conn.id).or_insert_with(|| Follower {
            conn: conn.clone(),
            last: None,
            pending: 0,
            held: Vec::new(),
        });
        f.pending += 1;
    }

    /// The connection left the match; true when nobody here follows it any more.
    pub(super) fn unfollow(&self, conn_id: u64) -> bool {
        let mut by_conn = lock(&self.by_conn);
        by_conn.remove(&conn_id);
        by_conn.is_empty()
    }

    /// The owner turned a resume away (its match's inbox was full; the client was told): the
    /// connection goes on from where it was, or, never marked live, follows nothing.
    pub(super) fn refused(&self, conn_id: u64) {
        self.settle(conn_id, None);
    }

    /// The live mark of a connection: it has every diff up to `seq`.
    pub(super) fn live(&self, conn_id: u64, seq: Seq) {
        self.settle(conn_id, Some(seq));
    }

    /// One pending resume ends (marked live at `mark`, or refused); when none is left, what
    /// was held is handed over.
    fn settle(&self, conn_id: u64, mark: Option<Seq>) {
        let mut by_conn = lock(&self.by_conn);
        let Some(f) = by_conn.get_mut(&conn_id) else {
            return;
        };
        f.pending = f.pending.saturating_sub(1);
        if let Some(seq) = mark {
            f.last = Some(f.last.map_or(seq, |l| l.max(seq)));
        }
        if f.pending > 0 {
            return;
        }
        if f.last.is_none() {
            by_conn.remove(&conn_id);
            return;
        }
        match f.flush(&self.fanned_out) {
            Handed::Done => {}
            Handed::Gap => self.resume(f),
            Handed::Gone => {
                by_conn.remove(&conn_id);
            }
        }
    }

    /// A published diff: its ack first (to a connection of this process), then the diff to each
    /// follower, held for those that resume.
    fn publication(&self, msg: async_nats::Message) {
        if let Some(headers) = &msg.headers {
            self.ack(headers);
        }
        let Some(seq) = diff_seq(&msg.payload) else {
            debug!("not a diff on a match's subject");
            return;
        };
        let Some(diff) = Frame::from_utf8(msg.payload) else {
            return;
        };
        let mut by_conn = lock(&self.by_conn);
        let mut gone = Vec::new();
        for (id, f) in by_conn.iter_mut() {
            if f.pending > 0 {
                if !f.hold(seq, diff.clone()) {
                    gone.push(*id);
                }
                continue;
            }
            match f.hand(seq, diff.clone(), &self.fanned_out) {
                Handed::Done => {}
                Handed::Gap => self.resume(f),
                Handed::Gone => gone.push(*id),
            }
        }
        for id in gone {
            by_conn.remove(&id);
        }
    }

    /// Hands a riding ack to its connection, if it is one of this process's.
    fn ack(&self, headers: &async_nats::HeaderMap) {
        let Some(cluster) = self.cluster.upgrade() else {
            return;
        };
        if headers.get(ACK_EDGE).map(|e| e.as_str()) != Some(&*cluster.edge) {
            return;
        }
        let conn = headers.get(ACK_CONN).and_then(|c| c.as_str().parse().ok());
        let frame = headers
            .get(ACK)
            .and_then(|a| Frame::from_utf8(bytes::Bytes::copy_from_slice(a.as_str().as_bytes())));
        let (Some(conn), Some(frame)) = (conn, frame) else {
            return;
        };
        let route = lock(&cluster.routes).get(&(self.match_id, conn)).cloned();
        if let Some(route) = route {
            route.push(frame);
        }
    }

    /// Asks the owner to resume `f` from its last seq; diffs are held for it meanwhile. If the
    /// owner does not take it, the client is told to reconnect (and resumes with `since`).
    fn resume(&self, f: &mut Follower) {
        let Some(cluster) = self.cluster.upgrade() else {
            return;
        };
        f.pending += 1;
        cluster.meters.edge_resumes.increment(1);
        let forward = Forward {
            match_id: self.match_id,
            edge: cluster.edge.to_string(),
            conn: f.conn.id,
            op: Op::Subscribe { since: f.last },
        };
        let (owner, conn) = (Arc::clone(&self.owner), f.conn.clone());
        debug!(conn = conn.id, since = ?f.last, "a published diff missed: resuming");
        tokio::spawn(async move {
            if !matches!(cluster.forward(&owner, &forward).await, Ok(Reply::Queued)) {
                conn.close_moved();
            }
        });
    }
}

/// A proxy's subscription to its match's diffs, while some connection here follows the match:
/// registered for the relay's marks, read by a task of its own; dropped, it ends both.
#[derive(Debug)]
pub(super) struct Fanout {
    pub(super) followers: Arc<Followers>,
    task: JoinHandle<()>,
}

impl Fanout {
    /// Subscribes to the match's subject (before the first resume is forwarded, so that no diff
    /// published after it is missed) and starts reading it.
    pub(super) async fn start(
        cluster: &Arc<Cluster>,
        match_id: Uuid,
        owner: Arc<str>,
    ) -> Result<Fanout, async_nats::SubscribeError> {
        let mut diffs = cluster
            .nats
            .subscribe(cluster.subjects.match_diffs(match_id))
            .await?;
        let followers = Arc::new(Followers {
            match_id,
            owner,
            cluster: Arc::downgrade(cluster),
            fanned_out: cluster.meters.fanned_out.clone(),
            by_conn: Mutex::default(),
        });
        lock(&cluster.fanouts).insert(match_id, Arc::clone(&followers));
        let reader = Arc::clone(&followers);
        let task = tokio::spawn(async move {
            while let Some(msg) = diffs.next().await {
                reader.publication(msg);
            }
        });
        Ok(Fanout { followers, task })
    }
}

impl Drop for Fanout {
    fn drop(&mut self) {
        // The subscription goes with the task.
        self.task.abort();
        let Some(cluster) = self.followers.cluster.upgrade() else {
            return;
        };
        let mut fanouts = lock(&cluster.fanouts);
        let id = self.followers.match_id;
        if fanouts
            .get(&id)
            .is_some_and(|f| Arc::ptr_eq(f, &self.followers))
        {
            fanouts.remove(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outbox::{Receiver, channel};

    fn follower(room: usize) -> (Follower, Receiver) {
        let (tx, rx) = channel(room);
        let conn = ConnHandle::new(1, tx, Arc::default());
        let f = Follower {
            conn,
            last: None,
            pending: 1,
            held: Vec::new(),
        };
        (f, rx)
    }

    fn diff(seq: Seq) -> Frame {
        Frame::from(format!("d{seq}"))
    }

    fn received(rx: &mut Receiver) -> Vec<String> {
        std::iter::from_fn(|| rx.try_recv())
            .map(|f| f.as_str().to_owned())
            .collect()
    }

    /// After its mark a follower gets the held diffs after the mark, in order; a diff it has is
    /// skipped; one beyond the next is a gap, held with what follows until the next mark.
    #[test]
    fn diffs_follow_the_mark_once_in_order_and_a_gap_waits() {
        let counter = Counter::noop();
        let (mut f, mut rx) = follower(16);
        for seq in [4, 5, 6, 7] {
            assert!(f.hold(seq, diff(seq)));
        }
        (f.pending, f.last) = (0, Some(5));
        assert!(matches!(f.flush(&counter), Handed::Done));
        assert_eq!(received(&mut rx), ["d6", "d7"]);
        assert!(matches!(f.hand(7, diff(7), &counter), Handed::Done));
        assert!(matches!(f.hand(9, diff(9), &counter), Handed::Gap));
        assert!(f.hold(10, diff(10)));
        assert_eq!(received(&mut rx), Vec::<String>::new());
        // The resume's mark: everything up to 9.
        f.last = Some(9);
        assert!(matches!(f.flush(&counter), Handed::Done));
        assert_eq!(received(&mut rx), ["d10"]);
        assert_eq!(f.last, Some(10));
        // A gap while flushing keeps the rest.
        for seq in [12, 13] {
            assert!(f.hold(seq, diff(seq)));
        }
        assert!(matches!(f.flush(&counter), Handed::Gap));
        assert_eq!(f.held.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [12, 13]);
    }

    /// A follower that reads nothing is dropped, never waited for: a full queue, or too many
    /// diffs held while it resumes.
    #[test]
    fn a_slow_follower_is_dropped() {
        let counter = Counter::noop();
        let (mut f, _rx) = follower(2);
        f.last = Some(0);
        assert!(matches!(f.hand(1, diff(1), &counter), Handed::Done));
        assert!(matches!(f.hand(2, diff(2), &counter), Handed::Done));
        assert!(matches!(f.hand(3, diff(3), &counter), Handed::Gone));
        let (mut f, _rx) = follower(2);
        for seq in 1..=MAX_HELD as Seq {
            assert!(f.hold(seq, diff(seq)));
        }
        assert!(!f.hold(MAX_HELD as Seq + 1, diff(0)));
        assert!(f.conn.is_gone());
    }
}
