//! What a client sends over the WebSocket: [`ClientMessage`] and the id prefix reserved for the
//! server's own commands.

use crate::Seq;
use rules::Command;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

// The docs' links (the doc text is also the schemas' descriptions, so it names them bare).
#[cfg(doc)]
use crate::MAX_CHAT_CHARS;

/// Command ids that start with this are the server's own, a default it applied: at a
/// decision's deadline (`server:deadline:<seq>`), when the player's clock ran out
/// (`server:clock:<seq>`), or for a player marked away (`server:away:<seq>`). A client's
/// command id may not start with it.
pub const SERVER_COMMAND_PREFIX: &str = "server:";

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
