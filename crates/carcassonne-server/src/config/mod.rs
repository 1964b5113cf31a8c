//! Configuration, from flags, environment variables and a TOML file (`config_file`), in groups:
//! the store, connections, matches, the admin side, the cluster ([`cluster`]), webhooks ([`webhooks`]). Every value is checked when parsed (ranges,
//! durations such as `30s` or `5m`), so the parts use them as they are, with no clamping. Each
//! default is written once, in its `#[arg]` attribute: [`Config::default`] asks clap for them
//! (ignoring the environment, so that tests do not pick up a stray `DATABASE_URL`). Secrets (the
//! admin token, a database URL that may hold a password) are [`SecretString`]s: `Debug` prints
//! them redacted.
//!
//! The README's configuration table is generated from these flags: `config::tests` fails when it
//! drifts, and `UPDATE_README=1 cargo test -p carcassonne-server --lib config` rewrites it.

mod cluster;
mod webhooks;

pub use cluster::ClusterConfig;
pub use webhooks::WebhookConfig;

use crate::client_addr::ProxyRange;
use crate::origin::Origin;
use clap::builder::RangedU64ValueParser;
use clap::{Args, CommandFactory, FromArgMatches, Parser, ValueEnum};
use secrecy::{ExposeSecret, SecretString};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// Whether the session cookie carries `Secure` (sent over HTTPS only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SecureCookie {
    /// When a `--public-origin` is `https`.
    Auto,
    #[value(alias = "true")]
    On,
    #[value(alias = "false")]
    Off,
}

/// Who may read `GET /metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MetricsAccess {
    /// With the admin token (`Authorization: Bearer …`); off without one.
    Admin,
    /// Anyone who reaches the port (put the server's port where only the scraper reaches it).
    Open,
    /// Not served.
    Off,
}

#[derive(Debug, Clone, Parser)]
#[command(name = "server", version, about = "Authoritative Carcassonne server")]
pub struct Config {
    /// A TOML file of settings: keys are the flags' long names (`bind = "0.0.0.0:8080"`); a
    /// flag or its environment variable overrides the file (see `config_file`).
    #[arg(long, env = "CONFIG_FILE")]
    pub config: Option<PathBuf>,

    /// Address to listen on.
    #[arg(long, env = "BIND", default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,

    /// `text` or `json` log lines; filter with `RUST_LOG` (default `info`).
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Time given to each shutdown step: queued work, then open sockets.
    #[arg(long, env = "SHUTDOWN_GRACE", default_value = "10s", value_parser = duration)]
    pub shutdown_grace: Duration,

    #[command(flatten)]
    pub store: StoreConfig,

    #[command(flatten)]
    pub retention: RetentionConfig,

    #[command(flatten)]
    pub conn: ConnConfig,

    #[command(flatten)]
    pub matches: MatchConfig,

    #[command(flatten)]
    pub admin: AdminConfig,

    #[command(flatten)]
    pub limits: LimitsConfig,

    #[command(flatten)]
    pub cluster: ClusterConfig,

    #[command(flatten)]
    pub webhooks: WebhookConfig,

    #[command(flatten)]
    legacy: LegacyMillis,

    /// Without a command, the server runs.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// What the binary does instead of serving.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Command {
    /// Copies the SQLite store to a new file, consistent at one commit, while a server may run
    /// on it (Postgres: use pg_dump). Reads `--data-dir` / `DATA_DIR` and `DATABASE_URL`.
    Backup {
        /// The copy to write; an existing file is refused.
        #[arg(long)]
        to: PathBuf,
    },
}

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Store")]
pub struct StoreConfig {
    /// A Postgres URL; without it the SQLite file under `--data-dir` is used. TLS by its
    /// `sslmode` (`require`, `verify-full` with `sslrootcert=/path/ca.pem`).
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, value_parser = secret, global = true)]
    pub database_url: Option<SecretString>,

    /// Where the SQLite file lives (created on first run).
    #[arg(long, env = "DATA_DIR", default_value = "./data", global = true)]
    pub data_dir: PathBuf,

    /// Most connections of the Postgres pool, or SQLite's reading connections (writes always
    /// go through one); default 16 on Postgres, 4 on SQLite.
    #[arg(long, env = "DB_POOL_SIZE",
          value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub db_pool_size: Option<u32>,

    /// A query waiting this long for a connection (opening one included) fails; default 10s
    /// on Postgres, 30s on SQLite.
    #[arg(long, env = "DB_ACQUIRE_TIMEOUT", value_parser = positive_duration)]
    pub db_acquire_timeout: Option<Duration>,

    /// A pooled connection idle this long is closed.
    #[arg(long, env = "DB_IDLE_TIMEOUT", default_value = "10m", value_parser = positive_duration)]
    pub db_idle_timeout: Duration,

    /// A pooled connection this old is closed and opened again (a proxy or failover in front
    /// of Postgres sees new connections).
    #[arg(long, env = "DB_MAX_LIFETIME", default_value = "30m", value_parser = positive_duration)]
    pub db_max_lifetime: Duration,
}

