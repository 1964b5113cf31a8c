//! Why a command or a setup was refused. Every refusal names the rule it enforces; the state is
//! unchanged after a refusal.

use crate::command::{Figure, Target};
use crate::geometry::{Pos, Side};
use crate::setup::PlayerId;

/// Inns & Cathedrals' name in `module_off` refusals (its rule is I14, not T2).
pub const INNS_CATHEDRALS: &str = "inns & cathedrals";

/// A command that the rules refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("the game is over")]
    GameOver,
    #[error("there is no player {0}")]
    UnknownPlayer(PlayerId),
    #[error("it is not player {player}'s decision now (waiting for player {waiting})")]
    NotYourTurn { player: PlayerId, waiting: PlayerId },
    #[error("that command does not fit now: {expected}")]
    WrongPhase { expected: &'static str },
    #[error("square {0} already holds a tile")]
    Occupied(Pos),
    #[error("square {0} touches no placed tile")]
    NotAdjacent(Pos),
    #[error("the tile's {side} side does not match its neighbour at {pos}")]
    EdgeMismatch { pos: Pos, side: Side },
    #[error("no meeple left in the supply")]
    NoMeepleLeft,
    #[error("the tile just placed has no {0}")]
    NoSuchFeature(Target),
    #[error("the {0} feature already holds a meeple")]
    FeatureOccupied(Target),
    #[error("module {0} is not switched on in this match")]
    ModuleOff(&'static str),
    // Inns & Cathedrals
    #[error("your large meeple is not in your supply")]
    NoLargeMeepleLeft,
    #[error("square {0} holds no crossroads (a village where 2 to 4 roads end)")]
    NotACrossroads(Pos),
    #[error("the crossroads at {0} already holds a tollhouse")]
    CrossroadsTaken(Pos),
    #[error("your tollhouse already stands on {0}: that is not a move")]
    TollhouseAlreadyThere(Pos),
    // The Messages
    #[error("the dispatch cannot be resolved that way: {0}")]
    DispatchChoice(&'static str),
    /// Setting the preference one already has would only repeat an event: refused so that a
    /// client cannot fill the log with no-ops.
    #[error("that is already your standing pawn preference")]
    PreferenceUnchanged,
    // Carcassonne Maps
    #[error("square {0} is not a square of the map that takes a tile")]
    OffMap(Pos),
    #[error("the tile's {side} side at {pos} must show what the map prints there")]
    PrintMismatch { pos: Pos, side: Side },
    #[error("no wine sale is open to you now")]
    NoSale,
    #[error("those chips are not a wine: one colour, values adding up to exactly 2")]
    NotAWine,
    #[error("that sale is not allowed by the tile just placed")]
    SaleNotAllowed,
    // Traders & Builders
    #[error("your {0:?} is not in your supply")]
    FigureInUse(Figure),
    #[error("the {figure:?} cannot go on {target}: {why}")]
    FigurePlacement {
        figure: Figure,
        target: Target,
        why: &'static str,
    },
}

impl RuleError {
    /// Every [`RuleError::code`], in declaration order (documentation checks walk it).
    pub const CODES: &[&str] = &[
        "game_over",
        "unknown_player",
        "not_your_turn",
        "wrong_phase",
        "occupied",
        "not_adjacent",
        "edge_mismatch",
        "no_meeple_left",
        "no_such_feature",
        "feature_occupied",
        "module_off",
        "no_large_meeple_left",
        "not_a_crossroads",
        "crossroads_taken",
        "tollhouse_already_there",
        "dispatch_choice",
        "unchanged",
        "off_map",
        "print_mismatch",
        "no_sale",
        "not_a_wine",
        "sale_not_allowed",
        "figure_in_use",
        "figure_placement",
    ];

    /// A stable machine-readable code (snake_case), for clients.
    pub fn code(&self) -> &'static str {
        match self {
            RuleError::GameOver => "game_over",
            RuleError::UnknownPlayer(_) => "unknown_player",
            RuleError::NotYourTurn { .. } => "not_your_turn",
            RuleError::WrongPhase { .. } => "wrong_phase",
            RuleError::Occupied(_) => "occupied",
            RuleError::NotAdjacent(_) => "not_adjacent",
            RuleError::EdgeMismatch { .. } => "edge_mismatch",
            RuleError::NoMeepleLeft => "no_meeple_left",
            RuleError::NoSuchFeature(_) => "no_such_feature",
            RuleError::FeatureOccupied(_) => "feature_occupied",
            RuleError::ModuleOff(_) => "module_off",
            RuleError::NoLargeMeepleLeft => "no_large_meeple_left",
            RuleError::NotACrossroads(_) => "not_a_crossroads",
            RuleError::CrossroadsTaken(_) => "crossroads_taken",
            RuleError::TollhouseAlreadyThere(_) => "tollhouse_already_there",
            RuleError::DispatchChoice(_) => "dispatch_choice",
            RuleError::PreferenceUnchanged => "unchanged",
            RuleError::OffMap(_) => "off_map",
            RuleError::PrintMismatch { .. } => "print_mismatch",
            RuleError::NoSale => "no_sale",
            RuleError::NotAWine => "not_a_wine",
            RuleError::SaleNotAllowed => "sale_not_allowed",
            RuleError::FigureInUse(_) => "figure_in_use",
            RuleError::FigurePlacement { .. } => "figure_placement",
        }
    }

    /// The id of the rule in `docs/reference/` that refuses the command.
    pub fn rule(&self) -> &'static str {
        match self {
            RuleError::GameOver => "B7",
            RuleError::UnknownPlayer(_) => "B3",
            RuleError::NotYourTurn { .. } | RuleError::WrongPhase { .. } => "B4",
            RuleError::Occupied(_) | RuleError::NotAdjacent(_) | RuleError::EdgeMismatch { .. } => {
                "B4"
            }
            RuleError::NoMeepleLeft => "B3",
            RuleError::NoSuchFeature(_) | RuleError::FeatureOccupied(_) => "B5",
            RuleError::ModuleOff(m) if *m == INNS_CATHEDRALS => "I14",
            RuleError::NoLargeMeepleLeft => "I4",
            RuleError::ModuleOff(_) => "T2",
            RuleError::NotACrossroads(_) => "T3",
            RuleError::CrossroadsTaken(_) => "T4",
            RuleError::TollhouseAlreadyThere(_) => "T5",
            RuleError::DispatchChoice(_) => "M7",
            RuleError::PreferenceUnchanged => "M3",
            RuleError::OffMap(_) => "P1",
            RuleError::PrintMismatch { .. } => "P4",
            RuleError::NoSale | RuleError::NotAWine | RuleError::SaleNotAllowed => "P9",
            RuleError::FigureInUse(Figure::Pig)
            | RuleError::FigurePlacement {
                figure: Figure::Pig,
                ..
            } => "R12",
            RuleError::FigureInUse(_) | RuleError::FigurePlacement { .. } => "R8",
        }
    }
}

