//! The lobby API under `/api/lobbies`: create, list (with running public matches to watch),
//! read, join, leave, colour, ready, kick, bot, start. Every action takes a [`Session`]; the
//! lobby actor ([`crate::lobby`]) decides and pushes the new state to the lobby's followers.

use super::accounts::{Session, token_of};
use super::error::ApiError;
use super::extract::{ApiJson, ApiJsonOrDefault, LobbyId};
use super::openapi::{
    BotChoiceDoc, CreateLobbyDoc, ErrorBodyDoc, JoinLobbyDoc, LobbyListDoc, LobbyStartedDoc,
    LobbyStateDoc, PickColourDoc, Routes, SeatChoiceDoc, SetReadyDoc,
};
use super::refusals::{LobbyActionRefusals, SessionRefusals};
use crate::accounts;
use crate::lobby::{Action, ListFilter, LobbyError};
use crate::state::Shared;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use protocol::{
    BotChoice, CreateLobby, ErrorCode, JoinLobby, LobbyList, LobbyStarted, LobbyState, PickColour,
    SeatChoice, SetReady,
};
use serde::Deserialize;
use std::sync::Arc;
use utoipa_axum::routes;
use uuid::Uuid;

/// The routes (documented: see [`super::openapi`]).
pub fn router() -> Routes {
    Routes::new()
        .routes(routes!(create, list))
        .routes(routes!(read))
        .routes(routes!(join))
        .routes(routes!(leave))
        .routes(routes!(colour))
        .routes(routes!(ready))
        .routes(routes!(kick))
        .routes(routes!(bot))
        .routes(routes!(start))
}

/// A lobby refusal as an HTTP one.
fn refusal(e: LobbyError) -> ApiError {
    let status = match e.code {
        ErrorCode::UnknownLobby => StatusCode::NOT_FOUND,
        ErrorCode::NotHost | ErrorCode::InviteRequired | ErrorCode::NotInLobby => {
            StatusCode::FORBIDDEN
        }
        ErrorCode::SeatTaken
        | ErrorCode::ColourTaken
        | ErrorCode::AlreadyInLobby
        | ErrorCode::NotReady
        | ErrorCode::LobbyStarted
        | ErrorCode::TooManyLobbies => StatusCode::CONFLICT,
        ErrorCode::Busy | ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    ApiError::new(status, e.code, e.message)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    #[serde(default)]
    module: Option<String>,
    #[serde(default)]
    free_seats: Option<u8>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadQuery {
    #[serde(default)]
    invite_code: Option<String>,
}

fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(q)| q)
        .map_err(|e| ApiError::malformed(format!("bad query: {}", e.body_text())))
}

#[utoipa::path(
    operation_id = "create_lobby",
    post, path = "/api/lobbies", tag = "lobbies",
    description = "Creates a lobby; the caller is host on seat 0. A private lobby gets an `invite_code`.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    request_body = CreateLobbyDoc,
    responses(
        (status = 201, description = "The new lobby", body = LobbyStateDoc),
        (status = 400, description = "`malformed`: not a request; `bad_option`: an option out of range", body = ErrorBodyDoc),
        SessionRefusals,
    ),
)]
async fn create(
    session: Session,
    State(shared): State<Arc<Shared>>,
    ApiJson(req): ApiJson<CreateLobby>,
) -> Result<(StatusCode, axum::Json<LobbyState>), ApiError> {
    let lobby = shared
        .lobbies
        .create(session.account, req)
        .await
        .map_err(refusal)?;
    Ok((StatusCode::CREATED, axum::Json(lobby)))
}

