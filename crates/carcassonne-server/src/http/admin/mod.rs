//! The admin API under `/api/admin`, for operators settling a dispute: the match list, a match's
//! summary, log, public state at any seq, secrets (of a match that is over), its export as a
//! scenario, and the actions abort and away. Every handler takes the [`Admin`] extractor, so no
//! route can forget the authorization; what reveals a secret or changes a match is written to
//! the audit trail (`admin_actions`) with who did it.
//!
//! One file per job: [`matches`] (list, summary), [`history`] (log, chat, state at a seq),
//! [`secrets`] (secrets and scenario of a match that is over), [`audit`] (the trail, written and
//! read), [`actions`] (abort, away, the admin role), [`moderation`] (accounts' standing and
//! suspensions, reset links, chat removal, reports); this file holds the router, the [`Admin`]
//! extractor, the helpers they share and the stats.

mod actions;
pub(in crate::http) mod audit;
mod history;
mod matches;
mod moderation;
mod secrets;

use super::error::ApiError;
use super::openapi::{AdminStatsDoc, Routes};
use super::refusals::AdminRefusals;
use crate::actor::replay::{LoadError, Replayed, replay};
use crate::state::Shared;
use crate::store::admin::{MatchListRow, SeatInfo};
use crate::store::{CommandRow, MatchRow, MatchStatus};
use crate::tokens::token_hash;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequestParts, Query, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use chrono::{DateTime, Utc};
use protocol::ErrorCode;
use protocol::admin::{AdminMatchSummary, AdminSeat, ModuleName};
use rules::{Event, Setup};
use serde_json::json;
use std::sync::Arc;
use tracing::error;
use utoipa_axum::routes;
use uuid::Uuid;

/// Most items of one page (matches, actions).
pub const MAX_PAGE: u32 = 100;
/// Most commands of one page of a log.
pub const MAX_LOG_PAGE: u32 = 1000;

/// The routes, to nest under `/api/admin`.
pub fn router() -> Routes {
    Routes::new()
        .routes(routes!(matches::list_matches))
        .routes(routes!(matches::summary))
        .routes(routes!(history::log))
        .routes(routes!(history::chat))
        .routes(routes!(history::state_at))
        .routes(routes!(secrets::secrets))
        .routes(routes!(secrets::scenario))
        .routes(routes!(actions::abort))
        .routes(routes!(actions::away))
        .routes(routes!(audit::actions))
        .routes(routes!(stats))
        .routes(routes!(actions::set_role))
        .routes(routes!(moderation::account))
        .routes(routes!(moderation::suspend, moderation::unsuspend))
        .routes(routes!(moderation::password_reset))
        .routes(routes!(moderation::remove_chat))
        .routes(routes!(moderation::reports))
        .routes(routes!(moderation::resolve))
}

pub(in crate::http) use matches::{decode_cursor, encode_cursor};
pub(in crate::http) use moderation::mark_seats_away;

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

pub(in crate::http) fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(t)| t)
        .map_err(|r| ApiError::malformed(format!("bad query: {}", r.body_text())))
}

pub(in crate::http) fn page_limit(
    limit: Option<u32>,
    default: u32,
    max: u32,
) -> Result<u32, ApiError> {
    match limit.unwrap_or(default) {
        n @ 1.. if n <= max => Ok(n),
        n => Err(ApiError::malformed(format!(
            "limit {n} is not in 1..={max}"
        ))),
    }
}

pub(in crate::http) fn time(t: DateTime<Utc>) -> String {
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

pub(in crate::http) fn parse_setup(setup: &str) -> Result<Setup, ApiError> {
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
    if m.inns_cathedrals {
        modules.push(ModuleName::InnsCathedrals);
    }
    if m.traders_builders {
        modules.push(ModuleName::TradersBuilders);
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
        owner: None,
    })
}

pub(in crate::http) async fn summaries(
    shared: &Shared,
    rows: &[MatchListRow],
) -> Result<Vec<AdminMatchSummary>, ApiError> {
    let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
    let seats = shared.store.seats_of(&ids).await.map_err(store_failed)?;
    // In a cluster, which node runs each match now.
    let owners = match (shared.registry.cluster(), shared.store.leases()) {
        (Some(_), Some(leases)) => leases.match_owners(&ids).await.map_err(store_failed)?,
        _ => Default::default(),
    };
    rows.iter()
        .map(|r| {
            let mine: Vec<&SeatInfo> = seats.iter().filter(|s| s.match_id == r.id).collect();
            let mut summary = summary_of(r, &mine)?;
            summary.owner = owners.get(&r.id).cloned();
            Ok(summary)
        })
        .collect()
}

/// Replays the match's first `upto` commands off the async threads (a long game is many
/// milliseconds of rules work). Unlike loading a match to play it, any status is replayed: an
/// admin reads broken and aborted matches too.
pub(in crate::http) async fn replay_upto(
    row: &MatchRow,
    records: Vec<CommandRow>,
) -> Result<Replayed, ApiError> {
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

/// What is in memory: match actors and WebSocket connections.
#[utoipa::path(
    operation_id = "admin_stats",
    get, path = "/stats", tag = "admin",
    description = "What is in memory: match actors and WebSocket connections.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    responses(
        (status = 200, description = "The figures", body = AdminStatsDoc),
        AdminRefusals,
    ),
)]
async fn stats(_: Admin, State(shared): State<Arc<Shared>>) -> Json<serde_json::Value> {
    Json(json!({
        "matches_in_memory": shared.registry.len(),
        "connections": *shared.connections.borrow(),
        "store": shared.store.kind(),
    }))
}