/// A setup that cannot start a match.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("a match needs 2 to 6 players, not {0} (B3)")]
    PlayerCount(usize),
    #[error("colour {0:?} is taken twice (B3)")]
    DuplicateColour(crate::setup::Colour),
    #[error("meeples per player must be 1 to 30, not {0}")]
    Meeples(u8),
    #[error("a pile of {0} tiles is more than the rules allow (500)")]
    PileTooLarge(usize),
    #[error("draw order names tile `{0}`, which this match does not use")]
    UnknownTile(String),
    #[error("start squares: {0}")]
    StartSquares(&'static str),
    #[error("dispatch order must name the dispatches 1 to 8, each once (M1)")]
    DispatchOrder,
    #[error("start scores: {0}")]
    StartScores(&'static str),
    // Carcassonne Maps
    #[error("map: {0}")]
    Map(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{Pos, Side};

    /// One of each variant. The match below has no wildcard, so a new variant fails to compile
    /// here until it is added to the list (and so to the check against `CODES`).
    fn one_of_each() -> Vec<RuleError> {
        let pos = Pos::new(0, 0);
        let all = vec![
            RuleError::GameOver,
            RuleError::UnknownPlayer(9),
            RuleError::NotYourTurn {
                player: 1,
                waiting: 0,
            },
            RuleError::WrongPhase { expected: "x" },
            RuleError::Occupied(pos),
            RuleError::NotAdjacent(pos),
            RuleError::EdgeMismatch { pos, side: Side::N },
            RuleError::NoMeepleLeft,
            RuleError::NoSuchFeature(crate::command::Target::Monastery),
            RuleError::FeatureOccupied(crate::command::Target::Monastery),
            RuleError::ModuleOff("x"),
            RuleError::NoLargeMeepleLeft,
            RuleError::NotACrossroads(pos),
            RuleError::CrossroadsTaken(pos),
            RuleError::TollhouseAlreadyThere(pos),
            RuleError::DispatchChoice("x"),
            RuleError::PreferenceUnchanged,
            RuleError::OffMap(pos),
            RuleError::PrintMismatch { pos, side: Side::N },
            RuleError::NoSale,
            RuleError::NotAWine,
            RuleError::SaleNotAllowed,
            RuleError::FigureInUse(Figure::Builder),
            RuleError::FigurePlacement {
                figure: Figure::Pig,
                target: crate::command::Target::Monastery,
                why: "x",
            },
        ];
        for e in &all {
            match e {
                RuleError::GameOver
                | RuleError::UnknownPlayer(_)
                | RuleError::NotYourTurn { .. }
                | RuleError::WrongPhase { .. }
                | RuleError::Occupied(_)
                | RuleError::NotAdjacent(_)
                | RuleError::EdgeMismatch { .. }
                | RuleError::NoMeepleLeft
                | RuleError::NoSuchFeature(_)
                | RuleError::FeatureOccupied(_)
                | RuleError::ModuleOff(_)
                | RuleError::NoLargeMeepleLeft
                | RuleError::NotACrossroads(_)
                | RuleError::CrossroadsTaken(_)
                | RuleError::TollhouseAlreadyThere(_)
                | RuleError::DispatchChoice(_)
                | RuleError::PreferenceUnchanged
                | RuleError::OffMap(_)
                | RuleError::PrintMismatch { .. }
                | RuleError::NoSale
                | RuleError::NotAWine
                | RuleError::SaleNotAllowed
                | RuleError::FigureInUse(_)
                | RuleError::FigurePlacement { .. } => {}
            }
        }
        all
    }

    #[test]
    fn codes_lists_every_code_once() {
        let codes: Vec<&str> = one_of_each().iter().map(RuleError::code).collect();
        assert_eq!(codes, RuleError::CODES);
    }
}
