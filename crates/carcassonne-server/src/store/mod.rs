//! The durable store: one interface over two databases. SQLite (a file under the data directory)
//! is the default so that the server runs with no set-up; Postgres is used when a URL names one.
//!
//! An enum rather than a trait object: two known back ends, no `async_trait` boxing on the hot
//! path. This file holds the row types and the [`Store`] methods, each dispatching to the
//! dialect. The SQL is split by domain, each file with both dialects side by side and one
//! row-mapping function per row type and dialect: [`matches`], [`accounts`], [`lobbies`],
//! [`chat`], [`admin`], [`lifecycle`] (an account's life: password, reset links, deletion,
//! suspension), [`moderation`] (reports, a chat line removed), [`ratings`], [`webhooks`]. The infrastructure has its own files: connections and migrations
//! ([`sqlite`], [`postgres`]), the group writers ([`sqlite_writer`], [`pg_writer`]), the
//! SQLite writer's durability ([`sqlite_sync`]) and cluster mode's ownership leases, Postgres
//! only ([`leases`]).
//!
//! JSON columns are passed as strings: the actor serializes each record once, and the store never
//! needs to know the rules' types.

mod accounts;
pub mod admin;
pub mod backup;
pub mod chat;
mod gather;
pub mod leases;
pub mod lifecycle;
mod lobbies;
mod matches;
pub mod moderation;
mod pg_writer;
pub mod postgres;
pub mod ratings;
mod retention;
pub mod sqlite;
pub mod sqlite_sync;
mod sqlite_writer;
pub mod webhooks;

pub use accounts::NewSession;
pub use leases::{Fence, LeaseError, LeaseKey, LeaseKind, Leases};
pub use postgres::PgStore;
pub use retention::{Cutoffs, Deleted};
pub use sqlite::SqliteStore;

use chrono::{DateTime, Utc};
use std::path::Path;
use std::time::Duration;
use uuid::Uuid;

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("cannot create the data directory {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
    #[error("corrupt row: {0}")]
    Corrupt(String),
    #[error("the commit failed: {0}")]
    Commit(String),
    #[error("the store is closed")]
    Closed,
    /// The WAL sync after a commit failed: the write may not be on disk, so it is not
    /// acknowledged.
    #[error("the sync to disk failed: {0}")]
    Sync(String),
    /// A fenced write (a match's append, a lobby's change) whose lease is no longer held by its
    /// node under its epoch (taken over, expired or released): nothing of it was written.
    #[error("{id}: the lease is no longer held by node {node} under epoch {epoch}")]
    Fenced { id: Uuid, node: String, epoch: i64 },
    /// A feature of cluster mode asked of a SQLite store.
    #[error("{0} needs Postgres")]
    PostgresOnly(&'static str),
    /// A lobby changed in the store since this node read it (another node of a cluster wrote
    /// it): nothing was written.
    #[error("lobby {0} changed since it was read")]
    StaleLobby(Uuid),
}

impl StoreError {
    /// Whether the database could not be reached (down, restarting, the pool out of
    /// connections): a passing outage, not a refused write.
    pub fn is_outage(&self) -> bool {
        matches!(
            self,
            StoreError::Db(
                sqlx::Error::Io(_)
                    | sqlx::Error::PoolTimedOut
                    | sqlx::Error::PoolClosed
                    | sqlx::Error::Tls(_)
                    | sqlx::Error::WorkerCrashed
            )
        ) || matches!(self, StoreError::Db(sqlx::Error::Database(e)) if e.code().is_some_and(|c| c.starts_with("57P") || c.starts_with("08")))
    }
}

/// Where a match stands. `Broken` marks a match whose replay did not reproduce its stored events:
/// it is never resumed automatically. `Aborted`: an admin ended it; final, never resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchStatus {
    Active,
    Finished,
    Broken,
    Aborted,
}

impl MatchStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchStatus::Active => "active",
            MatchStatus::Finished => "finished",
            MatchStatus::Broken => "broken",
            MatchStatus::Aborted => "aborted",
        }
    }

    pub(crate) fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "active" => Ok(MatchStatus::Active),
            "finished" => Ok(MatchStatus::Finished),
            "broken" => Ok(MatchStatus::Broken),
            "aborted" => Ok(MatchStatus::Aborted),
            other => Err(StoreError::Corrupt(format!(
                "unknown match status `{other}`"
            ))),
        }
    }
}

