//! What a match hid: its secrets and its export as a scenario, shown only once it is over.

use super::audit::audit;
use super::{Admin, load_row, parse_setup, replay_upto, store_failed};
use crate::http::error::ApiError;
use crate::http::extract::MatchId;
use crate::http::openapi::{AdminMatchSecretsDoc, ErrorBodyDoc, ScenarioDoc};
use crate::http::refusals::AdminMatchRefusals;
use crate::state::Shared;
use crate::store::MatchStatus;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use protocol::ErrorCode;
use protocol::admin::AdminMatchSecrets;
use rules::{Command, Game};
use serde_json::json;
use std::sync::Arc;
use uuid::Uuid;

/// Whether a match is over for good, so that its secrets may be shown.
pub(super) fn is_over(status: MatchStatus) -> bool {
    matches!(status, MatchStatus::Finished | MatchStatus::Aborted)
}

/// `GET /matches/{id}/secrets`: seed, pile order, face-down chips, dispatch stack, at the start
/// and at the end; only for a finished or aborted match (invariant 4 holds while it is played).
#[utoipa::path(
    operation_id = "admin_secrets",
    get, path = "/matches/{id}/secrets", tag = "admin",
    description = "Seed, pile order, face-down chips and dispatch stack, at the start and the end, of a finished or aborted match. Audited.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The match id")),
    responses(
        (status = 200, description = "The secrets", body = AdminMatchSecretsDoc),
        AdminMatchRefusals,
        (status = 409, description = "`not_finished`: the match is still played", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn secrets(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
) -> Result<Json<AdminMatchSecrets>, ApiError> {
    let result = secrets_of(&shared, id).await;
    audit(&shared, &admin, "secrets", Some(id), json!({}), &result).await?;
    result.map(Json)
}

pub(super) async fn secrets_of(shared: &Shared, id: Uuid) -> Result<AdminMatchSecrets, ApiError> {
    let row = load_row(shared, id).await?;
    if !is_over(row.status) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::NotFinished,
            format!(
                "the match is {}: its secrets are shown once it is finished or aborted",
                row.status.as_str()
            ),
        ));
    }
    let records = shared.store.commands(id, 0).await.map_err(store_failed)?;
    // The status and records read may be of a commit not yet synced (SQLite): once this returns
    // they are durable, so no power cut can take back the end of a match whose secrets are shown.
    shared.store.sync().await.map_err(store_failed)?;
    let replayed = replay_upto(&row, records).await?;
    let start = Game::start(replayed.game.setup().clone())
        .map_err(|e| ApiError::internal(format!("the setup no longer starts: {e}")))?
        .0
        .secrets();
    Ok(AdminMatchSecrets {
        match_id: id,
        seq: replayed.seq,
        start,
        end: replayed.game.secrets(),
    })
}

/// `GET /matches/{id}/scenario`: the match as a scenario file (`crates/carcassonne-rules/scenarios/*.json`)
/// that the `scenario` binary replays to the same events and scores. A finished or aborted match
/// is exported with its own setup (seed included); a match still being played without any
/// secret (see `rules::scenario::record`).
#[utoipa::path(
    operation_id = "admin_scenario",
    get, path = "/matches/{id}/scenario", tag = "admin",
    description = "The match as a scenario file that the `scenario` binary replays to the same events and scores (with its secrets only once it is over). Audited.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The match id")),
    responses(
        (status = 200, description = "The scenario", body = ScenarioDoc),
        AdminMatchRefusals,
        (status = 409, description = "`not_finished`: the export would need a secret of a match still played", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn scenario(
    admin: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
) -> Result<Json<rules::scenario::Scenario>, ApiError> {
    let result = scenario_of(&shared, id).await;
    let detail = match &result {
        Ok((_, reveal)) => json!({ "revealed": reveal }),
        Err(_) => json!({}),
    };
    audit(&shared, &admin, "scenario", Some(id), detail, &result).await?;
    result.map(|(s, _)| Json(s))
}

pub(super) async fn scenario_of(
    shared: &Shared,
    id: Uuid,
) -> Result<(rules::scenario::Scenario, bool), ApiError> {
    let row = load_row(shared, id).await?;
    let reveal = is_over(row.status);
    let setup = parse_setup(&row.setup)?;
    let records = shared.store.commands(id, 0).await.map_err(store_failed)?;
    // As in `secrets_of`: what was read is durable before it (and perhaps the secrets) is shown.
    shared.store.sync().await.map_err(store_failed)?;
    let seq = records.last().map_or(0, |r| r.seq);
    let mut log = Vec::with_capacity(records.len());
    for r in &records {
        let c: Command = serde_json::from_str(&r.command)
            .map_err(|e| ApiError::internal(format!("the command of seq {}: {e}", r.seq)))?;
        log.push((r.seat, c));
    }
    let name = format!("match {id} to seq {seq}");
    let recorded =
        tokio::task::spawn_blocking(move || rules::scenario::record(&name, &setup, log, reveal))
            .await
            .map_err(|e| ApiError::internal(format!("the export failed: {e}")))?;
    match recorded {
        Ok(s) => Ok((s, reveal)),
        Err(e @ rules::scenario::ScenarioError::Secret(_)) => Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::NotFinished,
            e.to_string(),
        )),
        Err(e) => Err(ApiError::internal(format!("the log does not replay: {e}"))),
    }
}
