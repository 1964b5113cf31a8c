//! Ratings and player profiles (`GET /api/ratings`, `GET /api/players/{name}`) and a finished
//! match's replay for players (`GET /api/matches/{id}/replay`).
//!
//! A rating is Weng-Lin's (a TrueSkill-like Bayesian rating for any number of players): a skill
//! estimate `mu` and its uncertainty `sigma`; players are ranked by the conservative estimate
//! `rating = mu - 3 sigma`. Each account has one per [`Family`].

use crate::{MatchView, Seq, ServerMove};
use rules::Event;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The configuration families that are rated apart: a duel plays otherwise than a table of five.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Two players.
    #[default]
    Duel,
    /// Three to six players.
    Multi,
}

impl Family {
    pub const ALL: [Family; 2] = [Family::Duel, Family::Multi];

    /// The family of a match of `players` seats.
    pub fn of(players: usize) -> Family {
        match players {
            0..=2 => Family::Duel,
            _ => Family::Multi,
        }
    }

    /// The name on the wire and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Duel => "duel",
            Family::Multi => "multi",
        }
    }

    /// The family a stored name stands for.
    pub fn parse(s: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.as_str() == s)
    }
}

/// One account's rating in one family.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RatingView {
    pub family: Family,
    /// The conservative estimate `mu - 3 sigma` that ranks players.
    pub rating: f64,
    pub mu: f64,
    pub sigma: f64,
    /// Rated matches played in this family.
    pub games: u32,
    /// Fewer rated matches than [`PROVISIONAL_GAMES`]: the estimate is still rough.
    pub provisional: bool,
}

/// Rated matches a rating needs before it stops being provisional.
pub const PROVISIONAL_GAMES: u32 = 10;

/// A line of the leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LeaderboardEntry {
    /// 1 for the best rating of the family.
    pub rank: u32,
    pub name: String,
    #[serde(flatten)]
    pub rating: RatingView,
}

/// `GET /api/ratings?family=…`: a page of one family's leaderboard, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Leaderboard {
    pub family: Family,
    pub entries: Vec<LeaderboardEntry>,
    /// The `offset` of the next page, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u32>,
}

/// One seat of a rated match, as its result was recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RatedSeat {
    pub name: String,
    /// Final points.
    pub score: u32,
    /// 1 for the winner; tied players share a place.
    pub place: u32,
}

/// One rated match in a player's history: the result and what it did to the player's rating.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RatingChange {
    pub match_id: Uuid,
    pub family: Family,
    /// When the match ended (RFC 3339).
    pub ended_at: String,
    /// The player's place.
    pub place: u32,
    /// The player's rating (`mu - 3 sigma`) before and after.
    pub before: f64,
    pub after: f64,
    /// Every seat, in seat order.
    pub seats: Vec<RatedSeat>,
}

/// `GET /api/players/{name}`: a registered player's ratings and their history, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlayerProfile {
    pub name: String,
    /// One per family the player has played rated matches in.
    pub ratings: Vec<RatingView>,
    /// The most recent rated matches (at most 50), newest first.
    pub history: Vec<RatingChange>,
}

/// `POST /api/admin/ratings/recompute`: every rating computed again from the recorded results
/// of the rated matches, in the order they were rated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecomputeReport {
    /// Rated matches replayed.
    pub matches: u64,
    /// Ratings (account and family) written.
    pub ratings: u64,
    /// Ratings whose stored value differed from the recomputed one (0 when the store was
    /// consistent).
    pub changed: u64,
}

/// One step of a replay: the public events of the command at `seq` (the opening's at 0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayStep {
    pub seq: Seq,
    /// The seat whose command it was (none for the opening).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_server: Option<ServerMove>,
    pub events: Vec<Event>,
}

/// `GET /api/matches/{id}/replay?seq=N`: a finished match at seq N, for stepping through it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MatchReplay {
    pub match_id: Uuid,
    /// The match's last seq (its end).
    pub last_seq: Seq,
    /// The public view after seq N.
    pub view: MatchView,
    /// What happened at seq N.
    pub step: ReplayStep,
    /// Every player's score after each seq, from 0 to `last_seq`: `scores[seq][seat]`.
    pub scores: Vec<Vec<u32>>,
}
