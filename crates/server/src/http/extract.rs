//! The extractors every handler shares, so that each refusal of a request's body or path is
//! written once: [`ApiJson`] (a JSON body), [`ApiJsonOrDefault`] (a JSON body that may be
//! empty), [`MatchId`] and [`LobbyId`] (a UUID in the path). Each refuses with an [`ApiError`].

use super::MAX_BODY_BYTES;
use super::error::ApiError;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use protocol::ErrorCode;
use serde::de::DeserializeOwned;
use uuid::Uuid;

/// A JSON request body of type `T`, with the router's refusals as JSON errors: 413 `too_large`
/// past [`MAX_BODY_BYTES`], 400 `malformed` for a body that is not a `T`. The content type is
/// not checked (clients may send JSON as `text/plain`).
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

/// [`ApiJson`], or `T::default()` for an empty body.
#[derive(Debug)]
pub struct ApiJsonOrDefault<T>(pub T);

/// Reads a body already buffered (or its rejection) as a `T`.
pub(crate) fn json_body<T: DeserializeOwned>(
    body: Result<Bytes, BytesRejection>,
) -> Result<T, ApiError> {
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorCode::TooLarge,
                format!("a request has at most {MAX_BODY_BYTES} bytes"),
            )
        } else {
            ApiError::new(
                rejection.status(),
                ErrorCode::Malformed,
                rejection.body_text(),
            )
        }
    })?;
    serde_json::from_slice(&body).map_err(|e| ApiError::malformed(format!("bad request body: {e}")))
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        json_body(Bytes::from_request(req, state).await).map(ApiJson)
    }
}

impl<T: DeserializeOwned + Default, S: Send + Sync> FromRequest<S> for ApiJsonOrDefault<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let body = Bytes::from_request(req, state).await;
        if body.as_ref().is_ok_and(|b| b.is_empty()) {
            return Ok(ApiJsonOrDefault(T::default()));
        }
        json_body(body).map(ApiJsonOrDefault)
    }
}

/// The UUID of a one-parameter path; `what` names it in the refusal (400 `malformed`, "not a
/// {what} id"). A path that cannot be read at all keeps axum's own refusal.
async fn path_uuid<S: Send + Sync>(
    parts: &mut Parts,
    state: &S,
    what: &str,
) -> Result<Uuid, Response> {
    let Path(id) = Path::<String>::from_request_parts(parts, state)
        .await
        .map_err(IntoResponse::into_response)?;
    Uuid::parse_str(&id)
        .map_err(|_| ApiError::malformed(format!("not a {what} id")).into_response())
}

/// The match id of a `/…/{id}` path.
#[derive(Debug, Clone, Copy)]
pub struct MatchId(pub Uuid);

impl<S: Send + Sync> FromRequestParts<S> for MatchId {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        path_uuid(parts, state, "match").await.map(MatchId)
    }
}

/// The lobby id of a `/api/lobbies/{id}/…` path.
#[derive(Debug, Clone, Copy)]
pub struct LobbyId(pub Uuid);

impl<S: Send + Sync> FromRequestParts<S> for LobbyId {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        path_uuid(parts, state, "lobby").await.map(LobbyId)
    }
}
