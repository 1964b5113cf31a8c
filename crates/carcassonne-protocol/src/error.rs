//! Refusals: [`ErrorBody`], the message a client gets when something it sent is refused, and
//! [`ErrorCode`], its stable codes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// The docs' links (the doc text is also the schemas' descriptions, so it names them bare).
#[cfg(doc)]
use crate::{MAX_CHAT_CHARS, MAX_FRAME_BYTES};

/// A refusal, with a stable code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody {
    /// The client's command id, when the error answers a command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub code: ErrorCode,
    /// With `code = rule`: the rules' own code (for example `edge_mismatch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_code: Option<String>,
    /// With `code = rule`: the rule id in the rules reference (for example `B4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    pub message: String,
    /// With `code = rate_limited`: milliseconds until the limit lets the next one through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl ErrorBody {
    /// A refusal with no command id and no rule.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorBody {
            id: None,
            code,
            rule_code: None,
            rule: None,
            message: message.into(),
            retry_after_ms: None,
        }
    }

    /// The same refusal, as the answer to the command `id`.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// The rules' refusal: `code = rule`, with the rules' own code and the rule id it cites.
impl From<&rules::RuleError> for ErrorBody {
    fn from(e: &rules::RuleError) -> Self {
        ErrorBody {
            id: None,
            code: ErrorCode::Rule,
            rule_code: Some(e.code().to_string()),
            rule: Some(e.rule().to_string()),
            message: e.to_string(),
            retry_after_ms: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The frame is not a valid client message (bad JSON, unknown type, missing field).
    Malformed,
    /// The frame is larger than [`MAX_FRAME_BYTES`].
    TooLarge,
    /// Binary frames are not part of the protocol.
    Binary,
    /// The token names no seat.
    BadToken,
    /// The message needs an authenticated seat.
    Unauthenticated,
    /// The connection already holds a seat.
    AlreadyAuthenticated,
    UnknownMatch,
    /// The rules refused the command; see `rule_code` and `rule`.
    Rule,
    /// The match is not accepting commands (finished, or the server is shutting down).
    Unavailable,
    /// The match's inbox is full; try again.
    Busy,
    /// The store failed; the command was not applied.
    Internal,
    /// An admin aborted the match: it takes no commands and cannot be followed any more.
    Aborted,
    /// Admin API: the match is not over, so its secrets stay hidden.
    NotFinished,
    /// Admin API: the match is no longer being played (finished, broken or aborted), so the
    /// action does not apply.
    NotActive,
    /// A command from a connection that only watches (it holds no seat).
    Spectator,
    /// A display name is empty, longer than 24 characters, or has control characters.
    BadName,
    /// A registered account already has this name (names compare case-insensitively).
    NameTaken,
    /// A password shorter than 8 or longer than 256 bytes.
    BadPassword,
    /// Wrong name or password.
    BadCredentials,
    /// This account holds no seat in that match.
    NotYourSeat,
    UnknownLobby,
    UnknownSession,
    /// A lobby option out of range (seats, meeples, clock, modules, name).
    BadOption,
    /// A private lobby (or its match) needs its invite code.
    InviteRequired,
    /// The seat is taken (or out of range).
    SeatTaken,
    /// Another seat has this colour.
    ColourTaken,
    /// Only the lobby's host may do this.
    NotHost,
    /// The account has no seat in this lobby.
    NotInLobby,
    /// The account already has a seat in this lobby.
    AlreadyInLobby,
    /// Start refused: a seat is free or a player is not ready.
    NotReady,
    /// The lobby's match has started: the lobby no longer changes.
    LobbyStarted,
    /// A chat message empty, longer than [`MAX_CHAT_CHARS`] characters, or with control
    /// characters; or a `mute` that names nobody.
    BadChat,
    /// This connection may not chat there: it neither holds a seat in the match nor watches it
    /// with an account session, or its account has no seat in the lobby.
    NotInChat,
    /// Too many messages, commands, lobby actions, new accounts or new matches in a short time
    /// (per connection or per address); `retry_after_ms` says when to try again. Nothing was done.
    RateLimited,
    /// The account already hosts the most open lobbies it may (a lobby closes when its players
    /// leave, or starts).
    TooManyLobbies,
    /// The account already has the most live sessions it may: log out (or revoke) one first.
    TooManySessions,
    /// HTTP only: a request body whose `Content-Type` is not JSON (`application/json` or a
    /// `+json` type).
    UnsupportedMediaType,
    /// A WebSocket upgrade with the session cookie from a page of another origin (another site,
    /// a sibling subdomain): only the server's own pages, or its configured public origins, may
    /// use the cookie.
    ForbiddenOrigin,
    /// An admin suspended the account: it cannot log in until the time the message names (or
    /// ever, for a suspension for good).
    Suspended,
    /// No account has this id (or it was deleted).
    UnknownAccount,
    /// The reporter already has an open report of this chat line or player.
    AlreadyReported,
    /// A report whose reason is empty, too long or has control characters, or that names no
    /// chat line or player it may report.
    BadReport,
    /// A password reset link that is unknown, used already or expired.
    BadReset,
}

impl ErrorCode {
    /// Every code, in declaration order: `code as usize` is its index (metrics keep one counter
    /// per code without a lookup).
    pub const ALL: [ErrorCode; 43] = [
        ErrorCode::Malformed,
        ErrorCode::TooLarge,
        ErrorCode::Binary,
        ErrorCode::BadToken,
        ErrorCode::Unauthenticated,
        ErrorCode::AlreadyAuthenticated,
        ErrorCode::UnknownMatch,
        ErrorCode::Rule,
        ErrorCode::Unavailable,
        ErrorCode::Busy,
        ErrorCode::Internal,
        ErrorCode::Aborted,
        ErrorCode::NotFinished,
        ErrorCode::NotActive,
        ErrorCode::Spectator,
        ErrorCode::BadName,
        ErrorCode::NameTaken,
        ErrorCode::BadPassword,
        ErrorCode::BadCredentials,
        ErrorCode::NotYourSeat,
        ErrorCode::UnknownLobby,
        ErrorCode::UnknownSession,
        ErrorCode::BadOption,
        ErrorCode::InviteRequired,
        ErrorCode::SeatTaken,
        ErrorCode::ColourTaken,
        ErrorCode::NotHost,
        ErrorCode::NotInLobby,
        ErrorCode::AlreadyInLobby,
        ErrorCode::NotReady,
        ErrorCode::LobbyStarted,
        ErrorCode::BadChat,
        ErrorCode::NotInChat,
        ErrorCode::RateLimited,
        ErrorCode::TooManyLobbies,
        ErrorCode::TooManySessions,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::ForbiddenOrigin,
        ErrorCode::Suspended,
        ErrorCode::UnknownAccount,
        ErrorCode::AlreadyReported,
        ErrorCode::BadReport,
        ErrorCode::BadReset,
    ];

    /// The wire name (as serialized), without allocating.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Malformed => "malformed",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::Binary => "binary",
            ErrorCode::BadToken => "bad_token",
            ErrorCode::Unauthenticated => "unauthenticated",
            ErrorCode::AlreadyAuthenticated => "already_authenticated",
            ErrorCode::UnknownMatch => "unknown_match",
            ErrorCode::Rule => "rule",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Busy => "busy",
            ErrorCode::Internal => "internal",
            ErrorCode::Aborted => "aborted",
            ErrorCode::NotFinished => "not_finished",
            ErrorCode::NotActive => "not_active",
            ErrorCode::Spectator => "spectator",
            ErrorCode::BadName => "bad_name",
            ErrorCode::NameTaken => "name_taken",
            ErrorCode::BadPassword => "bad_password",
            ErrorCode::BadCredentials => "bad_credentials",
            ErrorCode::NotYourSeat => "not_your_seat",
            ErrorCode::UnknownLobby => "unknown_lobby",
            ErrorCode::UnknownSession => "unknown_session",
            ErrorCode::BadOption => "bad_option",
            ErrorCode::InviteRequired => "invite_required",
            ErrorCode::SeatTaken => "seat_taken",
            ErrorCode::ColourTaken => "colour_taken",
            ErrorCode::NotHost => "not_host",
            ErrorCode::NotInLobby => "not_in_lobby",
            ErrorCode::AlreadyInLobby => "already_in_lobby",
            ErrorCode::NotReady => "not_ready",
            ErrorCode::LobbyStarted => "lobby_started",
            ErrorCode::BadChat => "bad_chat",
            ErrorCode::NotInChat => "not_in_chat",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::TooManyLobbies => "too_many_lobbies",
            ErrorCode::TooManySessions => "too_many_sessions",
            ErrorCode::UnsupportedMediaType => "unsupported_media_type",
            ErrorCode::ForbiddenOrigin => "forbidden_origin",
            ErrorCode::Suspended => "suspended",
            ErrorCode::UnknownAccount => "unknown_account",
            ErrorCode::AlreadyReported => "already_reported",
            ErrorCode::BadReport => "bad_report",
            ErrorCode::BadReset => "bad_reset",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ErrorCode::ALL` holds every code, each at its own index, with its wire name: the schema's
    /// list of codes is the enum's.
    #[test]
    fn every_error_code_is_listed_once_with_its_wire_name() {
        let schema = serde_json::to_value(schemars::schema_for!(ErrorCode)).expect("schema");
        // schemars writes each documented code as a `const` and the others in one `enum`.
        let mut names: Vec<&str> = Vec::new();
        for branch in schema["oneOf"].as_array().expect("oneOf") {
            match (branch.get("const"), branch.get("enum")) {
                (Some(c), _) => names.extend(c.as_str()),
                (_, Some(e)) => names.extend(
                    e.as_array()
                        .expect("enum")
                        .iter()
                        .filter_map(|v| v.as_str()),
                ),
                _ => panic!("{branch}"),
            }
        }
        assert_eq!(names.len(), ErrorCode::ALL.len(), "{schema}");
        for (i, code) in ErrorCode::ALL.into_iter().enumerate() {
            assert_eq!(code as usize, i);
            assert_eq!(serde_json::to_value(code).ok(), Some(code.as_str().into()));
        }
    }

    #[test]
    fn a_rule_error_becomes_a_rule_refusal_with_its_code_and_rule_id() {
        let e = rules::RuleError::GameOver;
        let body = ErrorBody::from(&e).with_id("c1");
        assert_eq!(body.code, ErrorCode::Rule);
        assert_eq!(body.id.as_deref(), Some("c1"));
        assert_eq!(body.rule_code.as_deref(), Some(e.code()));
        assert_eq!(body.rule.as_deref(), Some(e.rule()));
        assert_eq!(body.message, e.to_string());
        let plain = ErrorBody::new(ErrorCode::Busy, "try again");
        assert_eq!((plain.id, plain.rule_code, plain.rule), (None, None, None));
    }
}
