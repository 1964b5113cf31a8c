//! The JSON Schemas checked into `proto/`: the type each file is generated from, and a file's
//! text.

use crate::{
    Account, BotChoice, ClientMessage, CreateLobby, CreateMatch, Credentials, JoinLobby, LobbyList,
    LobbyStarted, LobbyState, MatchCreated, NewGuest, PickColour, SeatChoice, ServerMessage,
    SessionCreated, SessionInfo, SetReady, admin,
};
use schemars::JsonSchema;

/// A square in a client message has `x` and `y` and nothing else, as
/// [`crate::decode_client_message`] enforces (`rules::Pos` itself does not refuse other fields).
fn strict_squares(mut schema: schemars::Schema) -> schemars::Schema {
    if let Some(pos) = schema
        .as_object_mut()
        .and_then(|o| o.get_mut("$defs"))
        .and_then(|d| d.get_mut("Pos"))
        .and_then(|p| p.as_object_mut())
    {
        pos.insert("additionalProperties".into(), false.into());
    }
    schema
}

/// The JSON Schemas checked into `proto/`, one per top-level type, as (file name, schema).
/// `cargo run -p carcassonne-protocol --bin gen-schemas` writes them; a test fails when they drift.
pub fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        (
            "client-message.schema.json",
            strict_squares(schemars::schema_for!(ClientMessage)),
        ),
        (
            "server-message.schema.json",
            schemars::schema_for!(ServerMessage),
        ),
        (
            "create-match.schema.json",
            schemars::schema_for!(CreateMatch),
        ),
        (
            "match-created.schema.json",
            schemars::schema_for!(MatchCreated),
        ),
        (
            "admin-match-list.schema.json",
            schemars::schema_for!(admin::AdminMatchList),
        ),
        (
            "admin-match-summary.schema.json",
            schemars::schema_for!(admin::AdminMatchSummary),
        ),
        (
            "admin-match-log.schema.json",
            schemars::schema_for!(admin::AdminMatchLog),
        ),
        (
            "admin-match-chat.schema.json",
            schemars::schema_for!(admin::AdminMatchChat),
        ),
        (
            "admin-match-state.schema.json",
            schemars::schema_for!(admin::AdminMatchState),
        ),
        (
            "admin-match-secrets.schema.json",
            schemars::schema_for!(admin::AdminMatchSecrets),
        ),
        (
            "admin-away-request.schema.json",
            schemars::schema_for!(admin::AwayRequest),
        ),
        (
            "admin-role-request.schema.json",
            schemars::schema_for!(admin::AdminRoleRequest),
        ),
        (
            "admin-action-list.schema.json",
            schemars::schema_for!(admin::AdminActionList),
        ),
        (
            "scenario.schema.json",
            schemars::schema_for!(rules::scenario::Scenario),
        ),
        ("accounts.schema.json", schemars::schema_for!(AccountsApi)),
        ("history.schema.json", schemars::schema_for!(HistoryApi)),
        ("lobbies.schema.json", schemars::schema_for!(LobbiesApi)),
        ("me.schema.json", schemars::schema_for!(MeApi)),
        (
            "admin-moderation.schema.json",
            schemars::schema_for!(ModerationApi),
        ),
        ("ratings.schema.json", schemars::schema_for!(RatingsApi)),
        ("webhooks.schema.json", schemars::schema_for!(WebhooksApi)),
    ]
}

/// The REST bodies of the accounts API, gathered in one schema file (`proto/accounts.schema.json`).
#[derive(JsonSchema)]
#[allow(dead_code)]
enum AccountsApi {
    NewGuest(NewGuest),
    Credentials(Credentials),
    SessionCreated(SessionCreated),
    SessionInfo(Vec<SessionInfo>),
    Account(Account),
}

/// The answers of a match's history for its players and spectators, and of `GET /api/whoami`,
/// gathered in one schema file (`proto/history.schema.json`).
#[derive(JsonSchema)]
#[allow(dead_code)]
enum HistoryApi {
    MatchLog(crate::MatchLog),
    MatchChat(crate::MatchChat),
    Whoami(crate::Whoami),
}

/// The REST bodies of the lobby API, gathered in one schema file (`proto/lobbies.schema.json`).
#[derive(JsonSchema)]
#[allow(dead_code)]
enum LobbiesApi {
    CreateLobby(CreateLobby),
    JoinLobby(JoinLobby),
    PickColour(PickColour),
    SetReady(SetReady),
    SeatChoice(SeatChoice),
    BotChoice(BotChoice),
    LobbyState(LobbyState),
    LobbyList(LobbyList),
    LobbyStarted(LobbyStarted),
}

/// A player's own account (`/api/me/*`), reports and password resets, gathered in one schema
/// file (`proto/me.schema.json`).
#[derive(JsonSchema)]
#[allow(dead_code)]
enum MeApi {
    MyMatches(crate::MyMatches),
    PasswordChange(crate::PasswordChange),
    AccountDeletion(crate::AccountDeletion),
    PasswordReset(crate::PasswordReset),
    AccountExport(crate::AccountExport),
    NewReport(crate::NewReport),
    ReportCreated(crate::ReportCreated),
}

/// The admin API's moderation bodies, gathered in one schema file
/// (`proto/admin-moderation.schema.json`).
#[derive(JsonSchema)]
#[allow(dead_code)]
enum ModerationApi {
    SuspendRequest(crate::moderation::SuspendRequest),
    AccountStanding(crate::moderation::AccountStanding),
    ResetLink(crate::moderation::ResetLink),
    ReportList(crate::moderation::ReportList),
    ResolveReport(crate::moderation::ResolveReport),
}

/// The answers of the ratings API and of a finished match's replay, gathered in one schema file
/// (`proto/ratings.schema.json`).
#[derive(JsonSchema)]
#[allow(dead_code, clippy::large_enum_variant)]
enum RatingsApi {
    Leaderboard(crate::Leaderboard),
    PlayerProfile(crate::PlayerProfile),
    MatchReplay(crate::MatchReplay),
    RecomputeReport(crate::RecomputeReport),
}

/// An account's webhook and the notices posted to it, gathered in one schema file
/// (`proto/webhooks.schema.json`).
#[derive(JsonSchema)]
#[allow(dead_code)]
enum WebhooksApi {
    SetWebhook(crate::SetWebhook),
    WebhookCreated(crate::WebhookCreated),
    WebhookInfo(crate::WebhookInfo),
    TurnNotice(crate::TurnNotice),
}

/// The text of a schema file as checked in: pretty JSON with a final newline, so that diffs of
/// `proto/` stay readable.
pub fn schema_file_text(schema: &schemars::Schema) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(schema)?;
    text.push('\n');
    Ok(text)
}
