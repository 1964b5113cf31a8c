//! A player's own account (`/api/me/*`): their matches, a password change, the deletion of the
//! account, the export of its data; reports of a chat line or a player; and a password reset
//! with the one-time link an admin issued. Times are RFC 3339 strings in UTC.

use crate::admin::ModuleName;
use crate::{Account, ChatLine, ClockSettings};
use rules::Colour;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Longest reason of a report, in characters.
pub const MAX_REPORT_REASON: usize = 500;

/// Where one of the player's matches stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MyMatchStatus {
    /// Being played.
    Running,
    Finished,
    /// Ended by an admin, or stopped because its log no longer replays.
    Ended,
}

/// A seat of one of the player's matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MyMatchPlayer {
    pub seat: u8,
    pub colour: Colour,
    /// The display name of the account that holds the seat (`deleted player` for a deleted
    /// account); none for a seat no account holds (a bot's, a seat token's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// This seat is the caller's.
    pub you: bool,
    /// Marked away (a game clock ran out, or an admin marked them).
    pub away: bool,
}

/// One match where the caller holds a seat (`GET /api/me/matches`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MyMatch {
    pub match_id: Uuid,
    pub status: MyMatchStatus,
    /// The caller's seat.
    pub seat: u8,
    pub players: Vec<MyMatchPlayer>,
    /// Commands stored so far: a client that follows the match subscribes with `since` = this,
    /// and gets the moves after it without a snapshot.
    pub seq: crate::Seq,
    /// A running match: the seat whose turn it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u8>,
    /// A running match: it is the caller's turn.
    pub your_turn: bool,
    /// When the current turn began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_since: Option<String>,
    /// The match's game clock, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockSettings>,
    /// When the server next plays a default in this match if nobody moves first (a bank or a
    /// decision timeout running out, an away player's turn); none when nothing is pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_at: Option<String>,
    pub modules: Vec<ModuleName>,
    /// The map, for a match played on one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_id: Option<String>,
    pub created_at: String,
    /// When the status last changed (or the match was created).
    pub updated_at: String,
    /// A finished match: when it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// A finished match: the final scores, in seat order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<Vec<u32>>,
    /// A finished match: the caller's place (1 for the best score; tied players share a place).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<u8>,
}

/// `GET /api/me/matches`: a page, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MyMatches {
    pub matches: Vec<MyMatch>,
    /// Asks for the next page (`cursor=`); absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `PUT /api/me/password`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordChange {
    pub old_password: String,
    pub new_password: String,
}

/// `DELETE /api/me`: the account's password, again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountDeletion {
    pub password: String,
}

/// `POST /api/password-resets`: the token of an admin's reset link and the new password.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordReset {
    pub token: String,
    pub password: String,
}

/// `GET /api/me/export`: everything the server keeps about the caller's account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AccountExport {
    pub account: Account,
    pub created_at: String,
    /// Every match where the account holds a seat, newest first.
    pub matches: Vec<MyMatch>,
    /// Every chat line the account said, oldest first.
    pub chat: Vec<ChatLine>,
    /// Its sessions' creation times (the tokens are not kept).
    pub sessions: Vec<String>,
}

/// `POST /api/reports`: a chat line (`chat_id`) or a player (`account_id`), exactly one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewReport {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<Uuid>,
    /// 1 to [`MAX_REPORT_REASON`] characters.
    pub reason: String,
}

/// A stored report's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReportCreated {
    pub id: i64,
}

/// Checks a report's reason: 1 to [`MAX_REPORT_REASON`] characters, not only spaces, no
/// control characters.
pub fn check_report_reason(reason: &str) -> Result<(), String> {
    let n = reason.chars().count();
    if reason.trim().is_empty() {
        return Err("a report needs a reason".into());
    }
    if n > MAX_REPORT_REASON {
        return Err(format!(
            "a report's reason has at most {MAX_REPORT_REASON} characters, not {n}"
        ));
    }
    if reason.chars().any(char::is_control) {
        return Err("a report's reason may not contain control characters".into());
    }
    Ok(())
}
