//! The accounts API: guest and registered accounts, log in and out, sessions (list, revoke),
//! `GET /api/me`, `GET /api/whoami` (the same, or no one: never an error); and the [`Session`]
//! extractor that every account route takes.
//!
//! A session token travels as the `session` cookie (HttpOnly, SameSite=Strict, and Secure as
//! `--secure-cookie` says: the browser) or as `Authorization: Bearer <token>` (native clients).
//! The bearer wins when both are there.

use super::error::ApiError;
use super::extract::ApiJson;
use super::openapi::{
    AccountDoc, CredentialsDoc, ErrorBodyDoc, NewGuestDoc, Routes, SessionCreatedDoc,
    SessionInfoDoc, WhoamiDoc,
};
use super::refusals::SessionRefusals;
use crate::accounts::{self, AccountError, Issued};
use crate::state::Shared;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use protocol::{Account, Credentials, ErrorCode, NewGuest, SessionCreated, SessionInfo, Whoami};
use std::sync::Arc;
use tracing::{error, info};
use utoipa_axum::routes;
use uuid::Uuid;

/// The routes (documented: see [`super::openapi`]).
pub fn router() -> Routes {
    Routes::new()
        .routes(routes!(guest))
        .routes(routes!(register))
        .routes(routes!(login, list_sessions, revoke_all))
        .routes(routes!(revoke_one))
        .routes(routes!(me))
        .routes(routes!(whoami))
}

pub(crate) const COOKIE: &str = "session";

/// A request's account, from its session token (bearer or cookie).
#[derive(Debug, Clone)]
pub struct Session {
    pub id: Uuid,
    pub account: Account,
}

/// The session token of a request, if it carries one: the bearer, else the `session` cookie.
pub fn token_of(headers: &HeaderMap) -> Option<(String, bool)> {
    if let Some(t) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    {
        return Some((t.trim().to_string(), true));
    }
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| (v.trim().to_string(), false))
}

impl FromRequestParts<Arc<Shared>> for Session {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let Some((token, _)) = token_of(&parts.headers) else {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                ErrorCode::Unauthenticated,
                "log in first: a `session` cookie or `Authorization: Bearer <session token>`",
            ));
        };
        let (id, account) = accounts::resolve(&shared.store, &token)
            .await
            .map_err(refusal)?;
        Ok(Session { id, account })
    }
}

/// An account error as an HTTP refusal.
pub(crate) fn refusal(e: AccountError) -> ApiError {
    let status = match e.code() {
        // A wrong password of a signed-in player is no failed session: 403, not 401.
        _ if matches!(e, AccountError::WrongPassword) => StatusCode::FORBIDDEN,
        ErrorCode::Suspended => StatusCode::FORBIDDEN,
        ErrorCode::BadName | ErrorCode::BadPassword | ErrorCode::BadReset => {
            StatusCode::BAD_REQUEST
        }
        ErrorCode::NameTaken | ErrorCode::TooManySessions => StatusCode::CONFLICT,
        ErrorCode::BadCredentials | ErrorCode::UnknownSession => StatusCode::UNAUTHORIZED,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    if status == StatusCode::INTERNAL_SERVER_ERROR {
        error!(error = %e, "account request failed");
        return ApiError::internal("the server failed");
    }
    ApiError::new(status, e.code(), e.to_string())
}

/// The `Set-Cookie` value of the session cookie: `token` for a year, or empty and expired (a
/// log-out). Every cookie the server sets has the same attributes, so that a clearing cookie
/// replaces the one set at log-in.
fn session_cookie(shared: &Shared, token: Option<&str>) -> Option<HeaderValue> {
    let (value, max_age) = match token {
        Some(t) => (t, 31_536_000),
        None => ("", 0),
    };
    let secure = if shared.config.conn.cookie_secure() {
        "; Secure"
    } else {
        ""
    };
    HeaderValue::from_str(&format!(
        "{COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}{secure}"
    ))
    .ok()
}

/// 201 with the session, and the session cookie for browsers.
fn issued(shared: &Shared, status: StatusCode, (account, session_id, token): Issued) -> Response {
    let cookie = session_cookie(shared, Some(&token));
    let mut response = (
        status,
        axum::Json(SessionCreated {
            account,
            session_id,
            token,
        }),
    )
        .into_response();
    if let Some(v) = cookie {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
}

#[utoipa::path(
    post, path = "/api/accounts/guest", tag = "accounts",
    request_body = NewGuestDoc,
    responses(
        (status = 201, description = "The account and a new session; `Set-Cookie: session=<token>; HttpOnly; SameSite=Strict; Path=/` (and `Secure` as `--secure-cookie` says)", body = SessionCreatedDoc),
        (status = 400, description = "`malformed`: not a request; `bad_name`: an empty, too long or control-character name", body = ErrorBodyDoc),
    ),
)]
async fn guest(
    State(shared): State<Arc<Shared>>,
    ApiJson(req): ApiJson<NewGuest>,
) -> Result<Response, ApiError> {
    let out = accounts::create_guest(&shared.store, &req.name)
        .await
        .map_err(refusal)?;
    info!(account = %out.0.id, "guest account created");
    Ok(issued(&shared, StatusCode::CREATED, out))
}

