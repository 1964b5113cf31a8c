//! The view a client is sent: the rules' public view plus what the server adds beside it (the
//! pending deadlines, the clocks, who is away, the seats' names).

use crate::ClockView;
use rules::{PlayerId, View};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The view a client is sent (in a snapshot, and what the patches of diffs apply to): the rules'
/// public view, plus what the server adds to it, which the rules cannot know (they have no clock).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MatchView {
    #[serde(flatten)]
    pub view: View,
    /// The pending deadlines, sorted by player (then time); absent when there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deadlines: Vec<Deadline>,
    /// The game clocks, one per player in seat order; absent in a match without a clock.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clocks: Vec<ClockView>,
    /// The players the server played for because their clock ran out or they were away, and who
    /// have not had a command of theirs accepted since (sorted); absent when none. A function of
    /// the log, like the rest of the view.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub away: Vec<PlayerId>,
    /// Who sits in each seat, in seat order, in a match started from a lobby: the account's
    /// name, or a bot. Absent for a match created over `POST /api/matches`, whose seats are
    /// only tokens.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<SeatName>,
}

/// The name shown for a seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SeatName {
    pub name: String,
    /// Played by the server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bot: bool,
}

impl From<View> for MatchView {
    /// The view of a match with nothing of the server's beside it: no deadline pending, no
    /// clock, nobody away.
    fn from(view: View) -> Self {
        MatchView {
            view,
            deadlines: Vec::new(),
            clocks: Vec::new(),
            away: Vec::new(),
            names: Vec::new(),
        }
    }
}

/// An open decision of a player who is not the active one, and when the server answers it for
/// them with its default (the preference, else the scoring pawn, ...), as a command of its own.
/// Answering before `at` cancels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Deadline {
    pub player: PlayerId,
    /// Unix time in milliseconds.
    pub at: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Colour;

    /// The view clients get is the rules' view with `deadlines` beside its keys (absent when
    /// none is pending), and reads back the same.
    #[test]
    fn a_match_view_is_the_rules_view_plus_deadlines() {
        let setup = rules::Setup::new(vec![Colour::Red, Colour::Blue], 7);
        let (game, _) = rules::Game::start(setup).expect("valid setup");
        let plain = MatchView::from(game.view());
        let json = serde_json::to_value(&plain).expect("json");
        assert_eq!(json, serde_json::to_value(game.view()).expect("json"));
        let with = MatchView {
            deadlines: vec![Deadline {
                player: 1,
                at: 1_764_527_400_123,
            }],
            ..plain
        };
        let json = serde_json::to_value(&with).expect("json");
        assert_eq!(
            json["deadlines"],
            serde_json::json!([{"player": 1, "at": 1_764_527_400_123_u64}])
        );
        assert_eq!(
            json["turn"],
            serde_json::to_value(game.view().turn).expect("json")
        );
        let back: MatchView = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, with);
    }
}
