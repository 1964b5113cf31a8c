//! A player's own account: `GET /api/me/matches` (the matches where they hold a seat, whose
//! turn it is and the clock), `PUT /api/me/password`, `DELETE /api/me`, `GET /api/me/export`;
//! `POST /api/reports` (a chat line or a player, for the admins); and `POST /api/password-resets`
//! (a new password with an admin's one-time link, no session needed).
//!
//! The list reuses the admin list's query and summaries (one query for the page and one for its
//! seats), then reads, per running match, its last turn's start and its wake time.

use super::accounts::{Session, refusal};
use super::admin::{decode_cursor, encode_cursor, mark_seats_away, page_limit, query, summaries};
use super::error::ApiError;
use super::extract::ApiJson;
use super::openapi::{
    AccountDeletionDoc, AccountExportDoc, ErrorBodyDoc, MyMatchesDoc, NewReportDoc,
    PasswordChangeDoc, PasswordResetDoc, ReportCreatedDoc, Routes,
};
use super::refusals::SessionRefusals;
use crate::accounts;
use crate::lobby::Action;
use crate::state::Shared;
use crate::store::MatchStatus;
use crate::store::admin::{MatchQuery, PlayerFilter};
use crate::store::moderation::{NewReportRow, ReportOutcome};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use protocol::admin::{AdminMatchSummary, MatchStatus as Wire};
use protocol::me::check_report_reason;
use protocol::{
    AccountDeletion, AccountExport, ErrorCode, MyMatch, MyMatchPlayer, MyMatchStatus, MyMatches,
    NewReport, PasswordChange, PasswordReset, ReportCreated,
};
use rules::Event;
use serde::Deserialize;
use std::sync::Arc;
use tracing::{error, info};
use utoipa_axum::routes;
use uuid::Uuid;

/// Most reports one account may file in [`REPORT_WINDOW`].
pub const MAX_REPORTS: i64 = 10;
/// The window of [`MAX_REPORTS`].
pub const REPORT_WINDOW: chrono::TimeDelta = chrono::TimeDelta::hours(1);
/// Most matches of one page of `GET /api/me/matches`.
const MAX_PAGE: u32 = 100;

pub fn router() -> Routes {
    Routes::new()
        .routes(routes!(my_matches))
        .routes(routes!(change_password))
        .routes(routes!(delete_me))
        .routes(routes!(export))
        .routes(routes!(report))
        .routes(routes!(reset_password))
}

fn store_failed(e: impl std::fmt::Display) -> ApiError {
    error!(error = %e, "the store failed");
    ApiError::internal("the store failed")
}

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MyQuery {
    status: Option<String>,
    limit: Option<u32>,
    cursor: Option<String>,
}

/// The caller's place in a finished match: 1 + the players with a higher score.
fn place(scores: &[u32], seat: u8) -> Option<u8> {
    let mine = *scores.get(usize::from(seat))?;
    let above = scores.iter().filter(|&&s| s > mine).count();
    u8::try_from(above + 1).ok()
}

