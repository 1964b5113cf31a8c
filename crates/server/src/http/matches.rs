//! `POST /api/matches`: a new match, its seats and their tokens.

use super::MAX_BODY_BYTES;
use super::error::ApiError;
use crate::state::Shared;
use crate::store::{MatchRow, MatchStatus, SeatRow};
use crate::tokens::{new_token, token_hash};
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use chrono::Utc;
use protocol::{CreateMatch, ErrorCode, MatchCreated, SeatToken};
use rules::{Game, REPLAY_VERSION, Setup};
use std::sync::Arc;
use tracing::{error, info};
use uuid::Uuid;

/// Seeds and tokens need the OS's randomness; without it no match can be created.
fn no_randomness(e: impl std::fmt::Display) -> ApiError {
    error!(error = %e, "no OS randomness");
    ApiError::internal("no randomness")
}

pub(super) async fn create_match(
    State(shared): State<Arc<Shared>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, axum::Json<MatchCreated>), ApiError> {
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorCode::TooLarge,
                format!("a match request has at most {MAX_BODY_BYTES} bytes"),
            )
        } else {
            ApiError::new(
                rejection.status(),
                ErrorCode::Malformed,
                rejection.body_text(),
            )
        }
    })?;
    let req: CreateMatch = serde_json::from_slice(&body)
        .map_err(|e| ApiError::malformed(format!("not a match request: {e}")))?;
    if (req.draw_order.is_some() || req.modules.forces_secrets())
        && !shared.config.matches.allow_test_setups
    {
        return Err(ApiError::malformed(
            "draw_order and chip_layout are for tests and scenarios; this server does not allow test setups",
        ));
    }
    if let Some(clock) = &req.clock {
        clock.validate().map_err(ApiError::malformed)?;
    }
    // The seed decides the pile: it comes from the OS and never leaves the server.
    let seed = getrandom::u64().map_err(no_randomness)?;
    let mut setup = Setup::new(req.players.clone(), seed)
        .meeples(req.meeples.unwrap_or(req.modules.default_meeples()))
        .modules(req.modules.clone());
    setup.draw_order = req.draw_order.clone();
    // A pile that is empty from the start (a test setup) ends the match at once: it is stored as
    // finished, so that no restart resumes it.
    let status = match Game::start(setup.clone()) {
        Ok((game, _)) if game.is_finished() => MatchStatus::Finished,
        Ok(_) => MatchStatus::Active,
        Err(e) => return Err(ApiError::malformed(e.to_string())),
    };
    let setup_json =
        serde_json::to_string(&setup).map_err(|e| ApiError::internal(e.to_string()))?;
    let id = Uuid::new_v4();
    let mut seats = Vec::new();
    let mut tokens = Vec::new();
    for (i, colour) in req.players.iter().enumerate() {
        let token = new_token().map_err(no_randomness)?;
        let seat = u8::try_from(i).unwrap_or(u8::MAX);
        let colour_name = serde_json::to_value(colour)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        seats.push(SeatRow {
            seat,
            colour: colour_name,
            token_hash: token_hash(&token),
        });
        tokens.push(SeatToken {
            seat,
            colour: *colour,
            token,
        });
    }
    let row = MatchRow {
        id,
        setup: setup_json,
        status,
        rules_version: REPLAY_VERSION.to_string(),
        created_at: Utc::now(),
        decision_timeout_ms: Some(
            u64::try_from(shared.config.matches.decision_timeout.as_millis()).unwrap_or(u64::MAX),
        ),
        clock: req.clock,
    };
    shared.store.create_match(&row, &seats).await.map_err(|e| {
        error!(error = %e, "cannot store a new match");
        ApiError::internal("the store failed")
    })?;
    info!(match_id = %id, players = seats.len(), "match created");
    Ok((
        StatusCode::CREATED,
        axum::Json(MatchCreated {
            match_id: id,
            seats: tokens,
        }),
    ))
}