/// Retention: what a background pass deletes every `--retention-interval`, each kind off
/// unless its number of days is given (docs/operations.md).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Retention")]
pub struct RetentionConfig {
    /// Delete guest accounts unused for this many days (created before, no match ended, no
    /// chat, no unfinished match, no open lobby since); their matches keep every row.
    #[arg(long, env = "RETAIN_GUESTS", value_parser = clap::value_parser!(u32).range(1..=36_500))]
    pub retain_guests: Option<u32>,

    /// Delete chat lines older than this many days.
    #[arg(long, env = "RETAIN_CHAT", value_parser = clap::value_parser!(u32).range(1..=36_500))]
    pub retain_chat: Option<u32>,

    /// Delete finished and aborted matches (with their log and chat) that ended this many days
    /// ago.
    #[arg(long, env = "RETAIN_MATCHES", value_parser = clap::value_parser!(u32).range(1..=36_500))]
    pub retain_matches: Option<u32>,

    /// Time between two retention passes (the first runs a minute after the start).
    #[arg(long, env = "RETENTION_INTERVAL", default_value = "1h", value_parser = positive_duration)]
    pub retention_interval: Duration,
}

impl RetentionConfig {
    /// The days kept per kind (guests, chat, matches); `None` keeps a kind for ever.
    pub fn days(&self) -> [Option<u32>; 3] {
        [self.retain_guests, self.retain_chat, self.retain_matches]
    }
}

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Connections")]
pub struct ConnConfig {
    /// Time between two pings to each client.
    #[arg(long, env = "HEARTBEAT_INTERVAL", default_value = "15s", value_parser = positive_duration)]
    pub heartbeat_interval: Duration,

    /// No pong for this long: the connection is closed (4000).
    #[arg(long, env = "HEARTBEAT_TIMEOUT", default_value = "45s", value_parser = positive_duration)]
    pub heartbeat_timeout: Duration,

    /// Frames queued per client before it is closed as too slow (4001); resumes stream into it
    /// as it drains and never overflow it.
    #[arg(long, env = "OUTGOING_QUEUE", default_value = "256",
          value_parser = RangedU64ValueParser::<usize>::new().range(4..=65_536))]
    pub outgoing_queue: usize,

    /// A socket write taking longer drops the client.
    #[arg(long, env = "WRITE_TIMEOUT", default_value = "10s", value_parser = positive_duration)]
    pub write_timeout: Duration,

    /// WebSocket connections held open at most; past it an upgrade gets 503 `unavailable` with
    /// `Retry-After`, and the open ones go on. Default: 50,000, or fewer when the open-files
    /// limit (`ulimit -n`) is lower, leaving room for the store's and HTTP requests' files.
    #[arg(long, env = "MAX_CONNECTIONS",
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_connections: Option<usize>,

    /// Origins (`scheme://host[:port]`) whose pages may open the WebSocket with the session
    /// cookie (`forbidden_origin` otherwise); repeat the flag or separate with commas. Without
    /// one, only the server's own pages may: the `Origin`'s host and port are the `Host`'s.
    #[arg(long, env = "PUBLIC_ORIGIN", value_delimiter = ',', value_parser = Origin::parse)]
    pub public_origin: Vec<Origin>,

    /// Reverse proxies (addresses or CIDR ranges, comma separated) whose `Forwarded` or
    /// `X-Forwarded-For` names the client: its address is then what the limits and the logs
    /// use. Without one, no forwarding header is believed.
    #[arg(long, env = "TRUSTED_PROXIES", value_delimiter = ',', value_parser = ProxyRange::parse)]
    pub trusted_proxies: Vec<ProxyRange>,

    /// The session cookie's `Secure` attribute: `on`, `off`, or `auto` (on when a
    /// `--public-origin` is `https`).
    #[arg(long, env = "SECURE_COOKIE", value_enum, default_value = "auto")]
    pub secure_cookie: SecureCookie,
}