/// One listed match as its player sees it: whose turn and the deadline for a running one.
async fn my_match(shared: &Shared, me: Uuid, s: AdminMatchSummary) -> Result<MyMatch, ApiError> {
    let seat = s
        .players
        .iter()
        .find(|p| p.account == Some(me))
        .map_or(0, |p| p.seat);
    let status = match s.status {
        Wire::Active => MyMatchStatus::Running,
        Wire::Finished => MyMatchStatus::Finished,
        Wire::Broken | Wire::Aborted => MyMatchStatus::Ended,
    };
    let (mut turn, mut turn_since, mut clock, mut deadline_at) = (None, None, None, None);
    if status == MyMatchStatus::Running {
        let row = shared
            .store
            .load_match(s.match_id)
            .await
            .map_err(store_failed)?;
        clock = row.as_ref().and_then(|r| r.clock);
        deadline_at = row
            .and_then(|r| r.wake_at)
            .and_then(DateTime::from_timestamp_millis)
            .map(time);
        match shared
            .store
            .last_turn(s.match_id)
            .await
            .map_err(store_failed)?
        {
            Some((events, at)) => {
                let events: Vec<Event> = serde_json::from_str(&events).unwrap_or_default();
                turn = events.iter().rev().find_map(|e| match e {
                    Event::TurnStarted { player, .. } => Some(*player),
                    _ => None,
                });
                turn_since = turn.map(|_| time(at));
            }
            // No command yet: the first seat's turn since the match began.
            None => {
                turn = Some(0);
                turn_since = Some(s.created_at.clone());
            }
        }
    }
    let place = s.scores.as_deref().and_then(|sc| place(sc, seat));
    Ok(MyMatch {
        match_id: s.match_id,
        status,
        seat,
        players: s
            .players
            .iter()
            .map(|p| MyMatchPlayer {
                seat: p.seat,
                colour: p.colour,
                name: p.name.clone(),
                you: p.account == Some(me),
                away: p.away_since.is_some(),
            })
            .collect(),
        seq: s.seq,
        turn,
        your_turn: turn == Some(seat),
        turn_since,
        clock,
        deadline_at,
        modules: s.modules,
        map_id: s.map_id,
        finished_at: (status == MyMatchStatus::Finished).then(|| s.updated_at.clone()),
        created_at: s.created_at,
        updated_at: s.updated_at,
        scores: s.scores,
        place,
    })
}

/// One page of the account's matches: (the matches, the next page's cursor).
async fn page(
    shared: &Shared,
    me: Uuid,
    status: Option<MatchStatus>,
    before: Option<(DateTime<Utc>, Uuid)>,
    limit: u32,
) -> Result<MyMatches, ApiError> {
    let q = MatchQuery {
        status,
        before,
        player: Some(PlayerFilter::Account(me)),
        limit,
        ..MatchQuery::default()
    };
    let rows = shared.store.list_matches(&q).await.map_err(store_failed)?;
    let next_cursor = match rows.last() {
        Some(last) if rows.len() == limit as usize => encode_cursor(last),
        _ => None,
    };
    let mut matches = Vec::with_capacity(rows.len());
    for s in summaries(shared, &rows).await? {
        matches.push(my_match(shared, me, s).await?);
    }
    Ok(MyMatches {
        matches,
        next_cursor,
    })
}

#[utoipa::path(
    get, path = "/api/me/matches", tag = "accounts",
    description = "The matches where the caller holds a seat, newest first: running ones with whose turn it is, since when, the clock settings and the next deadline; finished ones with the scores and the caller's place.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("status" = Option<String>, Query, description = "`running` or `finished` (default: all)"),
        ("limit" = Option<u32>, Query, description = "Matches per page, 1 to 100 (default 20)"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of the caller's matches", body = MyMatchesDoc),
        (status = 400, description = "`malformed`: a bad status, limit or cursor", body = ErrorBodyDoc),
        SessionRefusals,
    ),
)]
async fn my_matches(
    session: Session,
    State(shared): State<Arc<Shared>>,
    q: Result<Query<MyQuery>, QueryRejection>,
) -> Result<Json<MyMatches>, ApiError> {
    let q = query(q)?;
    let status = match q.status.as_deref() {
        None => None,
        Some("running") => Some(MatchStatus::Active),
        Some("finished") => Some(MatchStatus::Finished),
        Some(s) => {
            return Err(ApiError::malformed(format!(
                "no status `{s}` (running or finished)"
            )));
        }
    };
    let limit = page_limit(q.limit, 20, MAX_PAGE)?;
    let before = q.cursor.as_deref().map(decode_cursor).transpose()?;
    Ok(Json(
        page(&shared, session.account.id, status, before, limit).await?,
    ))
}