#[utoipa::path(
    post, path = "/api/accounts", tag = "accounts",
    description = "A registered account (the password is stored as an argon2id hash).",
    request_body = CredentialsDoc,
    responses(
        (status = 201, description = "The account and a new session; `Set-Cookie: session=<token>; HttpOnly; SameSite=Strict; Path=/` (and `Secure` as `--secure-cookie` says)", body = SessionCreatedDoc),
        (status = 400, description = "`malformed`; `bad_name`; `bad_password`: under 8 or over 256 bytes", body = ErrorBodyDoc),
        (status = 409, description = "`name_taken`: a registered account has this name (without regard to case)", body = ErrorBodyDoc),
    ),
)]
async fn register(
    State(shared): State<Arc<Shared>>,
    ApiJson(req): ApiJson<Credentials>,
) -> Result<Response, ApiError> {
    let out = accounts::register(&shared.store, &req.name, &req.password)
        .await
        .map_err(refusal)?;
    info!(account = %out.0.id, "account registered");
    Ok(issued(&shared, StatusCode::CREATED, out))
}

#[utoipa::path(
    post, path = "/api/sessions", tag = "accounts",
    description = "Logs a registered account in: a new session (one per device).",
    request_body = CredentialsDoc,
    responses(
        (status = 201, description = "The account and a new session; `Set-Cookie: session=<token>; HttpOnly; SameSite=Strict; Path=/` (and `Secure` as `--secure-cookie` says)", body = SessionCreatedDoc),
        (status = 400, description = "`malformed`: not a request", body = ErrorBodyDoc),
        (status = 401, description = "`bad_credentials`: a wrong name or password", body = ErrorBodyDoc),
        (status = 403, description = "`suspended`: an admin suspended the account; the message says until when (or that it is for good) and why", body = ErrorBodyDoc),
    ),
)]
async fn login(
    State(shared): State<Arc<Shared>>,
    ApiJson(req): ApiJson<Credentials>,
) -> Result<Response, ApiError> {
    let out = accounts::login(
        &shared.store,
        &req.name,
        &req.password,
        shared.config.limits.max_sessions,
    )
    .await
    .map_err(refusal)?;
    Ok(issued(&shared, StatusCode::CREATED, out))
}

#[utoipa::path(
    get, path = "/api/me", tag = "accounts",
    security(("session_bearer" = []), ("session_cookie" = [])),
    responses(
        (status = 200, description = "The session's account", body = AccountDoc),
        SessionRefusals,
    ),
)]
async fn me(session: Session) -> axum::Json<Account> {
    axum::Json(session.account)
}

