//! `POST /api/matches`: a new match, its seats and their tokens.

use super::error::ApiError;
use super::extract::ApiJson;
use super::openapi::{CreateMatchDoc, ErrorBodyDoc, MatchCreatedDoc};
use crate::newmatch::{NewMatchError, Prepared, prepare};
use crate::state::Shared;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use protocol::{CreateMatch, ErrorCode, MatchCreated};
use std::sync::Arc;
use tracing::{error, info};

/// Seeds and tokens need the OS's randomness; without it no match can be created.
fn no_randomness(e: impl std::fmt::Display) -> ApiError {
    error!(error = %e, "cannot create a match");
    ApiError::internal("no randomness")
}

/// `POST /api/matches`.
#[utoipa::path(
    post, path = "/api/matches", tag = "matches",
    description = "Creates a match and its seats; each seat's token is its secret (`auth` on the WebSocket). Without an account session only when the server runs with `--anonymous-matches on` (the default); limited per client address either way (`--match-rate-addr`).",
    security((), ("session_bearer" = []), ("session_cookie" = [])),
    request_body = CreateMatchDoc,
    responses(
        (status = 201, description = "The match, its seats and their tokens", body = MatchCreatedDoc),
        (status = 400, description = "`malformed`: not a match request, or an option out of range", body = ErrorBodyDoc),
        (status = 401, description = "Only with `--anonymous-matches off`: `unauthenticated` (no session) or `unknown_session` (a session token that is unknown or revoked)", body = ErrorBodyDoc),
        (status = 500, description = "`internal`: the store failed", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn create_match(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    ApiJson(req): ApiJson<CreateMatch>,
) -> Result<(StatusCode, axum::Json<MatchCreated>), ApiError> {
    if !shared.config.matches.anonymous_matches {
        let Some((token, _)) = super::accounts::token_of(&headers) else {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                ErrorCode::Unauthenticated,
                "this server creates matches for accounts only: log in first",
            ));
        };
        crate::accounts::resolve(&shared.store, &token)
            .await
            .map_err(super::accounts::refusal)?;
    }
    let Prepared {
        row,
        seats,
        created,
    } = prepare(
        &req,
        shared.config.matches.allow_test_setups,
        shared.config.matches.decision_timeout,
    )
    .map_err(|e| match e {
        NewMatchError::Invalid(m) => ApiError::malformed(m),
        other => no_randomness(other),
    })?;
    let id = row.id;
    shared.store.create_match(&row, &seats).await.map_err(|e| {
        error!(error = %e, "cannot store a new match");
        ApiError::internal("the store failed")
    })?;
    info!(match_id = %id, players = seats.len(), "match created");
    Ok((StatusCode::CREATED, axum::Json(created)))
}
