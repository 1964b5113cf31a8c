//! The wire protocol: every message between a client and the server, as tagged JSON
//! (`{"type": "...", ...}`), one message per WebSocket text frame. `proto/` holds the JSON Schemas
//! generated from these types and `proto/README.md` describes the conversation.

pub mod admin;
pub mod diff;
mod json;

use rules::{Colour, Command, Event, Modules, PlayerId, View};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Bumped on any incompatible change of these types.
pub const PROTOCOL_VERSION: u32 = 1;

/// Largest text frame the server accepts, in bytes.
pub const MAX_FRAME_BYTES: usize = 64 * 1024;

/// A match's sequence number: 0 is the state after the opening (start tile, first draw); each
/// accepted command adds one.
pub type Seq = u64;

/// Command ids that start with this are the server's own, a default it applied: at a
/// decision's deadline (`server:deadline:<seq>`), when the player's clock ran out
/// (`server:clock:<seq>`), or for a player marked away (`server:away:<seq>`). A client's
/// command id may not start with it.
pub const SERVER_COMMAND_PREFIX: &str = "server:";

/// The view a client is sent (in a snapshot, and what the patches of diffs apply to): the rules'
/// public view, plus what the server adds to it, which the rules cannot know (they have no clock).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MatchView {
    #[serde(flatten)]
    pub view: View,
    /// The pending deadlines, sorted by player (then time); absent when there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deadlines: Vec<Deadline>,
    /// The game clocks, one per player in seat order; absent in a match without a clock.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clocks: Vec<ClockView>,
    /// The players the server played for because their clock ran out or they were away, and who
    /// have not had a command of theirs accepted since (sorted); absent when none. A function of
    /// the log, like the rest of the view.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub away: Vec<PlayerId>,
}

impl From<View> for MatchView {
    /// The view of a match with nothing of the server's beside it: no deadline pending, no
    /// clock, nobody away.
    fn from(view: View) -> Self {
        MatchView {
            view,
            deadlines: Vec::new(),
            clocks: Vec::new(),
            away: Vec::new(),
        }
    }
}

/// A player's game clock as of the view's seq. A client counts it down itself: while
/// `running_since` is set, the time left now is `remaining_ms - (now - running_since)`; the
/// server sends no diff per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClockView {
    pub player: PlayerId,
    /// Milliseconds left in the bank at `running_since` (or now, when stopped).
    pub remaining_ms: u64,
    /// Unix time in milliseconds since which the clock runs (the player must decide in their
    /// turn); absent while it is stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_since: Option<u64>,
}

/// A match's game clock: every player starts with `bank_ms` and gets `increment_ms` added when
/// each of their turns ends. Realtime play (`5 min + 20 s`: `{"bank_ms": 300000,
/// "increment_ms": 20000}`) and turn-based play (`3 days + 1 day`: `{"bank_ms": 259200000,
/// "increment_ms": 86400000}`) are the same clock at different scales: both run on the wall
/// clock, also while the server is down (the stored command times are the truth).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockSettings {
    /// Each player's starting time, in milliseconds: 10 s to 30 days.
    pub bank_ms: u64,
    /// Added to a player's bank when each of their turns ends, in milliseconds: 0 to 7 days.
    pub increment_ms: u64,
}

const DAY_MS: u64 = 24 * 60 * 60 * 1000;

impl ClockSettings {
    pub const MIN_BANK_MS: u64 = 10_000;
    pub const MAX_BANK_MS: u64 = 30 * DAY_MS;
    pub const MAX_INCREMENT_MS: u64 = 7 * DAY_MS;

    /// Checks the bounds; the error says which value is out of which range.
    pub fn validate(&self) -> Result<(), String> {
        if !(Self::MIN_BANK_MS..=Self::MAX_BANK_MS).contains(&self.bank_ms) {
            return Err(format!(
                "clock.bank_ms must be from {} (10 s) to {} (30 days), not {}",
                Self::MIN_BANK_MS,
                Self::MAX_BANK_MS,
                self.bank_ms
            ));
        }
        if self.increment_ms > Self::MAX_INCREMENT_MS {
            return Err(format!(
                "clock.increment_ms must be from 0 to {} (7 days), not {}",
                Self::MAX_INCREMENT_MS,
                self.increment_ms
            ));
        }
        Ok(())
    }
}

