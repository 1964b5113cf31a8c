//! The secret state of a match (B9): what no client is ever sent. Only an admin reads it, and
//! only for a match that is over, to settle a dispute.

use crate::setup::ChipAt;
use serde::{Deserialize, Serialize};

/// The secret parts of a match at one moment: the seed, the face-down pile in order, the chips
/// lying face down with their faces, and The Messages' dispatch stack in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Secrets {
    /// The seed every random draw of the match comes from.
    pub seed: u64,
    /// The face-down pile by tile id, the next tile to be drawn first.
    pub pile: Vec<String>,
    /// The France chips still face down, with their faces (P7), by square.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chips: Vec<ChipAt>,
    /// The Messages: the dispatch stack, top first (M1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatches: Option<Vec<u8>>,
}