/// A match as stored. `setup` holds the secret seed.
#[derive(Debug, Clone)]
pub struct MatchRow {
    pub id: Uuid,
    pub setup: String,
    pub status: MatchStatus,
    pub rules_version: String,
    pub created_at: DateTime<Utc>,
    /// Milliseconds a non-active player has to answer a decision; `None` for matches stored
    /// before the setting existed (they take the server's).
    pub decision_timeout_ms: Option<u64>,
    /// The match's game clock; `None`: no clock.
    pub clock: Option<protocol::ClockSettings>,
    /// When the match next needs the server (a deadline), in milliseconds since the Unix epoch;
    /// `None`: nothing pending. A restart loads these matches at once, the others on first touch.
    pub wake_at: Option<i64>,
}

/// One seat of a new match: only the token's hash is stored.
#[derive(Debug, Clone)]
pub struct SeatRow {
    pub seat: u8,
    pub colour: String,
    pub token_hash: String,
}

/// One accepted command with the events it caused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRow {
    pub seq: u64,
    pub seat: u8,
    pub command_id: String,
    pub command: String,
    pub events: String,
    /// The RFC 6902 patch of the public view (JSON), when stored.
    pub patch: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// The seqs `after < seq <= upto`.
#[derive(Debug, Clone, Copy)]
pub struct Seqs {
    pub after: u64,
    pub upto: u64,
}

/// What one append writes: the records, the match's new status if it changed, and its new wake
/// time if it changed (`Some(None)`: nothing pending any more). It owns the records: they move
/// from the actor's batch into the writer's request without a copy. With a `fence` (cluster
/// mode, Postgres only) it commits only while the match's lease is held under that fence.
#[derive(Debug, Clone, Default)]
pub struct Append {
    pub records: Vec<CommandRow>,
    pub status: Option<MatchStatus>,
    pub wake: Option<Option<i64>>,
    /// Cluster mode: the lease it is written under. Shared, so that the request stays small in
    /// the futures of idle match tasks.
    pub fence: Option<std::sync::Arc<Fence>>,
}

/// One match's append as a store's writer receives it, waiting for the group it is committed
/// with.
#[derive(Debug)]
pub(crate) struct WriteReq {
    pub id: Uuid,
    pub records: Vec<CommandRow>,
    pub status: Option<MatchStatus>,
    pub wake: Option<Option<i64>>,
    pub fence: Option<std::sync::Arc<Fence>>,
    pub reply: tokio::sync::oneshot::Sender<Result<(), StoreError>>,
}

/// Queues an append for a store's writer and waits for its answer (committed, and on SQLite
/// synced). A place in the queue first, then the request: the request is not held twice across
/// the wait (in this future and in `send`'s), which keeps the actor's per-batch future small
/// enough for the allocator's thread cache.
async fn queue_append(
    writer: &tokio::sync::mpsc::Sender<WriteReq>,
    id: Uuid,
    append: Append,
) -> Result<(), StoreError> {
    let Append {
        records,
        status,
        wake,
        fence,
    } = append;
    let permit = writer.reserve().await.map_err(|_| StoreError::Closed)?;
    let (reply, answer) = tokio::sync::oneshot::channel();
    permit.send(WriteReq {
        id,
        records,
        status,
        wake,
        fence,
        reply,
    });
    answer.await.map_err(|_| StoreError::Closed)?
}

/// The connection pools' settings. `None` in `size` and `acquire_timeout` keeps the store's
/// own default: on Postgres 16 connections and 10 s, on SQLite 4 readers and 30 s (SQLite's
/// one writing connection is not configurable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    /// Most connections of the pool (Postgres) or of the reading pool (SQLite).
    pub size: Option<u32>,
    /// How long a query waits for a connection, opening one included, before it fails.
    pub acquire_timeout: Option<Duration>,
    /// A connection idle this long is closed (`None`: kept).
    pub idle_timeout: Option<Duration>,
    /// A connection this old is closed when it is next returned (`None`: kept).
    pub max_lifetime: Option<Duration>,
}

impl Default for PoolSettings {
    /// Each store's own size and acquire timeout, sqlx's idle timeout and lifetime.
    fn default() -> Self {
        PoolSettings {
            size: None,
            acquire_timeout: None,
            idle_timeout: Some(Duration::from_secs(600)),
            max_lifetime: Some(Duration::from_secs(1800)),
        }
    }
}

