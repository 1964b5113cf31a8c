//! The admin API under `/api/admin`, for operators settling a dispute: the match list, a match's
//! summary, log, public state at any seq, secrets (of a match that is over), its export as a
//! scenario, and the actions abort and away. Every handler takes the [`Admin`] extractor, so no
//! route can forget the authorization; what reveals a secret or changes a match is written to
//! the audit trail (`admin_actions`) with who did it.

use super::error::ApiError;
use super::extract::MatchId;
use super::openapi::{
    AdminActionListDoc, AdminMatchChatDoc, AdminMatchListDoc, AdminMatchLogDoc,
    AdminMatchSecretsDoc, AdminMatchStateDoc, AdminMatchSummaryDoc, AdminRoleRequestDoc,
    AdminStatsDoc, AwayRequestDoc, ErrorBodyDoc, Routes, ScenarioDoc,
};
use crate::actor::ActorMsg;
use crate::actor::replay::{LoadError, Replayed, replay};
use crate::state::Shared;
use crate::store::admin::{
    AdminActionRow, MatchListRow, MatchQuery, ModuleFilter, PlayerFilter, SeatInfo,
};
use crate::store::{CommandRow, MatchRow, MatchStatus};
use crate::tokens::token_hash;
use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use chrono::{DateTime, Utc};
use protocol::admin::{
    AdminAction, AdminActionList, AdminLogEntry, AdminMatchList, AdminMatchLog, AdminMatchSecrets,
    AdminMatchState, AdminMatchSummary, AdminRoleRequest, AdminSeat, AwayRequest, ModuleName,
    Origin,
};
use protocol::{ErrorCode, Seq};
use rules::{Command, Event, Game, Setup};
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use tokio::sync::oneshot;
use tracing::{error, info, warn};
use utoipa_axum::routes;
use uuid::Uuid;

/// Most items of one page (matches, actions).
pub const MAX_PAGE: u32 = 100;
/// Most commands of one page of a log.
pub const MAX_LOG_PAGE: u32 = 1000;

/// The routes, to nest under `/api/admin`.
pub fn router() -> Routes {
    Routes::new()
        .routes(routes!(list_matches))
        .routes(routes!(summary))
        .routes(routes!(log))
        .routes(routes!(chat))
        .routes(routes!(state_at))
        .routes(routes!(secrets))
        .routes(routes!(scenario))
        .routes(routes!(abort))
        .routes(routes!(away))
        .routes(routes!(actions))
        .routes(routes!(stats))
        .routes(routes!(set_role))
}

/// Proof that the request may use the admin API: `Authorization: Bearer <admin token>`, or the
/// session (bearer or `session` cookie) of an account with the admin role. Every admin route
/// takes it, so none can forget the check. Without a configured token and without an admin
/// session the admin API is off (404).
#[derive(Debug)]
pub struct Admin {
    /// Who, as the audit trail names them: `admin_token`, or `account:<id>`.
    pub actor: String,
}

impl FromRequestParts<Arc<Shared>> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let expected = shared.config.admin.token();
        let bearer = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        // Compare hashes so that the comparison time says nothing about the token.
        if let (Some(expected), Some(given)) = (expected, bearer)
            && token_hash(given) == token_hash(expected)
        {
            return Ok(Admin {
                actor: "admin_token".into(),
            });
        }
        // An admin account's session (a revoked or unknown session is simply not one).
        if let Some((token, _)) = super::accounts::token_of(&parts.headers)
            && let Ok((_, account)) = crate::accounts::resolve(&shared.store, &token).await
            && account.admin
        {
            return Ok(Admin {
                actor: format!("account:{}", account.id),
            });
        }
        Err(match expected {
            None => ApiError::new(
                StatusCode::NOT_FOUND,
                ErrorCode::Unavailable,
                "the admin API is off (no admin token configured)",
            ),
            Some(_) => ApiError::new(
                StatusCode::UNAUTHORIZED,
                ErrorCode::BadToken,
                "the admin token or an admin account's session required",
            ),
        })
    }
}

// Helpers.

fn store_failed(e: impl std::fmt::Display) -> ApiError {
    error!(error = %e, "admin: the store failed");
    ApiError::internal("the store failed")
}

fn unknown_match() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::UnknownMatch,
        "no such match",
    )
}

fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(t)| t)
        .map_err(|r| ApiError::malformed(format!("bad query: {}", r.body_text())))
}

fn page_limit(limit: Option<u32>, default: u32, max: u32) -> Result<u32, ApiError> {
    match limit.unwrap_or(default) {
        n @ 1.. if n <= max => Ok(n),
        n => Err(ApiError::malformed(format!(
            "limit {n} is not in 1..={max}"
        ))),
    }
}

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

