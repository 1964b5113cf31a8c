//! The webhook flags: which URLs an account may give, when a reminder goes out, how a delivery
//! is retried.

use super::positive_duration;
use clap::Args;
use clap::builder::RangedU64ValueParser;
use std::time::Duration;

/// Your-turn notices posted to the accounts' webhooks (`PUT /api/me/webhook`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Webhooks")]
pub struct WebhookConfig {
    /// Accept `http://` webhook URLs too (a relay on the same host, tests). Without it only
    /// `https://` URLs are accepted, so a notice never crosses a network in clear text.
    #[arg(long, env = "WEBHOOK_ALLOW_HTTP", default_value_t = false)]
    pub webhook_allow_http: bool,

    /// A reminder is posted this long before a waiting decision's deadline or the player's
    /// game clock runs out.
    #[arg(long, env = "WEBHOOK_REMINDER", default_value = "15m", value_parser = positive_duration)]
    pub webhook_reminder: Duration,

    /// Tries of one notice (the first included) before it is given up.
    #[arg(long, env = "WEBHOOK_ATTEMPTS", default_value = "5",
          value_parser = RangedU64ValueParser::<u32>::new().range(1..=20))]
    pub webhook_attempts: u32,

    /// The wait before the first retry; each next one waits twice as long.
    #[arg(long, env = "WEBHOOK_RETRY", default_value = "2s", value_parser = positive_duration)]
    pub webhook_retry: Duration,

    /// How long one post may take (connect, send, the answer's status line).
    #[arg(long, env = "WEBHOOK_TIMEOUT", default_value = "10s", value_parser = positive_duration)]
    pub webhook_timeout: Duration,
}
