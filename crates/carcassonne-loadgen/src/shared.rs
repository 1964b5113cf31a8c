//! What the seats of one match share: the commands in flight, the fill budget, and one mirror
//! of the match's view that the first reader of each diff applies and the others check.

use crate::error::LoadError;
use crate::frame::{FrameOp, PatchOnly, parse};
use client::{Mirror, TextFrame};
use protocol::{PatchOp, Seq, ServerMessage};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// The last commands sent in a match: the seq each should get and when it was sent (a few, since
/// a seat may send the next command before the others have read the previous diff).
pub(crate) type InFlight = Arc<MatchShared>;

/// What the seats of one match share.
#[derive(Debug, Default)]
pub(crate) struct MatchShared {
    /// The match's recently sent commands: (the seq they will get, when they were sent).
    pub(crate) sent: Mutex<VecDeque<(Seq, Instant)>>,
    /// Fill mode: moves the match may still be sent; the seat that finds none left says so.
    pub(crate) budget: Option<AtomicU64>,
    /// Woken when the budget is spent.
    pub(crate) spent: tokio::sync::Notify,
    /// The match's public view, which is the same for every seat.
    pub(crate) view: Mutex<SharedView>,
}

/// One mirror of the view for all the seats of a match: the first seat to read a diff applies
/// it; every other seat, reading the same diff on its own connection later, checks that it
/// follows its previous one and that it is the diff applied, byte for byte (or, if the bytes
/// differ, the same patch). So each diff is parsed and applied once per match, not per seat.
#[derive(Debug, Default)]
pub(crate) struct SharedView {
    pub(crate) mirror: Option<Mirror>,
    /// Seats of the match.
    pub(crate) seats: usize,
    /// Diffs applied that some seat has not read yet: seq, frame, seats still to read it.
    pub(crate) unread: VecDeque<(Seq, TextFrame, usize)>,
}

/// The seq of the last snapshot or diff a seat's connection delivered (its own stream).
pub(crate) type Seen = Option<Seq>;

impl SharedView {
    /// A snapshot read by a seat: the first one fills the mirror; another seat's must be at the
    /// same seq and hold the same view.
    pub(crate) fn snapshot(
        &mut self,
        seen: &mut Seen,
        msg: &ServerMessage,
    ) -> Result<(), LoadError> {
        let ServerMessage::Snapshot { match_id, seq, .. } = msg else {
            return Ok(());
        };
        let mut own = Mirror::new(*match_id);
        own.apply(msg)?;
        match &self.mirror {
            None => self.mirror = Some(own),
            Some(m) if m.seq() == Some(*seq) && m.view() == own.view() => {}
            Some(m) => {
                return Err(LoadError::Frame(format!(
                    "snapshot at seq {seq} differs from the match's view at {:?}",
                    m.seq()
                )));
            }
        }
        *seen = Some(*seq);
        Ok(())
    }

    /// Diff `seq` read by a seat: applied if it is the match's next one, else checked against
    /// the one applied. Either way it must follow the seat's previous diff.
    pub(crate) fn diff(
        &mut self,
        seen: &mut Seen,
        seq: Seq,
        text: TextFrame,
        patch: Option<Vec<FrameOp>>,
    ) -> Result<(), LoadError> {
        let have = seen.ok_or(client::MirrorError::NoSnapshot { got: seq })?;
        if have.checked_add(1) != Some(seq) {
            return Err(client::MirrorError::Gap { have, got: seq }.into());
        }
        let mirror = self
            .mirror
            .as_mut()
            .ok_or(client::MirrorError::NoSnapshot { got: seq })?;
        if mirror.seq() == Some(have) {
            let patch = match patch {
                Some(p) => p,
                None => parse::<PatchOnly>(text.as_str())?.patch,
            };
            let patch = patch
                .into_iter()
                .map(PatchOp::try_from)
                .collect::<Result<Vec<_>, _>>()?;
            mirror.apply_patch_owned(seq, patch)?;
            if self.seats > 1 {
                self.unread.push_back((seq, text, self.seats - 1));
            }
        } else {
            let Some((_, applied, readers)) = self.unread.iter_mut().find(|(s, ..)| *s == seq)
            else {
                return Err(LoadError::Frame(format!(
                    "diff {seq}: the match's view is at {:?}",
                    mirror.seq()
                )));
            };
            if applied.as_str() != text.as_str()
                && parse::<PatchOnly>(applied.as_str())?.patch
                    != parse::<PatchOnly>(text.as_str())?.patch
            {
                return Err(LoadError::Frame(format!(
                    "seats read different diffs {seq}: {} and {}",
                    applied.as_str(),
                    text.as_str()
                )));
            }
            *readers -= 1;
            while self.unread.front().is_some_and(|(.., r)| *r == 0) {
                self.unread.pop_front();
            }
        }
        *seen = Some(seq);
        Ok(())
    }
}

