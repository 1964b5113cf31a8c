//! Moderation, each action audited: an account's standing, suspending it (for a time or for
//! good: its sessions revoked on every node, its seats in running matches marked away so that
//! the server plays its decisions as for any away player) and lifting the suspension, a
//! one-time password reset link, removing a chat line (for every viewer, from the history too),
//! and the players' reports, read and resolved.

use super::actions::{body_of, mark_away};
use super::audit::audit;
use super::{Admin, MAX_PAGE, page_limit, query, store_failed, time};
use crate::accounts::{self, AccountError};
use crate::chat::Room;
use crate::http::error::ApiError;
use crate::http::extract::ApiJson;
use crate::http::openapi::{
    AccountStandingDoc, ErrorBodyDoc, ReportListDoc, ResetLinkDoc, ResolveReportDoc,
    SuspendRequestDoc,
};
use crate::http::refusals::AdminRefusals;
use crate::state::Shared;
use crate::store::lifecycle::{StandingRow, SuspensionRow};
use crate::store::moderation::ReportRow;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use chrono::Utc;
use protocol::ErrorCode;
use protocol::admin::AwayRequest;
use protocol::moderation::{
    AccountStanding, MAX_MODERATION_TEXT, Report, ReportList, ReportStatus, ResetLink,
    ResolveReport, SuspendRequest, Suspension,
};
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use tracing::warn;
use uuid::Uuid;

/// The longest suspension with an end: ten years (longer is for good).
const MAX_SUSPENSION_SECS: u64 = 10 * 365 * 86_400;

fn account_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::malformed("not an account id"))
}

fn unknown_account() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::UnknownAccount,
        "no account has this id (or it was deleted)",
    )
}

/// A moderation text: 1 to 500 characters, no control characters.
fn check_text(what: &str, text: &str) -> Result<(), ApiError> {
    let n = text.chars().count();
    if text.trim().is_empty() || n > MAX_MODERATION_TEXT || text.chars().any(char::is_control) {
        return Err(ApiError::malformed(format!(
            "{what} has 1 to {MAX_MODERATION_TEXT} characters and no control characters"
        )));
    }
    Ok(())
}

fn standing_of(row: StandingRow) -> AccountStanding {
    let now = Utc::now();
    AccountStanding {
        account: row.id,
        name: row.name,
        kind: row.kind,
        created_at: time(row.created_at),
        suspension: row
            .suspension
            .filter(|s| s.in_force(now))
            .map(|s| Suspension {
                since: time(s.since),
                until: s.until.map(time),
                reason: s.reason,
            }),
        sessions: u32::try_from(row.sessions).unwrap_or(u32::MAX),
    }
}

async fn standing(shared: &Shared, id: Uuid) -> Result<AccountStanding, ApiError> {
    shared
        .store
        .standing(id)
        .await
        .map_err(store_failed)?
        .filter(|s| s.kind != "deleted")
        .map(standing_of)
        .ok_or_else(unknown_account)
}

/// Marks the account's seats in every running match away (see `actions::mark_away`): with a
/// game clock the server then plays their decisions at once; without one their decisions keep
/// the match's deadlines. How many seats were marked.
pub(in crate::http) async fn mark_seats_away(
    shared: &Shared,
    account: Uuid,
) -> Result<usize, ApiError> {
    let seats = shared
        .store
        .running_seats_of(account)
        .await
        .map_err(store_failed)?;
    let mut marked = 0;
    for (match_id, seat) in seats {
        match mark_away(shared, match_id, &AwayRequest { seat, away: true }).await {
            Ok(()) => marked += 1,
            // The match ended meanwhile: nothing to play for them.
            Err(e) => warn!(%match_id, seat, error = %e.body.message, "seat not marked away"),
        }
    }
    Ok(marked)
}