#[utoipa::path(
    operation_id = "list_lobbies",
    get, path = "/api/lobbies", tag = "lobbies",
    description = "The open public lobbies, and the running public lobby matches to watch.",
    params(
        ("module" = Option<String>, Query, description = "Only lobbies with this module: `tollkeepers`, `messages`, `france`, `chips`, `inns_cathedrals`, `traders_builders`"),
        ("free_seats" = Option<u8>, Query, description = "Only lobbies with at least this many free seats"),
    ),
    responses(
        (status = 200, description = "The lobbies and matches", body = LobbyListDoc),
        (status = 400, description = "`malformed`: a bad query; `bad_option`: an unknown filter", body = ErrorBodyDoc),
    ),
)]
async fn list(
    State(shared): State<Arc<Shared>>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<axum::Json<LobbyList>, ApiError> {
    let q = query(q)?;
    let filter = ListFilter {
        module: q.module,
        free_seats: q.free_seats,
    };
    Ok(axum::Json(
        shared.lobbies.list(filter).await.map_err(refusal)?,
    ))
}

/// Anyone may read a public lobby; a private one needs membership or its invite code.
#[utoipa::path(
    operation_id = "read_lobby",
    get, path = "/api/lobbies/{id}", tag = "lobbies",
    description = "One lobby: a public one for anyone, a private one for its members or with its invite code. A started one shows its `match_id`.",
    security((), ("session_bearer" = []), ("session_cookie" = [])),
    params(
        ("id" = String, Path, format = Uuid, description = "The lobby id"),
        ("invite_code" = Option<String>, Query, description = "A private lobby's invite code"),
    ),
    responses(
        (status = 200, description = "The lobby", body = LobbyStateDoc),
        (status = 400, description = "`malformed`: a bad id or query", body = ErrorBodyDoc),
        (status = 403, description = "`invite_required`: a private lobby without (or with a wrong) invite code", body = ErrorBodyDoc),
        (status = 404, description = "`unknown_lobby`", body = ErrorBodyDoc),
    ),
)]
async fn read(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    LobbyId(id): LobbyId,
    q: Result<Query<ReadQuery>, QueryRejection>,
) -> Result<axum::Json<LobbyState>, ApiError> {
    let q = query(q)?;
    let viewer = match token_of(&headers) {
        Some((token, _)) => accounts::resolve(&shared.store, &token)
            .await
            .ok()
            .map(|(_, a)| a.id),
        None => None,
    };
    Ok(axum::Json(
        shared
            .lobbies
            .get(viewer, id, q.invite_code)
            .await
            .map_err(refusal)?,
    ))
}

async fn act(
    shared: &Shared,
    session: Session,
    id: Uuid,
    action: Action,
) -> Result<Response, ApiError> {
    match shared
        .lobbies
        .act(session.account, id, action)
        .await
        .map_err(refusal)?
    {
        Some(lobby) => Ok(axum::Json(lobby).into_response()),
        // The lobby closed (its last player left).
        None => Ok(StatusCode::NO_CONTENT.into_response()),
    }
}

#[utoipa::path(
    operation_id = "join_lobby",
    post, path = "/api/lobbies/{id}/join", tag = "lobbies",
    description = "Sits down: by default on the first free seat with the first free colour. The body may be empty.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The lobby id")),
    request_body = JoinLobbyDoc,
    responses(
        (status = 200, description = "The lobby's new state (also pushed to its followers)", body = LobbyStateDoc),
        LobbyActionRefusals,
        (status = 403, description = "`invite_required`", body = ErrorBodyDoc),
        (status = 409, description = "`seat_taken`, `colour_taken`, `already_in_lobby`, `lobby_started`", body = ErrorBodyDoc),
    ),
)]
async fn join(
    session: Session,
    State(shared): State<Arc<Shared>>,
    LobbyId(id): LobbyId,
    ApiJsonOrDefault(req): ApiJsonOrDefault<JoinLobby>,
) -> Result<Response, ApiError> {
    act(&shared, session, id, Action::Join(req)).await
}

#[utoipa::path(
    operation_id = "leave_lobby",
    post, path = "/api/lobbies/{id}/leave", tag = "lobbies",
    description = "Stands up; the host role passes to the next player by seat, and the last player closes the lobby.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The lobby id")),
    responses(
        (status = 200, description = "The lobby's new state (also pushed to its followers)", body = LobbyStateDoc),
        (status = 204, description = "The lobby closed (the last player left)"),
        LobbyActionRefusals,
        (status = 403, description = "`not_in_lobby`", body = ErrorBodyDoc),
        (status = 409, description = "`lobby_started`", body = ErrorBodyDoc),
    ),
)]
async fn leave(
    session: Session,
    State(shared): State<Arc<Shared>>,
    LobbyId(id): LobbyId,
) -> Result<Response, ApiError> {
    act(&shared, session, id, Action::Leave).await
}

