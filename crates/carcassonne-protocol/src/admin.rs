//! The admin API's answers (`/api/admin/*`), typed for the admin console and other tools.
//! Times are RFC 3339 strings in UTC.

use crate::Seq;
use rules::{Colour, Command, Event, View};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Where a match stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchStatus {
    /// Being played (or waiting for its next command).
    Active,
    Finished,
    /// Its stored log no longer replays through the rules: not resumed.
    Broken,
    /// Ended by an admin: takes no command, never resumed.
    Aborted,
}

/// A module switched on in a match's setup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModuleName {
    Tollkeepers,
    Messages,
    /// Played on a printed map (`map_id` names it).
    Map,
    /// The France chips on the map.
    Chips,
    InnsCathedrals,
    TradersBuilders,
}

/// A seat of a match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdminSeat {
    pub seat: u8,
    pub colour: Colour,
    /// Since when the player is marked away (by an admin, or when their game clock ran out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub away_since: Option<String>,
    /// The account that holds the seat (a match from a lobby); none for a seat token's seat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Uuid>,
    /// That account's display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `GET /api/admin/matches/{id}` and each item of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdminMatchSummary {
    pub match_id: Uuid,
    pub status: MatchStatus,
    pub created_at: String,
    /// When the status last changed (or the match was created).
    pub updated_at: String,
    /// The replay version the match is stored with.
    pub rules_version: String,
    pub players: Vec<AdminSeat>,
    pub modules: Vec<ModuleName>,
    /// The map's id when `modules` has `map`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_id: Option<String>,
    /// Commands stored: the match's current seq.
    pub seq: Seq,
    /// The final scores in seat order, for a finished match (read from its last events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<Vec<u32>>,
    /// Cluster mode: the node that runs the match now (holds its lease); absent when no node
    /// does, and on a single server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// `GET /api/admin/matches`: one page, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdminMatchList {
    pub matches: Vec<AdminMatchSummary>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Who sent a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The seat's player (their client).
    Player,
    /// The server, on the seat's behalf (a default: a deadline passed, the player's clock ran
    /// out, or the player is away).
    Server,
}

/// One stored command of a match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdminLogEntry {
    pub seq: Seq,
    pub seat: u8,
    pub origin: Origin,
    /// The id the sender gave the command (the server's start with `server:`).
    pub command_id: String,
    pub command: Command,
    pub events: Vec<Event>,
    /// When it was stored.
    pub created_at: String,
}

/// `GET /api/admin/matches/{id}/log`: a page of the log, in seq order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdminMatchLog {
    pub match_id: Uuid,
    pub status: MatchStatus,
    pub rules_version: String,
    pub created_at: String,
    pub commands: Vec<AdminLogEntry>,
    /// Pass as `after` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_after: Option<Seq>,
}

/// `GET /api/admin/matches/{id}/state?seq=N`: the public view at seq N, replayed through the
/// rules (what a subscribed client had at that seq).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdminMatchState {
    pub match_id: Uuid,
    pub seq: Seq,
    pub view: View,
}

/// `GET /api/admin/matches/{id}/secrets`: the secret state of a match that is over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdminMatchSecrets {
    pub match_id: Uuid,
    pub seq: Seq,
    /// Right after the opening (seq 0): the first tile is drawn already, so `pile` is every
    /// tile drawn after it, in order.
    pub start: rules::Secrets,
    /// At `seq`, the end.
    pub end: rules::Secrets,
}

/// `POST /api/admin/matches/{id}/away`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AwayRequest {
    pub seat: u8,
    /// `false` clears the mark (default `true`).
    #[serde(default = "yes")]
    pub away: bool,
}

/// `PUT /api/admin/accounts/{id}/admin`: gives a registered account the admin role (or takes it
/// away). An admin account's session opens the admin API like the admin token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdminRoleRequest {
    pub admin: bool,
}

fn yes() -> bool {
    true
}

/// One entry of the audit trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdminAction {
    pub id: i64,
    pub at: String,
    /// Who: `admin_token` (the configured token), later `account:<id>`.
    pub actor: String,
    /// `abort`, `away`, `secrets` or `scenario`.
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_id: Option<Uuid>,
    /// The request's parameters.
    pub detail: serde_json::Value,
    /// `ok`, or the error code the action was refused with.
    pub outcome: String,
}

/// `GET /api/admin/actions`: newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdminActionList {
    pub actions: Vec<AdminAction>,
    /// Pass as `before` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_before: Option<i64>,
}

/// `GET /api/admin/matches/{id}/chat`: a page of the match's chat, both channels (`table` and
/// `spectators`), in the order it was said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdminMatchChat {
    pub match_id: Uuid,
    pub chat: Vec<crate::ChatLine>,
    /// Pass as `after` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_after: Option<i64>,
}