impl MatchShared {
    pub(crate) fn new(seats: usize, budget: Option<u64>) -> MatchShared {
        MatchShared {
            budget: budget.map(AtomicU64::new),
            view: Mutex::new(SharedView {
                seats,
                ..SharedView::default()
            }),
            ..MatchShared::default()
        }
    }

    /// Whether one more move may be sent (and takes it from the budget).
    pub(crate) fn take_move(&self) -> bool {
        let Some(b) = &self.budget else { return true };
        let took = b
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok();
        if !took {
            self.spent.notify_one();
        }
        took
    }

    /// Gives back a move the server refused before playing it (rate limited).
    pub(crate) fn refund_move(&self) {
        if let Some(b) = &self.budget {
            b.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// How many sent commands of a match [`InFlight`] remembers.
pub(crate) const IN_FLIGHT_KEPT: usize = 8;

/// Locks a part of a match's shared state; a lock poisoned by a panicking seat is an error.
pub(crate) fn lock<T>(m: &Mutex<T>) -> Result<std::sync::MutexGuard<'_, T>, LoadError> {
    m.lock()
        .map_err(|_| LoadError::Frame("a seat panicked holding its match's view".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{diff_1, diff_2, snapshot};

    /// A fill budget runs out after its moves; a refused move is given back; without a budget
    /// (a timed run) moves never run out.
    #[test]
    fn the_fill_budget_counts_moves_and_refunds() {
        let m = MatchShared::new(2, Some(2));
        assert!(m.take_move() && m.take_move());
        assert!(!m.take_move());
        m.refund_move();
        assert!(m.take_move() && !m.take_move());
        let timed = MatchShared::new(2, None);
        assert!((0..1000).all(|_| timed.take_move()));
    }

    /// Two seats over one view: the first reader applies each diff, the second checks it (the
    /// same bytes, or the same patch in other bytes) and a different one or a gap is an error.
    #[test]
    fn the_seats_share_one_view_and_check_each_diff() -> Result<(), LoadError> {
        let mut v = SharedView {
            seats: 2,
            ..SharedView::default()
        };
        let (mut a, mut b): (Seen, Seen) = (None, None);
        v.snapshot(&mut a, &snapshot())?;
        v.snapshot(&mut b, &snapshot())?;
        v.diff(&mut a, 1, diff_1().into(), None)?;
        v.diff(&mut a, 2, diff_2().into(), None)?;
        let view = v.mirror.as_ref().and_then(Mirror::view).cloned();
        let view = view.ok_or(LoadError::Closed)?;
        assert_eq!(
            view.pointer("/board/-1,0/tile"),
            Some(&"base/W+highwaymen".into())
        );
        assert_eq!(view.pointer("/pile/base~1U"), Some(&2.into()));
        assert_eq!(
            view.pointer("/decisions/0/type"),
            Some(&"place_follower".into())
        );
        assert_eq!(v.unread.len(), 2);
        // The same diff in other bytes (keys reordered) is the same diff.
        let reordered = diff_1().replace(
            r#""value":{"rotation":0,"tile":"base/W+highwaymen"}"#,
            r#""value":{"tile":"base/W+highwaymen","rotation":0}"#,
        );
        assert_ne!(reordered, diff_1());
        v.diff(&mut b, 1, reordered.into(), None)?;
        assert_eq!(v.unread.len(), 1);
        let other = diff_2().replace(r#""value":1}"#, r#""value":0}"#);
        let err = v.diff(&mut b.clone(), 2, other.into(), None);
        assert!(matches!(err, Err(LoadError::Frame(_))), "{err:?}");
        v.diff(&mut b, 2, diff_2().into(), None)?;
        assert!(v.unread.is_empty());
        assert_eq!(v.mirror.as_ref().and_then(Mirror::view), Some(&view));
        // A gap on a seat's own stream.
        let err = v.diff(
            &mut a,
            4,
            diff_2().replace(r#""seq":2"#, r#""seq":4"#).into(),
            None,
        );
        assert!(
            matches!(
                err,
                Err(LoadError::Mirror(client::MirrorError::Gap {
                    have: 2,
                    got: 4
                }))
            ),
            "{err:?}"
        );
        Ok(())
    }

    /// A snapshot of another seq, or of another view, than the match's is an error.
    #[test]
    fn a_second_snapshot_must_match_the_view() -> Result<(), LoadError> {
        let mut v = SharedView {
            seats: 2,
            ..SharedView::default()
        };
        v.snapshot(&mut None, &snapshot())?;
        let mut later = snapshot();
        if let ServerMessage::Snapshot { seq, .. } = &mut later {
            *seq = 1;
        }
        assert!(v.snapshot(&mut None, &later).is_err());
        let mut other = snapshot();
        if let ServerMessage::Snapshot { view, .. } = &mut other {
            view.view.turn = 2;
        }
        assert!(v.snapshot(&mut None, &other).is_err());
        Ok(())
    }
}