fn wire_status(s: MatchStatus) -> protocol::admin::MatchStatus {
    use protocol::admin::MatchStatus as W;
    match s {
        MatchStatus::Active => W::Active,
        MatchStatus::Finished => W::Finished,
        MatchStatus::Broken => W::Broken,
        MatchStatus::Aborted => W::Aborted,
    }
}

fn code_name(code: ErrorCode) -> String {
    serde_json::to_value(code)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{code:?}"))
}

fn parse_setup(setup: &str) -> Result<Setup, ApiError> {
    serde_json::from_str(setup).map_err(|e| {
        error!(error = %e, "admin: a stored setup does not parse");
        ApiError::internal("a stored setup does not parse")
    })
}

async fn load_row(shared: &Shared, id: Uuid) -> Result<MatchRow, ApiError> {
    shared
        .store
        .load_match(id)
        .await
        .map_err(store_failed)?
        .ok_or_else(unknown_match)
}

/// Writes one entry of the audit trail. An action whose entry cannot be written is reported
/// as failed: nothing an admin does goes unlogged.
async fn audit(
    shared: &Shared,
    admin: &Admin,
    action: &str,
    match_id: Option<Uuid>,
    detail: serde_json::Value,
    outcome: &Result<impl Sized, ApiError>,
) -> Result<(), ApiError> {
    let outcome = match outcome {
        Ok(_) => "ok".to_string(),
        Err(e) => code_name(e.body.code),
    };
    info!(actor = %admin.actor, action, ?match_id, %detail, %outcome, "admin action");
    let row = AdminActionRow {
        id: 0,
        at: Utc::now(),
        actor: admin.actor.clone(),
        action: action.to_string(),
        match_id,
        detail: detail.to_string(),
        outcome,
    };
    shared
        .store
        .record_action(&row)
        .await
        .map(|_| ())
        .map_err(|e| {
            error!(error = %e, "admin: cannot write the audit trail");
            ApiError::internal("the action could not be written to the audit trail")
        })
}

/// The summary of a listed match; `seats` are its seats (any order).
fn summary_of(row: &MatchListRow, seats: &[&SeatInfo]) -> Result<AdminMatchSummary, ApiError> {
    let setup = parse_setup(&row.setup)?;
    let m = &setup.modules;
    let mut modules = Vec::new();
    if m.tollkeepers {
        modules.push(ModuleName::Tollkeepers);
    }
    if m.messages {
        modules.push(ModuleName::Messages);
    }
    if let Some(map) = &m.map {
        modules.push(ModuleName::Map);
        if map.chips {
            modules.push(ModuleName::Chips);
        }
    }
    let players = setup
        .players
        .iter()
        .enumerate()
        .map(|(i, &colour)| {
            let stored = seats.iter().find(|s| usize::from(s.seat) == i);
            let account = stored.and_then(|s| s.account.clone());
            AdminSeat {
                seat: i as u8,
                colour,
                away_since: stored.and_then(|s| s.away_since).map(time),
                account: account.as_ref().map(|(id, _)| *id),
                name: account.map(|(_, name)| name),
            }
        })
        .collect();
    let scores = row
        .last_events
        .as_deref()
        .and_then(|e| serde_json::from_str::<Vec<Event>>(e).ok())
        .and_then(|events| {
            events.into_iter().find_map(|e| match e {
                Event::GameEnded { scores } => Some(scores),
                _ => None,
            })
        });
    Ok(AdminMatchSummary {
        match_id: row.id,
        status: wire_status(row.status),
        created_at: time(row.created_at),
        updated_at: time(row.updated_at),
        rules_version: row.rules_version.clone(),
        players,
        modules,
        map_id: m.map.as_ref().map(|map| map.map.clone()),
        seq: row.seq,
        scores,
    })
}

async fn summaries(
    shared: &Shared,
    rows: &[MatchListRow],
) -> Result<Vec<AdminMatchSummary>, ApiError> {
    let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
    let seats = shared.store.seats_of(&ids).await.map_err(store_failed)?;
    rows.iter()
        .map(|r| {
            let mine: Vec<&SeatInfo> = seats.iter().filter(|s| s.match_id == r.id).collect();
            summary_of(r, &mine)
        })
        .collect()
}

