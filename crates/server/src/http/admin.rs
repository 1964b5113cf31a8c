//! The admin API under `/api/admin`, for operators: every handler takes the [`Admin`] extractor,
//! so no route can forget the token check.

use super::error::ApiError;
use crate::state::Shared;
use crate::tokens::token_hash;
use axum::Router;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::routing::get;
use protocol::ErrorCode;
use std::sync::Arc;
use uuid::Uuid;

/// The routes, to nest under `/api/admin`.
pub fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/matches/{id}/log", get(log))
        .route("/stats", get(stats))
}

/// Proof that the request carries `Authorization: Bearer <admin token>`. Without a configured
/// token the admin API is off (404).
#[derive(Debug)]
pub struct Admin;

impl FromRequestParts<Arc<Shared>> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let Some(expected) = shared.config.admin.token() else {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                ErrorCode::Unavailable,
                "the admin API is off (no admin token configured)",
            ));
        };
        let given = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        // Compare hashes so that the comparison time says nothing about the token.
        if given.map(token_hash) != Some(token_hash(expected)) {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                ErrorCode::BadToken,
                "admin token required",
            ));
        }
        Ok(Admin)
    }
}

/// The stored command log of a match, with events. The setup (and its seed) is left out even
/// here.
async fn log(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Result<axum::Json<serde_json::Value>, ApiError> {
    let id = Uuid::parse_str(&id).map_err(|_| ApiError::malformed("not a match id"))?;
    let row = shared
        .store
        .load_match(id)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                ErrorCode::UnknownMatch,
                "no such match",
            )
        })?;
    let commands = shared
        .store
        .commands(id, 0)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let parse = |s: &str| serde_json::from_str(s).unwrap_or(serde_json::Value::Null);
    let commands: Vec<serde_json::Value> = commands
        .iter()
        .map(|c| {
            serde_json::json!({
                "seq": c.seq,
                "seat": c.seat,
                "command_id": c.command_id,
                "command": parse(&c.command),
                "events": parse(&c.events),
                "created_at": c.created_at,
            })
        })
        .collect();
    Ok(axum::Json(serde_json::json!({
        "match_id": id,
        "status": row.status.as_str(),
        "rules_version": row.rules_version,
        "created_at": row.created_at,
        "commands": commands,
    })))
}

/// What is in memory: match actors and WebSocket connections.
async fn stats(_: Admin, State(shared): State<Arc<Shared>>) -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({
        "matches_in_memory": shared.registry.len(),
        "connections": *shared.connections.borrow(),
        "store": shared.store.kind(),
    }))
}
