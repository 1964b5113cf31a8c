//! The lobby API under `/api/lobbies`: create, list (with running public matches to watch),
//! read, join, leave, colour, ready, kick, bot, start. Every action takes a [`Session`]; the
//! lobby actor ([`crate::lobby`]) decides and pushes the new state to the lobby's followers.

use super::accounts::{Session, json_body, token_of};
use super::error::ApiError;
use crate::accounts;
use crate::lobby::{Action, ListFilter, LobbyError};
use crate::state::Shared;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use protocol::{
    CreateLobby, ErrorCode, JoinLobby, LobbyList, LobbyStarted, LobbyState, PickColour, SeatChoice,
    SetReady,
};
use serde::Deserialize;
use std::sync::Arc;
use uuid::Uuid;

pub fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/api/lobbies", post(create).get(list))
        .route("/api/lobbies/{id}", get(read))
        .route("/api/lobbies/{id}/join", post(join))
        .route("/api/lobbies/{id}/leave", post(leave))
        .route("/api/lobbies/{id}/colour", post(colour))
        .route("/api/lobbies/{id}/ready", post(ready))
        .route("/api/lobbies/{id}/kick", post(kick))
        .route("/api/lobbies/{id}/bot", post(bot))
        .route("/api/lobbies/{id}/start", post(start))
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
        | ErrorCode::LobbyStarted => StatusCode::CONFLICT,
        ErrorCode::Busy | ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    ApiError::new(status, e.code, e.message)
}

fn lobby_id(id: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(id).map_err(|_| ApiError::malformed("not a lobby id"))
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

async fn create(
    session: Session,
    State(shared): State<Arc<Shared>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, axum::Json<LobbyState>), ApiError> {
    let req: CreateLobby = json_body(body)?;
    let lobby = shared
        .lobbies
        .create(session.account, req)
        .await
        .map_err(refusal)?;
    Ok((StatusCode::CREATED, axum::Json(lobby)))
}

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
async fn read(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    q: Result<Query<ReadQuery>, QueryRejection>,
) -> Result<axum::Json<LobbyState>, ApiError> {
    let id = lobby_id(&id)?;
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
    id: &str,
    action: Action,
) -> Result<Response, ApiError> {
    let id = lobby_id(id)?;
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

async fn join(
    session: Session,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let req: JoinLobby = if body.as_ref().is_ok_and(|b| b.is_empty()) {
        JoinLobby::default()
    } else {
        json_body(body)?
    };
    act(&shared, session, &id, Action::Join(req)).await
}

async fn leave(
    session: Session,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    act(&shared, session, &id, Action::Leave).await
}

async fn colour(
    session: Session,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let req: PickColour = json_body(body)?;
    act(&shared, session, &id, Action::Colour(req.colour)).await
}

async fn ready(
    session: Session,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let req: SetReady = json_body(body)?;
    act(&shared, session, &id, Action::Ready(req.ready)).await
}

async fn kick(
    session: Session,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let req: SeatChoice = json_body(body)?;
    act(&shared, session, &id, Action::Kick(req.seat)).await
}

async fn bot(
    session: Session,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let req: SeatChoice = json_body(body)?;
    act(&shared, session, &id, Action::Bot(req.seat)).await
}

async fn start(
    session: Session,
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Result<(StatusCode, axum::Json<LobbyStarted>), ApiError> {
    let id = lobby_id(&id)?;
    let match_id = shared
        .lobbies
        .start_match(session.account, id)
        .await
        .map_err(refusal)?;
    Ok((StatusCode::CREATED, axum::Json(LobbyStarted { match_id })))
}