/// Replays the match's first `upto` commands off the async threads (a long game is many
/// milliseconds of rules work). Unlike loading a match to play it, any status is replayed: an
/// admin reads broken and aborted matches too.
async fn replay_upto(row: &MatchRow, records: Vec<CommandRow>) -> Result<Replayed, ApiError> {
    let (version, setup, created, clock) = (
        row.rules_version.clone(),
        row.setup.clone(),
        row.created_at,
        row.clock,
    );
    let replayed =
        tokio::task::spawn_blocking(move || replay(&version, &setup, created, clock, records))
            .await
            .map_err(|e| ApiError::internal(format!("the replay failed: {e}")))?;
    replayed.map_err(|e| match e {
        LoadError::RulesVersion { .. } => {
            ApiError::new(StatusCode::CONFLICT, ErrorCode::Unavailable, e.to_string())
        }
        other => ApiError::internal(other.to_string()),
    })
}

// Reads.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    status: Option<String>,
    module: Option<String>,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
    limit: Option<u32>,
    cursor: Option<String>,
    player: Option<String>,
}

/// The `player` filter: an account id, else a display name (matched case-insensitively, as
/// names are keyed). A value that is neither is refused rather than matching nothing, so a typo
/// in a tool's query shows.
fn parse_player(raw: &str) -> Result<PlayerFilter, ApiError> {
    if let Ok(id) = Uuid::parse_str(raw) {
        return Ok(PlayerFilter::Account(id));
    }
    let (_, key) = crate::accounts::check_name(raw)
        .map_err(|e| ApiError::malformed(format!("`player` is no account id or name: {e}")))?;
    Ok(PlayerFilter::NameKey(key))
}

/// The keyset cursor of a page: `<created_at in ns since the epoch>_<match id>` of its last
/// match (URL-safe, opaque to clients).
fn encode_cursor(row: &MatchListRow) -> Option<String> {
    let ns = row.created_at.timestamp_nanos_opt()?;
    Some(format!("{ns}_{}", row.id.simple()))
}

fn decode_cursor(c: &str) -> Result<(DateTime<Utc>, Uuid), ApiError> {
    let bad = || ApiError::malformed("not a cursor of this list");
    let (ns, id) = c.split_once('_').ok_or_else(bad)?;
    let ns: i64 = ns.parse().map_err(|_| bad())?;
    Ok((
        DateTime::from_timestamp_nanos(ns),
        Uuid::parse_str(id).map_err(|_| bad())?,
    ))
}