#[utoipa::path(
    operation_id = "pick_colour",
    post, path = "/api/lobbies/{id}/colour", tag = "lobbies",
    description = "Picks a free colour.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The lobby id")),
    request_body = PickColourDoc,
    responses(
        (status = 200, description = "The lobby's new state (also pushed to its followers)", body = LobbyStateDoc),
        LobbyActionRefusals,
        (status = 403, description = "`not_in_lobby`", body = ErrorBodyDoc),
        (status = 409, description = "`colour_taken`, `lobby_started`", body = ErrorBodyDoc),
    ),
)]
async fn colour(
    session: Session,
    State(shared): State<Arc<Shared>>,
    LobbyId(id): LobbyId,
    ApiJson(req): ApiJson<PickColour>,
) -> Result<Response, ApiError> {
    act(&shared, session, id, Action::Colour(req.colour)).await
}

#[utoipa::path(
    operation_id = "set_ready",
    post, path = "/api/lobbies/{id}/ready", tag = "lobbies",
    description = "Marks the caller ready (or not).",
    security(("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The lobby id")),
    request_body = SetReadyDoc,
    responses(
        (status = 200, description = "The lobby's new state (also pushed to its followers)", body = LobbyStateDoc),
        LobbyActionRefusals,
        (status = 403, description = "`not_in_lobby`", body = ErrorBodyDoc),
        (status = 409, description = "`lobby_started`", body = ErrorBodyDoc),
    ),
)]
async fn ready(
    session: Session,
    State(shared): State<Arc<Shared>>,
    LobbyId(id): LobbyId,
    ApiJson(req): ApiJson<SetReady>,
) -> Result<Response, ApiError> {
    act(&shared, session, id, Action::Ready(req.ready)).await
}

#[utoipa::path(
    operation_id = "kick",
    post, path = "/api/lobbies/{id}/kick", tag = "lobbies",
    description = "Host only: empties a seat (a player or a bot).",
    security(("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The lobby id")),
    request_body = SeatChoiceDoc,
    responses(
        (status = 200, description = "The lobby's new state (also pushed to its followers)", body = LobbyStateDoc),
        LobbyActionRefusals,
        (status = 403, description = "`not_host`, `not_in_lobby`", body = ErrorBodyDoc),
        (status = 409, description = "`lobby_started`", body = ErrorBodyDoc),
    ),
)]
async fn kick(
    session: Session,
    State(shared): State<Arc<Shared>>,
    LobbyId(id): LobbyId,
    ApiJson(req): ApiJson<SeatChoice>,
) -> Result<Response, ApiError> {
    act(&shared, session, id, Action::Kick(req.seat)).await
}

#[utoipa::path(
    operation_id = "add_bot",
    post, path = "/api/lobbies/{id}/bot", tag = "lobbies",
    description = "Host only: a bot (always ready) takes a free seat, playing at `level` (`random`, `easy` (the default), `medium` or `hard`).",
    security(("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The lobby id")),
    request_body = BotChoiceDoc,
    responses(
        (status = 200, description = "The lobby's new state (also pushed to its followers)", body = LobbyStateDoc),
        LobbyActionRefusals,
        (status = 403, description = "`not_host`, `not_in_lobby`", body = ErrorBodyDoc),
        (status = 409, description = "`seat_taken`, `lobby_started`", body = ErrorBodyDoc),
    ),
)]
async fn bot(
    session: Session,
    State(shared): State<Arc<Shared>>,
    LobbyId(id): LobbyId,
    ApiJson(req): ApiJson<BotChoice>,
) -> Result<Response, ApiError> {
    act(&shared, session, id, Action::Bot(req.seat, req.level)).await
}

#[utoipa::path(
    operation_id = "start_lobby_match",
    post, path = "/api/lobbies/{id}/start", tag = "lobbies",
    description = "Host only, every seat taken and ready: creates the match with the seats bound to the players' accounts.",
    security(("session_bearer" = []), ("session_cookie" = [])),
    params(("id" = String, Path, format = Uuid, description = "The lobby id")),
    responses(
        (status = 201, description = "The match started", body = LobbyStartedDoc),
        LobbyActionRefusals,
        (status = 403, description = "`not_host`, `not_in_lobby`", body = ErrorBodyDoc),
        (status = 409, description = "`not_ready`, `lobby_started`", body = ErrorBodyDoc),
    ),
)]
async fn start(
    session: Session,
    State(shared): State<Arc<Shared>>,
    LobbyId(id): LobbyId,
) -> Result<(StatusCode, axum::Json<LobbyStarted>), ApiError> {
    let match_id = shared
        .lobbies
        .start_match(session.account, id)
        .await
        .map_err(refusal)?;
    Ok((StatusCode::CREATED, axum::Json(LobbyStarted { match_id })))
}
