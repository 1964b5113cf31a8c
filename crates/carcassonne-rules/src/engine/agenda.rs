//! The agenda: a turn as an explicit list of steps, which can stop for anyone's decision.
//!
//! Steps run one after another, the top of the stack first. A step may push further steps, which
//! run before the rest ("next"). An [`Ask`] step opens a decision; consecutive asks open
//! together (several players asked at once, M3), and every other step waits while a decision that
//! holds the turn is open. A decision the caller lets the turn go past (another player's pawn
//! choice, M3) holds back only the steps that pass the turn on ([`Step::passes_turn`]): it is
//! settled before the next player's turn or final scoring. A command answers one open decision;
//! its answer may push steps; then the agenda runs on until it needs a decision again or the game
//! ends.
//!
//! The agenda is data (it serializes with the game) and knows nothing of modules: their own steps
//! and asks are the type parameters `M` and `A`, defined by the modules (`src/modules/`).

use super::ids::{DecisionId, SegRef, TileRef};
use crate::setup::PlayerId;
use crate::tiles::TileIdx;
use serde::{Deserialize, Serialize};

/// One thing to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Step<M, A> {
    /// B4: the active player's turn begins (final scoring instead when the pile is empty).
    BeginTurn,
    /// Phase 1: draw until a tile fits (B4) and ask the active player to place it. `extra`: a
    /// turn part inside the turn (M11), which ends without a tile when the pile runs out; the
    /// turn's own draw ends the game then (B7).
    Draw { extra: bool },
    /// Open a decision.
    Ask(Ask<A>),
    /// Phase 3 of a turn part: score what tile `t` completed (B6, B11), then the modules'
    /// `after_scoring` (P9).
    ScoreTile(TileRef),
    /// The modules' `after_scoring` for tile `t` (P9): pushed under phase 3's scoring, so it runs
    /// once every award of that scoring was made and every pawn choice it opened that holds the
    /// turn was answered (M17: the wine sale comes after the scoring round, tolls included).
    AfterScoring(TileRef),
    /// Points for a player, through the one award path (modules may turn it into a question, M2).
    Award(Award),
    /// The meeple standing on this segment goes back to its supply; the others on its feature
    /// stay (M15).
    ReturnMeeple(SegRef),
    /// The end of a turn part (M5: a dispatch check).
    EndTurnPart,
    /// The end of the turn (T9).
    EndTurn,
    /// The next player in seat order becomes the active player and their turn begins.
    NextPlayer,
    /// B7: final scoring.
    Final,
    /// The game is over: the scores are final.
    GameOver,
    /// A module's own step.
    Module(M),
}

impl<M, A> Step<M, A> {
    /// Whether the step ends the turn's own play: the next player's turn, final scoring or the
    /// end of the game. Every open decision is settled before it runs.
    #[inline]
    pub fn passes_turn(&self) -> bool {
        matches!(
            self,
            Step::BeginTurn | Step::NextPlayer | Step::Final | Step::GameOver
        )
    }
}

/// A decision to ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Ask<A> {
    /// Phase 1 (B4): place the drawn tile.
    PlaceTile { player: PlayerId, tile: TileIdx },
    /// Phase 2 (B5, T2): a follower on or around tile `tile`, or nothing.
    PlaceFollower { player: PlayerId, tile: TileRef },
    /// A module's decision.
    Module { player: PlayerId, ask: A },
}

impl<A> Ask<A> {
    #[inline]
    pub fn player(&self) -> PlayerId {
        match self {
            Ask::PlaceTile { player, .. }
            | Ask::PlaceFollower { player, .. }
            | Ask::Module { player, .. } => *player,
        }
    }
}

/// Points for one player from one scoring (M2, M17: features, fields, tolls; later chips, wine
/// and dispatches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Award {
    pub player: PlayerId,
    pub points: u32,
    pub source: Source,
}

/// What a scoring was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Source {
    /// A road, city or monastery (B6, B7): its root.
    Feature(SegRef),
    /// A field at the end (B7).
    Field(SegRef),
    /// A toll (T6, T10) raised at the crossroads tile.
    Toll(TileRef),
    /// A dispatch (M7–M15): its number.
    Dispatch(u8),
    // Carcassonne Maps
    /// A chip taken by placing this tile (P8).
    Chip(TileRef),
    /// A wine sold from this tile (P9).
    Wine(TileRef),
    // Traders & Builders
    /// A goods majority at the end (R7).
    Goods(crate::tiles::Goods),
}