/// `GET /matches`: filters `status`, `module`, `from` (inclusive), `to` (exclusive), `player`; pages of
/// `limit` (default 50, at most 100), newest first; `cursor` from the previous page.
#[utoipa::path(
    operation_id = "admin_list_matches",
    get, path = "/matches", tag = "admin",
    description = "The matches, newest first, filtered and paginated.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("status" = Option<String>, Query, description = "`active`, `finished`, `broken` or `aborted`"),
        ("module" = Option<String>, Query, description = "`tollkeepers`, `messages`, `map` or `chips`"),
        ("from" = Option<String>, Query, format = DateTime, description = "Created at or after (RFC 3339)"),
        ("to" = Option<String>, Query, format = DateTime, description = "Created before (RFC 3339)"),
        ("limit" = Option<u32>, Query, description = "Matches per page, 1 to 100 (default 50)"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
        ("player" = Option<String>, Query, description = "Matches where this player holds a seat: an account id, or a display name (case-insensitive)"),
    ),
    responses(
        (status = 200, description = "A page of matches; `next_cursor` asks for the next", body = AdminMatchListDoc),
        (status = 400, description = "`malformed`: a bad id, query or body", body = ErrorBodyDoc),
        (status = 401, description = "`bad_token`: neither the admin token nor an admin account's session", body = ErrorBodyDoc),
        (status = 404, description = "`unavailable`: the admin API is off (no admin token configured and no admin session)", body = ErrorBodyDoc),
    ),
)]
async fn list_matches(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<AdminMatchList>, ApiError> {
    let q = query(q)?;
    let status = match q.status.as_deref() {
        None => None,
        Some(s) => Some(
            MatchStatus::parse(s).map_err(|_| ApiError::malformed(format!("no status `{s}`")))?,
        ),
    };
    let module = match q.module.as_deref() {
        None => None,
        Some("tollkeepers") => Some(ModuleFilter::Tollkeepers),
        Some("messages") => Some(ModuleFilter::Messages),
        Some("map") => Some(ModuleFilter::Map),
        Some("chips") => Some(ModuleFilter::Chips),
        Some(m) => return Err(ApiError::malformed(format!("no module `{m}`"))),
    };
    let limit = page_limit(q.limit, 50, MAX_PAGE)?;
    let query = MatchQuery {
        id: None,
        status,
        module,
        from: q.from,
        to: q.to,
        before: q.cursor.as_deref().map(decode_cursor).transpose()?,
        player: q.player.as_deref().map(parse_player).transpose()?,
        // One more than asked: whether there is a next page.
        limit: limit + 1,
    };
    let mut rows = shared
        .store
        .list_matches(&query)
        .await
        .map_err(store_failed)?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next_cursor = match more {
        true => rows.last().and_then(encode_cursor),
        false => None,
    };
    Ok(Json(AdminMatchList {
        matches: summaries(&shared, &rows).await?,
        next_cursor,
    }))
}

/// `GET /matches/{id}`.
#[utoipa::path(
    operation_id = "admin_summary",
    get, path = "/matches/{id}", tag = "admin",
    description = "A match's summary.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The match id")),
    responses(
        (status = 200, description = "The summary", body = AdminMatchSummaryDoc),
        (status = 400, description = "`malformed`: a bad id, query or body", body = ErrorBodyDoc),
        (status = 401, description = "`bad_token`: neither the admin token nor an admin account's session", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_match`; `unavailable`: the admin API is off (no admin token configured and no admin session)", body = ErrorBodyDoc),
    ),
)]
async fn summary(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
) -> Result<Json<AdminMatchSummary>, ApiError> {
    let rows = shared
        .store
        .list_matches(&MatchQuery {
            id: Some(id),
            limit: 1,
            ..MatchQuery::default()
        })
        .await
        .map_err(store_failed)?;
    if rows.is_empty() {
        return Err(unknown_match());
    }
    let mut all = summaries(&shared, &rows).await?;
    all.pop().map(Json).ok_or_else(unknown_match)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LogQuery {
    after: Option<Seq>,
    limit: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChatQuery {
    after: Option<i64>,
    limit: Option<u32>,
}

#[utoipa::path(
    operation_id = "admin_chat",
    get, path = "/matches/{id}/chat", tag = "admin",
    description = "The match's chat, both channels (table and spectators), in the order it was said.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("id" = String, Path, format = Uuid, description = "The match id"),
        ("after" = Option<i64>, Query, description = "The lines after this cursor (a `next_after`; default 0)"),
        ("limit" = Option<u32>, Query, description = "Lines per page, 1 to 1000 (default 1000)"),
    ),
    responses(
        (status = 200, description = "A page of the chat; `next_after` asks for the next", body = AdminMatchChatDoc),
        (status = 400, description = "`malformed`: a bad id, query or body", body = ErrorBodyDoc),
        (status = 401, description = "`bad_token`: neither the admin token nor an admin account's session", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_match`; `unavailable`: the admin API is off (no admin token configured and no admin session)", body = ErrorBodyDoc),
    ),
)]
/// `GET /matches/{id}/chat`: the match's chat lines (both channels) after the line `after`,
/// `limit` of them (default and most 1000), in the order they were said.
async fn chat(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
    q: Result<Query<ChatQuery>, QueryRejection>,
) -> Result<Json<protocol::admin::AdminMatchChat>, ApiError> {
    use crate::store::chat::MAX_CHAT_PAGE;
    let q = query(q)?;
    let limit = page_limit(q.limit, MAX_CHAT_PAGE, MAX_CHAT_PAGE)?;
    load_row(&shared, id).await?;
    let mut lines = shared
        .store
        .match_chat(id, q.after.unwrap_or(0), limit + 1)
        .await
        .map_err(store_failed)?;
    let more = lines.len() > limit as usize;
    lines.truncate(limit as usize);
    let next_after = match more {
        true => lines.last().map(|(i, _)| *i),
        false => None,
    };
    Ok(Json(protocol::admin::AdminMatchChat {
        match_id: id,
        chat: lines.into_iter().map(|(_, l)| l).collect(),
        next_after,
    }))
}

