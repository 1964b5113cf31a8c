//! HTTP routes: match creation ([`matches`]), a match's history for its players and spectators
//! ([`history`]) and a finished match's replay ([`replay`]), ratings ([`ratings`]), an account's webhook ([`webhooks`]), accounts ([`accounts`]), a player's own account and reports ([`me`]), lobbies ([`lobbies`]), health, the admin API ([`admin`]), the metrics ([`metrics`]), and the WebSocket upgrade.
//! Every refusal is an [`ApiError`] with the JSON error body; the extractors every handler shares
//! (a JSON body, a match or lobby id) are in [`extract`], the refusals several routes document
//! alike in [`refusals`], and the document itself in [`openapi`].

pub mod accounts;
pub mod admin;
pub mod error;
pub mod extract;
pub mod history;
pub mod lobbies;
pub mod matches;
pub mod me;
pub mod metrics;
pub mod openapi;
pub mod ratings;
pub mod refusals;
pub mod replay;
pub mod upgrade;
pub mod webhooks;

pub use error::ApiError;

use crate::client_addr::{Client, client_addr};
use crate::conn;
use crate::state::{Lifecycle, Shared};
use axum::Extension;
use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use openapi::{ErrorBodyDoc, Routes};
use protocol::ErrorCode;
use std::net::SocketAddr;
use std::sync::Arc;
use tracing::Instrument;
use utoipa_axum::routes;

/// Largest request body (a match request is a few hundred bytes, with a test pile a few KiB).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Every refusal, including the router's own (unknown path, wrong method, body too large),
/// carries the JSON error body.
pub fn router(shared: Arc<Shared>) -> Router {
    let limited = Arc::clone(&shared);
    let (api, _) = api_routes().split();
    api.with_state(shared)
        .merge(crate::web::router())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(limited, http_limits))
        .layer(axum::middleware::map_response(nosniff))
}

/// Every answer, the API's JSON and its refusals included, is read as the type it declares: a
/// browser never sniffs a JSON body (a chat line, a name) into HTML or script.
async fn nosniff(mut res: Response) -> Response {
    res.headers_mut().insert(
        axum::http::header::X_CONTENT_TYPE_OPTIONS,
        axum::http::HeaderValue::from_static("nosniff"),
    );
    res
}

/// Which rate limit an HTTP request counts against: the middleware and the OpenAPI document's
/// 429 answers read this one list.
pub(crate) fn limit_kind(method: &Method, path: &str) -> Option<crate::limits::Kind> {
    use crate::limits::Kind;
    match (method, path) {
        (
            &Method::POST,
            "/api/accounts"
            | "/api/accounts/guest"
            | "/api/sessions"
            | "/api/password-resets"
            | "/api/reports",
        )
        | (&Method::PUT, "/api/me/password" | "/api/me/webhook")
        | (&Method::DELETE, "/api/me") => Some(Kind::Account),
        (&Method::POST, p) if p.starts_with("/api/lobbies") => Some(Kind::Lobby),
        (&Method::POST, "/api/matches") => Some(Kind::Match),
        (&Method::GET, p) if is_history(p) => Some(Kind::History),
        _ => None,
    }
}

/// A match's history (`/api/matches/{id}/log`, `/chat` or `/replay`): reads of the store that anyone may
/// make, so limited like the routes that create something.
fn is_history(path: &str) -> bool {
    path.strip_prefix("/api/matches/")
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(id, tail)| !id.contains('/') && matches!(tail, "log" | "chat" | "replay"))
}

/// Every request's client address ([`client_addr`]: the peer, or behind a trusted proxy the
/// address it forwards), put on the request as [`Client`] and on its log lines as `client`;
/// then the per-address rate limits of the REST side: account creation and log-in, match
/// creation, every lobby action (a `POST` under `/api/lobbies`) and a match's history. Other
/// reads cost nothing.
async fn http_limits(
    State(shared): State<Arc<Shared>>,
    mut req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let client = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| client_addr(c.0.ip(), req.headers(), &shared.config.conn.trusted_proxies));
    let Some(client) = client else {
        return next.run(req).await;
    };
    req.extensions_mut().insert(Client(client));
    if let Some(kind) = limit_kind(req.method(), req.uri().path())
        && let Err(l) = shared.limits.check(kind, client)
    {
        return ApiError::rate_limited(&l).into_response();
    }
    next.run(req)
        .instrument(tracing::info_span!("http", %client))
        .await
}

