//! The decisions open right now, as data: who must (or may) decide what, and the legal choices.
//! Several may be open at once, and one may belong to a player who is not the active one
//! (expansions add such decisions), so [`crate::Game::decisions`] returns a list.

use crate::command::{Command, Figure, MeepleRef, Pawn, Target};
use crate::event::ScoreReason;
use crate::geometry::{Pos, Rotation};
use crate::setup::PlayerId;
use serde::{Deserialize, Serialize};

/// Where the drawn tile may go: a square and the rotations that fit there (B4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Placement {
    pub pos: Pos,
    pub rotations: Vec<Rotation>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Decision {
    /// Phase 1: `player` must place `tile` (answer: `place_tile`).
    PlaceTile {
        player: PlayerId,
        #[cfg_attr(feature = "schema", schemars(with = "String"))]
        tile: crate::ids::Key,
        placements: Vec<Placement>,
    },
    /// Phase 2: `player` may place a meeple on one of `meeple_targets` of the tile at `pos`, or
    /// (The Tollkeepers) the tollhouse on one of `tollhouse_targets`, or (Traders & Builders) the
    /// builder on one of `builder_targets` or the pig on one of `pig_targets`, or pass.
    PlaceFollower {
        player: PlayerId,
        pos: Pos,
        meeple_targets: Vec<Target>,
        /// Inns & Cathedrals: where the large meeple may go (`place_meeple` with `figure:
        /// large_meeple`), while it is in the supply (I4).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        large_meeple_targets: Vec<Target>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tollhouse_targets: Vec<Pos>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        builder_targets: Vec<Target>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pig_targets: Vec<Target>,
    },
    /// Test only: `player` must acknowledge with `pass` (a decision of a non-active player).
    #[cfg(test)]
    Witness { player: PlayerId },
    // The Messages
    /// M2, M3: `player` earned `points` (for `reason`) and moves them with one pawn (answer:
    /// `choose_pawn`); the pawns stand on `scoring` and `messenger` now.
    ChoosePawn {
        player: PlayerId,
        points: u32,
        reason: ScoreReason,
        scoring: u32,
        messenger: u32,
    },
    /// M7: `player` resolves dispatch `dispatch` (1–8): `dispatch_action` (offered when `action`;
    /// naming one of `meeples` when that list is not empty) or `dispatch_points`.
    Dispatch {
        player: PlayerId,
        dispatch: u8,
        action: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        meeples: Vec<MeepleRef>,
    },
    /// M6: a dispatch's points brought a pawn of `player` to a dark space: `draw_dispatch` or
    /// `pass`.
    ChainDispatch { player: PlayerId },
    // Traders & Builders
    /// R9: the tile on `pos` earned `player` the builder's double turn: `take_double_turn`
    /// (the default) or `pass`.
    DoubleTurn { player: PlayerId, pos: Pos },
    // Carcassonne Maps
    /// P9, step 3: `player` may sell one wine with the tile on `pos` (answer: `sell_wine` with one
    /// of `sales`), or pass (the default: no sale).
    SellWine {
        player: PlayerId,
        pos: Pos,
        sales: Vec<crate::command::WineSale>,
    },
}

impl Decision {
    pub fn player(&self) -> PlayerId {
        match self {
            Decision::PlaceTile { player, .. }
            | Decision::PlaceFollower { player, .. }
            | Decision::SellWine { player, .. }
            | Decision::DoubleTurn { player, .. } => *player,
            #[cfg(test)]
            Decision::Witness { player } => *player,
            Decision::ChoosePawn { player, .. }
            | Decision::Dispatch { player, .. }
            | Decision::ChainDispatch { player } => *player,
        }
    }
}

/// The options of a decision, in one shape for every kind: groups of commands (phase 2: meeple
/// targets, then tollhouse squares), each counted and indexed without listing, and whether `pass`
/// answers it. A bot walks any decision through this shape ([`crate::bot::random_command`]), so a
/// new decision kind needs no new bot code.
pub trait Options {
    /// Whose decision it is.
    fn player(&self) -> PlayerId;
    /// How many groups of commands the decision has (some may be empty now).
    fn groups(&self) -> usize;
    /// How many commands group `group` holds.
    fn len(&self, group: usize) -> usize;
    /// The `i`-th command of group `group`.
    fn nth(&self, group: usize, i: usize) -> Option<Command>;
    /// Whether `pass` answers the decision.
    fn may_pass(&self) -> bool;
    /// Group `group`, listed.
    fn list(&self, group: usize) -> Vec<Command> {
        (0..self.len(group))
            .filter_map(|i| self.nth(group, i))
            .collect()
    }
}

/// The options of a decision as a client sees it (from a view).
impl Options for Decision {
    fn player(&self) -> PlayerId {
        Decision::player(self)
    }