/// Why the store is not ready to serve (`GET /readyz`).
#[derive(Debug, thiserror::Error)]
pub enum NotReady {
    #[error("the store does not answer: {0}")]
    Unreachable(#[from] StoreError),
    #[error("the store misses {0} migration(s) of this build")]
    Migrations(usize),
}

#[derive(Debug, Clone)]
pub enum Store {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

pub(crate) fn seq_to_db(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

pub(crate) fn seq_from_db(seq: i64) -> Result<u64, StoreError> {
    u64::try_from(seq).map_err(|_| StoreError::Corrupt(format!("negative seq {seq}")))
}

fn timeout_to_db(ms: Option<u64>) -> Option<i64> {
    ms.map(|ms| i64::try_from(ms).unwrap_or(i64::MAX))
}

fn timeout_from_db(ms: Option<i64>) -> Result<Option<u64>, StoreError> {
    ms.map(|ms| {
        u64::try_from(ms).map_err(|_| StoreError::Corrupt(format!("negative timeout {ms}")))
    })
    .transpose()
}

/// The clock columns of a match: (bank, increment), both NULL without a clock.
fn clock_to_db(clock: Option<protocol::ClockSettings>) -> (Option<i64>, Option<i64>) {
    let ms = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    match clock {
        Some(c) => (Some(ms(c.bank_ms)), Some(ms(c.increment_ms))),
        None => (None, None),
    }
}

fn clock_from_db(
    bank: Option<i64>,
    increment: Option<i64>,
) -> Result<Option<protocol::ClockSettings>, StoreError> {
    let ms = |v: i64| {
        u64::try_from(v).map_err(|_| StoreError::Corrupt(format!("negative clock value {v}")))
    };
    match (bank, increment) {
        (None, None) => Ok(None),
        (Some(b), Some(i)) => Ok(Some(protocol::ClockSettings {
            bank_ms: ms(b)?,
            increment_ms: ms(i)?,
        })),
        _ => Err(StoreError::Corrupt("half a clock setting".into())),
    }
}

/// How many of `migrator`'s migrations the database has not applied.
async fn missing_migrations<C: sqlx::migrate::Migrate>(
    conn: &mut C,
    migrator: &sqlx::migrate::Migrator,
) -> Result<usize, StoreError> {
    let applied: std::collections::HashSet<i64> = conn
        .list_applied_migrations()
        .await?
        .into_iter()
        .map(|m| m.version)
        .collect();
    Ok(migrator
        .iter()
        .filter(|m| !m.migration_type.is_down_migration() && !applied.contains(&m.version))
        .count())
}

pub(crate) fn seat_from_db(seat: i64) -> Result<u8, StoreError> {
    u8::try_from(seat).map_err(|_| StoreError::Corrupt(format!("seat {seat} out of range")))
}

macro_rules! dispatch {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match $self {
            Store::Sqlite(s) => s.$method($($arg),*).await,
            Store::Postgres(p) => p.$method($($arg),*).await,
        }
    };
}

impl Store {
    /// Opens Postgres when `database_url` is given, else the SQLite file `server.db` in
    /// `data_dir` (created on first run), and applies the migrations.
    pub async fn open(database_url: Option<&str>, data_dir: &Path) -> Result<Store, StoreError> {
        Store::open_with(database_url, data_dir, &PoolSettings::default()).await
    }

    /// [`Store::open`] with these pool settings.
    pub async fn open_with(
        database_url: Option<&str>,
        data_dir: &Path,
        pool: &PoolSettings,
    ) -> Result<Store, StoreError> {
        let store = match database_url {
            Some(url) if !url.trim().is_empty() => Store::Postgres(PgStore::open(url, pool).await?),
            _ => Store::Sqlite(SqliteStore::open_pooled(&data_dir.join("server.db"), pool).await?),
        };
        store.migrate().await?;
        Ok(store)
    }

    pub async fn open_sqlite(path: &Path) -> Result<Store, StoreError> {
        Ok(Store::Sqlite(SqliteStore::open(path).await?))
    }

    pub async fn open_postgres(url: &str) -> Result<Store, StoreError> {
        Ok(Store::Postgres(
            PgStore::open(url, &PoolSettings::default()).await?,
        ))
    }

    /// Ready to serve: the store answers a query and holds every migration of this build.
    pub async fn ready(&self) -> Result<(), NotReady> {
        let missing = match self {
            Store::Sqlite(s) => s.missing_migrations().await?,
            Store::Postgres(p) => p.missing_migrations().await?,
        };
        match missing {
            0 => Ok(()),
            n => Err(NotReady::Migrations(n)),
        }
    }

