//! Configuration, from flags and environment variables (clap). Tests build a [`Config`] directly
//! with [`Config::default`] and change the few fields they care about.

use clap::{Parser, ValueEnum};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

const DEFAULT_BIND: &str = "127.0.0.1:8080";
const DEFAULT_DATA_DIR: &str = "./data";

#[derive(Debug, Clone, Parser)]
#[command(name = "server", version, about = "Authoritative Carcassonne server")]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "BIND", default_value = DEFAULT_BIND)]
    pub bind: SocketAddr,

    /// Postgres URL; when absent the server uses a SQLite file under `--data-dir`.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<String>,

    /// Directory of the embedded SQLite store (created on first run).
    #[arg(long, env = "DATA_DIR", default_value = DEFAULT_DATA_DIR)]
    pub data_dir: PathBuf,

    #[arg(long, env = "LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Milliseconds between two pings to each client.
    #[arg(long, env = "HEARTBEAT_INTERVAL_MS", default_value_t = 15_000)]
    pub heartbeat_interval_ms: u64,

    /// Milliseconds without a pong after which a connection is closed (code 4000).
    #[arg(long, env = "HEARTBEAT_TIMEOUT_MS", default_value_t = 45_000)]
    pub heartbeat_timeout_ms: u64,

    /// Bearer token for `/api/admin/*`; the admin API is off without one.
    #[arg(long, env = "ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,

    /// Accept `draw_order` in `POST /api/matches` (tests and scenarios only: it reveals the pile).
    #[arg(long, env = "ALLOW_TEST_SETUPS")]
    pub allow_test_setups: bool,

    /// Messages queued for one client before it is dropped as too slow (code 4001).
    #[arg(long, env = "OUTGOING_QUEUE", default_value_t = 256)]
    pub outgoing_queue: usize,

    /// Messages queued for one match actor before clients get `busy`.
    #[arg(long, env = "MATCH_INBOX", default_value_t = 256)]
    pub match_inbox: usize,

    /// Recent diffs each match keeps in memory to serve resumes without a snapshot.
    #[arg(long, env = "DIFF_WINDOW", default_value_t = 64)]
    pub diff_window: usize,

    /// Resumes further back than the diff window read up to this many diffs from the store;
    /// further back still, a snapshot is sent.
    #[arg(long, env = "MAX_STORE_RESUME", default_value_t = 1024)]
    pub max_store_resume: u64,

    /// Resumes read from the store at the same time, over all matches; a resume beyond them
    /// gets a snapshot, so that a flood of subscriptions cannot tie up the store.
    #[arg(long, env = "STORE_RESUME_SLOTS", default_value_t = 8)]
    pub store_resume_slots: usize,

    /// Most commands written in one transaction.
    #[arg(long, env = "MAX_BATCH", default_value_t = 64)]
    pub max_batch: usize,

    /// Milliseconds after which a match nobody follows leaves memory (it reloads on demand).
    #[arg(long, env = "MATCH_IDLE_MS", default_value_t = 300_000)]
    pub match_idle_ms: u64,

    /// Milliseconds a write to one socket may take before the client is dropped as too slow.
    #[arg(long, env = "WRITE_TIMEOUT_MS", default_value_t = 10_000)]
    pub write_timeout_ms: u64,

    /// Milliseconds given to in-flight work and sockets on shutdown.
    #[arg(long, env = "SHUTDOWN_GRACE_MS", default_value_t = 10_000)]
    pub shutdown_grace_ms: u64,

    /// Milliseconds a player who is not the active one has to answer a decision (a pawn
    /// choice) before the server applies its default. Stored with each new match.
    #[arg(long, env = "DECISION_TIMEOUT_MS", default_value_t = 30_000)]
    pub decision_timeout_ms: u64,
}

impl Default for Config {
    /// The flag defaults, ignoring the environment (so that tests do not pick up a stray
    /// `DATABASE_URL`).
    fn default() -> Self {
        Config {
            bind: DEFAULT_BIND.parse().unwrap_or_else(|_| {
                SocketAddr::from(([127, 0, 0, 1], 8080)) // unreachable: the constant parses
            }),
            database_url: None,
            data_dir: PathBuf::from(DEFAULT_DATA_DIR),
            log_format: LogFormat::Text,
            heartbeat_interval_ms: 15_000,
            heartbeat_timeout_ms: 45_000,
            admin_token: None,
            allow_test_setups: false,
            outgoing_queue: 256,
            match_inbox: 256,
            diff_window: 64,
            max_store_resume: 1024,
            store_resume_slots: 8,
            max_batch: 64,
            match_idle_ms: 300_000,
            write_timeout_ms: 10_000,
            shutdown_grace_ms: 10_000,
            decision_timeout_ms: 30_000,
        }
    }
}

impl Config {
    pub fn heartbeat_interval(&self) -> Duration {
        Duration::from_millis(self.heartbeat_interval_ms.max(1))
    }
    pub fn heartbeat_timeout(&self) -> Duration {
        Duration::from_millis(self.heartbeat_timeout_ms.max(1))
    }
    pub fn match_idle(&self) -> Duration {
        Duration::from_millis(self.match_idle_ms.max(1))
    }
    pub fn write_timeout(&self) -> Duration {
        Duration::from_millis(self.write_timeout_ms.max(1))
    }
    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_millis(self.shutdown_grace_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_and_match_defaults() {
        let c = Config::try_parse_from(["server", "--allow-test-setups", "--log-format", "json"])
            .map_err(|e| e.to_string());
        let c = c.as_ref().map_err(String::as_str);
        assert!(matches!(c, Ok(c) if c.allow_test_setups && c.log_format == LogFormat::Json));
        let d = Config::default();
        assert_eq!(d.bind.to_string(), DEFAULT_BIND);
        assert_eq!(d.heartbeat_interval(), Duration::from_secs(15));
    }
}