/// An open decision of a player who is not the active one, and when the server answers it for
/// them with its default (the preference, else the scoring pawn, ...), as a command of its own.
/// Answering before `at` cancels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Deadline {
    pub player: PlayerId,
    /// Unix time in milliseconds.
    pub at: u64,
}

/// Client to server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    /// Claim a seat with the token received when the match was created. A connection holds at
    /// most one seat; without one it may only spectate.
    Auth {
        token: String,
    },
    /// Follow a match. `since`: the last seq the client has applied; the server sends the diffs
    /// after it, or a snapshot when that is cheaper or `since` is absent.
    Subscribe {
        match_id: Uuid,
        #[serde(default)]
        since: Option<Seq>,
    },
    Unsubscribe {
        match_id: Uuid,
    },
    /// A move for the match of the authenticated seat. `id` is chosen by the client and unique per
    /// seat; sending the same id again returns the first answer and applies nothing twice.
    Command {
        id: String,
        command: Command,
    },
    /// Needs an account session (the `session` cookie or `Authorization: Bearer` on the
    /// WebSocket upgrade): play the seat this account holds in `match_id` (lobby matches bind
    /// seats to accounts). Answered like `auth`.
    TakeSeat {
        match_id: Uuid,
    },
    /// Like `subscribe`, with the invite code that a private lobby's match needs (a public match
    /// needs none; its players need none either).
    Watch {
        match_id: Uuid,
        invite_code: String,
        #[serde(default)]
        since: Option<Seq>,
    },
    /// Follow a lobby: its whole state now and after every change (`lobby`), until it closes
    /// (`lobby_closed`). A private lobby only for its members.
    SubscribeLobby {
        lobby_id: Uuid,
    },
    UnsubscribeLobby {
        lobby_id: Uuid,
    },
    /// A chat message, to a match (`match_id`) or a lobby (`lobby_id`): exactly one of the two.
    /// Not a game command (no seq, no rules): stored, then delivered as `chat`, the sender
    /// included. At a match, the seat this connection holds speaks in the `table` channel; a
    /// connection that watches (and has an account session) in the `spectators` channel. In a
    /// lobby, its seated accounts speak. At most [`MAX_CHAT_CHARS`] characters, no control
    /// characters (`bad_chat`).
    Chat {
        #[serde(default)]
        match_id: Option<Uuid>,
        #[serde(default)]
        lobby_id: Option<Uuid>,
        text: String,
    },
    /// Stop receiving this connection's chat from an account (`account_id`), or from a seat of a
    /// match (`match_id` and `seat`). Lasts as long as the connection.
    Mute(MuteTarget),
    /// Undo a `mute`.
    Unmute(MuteTarget),
}

/// Whom a `mute` or `unmute` names: an account, or a seat of a match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MuteTarget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
}

/// Longest chat message, in characters.
pub const MAX_CHAT_CHARS: usize = 500;

/// Where a chat message was said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChatChannel {
    /// The players of a match; spectators read it too.
    Table,
    /// The spectators of a match; the players never receive it (no coaching from the rail).
    Spectators,
    /// The members of a lobby.
    Lobby,
}

impl ChatChannel {
    pub fn as_str(self) -> &'static str {
        match self {
            ChatChannel::Table => "table",
            ChatChannel::Spectators => "spectators",
            ChatChannel::Lobby => "lobby",
        }
    }
}

/// Who said a chat message: a seat (table channel) and/or an account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChatFrom {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<Uuid>,
    /// The account's display name when it spoke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A chat message as delivered (and as the admin API lists it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChatLine {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lobby_id: Option<Uuid>,
    pub channel: ChatChannel,
    pub from: ChatFrom,
    pub text: String,
    /// Unix time in milliseconds when the server stored it.
    pub at: u64,
}

/// Checks a chat text: 1 to [`MAX_CHAT_CHARS`] characters, not only spaces, no control
/// characters. The error says which.
pub fn check_chat_text(text: &str) -> Result<(), String> {
    let n = text.chars().count();
    if text.trim().is_empty() {
        return Err("a chat message may not be empty".into());
    }
    if n > MAX_CHAT_CHARS {
        return Err(format!(
            "a chat message has at most {MAX_CHAT_CHARS} characters, not {n}"
        ));
    }
    if text.chars().any(char::is_control) {
        return Err("a chat message may not contain control characters".into());
    }
    Ok(())
}