    /// Deletes what the retention settings let go, as of `now`: guests unused since their
    /// cutoff, chat lines and finished matches older than theirs. Each kind in its own
    /// transaction.
    pub async fn purge(&self, cutoffs: &Cutoffs) -> Result<Deleted, StoreError> {
        dispatch!(self.purge(cutoffs))
    }

    pub async fn migrate(&self) -> Result<(), StoreError> {
        match self {
            Store::Sqlite(s) => s.migrate().await,
            Store::Postgres(p) => p.migrate().await,
        }
    }

    /// Hands the SQLite syncer the histograms it records each sync in (nothing on Postgres).
    pub fn attach_sync_meters(&self, meters: sqlite_sync::SyncMeters) {
        if let Store::Sqlite(s) = self {
            // Set once, as the server starts (a second call would keep the first handles).
            let _ = s.sync_stats().meters.set(meters);
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Store::Sqlite(_) => "sqlite",
            Store::Postgres(_) => "postgres",
        }
    }

    /// Waits until every commit that returned before this call is durable. Only SQLite's reads
    /// can see a commit before that (for about one WAL sync); Postgres shows none before it is.
    pub async fn sync(&self) -> Result<(), StoreError> {
        match self {
            Store::Sqlite(s) => s.sync().await,
            Store::Postgres(_) => Ok(()),
        }
    }

    pub async fn close(&self) {
        match self {
            Store::Sqlite(s) => s.close().await,
            Store::Postgres(p) => p.close().await,
        }
    }

    /// Stores a new match and its seats in one transaction.
    pub async fn create_match(&self, m: &MatchRow, seats: &[SeatRow]) -> Result<(), StoreError> {
        match self {
            Store::Sqlite(s) => s.create_match(m, seats).await,
            Store::Postgres(p) => p.create_match(m, seats).await,
        }
    }

    /// The match and seat a token hash opens.
    pub async fn seat_for_token(&self, token_hash: &str) -> Result<Option<(Uuid, u8)>, StoreError> {
        match self {
            Store::Sqlite(s) => s.seat_for_token(token_hash).await,
            Store::Postgres(p) => p.seat_for_token(token_hash).await,
        }
    }

    pub async fn load_match(&self, id: Uuid) -> Result<Option<MatchRow>, StoreError> {
        match self {
            Store::Sqlite(s) => s.load_match(id).await,
            Store::Postgres(p) => p.load_match(id).await,
        }
    }

    /// The commands of a match after `after` (exclusive), in seq order.
    pub async fn commands(&self, id: Uuid, after: u64) -> Result<Vec<CommandRow>, StoreError> {
        self.commands_between(id, after, u64::MAX).await
    }

    /// The commands with `after < seq <= upto`, in seq order.
    pub async fn commands_between(
        &self,
        id: Uuid,
        after: u64,
        upto: u64,
    ) -> Result<Vec<CommandRow>, StoreError> {
        let seqs = Seqs { after, upto };
        match self {
            Store::Sqlite(s) => s.commands(id, seqs).await,
            Store::Postgres(p) => p.commands(id, seqs).await,
        }
    }

    /// Appends accepted commands, and the match's new status if it changed, in ONE transaction:
    /// either all of them are durable or none is. The actor passes every command it drained from
    /// its inbox since its last write, so one commit (one fsync) covers a whole batch.
    pub async fn append(
        &self,
        id: Uuid,
        records: &[CommandRow],
        status: Option<MatchStatus>,
    ) -> Result<(), StoreError> {
        self.write(
            id,
            Append {
                records: records.to_vec(),
                status,
                ..Append::default()
            },
        )
        .await
    }

    /// [`Store::append`] with the match's new wake time, in the same transaction (and the same
    /// group commit): the stored wake time never lags the log it is computed from. A fenced
    /// append ([`Append::fence`]) commits only under its lease ([`StoreError::Fenced`]
    /// otherwise); SQLite refuses it.
    pub async fn write(&self, id: Uuid, append: Append) -> Result<(), StoreError> {
        // One future whichever the store: both writers take the same requests.
        let writer = match self {
            Store::Sqlite(_) if append.fence.is_some() => {
                return Err(StoreError::PostgresOnly("a fenced append"));
            }
            Store::Sqlite(s) => &s.writer,
            Store::Postgres(p) => &p.writer,
        };
        queue_append(writer, id, append).await
    }