/// `--max-connections` when the open-files limit does not lower it.
pub const DEFAULT_MAX_CONNECTIONS: usize = 50_000;

/// Files kept free of WebSocket connections under the open-files limit: the store, the runtime,
/// the listener, HTTP requests.
const FILES_KEPT: u64 = 100;

impl ConnConfig {
    /// The connection limit: `--max-connections`, or else the default within the process's
    /// open-files limit (at least 1).
    pub fn connection_limit(&self) -> usize {
        self.max_connections.unwrap_or_else(|| {
            let files = std::fs::read_to_string("/proc/self/limits")
                .ok()
                .and_then(|l| open_files(&l));
            match files {
                Some(n) => usize::try_from(n.saturating_sub(FILES_KEPT).max(1))
                    .unwrap_or(DEFAULT_MAX_CONNECTIONS)
                    .min(DEFAULT_MAX_CONNECTIONS),
                None => DEFAULT_MAX_CONNECTIONS,
            }
        })
    }

    /// Whether the session cookie is `Secure`.
    pub fn cookie_secure(&self) -> bool {
        match self.secure_cookie {
            SecureCookie::On => true,
            SecureCookie::Off => false,
            SecureCookie::Auto => self.public_origin.iter().any(Origin::is_https),
        }
    }
}

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Matches")]
pub struct MatchConfig {
    /// Messages queued per match before clients get `busy`.
    #[arg(long, env = "MATCH_INBOX", default_value = "256",
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=65_536))]
    pub match_inbox: usize,

    /// Most commands of one match written in one transaction.
    #[arg(long, env = "MAX_BATCH", default_value = "64",
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=4_096))]
    pub max_batch: usize,

    /// Recent diffs kept in memory per match for resumes.
    #[arg(long, env = "DIFF_WINDOW", default_value = "64",
          value_parser = RangedU64ValueParser::<usize>::new().range(0..=65_536))]
    pub diff_window: usize,

    /// Most bytes of diffs kept in memory per match for resumes (most of a live match's memory:
    /// a diff is ≈ 1 KB); older resumes are read from the store.
    #[arg(long, env = "DIFF_WINDOW_BYTES", default_value = "4096",
          value_parser = RangedU64ValueParser::<usize>::new().range(0..=16_777_216))]
    pub diff_window_bytes: usize,

    /// Older resumes read up to this many diffs from the store; further back, a snapshot.
    #[arg(long, env = "MAX_STORE_RESUME", default_value = "1024",
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub max_store_resume: u64,

    /// Store reads for resumes at once, over all matches; beyond them, a snapshot (a flood of
    /// subscriptions cannot tie up the store).
    #[arg(long, env = "STORE_RESUME_SLOTS", default_value = "8",
          value_parser = RangedU64ValueParser::<usize>::new().range(0..=1_024))]
    pub store_resume_slots: usize,

    /// A match nobody holds leaves memory after this (it reloads on demand).
    #[arg(long, env = "MATCH_IDLE", default_value = "5m", value_parser = positive_duration)]
    pub match_idle: Duration,

    /// Time a player who is not the active one has to answer a decision (a pawn choice) before
    /// the server applies its default; stored with each new match. More than zero, at most a
    /// week (168h), like every duration flag.
    #[arg(long, env = "DECISION_TIMEOUT", default_value = "30s", value_parser = positive_duration)]
    pub decision_timeout: Duration,

    /// Unfinished matches with nothing pending that a start replays in the background, the
    /// most recently played first; the others are replayed on first touch. A match with a
    /// deadline pending loads at its deadline (at once if due within 5 s).
    #[arg(long, env = "WARM_UP", default_value = "1000",
          value_parser = RangedU64ValueParser::<usize>::new().range(0..=10_000_000))]
    pub warm_up: usize,

    /// Matches the start's background recovery replays at once.
    #[arg(long, env = "RECOVERY_PARALLEL", default_value = "4",
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub recovery_parallel: usize,

    /// Whether `POST /api/matches` takes requests without an account session (`on`, `off`);
    /// either way it is rate-limited per address (`--match-rate-addr`).
    #[arg(long, env = "ANONYMOUS_MATCHES", default_value = "on", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub anonymous_matches: bool,

    /// Accept `draw_order` in `POST /api/matches` (tests only: it reveals the pile).
    #[arg(long, env = "ALLOW_TEST_SETUPS")]
    pub allow_test_setups: bool,
}

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Admin")]
pub struct AdminConfig {
    /// Bearer token of `/api/admin/*` (off without one).
    #[arg(long, env = "ADMIN_TOKEN", hide_env_values = true, value_parser = secret)]
    pub admin_token: Option<SecretString>,