#[utoipa::path(
    put, path = "/api/me/password", tag = "accounts",
    description = "Changes the password of a registered account; every other session of the account is revoked (its sockets close), this one stays.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    request_body = PasswordChangeDoc,
    responses(
        (status = 204, description = "Changed"),
        (status = 400, description = "`malformed`; `bad_password`: a new password under 8 or over 256 bytes, or a guest account (no password)", body = ErrorBodyDoc),
        SessionRefusals,
        (status = 403, description = "`bad_credentials`: the old password is wrong", body = ErrorBodyDoc),
    ),
)]
async fn change_password(
    session: Session,
    State(shared): State<Arc<Shared>>,
    ApiJson(req): ApiJson<PasswordChange>,
) -> Result<StatusCode, ApiError> {
    let revoked = accounts::change_password(
        &shared.store,
        &session.account,
        session.id,
        &req.old_password,
        &req.new_password,
    )
    .await
    .map_err(refusal)?;
    for s in &revoked {
        shared.revoke_live(session.account.id, Some(*s));
    }
    info!(account = %session.account.id, revoked = revoked.len(), "password changed");
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    delete, path = "/api/me", tag = "accounts",
    description = "Deletes the caller's registered account: its sessions end (sockets close), its chat lines are removed, it leaves its open lobbies, its running matches go on with the server playing its seats as for an away player, and every match keeps its seats under the name `deleted player`. The name is free again.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    request_body = AccountDeletionDoc,
    responses(
        (status = 204, description = "Deleted; the session cookie is cleared"),
        (status = 400, description = "`malformed`; `bad_password`: a guest account (nothing to delete with)", body = ErrorBodyDoc),
        SessionRefusals,
        (status = 403, description = "`bad_credentials`: the password is wrong", body = ErrorBodyDoc),
    ),
)]
async fn delete_me(
    session: Session,
    State(shared): State<Arc<Shared>>,
    ApiJson(req): ApiJson<AccountDeletion>,
) -> Result<Response, ApiError> {
    let account = session.account;
    accounts::check_password_of(&shared.store, &account.name.to_lowercase(), &req.password)
        .await
        .map_err(refusal)?;
    for lobby in shared
        .store
        .open_lobbies_of(account.id)
        .await
        .map_err(store_failed)?
    {
        // Not seated there after all (the list is a text match), or gone: nothing to leave.
        let _ = shared
            .lobbies
            .act(account.clone(), lobby, Action::Leave)
            .await;
    }
    shared
        .store
        .delete_account(account.id, Utc::now())
        .await
        .map_err(store_failed)?;
    shared.revoke_live(account.id, None);
    // Its webhook row went with it: no notice is posted for it any more.
    if let Some(n) = shared.registry.notices() {
        n.hook_changed(account.id, false);
    }
    let seats = mark_seats_away(&shared, account.id).await?;
    info!(account = %account.id, seats, "account deleted");
    Ok(super::accounts::cleared(&shared))
}

#[utoipa::path(
    get, path = "/api/me/export", tag = "accounts",
    description = "Everything the server keeps about the caller's account, as JSON: the account, its matches, its chat lines, its sessions' creation times.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    responses(
        (status = 200, description = "The export", body = AccountExportDoc),
        SessionRefusals,
    ),
)]
async fn export(session: Session, State(shared): State<Arc<Shared>>) -> Result<Response, ApiError> {
    let me = session.account.id;
    let standing = shared
        .store
        .standing(me)
        .await
        .map_err(store_failed)?
        .ok_or_else(|| ApiError::internal("the session's account is gone"))?;
    let mut matches = Vec::new();
    let mut before = None;
    loop {
        let p = page(&shared, me, None, before, MAX_PAGE).await?;
        matches.extend(p.matches);
        match p.next_cursor {
            Some(c) => before = Some(decode_cursor(&c)?),
            None => break,
        }
    }
    let chat = shared
        .store
        .chat_of_account(me)
        .await
        .map_err(store_failed)?;
    let sessions = shared
        .store
        .sessions_of(me)
        .await
        .map_err(store_failed)?
        .iter()
        .map(|s| time(s.created_at))
        .collect();
    let body = AccountExport {
        account: session.account,
        created_at: time(standing.created_at),
        matches,
        chat,
        sessions,
    };
    Ok((
        [(
            axum::http::header::CONTENT_DISPOSITION,
            "attachment; filename=\"carcassonne-account.json\"",
        )],
        Json(body),
    )
        .into_response())
}

fn bad_report(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::BadReport, message)
}

