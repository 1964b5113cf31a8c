//! Chat: the channels, a message as delivered, and the check every chat text passes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

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
    /// The line's id as stored: what a report or an admin's removal names. Absent only from a
    /// line that was never stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
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
