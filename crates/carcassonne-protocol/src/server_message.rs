//! What the server sends over the WebSocket: [`ServerMessage`] and the JSON Patch operations of
//! its diffs.

use crate::{Account, ChatLine, ErrorBody, LobbyState, MatchView, Seq};
use rules::Event;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

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
        /// Present when the server made this move for a player (a default at a deadline, a
        /// clock that ran out, a player away).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by_server: Option<crate::ServerMove>,
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
    /// An admin removed the chat line `id` of a match or lobby this connection follows: a
    /// client drops it from what it shows (the history no longer has it).
    ChatRemoved {
        id: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        match_id: Option<Uuid>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lobby_id: Option<Uuid>,
    },
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