    /// Who may read `GET /metrics`: `admin` (with the admin token or an admin account's
    /// session), `open`, or `off`.
    #[arg(long, env = "METRICS_ACCESS", value_enum, default_value = "admin")]
    pub metrics_access: MetricsAccess,
}

/// Abuse limits. A rate is `N/period` (`20/1s`, `5/10m`): a burst of N at
/// once, refilled in full over the period (one every period/N). Over a limit, the request is
/// refused with `rate_limited` and the time to wait; nothing else happens.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Limits")]
pub struct LimitsConfig {
    /// Game commands per connection.
    #[arg(long, env = "COMMAND_RATE_CONN", default_value = "20/1s", value_parser = rate)]
    pub command_rate_conn: Rate,

    /// Game commands per client address (all its connections).
    #[arg(long, env = "COMMAND_RATE_ADDR", default_value = "100/1s", value_parser = rate)]
    pub command_rate_addr: Rate,

    /// Chat messages per connection.
    #[arg(long, env = "CHAT_RATE_CONN", default_value = "5/10s", value_parser = rate)]
    pub chat_rate_conn: Rate,

    /// Chat messages per client address.
    #[arg(long, env = "CHAT_RATE_ADDR", default_value = "20/10s", value_parser = rate)]
    pub chat_rate_addr: Rate,

    /// Lobby follows (`subscribe_lobby`) per connection.
    #[arg(long, env = "LOBBY_RATE_CONN", default_value = "20/10s", value_parser = rate)]
    pub lobby_rate_conn: Rate,

    /// Lobby actions (REST: create, join, leave, colour, ready, kick, bot, start; WebSocket:
    /// `subscribe_lobby`) per client address.
    #[arg(long, env = "LOBBY_RATE_ADDR", default_value = "60/1m", value_parser = rate)]
    pub lobby_rate_addr: Rate,

    /// New accounts (guest and registered), log-ins and webhooks set per client address.
    #[arg(long, env = "ACCOUNT_RATE_ADDR", default_value = "10/10m", value_parser = rate)]
    pub account_rate_addr: Rate,

    /// New matches (`POST /api/matches`) per client address.
    #[arg(long, env = "MATCH_RATE_ADDR", default_value = "30/10m", value_parser = rate)]
    pub match_rate_addr: Rate,

    /// Reads of a match's history (`GET /api/matches/{id}/log`, `/chat`, `/replay`) per client
    /// address.
    #[arg(long, env = "HISTORY_RATE_ADDR", default_value = "240/1m", value_parser = rate)]
    pub history_rate_addr: Rate,

    /// Open lobbies one account may host at once (`too_many_lobbies`).
    #[arg(long, env = "MAX_OPEN_LOBBIES", default_value = "3",
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=1_000))]
    pub max_open_lobbies: usize,

    /// Live sessions one account may hold (`too_many_sessions` on log-in).
    #[arg(long, env = "MAX_SESSIONS", default_value = "10",
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=1_000))]
    pub max_sessions: usize,
}

