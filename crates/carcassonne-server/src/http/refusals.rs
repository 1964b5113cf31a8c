//! Refusal sets: the error answers that several routes document word for word, each written
//! once. A route lists its sets in `responses(...)` beside its own answers; every refusal has
//! the `ErrorBody` body. The answers of every route with a body (413, 415) are added to the
//! document by `openapi.rs` itself.

use super::openapi::ErrorBodyDoc;

/// A route that takes an account session ([`super::accounts::Session`]).
#[derive(Debug, utoipa::IntoResponses)]
pub enum SessionRefusals {
    #[response(
        status = 401,
        description = "`unauthenticated`: no session; `unknown_session`: an unknown or revoked session"
    )]
    Unauthenticated(ErrorBodyDoc),
}

/// A lobby action: `POST /api/lobbies/{id}/…` with a session.
#[derive(Debug, utoipa::IntoResponses)]
pub enum LobbyActionRefusals {
    #[response(
        status = 400,
        description = "`malformed`: a bad id or body; `bad_option`: an option out of range"
    )]
    Malformed(ErrorBodyDoc),
    #[response(
        status = 401,
        description = "`unauthenticated`: no session; `unknown_session`: an unknown or revoked session"
    )]
    Unauthenticated(ErrorBodyDoc),
    #[response(status = 404, description = "`unknown_lobby`")]
    UnknownLobby(ErrorBodyDoc),
    #[response(
        status = 503,
        description = "`busy`, `unavailable`: try again (the lobbies are busy; the store, or in a cluster the node deciding for the lobby, does not answer)"
    )]
    Unavailable(ErrorBodyDoc),
}

/// An admin route on no particular match ([`super::admin::Admin`]).
#[derive(Debug, utoipa::IntoResponses)]
pub enum AdminRefusals {
    #[response(status = 400, description = "`malformed`: a bad id, query or body")]
    Malformed(ErrorBodyDoc),
    #[response(
        status = 401,
        description = "`bad_token`: neither the admin token nor an admin account's session"
    )]
    BadToken(ErrorBodyDoc),
    #[response(
        status = 404,
        description = "`unavailable`: the admin API is off (no admin token configured and no admin session)"
    )]
    Off(ErrorBodyDoc),
}

/// An admin route on one match, `…/matches/{id}/…`.
#[derive(Debug, utoipa::IntoResponses)]
pub enum AdminMatchRefusals {
    #[response(status = 400, description = "`malformed`: a bad id, query or body")]
    Malformed(ErrorBodyDoc),
    #[response(
        status = 401,
        description = "`bad_token`: neither the admin token nor an admin account's session"
    )]
    BadToken(ErrorBodyDoc),
    #[response(
        status = 404,
        description = "`unknown_match`; `unavailable`: the admin API is off (no admin token configured and no admin session)"
    )]
    UnknownMatch(ErrorBodyDoc),
}
