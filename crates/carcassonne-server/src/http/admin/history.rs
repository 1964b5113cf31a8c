//! What happened in a match: its command log, its chat, and its public state at any seq.

use super::{
    Admin, MAX_LOG_PAGE, load_row, page_limit, query, replay_upto, store_failed, time, wire_status,
};
use crate::http::error::ApiError;
use crate::http::extract::MatchId;
use crate::http::openapi::{AdminMatchChatDoc, AdminMatchLogDoc, AdminMatchStateDoc, ErrorBodyDoc};
use crate::http::refusals::AdminMatchRefusals;
use crate::state::Shared;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use protocol::Seq;
use protocol::admin::{AdminLogEntry, AdminMatchLog, AdminMatchState, Origin};
use rules::{Command, Event};
use serde::Deserialize;
use std::sync::Arc;
use tracing::error;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LogQuery {
    after: Option<Seq>,
    limit: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ChatQuery {
    /// A cursor is never negative: `-1` is refused like any value that is not a number.
    after: Option<u64>,
    limit: Option<u32>,
}

#[utoipa::path(
    operation_id = "admin_chat",
    get, path = "/matches/{id}/chat", tag = "admin",
    description = "The match's chat, both channels (table and spectators), in the order it was said.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("id" = String, Path, format = Uuid, description = "The match id"),
        ("after" = Option<u64>, Query, description = "The lines after this cursor (a `next_after`; default 0; a negative one is `malformed`)"),
        ("limit" = Option<u32>, Query, description = "Lines per page, 1 to 1000 (default 1000)"),
    ),
    responses(
        (status = 200, description = "A page of the chat; `next_after` asks for the next", body = AdminMatchChatDoc),
        AdminMatchRefusals,
    ),
)]
/// `GET /matches/{id}/chat`: the match's chat lines (both channels) after the line `after`,
/// `limit` of them (default and most 1000), in the order they were said.
pub(super) async fn chat(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
    q: Result<Query<ChatQuery>, QueryRejection>,
) -> Result<Json<protocol::admin::AdminMatchChat>, ApiError> {
    use crate::store::chat::MAX_CHAT_PAGE;
    let q = query(q)?;
    let limit = page_limit(q.limit, MAX_CHAT_PAGE, MAX_CHAT_PAGE)?;
    let after = i64::try_from(q.after.unwrap_or(0))
        .map_err(|_| ApiError::malformed("`after` is past every chat line"))?;
    load_row(&shared, id).await?;
    let mut lines = shared
        .store
        .match_chat(id, after, limit + 1)
        .await
        .map_err(store_failed)?;
    let more = lines.len() > limit as usize;
    lines.truncate(limit as usize);
    let next_after = match more {
        true => lines.last().map(|(i, _)| *i),
        false => None,
    };
    Ok(Json(protocol::admin::AdminMatchChat {
        match_id: id,
        chat: lines.into_iter().map(|(_, l)| l).collect(),
        next_after,
    }))
}

/// `GET /matches/{id}/log`: the commands after `after` (default 0), `limit` of them (default
/// and most 1000), in seq order. The setup (with its seed) is left out even here.
#[utoipa::path(
    operation_id = "admin_log",
    get, path = "/matches/{id}/log", tag = "admin",
    description = "The match's commands (who sent each, when, and its events), in seq order.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("id" = String, Path, format = Uuid, description = "The match id"),
        ("after" = Option<u64>, Query, description = "The commands after this seq (default 0)"),
        ("limit" = Option<u32>, Query, description = "Commands per page, 1 to 1000 (default 1000)"),
    ),
    responses(
        (status = 200, description = "A page of the log; `next_after` asks for the next", body = AdminMatchLogDoc),
        AdminMatchRefusals,
    ),
)]
pub(super) async fn log(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
    q: Result<Query<LogQuery>, QueryRejection>,
) -> Result<Json<AdminMatchLog>, ApiError> {
    let q = query(q)?;
    let limit = page_limit(q.limit, MAX_LOG_PAGE, MAX_LOG_PAGE)?;
    let after = q.after.unwrap_or(0);
    let row = load_row(&shared, id).await?;
    // Seqs have no holes: the page is `after < seq <= after + limit`, and one more tells
    // whether there is a next page.
    let mut records = shared
        .store
        .commands_between(id, after, after.saturating_add(u64::from(limit) + 1))
        .await
        .map_err(store_failed)?;
    let more = records.len() > limit as usize;
    records.truncate(limit as usize);
    let corrupt = |what: &str, seq: Seq, e: serde_json::Error| {
        error!(seq, error = %e, "admin: a stored {what} does not parse");
        ApiError::internal(format!("the stored {what} of seq {seq} does not parse"))
    };
    let mut commands = Vec::with_capacity(records.len());
    for r in records {
        let command: Command =
            serde_json::from_str(&r.command).map_err(|e| corrupt("command", r.seq, e))?;
        let events: Vec<Event> =
            serde_json::from_str(&r.events).map_err(|e| corrupt("events", r.seq, e))?;
        commands.push(AdminLogEntry {
            seq: r.seq,
            seat: r.seat,
            // Until the store keeps an origin, the server's own commands are known by their id.
            origin: match r.command_id.starts_with(protocol::SERVER_COMMAND_PREFIX) {
                true => Origin::Server,
                false => Origin::Player,
            },
            command_id: r.command_id,
            command,
            events,
            created_at: time(r.created_at),
        });
    }
    let next_after = match more {
        true => commands.last().map(|c| c.seq),
        false => None,
    };
    Ok(Json(AdminMatchLog {
        match_id: id,
        status: wire_status(row.status),
        rules_version: row.rules_version,
        created_at: time(row.created_at),
        commands,
        next_after,
    }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StateQuery {
    seq: Option<Seq>,
}

/// `GET /matches/{id}/state?seq=N`: the public view at seq N (default: the last), replayed
/// from the store through the rules; the same view a subscribed client had at N.
#[utoipa::path(
    operation_id = "admin_state_at",
    get, path = "/matches/{id}/state", tag = "admin",
    description = "The public view at a seq, replayed through the rules.",
    security(("admin_token" = []), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("id" = String, Path, format = Uuid, description = "The match id"),
        ("seq" = Option<u64>, Query, description = "The seq (default: the last)"),
    ),
    responses(
        (status = 200, description = "The view at the seq", body = AdminMatchStateDoc),
        AdminMatchRefusals,
        (status = 409, description = "`unavailable`: the match was played with other rules", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn state_at(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
    q: Result<Query<StateQuery>, QueryRejection>,
) -> Result<Json<AdminMatchState>, ApiError> {
    let q = query(q)?;
    let row = load_row(&shared, id).await?;
    let records = shared
        .store
        .commands_between(id, 0, q.seq.unwrap_or(Seq::MAX))
        .await
        .map_err(store_failed)?;
    let replayed = replay_upto(&row, records).await?;
    if let Some(seq) = q.seq
        && replayed.seq != seq
    {
        return Err(ApiError::malformed(format!(
            "seq {seq} is past the match's last seq {}",
            replayed.seq
        )));
    }
    Ok(Json(AdminMatchState {
        match_id: id,
        seq: replayed.seq,
        view: replayed.game.view(),
    }))
}