/// Server to client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// First frame on every connection.
    Welcome {
        protocol_version: u32,
        rules_version: String,
        server_version: String,
    },
    Authenticated {
        match_id: Uuid,
        seat: u8,
    },
    /// The whole public view at `seq`, with the server's deadlines and clocks.
    Snapshot {
        match_id: Uuid,
        seq: Seq,
        // Boxed: the view is far larger than every other message.
        view: Box<MatchView>,
    },
    /// What command `seq` did: its events and the JSON Patch (RFC 6902) from the view at `seq - 1`
    /// to the view at `seq`.
    Diff {
        match_id: Uuid,
        seq: Seq,
        events: Vec<Event>,
        patch: Vec<PatchOp>,
    },
    /// The command `id` was accepted, stored, and became `seq`.
    Ack {
        id: String,
        match_id: Uuid,
        seq: Seq,
    },
    /// Something the client sent was refused. Sent to that client only; the connection and the
    /// match go on.
    Error(ErrorBody),
    /// After `welcome`, when the upgrade carried a valid account session: who this connection is.
    Identified {
        account: Account,
    },
    /// A followed lobby's whole state, sent on subscribing and after each change.
    Lobby {
        lobby: LobbyState,
    },
    /// A followed lobby closed (its last player left); no more `lobby` messages come for it.
    LobbyClosed {
        lobby_id: Uuid,
    },
    /// A chat message in a match or lobby this connection follows (or its own, echoed).
    Chat(ChatLine),
}

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
    /// Too many messages, commands, lobby actions or new accounts in a short time (per
    /// connection or per address); `retry_after_ms` says when to try again. Nothing was done.
    RateLimited,
    /// The account already hosts the most open lobbies it may (a lobby closes when its players
    /// leave, or starts).
    TooManyLobbies,
    /// The account already has the most live sessions it may: log out (or revoke) one first.
    TooManySessions,
}

impl ErrorCode {
    /// Every code, in declaration order: `code as usize` is its index (metrics keep one counter
    /// per code without a lookup).
    pub const ALL: [ErrorCode; 36] = [
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
        }
    }
}

/// One RFC 6902 operation, as in the `json-patch` crate's serialization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum PatchOp {
    Add {
        path: String,
        value: serde_json::Value,
    },
    Remove {
        path: String,
    },
    Replace {
        path: String,
        value: serde_json::Value,
    },
    Move {
        from: String,
        path: String,
    },
    Copy {
        from: String,
        path: String,
    },
    Test {
        path: String,
        value: serde_json::Value,
    },
}

/// `POST /api/matches`: create a match with one seat per colour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateMatch {
    /// Colours in turn order (2 to 6).
    pub players: Vec<Colour>,
    #[serde(default)]
    pub modules: Modules,
    /// Meeples per player (default 7; 9 on a map).
    #[serde(default)]
    pub meeples: Option<u8>,
    /// Forced pile order, for tests and scenarios; refused unless the server allows test setups.
    #[serde(default)]
    pub draw_order: Option<Vec<String>>,
    /// A game clock for every player; none when absent (the match waits for each player).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockSettings>,
}

/// The answer to [`CreateMatch`]: the match id and one secret token per seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MatchCreated {
    pub match_id: Uuid,
    pub seats: Vec<SeatToken>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SeatToken {
    pub seat: u8,
    pub colour: Colour,
    pub token: String,
}

/// An account: a guest (a display name only) or registered (name and password).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Account {
    pub id: Uuid,
    pub name: String,
    pub kind: AccountKind,
    pub admin: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AccountKind {
    Guest,
    Registered,
}

/// `POST /api/accounts/guest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewGuest {
    pub name: String,
}

/// `POST /api/accounts` (register) and `POST /api/sessions` (log in).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    pub name: String,
    pub password: String,
}

/// A new session: the account and its secret token (also set as the `session` cookie). The
/// server keeps only the token's hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionCreated {
    pub account: Account,
    pub session_id: Uuid,
    pub token: String,
}

/// One of the caller's sessions (`GET /api/sessions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionInfo {
    pub id: Uuid,
    /// RFC 3339.
    pub created_at: String,
    /// The session of this request.
    pub current: bool,
}

/// The modules a lobby offers (the France chips need the France map).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LobbyModules {
    #[serde(default)]
    pub tollkeepers: bool,
    #[serde(default)]
    pub messages: bool,
    /// Play on the France map (Carcassonne Maps).
    #[serde(default)]
    pub france: bool,
    /// The France chips (P7–P10); needs `france`.
    #[serde(default)]
    pub chips: bool,
}