#[utoipa::path(
    operation_id = "admin_account",
    get, path = "/accounts/{id}", tag = "admin",
    description = "An account's kind, suspension (if in force) and live sessions.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The account id")),
    responses(
        (status = 200, description = "The account", body = AccountStandingDoc),
        AdminRefusals,
    ),
)]
pub(super) async fn account(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Result<Json<AccountStanding>, ApiError> {
    Ok(Json(standing(&shared, account_id(&id)?).await?))
}

async fn suspend_account(
    shared: &Shared,
    id: Uuid,
    req: &SuspendRequest,
) -> Result<usize, ApiError> {
    check_text("a reason", &req.reason)?;
    let now = Utc::now();
    let until = match req.seconds {
        None => None,
        Some(s @ 1..=MAX_SUSPENSION_SECS) => {
            Some(now + chrono::TimeDelta::seconds(i64::try_from(s).unwrap_or(i64::MAX)))
        }
        Some(s) => {
            return Err(ApiError::malformed(format!(
                "a suspension lasts 1 to {MAX_SUSPENSION_SECS} seconds, not {s} (leave it out: for good)"
            )));
        }
    };
    let row = SuspensionRow {
        since: now,
        until,
        reason: req.reason.trim().to_string(),
    };
    if !shared
        .store
        .set_suspension(id, Some(&row))
        .await
        .map_err(store_failed)?
    {
        return Err(unknown_account());
    }
    shared
        .store
        .revoke_sessions(id, None)
        .await
        .map_err(store_failed)?;
    shared.revoke_live(id, None);
    mark_seats_away(shared, id).await
}

#[utoipa::path(
    operation_id = "admin_suspend",
    post, path = "/accounts/{id}/suspension", tag = "admin",
    description = "Suspends an account for `seconds` (or for good): every session is revoked on every node (its sockets close), it cannot log in (`suspended`), and its seats in running matches are marked away. Audited.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The account id")),
    request_body = SuspendRequestDoc,
    responses(
        (status = 200, description = "The account, suspended", body = AccountStandingDoc),
        AdminRefusals,
        (status = 404, description = "`unknown_account`", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn suspend(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Result<ApiJson<SuspendRequest>, ApiError>,
) -> Result<Json<AccountStanding>, ApiError> {
    let id = account_id(&id)?;
    let req = body_of(body, "a suspension")?;
    let result = suspend_account(&shared, id, &req).await;
    let detail = json!({
        "account": id, "seconds": req.seconds, "reason": req.reason,
        "seats_away": result.as_ref().ok(),
    });
    audit(&shared, &admin, "suspend", None, detail, &result).await?;
    result?;
    Ok(Json(standing(&shared, id).await?))
}

#[utoipa::path(
    operation_id = "admin_unsuspend",
    delete, path = "/accounts/{id}/suspension", tag = "admin",
    description = "Lifts an account's suspension: it may log in again. Audited.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The account id")),
    responses(
        (status = 200, description = "The account", body = AccountStandingDoc),
        AdminRefusals,
        (status = 404, description = "`unknown_account`", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn unsuspend(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Result<Json<AccountStanding>, ApiError> {
    let id = account_id(&id)?;
    let result = match shared.store.set_suspension(id, None).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(unknown_account()),
        Err(e) => Err(store_failed(e)),
    };
    audit(
        &shared,
        &admin,
        "unsuspend",
        None,
        json!({ "account": id }),
        &result,
    )
    .await?;
    result?;
    Ok(Json(standing(&shared, id).await?))
}

#[utoipa::path(
    operation_id = "admin_password_reset",
    post, path = "/accounts/{id}/password-reset", tag = "admin",
    description = "A one-time link (valid 24 hours) that lets the player of a registered account set a new password; hand it to them. Audited (without the token).",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The account id")),
    responses(
        (status = 201, description = "The link", body = ResetLinkDoc),
        AdminRefusals,
        (status = 404, description = "`unknown_account`: no registered account has this id", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn password_reset(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<ResetLink>), ApiError> {
    let id = account_id(&id)?;
    let result = match accounts::issue_reset(&shared.store, id).await {
        Ok((token, expires)) => Ok(ResetLink {
            path: format!("/#reset={token}"),
            token,
            expires_at: time(expires),
        }),
        Err(AccountError::NotRegistered) => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::UnknownAccount,
            "no registered account has this id",
        )),
        Err(e) => Err(store_failed(e)),
    };
    let detail = json!({
        "account": id,
        "expires_at": result.as_ref().ok().map(|l| l.expires_at.clone()),
    });
    audit(&shared, &admin, "password_reset", None, detail, &result).await?;
    Ok((StatusCode::CREATED, Json(result?)))
}

#[utoipa::path(
    operation_id = "admin_remove_chat",
    delete, path = "/chat/{id}", tag = "admin",
    description = "Removes a chat line for every viewer: it leaves the store (no history shows it) and the clients following its match or lobby are told (`chat_removed`), on every node. Audited.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = i64, Path, description = "The chat line's id")),
    responses(
        (status = 204, description = "Removed"),
        AdminRefusals,
        (status = 404, description = "`bad_report`: no such chat line", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn remove_chat(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError::malformed("not a chat line id"))?;
    let result = match shared.store.remove_chat(id).await {
        Ok(Some(line)) => Ok(line),
        Ok(None) => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::BadReport,
            "no such chat line",
        )),
        Err(e) => Err(store_failed(e)),
    };
    let detail = match &result {
        Ok(line) => json!({
            "chat_id": id, "lobby_id": line.lobby_id, "sender": line.from.account_id,
        }),
        Err(_) => json!({ "chat_id": id }),
    };
    let match_id = result.as_ref().ok().and_then(|l| l.match_id);
    audit(&shared, &admin, "remove_chat", match_id, detail, &result).await?;
    let line = result?;
    let room = match (line.match_id, line.lobby_id) {
        (Some(m), _) => Some(Room::Match(m)),
        (None, Some(l)) => Some(Room::Lobby(l)),
        (None, None) => None,
    };
    if let Some(room) = room {
        shared.chat.removed(room, id);
        if let Some(cluster) = shared.registry.cluster() {
            cluster
                .tell_room(room, crate::cluster::ChatNews::Removed { id })
                .await;
        }
    }
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ReportsQuery {
    status: Option<String>,
    before: Option<i64>,
    limit: Option<u32>,
}

fn report_of(r: ReportRow) -> Report {
    Report {
        id: r.id,
        at: time(r.at),
        reporter: r.reporter,
        reporter_name: r.reporter_name,
        account: r.account_id,
        account_name: r.account_name,
        chat_id: r.chat_id,
        chat_text: r.chat_text,
        reason: r.reason,
        status: if r.open {
            ReportStatus::Open
        } else {
            ReportStatus::Resolved
        },
        resolved_at: r.resolved_at.map(time),
        resolved_by: r.resolved_by,
        resolution: r.resolution,
    }
}

#[utoipa::path(
    operation_id = "admin_reports",
    get, path = "/reports", tag = "admin",
    description = "The players' reports, newest first.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("status" = Option<String>, Query, description = "`open` or `resolved` (default: all)"),
        ("before" = Option<i64>, Query, description = "Reports with a smaller id (`next_before` of the previous page)"),
        ("limit" = Option<u32>, Query, description = "Reports per page, 1 to 100 (default 50)"),
    ),
    responses(
        (status = 200, description = "A page of reports", body = ReportListDoc),
        AdminRefusals,
    ),
)]
pub(super) async fn reports(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    q: Result<Query<ReportsQuery>, QueryRejection>,
) -> Result<Json<ReportList>, ApiError> {
    let q = query(q)?;
    let open = match q.status.as_deref() {
        None => None,
        Some("open") => Some(true),
        Some("resolved") => Some(false),
        Some(s) => return Err(ApiError::malformed(format!("no status `{s}`"))),
    };
    let limit = page_limit(q.limit, 50, MAX_PAGE)?;
    let rows = shared
        .store
        .reports(open, q.before.unwrap_or(i64::MAX), limit)
        .await
        .map_err(store_failed)?;
    let next_before = match rows.last() {
        Some(last) if rows.len() == limit as usize => Some(last.id),
        _ => None,
    };
    Ok(Json(ReportList {
        reports: rows.into_iter().map(report_of).collect(),
        next_before,
    }))
}

#[utoipa::path(
    operation_id = "admin_resolve_report",
    post, path = "/reports/{id}/resolve", tag = "admin",
    description = "Resolves an open report with a note of what was done. Audited.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = i64, Path, description = "The report's id")),
    request_body = ResolveReportDoc,
    responses(
        (status = 204, description = "Resolved"),
        AdminRefusals,
        (status = 409, description = "`bad_report`: no open report has this id", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn resolve(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Result<ApiJson<ResolveReport>, ApiError>,
) -> Result<StatusCode, ApiError> {
    // The body's refusals (413, 415) first, as on every route with a body.
    let req = body_of(body, "a resolution")?;
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError::malformed("not a report id"))?;
    check_text("a note", &req.note)?;
    let result = match shared
        .store
        .resolve_report(id, &admin.actor, req.note.trim(), Utc::now())
        .await
    {
        Ok(true) => Ok(()),
        Ok(false) => Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::BadReport,
            "no open report has this id",
        )),
        Err(e) => Err(store_failed(e)),
    };
    let detail = json!({ "report": id, "note": req.note });
    audit(&shared, &admin, "resolve_report", None, detail, &result).await?;
    result.map(|()| StatusCode::NO_CONTENT)
}
