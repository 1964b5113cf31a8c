//! `GET /api/matches/{id}/replay?seq=N`: a finished match for its players and the public to
//! step through: the public view after seq N (replayed from the store through the rules, as
//! the admin's "state at a seq"), the events of that step, and every player's score after
//! each seq (the events' awards summed, which add up to the scores).
//!
//! Who may read: a match that no private lobby started, anyone; a private one, its players
//! only ([`access::may_replay`]: a seat token of it or a player's session; an invite code is
//! not enough). Only a finished match has a replay (`not_finished` before the end): during a
//! match its players have the live table and the log, and no one may step a running match's
//! public views apart from them. What a replay shows is the public view, so even after the
//! end the pile's order, face-down chips and the seed stay on the server (the admin's secrets
//! route alone shows them).

use super::admin::{parse_setup, query, replay_upto};
use super::error::ApiError;
use super::extract::MatchId;
use super::history::{opening, reader};
use super::openapi::{ErrorBodyDoc, MatchReplayDoc};
use crate::access;
use crate::state::Shared;
use crate::store::MatchStatus;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use protocol::{ErrorCode, MatchReplay, MatchView, ReplayStep, Seq, ServerMove};
use rules::Event;
use serde::Deserialize;
use std::sync::Arc;
use tracing::error;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ReplayQuery {
    /// The seq to show (default: the last).
    seq: Option<Seq>,
}

fn store_failed(e: impl std::fmt::Display) -> ApiError {
    error!(error = %e, "replay: the store failed");
    ApiError::internal("the store failed")
}

/// `GET /api/matches/{id}/replay`.
#[utoipa::path(
    get, path = "/api/matches/{id}/replay", tag = "matches",
    description = "A finished match at a seq, to step through: the public view after it, the events of that step (seq 0: the opening), and every player's score after each seq. A match that no private lobby started is open to all; a private one to its players only (a seat token of it or a player's session). Before the end there is no replay (`not_finished`). Limited per client address (`--history-rate-addr`).",
    security((), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("id" = String, Path, format = Uuid, description = "The match id"),
        ("seq" = Option<u64>, Query, description = "The seq (default: the last)"),
        ("X-Seat-Token" = Option<String>, Header, description = "A seat token of this match"),
    ),
    responses(
        (status = 200, description = "The match at the seq", body = MatchReplayDoc),
        (status = 400, description = "`malformed`: a bad id or query, or a seq past the end", body = ErrorBodyDoc),
        (status = 403, description = "`invite_required` or `not_your_seat`: a private match, and the asker is none of its players", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_match`", body = ErrorBodyDoc),
        (status = 409, description = "`not_finished`: the match is not over (or was aborted); `unavailable`: it was played with other rules", body = ErrorBodyDoc),
        (status = 500, description = "`internal`: the store failed", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn replay(
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
    headers: HeaderMap,
    q: Result<Query<ReplayQuery>, QueryRejection>,
) -> Result<Json<MatchReplay>, ApiError> {
    let q = query(q)?;
    let reader = reader(&shared, &headers, id).await?;
    if !access::may_replay(&shared.store, id, reader.seat.is_some())
        .await
        .map_err(store_failed)?
    {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::NotYourSeat,
            "a private match's replay is for its players",
        ));
    }
    if reader.row.status != MatchStatus::Finished {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::NotFinished,
            "a match has a replay once it is over",
        ));
    }
    let records = shared.store.commands(id, 0).await.map_err(store_failed)?;
    let last_seq = records.last().map_or(0, |r| r.seq);
    let seq = q.seq.unwrap_or(last_seq);
    if seq > last_seq {
        return Err(ApiError::malformed(format!(
            "seq {seq} is past the match's last seq {last_seq}"
        )));
    }
    let corrupt = |seq: Seq, e: serde_json::Error| {
        error!(seq, error = %e, "replay: stored events do not parse");
        ApiError::internal(format!("the stored events of seq {seq} do not parse"))
    };
    // Scores over time: the opening scores nothing; each step adds its events' awards.
    let players = parse_setup(&reader.row.setup)?.players.len();
    let mut scores = Vec::with_capacity(records.len() + 1);
    let mut running = vec![0u32; players];
    scores.push(running.clone());
    let mut step = None;
    for r in &records {
        let events: Vec<Event> = serde_json::from_str(&r.events).map_err(|e| corrupt(r.seq, e))?;
        for e in &events {
            for (p, points) in e.awards() {
                if let Some(s) = running.get_mut(usize::from(p)) {
                    *s += points;
                }
            }
        }
        scores.push(running.clone());
        if r.seq == seq {
            step = Some(ReplayStep {
                seq,
                seat: Some(r.seat),
                by_server: ServerMove::of(&r.command_id),
                events,
            });
        }
    }
    let step = match step {
        Some(s) => s,
        None => {
            let o = opening(&reader.row).await?;
            ReplayStep {
                seq: 0,
                seat: None,
                by_server: None,
                events: o.events,
            }
        }
    };
    let upto: Vec<_> = records.into_iter().take_while(|r| r.seq <= seq).collect();
    let replayed = replay_upto(&reader.row, upto).await?;
    let mut view = MatchView::from(replayed.game.view());
    view.names = shared.store.match_names(id).await.unwrap_or_default();
    Ok(Json(MatchReplay {
        match_id: id,
        last_seq,
        view,
        step,
        scores,
    }))
}
