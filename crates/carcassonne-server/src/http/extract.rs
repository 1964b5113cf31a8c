//! The extractors every handler shares, so that each refusal of a request's body or path is
//! written once: [`ApiJson`] (a JSON body), [`ApiJsonOrDefault`] (a JSON body that may be
//! empty), [`MatchId`] and [`LobbyId`] (a UUID in the path). Each refuses with an [`ApiError`].
//! Every route that reads a body reads it through [`json_body`]: one place answers 413
//! `too_large`, 415 `unsupported_media_type` and 400 `malformed`.

use super::MAX_BODY_BYTES;
use super::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use protocol::ErrorCode;
use serde::de::DeserializeOwned;
use uuid::Uuid;

/// A JSON request body of type `T`, with the router's refusals as JSON errors: 413 `too_large`
/// past [`MAX_BODY_BYTES`], 415 `unsupported_media_type` for a body whose `Content-Type` is not
/// JSON, 400 `malformed` for a body that is not a `T`.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

/// [`ApiJson`], or `T::default()` for an empty body (with any content type, or none).
#[derive(Debug)]
pub struct ApiJsonOrDefault<T>(pub T);

/// Whether a `Content-Type` names JSON: `application/json` or `application/<anything>+json`,
/// with any parameters (`; charset=utf-8`).
fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || essence
            .strip_prefix("application/")
            .is_some_and(|sub| sub.len() > "+json".len() && sub.ends_with("+json"))
}

/// The request's body, buffered within [`MAX_BODY_BYTES`] (413 `too_large` past it, whatever
/// the route: the router's [`axum::extract::DefaultBodyLimit`] and a declared length alike),
/// and the request's headers.
async fn buffered<S: Send + Sync>(req: Request, state: &S) -> Result<(HeaderMap, Bytes), ApiError> {
    let headers = req.headers().clone();
    let body = Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large()
        } else {
            ApiError::new(
                rejection.status(),
                ErrorCode::Malformed,
                rejection.body_text(),
            )
        }
    })?;
    Ok((headers, body))
}

/// 413 `too_large`: the one refusal of an oversized body.
pub(crate) fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::TooLarge,
        format!("a request has at most {MAX_BODY_BYTES} bytes"),
    )
}

/// Reads a buffered body as a `T`: 415 unless its content type is JSON, 400 unless it parses.
pub(crate) fn json_body<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: &[u8],
) -> Result<T, ApiError> {
    if !is_json(headers) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::UnsupportedMediaType,
            "a request body is JSON: send `Content-Type: application/json`",
        ));
    }
    serde_json::from_slice(body).map_err(|e| ApiError::malformed(format!("bad request body: {e}")))
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let (headers, body) = buffered(req, state).await?;
        if body.is_empty() {
            // No body is no JSON value, whatever the content type says.
            return Err(ApiError::malformed("a request body is required"));
        }
        json_body(&headers, &body).map(ApiJson)
    }
}

impl<T: DeserializeOwned + Default, S: Send + Sync> FromRequest<S> for ApiJsonOrDefault<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let (headers, body) = buffered(req, state).await?;
        if body.is_empty() {
            return Ok(ApiJsonOrDefault(T::default()));
        }
        json_body(&headers, &body).map(ApiJsonOrDefault)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_TYPE, v.parse().expect("a header value"));
        h
    }

    #[test]
    fn json_and_json_suffixed_types_are_json_and_nothing_else_is() {
        for ok in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            "application/merge-patch+json",
        ] {
            assert!(is_json(&typed(ok)), "{ok}");
        }
        for no in [
            "text/plain",
            "text/plain;charset=UTF-8",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/+json",
            "text/json",
            "application/jsonx",
        ] {
            assert!(!is_json(&typed(no)), "{no}");
        }
        assert!(!is_json(&HeaderMap::new()), "no content type");
    }

    #[test]
    fn a_body_that_is_not_json_typed_is_refused_with_415() {
        let e = json_body::<serde_json::Value>(&typed("text/plain"), b"{}").expect_err("refused");
        assert_eq!(
            (e.status, e.body.code),
            (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorCode::UnsupportedMediaType
            )
        );
        let e = json_body::<u8>(&typed("application/json"), b"{}").expect_err("refused");
        assert_eq!(
            (e.status, e.body.code),
            (StatusCode::BAD_REQUEST, ErrorCode::Malformed)
        );
    }
}
