//! A match's history for its players and spectators: `GET /api/matches/{id}/log` (every move's
//! public events, from the opening on) and `GET /api/matches/{id}/chat` (what the asker may
//! read of the chat), each a page before a cursor, so that a reload, a new tab or a late
//! spectator shows the whole game. Who may read is who may watch ([`access::may_watch`]): any
//! match no private lobby started; a private one with its invite code (`X-Invite-Code`), a seat
//! token of it (`X-Seat-Token`) or the session of one of its players. Events are public by
//! construction (invariant 4); the setup, with its seed, never leaves the server: the opening's
//! events are replayed from it here. A player reads the table's chat, a spectator both channels,
//! as on the WebSocket.

use super::admin::{page_limit, parse_setup, query};
use super::error::ApiError;
use super::extract::MatchId;
use super::openapi::{ErrorBodyDoc, MatchChatDoc, MatchLogDoc};
use crate::access::{self, Watcher};
use crate::state::Shared;
use crate::store::MatchRow;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use protocol::{ErrorCode, LogEntry, MatchChat, MatchLog, Seq, ServerMove};
use rules::Event;
use serde::Deserialize;
use std::sync::Arc;
use tracing::error;
use uuid::Uuid;

/// Most moves (or chat lines) of one page.
pub const MAX_HISTORY_PAGE: u32 = 500;
/// The header that carries a seat token (never in the URL, which proxies log).
pub const SEAT_TOKEN_HEADER: &str = "x-seat-token";
/// The header that carries a private match's invite code.
pub const INVITE_CODE_HEADER: &str = "x-invite-code";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Page {
    /// The entries before this cursor (default: from the newest).
    before: Option<u64>,
    limit: Option<u32>,
}

/// Who reads: the seat they hold in this match, if any; and the match as stored.
pub(super) struct Reader {
    pub(super) seat: Option<u8>,
    pub(super) row: MatchRow,
}

fn store_failed(e: impl std::fmt::Display) -> ApiError {
    error!(error = %e, "history: the store failed");
    ApiError::internal("the store failed")
}

async fn load_row(shared: &Shared, id: Uuid) -> Result<MatchRow, ApiError> {
    shared
        .store
        .load_match(id)
        .await
        .map_err(store_failed)?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                ErrorCode::UnknownMatch,
                "no such match",
            )
        })
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The asker's seat in the match and whether they may watch it (403 `invite_required` when not).
pub(super) async fn reader(
    shared: &Shared,
    headers: &HeaderMap,
    id: Uuid,
) -> Result<Reader, ApiError> {
    let row = load_row(shared, id).await?;
    let mut seat = None;
    if let Some(token) = header(headers, SEAT_TOKEN_HEADER)
        && let Some((m, s)) = access::seat_for_token(&shared.store, token)
            .await
            .map_err(store_failed)?
        && m == id
    {
        seat = Some(s);
    }
    // A session that ended only makes the asker anonymous, as on the WebSocket.
    let mut account = None;
    if let Some((token, _)) = super::accounts::token_of(headers)
        && let Ok((_, a)) = crate::accounts::resolve(&shared.store, &token).await
    {
        account = Some(a.id);
        if seat.is_none() {
            seat = access::seat_of_account(&shared.store, id, a.id)
                .await
                .map_err(store_failed)?;
        }
    }
    let who = Watcher {
        invite_code: header(headers, INVITE_CODE_HEADER),
        seated_here: seat.is_some(),
        account,
    };
    if !access::may_watch(&shared.store, id, who)
        .await
        .map_err(store_failed)?
    {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::InviteRequired,
            "a private match's history is read with its invite code, a seat token or a player's session",
        ));
    }
    Ok(Reader { seat, row })
}