/// `GET /matches/{id}/log`: the commands after `after` (default 0), `limit` of them (default
/// and most 1000), in seq order. The setup (with its seed) is left out even here.
#[utoipa::path(
    operation_id = "admin_log",
    get, path = "/matches/{id}/log", tag = "admin",
    description = "The match's commands (who sent each, when, and its events), in seq order.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("id" = String, Path, format = Uuid, description = "The match id"),
        ("after" = Option<u64>, Query, description = "The commands after this seq (default 0)"),
        ("limit" = Option<u32>, Query, description = "Commands per page, 1 to 1000 (default 1000)"),
    ),
    responses(
        (status = 200, description = "A page of the log; `next_after` asks for the next", body = AdminMatchLogDoc),
        (status = 400, description = "`malformed`: a bad id, query or body", body = ErrorBodyDoc),
        (status = 401, description = "`bad_token`: neither the admin token nor an admin account's session", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_match`; `unavailable`: the admin API is off (no admin token configured and no admin session)", body = ErrorBodyDoc),
    ),
)]
async fn log(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
    q: Result<Query<LogQuery>, QueryRejection>,
) -> Result<Json<AdminMatchLog>, ApiError> {
    let q = query(q)?;
    let limit = page_limit(q.limit, MAX_LOG_PAGE, MAX_LOG_PAGE)?;
    let after = q.after.unwrap_or(0);
    let row = load_row(&shared, id).await?;
    // Seqs have no holes: the page is `after < seq <= after + limit`, and one more tells
    // whether there is a next page.
    let mut records = shared
        .store
        .commands_between(id, after, after.saturating_add(u64::from(limit) + 1))
        .await
        .map_err(store_failed)?;
    let more = records.len() > limit as usize;
    records.truncate(limit as usize);
    let corrupt = |what: &str, seq: Seq, e: serde_json::Error| {
        error!(seq, error = %e, "admin: a stored {what} does not parse");
        ApiError::internal(format!("the stored {what} of seq {seq} does not parse"))
    };
    let mut commands = Vec::with_capacity(records.len());
    for r in records {
        let command: Command =
            serde_json::from_str(&r.command).map_err(|e| corrupt("command", r.seq, e))?;
        let events: Vec<Event> =
            serde_json::from_str(&r.events).map_err(|e| corrupt("events", r.seq, e))?;
        commands.push(AdminLogEntry {
            seq: r.seq,
            seat: r.seat,
            // Until the store keeps an origin, the server's own commands are known by their id.
            origin: match r.command_id.starts_with(protocol::SERVER_COMMAND_PREFIX) {
                true => Origin::Server,
                false => Origin::Player,
            },
            command_id: r.command_id,
            command,
            events,
            created_at: time(r.created_at),
        });
    }
    let next_after = match more {
        true => commands.last().map(|c| c.seq),
        false => None,
    };
    Ok(Json(AdminMatchLog {
        match_id: id,
        status: wire_status(row.status),
        rules_version: row.rules_version,
        created_at: time(row.created_at),
        commands,
        next_after,
    }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateQuery {
    seq: Option<Seq>,
}

/// `GET /matches/{id}/state?seq=N`: the public view at seq N (default: the last), replayed
/// from the store through the rules; the same view a subscribed client had at N.
#[utoipa::path(
    operation_id = "admin_state_at",
    get, path = "/matches/{id}/state", tag = "admin",
    description = "The public view at a seq, replayed through the rules.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("id" = String, Path, format = Uuid, description = "The match id"),
        ("seq" = Option<u64>, Query, description = "The seq (default: the last)"),
    ),
    responses(
        (status = 200, description = "The view at the seq", body = AdminMatchStateDoc),
        (status = 400, description = "`malformed`: a bad id, query or body", body = ErrorBodyDoc),
        (status = 401, description = "`bad_token`: neither the admin token nor an admin account's session", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_match`; `unavailable`: the admin API is off (no admin token configured and no admin session)", body = ErrorBodyDoc),
        (status = 409, description = "`unavailable`: the match was played with other rules", body = ErrorBodyDoc),
    ),
)]
async fn state_at(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
    q: Result<Query<StateQuery>, QueryRejection>,
) -> Result<Json<AdminMatchState>, ApiError> {
    let q = query(q)?;
    let row = load_row(&shared, id).await?;
    let records = shared
        .store
        .commands_between(id, 0, q.seq.unwrap_or(Seq::MAX))
        .await
        .map_err(store_failed)?;
    let replayed = replay_upto(&row, records).await?;
    if let Some(seq) = q.seq
        && replayed.seq != seq
    {
        return Err(ApiError::malformed(format!(
            "seq {seq} is past the match's last seq {}",
            replayed.seq
        )));
    }
    Ok(Json(AdminMatchState {
        match_id: id,
        seq: replayed.seq,
        view: replayed.game.view(),
    }))
}

/// Whether a match is over for good, so that its secrets may be shown.
fn is_over(status: MatchStatus) -> bool {
    matches!(status, MatchStatus::Finished | MatchStatus::Aborted)
}

