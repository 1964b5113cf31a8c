//! A loaded match's public views, kept between moves so that a move diffs against the view
//! clients hold without rebuilding it, and the snapshot frame built once per seq.
//!
//! The view is a function of the game and of what [`Deadlines`] shows (open decisions, clocks,
//! the away list), which change only when a command is applied, so a view rebuilt from them is
//! the one clients hold at the match's seq: everything here may be dropped when the match is
//! quiet and built again on demand.

use super::timers::Deadlines;
use crate::wire::{Frame, frame};
use protocol::{MatchView, SeatName, Seq, ServerMessage};
use rules::Game;
use uuid::Uuid;

#[derive(Debug, Default)]
pub(super) struct Views {
    /// The public view at the match's seq, the left side of the next diff (typed, see
    /// `protocol::diff`), kept while the match is played. `None` in a quiet or freshly loaded
    /// match: the next command builds it from the game before it applies. Boxed, as `spare`: a
    /// match held in memory keeps a word for each, not two views' size.
    current: Option<Box<MatchView>>,
    /// The view before `current`, kept for its allocations: the next move's view is this one
    /// brought up to date in place (`Game::refresh_view`), not built anew.
    spare: Option<Box<MatchView>>,
    /// The snapshot frame at the match's seq, built on first demand.
    snapshot: Option<Frame>,
    /// The seats' names (a lobby's match; empty otherwise): fixed for the match's life.
    names: Vec<SeatName>,
}

impl Views {
    pub(super) fn new(names: Vec<SeatName>) -> Views {
        Views {
            names,
            ..Views::default()
        }
    }

    /// What clients are sent: the rules' view, the deadlines, the clocks, who is away and the
    /// seats' names.
    fn build(&self, game: &Game, deadlines: &Deadlines) -> MatchView {
        MatchView {
            view: game.view(),
            deadlines: deadlines.wire(),
            clocks: deadlines.clocks_wire(),
            away: deadlines.away_wire(),
            names: self.names.clone(),
        }
    }

    /// The view at the match's seq, taken to diff the next command's view against: the kept
    /// one, or built. Called before the command is applied; [`Views::put_back`] if it is
    /// refused.
    pub(super) fn take(&mut self, game: &Game, deadlines: &Deadlines) -> Box<MatchView> {
        match self.current.take() {
            Some(v) => v,
            None => Box::new(self.build(game, deadlines)),
        }
    }

    /// A refused command left the match where it was: its view is the current one again.
    pub(super) fn put_back(&mut self, view: Box<MatchView>) {
        self.current = Some(view);
    }

    /// The view after a command, for the diff from `before`: the spare brought up to date, or
    /// built.
    pub(super) fn next(&mut self, game: &Game, deadlines: &Deadlines) -> Box<MatchView> {
        let Some(mut v) = self.spare.take() else {
            return Box::new(self.build(game, deadlines));
        };
        game.refresh_view(&mut v.view);
        v.deadlines = deadlines.wire();
        v.clocks = deadlines.clocks_wire();
        v.away = deadlines.away_wire();
        v
    }

    /// The match moved from `before` to `now`: `now` is current, `before` the spare, and the
    /// snapshot is stale.
    pub(super) fn advanced(&mut self, before: Box<MatchView>, now: Box<MatchView>) {
        self.spare = Some(before);
        self.current = Some(now);
        self.snapshot = None;
    }

    /// The snapshot frame at `seq`, built once per seq.
    pub(super) fn snapshot(
        &mut self,
        match_id: Uuid,
        seq: Seq,
        game: &Game,
        deadlines: &Deadlines,
    ) -> Frame {
        if let Some(f) = &self.snapshot {
            return f.clone();
        }
        let f = frame(&ServerMessage::Snapshot {
            match_id,
            seq,
            view: Box::new(self.build(game, deadlines)),
        });
        self.snapshot = Some(f.clone());
        f
    }

    /// The seats a decision waits for in the kept view, each with when the server would answer
    /// for it (a non-active player's deadline, or the running game clock's end); `None` when no
    /// view is kept.
    pub(super) fn waiting(&self) -> Option<Vec<crate::webhooks::Waiting>> {
        self.current.as_deref().map(waiting_in)
    }

    /// Drops every view: a quiet match holds none (the names stay).
    pub(super) fn clear(&mut self) {
        *self = Views {
            names: std::mem::take(&mut self.names),
            ..Views::default()
        };
    }
}

/// The seats a decision waits for in a view, each with when the server would answer for it (a
/// non-active player's deadline, or the running game clock's end).
pub(super) fn waiting_in(v: &MatchView) -> Vec<crate::webhooks::Waiting> {
    let mut seats: Vec<u8> = v.view.decisions.iter().map(|d| d.player()).collect();
    seats.sort_unstable();
    seats.dedup();
    seats
        .into_iter()
        .map(|seat| {
            let deadline = v
                .deadlines
                .iter()
                .filter(|d| d.player == seat)
                .map(|d| d.at)
                .min();
            let clock = v
                .clocks
                .iter()
                .find(|c| c.player == seat)
                .and_then(|c| c.running_since.map(|s| s.saturating_add(c.remaining_ms)));
            let due_at = match (deadline, clock) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            crate::webhooks::Waiting { seat, due_at }
        })
        .collect()
}
