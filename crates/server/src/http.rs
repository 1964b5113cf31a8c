//! HTTP routes: match creation, health, the admin log, and the WebSocket upgrade.

use crate::conn::{self, HARD_LIMIT};
use crate::store::{MatchRow, MatchStatus, SeatRow};
use crate::{Phase, Shared, token_hash};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::Utc;
use protocol::{CreateMatch, ErrorBody, ErrorCode, MatchCreated, SeatToken};
use rules::{Game, REPLAY_VERSION, Setup};
use std::net::SocketAddr;
use std::sync::Arc;
use tracing::{error, info};
use uuid::Uuid;

/// Largest request body (a match request is a few hundred bytes, with a test pile a few KiB).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Every refusal, including the router's own (unknown path, wrong method, body too large),
/// carries the JSON error body.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/api/matches", post(create_match))
        .route("/api/admin/matches/{id}/log", get(admin_log))
        .route("/api/admin/stats", get(admin_stats))
        .route("/ws", get(ws_upgrade))
        .with_state(shared)
        .merge(crate::web::router())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

async fn not_found(method: Method, uri: Uri) -> Response {
    error(
        StatusCode::NOT_FOUND,
        ErrorCode::Malformed,
        format!("no endpoint {method} {}", uri.path()),
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::Malformed,
        format!("{} does not take {method}", uri.path()),
    )
}

fn error(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Response {
    let body = ErrorBody {
        id: None,
        code,
        rule_code: None,
        rule: None,
        message: message.into(),
    };
    (status, axum::Json(body)).into_response()
}

/// Seeds and tokens need the OS's randomness; without it no match can be created.
fn no_randomness(e: impl std::fmt::Display) -> Response {
    error!(error = %e, "no OS randomness");
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::Internal,
        "no randomness",
    )
}

async fn healthz() -> &'static str {
    "ok"
}

async fn ws_upgrade(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let ws = match ws {
        Ok(ws) => ws,
        Err(rejection) => {
            return error(
                rejection.status(),
                ErrorCode::Malformed,
                format!("not a WebSocket upgrade: {}", rejection.body_text()),
            );
        }
    };
    if *shared.phase.borrow() != Phase::Running {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unavailable,
            "the server is shutting down",
        );
    }
    ws.max_message_size(HARD_LIMIT)
        .max_frame_size(HARD_LIMIT)
        .on_upgrade(move |socket| conn::serve(socket, shared, peer))
}

/// 32 bytes from the OS, hex: unguessable seat tokens.
fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

async fn create_match(
    State(shared): State<Arc<Shared>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorCode::TooLarge,
                format!("a match request has at most {MAX_BODY_BYTES} bytes"),
            );
        }
        Err(rejection) => {
            return error(
                rejection.status(),
                ErrorCode::Malformed,
                rejection.body_text(),
            );
        }
    };
    let req: CreateMatch = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                ErrorCode::Malformed,
                format!("not a match request: {e}"),
            );
        }
    };
    if (req.draw_order.is_some() || req.modules.forces_secrets())
        && !shared.config.allow_test_setups
    {
        return error(
            StatusCode::BAD_REQUEST,
            ErrorCode::Malformed,
            "draw_order and chip_layout are for tests and scenarios; this server does not allow test setups",
        );
    }
    // The seed decides the pile: it comes from the OS and never leaves the server.
    let seed = match getrandom::u64() {
        Ok(s) => s,
        Err(e) => return no_randomness(e),
    };
    let mut setup = Setup::new(req.players.clone(), seed)
        .meeples(req.meeples.unwrap_or(req.modules.default_meeples()))
        .modules(req.modules.clone());
    setup.draw_order = req.draw_order.clone();
    // A pile that is empty from the start (a test setup) ends the match at once: it is stored as
    // finished, so that no restart resumes it.
    let status = match Game::start(setup.clone()) {
        Ok((game, _)) if game.is_finished() => MatchStatus::Finished,
        Ok(_) => MatchStatus::Active,
        Err(e) => return error(StatusCode::BAD_REQUEST, ErrorCode::Malformed, e.to_string()),
    };
    let setup_json = match serde_json::to_string(&setup) {
        Ok(s) => s,
        Err(e) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                e.to_string(),
            );
        }
    };
    let id = Uuid::new_v4();
    let mut seats = Vec::new();
    let mut tokens = Vec::new();
    for (i, colour) in req.players.iter().enumerate() {
        let token = match new_token() {
            Ok(t) => t,
            Err(e) => return no_randomness(e),
        };
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
    };
    if let Err(e) = shared.store.create_match(&row, &seats).await {
        error!(error = %e, "cannot store a new match");
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            "the store failed",
        );
    }
    info!(match_id = %id, players = seats.len(), "match created");
    (
        StatusCode::CREATED,
        axum::Json(MatchCreated {
            match_id: id,
            seats: tokens,
        }),
    )
        .into_response()
}

/// The stored command log of a match, with events: for operators, behind the admin token. The
/// setup (and its seed) is left out even here.
async fn admin_log(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(refusal) = check_admin(&shared, &headers) {
        return refusal;
    }
    let Ok(id) = Uuid::parse_str(&id) else {
        return error(
            StatusCode::BAD_REQUEST,
            ErrorCode::Malformed,
            "not a match id",
        );
    };
    let row = match shared.store.load_match(id).await {
        Ok(Some(r)) => r,
        Ok(None) => {
            return error(
                StatusCode::NOT_FOUND,
                ErrorCode::UnknownMatch,
                "no such match",
            );
        }
        Err(e) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                e.to_string(),
            );
        }
    };
    let commands = match shared.store.commands(id, 0).await {
        Ok(c) => c,
        Err(e) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                e.to_string(),
            );
        }
    };
    let parse = |s: &str| serde_json::from_str(s).unwrap_or(serde_json::Value::Null);
    let commands: Vec<serde_json::Value> = commands
        .iter()
        .map(|c| {
            serde_json::json!({
                "seq": c.seq,
                "seat": c.seat,
                "command_id": c.command_id,
                "command": parse(&c.command),
                "events": parse(&c.events),
                "created_at": c.created_at,
            })
        })
        .collect();
    axum::Json(serde_json::json!({
        "match_id": id,
        "status": row.status.as_str(),
        "rules_version": row.rules_version,
        "created_at": row.created_at,
        "commands": commands,
    }))
    .into_response()
}

/// The admin API needs `Authorization: Bearer <admin token>`, and is off without a configured
/// token.
#[allow(clippy::result_large_err)]
fn check_admin(shared: &Shared, headers: &HeaderMap) -> Result<(), Response> {
    let Some(expected) = shared
        .config
        .admin_token
        .as_deref()
        .filter(|t| !t.is_empty())
    else {
        return Err(error(
            StatusCode::NOT_FOUND,
            ErrorCode::Unavailable,
            "the admin API is off (no admin token configured)",
        ));
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    // Compare hashes so that the comparison time says nothing about the token.
    if given.map(token_hash) != Some(token_hash(expected)) {
        return Err(error(
            StatusCode::UNAUTHORIZED,
            ErrorCode::BadToken,
            "admin token required",
        ));
    }
    Ok(())
}

/// What is in memory: match actors and WebSocket connections.
async fn admin_stats(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if let Err(refusal) = check_admin(&shared, &headers) {
        return refusal;
    }
    axum::Json(serde_json::json!({
        "matches_in_memory": shared.registry.len(),
        "connections": *shared.connections.borrow(),
        "store": shared.store.kind(),
    }))
    .into_response()
}