/// `GET /matches/{id}/secrets`: seed, pile order, face-down chips, dispatch stack, at the start
/// and at the end; only for a finished or aborted match (invariant 4 holds while it is played).
#[utoipa::path(
    operation_id = "admin_secrets",
    get, path = "/matches/{id}/secrets", tag = "admin",
    description = "Seed, pile order, face-down chips and dispatch stack, at the start and the end, of a finished or aborted match. Audited.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The match id")),
    responses(
        (status = 200, description = "The secrets", body = AdminMatchSecretsDoc),
        (status = 400, description = "`malformed`: a bad id, query or body", body = ErrorBodyDoc),
        (status = 401, description = "`bad_token`: neither the admin token nor an admin account's session", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_match`; `unavailable`: the admin API is off (no admin token configured and no admin session)", body = ErrorBodyDoc),
        (status = 409, description = "`not_finished`: the match is still played", body = ErrorBodyDoc),
    ),
)]
async fn secrets(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
) -> Result<Json<AdminMatchSecrets>, ApiError> {
    let result = secrets_of(&shared, id).await;
    audit(&shared, &admin, "secrets", Some(id), json!({}), &result).await?;
    result.map(Json)
}

async fn secrets_of(shared: &Shared, id: Uuid) -> Result<AdminMatchSecrets, ApiError> {
    let row = load_row(shared, id).await?;
    if !is_over(row.status) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::NotFinished,
            format!(
                "the match is {}: its secrets are shown once it is finished or aborted",
                row.status.as_str()
            ),
        ));
    }
    let records = shared.store.commands(id, 0).await.map_err(store_failed)?;
    // The status and records read may be of a commit not yet synced (SQLite): once this returns
    // they are durable, so no power cut can take back the end of a match whose secrets are shown.
    shared.store.sync().await.map_err(store_failed)?;
    let replayed = replay_upto(&row, records).await?;
    let start = Game::start(replayed.game.setup().clone())
        .map_err(|e| ApiError::internal(format!("the setup no longer starts: {e}")))?
        .0
        .secrets();
    Ok(AdminMatchSecrets {
        match_id: id,
        seq: replayed.seq,
        start,
        end: replayed.game.secrets(),
    })
}

/// `GET /matches/{id}/scenario`: the match as a scenario file (`crates/rules/scenarios/*.json`)
/// that the `scenario` binary replays to the same events and scores. A finished or aborted match
/// is exported with its own setup (seed included); a match still being played without any
/// secret (see `rules::scenario::record`).
#[utoipa::path(
    operation_id = "admin_scenario",
    get, path = "/matches/{id}/scenario", tag = "admin",
    description = "The match as a scenario file that the `scenario` binary replays to the same events and scores (with its secrets only once it is over). Audited.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The match id")),
    responses(
        (status = 200, description = "The scenario", body = ScenarioDoc),
        (status = 400, description = "`malformed`: a bad id, query or body", body = ErrorBodyDoc),
        (status = 401, description = "`bad_token`: neither the admin token nor an admin account's session", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_match`; `unavailable`: the admin API is off (no admin token configured and no admin session)", body = ErrorBodyDoc),
        (status = 409, description = "`not_finished`: the export would need a secret of a match still played", body = ErrorBodyDoc),
    ),
)]
async fn scenario(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
) -> Result<Json<rules::scenario::Scenario>, ApiError> {
    let result = scenario_of(&shared, id).await;
    let detail = match &result {
        Ok((_, reveal)) => json!({ "revealed": reveal }),
        Err(_) => json!({}),
    };
    audit(&shared, &admin, "scenario", Some(id), detail, &result).await?;
    result.map(|(s, _)| Json(s))
}

async fn scenario_of(
    shared: &Shared,
    id: Uuid,
) -> Result<(rules::scenario::Scenario, bool), ApiError> {
    let row = load_row(shared, id).await?;
    let reveal = is_over(row.status);
    let setup = parse_setup(&row.setup)?;
    let records = shared.store.commands(id, 0).await.map_err(store_failed)?;
    // As in `secrets_of`: what was read is durable before it (and perhaps the secrets) is shown.
    shared.store.sync().await.map_err(store_failed)?;
    let seq = records.last().map_or(0, |r| r.seq);
    let mut log = Vec::with_capacity(records.len());
    for r in &records {
        let c: Command = serde_json::from_str(&r.command)
            .map_err(|e| ApiError::internal(format!("the command of seq {}: {e}", r.seq)))?;
        log.push((r.seat, c));
    }
    let name = format!("match {id} to seq {seq}");
    let recorded =
        tokio::task::spawn_blocking(move || rules::scenario::record(&name, &setup, log, reveal))
            .await
            .map_err(|e| ApiError::internal(format!("the export failed: {e}")))?;
    match recorded {
        Ok(s) => Ok((s, reveal)),
        Err(e @ rules::scenario::ScenarioError::Secret(_)) => Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::NotFinished,
            e.to_string(),
        )),
        Err(e) => Err(ApiError::internal(format!("the log does not replay: {e}"))),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionsQuery {
    match_id: Option<Uuid>,
    before: Option<i64>,
    limit: Option<u32>,
}

/// `GET /actions`: the audit trail, newest first, of one match (`match_id`) or all; pages of
/// `limit` (default 50, at most 100) before the entry `before`.
#[utoipa::path(
    operation_id = "admin_actions",
    get, path = "/actions", tag = "admin",
    description = "The audit trail, newest first.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("match_id" = Option<String>, Query, format = Uuid, description = "Only the actions on this match"),
        ("before" = Option<i64>, Query, description = "`next_before` of the previous page"),
        ("limit" = Option<u32>, Query, description = "Actions per page, 1 to 100 (default 50)"),
    ),
    responses(
        (status = 200, description = "A page of admin actions; `next_before` asks for the next", body = AdminActionListDoc),
        (status = 400, description = "`malformed`: a bad id, query or body", body = ErrorBodyDoc),
        (status = 401, description = "`bad_token`: neither the admin token nor an admin account's session", body = ErrorBodyDoc),
        (status = 404, description = "`unavailable`: the admin API is off (no admin token configured and no admin session)", body = ErrorBodyDoc),
    ),
)]
async fn actions(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    q: Result<Query<ActionsQuery>, QueryRejection>,
) -> Result<Json<AdminActionList>, ApiError> {
    let q = query(q)?;
    let limit = page_limit(q.limit, 50, MAX_PAGE)?;
    let mut rows = shared
        .store
        .actions(q.match_id, q.before, limit + 1)
        .await
        .map_err(store_failed)?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next_before = match more {
        true => rows.last().map(|r| r.id),
        false => None,
    };
    let actions = rows
        .into_iter()
        .map(|r| AdminAction {
            id: r.id,
            at: time(r.at),
            actor: r.actor,
            action: r.action,
            match_id: r.match_id,
            detail: serde_json::from_str(&r.detail).unwrap_or(serde_json::Value::Null),
            outcome: r.outcome,
        })
        .collect();
    Ok(Json(AdminActionList {
        actions,
        next_before,
    }))
}

/// What is in memory: match actors and WebSocket connections.
#[utoipa::path(
    operation_id = "admin_stats",
    get, path = "/stats", tag = "admin",
    description = "What is in memory: match actors and WebSocket connections.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    responses(
        (status = 200, description = "The figures", body = AdminStatsDoc),
        (status = 400, description = "`malformed`: a bad id, query or body", body = ErrorBodyDoc),
        (status = 401, description = "`bad_token`: neither the admin token nor an admin account's session", body = ErrorBodyDoc),
        (status = 404, description = "`unavailable`: the admin API is off (no admin token configured and no admin session)", body = ErrorBodyDoc),
    ),
)]
async fn stats(_: Admin, State(shared): State<Arc<Shared>>) -> Json<serde_json::Value> {
    Json(json!({
        "matches_in_memory": shared.registry.len(),
        "connections": *shared.connections.borrow(),
        "store": shared.store.kind(),
    }))
}

// Actions.

/// `POST /matches/{id}/abort`: ends an active match for good (status `aborted`). Its actor
/// stores what was queued before, then refuses every command with `aborted`; a restart does not
/// resume it. Answers the match's summary.
#[utoipa::path(
    operation_id = "admin_abort",
    post, path = "/matches/{id}/abort", tag = "admin",
    description = "Ends an active match for good (status `aborted`). Audited.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The match id")),
    responses(
        (status = 200, description = "The match's summary", body = AdminMatchSummaryDoc),
        (status = 400, description = "`malformed`: a bad id, query or body", body = ErrorBodyDoc),
        (status = 401, description = "`bad_token`: neither the admin token nor an admin account's session", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_match`; `unavailable`: the admin API is off (no admin token configured and no admin session)", body = ErrorBodyDoc),
        (status = 409, description = "`not_active`: the match is no longer active", body = ErrorBodyDoc),
        (status = 503, description = "`unavailable`: the server is shutting down", body = ErrorBodyDoc),
    ),
)]
async fn abort(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
) -> Result<Json<AdminMatchSummary>, ApiError> {
    let result = abort_match(&shared, id).await;
    let detail = match &result {
        Ok(seq) => json!({ "seq": seq }),
        Err(_) => json!({}),
    };
    audit(&shared, &admin, "abort", Some(id), detail, &result).await?;
    result?;
    summary(admin, State(shared), MatchId(id)).await
}

fn not_active(status: MatchStatus) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        ErrorCode::NotActive,
        format!("the match is {}", status.as_str()),
    )
}

async fn abort_match(shared: &Shared, id: Uuid) -> Result<Seq, ApiError> {
    let row = load_row(shared, id).await?;
    if row.status != MatchStatus::Active {
        return Err(not_active(row.status));
    }
    let unavailable = || {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unavailable,
            "the server is shutting down",
        )
    };
    // Through the actor, in its inbox order: the commands queued before are stored first, and
    // none is accepted after.
    let handle = shared.registry.get_or_load(id).map_err(|_| unavailable())?;
    let (reply, answer) = oneshot::channel();
    handle
        .tx
        .send(ActorMsg::Abort { reply })
        .await
        .map_err(|_| unavailable())?;
    match answer.await.map_err(|_| unavailable())? {
        Ok(seq) => Ok(seq),
        Err(ErrorCode::NotActive) => Err(not_active(MatchStatus::Finished)),
        Err(code @ ErrorCode::Internal) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            code,
            "the store failed",
        )),
        Err(code) => Err(ApiError::new(
            StatusCode::CONFLICT,
            code,
            "the match cannot be aborted now",
        )),
    }
}

/// `POST /matches/{id}/away` `{"seat": n, "away": true|false}`: marks the seat's player away
/// (or back), stored with the time. In a match with a game clock the server then plays every
/// decision of an away player at once (a command from their seat brings them back); without a
/// clock the mark is only recorded. Answers the match's summary.
#[utoipa::path(
    operation_id = "admin_away",
    post, path = "/matches/{id}/away", tag = "admin",
    description = "Marks a seat's player away (or back). Audited.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The match id")),
    request_body = AwayRequestDoc,
    responses(
        (status = 200, description = "The match's summary", body = AdminMatchSummaryDoc),
        (status = 400, description = "`malformed`: a bad id, query or body", body = ErrorBodyDoc),
        (status = 401, description = "`bad_token`: neither the admin token nor an admin account's session", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_match`; `unavailable`: the admin API is off (no admin token configured and no admin session)", body = ErrorBodyDoc),
        (status = 409, description = "`not_active`: the match is no longer active", body = ErrorBodyDoc),
    ),
)]
async fn away(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
    body: Result<Json<AwayRequest>, JsonRejection>,
) -> Result<Json<AdminMatchSummary>, ApiError> {
    let Json(req) =
        body.map_err(|r| ApiError::malformed(format!("not an away request: {}", r.body_text())))?;
    let result = mark_away(&shared, id, &req).await;
    let detail = json!({ "seat": req.seat, "away": req.away });
    audit(&shared, &admin, "away", Some(id), detail, &result).await?;
    result?;
    summary(admin, State(shared), MatchId(id)).await
}

async fn mark_away(shared: &Shared, id: Uuid, req: &AwayRequest) -> Result<(), ApiError> {
    let row = load_row(shared, id).await?;
    if row.status != MatchStatus::Active {
        return Err(not_active(row.status));
    }
    let since = req.away.then(Utc::now);
    match shared.store.set_away(id, req.seat, since).await {
        Ok(true) => {
            // A match in memory follows the stored mark (one not in memory reads it on load).
            // A new mark loads the match: an away player's decisions are played at once, and a
            // match not in memory would not play them before its next touch.
            if (req.away || shared.registry.is_running(id))
                && let Ok(handle) = shared.registry.get_or_load(id)
            {
                let msg = ActorMsg::Away {
                    seat: req.seat,
                    away: req.away,
                };
                if handle.tx.send(msg).await.is_err() {
                    warn!(match_id = %id, "the match left memory before the away mark reached it");
                }
            }
            Ok(())
        }
        Ok(false) => Err(ApiError::malformed(format!(
            "the match has no seat {}",
            req.seat
        ))),
        Err(e) => Err(store_failed(e)),
    }
}

/// `PUT /accounts/{id}/admin` `{"admin": true|false}`: gives a registered account the admin role
/// or takes it away; its sessions then open (or no longer open) the admin API. Audited.
#[utoipa::path(
    operation_id = "admin_set_role",
    put, path = "/accounts/{id}/admin", tag = "admin",
    description = "Gives a registered account the admin role, or takes it away. Audited.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The account id")),
    request_body = AdminRoleRequestDoc,
    responses(
        (status = 204, description = "Done"),
        (status = 400, description = "`malformed`: a bad id or body", body = ErrorBodyDoc),
        (status = 401, description = "`bad_token`: neither the admin token nor an admin account's session", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_session`: no registered account has this id (guests cannot be admins); `unavailable`: the admin API is off", body = ErrorBodyDoc),
    ),
)]
async fn set_role(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Result<Json<AdminRoleRequest>, JsonRejection>,
) -> Result<StatusCode, ApiError> {
    let account = Uuid::parse_str(&id).map_err(|_| ApiError::malformed("not an account id"))?;
    let Json(req) =
        body.map_err(|r| ApiError::malformed(format!("not a role request: {}", r.body_text())))?;
    let result = match shared.store.set_admin(account, req.admin).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::UnknownSession,
            "no registered account has this id (guests cannot be admins)",
        )),
        Err(e) => Err(store_failed(e)),
    };
    let detail = json!({ "account": account, "admin": req.admin });
    audit(&shared, &admin, "role", None, detail, &result).await?;
    result.map(|()| StatusCode::NO_CONTENT)
}