impl LobbyModules {
    /// The rules' modules for a match started from this lobby.
    pub fn to_rules(self) -> Modules {
        Modules {
            tollkeepers: self.tollkeepers,
            messages: self.messages,
            map: self.france.then(|| {
                Box::new(rules::MapSetup {
                    map: "france".into(),
                    starts: None,
                    chips: self.chips,
                    chip_layout: None,
                })
            }),
        }
    }
}

fn yes() -> bool {
    true
}

/// `POST /api/lobbies`: the caller becomes the host and takes seat 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateLobby {
    /// 1 to 48 characters, no control characters.
    pub name: String,
    /// 2 to 6.
    pub seats: u8,
    #[serde(default)]
    pub modules: LobbyModules,
    /// Meeples per player (1 to 12; default 7, 9 on a map).
    #[serde(default)]
    pub meeples: Option<u8>,
    #[serde(default)]
    pub clock: Option<ClockSettings>,
    /// Listed and open to all (default), or private: joined and watched with the invite code.
    #[serde(default = "yes")]
    pub public: bool,
}

/// `POST /api/lobbies/{id}/join`: a seat (default: the first free) and a colour (default: the
/// first free).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinLobby {
    #[serde(default)]
    pub seat: Option<u8>,
    #[serde(default)]
    pub colour: Option<Colour>,
    #[serde(default)]
    pub invite_code: Option<String>,
}

/// `POST /api/lobbies/{id}/colour`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PickColour {
    pub colour: Colour,
}

/// `POST /api/lobbies/{id}/ready`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetReady {
    pub ready: bool,
}

/// `POST /api/lobbies/{id}/kick` and `/bot` (host only): a seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SeatChoice {
    pub seat: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LobbyStatus {
    Open,
    /// The match was created (`match_id`).
    Started,
}

/// Who sits on a lobby seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Occupant {
    Player {
        account_id: Uuid,
        name: String,
    },
    /// Played by the server (`rules::bot`).
    Bot,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LobbySeat {
    pub seat: u8,
    #[serde(default)]
    pub occupant: Option<Occupant>,
    #[serde(default)]
    pub colour: Option<Colour>,
    /// Bots are always ready.
    pub ready: bool,
}

/// A lobby, whole: what `GET /api/lobbies/{id}` answers and `lobby` pushes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LobbyState {
    pub id: Uuid,
    pub name: String,
    /// The host's account (`None` only while a lobby closes).
    pub host: Option<Uuid>,
    pub public: bool,
    /// Private lobbies: the code to join and watch (shown to members only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invite_code: Option<String>,
    pub modules: LobbyModules,
    pub meeples: Option<u8>,
    pub clock: Option<ClockSettings>,
    pub seats: Vec<LobbySeat>,
    pub status: LobbyStatus,
    #[serde(default)]
    pub match_id: Option<Uuid>,
    /// Bumped on every change.
    pub version: u64,
}

/// A running match from a public lobby, to watch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WatchableMatch {
    pub match_id: Uuid,
    pub lobby_id: Uuid,
    pub name: String,
    pub modules: LobbyModules,
    /// Player names in seat order (`bot` for bots).
    pub players: Vec<String>,
}

/// `GET /api/lobbies`: open public lobbies and running public matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LobbyList {
    pub lobbies: Vec<LobbyState>,
    pub matches: Vec<WatchableMatch>,
}

/// `POST /api/lobbies/{id}/start`: the match was created; every member also gets it pushed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LobbyStarted {
    pub match_id: Uuid,
}

/// Why a text frame is not a client message: `malformed`, with the command's `id` when one can
/// be read from the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub id: Option<String>,
    pub message: String,
}

/// Reads a client message strictly, as `proto/README.md` promises: besides what the types refuse
/// (unknown `type`, missing or unknown fields), a square (`pos`) must be an object with exactly
/// `x` and `y`, never an array or an object with more fields. On failure the command's `id` is
/// recovered whenever the frame is JSON with a string `id`, even if some number in it is out of
/// range.
pub fn decode_client_message(text: &str) -> Result<ClientMessage, Malformed> {
    // The common case, a well-formed message, read straight into the types and its squares
    // checked by a second pass that allocates nothing; anything else takes the route below,
    // whose answer (and error message) is the reference. This path only ever says yes, and only
    // to what that route accepts: a `serde_json::Value` tree for every command was about a third
    // of the connection's CPU per move.
    if let Ok(msg) = serde_json::from_str::<ClientMessage>(text)
        && serde_json::from_str::<SquaresProbe>(text).is_ok()
    {
        return Ok(msg);
    }
    decode_client_message_checked(text)
}

