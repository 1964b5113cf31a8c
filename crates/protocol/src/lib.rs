//! The wire protocol: every message between a client and the server, as tagged JSON
//! (`{"type": "...", ...}`), one message per WebSocket text frame. `proto/` holds the JSON Schemas
//! generated from these types and `proto/README.md` describes the conversation.

pub mod admin;
pub mod diff;

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

/// Command ids that start with this are the server's own (a default applied at a deadline:
/// `server:deadline:<seq>`); a client's command id may not start with it.
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
    /// The whole public view at `seq`, with the server's deadlines.
    Snapshot {
        match_id: Uuid,
        seq: Seq,
        view: MatchView,
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

impl ErrorBody {
    /// A refusal with no command id and no rule.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorBody {
            id: None,
            code,
            rule_code: None,
            rule: None,
            message: message.into(),
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
            "admin-action-list.schema.json",
            schemars::schema_for!(admin::AdminActionList),
        ),
        (
            "scenario.schema.json",
            schemars::schema_for!(rules::scenario::Scenario),
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

#[cfg(test)]
mod tests {
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
        let plain = MatchView {
            view: game.view(),
            deadlines: Vec::new(),
        };
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