    fn groups(&self) -> usize {
        match self {
            Decision::PlaceTile { .. } => 1,
            Decision::PlaceFollower { .. } => 5,
            Decision::SellWine { .. } | Decision::DoubleTurn { .. } => 1,
            #[cfg(test)]
            Decision::Witness { .. } => 0,
            Decision::ChoosePawn { .. } | Decision::Dispatch { .. } => 2,
            Decision::ChainDispatch { .. } => 1,
        }
    }

    fn len(&self, group: usize) -> usize {
        match (self, group) {
            (Decision::PlaceTile { placements, .. }, _) => {
                placements.iter().map(|p| p.rotations.len()).sum()
            }
            (Decision::PlaceFollower { meeple_targets, .. }, 0) => meeple_targets.len(),
            (
                Decision::PlaceFollower {
                    large_meeple_targets,
                    ..
                },
                1,
            ) => large_meeple_targets.len(),
            (Decision::SellWine { sales, .. }, _) => sales.len(),
            (Decision::DoubleTurn { .. }, _) => 1,
            (
                Decision::PlaceFollower {
                    tollhouse_targets, ..
                },
                2,
            ) => tollhouse_targets.len(),
            (
                Decision::PlaceFollower {
                    builder_targets, ..
                },
                3,
            ) => builder_targets.len(),
            (Decision::PlaceFollower { pig_targets, .. }, _) => pig_targets.len(),
            #[cfg(test)]
            (Decision::Witness { .. }, _) => 0,
            (Decision::ChoosePawn { .. }, _) | (Decision::ChainDispatch { .. }, _) => 1,
            (
                Decision::Dispatch {
                    action, meeples, ..
                },
                0,
            ) => match action {
                true => meeples.len().max(1),
                false => 0,
            },
            (Decision::Dispatch { .. }, _) => 1,
        }
    }

    fn nth(&self, group: usize, i: usize) -> Option<Command> {
        match (self, group) {
            (Decision::PlaceTile { placements, .. }, _) => {
                let (pos, rotation) = placements
                    .iter()
                    .flat_map(|p| p.rotations.iter().map(|&r| (p.pos, r)))
                    .nth(i)?;
                Some(Command::PlaceTile { pos, rotation })
            }
            (Decision::PlaceFollower { meeple_targets, .. }, 0) => Some(Command::PlaceMeeple {
                target: *meeple_targets.get(i)?,
                figure: Figure::Meeple,
            }),
            (
                Decision::PlaceFollower {
                    large_meeple_targets,
                    ..
                },
                1,
            ) => Some(Command::PlaceMeeple {
                target: *large_meeple_targets.get(i)?,
                figure: Figure::LargeMeeple,
            }),
            (
                Decision::PlaceFollower {
                    builder_targets, ..
                },
                3,
            ) => Some(Command::PlaceMeeple {
                target: *builder_targets.get(i)?,
                figure: Figure::Builder,
            }),
            (Decision::PlaceFollower { pig_targets, .. }, 4) => Some(Command::PlaceMeeple {
                target: *pig_targets.get(i)?,
                figure: Figure::Pig,
            }),
            (Decision::DoubleTurn { .. }, _) if i == 0 => Some(Command::TakeDoubleTurn {}),
            (Decision::SellWine { sales, .. }, _) => {
                let s = sales.get(i)?;
                Some(Command::SellWine {
                    sale: s.sale,
                    chips: s.chips.clone(),
                })
            }
            (
                Decision::PlaceFollower {
                    tollhouse_targets, ..
                },
                2,
            ) => Some(Command::PlaceTollhouse {
                pos: *tollhouse_targets.get(i)?,
            }),
            #[cfg(test)]
            (Decision::Witness { .. }, _) => None,
            (Decision::ChoosePawn { .. }, g) if i == 0 => Some(Command::ChoosePawn {
                pawn: if g == 0 {
                    Pawn::Scoring
                } else {
                    Pawn::Messenger
                },
            }),
            (Decision::ChainDispatch { .. }, _) if i == 0 => Some(Command::DrawDispatch {}),
            (
                Decision::Dispatch {
                    action, meeples, ..
                },
                0,
            ) if *action => match meeples.is_empty() {
                true if i == 0 => Some(Command::DispatchAction { meeple: None }),
                true => None,
                false => Some(Command::DispatchAction {
                    meeple: Some(*meeples.get(i)?),
                }),
            },
            (Decision::Dispatch { .. }, 1) if i == 0 => Some(Command::DispatchPoints {}),
            _ => None,
        }
    }

    fn may_pass(&self) -> bool {
        !matches!(
            self,
            Decision::PlaceTile { .. } | Decision::ChoosePawn { .. } | Decision::Dispatch { .. }
        )
    }
}
