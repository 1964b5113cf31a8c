//! A match's history for its players and spectators (`GET /api/matches/{id}/log` and
//! `GET /api/matches/{id}/chat`): what happened from the first tile on, in public events only,
//! and what was said at the table, paged backwards from the newest. Also who made a move: the
//! server's own moves ([`ServerMove`]) are named on the live diffs and in the log alike.

use crate::{ChatLine, Seq};
use rules::Event;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Why the server made a move for a player (its command id is `server:<why>:<seq>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServerMove {
    /// A decision's deadline passed (a player who is not active answers late).
    Deadline,
    /// The player's game clock ran out.
    Clock,
    /// The player is marked away.
    Away,
}

impl ServerMove {
    /// The reason in a stored command id (`server:<why>:<seq>`), if the server sent it; a server
    /// id of an unknown kind counts as a deadline (never as a player's move).
    pub fn of(command_id: &str) -> Option<ServerMove> {
        let rest = command_id.strip_prefix(crate::SERVER_COMMAND_PREFIX)?;
        Some(match rest.split(':').next() {
            Some("clock") => ServerMove::Clock,
            Some("away") => ServerMove::Away,
            _ => ServerMove::Deadline,
        })
    }

    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerMove::Deadline => "deadline",
            ServerMove::Clock => "clock",
            ServerMove::Away => "away",
        }
    }
}

/// One step of a match's history: a move (seq 1 and on) or the opening (seq 0), with its public
/// events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LogEntry {
    pub seq: Seq,
    /// Whose move it was; absent for the opening.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    /// Present when the server made the move for the seat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_server: Option<ServerMove>,
    pub events: Vec<Event>,
}

/// `GET /api/matches/{id}/log`: a page of the history, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MatchLog {
    pub match_id: Uuid,
    pub entries: Vec<LogEntry>,
    /// Pass as `before` for the page before this one; absent when this page reaches the opening.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Seq>,
}

/// `GET /api/matches/{id}/chat`: a page of the chat the asker may read (a player the table, a
/// spectator both channels), oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MatchChat {
    pub match_id: Uuid,
    pub chat: Vec<ChatLine>,
    /// Pass as `before` for the page before this one; absent on the first page of the chat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<i64>,
}

/// `GET /api/whoami`: the request's account, or none (no session, or one that ended): never an
/// error, so that a page asks it without logging one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Whoami {
    pub account: Option<crate::Account>,
}

#[cfg(test)]
mod tests {
    use super::ServerMove;

    #[test]
    fn a_server_move_is_read_from_its_command_id() {
        assert_eq!(ServerMove::of("server:clock:7"), Some(ServerMove::Clock));
        assert_eq!(ServerMove::of("server:away:8"), Some(ServerMove::Away));
        assert_eq!(
            ServerMove::of("server:deadline:9"),
            Some(ServerMove::Deadline)
        );
        assert_eq!(ServerMove::of("server:new:9"), Some(ServerMove::Deadline));
        assert_eq!(ServerMove::of("abc-1"), None);
    }
}