    /// The ownership leases of cluster mode; `None` on SQLite (one server, nothing to share).
    pub fn leases(&self) -> Option<Leases> {
        match self {
            Store::Sqlite(_) => None,
            Store::Postgres(p) => Some(p.leases()),
        }
    }

    pub async fn set_status(&self, id: Uuid, status: MatchStatus) -> Result<(), StoreError> {
        self.append(id, &[], Some(status)).await
    }

    /// Every match that is neither finished nor broken: what a restart resumes.
    pub async fn unfinished(&self) -> Result<Vec<Uuid>, StoreError> {
        match self {
            Store::Sqlite(s) => s.unfinished().await,
            Store::Postgres(p) => p.unfinished().await,
        }
    }

    /// The unfinished matches with a wake time, as (id, wake time in Unix milliseconds),
    /// soonest first (an indexed query): a restart loads those already due at once and hands
    /// the others to the registry's waker, so that their deadlines fire on time.
    pub async fn waking(&self) -> Result<Vec<(Uuid, i64)>, StoreError> {
        dispatch!(self.waking())
    }

    /// At most `limit` unfinished matches with no wake time, the most recently played first:
    /// the restart's warm-up.
    pub async fn recently_played(&self, limit: usize) -> Result<Vec<Uuid>, StoreError> {
        dispatch!(self.recently_played(i64::try_from(limit).unwrap_or(i64::MAX)))
    }
}

// Accounts, sessions and lobbies.

/// An account as stored. `password_hash` is an argon2id PHC string (registered accounts only).
#[derive(Debug, Clone)]
pub struct AccountRow {
    pub id: Uuid,
    pub name: String,
    /// The lower-cased name: registered names are unique by it.
    pub name_key: String,
    pub registered: bool,
    pub password_hash: Option<String>,
    pub admin: bool,
    pub created_at: DateTime<Utc>,
}

/// A session: only the token's hash is stored.
#[derive(Debug, Clone)]
pub struct SessionRow {
    pub id: Uuid,
    pub account_id: Uuid,
    pub token_hash: String,
    pub created_at: DateTime<Utc>,
}

/// A lobby as stored: its state as JSON (`protocol::LobbyState`) and the columns queries use.
#[derive(Debug, Clone)]
pub struct LobbyRow {
    pub id: Uuid,
    /// The state's version: a save writes only over the version before it (one less), and a
    /// lobby's first save only where none is stored; [`StoreError::StaleLobby`] otherwise.
    pub version: u64,
    pub started: bool,
    pub public: bool,
    pub invite_code: Option<String>,
    pub match_id: Option<Uuid>,
    pub state: String,
}

/// Who may watch a match from a lobby.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchAccess {
    pub public: bool,
    pub invite_code: Option<String>,
}

impl StoreError {
    /// A unique constraint refused the write (a registered name taken).
    pub fn is_unique_violation(&self) -> bool {
        match self {
            StoreError::Db(sqlx::Error::Database(e)) => e.is_unique_violation(),
            _ => false,
        }
    }
}

impl Store {
    /// A new account with its first session, in one transaction.
    pub async fn create_account(&self, a: &AccountRow, s: &SessionRow) -> Result<(), StoreError> {
        dispatch!(self.create_account(a, s))
    }

    /// The registered account with this name key.
    pub async fn registered_account(
        &self,
        name_key: &str,
    ) -> Result<Option<AccountRow>, StoreError> {
        dispatch!(self.registered_account(name_key))
    }

    /// A new session, unless the account already holds `max_sessions` live ones: the count and
    /// the insert are one transaction (on Postgres under the account row's lock), so concurrent
    /// log-ins never pass the cap.
    pub async fn create_session(
        &self,
        s: &SessionRow,
        max_sessions: usize,
    ) -> Result<NewSession, StoreError> {
        dispatch!(self.create_session(s, max_sessions))
    }

    /// The session and account a token hash opens.
    pub async fn session_account(
        &self,
        token_hash: &str,
    ) -> Result<Option<(Uuid, AccountRow)>, StoreError> {
        dispatch!(self.session_account(token_hash))
    }

    /// An account's sessions, oldest first.
    pub async fn sessions_of(&self, account_id: Uuid) -> Result<Vec<SessionRow>, StoreError> {
        dispatch!(self.sessions_of(account_id))
    }

