//! Ratings for everyone to read: `GET /api/ratings` (a family's leaderboard, a page at a time)
//! and `GET /api/players/{name}` (a registered player's ratings and rated matches); and for
//! admins `POST /api/admin/ratings/recompute` (every rating again from the recorded results,
//! written to the audit trail). Ratings are public: a rated lobby is public, so its result
//! reveals nothing a spectator could not see.

use super::admin::audit::audit;
use super::admin::{Admin, page_limit, query};
use super::error::ApiError;
use super::openapi::{ErrorBodyDoc, LeaderboardDoc, PlayerProfileDoc, RecomputeReportDoc};
use super::refusals::AdminRefusals;
use crate::ratings::{RatingError, recorded_seats};
use crate::state::Shared;
use crate::store::ratings::StoredRating;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use protocol::{
    ErrorCode, Family, Leaderboard, LeaderboardEntry, PROVISIONAL_GAMES, PlayerProfile, RatedSeat,
    RatingChange, RatingView, RecomputeReport,
};
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use tracing::error;

/// Most lines of a leaderboard page.
pub const MAX_BOARD_PAGE: u32 = 100;
/// Rated matches a profile shows.
pub const PROFILE_HISTORY: u32 = 50;

fn store_failed(e: impl std::fmt::Display) -> ApiError {
    error!(error = %e, "ratings: the store failed");
    ApiError::internal("the store failed")
}

fn view(family: Family, r: &StoredRating) -> RatingView {
    RatingView {
        family,
        rating: r.mu - 3.0 * r.sigma,
        mu: r.mu,
        sigma: r.sigma,
        games: r.games,
        provisional: r.games < PROVISIONAL_GAMES,
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BoardQuery {
    family: Option<Family>,
    offset: Option<u32>,
    limit: Option<u32>,
}

/// `GET /api/ratings`.
#[utoipa::path(
    get, path = "/api/ratings", tag = "ratings",
    description = "A page of a family's leaderboard, best rating (`mu - 3 sigma`) first. Provisional ratings (fewer than 10 rated matches) are listed and marked.",
    params(
        ("family" = Option<String>, Query, description = "`duel` (2 players, the default) or `multi` (3 to 6)"),
        ("offset" = Option<u32>, Query, description = "Lines to skip (a `next_offset`; default 0)"),
        ("limit" = Option<u32>, Query, description = "Lines per page, 1 to 100 (default 50)"),
    ),
    responses(
        (status = 200, description = "A page of the leaderboard", body = LeaderboardDoc),
        (status = 400, description = "`malformed`: a bad query", body = ErrorBodyDoc),
        (status = 500, description = "`internal`: the store failed", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn leaderboard(
    State(shared): State<Arc<Shared>>,
    q: Result<Query<BoardQuery>, QueryRejection>,
) -> Result<Json<Leaderboard>, ApiError> {
    let q = query(q)?;
    let family = q.family.unwrap_or_default();
    let limit = page_limit(q.limit, 50, MAX_BOARD_PAGE)?;
    let offset = q.offset.unwrap_or(0);
    let mut rows = shared
        .store
        .leaderboard(family, offset, limit + 1)
        .await
        .map_err(store_failed)?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    Ok(Json(Leaderboard {
        family,
        entries: rows
            .iter()
            .enumerate()
            .map(|(i, (name, r))| LeaderboardEntry {
                rank: offset + i as u32 + 1,
                name: name.clone(),
                rating: view(family, r),
            })
            .collect(),
        next_offset: more.then_some(offset + limit),
    }))
}

/// `GET /api/players/{name}`.
#[utoipa::path(
    get, path = "/api/players/{name}", tag = "ratings",
    description = "A registered player's ratings (one per family played) and their most recent rated matches (at most 50, newest first), each with its result and the rating before and after.",
    params(("name" = String, Path, description = "The player's name (any case)")),
    responses(
        (status = 200, description = "The profile", body = PlayerProfileDoc),
        (status = 404, description = "`bad_name`: no registered player of that name", body = ErrorBodyDoc),
        (status = 500, description = "`internal`: the store failed", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn profile(
    State(shared): State<Arc<Shared>>,
    Path(name): Path<String>,
) -> Result<Json<PlayerProfile>, ApiError> {
    let unknown = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::BadName,
            "no registered player of that name",
        )
    };
    let (_, key) = crate::accounts::check_name(&name).map_err(|_| unknown())?;
    let account = shared
        .store
        .registered_account(&key)
        .await
        .map_err(store_failed)?
        .ok_or_else(unknown)?;
    let ratings = shared
        .store
        .account_ratings(account.id)
        .await
        .map_err(store_failed)?;
    let rows = shared
        .store
        .rating_history(account.id, PROFILE_HISTORY)
        .await
        .map_err(store_failed)?;
    let mut history = Vec::with_capacity(rows.len());
    for h in rows {
        let seats = recorded_seats(&h.result.results).map_err(|e| {
            error!(error = %e, "ratings: a recorded result does not parse");
            ApiError::internal("a recorded result does not parse")
        })?;
        let scores: Vec<u32> = seats.iter().map(|s| s.score).collect();
        let places = crate::ratings::compute::places(&scores);
        history.push(RatingChange {
            match_id: h.result.match_id,
            family: h.result.family,
            ended_at: h
                .result
                .ended_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            place: h.place,
            before: h.before.mu - 3.0 * h.before.sigma,
            after: h.after.mu - 3.0 * h.after.sigma,
            seats: seats
                .into_iter()
                .zip(places)
                .map(|(s, place)| RatedSeat {
                    name: s.name,
                    score: s.score,
                    place,
                })
                .collect(),
        });
    }
    Ok(Json(PlayerProfile {
        name: account.name,
        ratings: ratings.iter().map(|(f, r)| view(*f, r)).collect(),
        history,
    }))
}

/// `POST /api/admin/ratings/recompute`.
#[utoipa::path(
    operation_id = "admin_recompute_ratings",
    post, path = "/api/admin/ratings/recompute", tag = "admin",
    description = "Every rating computed again from the recorded results of the rated matches, in the order they were rated, and written over the stored ratings and history. `changed` counts the ratings that differed (0 when the store was consistent). Written to the audit trail.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    responses(
        (status = 200, description = "What the recompute did", body = RecomputeReportDoc),
        AdminRefusals,
    ),
)]
pub(super) async fn recompute(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
) -> Result<Json<RecomputeReport>, ApiError> {
    let outcome = match shared.registry.ratings() {
        Some(r) => r.recompute().await.map_err(|e| match e {
            RatingError::Stopped => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::Unavailable,
                "the rating task has stopped",
            ),
            other => {
                error!(error = %other, "ratings: the recompute failed");
                ApiError::internal(format!("the recompute failed: {other}"))
            }
        }),
        None => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unavailable,
            "the rating task has not started",
        )),
    };
    let detail = match &outcome {
        Ok(r) => json!({"matches": r.matches, "ratings": r.ratings, "changed": r.changed}),
        Err(_) => json!({}),
    };
    audit(&shared, &admin, "recompute_ratings", None, detail, &outcome).await?;
    outcome.map(Json)
}