/// [`decode_client_message`] by way of a `serde_json::Value`: the reference, with the error
/// messages clients see.
fn decode_client_message_checked(text: &str) -> Result<ClientMessage, Malformed> {
    let fail = |message: String| Malformed {
        id: recover_id(text),
        message,
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| fail(format!("not a client message: {e}")))?;
    if let Some(command) = value.get("command") {
        check_squares(command).map_err(|m| fail(format!("not a client message: {m}")))?;
    }
    serde_json::from_value(value).map_err(|e| fail(format!("not a client message: {e}")))
}

/// The `id` of a frame that is JSON, skipping the other fields without interpreting them (so that
/// `1e400` elsewhere does not hide it).
fn recover_id(text: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct IdOnly {
        #[serde(default)]
        id: Option<String>,
    }
    serde_json::from_str::<IdOnly>(text).ok().and_then(|m| m.id)
}

/// The part of a message that [`check_squares`] looks at, read without building a tree: the
/// command's `pos`, if any, must be a map of `x` and `y` only. Other fields are skipped
/// unread; the message's own types have checked them.
#[derive(Deserialize)]
struct SquaresProbe {
    #[serde(default, rename = "command")]
    _command: Option<CommandSquares>,
}

#[derive(Deserialize)]
struct CommandSquares {
    #[serde(default, rename = "pos")]
    _pos: Option<StrictSquare>,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum SquareKey {
    X,
    Y,
}

/// A `pos` that is a JSON object whose keys are `x` and `y` only (a derived struct would also
/// take an array, or skip other keys).
struct StrictSquare;

impl<'de> Deserialize<'de> for StrictSquare {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = StrictSquare;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object with x and y")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                // A key other than `x` or `y` fails to read as a `SquareKey`.
                while map.next_key::<SquareKey>()?.is_some() {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                Ok(StrictSquare)
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// Every `pos` in a command is `{"x": …, "y": …}` and nothing else. (`rules::Pos` alone would
/// read `[x, y]` and ignore other fields.)
fn check_squares(command: &serde_json::Value) -> Result<(), String> {
    let Some(pos) = command.get("pos") else {
        return Ok(());
    };
    match pos.as_object() {
        Some(o) if o.keys().all(|k| k == "x" || k == "y") => Ok(()),
        Some(o) => {
            let extra: Vec<&str> = o
                .keys()
                .map(String::as_str)
                .filter(|k| *k != "x" && *k != "y")
                .collect();
            Err(format!("unknown field in pos: {}", extra.join(", ")))
        }
        None => Err("pos is an object {\"x\": …, \"y\": …}".into()),
    }
}

/// A square in a client message has `x` and `y` and nothing else, as
/// [`decode_client_message`] enforces (`rules::Pos` itself does not refuse other fields).
fn strict_squares(mut schema: schemars::Schema) -> schemars::Schema {
    if let Some(pos) = schema
        .as_object_mut()
        .and_then(|o| o.get_mut("$defs"))
        .and_then(|d| d.get_mut("Pos"))
        .and_then(|p| p.as_object_mut())
    {
        pos.insert("additionalProperties".into(), false.into());
    }
    schema
}

/// The JSON Schemas checked into `proto/`, one per top-level type, as (file name, schema).
/// `cargo run -p protocol --bin gen-schemas` writes them; a test fails when they drift.
pub fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        (
            "client-message.schema.json",
            strict_squares(schemars::schema_for!(ClientMessage)),
        ),
        (
            "server-message.schema.json",
            schemars::schema_for!(ServerMessage),
        ),
        (
            "create-match.schema.json",
            schemars::schema_for!(CreateMatch),
        ),
        (
            "match-created.schema.json",
            schemars::schema_for!(MatchCreated),
        ),
        (
            "admin-match-list.schema.json",
            schemars::schema_for!(admin::AdminMatchList),
        ),
        (
            "admin-match-summary.schema.json",
            schemars::schema_for!(admin::AdminMatchSummary),
        ),
        (
            "admin-match-log.schema.json",
            schemars::schema_for!(admin::AdminMatchLog),
        ),
        (
            "admin-match-chat.schema.json",
            schemars::schema_for!(admin::AdminMatchChat),
        ),
        (
            "admin-match-state.schema.json",
            schemars::schema_for!(admin::AdminMatchState),
        ),
        (
            "admin-match-secrets.schema.json",
            schemars::schema_for!(admin::AdminMatchSecrets),
        ),
        (
            "admin-away-request.schema.json",
            schemars::schema_for!(admin::AwayRequest),
        ),
        (
            "admin-role-request.schema.json",
            schemars::schema_for!(admin::AdminRoleRequest),
        ),
        (
            "admin-action-list.schema.json",
            schemars::schema_for!(admin::AdminActionList),
        ),
        (
            "scenario.schema.json",
            schemars::schema_for!(rules::scenario::Scenario),
        ),
        ("accounts.schema.json", schemars::schema_for!(AccountsApi)),
        ("lobbies.schema.json", schemars::schema_for!(LobbiesApi)),
    ]
}

/// The REST bodies of the accounts API, gathered in one schema file (`proto/accounts.schema.json`).
#[derive(JsonSchema)]
#[allow(dead_code)]
enum AccountsApi {
    NewGuest(NewGuest),
    Credentials(Credentials),
    SessionCreated(SessionCreated),
    SessionInfo(Vec<SessionInfo>),
    Account(Account),
}

/// The REST bodies of the lobby API, gathered in one schema file (`proto/lobbies.schema.json`).
#[derive(JsonSchema)]
#[allow(dead_code)]
enum LobbiesApi {
    CreateLobby(CreateLobby),
    JoinLobby(JoinLobby),
    PickColour(PickColour),
    SetReady(SetReady),
    SeatChoice(SeatChoice),
    LobbyState(LobbyState),
    LobbyList(LobbyList),
    LobbyStarted(LobbyStarted),
}

/// The text of a schema file as checked in: pretty JSON with a final newline, so that diffs of
/// `proto/` stay readable.
pub fn schema_file_text(schema: &schemars::Schema) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(schema)?;
    text.push('\n');
    Ok(text)
}

