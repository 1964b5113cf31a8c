//! `POST /api/matches`: the request that creates a match and its answer, the seat tokens.

use crate::ClockSettings;
use rules::{Colour, Modules};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// `POST /api/matches`: create a match with one seat per colour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateMatch {
    /// Colours in turn order (2 to 6).
    pub players: Vec<Colour>,
    #[serde(default)]
    pub modules: Modules,
    /// Meeples per player (default 7; 9 on a map).
    #[serde(default)]
    pub meeples: Option<u8>,
    /// Forced pile order, for tests and scenarios; refused unless the server allows test setups.
    #[serde(default)]
    pub draw_order: Option<Vec<String>>,
    /// A game clock for every player; none when absent (the match waits for each player).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockSettings>,
}

/// The answer to [`CreateMatch`]: the match id and one secret token per seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MatchCreated {
    pub match_id: Uuid,
    pub seats: Vec<SeatToken>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SeatToken {
    pub seat: u8,
    pub colour: Colour,
    pub token: String,
}
