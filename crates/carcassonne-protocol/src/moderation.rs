//! The admin API's moderation bodies (`/api/admin/accounts/*`, `/api/admin/reports`,
//! `/api/admin/chat/*`): suspensions, password reset links, reports. Times are RFC 3339
//! strings in UTC.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Longest reason of a suspension and note of a resolved report, in characters.
pub const MAX_MODERATION_TEXT: usize = 500;

/// `POST /api/admin/accounts/{id}/suspension`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuspendRequest {
    /// Shown to the player when they try to log in.
    pub reason: String,
    /// How long, in seconds; absent: for good.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<u64>,
}

/// An account as the moderation screens show it (`GET /api/admin/accounts/{id}`, and the
/// answer of a suspension).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AccountStanding {
    pub account: Uuid,
    pub name: String,
    /// `guest`, `registered` or `deleted`.
    pub kind: String,
    pub created_at: String,
    /// A suspension in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspension: Option<Suspension>,
    /// The account's live sessions.
    pub sessions: u32,
}

/// A suspension in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Suspension {
    pub since: String,
    /// Absent: for good.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    pub reason: String,
}

/// `POST /api/admin/accounts/{id}/password-reset`: a one-time link for the player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResetLink {
    /// The secret (shown once; the server keeps its hash).
    pub token: String,
    /// The page that sets a new password with it: `/#reset=<token>` (a fragment, which the
    /// browser never sends to the server or in a `Referer`).
    pub path: String,
    pub expires_at: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReportStatus {
    Open,
    Resolved,
}

/// A player's report, as admins see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    pub id: i64,
    pub at: String,
    pub reporter: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporter_name: Option<String>,
    /// The reported player, or the reported chat line's sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_name: Option<String>,
    /// The reported chat line, if a line was reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<i64>,
    /// The line's text when it was reported (kept after the line is removed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_text: Option<String>,
    pub reason: String,
    pub status: ReportStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
    /// Who resolved it, as the audit trail names them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<String>,
}

/// `GET /api/admin/reports`: newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReportList {
    pub reports: Vec<Report>,
    /// Asks for the next page (`before=`); absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_before: Option<i64>,
}

/// `POST /api/admin/reports/{id}/resolve`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveReport {
    /// What was done (at most [`MAX_MODERATION_TEXT`] characters).
    pub note: String,
}