impl LimitsConfig {
    /// Every limit as wide as the flags allow (tests that are not about limits: they make many
    /// accounts and commands from one address).
    pub fn relax(&mut self) {
        let wide = Rate {
            burst: 1_000_000,
            period: Duration::from_secs(1),
        };
        self.command_rate_conn = wide;
        self.command_rate_addr = wide;
        self.chat_rate_conn = wide;
        self.chat_rate_addr = wide;
        self.lobby_rate_conn = wide;
        self.lobby_rate_addr = wide;
        self.account_rate_addr = wide;
        self.match_rate_addr = wide;
        self.history_rate_addr = wide;
        self.max_open_lobbies = 1_000;
        self.max_sessions = 1_000;
    }
}

/// A rate limit: a burst of `burst`, refilled over `period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub burst: u32,
    pub period: Duration,
}

/// `N/period`: N from 1 to 1,000,000, the period a positive duration (`1s`, `10m`).
fn rate(s: &str) -> Result<Rate, String> {
    let (n, period) = s
        .split_once('/')
        .ok_or_else(|| "a rate is N/period, such as 20/1s or 5/10m".to_string())?;
    let burst: u32 = n
        .trim()
        .parse()
        .map_err(|e| format!("{e}: the count before `/`"))?;
    if !(1..=1_000_000).contains(&burst) {
        return Err("the count is from 1 to 1000000".into());
    }
    Ok(Rate {
        burst,
        period: positive_duration(period.trim())?,
    })
}

/// The flags before durations were durations: milliseconds, still read (hidden from `--help`)
/// so that existing deployments keep working. Each conflicts with its successor.
#[derive(Debug, Clone, Default, Args)]
struct LegacyMillis {
    #[arg(long, env = "HEARTBEAT_INTERVAL_MS", hide = true, value_parser = millis,
          conflicts_with = "heartbeat_interval")]
    heartbeat_interval_ms: Option<Duration>,
    #[arg(long, env = "HEARTBEAT_TIMEOUT_MS", hide = true, value_parser = millis,
          conflicts_with = "heartbeat_timeout")]
    heartbeat_timeout_ms: Option<Duration>,
    #[arg(long, env = "MATCH_IDLE_MS", hide = true, value_parser = millis,
          conflicts_with = "match_idle")]
    match_idle_ms: Option<Duration>,
    #[arg(long, env = "WRITE_TIMEOUT_MS", hide = true, value_parser = millis,
          conflicts_with = "write_timeout")]
    write_timeout_ms: Option<Duration>,
    #[arg(long, env = "SHUTDOWN_GRACE_MS", hide = true, value_parser = millis,
          conflicts_with = "shutdown_grace")]
    shutdown_grace_ms: Option<Duration>,
}

/// The longest duration any flag takes: a typo such as `5000h` is refused, not slept on.
const MAX_DURATION: Duration = Duration::from_secs(7 * 24 * 3600);

/// A duration such as `30s`, `5m`, `250ms`, `1h 30m`, up to a week.
fn duration(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s)
        .map_err(|e| format!("{e}: give a number and a unit, such as 30s, 5m or 250ms"))?;
    if d > MAX_DURATION {
        return Err("at most a week (168h)".into());
    }
    Ok(d)
}

/// A duration as [`duration`], and not zero.
fn positive_duration(s: &str) -> Result<Duration, String> {
    match duration(s)? {
        Duration::ZERO => Err("must be more than zero".into()),
        d => Ok(d),
    }
}

/// Milliseconds (the legacy `*_MS` variables), with the same bounds.
fn millis(s: &str) -> Result<Duration, String> {
    let ms: u64 = s.trim().parse().map_err(|e| format!("{e}: milliseconds"))?;
    positive_duration(&format!("{ms}ms"))
}

pub(super) fn secret(s: &str) -> Result<SecretString, std::convert::Infallible> {
    Ok(SecretString::from(s))
}

impl Default for Config {
    /// The flag defaults, ignoring the environment.
    fn default() -> Self {
        let command = Config::command().mut_args(|a| a.env(None));
        let parsed = command
            .try_get_matches_from(["server"])
            .and_then(|m| Config::from_arg_matches(&m));
        // Every flag has a default or is optional; `config::tests` checks that this parses.
        parsed.expect("the flag defaults parse")
    }
}