/// `GET /api/matches/{id}/log`.
#[utoipa::path(
    get, path = "/api/matches/{id}/log", tag = "matches",
    description = "A page of the match's history, oldest first: each move's seat, whether the server made it (`by_server`: a deadline, a clock that ran out, a player away) and its public events; the page that reaches the start also holds the opening (seq 0). Readable by whoever may watch the match: a private lobby's match needs its invite code (`X-Invite-Code`), a seat token of it (`X-Seat-Token`) or the session of one of its players. Limited per client address (`--history-rate-addr`).",
    security((), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("id" = String, Path, format = Uuid, description = "The match id"),
        ("before" = Option<u64>, Query, description = "The moves before this seq (default: up to the newest)"),
        ("limit" = Option<u32>, Query, description = "Moves per page, 1 to 500 (default 500)"),
        ("X-Seat-Token" = Option<String>, Header, description = "A seat token of this match"),
        ("X-Invite-Code" = Option<String>, Header, description = "The invite code of a private lobby's match"),
    ),
    responses(
        (status = 200, description = "A page of the history; `before` asks for the page before it", body = MatchLogDoc),
        (status = 400, description = "`malformed`: a bad id or query", body = ErrorBodyDoc),
        (status = 403, description = "`invite_required`: a private match, and none of its invite code, a seat token of it or a player's session", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_match`", body = ErrorBodyDoc),
        (status = 500, description = "`internal`: the store failed", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn log(
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
    headers: HeaderMap,
    q: Result<Query<Page>, QueryRejection>,
) -> Result<Json<MatchLog>, ApiError> {
    let q = query(q)?;
    let limit = u64::from(page_limit(q.limit, MAX_HISTORY_PAGE, MAX_HISTORY_PAGE)?);
    let reader = reader(&shared, &headers, id).await?;
    // Seqs have no holes: the page is `after < seq < before`, or the newest `limit` moves.
    let records = match q.before {
        Some(before) => {
            let upto = before.saturating_sub(1);
            let after = upto.saturating_sub(limit);
            shared.store.commands_between(id, after, upto).await
        }
        None => shared.store.commands(id, 0).await.map(|mut all| {
            let keep = all.len().saturating_sub(limit as usize);
            all.drain(..keep);
            all
        }),
    }
    .map_err(store_failed)?;
    let first = records.first().map_or(q.before.unwrap_or(1), |r| r.seq);
    let mut entries = Vec::with_capacity(records.len() + 1);
    if first <= 1 && q.before != Some(0) {
        entries.push(opening(&reader.row).await?);
    }
    for r in records {
        let events: Vec<Event> = serde_json::from_str(&r.events).map_err(|e| {
            error!(seq = r.seq, error = %e, "history: stored events do not parse");
            ApiError::internal(format!("the stored events of seq {} do not parse", r.seq))
        })?;
        entries.push(LogEntry {
            seq: r.seq,
            seat: Some(r.seat),
            by_server: ServerMove::of(&r.command_id),
            events,
        });
    }
    Ok(Json(MatchLog {
        match_id: id,
        before: (first > 1).then_some(first),
        entries,
    }))
}

/// The opening's events (seq 0), replayed from the stored setup: the setup holds the seed, its
/// events only what every player saw.
pub(super) async fn opening(row: &MatchRow) -> Result<LogEntry, ApiError> {
    let setup = parse_setup(&row.setup)?;
    let started = tokio::task::spawn_blocking(move || rules::Game::start(setup).map(|(_, e)| e))
        .await
        .map_err(|e| ApiError::internal(format!("the opening failed: {e}")))?;
    let events =
        started.map_err(|e| ApiError::internal(format!("the setup no longer starts: {e}")))?;
    Ok(LogEntry {
        seq: 0 as Seq,
        seat: None,
        by_server: None,
        events,
    })
}

/// `GET /api/matches/{id}/chat`.
#[utoipa::path(
    get, path = "/api/matches/{id}/chat", tag = "matches",
    description = "A page of the match's chat, oldest first, as far back as the chat is kept (`--chat-retention-days`): a player reads the table's channel, a spectator both. Readable by whoever may watch the match, as `GET /api/matches/{id}/log`. Limited per client address (`--history-rate-addr`).",
    security((), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("id" = String, Path, format = Uuid, description = "The match id"),
        ("before" = Option<u64>, Query, description = "The lines before this cursor (a `before` of an earlier page; default: up to the newest)"),
        ("limit" = Option<u32>, Query, description = "Lines per page, 1 to 500 (default 500)"),
        ("X-Seat-Token" = Option<String>, Header, description = "A seat token of this match: its player reads the table's channel only"),
        ("X-Invite-Code" = Option<String>, Header, description = "The invite code of a private lobby's match"),
    ),
    responses(
        (status = 200, description = "A page of the chat; `before` asks for the page before it", body = MatchChatDoc),
        (status = 400, description = "`malformed`: a bad id or query", body = ErrorBodyDoc),
        (status = 403, description = "`invite_required`: a private match, and none of its invite code, a seat token of it or a player's session", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_match`", body = ErrorBodyDoc),
        (status = 500, description = "`internal`: the store failed", body = ErrorBodyDoc),
    ),
)]
pub(super) async fn chat(
    State(shared): State<Arc<Shared>>,
    MatchId(id): MatchId,
    headers: HeaderMap,
    q: Result<Query<Page>, QueryRejection>,
) -> Result<Json<MatchChat>, ApiError> {
    let q = query(q)?;
    let limit = page_limit(q.limit, MAX_HISTORY_PAGE, MAX_HISTORY_PAGE)?;
    let before = i64::try_from(q.before.unwrap_or(u64::MAX)).unwrap_or(i64::MAX);
    let reader = reader(&shared, &headers, id).await?;
    let mut lines = shared
        .store
        .match_chat_before(id, before, reader.seat.is_none(), limit + 1)
        .await
        .map_err(store_failed)?;
    // Newest first from the store: one more than the page tells whether there is an earlier one.
    let more = lines.len() > limit as usize;
    lines.truncate(limit as usize);
    lines.reverse();
    Ok(Json(MatchChat {
        match_id: id,
        before: more.then(|| lines.first().map(|(i, _)| *i)).flatten(),
        chat: lines.into_iter().map(|(_, l)| l).collect(),
    }))
}
