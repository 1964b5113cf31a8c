//! Finding a match: the filtered, paginated list and one match's summary.

use super::{Admin, MAX_PAGE, page_limit, query, store_failed, summaries, unknown_match};
use crate::http::error::ApiError;
use crate::http::extract::MatchId;
use crate::http::openapi::{AdminMatchListDoc, AdminMatchSummaryDoc};
use crate::http::refusals::{AdminMatchRefusals, AdminRefusals};
use crate::state::Shared;
use crate::store::MatchStatus;
use crate::store::admin::{MatchListRow, MatchQuery, ModuleFilter, PlayerFilter};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use chrono::{DateTime, Utc};
use protocol::admin::{AdminMatchList, AdminMatchSummary};
use serde::Deserialize;
use std::sync::Arc;
use uuid::Uuid;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListQuery {
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
pub(super) fn parse_player(raw: &str) -> Result<PlayerFilter, ApiError> {
    if let Ok(id) = Uuid::parse_str(raw) {
        return Ok(PlayerFilter::Account(id));
    }
    let (_, key) = crate::accounts::check_name(raw)
        .map_err(|e| ApiError::malformed(format!("`player` is no account id or name: {e}")))?;
    Ok(PlayerFilter::NameKey(key))
}

/// The keyset cursor of a page: `<created_at in ns since the epoch>_<match id>` of its last
/// match (URL-safe, opaque to clients).
pub(in crate::http) fn encode_cursor(row: &MatchListRow) -> Option<String> {
    let ns = row.created_at.timestamp_nanos_opt()?;
    Some(format!("{ns}_{}", row.id.simple()))
}

pub(in crate::http) fn decode_cursor(c: &str) -> Result<(DateTime<Utc>, Uuid), ApiError> {
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
        ("module" = Option<String>, Query, description = "`tollkeepers`, `messages`, `map`, `chips`, `inns_cathedrals` or `traders_builders`"),
        ("from" = Option<String>, Query, format = DateTime, description = "Created at or after (RFC 3339)"),
        ("to" = Option<String>, Query, format = DateTime, description = "Created before (RFC 3339)"),
        ("limit" = Option<u32>, Query, description = "Matches per page, 1 to 100 (default 50)"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
        ("player" = Option<String>, Query, description = "Matches where this player holds a seat: an account id, or a display name (case-insensitive)"),
    ),
    responses(
        (status = 200, description = "A page of matches; `next_cursor` asks for the next", body = AdminMatchListDoc),
        AdminRefusals,
    ),
)]
pub(super) async fn list_matches(
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
        Some("inns_cathedrals") => Some(ModuleFilter::InnsCathedrals),
        Some("traders_builders") => Some(ModuleFilter::TradersBuilders),
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
        AdminMatchRefusals,
    ),
)]
pub(super) async fn summary(
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
