//! An account's webhook for your-turn notices (`PUT /api/me/webhook`, `GET`, `DELETE`) and the
//! payload the server posts to it ([`TurnNotice`]).
//!
//! Each post carries `X-Carcassonne-Signature: sha256=<hex>`, the HMAC-SHA256 of the exact body
//! under the webhook's secret (shown once, when the webhook is set), and
//! `X-Carcassonne-Delivery: <uuid>`, the same across the retries of one notice.

use crate::Seq;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// `PUT /api/me/webhook`: where to post the notices (`https://`; `http://` only on a server
/// started with `--webhook-allow-http`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetWebhook {
    pub url: String,
}

/// The answer to `PUT /api/me/webhook`: the secret that signs every payload, shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WebhookCreated {
    pub url: String,
    /// 64 hex digits: the HMAC-SHA256 key of `X-Carcassonne-Signature`.
    pub secret: String,
}

/// `GET /api/me/webhook`: the account's webhook, without its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WebhookInfo {
    pub url: String,
    /// When it was set (RFC 3339).
    pub created_at: String,
}

/// Why a notice was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// A decision came to wait for the player.
    YourTurn,
    /// The decision still waits and its deadline or clock runs out soon.
    Reminder,
}

/// What the server posts to a webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TurnNotice {
    pub kind: NoticeKind,
    pub match_id: Uuid,
    /// The player's seat.
    pub seat: u8,
    /// The match's seq when the decision came to wait.
    pub seq: Seq,
    /// When the server answers for the player (a deadline, or the game clock running out), in
    /// Unix milliseconds; absent when nothing runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_at: Option<u64>,
    /// When this notice was made (Unix milliseconds): a receiver may refuse old ones.
    pub sent_at: u64,
}