/// Every route of the API, each with its documentation (see [`openapi`]); the browser's pages
/// ([`crate::web::router`]) are the only routes outside it.
pub fn api_routes() -> Routes {
    Routes::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics::metrics))
        .routes(routes!(openapi::openapi_json))
        .routes(routes!(crate::web::tiles))
        .routes(routes!(matches::create_match))
        .routes(routes!(history::log))
        .routes(routes!(history::chat))
        .routes(routes!(replay::replay))
        .routes(routes!(ratings::leaderboard))
        .routes(routes!(ratings::profile))
        .routes(routes!(ratings::recompute))
        .routes(routes!(
            webhooks::set_webhook,
            webhooks::get_webhook,
            webhooks::delete_webhook
        ))
        .nest("/api/admin", admin::router())
        .merge(accounts::router())
        .merge(me::router())
        .merge(lobbies::router())
        .routes(routes!(ws_upgrade))
}

async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::Malformed,
        format!("no endpoint {method} {}", uri.path()),
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::Malformed,
        format!("{} does not take {method}", uri.path()),
    )
}

#[utoipa::path(
    get, path = "/healthz", tag = "server",
    responses((status = 200, description = "The server is up", body = String, content_type = "text/plain")),
)]
async fn healthz() -> &'static str {
    "ok"
}

/// The longest a readiness check waits for the store: a probe wants an answer, not a hang.
const READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// Readiness, for a load balancer or Kubernetes: the server is running (not shutting down),
/// its store answers a query, and the store holds every migration of this build. `/healthz`
/// only says the process serves HTTP.
#[utoipa::path(
    get, path = "/readyz", tag = "server",
    responses(
        (status = 200, description = "Ready: the store answers and every migration is applied", body = String, content_type = "text/plain"),
        (status = 503, description = "`unavailable`: the store does not answer (within 3 s), misses a migration, or the server is shutting down", body = ErrorBodyDoc),
    ),
)]
async fn readyz(State(shared): State<Arc<Shared>>) -> Result<&'static str, ApiError> {
    let unavailable = |message: String| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unavailable,
            message,
        )
    };
    if *shared.lifecycle.borrow() != Lifecycle::Running {
        return Err(unavailable("the server is shutting down".into()));
    }
    match tokio::time::timeout(READY_TIMEOUT, shared.store.ready()).await {
        Ok(Ok(())) => Ok("ready"),
        Ok(Err(e)) => Err(unavailable(e.to_string())),
        Err(_) => Err(unavailable(format!(
            "the store did not answer within {} s",
            READY_TIMEOUT.as_secs()
        ))),
    }
}

/// The wait a client refused for the connection limit is told (`Retry-After`): connections come
/// and go by the minute, and a few seconds spread the retries of many clients.
const FULL_RETRY_AFTER_MS: u64 = 5_000;