/// A page asks who it is before it knows whether anyone logged in (its cookie is HttpOnly): no
/// session, or one that ended, is an answer here and not an error, so the page logs no failed
/// request. A session that ended is treated as the WebSocket upgrade treats a stale cookie.
#[utoipa::path(
    get, path = "/api/whoami", tag = "accounts",
    description = "The session's account, or `account: null` when the request carries no session or one that is unknown or revoked (`GET /api/me` refuses those with 401).",
    security((), ("session_bearer" = []), ("session_cookie" = [])),
    responses(
        (status = 200, description = "The account, or none", body = WhoamiDoc),
        (status = 500, description = "`internal`: the store failed", body = ErrorBodyDoc),
    ),
)]
async fn whoami(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
) -> Result<axum::Json<Whoami>, ApiError> {
    let account = match token_of(&headers) {
        Some((token, _)) => match accounts::resolve(&shared.store, &token).await {
            Ok((_, a)) => Some(a),
            Err(e) if e.code() == ErrorCode::UnknownSession => None,
            Err(e) => return Err(refusal(e)),
        },
        None => None,
    };
    Ok(axum::Json(Whoami { account }))
}

#[utoipa::path(
    get, path = "/api/sessions", tag = "accounts",
    security(("session_bearer" = []), ("session_cookie" = [])),
    responses(
        (status = 200, description = "The account's sessions", body = [SessionInfoDoc]),
        SessionRefusals,
    ),
)]
async fn list_sessions(
    session: Session,
    State(shared): State<Arc<Shared>>,
) -> Result<axum::Json<Vec<SessionInfo>>, ApiError> {
    let rows = shared
        .store
        .sessions_of(session.account.id)
        .await
        .map_err(|e| refusal(e.into()))?;
    Ok(axum::Json(
        rows.iter()
            .map(|s| SessionInfo {
                id: s.id,
                created_at: s.created_at.to_rfc3339(),
                current: s.id == session.id,
            })
            .collect(),
    ))
}

/// Clears the browser's cookie (after a log-out or a revocation of all sessions).
pub(super) fn cleared(shared: &Shared) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Some(v) = session_cookie(shared, None) {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
}

/// `DELETE /api/sessions/{id}`; `current` is this request's session (log out).
#[utoipa::path(
    delete, path = "/api/sessions/{id}", tag = "accounts",
    security(("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, description = "A session id (UUID), or `current` for this request's session (log out)")),
    responses(
        (status = 204, description = "Revoked; revoking this request's session also clears the cookie"),
        (status = 400, description = "`malformed`: not a session id", body = ErrorBodyDoc),
        SessionRefusals,
        (status = 404, description = "`unknown_session`: the account has no such session", body = ErrorBodyDoc),
    ),
)]
async fn revoke_one(
    session: Session,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let target = if id == "current" {
        session.id
    } else {
        Uuid::parse_str(&id).map_err(|_| ApiError::malformed("not a session id"))?
    };
    let n = shared
        .store
        .revoke_sessions(session.account.id, Some(target))
        .await
        .map_err(|e| refusal(e.into()))?;
    shared.revoke_live(session.account.id, Some(target));
    if n == 0 {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::UnknownSession,
            "this account has no such session",
        ));
    }
    Ok(if target == session.id {
        cleared(&shared)
    } else {
        StatusCode::NO_CONTENT.into_response()
    })
}

/// `DELETE /api/sessions`: every session of the account, this one included.
#[utoipa::path(
    delete, path = "/api/sessions", tag = "accounts",
    description = "Revokes every session of the account, this one included, and clears the cookie.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    responses(
        (status = 204, description = "Revoked"),
        SessionRefusals,
    ),
)]
async fn revoke_all(
    session: Session,
    State(shared): State<Arc<Shared>>,
) -> Result<Response, ApiError> {
    shared
        .store
        .revoke_sessions(session.account.id, None)
        .await
        .map_err(|e| refusal(e.into()))?;
    shared.revoke_live(session.account.id, None);
    Ok(cleared(&shared))
}