#[utoipa::path(
    post, path = "/api/reports", tag = "accounts",
    description = "Reports a chat line (`chat_id`, its sender is reported with it) or a player (`account_id`) to the admins, with a reason. At most 10 reports an hour per account, and one open report per reporter and target.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    request_body = NewReportDoc,
    responses(
        (status = 201, description = "Stored", body = ReportCreatedDoc),
        (status = 400, description = "`malformed`; `bad_report`: no or both targets, oneself, or a reason empty, over 500 characters or with control characters", body = ErrorBodyDoc),
        SessionRefusals,
        (status = 404, description = "`bad_report`: no such chat line; `unknown_account`: no such player", body = ErrorBodyDoc),
        (status = 409, description = "`already_reported`: the caller has an open report of this target", body = ErrorBodyDoc),
        (status = 429, description = "`rate_limited`: 10 reports within the last hour", body = ErrorBodyDoc),
    ),
)]
async fn report(
    session: Session,
    State(shared): State<Arc<Shared>>,
    ApiJson(req): ApiJson<NewReport>,
) -> Result<(StatusCode, Json<ReportCreated>), ApiError> {
    check_report_reason(&req.reason).map_err(bad_report)?;
    let me = session.account.id;
    let (target_key, account_id, chat_id, chat_text) = match (req.chat_id, req.account_id) {
        (Some(id), None) => {
            let line = shared
                .store
                .chat_line(id)
                .await
                .map_err(store_failed)?
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::NOT_FOUND,
                        ErrorCode::BadReport,
                        "no such chat line",
                    )
                })?;
            (
                format!("chat:{id}"),
                line.from.account_id,
                Some(id),
                Some(line.text),
            )
        }
        (None, Some(a)) => {
            if shared
                .store
                .standing(a)
                .await
                .map_err(store_failed)?
                .is_none_or(|s| s.kind == "deleted")
            {
                return Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    ErrorCode::UnknownAccount,
                    "no such player",
                ));
            }
            (format!("account:{a}"), Some(a), None, None)
        }
        _ => {
            return Err(bad_report(
                "a report names exactly one of chat_id and account_id",
            ));
        }
    };
    if account_id == Some(me) {
        return Err(bad_report("one does not report oneself"));
    }
    let now = Utc::now();
    let row = NewReportRow {
        at: now,
        reporter: me,
        target_key,
        account_id,
        chat_id,
        chat_text,
        reason: req.reason.trim().to_string(),
    };
    match shared
        .store
        .insert_report(&row, now - REPORT_WINDOW, MAX_REPORTS)
        .await
        .map_err(store_failed)?
    {
        ReportOutcome::Stored(id) => {
            info!(report = id, reporter = %me, "report filed");
            Ok((StatusCode::CREATED, Json(ReportCreated { id })))
        }
        ReportOutcome::Duplicate => Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::AlreadyReported,
            "you already reported this; an admin will look at it",
        )),
        ReportOutcome::TooMany => Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::RateLimited,
            format!("at most {MAX_REPORTS} reports an hour"),
        )),
    }
}

#[utoipa::path(
    post, path = "/api/password-resets", tag = "accounts",
    description = "Sets a new password with the token of a reset link an admin issued (`/#reset=<token>`): once, within 24 hours. Every session of the account is revoked; log in with the new password.",
    request_body = PasswordResetDoc,
    responses(
        (status = 204, description = "The password is set"),
        (status = 400, description = "`malformed`; `bad_password`: under 8 or over 256 bytes; `bad_reset`: the link is unknown, used already or expired", body = ErrorBodyDoc),
    ),
)]
async fn reset_password(
    State(shared): State<Arc<Shared>>,
    ApiJson(req): ApiJson<PasswordReset>,
) -> Result<StatusCode, ApiError> {
    let account = accounts::redeem_reset(&shared.store, &req.token, &req.password)
        .await
        .map_err(refusal)?;
    shared.revoke_live(account, None);
    info!(%account, "password reset with a link");
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use super::place;

    #[test]
    fn tied_players_share_a_place() {
        let scores = [30, 42, 30, 12];
        assert_eq!(place(&scores, 1), Some(1));
        assert_eq!(place(&scores, 0), Some(2));
        assert_eq!(place(&scores, 2), Some(2));
        assert_eq!(place(&scores, 3), Some(4));
        assert_eq!(place(&scores, 4), None);
    }
}