    /// Revokes one session of an account (`Some`) or all (`None`); the number revoked.
    pub async fn revoke_sessions(
        &self,
        account_id: Uuid,
        session: Option<Uuid>,
    ) -> Result<u64, StoreError> {
        dispatch!(self.revoke_sessions(account_id, session))
    }

    /// The seat an account holds in a match.
    pub async fn seat_of_account(
        &self,
        match_id: Uuid,
        account_id: Uuid,
    ) -> Result<Option<u8>, StoreError> {
        dispatch!(self.seat_of_account(match_id, account_id))
    }

    /// Inserts or replaces a lobby (over the version before it, [`LobbyRow::version`]). With a
    /// `fence` (cluster mode, Postgres only) it commits only while the lobby's lease is held
    /// under that fence ([`StoreError::Fenced`] otherwise); SQLite refuses a fence.
    pub async fn save_lobby(&self, l: &LobbyRow, fence: Option<&Fence>) -> Result<(), StoreError> {
        match self {
            Store::Sqlite(_) if fence.is_some() => Err(StoreError::PostgresOnly("a fenced write")),
            Store::Sqlite(s) => s.save_lobby(l).await,
            Store::Postgres(p) => p.save_lobby(l, fence).await,
        }
    }

    /// Deletes a lobby at `version`; a `fence` as for [`Store::save_lobby`].
    pub async fn delete_lobby(
        &self,
        id: Uuid,
        version: u64,
        fence: Option<&Fence>,
    ) -> Result<(), StoreError> {
        match self {
            Store::Sqlite(_) if fence.is_some() => Err(StoreError::PostgresOnly("a fenced write")),
            Store::Sqlite(s) => s.delete_lobby(id, version).await,
            Store::Postgres(p) => p.delete_lobby(id, version, fence).await,
        }
    }

    /// Open lobbies, and started ones whose match is still active (what a restart keeps).
    pub async fn live_lobbies(&self) -> Result<Vec<LobbyRow>, StoreError> {
        dispatch!(self.live_lobbies())
    }

    /// One lobby's row, whatever its status.
    pub async fn lobby(&self, id: Uuid) -> Result<Option<LobbyRow>, StoreError> {
        dispatch!(self.lobby(id))
    }

    /// The names of a match's seats, in seat order, from the lobby that started it (as they
    /// were when it started); empty for a match that no lobby started.
    pub async fn match_names(&self, match_id: Uuid) -> Result<Vec<protocol::SeatName>, StoreError> {
        let Some(state) = dispatch!(self.match_lobby_state(match_id))? else {
            return Ok(Vec::new());
        };
        let lobby: protocol::LobbyState = serde_json::from_str(&state)
            .map_err(|e| StoreError::Corrupt(format!("lobby of match {match_id}: {e}")))?;
        let mut seats = lobby.seats;
        seats.sort_by_key(|s| s.seat);
        Ok(seats
            .into_iter()
            .map(|s| match s.occupant {
                Some(protocol::Occupant::Player { name, .. }) => {
                    protocol::SeatName { name, bot: false }
                }
                Some(protocol::Occupant::Bot { level }) => protocol::SeatName {
                    name: format!("Bot ({})", level.as_str()),
                    bot: true,
                },
                None => protocol::SeatName {
                    name: format!("Seat {}", s.seat + 1),
                    bot: false,
                },
            })
            .collect())
    }

    /// Who may watch a match; `None` for a match that no lobby started (public).
    pub async fn match_access(&self, match_id: Uuid) -> Result<Option<MatchAccess>, StoreError> {
        dispatch!(self.match_access(match_id))
    }

    /// Starts a lobby's match in ONE transaction: the match and its seats (as
    /// [`Store::create_match`]), the seats' accounts, and the lobby's new state; a `fence` as
    /// for [`Store::save_lobby`], checked in the same transaction.
    pub async fn start_lobby_match(
        &self,
        m: &MatchRow,
        seats: &[SeatRow],
        owners: &[(u8, Uuid)],
        lobby: &LobbyRow,
        fence: Option<&Fence>,
    ) -> Result<(), StoreError> {
        match self {
            Store::Sqlite(_) if fence.is_some() => Err(StoreError::PostgresOnly("a fenced write")),
            Store::Sqlite(s) => s.start_lobby_match(m, seats, owners, lobby).await,
            Store::Postgres(p) => p.start_lobby_match(m, seats, owners, lobby, fence).await,
        }
    }
}