/// The WebSocket: every frame is a `ClientMessage` or a `ServerMessage` (components here, and
/// proto/client-message.schema.json, proto/server-message.schema.json).
#[utoipa::path(
    get, path = "/ws", tag = "websocket",
    description = "Upgrades to the WebSocket on which matches are played. Every frame is one JSON message: the client sends `ClientMessage`s, the server `ServerMessage`s (proto/client-message.schema.json, proto/server-message.schema.json; proto/README.md describes the protocol). An account session (bearer or cookie) is optional: with one the server sends `identified` after `welcome`.",
    security((), ("session_bearer" = []), ("session_cookie" = [])),
    responses(
        (status = 101, description = "Switching Protocols: the WebSocket is open"),
        (status = 400, description = "`malformed`: not a WebSocket upgrade (also 405, 426)", body = ErrorBodyDoc),
        (status = 401, description = "`unknown_session`: a bearer session token that is unknown or revoked (a stale cookie only makes the connection anonymous)", body = ErrorBodyDoc),
        (status = 403, description = "`forbidden_origin`: the `session` cookie from a page of another origin (only the server's own pages, or its `--public-origin`s, may use the cookie)", body = ErrorBodyDoc),
        (status = 503, description = "`unavailable`: the server is shutting down, or holds its `--max-connections` (with `Retry-After`)", body = ErrorBodyDoc),
    ),
)]
async fn ws_upgrade(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(Client(client)): Extension<Client>,
    headers: HeaderMap,
    ws: upgrade::WsUpgrade,
) -> Result<Response, ApiError> {
    if *shared.lifecycle.borrow() != Lifecycle::Running {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unavailable,
            "the server is shutting down",
        ));
    }
    let Some(slot) = conn::Slot::take(&shared) else {
        let mut e = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unavailable,
            "the server holds as many connections as it may: try again later",
        );
        e.body.retry_after_ms = Some(FULL_RETRY_AFTER_MS);
        return Err(e);
    };
    check_origin(&shared, &headers)?;
    // An account session on the upgrade: a bad bearer token is refused here; a stale
    // cookie only makes the connection anonymous (the browser would otherwise be locked out).
    let account = match accounts::token_of(&headers) {
        Some((token, bearer)) => match crate::accounts::resolve(&shared.store, &token).await {
            Ok((session, account)) => Some(crate::accounts::WsSession {
                account,
                session,
                token_hash: crate::tokens::token_hash(&token),
            }),
            Err(e) if bearer => return Err(accounts::refusal(e)),
            Err(_) => None,
        },
        None => None,
    };
    let (upgrade, response) = ws.accept();
    tokio::spawn(conn::serve(upgrade, slot, peer, client, account));
    Ok(response)
}

/// A page of another site must not open a socket with the visitor's session cookie (which the
/// browser attaches to any upgrade to this host): with the cookie, the `Origin` must be allowed
/// ([`crate::origin::allowed`]). Without the cookie there is no ambient credential to misuse; an
/// upgrade with the cookie and no `Origin` is not a browser's (browsers always send it).
fn check_origin(shared: &Shared, headers: &HeaderMap) -> Result<(), ApiError> {
    let cookie = headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .any(|c| {
            c.trim()
                .split_once('=')
                .is_some_and(|(k, _)| k == accounts::COOKIE)
        });
    let (true, Some(origin)) = (cookie, headers.get(axum::http::header::ORIGIN)) else {
        return Ok(());
    };
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok());
    let origin = origin.to_str().unwrap_or("");
    if crate::origin::allowed(origin, host, &shared.config.conn.public_origin) {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::FORBIDDEN,
        ErrorCode::ForbiddenOrigin,
        format!("a page at {origin:?} may not use this server's session cookie"),
    ))
}

#[cfg(test)]
mod tests {
    use axum::http::Method;

    /// Every route that creates something (a `POST` or `PUT`), and every read of a match's
    /// history (a store read anyone may make), counts against a per-address rate limit, but the
    /// admin API's: only the admin token or an admin account's session reaches
    /// it, and it writes every action to the audit trail (docs/deploy.md lists them all).
    #[test]
    fn every_route_that_creates_something_is_limited() {
        let doc = super::openapi::document();
        let mut unlimited = Vec::new();
        let paths = doc["paths"].as_object().into_iter().flatten();
        for (path, item) in paths {
            for method in item.as_object().into_iter().flat_map(|m| m.keys()) {
                let Ok(m) = Method::from_bytes(method.to_uppercase().as_bytes()) else {
                    continue;
                };
                let creates = m == Method::POST || m == Method::PUT;
                if (creates || super::is_history(path))
                    && !path.starts_with("/api/admin/")
                    && super::limit_kind(&m, path).is_none()
                {
                    unlimited.push(format!("{m} {path}"));
                }
            }
        }
        assert!(unlimited.is_empty(), "no rate limit: {unlimited:?}");
        for path in ["/api/matches/{id}/log", "/api/matches/{id}/chat"] {
            assert!(doc["paths"].get(path).is_some(), "{path} is documented");
            assert!(super::limit_kind(&Method::GET, path).is_some(), "{path}");
        }
        assert!(!super::is_history("/api/matches/a/b/log"));
        assert!(!super::is_history("/api/matches"));
    }
}
