//! What an admin changes, each audited: abort a match, mark a seat away or back, give or take
//! the admin role.

use super::audit::audit;
use super::matches::summary;
use super::{Admin, load_row, store_failed};
use crate::actor::ActorMsg;
use crate::http::error::ApiError;
use crate::http::extract::{ApiJson, MatchId};
use crate::http::openapi::{
    AdminMatchSummaryDoc, AdminRoleRequestDoc, AwayRequestDoc, ErrorBodyDoc,
};
use crate::http::refusals::AdminMatchRefusals;
use crate::state::Shared;
use crate::store::MatchStatus;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::Utc;
use protocol::admin::{AdminMatchSummary, AdminRoleRequest, AwayRequest};
use protocol::{ErrorCode, Seq};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::oneshot;
use tracing::warn;
use uuid::Uuid;

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
        AdminMatchRefusals,
        (status = 409, description = "`not_active`: the match is no longer active", body = ErrorBodyDoc),
        (status = 503, description = "`unavailable`: the server is shutting down", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn abort(
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

/// The body of an admin action: the shared extractor's refusals (413, 415, 400), a `malformed`
/// one naming `what` the body should have been.
pub(super) fn body_of<T>(body: Result<ApiJson<T>, ApiError>, what: &str) -> Result<T, ApiError> {
    body.map(|ApiJson(req)| req).map_err(|mut e| {
        if e.body.code == ErrorCode::Malformed {
            e.body.message = format!("not {what}: {}", e.body.message);
        }
        e
    })
}

pub(super) fn not_active(status: MatchStatus) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        ErrorCode::NotActive,
        format!("the match is {}", status.as_str()),
    )
}

pub(super) async fn abort_match(shared: &Shared, id: Uuid) -> Result<Seq, ApiError> {
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
/// (or back), stored with the time. The server then plays every decision of an away player at
/// once, clock or not (a command from their seat brings them back). Answers the match's summary.
#[utoipa::path(
    operation_id = "admin_away",
    post, path = "/matches/{id}/away", tag = "admin",
    description = "Marks a seat's player away (or back). Audited.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The match id")),
    request_body = AwayRequestDoc,
    responses(
        (status = 200, description = "The match's summary", body = AdminMatchSummaryDoc),
        AdminMatchRefusals,
        (status = 409, description = "`not_active`: the match is no longer active", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn away(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
    body: Result<ApiJson<AwayRequest>, ApiError>,
) -> Result<Json<AdminMatchSummary>, ApiError> {
    let req = body_of(body, "an away request")?;
    let result = mark_away(&shared, id, &req).await;
    let detail = json!({ "seat": req.seat, "away": req.away });
    audit(&shared, &admin, "away", Some(id), detail, &result).await?;
    result?;
    summary(admin, State(shared), MatchId(id)).await
}

pub(super) async fn mark_away(
    shared: &Shared,
    id: Uuid,
    req: &AwayRequest,
) -> Result<(), ApiError> {
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
pub(super) async fn set_role(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Result<ApiJson<AdminRoleRequest>, ApiError>,
) -> Result<StatusCode, ApiError> {
    let account = Uuid::parse_str(&id).map_err(|_| ApiError::malformed("not an account id"))?;
    let req = body_of(body, "a role request")?;
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