/// An open decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Open<A> {
    pub id: DecisionId,
    pub ask: Ask<A>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Agenda<M, A> {
    /// Steps to run; the last runs first.
    steps: Vec<Step<M, A>>,
    /// Decisions asked and not answered yet, oldest first.
    open: Vec<Open<A>>,
    next_id: u32,
}

impl<M, A> Default for Agenda<M, A> {
    fn default() -> Self {
        Agenda {
            steps: Vec::new(),
            open: Vec::new(),
            next_id: 0,
        }
    }
}

impl<M, A> Agenda<M, A> {
    /// Gives back what the lists reserved beyond their length.
    pub fn shrink_to_fit(&mut self) {
        self.steps.shrink_to_fit();
        self.open.shrink_to_fit();
    }

    /// `step` runs next, before everything already on the agenda.
    #[inline]
    pub fn push(&mut self, step: Step<M, A>) {
        self.steps.push(step);
    }

    /// `steps` run next, in the order given, before everything already on the agenda.
    #[inline]
    pub fn push_all<const N: usize>(&mut self, steps: [Step<M, A>; N]) {
        self.steps.extend(steps.into_iter().rev());
    }

    /// A mark for [`Agenda::settle`]: steps pushed after it can be put in the order pushed.
    #[inline]
    pub fn mark(&self) -> usize {
        self.steps.len()
    }

    /// Steps pushed one by one since `mark` run in the order they were pushed (a hook's steps).
    #[inline]
    pub fn settle(&mut self, mark: usize) {
        if self.steps.len() > mark + 1 {
            self.steps[mark..].reverse();
        }
    }

    /// The next step that may run now: asks on top are opened (together) on the way; any other
    /// step waits while a decision is open for which `holds` is true, and a step that passes the
    /// turn on waits while any decision is open. `None`: waiting for a decision, or nothing left.
    #[inline]
    pub fn next(&mut self, holds: impl Fn(&Ask<A>) -> bool) -> Option<Step<M, A>> {
        loop {
            match self.steps.last() {
                Some(Step::Ask(_)) => {
                    if let Some(Step::Ask(ask)) = self.steps.pop() {
                        let id = DecisionId(self.next_id);
                        self.next_id += 1;
                        self.open.push(Open { id, ask });
                    }
                }
                Some(_) if self.open.is_empty() => return self.steps.pop(),
                Some(step) if !step.passes_turn() && !self.open.iter().any(|o| holds(&o.ask)) => {
                    return self.steps.pop();
                }
                _ => return None,
            }
        }
    }

    /// The open decisions, oldest first.
    #[inline]
    pub fn open(&self) -> &[Open<A>] {
        &self.open
    }

    /// Closes the open decision at `index` of [`Agenda::open`] (it was answered).
    #[inline]
    pub fn close(&mut self, index: usize) -> Open<A> {
        self.open.remove(index)
    }

    /// Drops every step and open decision (the game ends).
    pub fn clear(&mut self) {
        self.steps.clear();
        self.open.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type A = Agenda<(), u8>;

    fn ask(player: PlayerId) -> Step<(), u8> {
        Step::Ask(Ask::Module { player, ask: 0 })
    }

    /// An open decision that does not hold the turn lets the turn's steps run, never one that
    /// passes the turn on; one that holds it stops every step (M3).
    #[test]
    fn a_decision_that_does_not_hold_the_turn_stops_only_the_passing_of_the_turn() {
        // Player 1's decisions do not hold the turn.
        let holds = |a: &Ask<u8>| a.player() != 1;
        let mut a = A::default();
        a.push_all([
            ask(1),
            Step::EndTurnPart,
            ask(0),
            Step::EndTurn,
            Step::NextPlayer,
        ]);
        assert_eq!(a.next(holds), Some(Step::EndTurnPart));
        // Player 0's decision opens, beside player 1's, and holds the turn.
        assert_eq!(a.next(holds), None);
        assert_eq!(a.open().len(), 2);
        let answered = a.close(1);
        assert_eq!(answered.ask.player(), 0);
        assert_eq!(a.next(holds), Some(Step::EndTurn));
        // The turn passes on only once player 1 answered.
        assert_eq!(a.next(holds), None);
        a.close(0);
        assert_eq!(a.next(holds), Some(Step::NextPlayer));
        assert_eq!(a.next(holds), None);
        // Every decision holds: nothing runs past an open one.
        let mut b = A::default();
        b.push_all([ask(1), Step::EndTurnPart]);
        assert_eq!(b.next(|_| true), None);
    }
}