/// WebSocket close codes the server uses besides the standard ones (1000 normal, 1001 going away
/// on shutdown, 1009 message too big).
pub mod close {
    /// No pong within the heartbeat timeout.
    pub const HEARTBEAT_TIMEOUT: u16 = 4000;
    /// The client did not read its messages fast enough; reconnect and subscribe with `since`.
    pub const TOO_SLOW: u16 = 4001;
    /// The account session the connection was opened with was revoked (log out, "log out
    /// everywhere", or revoked from another device): log in again and reconnect.
    pub const SESSION_REVOKED: u16 = 4002;
}

#[cfg(test)]
mod tests {

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

    use super::*;

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

    /// The view clients get is the rules' view with `deadlines` beside its keys (absent when
    /// none is pending), and reads back the same.
    #[test]
    fn a_match_view_is_the_rules_view_plus_deadlines() {
        let setup = rules::Setup::new(vec![Colour::Red, Colour::Blue], 7);
        let (game, _) = rules::Game::start(setup).expect("valid setup");
        let plain = MatchView::from(game.view());
        let json = serde_json::to_value(&plain).expect("json");
        assert_eq!(json, serde_json::to_value(game.view()).expect("json"));
        let with = MatchView {
            deadlines: vec![Deadline {
                player: 1,
                at: 1_764_527_400_123,
            }],
            ..plain
        };
        let json = serde_json::to_value(&with).expect("json");
        assert_eq!(
            json["deadlines"],
            serde_json::json!([{"player": 1, "at": 1_764_527_400_123_u64}])
        );
        assert_eq!(
            json["turn"],
            serde_json::to_value(game.view().turn).expect("json")
        );
        let back: MatchView = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, with);
    }

    /// The bounds: a bank of 10 s to 30 days, an increment of 0 to 7 days; the error names
    /// the field.
    #[test]
    fn clock_settings_bounds() {
        let day = 86_400_000;
        let c = |bank_ms, increment_ms| ClockSettings {
            bank_ms,
            increment_ms,
        };
        for ok in [c(10_000, 0), c(30 * day, 7 * day), c(3 * day, day)] {
            assert_eq!(ok.validate(), Ok(()), "{ok:?}");
        }
        for (bad, field) in [
            (c(9_999, 0), "clock.bank_ms"),
            (c(0, 0), "clock.bank_ms"),
            (c(30 * day + 1, 0), "clock.bank_ms"),
            (c(10_000, 7 * day + 1), "clock.increment_ms"),
        ] {
            let e = bad.validate().expect_err("out of bounds");
            assert!(e.contains(field), "{e}");
        }
    }

    fn malformed(text: &str) -> Malformed {
        match decode_client_message(text) {
            Err(m) => m,
            Ok(msg) => panic!("{text} was read as {msg:?}"),
        }
    }

    #[test]
    fn squares_are_objects_with_x_and_y_only() {
        let ok = r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":{"x":1,"y":0},"rotation":90}}"#;
        assert!(decode_client_message(ok).is_ok());
        for bad in [
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":{"x":1,"y":0,"z":1},"rotation":90}}"#,
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":[1,0],"rotation":90}}"#,
            r#"{"type":"command","id":"a","command":{"type":"place_tollhouse","pos":{"x":1,"y":0,"q":0}}}"#,
        ] {
            assert_eq!(malformed(bad).id.as_deref(), Some("a"), "{bad}");
        }
    }

    /// The fast path of `decode_client_message` answers exactly as the checked route does: on
    /// every command of random games (every module) and on variants of them that the route
    /// refuses or reads differently.
    #[test]
    fn the_fast_decode_answers_as_the_checked_route() {
        use rules::{Game, Setup, bot};
        let mut texts: Vec<String> = vec![
            r#"{"type":"auth","token":"t"}"#.into(),
            r#"{"type":"auth","token":"t","token":"u"}"#.into(),
            r#"{"type":"auth","token":"t","extra":1}"#.into(),
            r#"{"type":"subscribe","match_id":"00000000-0000-0000-0000-000000000001","since":3}"#.into(),
            r#"{"type":"subscribe","match_id":"nope"}"#.into(),
            r#"{"type":"nope"}"#.into(),
            r#"{"id":"a","type":"command","command":{"type":"place_tile","pos":{"\u0078":1,"y":0},"rotation":90}}"#.into(),
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":{"x":1,"x":2,"y":0},"rotation":90}}"#.into(),
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":{"x":1,"y":0},"rotation":90},"command":{}}"#.into(),
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":{"y":0},"rotation":90}}"#.into(),
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":null,"rotation":90}}"#.into(),
            "{not json".into(),
            "[]".into(),
        ];
        for (seed, modules) in [
            (1, Modules::default()),
            (2, Modules::all()),
            (3, Modules::all()),
        ] {
            let setup = Setup::new(Colour::ALL[..3].to_vec(), seed).modules(modules);
            let (mut game, _) = Game::start(setup).expect("a game");
            let mut rng = seed;
            while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
                let msg = ClientMessage::Command {
                    id: format!("c{}", texts.len()),
                    command: cmd.clone(),
                };
                let text = serde_json::to_string(&msg).expect("json");
                texts.push(text.replace(r#""y":"#, r#""z":0,"y":"#));
                texts.push(text.replace(r#""pos":{"x":"#, r#""pos":{"y":0,"x":"#));
                texts.push(text.replacen('{', r#"{"extra":true,"#, 1));
                texts.push(text.replace(r#"}}"#, r#"},"command":null}"#));
                texts.push(text);
                game.apply(player, cmd).expect("a legal move");
            }
        }
        let mut accepted = 0;
        for text in &texts {
            let fast = decode_client_message(text);
            assert_eq!(fast, decode_client_message_checked(text), "{text}");
            accepted += usize::from(fast.is_ok());
        }
        // Both answers occur: the comparison covers the fast path's yes and its fall-back.
        assert!(
            accepted > 100 && accepted < texts.len() - 100,
            "{accepted} of {}",
            texts.len()
        );
    }

    #[test]
    fn the_id_survives_a_number_out_of_range() {
        let text = r#"{"type":"command","id":"big","command":{"type":"place_tile","pos":{"x":1e400,"y":0},"rotation":90}}"#;
        assert_eq!(malformed(text).id.as_deref(), Some("big"));
        assert_eq!(malformed("{not json").id, None);
        assert_eq!(
            malformed(r#"{"type":"nope","id":"n"}"#).id.as_deref(),
            Some("n")
        );
    }
}
