//! The wire protocol: every message between a client and the server, as tagged JSON
//! (`{"type": "...", ...}`), one message per WebSocket text frame. `proto/` holds the JSON Schemas
//! generated from these types and `proto/README.md` describes the conversation.

use rules::{Colour, Command, Event, Modules, View};
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
    /// The whole public view at `seq`.
    Snapshot {
        match_id: Uuid,
        seq: Seq,
        view: View,
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

/// The JSON Schemas checked into `proto/`, one per top-level type, as (file name, schema).
/// `cargo run -p protocol --bin gen-schemas` writes them; a test fails when they drift.
pub fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        (
            "client-message.schema.json",
            schemars::schema_for!(ClientMessage),
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
    ]
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
}
