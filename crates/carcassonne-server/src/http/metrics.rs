//! `GET /metrics`: the Prometheus text exposition (see [`crate::meters`]). Who may read it is
//! `--metrics-access`: behind the admin token (the default), open (for a port only the scraper
//! reaches), or off.

use super::admin::Admin;
use super::error::ApiError;
use super::openapi::ErrorBodyDoc;
use crate::config::MetricsAccess;
use crate::state::Shared;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use protocol::ErrorCode;
use std::sync::Arc;

/// The content type of the Prometheus text format.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

#[utoipa::path(
    get, path = "/metrics", tag = "server",
    description = "The Prometheus text exposition. Who may read it is `--metrics-access`: the admin token or an admin account's session (default), open, or off.",
    security(("admin_token" = []), ()),
    responses(
        (status = 200, description = "Prometheus text format 0.0.4", body = String, content_type = "text/plain"),
        (status = 401, description = "`bad_token`: the admin token is required and missing or wrong", body = ErrorBodyDoc),
        (status = 404, description = "`unavailable`: metrics are off, or behind an admin token that is not configured", body = ErrorBodyDoc),
    ),
)]
pub async fn metrics(
    State(shared): State<Arc<Shared>>,
    admin: Result<Admin, ApiError>,
) -> Result<Response, ApiError> {
    match shared.config.admin.metrics_access {
        MetricsAccess::Off => {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                ErrorCode::Unavailable,
                "metrics are off (--metrics-access off)",
            ));
        }
        MetricsAccess::Admin => {
            admin?;
        }
        MetricsAccess::Open => {}
    }
    let text = shared
        .metrics
        .render(*shared.connections.borrow(), shared.registry.len());
    Ok(([(header::CONTENT_TYPE, TEXT_FORMAT)], text).into_response())
}
