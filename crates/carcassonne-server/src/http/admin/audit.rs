//! The audit trail: every admin action that reveals a secret or changes a match is written
//! before it is answered, and `GET /actions` reads the trail back.

use super::{Admin, MAX_PAGE, code_name, page_limit, query, store_failed, time};
use crate::http::error::ApiError;
use crate::http::openapi::AdminActionListDoc;
use crate::http::refusals::AdminRefusals;
use crate::state::Shared;
use crate::store::admin::AdminActionRow;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use chrono::Utc;
use protocol::admin::{AdminAction, AdminActionList};
use serde::Deserialize;
use std::sync::Arc;
use tracing::{error, info};
use uuid::Uuid;

/// Writes one entry of the audit trail. An action whose entry cannot be written is reported
/// as failed: nothing an admin does goes unlogged.
pub(in crate::http) async fn audit(
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ActionsQuery {
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
        AdminRefusals,
    ),
)]
pub(super) async fn actions(
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
