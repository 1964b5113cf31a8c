//! The wire protocol: every message between a client and the server, as tagged JSON
//! (`{"type": "...", ...}`), one message per WebSocket text frame. `proto/` holds the JSON Schemas
//! generated from these types and `proto/README.md` describes the conversation.
//!
//! The crate's map (every type is also re-exported at the crate root, `carcassonne_protocol::X`):
//!
//! - [`client_message`]: what a client sends ([`ClientMessage`]); [`decode`]: reading one from a
//!   text frame, strictly ([`decode_client_message`], [`Malformed`]).
//! - [`server_message`]: what the server sends ([`ServerMessage`], [`PatchOp`]).
//! - [`view`]: the view a client follows ([`MatchView`], [`Deadline`]); [`clock`]: game clocks
//!   ([`ClockSettings`], [`ClockView`]).
//! - [`error`]: refusals ([`ErrorBody`]) and their stable codes ([`ErrorCode`]).
//! - [`chat`]: chat channels and lines, and the check of a chat text ([`check_chat_text`]).
//! - [`close`]: the WebSocket close codes of the server's own.
//! - REST bodies: [`create_match`] (`POST /api/matches`), [`account`] (accounts and sessions),
//!   [`lobby`] (lobbies), [`admin`] (the admin API's answers), [`history`] (a match's log and
//!   chat for its players and spectators, who made a move: [`ServerMove`]), [`me`] (a player's
//!   own matches, password, deletion, export, reports), [`moderation`] (suspensions, reset
//!   links, reports as admins see them), [`ratings`]
//!   (the leaderboard, player profiles, a finished match's replay), [`webhooks`] (an
//!   account's webhook and the your-turn notices posted to it).
//! - [`diff`]: the JSON Patch from one view to the next, over the typed view (with the private
//!   `json` writer, which writes a value's JSON without building a `serde_json::Value`).
//! - [`schema`]: the JSON Schemas in `proto/` ([`json_schemas`], [`schema_file_text`]).

pub mod account;
pub mod admin;
pub mod chat;
pub mod client_message;
pub mod clock;
pub mod close;
pub mod create_match;
pub mod decode;
pub mod diff;
pub mod error;
pub mod history;
mod json;
pub mod lobby;
pub mod me;
pub mod moderation;
pub mod ratings;
pub mod schema;
pub mod server_message;
pub mod view;
pub mod webhooks;

pub use account::{Account, AccountKind, Credentials, NewGuest, SessionCreated, SessionInfo};
pub use chat::{ChatChannel, ChatFrom, ChatLine, MAX_CHAT_CHARS, check_chat_text};
pub use client_message::{ClientMessage, MuteTarget, SERVER_COMMAND_PREFIX};
pub use clock::{ClockSettings, ClockView};
pub use create_match::{CreateMatch, MatchCreated, SeatToken};
pub use decode::{Malformed, decode_client_message};
pub use error::{ErrorBody, ErrorCode};
pub use history::{LogEntry, MatchChat, MatchLog, ServerMove, Whoami};
pub use lobby::{
    BotChoice, BotLevel, CreateLobby, JoinLobby, LobbyList, LobbyModules, LobbySeat, LobbyStarted,
    LobbyState, LobbyStatus, Occupant, PickColour, SeatChoice, SetReady, WatchableMatch,
};
pub use me::{
    AccountDeletion, AccountExport, MyMatch, MyMatchPlayer, MyMatchStatus, MyMatches, NewReport,
    PasswordChange, PasswordReset, ReportCreated,
};
pub use ratings::{
    Family, Leaderboard, LeaderboardEntry, MatchReplay, PROVISIONAL_GAMES, PlayerProfile,
    RatedSeat, RatingChange, RatingView, RecomputeReport, ReplayStep,
};
pub use schema::{json_schemas, schema_file_text};
pub use server_message::{PatchOp, ServerMessage};
pub use view::{Deadline, MatchView, SeatName};
pub use webhooks::{NoticeKind, SetWebhook, TurnNotice, WebhookCreated, WebhookInfo};

/// Bumped on any incompatible change of these types.
pub const PROTOCOL_VERSION: u32 = 1;

/// Largest text frame the server accepts, in bytes.
pub const MAX_FRAME_BYTES: usize = 64 * 1024;

/// A match's sequence number: 0 is the state after the opening (start tile, first draw); each
/// accepted command adds one.
pub type Seq = u64;