impl Config {
    /// Takes the legacy millisecond flags' values where they were given.
    pub(crate) fn with_legacy(mut self) -> Config {
        let l = std::mem::take(&mut self.legacy);
        let pairs = [
            (l.heartbeat_interval_ms, &mut self.conn.heartbeat_interval),
            (l.heartbeat_timeout_ms, &mut self.conn.heartbeat_timeout),
            (l.match_idle_ms, &mut self.matches.match_idle),
            (l.write_timeout_ms, &mut self.conn.write_timeout),
            (l.shutdown_grace_ms, &mut self.shutdown_grace),
        ];
        for (legacy, field) in pairs {
            if let Some(d) = legacy {
                *field = d;
            }
        }
        self
    }
}

impl StoreConfig {
    /// The database URL, exposed: only to open the store.
    pub fn url(&self) -> Option<&str> {
        self.database_url.as_ref().map(ExposeSecret::expose_secret)
    }
}

/// The shortest admin token taken: a short one can be guessed over the network.
pub const MIN_ADMIN_TOKEN: usize = 16;

/// A configuration that parses but cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "the admin token (--admin-token, ADMIN_TOKEN) is {0} characters long; give one of at \
         least {MIN_ADMIN_TOKEN} (`openssl rand -hex 32` makes one), or none to turn the admin API off"
    )]
    ShortAdminToken(usize),
    #[error(
        "--lease-renew ({renew:?}) must be less than --lease-ttl ({ttl:?}): a lease is renewed \
         before it expires"
    )]
    LeaseRenew { renew: Duration, ttl: Duration },
    #[error(
        "a cluster node (--nats-url) needs Postgres (--database-url): the nodes share their \
         matches and the ownership leases through it; the embedded SQLite store is one node's"
    )]
    ClusterNeedsPostgres,
}

impl Config {
    /// Checks what one flag's parser cannot (a parser's error would print the secret).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(n) = self.admin.token().map(|t| t.chars().count())
            && n < MIN_ADMIN_TOKEN
        {
            return Err(ConfigError::ShortAdminToken(n));
        }
        let (renew, ttl) = (self.cluster.lease_renew, self.cluster.lease_ttl);
        if renew >= ttl {
            return Err(ConfigError::LeaseRenew { renew, ttl });
        }
        if self.cluster.nats_url().is_some() && self.store.url().is_none() {
            return Err(ConfigError::ClusterNeedsPostgres);
        }
        Ok(())
    }
}

impl AdminConfig {
    /// The admin token, exposed: only to compare its hash. `None` when absent or empty.
    pub fn token(&self) -> Option<&str> {
        self.admin_token
            .as_ref()
            .map(ExposeSecret::expose_secret)
            .filter(|t| !t.is_empty())
    }
}

/// The soft open-files limit from the text of `/proc/self/limits` (`None`: unlimited or not
/// found).
pub(crate) fn open_files(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.trim_start_matches("Max open files")
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The README's configuration table, rendered from the flags (visible ones, by group).
pub fn markdown_table() -> String {
    let command = Config::command();
    let mut out =
        String::from("| group | flag | env | default | what |\n| --- | --- | --- | --- | --- |\n");
    for arg in command.get_arguments() {
        if arg.is_hide_set() || arg.get_long().is_none_or(|l| l == "help" || l == "version") {
            continue;
        }
        let group = arg.get_help_heading().unwrap_or("Server").to_string();
        let flag = format!("`--{}`", arg.get_long().unwrap_or_default());
        let env = arg
            .get_env()
            .map(|e| format!("`{}`", e.to_string_lossy()))
            .unwrap_or_default();
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        let default = match (defaults.is_empty(), arg.get_action().takes_values()) {
            (false, _) => format!("`{}`", defaults.join(",")),
            (true, true) => "none".to_string(),
            (true, false) => "off".to_string(),
        };
        let help = arg
            .get_help()
            .map(|h| h.to_string().replace('\n', " "))
            .unwrap_or_default();
        out.push_str(&format!(
            "| {group} | {flag} | {env} | {default} | {help} |\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests;
