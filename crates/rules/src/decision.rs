//! The decisions open right now, as data: who must (or may) decide what, and the legal choices.
//! Several may be open at once, and one may belong to a player who is not the active one
//! (expansions add such decisions), so [`crate::Game::decisions`] returns a list.

use crate::command::Target;
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
        tile: String,
        placements: Vec<Placement>,
    },
    /// Phase 2: `player` may place a meeple on one of `meeple_targets` of the tile at `pos`, or
    /// (The Tollkeepers) the tollhouse on one of `tollhouse_targets`, or pass.
    PlaceFollower {
        player: PlayerId,
        pos: Pos,
        meeple_targets: Vec<Target>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tollhouse_targets: Vec<Pos>,
    },
}

impl Decision {
    pub fn player(&self) -> PlayerId {
        match self {
            Decision::PlaceTile { player, .. } | Decision::PlaceFollower { player, .. } => *player,
        }
    }
}
