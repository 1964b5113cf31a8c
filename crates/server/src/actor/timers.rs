//! The match's clocks: when each open decision opened, and which of them have a deadline.
//!
//! The rules have no clock (invariant 1); the actor feeds [`Deadlines`] the open decisions after
//! every applied command, with the command's stored time, and sleeps until [`Deadlines::next_due`]
//! in its select loop (one sleep per match, no task per timer). Since a decision's opening time
//! is the stored time of the command after which it first showed, a replay rebuilds the same
//! deadlines from the log: a restart neither resets nor forgets one.
//!
//! Today a decision of a player who is not the active one (The Messages' pawn choices) gets
//! `opened + timeout`. Turn clocks (per-player time banks, away players) are another rule for
//! [`Deadlines::sync`] over the same table, with the same firing path.

use protocol::Deadline;
use rules::{DecisionId, PlayerId};
use std::collections::BTreeMap;

/// Wall-clock milliseconds since the Unix epoch: deadlines are sent to clients and outlive the
/// process, so they are not monotonic `Instant`s.
pub type Millis = i64;

/// Wall-clock now, in [`Millis`].
pub fn now_millis() -> Millis {
    chrono::Utc::now().timestamp_millis()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Open {
    player: PlayerId,
    /// The stored time of the command after which the decision first was open.
    opened: Millis,
    /// Whether it has a deadline (its player is not the active one).
    armed: bool,
    /// Its default could not be applied (a bug, logged): not fired again while it stays open.
    stalled: bool,
}

/// Every open decision with the time it opened; those with a deadline and when they fall due.
#[derive(Debug, Default, Clone)]
pub struct Deadlines {
    timeout: Millis,
    open: BTreeMap<DecisionId, Open>,
}

impl Deadlines {
    /// `timeout_ms`: how long a non-active player has to answer.
    pub fn new(timeout_ms: u64) -> Deadlines {
        let mut d = Deadlines::default();
        d.set_timeout(timeout_ms);
        d
    }

    pub fn set_timeout(&mut self, timeout_ms: u64) {
        self.timeout = Millis::try_from(timeout_ms).unwrap_or(Millis::MAX);
    }

    /// Feeds the decisions open now, after a command stored at `now` (or the match's creation):
    /// a decision seen for the first time opened at `now`; one no longer open is forgotten. The
    /// decisions of players other than `active` have a deadline.
    pub fn sync(
        &mut self,
        open: impl IntoIterator<Item = (DecisionId, PlayerId)>,
        active: PlayerId,
        now: Millis,
    ) {
        let mut next = BTreeMap::new();
        for (id, player) in open {
            let mut entry = self.open.get(&id).copied().unwrap_or(Open {
                player,
                opened: now,
                armed: false,
                stalled: false,
            });
            entry.player = player;
            entry.armed = player != active;
            next.insert(id, entry);
        }
        self.open = next;
    }

    fn at(&self, o: &Open) -> Millis {
        o.opened.saturating_add(self.timeout)
    }

    /// The decisions with a deadline that may still fire: (at, id), earliest first.
    fn firing(&self) -> impl Iterator<Item = (Millis, DecisionId)> + '_ {
        let mut v: Vec<(Millis, DecisionId)> = self
            .open
            .iter()
            .filter(|(_, o)| o.armed && !o.stalled)
            .map(|(id, o)| (self.at(o), *id))
            .collect();
        v.sort_unstable();
        v.into_iter()
    }

    /// When the next deadline falls, if any.
    pub fn next_due(&self) -> Option<Millis> {
        self.firing().next().map(|(at, _)| at)
    }

    /// The decisions whose deadline has passed at `now`, earliest first (ties by id, the order
    /// they opened in).
    pub fn due(&self, now: Millis) -> Vec<DecisionId> {
        self.firing()
            .take_while(|&(at, _)| at <= now)
            .map(|(_, id)| id)
            .collect()
    }

    /// The default of `id` could not be applied: it does not fire again while it stays open.
    pub fn stall(&mut self, id: DecisionId) {
        if let Some(o) = self.open.get_mut(&id) {
            o.stalled = true;
        }
    }

    /// Whether any deadline is pending (the match must stay in memory to fire it).
    pub fn is_pending(&self) -> bool {
        self.next_due().is_some()
    }

    /// The deadlines as clients see them, sorted by player, then time.
    pub fn wire(&self) -> Vec<Deadline> {
        let mut v: Vec<Deadline> = self
            .open
            .values()
            .filter(|o| o.armed)
            .map(|o| Deadline {
                player: o.player,
                at: u64::try_from(self.at(o)).unwrap_or(0),
            })
            .collect();
        v.sort_unstable_by_key(|d| (d.player, d.at));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: u64 = 1_000;

    fn d(id: u32) -> DecisionId {
        DecisionId(id)
    }

    /// Only the decisions of non-active players have a deadline, at the time they opened plus
    /// the timeout; a later sync keeps that time.
    #[test]
    fn non_active_decisions_get_opened_plus_timeout() {
        let mut dl = Deadlines::new(T);
        // Active player 0 places a tile: no deadline.
        dl.sync([(d(0), 0)], 0, 100);
        assert_eq!(dl.next_due(), None);
        assert!(dl.wire().is_empty());
        assert!(!dl.is_pending());
        // Two pawn choices open at 500: the active player's and player 1's.
        dl.sync([(d(1), 0), (d(2), 1)], 0, 500);
        assert_eq!(dl.next_due(), Some(1_500));
        assert_eq!(
            dl.wire(),
            [Deadline {
                player: 1,
                at: 1_500
            }]
        );
        // Player 0 answers at 900: player 1's deadline keeps its time.
        dl.sync([(d(2), 1)], 0, 900);
        assert_eq!(dl.next_due(), Some(1_500));
        assert_eq!(dl.due(1_499), []);
        assert_eq!(dl.due(1_500), [d(2)]);
        // Player 1 answers: nothing pending.
        dl.sync([(d(3), 1)], 1, 1_200);
        assert_eq!(dl.next_due(), None);
        assert!(dl.wire().is_empty());
    }

    /// Several due at once come earliest first, then by id; the wire is sorted by player.
    #[test]
    fn due_order_and_wire_order() {
        let mut dl = Deadlines::new(T);
        dl.sync([(d(5), 2)], 0, 10);
        dl.sync([(d(5), 2), (d(6), 1), (d(7), 3)], 0, 20);
        dl.sync([(d(5), 2), (d(6), 1), (d(7), 3), (d(8), 1)], 0, 20);
        assert_eq!(dl.due(5_000), [d(5), d(6), d(7), d(8)]);
        assert_eq!(dl.due(1_010), [d(5)]);
        let wire: Vec<(u8, u64)> = dl.wire().iter().map(|w| (w.player, w.at)).collect();
        assert_eq!(wire, [(1, 1_020), (1, 1_020), (2, 1_010), (3, 1_020)]);
    }

    /// A stalled default is not fired again while its decision stays open; a decision reopened
    /// under a new id is armed again.
    #[test]
    fn stalled_decisions_do_not_fire_again() {
        let mut dl = Deadlines::new(T);
        dl.sync([(d(1), 1)], 0, 0);
        dl.stall(d(1));
        assert_eq!(dl.due(10_000), []);
        assert_eq!(dl.next_due(), None);
        assert_eq!(dl.wire().len(), 1, "still shown while open");
        dl.sync([(d(2), 1)], 0, 50);
        assert_eq!(dl.due(10_000), [d(2)]);
    }

    /// A replay that feeds the same log (ids and stored times) gives the same deadlines as live
    /// play did, whatever the clock says now: a restart resets nothing.
    #[test]
    fn a_replay_rebuilds_the_same_deadlines() {
        /// One stored command: the decisions open after it, the active player, its time.
        type Record<'a> = (&'a [(DecisionId, PlayerId)], PlayerId, Millis);
        let log: [Record<'_>; 3] = [
            (&[(d(0), 0)], 0, 1_000),
            (&[(d(1), 1), (d(2), 0)], 0, 2_000),
            (&[(d(1), 1)], 0, 3_000),
        ];
        let mut live = Deadlines::new(T);
        for (open, active, at) in log {
            live.sync(open.iter().copied(), active, at);
        }
        let mut replayed = Deadlines::default();
        for (open, active, at) in log {
            replayed.sync(open.iter().copied(), active, at);
        }
        replayed.set_timeout(T);
        assert_eq!(replayed.wire(), live.wire());
        assert_eq!(replayed.next_due(), Some(3_000));
    }

    /// An active player's decision has no deadline even if it is the only one open, and a
    /// decision whose player becomes the active one loses its deadline.
    #[test]
    fn the_active_player_has_no_deadline() {
        let mut dl = Deadlines::new(T);
        dl.sync([(d(1), 1)], 0, 0);
        assert!(dl.is_pending());
        dl.sync([(d(1), 1)], 1, 10);
        assert!(!dl.is_pending());
        assert!(dl.wire().is_empty());
    }
}
