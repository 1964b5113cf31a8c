//! An account's webhook for your-turn notices: `PUT /api/me/webhook` sets it and answers the
//! signing secret once, `GET` shows it without the secret, `DELETE` removes it. The URL must be
//! `https://` unless the server runs with `--webhook-allow-http`.

use super::accounts::Session;
use super::error::ApiError;
use super::extract::ApiJson;
use super::openapi::{ErrorBodyDoc, SetWebhookDoc, WebhookCreatedDoc, WebhookInfoDoc};
use super::refusals::SessionRefusals;
use crate::state::Shared;
use crate::store::webhooks::WebhookRow;
use crate::webhooks::deliver::parse_url;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use protocol::{ErrorCode, SetWebhook, WebhookCreated, WebhookInfo};
use std::sync::Arc;
use tracing::error;

fn store_failed(e: impl std::fmt::Display) -> ApiError {
    error!(error = %e, "webhooks: the store failed");
    ApiError::internal("the store failed")
}

/// `PUT /api/me/webhook`.
#[utoipa::path(
    put, path = "/api/me/webhook", tag = "accounts",
    description = "Sets (or replaces) the account's webhook: the server posts a `TurnNotice` there when a decision comes to wait for the player and again shortly before its deadline or clock runs out (`--webhook-reminder`). Each post carries `X-Carcassonne-Signature: sha256=<hex>`, the HMAC-SHA256 of the body under the secret answered here, once. The URL is `https://` (`http://` only on a server started with `--webhook-allow-http`).",
    security(("session_bearer" = []), ("session_cookie" = [])),
    request_body = SetWebhookDoc,
    responses(
        (status = 201, description = "Set; the secret is shown this once", body = WebhookCreatedDoc),
        (status = 400, description = "`bad_option`: the URL is not allowed; `malformed`: a bad body", body = ErrorBodyDoc),
        SessionRefusals,
    ),
)]
pub(super) async fn set_webhook(
    session: Session,
    State(shared): State<Arc<Shared>>,
    ApiJson(req): ApiJson<SetWebhook>,
) -> Result<Response, ApiError> {
    let url = req.url.trim().to_string();
    parse_url(&url, shared.config.webhooks.webhook_allow_http)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::BadOption, e.to_string()))?;
    let secret = crate::tokens::new_token()
        .map_err(|e| ApiError::internal(format!("no randomness: {e}")))?;
    let row = WebhookRow {
        url: url.clone(),
        secret: secret.clone(),
        created_at: Utc::now(),
    };
    shared
        .store
        .set_webhook(session.account.id, &row)
        .await
        .map_err(store_failed)?;
    if let Some(n) = shared.registry.notices() {
        n.hook_changed(session.account.id, true);
    }
    Ok((StatusCode::CREATED, Json(WebhookCreated { url, secret })).into_response())
}

fn none() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::BadOption,
        "this account has no webhook",
    )
}

/// `GET /api/me/webhook`.
#[utoipa::path(
    get, path = "/api/me/webhook", tag = "accounts",
    description = "The account's webhook, without its secret.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    responses(
        (status = 200, description = "The webhook", body = WebhookInfoDoc),
        (status = 404, description = "`bad_option`: no webhook is set", body = ErrorBodyDoc),
        SessionRefusals,
    ),
)]
pub(super) async fn get_webhook(
    session: Session,
    State(shared): State<Arc<Shared>>,
) -> Result<Json<WebhookInfo>, ApiError> {
    let row = shared
        .store
        .webhook(session.account.id)
        .await
        .map_err(store_failed)?
        .ok_or_else(none)?;
    Ok(Json(WebhookInfo {
        url: row.url,
        created_at: row
            .created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    }))
}

/// `DELETE /api/me/webhook`.
#[utoipa::path(
    delete, path = "/api/me/webhook", tag = "accounts",
    description = "Removes the account's webhook: no more notices are posted.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "`bad_option`: no webhook is set", body = ErrorBodyDoc),
        SessionRefusals,
    ),
)]
pub(super) async fn delete_webhook(
    session: Session,
    State(shared): State<Arc<Shared>>,
) -> Result<StatusCode, ApiError> {
    match shared
        .store
        .delete_webhook(session.account.id)
        .await
        .map_err(store_failed)?
    {
        true => {
            if let Some(n) = shared.registry.notices() {
                n.hook_changed(session.account.id, false);
            }
            Ok(StatusCode::NO_CONTENT)
        }
        false => Err(none()),
    }
}
