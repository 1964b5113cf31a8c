//! Small ids the engine and the modules share.

use serde::{Deserialize, Serialize};

/// Index of a placed tile on the [`super::board::Board`].
pub type TileRef = u32;
/// Index of a segment of a placed tile: a node of the union-find in [`super::features::Features`].
pub type SegRef = u32;

/// A stable id of an open decision: it does not change while the decision waits, and is never
/// reused in a match (the server names the decision a clock ran out on by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct DecisionId(pub u32);

impl std::fmt::Display for DecisionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "d{}", self.0)
    }
}
