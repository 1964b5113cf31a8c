//! The durable store: one interface over two databases. SQLite (a file under the data directory)
//! is the default so that the server runs with no set-up; Postgres is used when a URL names one.
//!
//! An enum rather than a trait object: two known back ends, no `async_trait` boxing on the hot
//! path, and each method keeps its SQL for both dialects side by side.
//!
//! JSON columns are passed as strings: the actor serializes each record once, and the store never
//! needs to know the rules' types.

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
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
}

/// Where a match stands. `Broken` marks a match whose replay did not reproduce its stored events:
/// it is never resumed automatically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchStatus {
    Active,
    Finished,
    Broken,
}

impl MatchStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchStatus::Active => "active",
            MatchStatus::Finished => "finished",
            MatchStatus::Broken => "broken",
        }
    }

    fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "active" => Ok(MatchStatus::Active),
            "finished" => Ok(MatchStatus::Finished),
            "broken" => Ok(MatchStatus::Broken),
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

#[derive(Debug, Clone)]
pub enum Store {
    Sqlite(SqliteStore),
    Postgres(PgPool),
}

/// SQLite takes one writer at a time. Rather than let connections fight over the lock (SQLite's
/// busy handler sleeps up to 100 ms between tries), every write goes through one connection, and
/// appends go through one writer task that commits the appends of all matches queued at that
/// moment in ONE transaction: one fsync for many matches (group commit). Reads use their own
/// pool; with WAL they never wait for the writer.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    read: SqlitePool,
    write: SqlitePool,
    writer: mpsc::Sender<WriteReq>,
}

/// One match's append, waiting for the group it is committed with.
#[derive(Debug)]
struct WriteReq {
    id: Uuid,
    records: Vec<CommandRow>,
    status: Option<MatchStatus>,
    reply: oneshot::Sender<Result<(), StoreError>>,
}

/// Most appends committed in one group.
const MAX_GROUP: usize = 256;

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

fn seq_to_db(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

fn seq_from_db(seq: i64) -> Result<u64, StoreError> {
    u64::try_from(seq).map_err(|_| StoreError::Corrupt(format!("negative seq {seq}")))
}

fn seat_from_db(seat: i64) -> Result<u8, StoreError> {
    u8::try_from(seat).map_err(|_| StoreError::Corrupt(format!("seat {seat} out of range")))
}

impl Store {
    /// Opens Postgres when `database_url` is given, else the SQLite file `server.db` in
    /// `data_dir` (created on first run), and applies the migrations.
    pub async fn open(database_url: Option<&str>, data_dir: &Path) -> Result<Store, StoreError> {
        let store = match database_url {
            Some(url) if !url.trim().is_empty() => Store::open_postgres(url).await?,
            _ => Store::open_sqlite(&data_dir.join("server.db")).await?,
        };
        store.migrate().await?;
        Ok(store)
    }

    /// WAL with `synchronous=FULL`: a commit is on disk before it returns, so an acknowledged
    /// move survives a power cut, while readers never block the writer.
    pub async fn open_sqlite(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::DataDir {
                path: dir.display().to_string(),
                source,
            })?;
        }
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await?;
        let read = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await?;
        let (writer, rx) = mpsc::channel(4096);
        tokio::spawn(sqlite_writer(write.clone(), rx));
        Ok(Store::Sqlite(SqliteStore {
            read,
            write,
            writer,
        }))
    }

    pub async fn open_postgres(url: &str) -> Result<Store, StoreError> {
        let options = PgConnectOptions::from_str(url)?;
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await?;
        Ok(Store::Postgres(pool))
    }

    pub async fn migrate(&self) -> Result<(), StoreError> {
        match self {
            Store::Sqlite(s) => SQLITE_MIGRATIONS.run(&s.write).await?,
            Store::Postgres(pool) => POSTGRES_MIGRATIONS.run(pool).await?,
        }
        Ok(())
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Store::Sqlite(_) => "sqlite",
            Store::Postgres(_) => "postgres",
        }
    }

    pub async fn close(&self) {
        match self {
            Store::Sqlite(s) => {
                s.read.close().await;
                s.write.close().await;
            }
            Store::Postgres(pool) => pool.close().await,
        }
    }

    /// Stores a new match and its seats in one transaction.
    pub async fn create_match(&self, m: &MatchRow, seats: &[SeatRow]) -> Result<(), StoreError> {
        let now = m.created_at;
        match self {
            Store::Sqlite(s) => {
                let pool = &s.write;
                let mut tx = pool.begin().await?;
                sqlx::query(
                    "INSERT INTO matches (id, setup, status, rules_version, created_at, updated_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                )
                .bind(m.id.to_string())
                .bind(&m.setup)
                .bind(m.status.as_str())
                .bind(&m.rules_version)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                for s in seats {
                    sqlx::query(
                        "INSERT INTO seats (match_id, seat, colour, token_hash) VALUES (?1, ?2, ?3, ?4)",
                    )
                    .bind(m.id.to_string())
                    .bind(i64::from(s.seat))
                    .bind(&s.colour)
                    .bind(&s.token_hash)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
            }
            Store::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                sqlx::query(
                    "INSERT INTO matches (id, setup, status, rules_version, created_at, updated_at) \
                     VALUES ($1, $2::jsonb, $3, $4, $5, $5)",
                )
                .bind(m.id)
                .bind(&m.setup)
                .bind(m.status.as_str())
                .bind(&m.rules_version)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                for s in seats {
                    sqlx::query(
                        "INSERT INTO seats (match_id, seat, colour, token_hash) VALUES ($1, $2, $3, $4)",
                    )
                    .bind(m.id)
                    .bind(i16::from(s.seat))
                    .bind(&s.colour)
                    .bind(&s.token_hash)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
            }
        }
        Ok(())
    }

    /// The match and seat a token hash opens.
    pub async fn seat_for_token(&self, token_hash: &str) -> Result<Option<(Uuid, u8)>, StoreError> {
        match self {
            Store::Sqlite(s) => {
                let pool = &s.read;
                let row = sqlx::query("SELECT match_id, seat FROM seats WHERE token_hash = ?1")
                    .bind(token_hash)
                    .fetch_optional(pool)
                    .await?;
                row.map(|r| {
                    let id: String = r.try_get("match_id")?;
                    let id =
                        Uuid::parse_str(&id).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                    Ok((id, seat_from_db(r.try_get("seat")?)?))
                })
                .transpose()
            }
            Store::Postgres(pool) => {
                let row = sqlx::query("SELECT match_id, seat FROM seats WHERE token_hash = $1")
                    .bind(token_hash)
                    .fetch_optional(pool)
                    .await?;
                row.map(|r| {
                    let seat: i16 = r.try_get("seat")?;
                    Ok((r.try_get("match_id")?, seat_from_db(i64::from(seat))?))
                })
                .transpose()
            }
        }
    }

    pub async fn load_match(&self, id: Uuid) -> Result<Option<MatchRow>, StoreError> {
        match self {
            Store::Sqlite(s) => {
                let pool = &s.read;
                let row = sqlx::query(
                    "SELECT setup, status, rules_version, created_at FROM matches WHERE id = ?1",
                )
                .bind(id.to_string())
                .fetch_optional(pool)
                .await?;
                row.map(|r| {
                    Ok(MatchRow {
                        id,
                        setup: r.try_get("setup")?,
                        status: MatchStatus::parse(r.try_get("status")?)?,
                        rules_version: r.try_get("rules_version")?,
                        created_at: r.try_get("created_at")?,
                    })
                })
                .transpose()
            }
            Store::Postgres(pool) => {
                let row = sqlx::query(
                    "SELECT setup::text AS setup, status, rules_version, created_at \
                     FROM matches WHERE id = $1",
                )
                .bind(id)
                .fetch_optional(pool)
                .await?;
                row.map(|r| {
                    Ok(MatchRow {
                        id,
                        setup: r.try_get("setup")?,
                        status: MatchStatus::parse(r.try_get("status")?)?,
                        rules_version: r.try_get("rules_version")?,
                        created_at: r.try_get("created_at")?,
                    })
                })
                .transpose()
            }
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
        let rows = match self {
            Store::Sqlite(s) => {
                let pool = &s.read;
                sqlx::query(
                    "SELECT seq, seat, command_id, command, events, patch, created_at FROM commands \
                     WHERE match_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq",
                )
                .bind(id.to_string())
                .bind(seq_to_db(after))
                .bind(seq_to_db(upto))
                .fetch_all(pool)
                .await?
                .into_iter()
                .map(|r| {
                    Ok(CommandRow {
                        seq: seq_from_db(r.try_get("seq")?)?,
                        seat: seat_from_db(r.try_get("seat")?)?,
                        command_id: r.try_get("command_id")?,
                        command: r.try_get("command")?,
                        events: r.try_get("events")?,
                        patch: r.try_get("patch")?,
                        created_at: r.try_get("created_at")?,
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?
            }
            Store::Postgres(pool) => sqlx::query(
                "SELECT seq, seat, command_id, command::text AS command, events::text AS events, \
                 patch::text AS patch, created_at FROM commands \
                 WHERE match_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq",
            )
            .bind(id)
            .bind(seq_to_db(after))
            .bind(seq_to_db(upto))
            .fetch_all(pool)
            .await?
            .into_iter()
            .map(|r| {
                let seat: i16 = r.try_get("seat")?;
                Ok(CommandRow {
                    seq: seq_from_db(r.try_get("seq")?)?,
                    seat: seat_from_db(i64::from(seat))?,
                    command_id: r.try_get("command_id")?,
                    command: r.try_get("command")?,
                    events: r.try_get("events")?,
                    patch: r.try_get("patch")?,
                    created_at: r.try_get("created_at")?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?,
        };
        Ok(rows)
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
        let now = Utc::now();
        match self {
            Store::Sqlite(s) => {
                let (reply, answer) = oneshot::channel();
                let req = WriteReq {
                    id,
                    records: records.to_vec(),
                    status,
                    reply,
                };
                s.writer.send(req).await.map_err(|_| StoreError::Closed)?;
                answer.await.map_err(|_| StoreError::Closed)??;
            }
            Store::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                for r in records {
                    sqlx::query(
                        "INSERT INTO commands \
                         (match_id, seq, seat, command_id, command, events, patch, created_at) \
                         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, $8)",
                    )
                    .bind(id)
                    .bind(seq_to_db(r.seq))
                    .bind(i16::from(r.seat))
                    .bind(&r.command_id)
                    .bind(&r.command)
                    .bind(&r.events)
                    .bind(&r.patch)
                    .bind(r.created_at)
                    .execute(&mut *tx)
                    .await?;
                }
                if let Some(status) = status {
                    sqlx::query("UPDATE matches SET status = $1, updated_at = $2 WHERE id = $3")
                        .bind(status.as_str())
                        .bind(now)
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
            }
        }
        Ok(())
    }

    pub async fn set_status(&self, id: Uuid, status: MatchStatus) -> Result<(), StoreError> {
        self.append(id, &[], Some(status)).await
    }

    /// Every match that is neither finished nor broken: what a restart resumes.
    pub async fn unfinished(&self) -> Result<Vec<Uuid>, StoreError> {
        match self {
            Store::Sqlite(s) => {
                let pool = &s.read;
                sqlx::query("SELECT id FROM matches WHERE status = 'active' ORDER BY created_at")
                    .fetch_all(pool)
                    .await?
                    .into_iter()
                    .map(|r| {
                        let id: String = r.try_get("id")?;
                        Uuid::parse_str(&id).map_err(|e| StoreError::Corrupt(e.to_string()))
                    })
                    .collect()
            }
            Store::Postgres(pool) => {
                sqlx::query("SELECT id FROM matches WHERE status = 'active' ORDER BY created_at")
                    .fetch_all(pool)
                    .await?
                    .into_iter()
                    .map(|r| Ok(r.try_get("id")?))
                    .collect()
            }
        }
    }
}

/// The SQLite writer: takes every append queued now, writes each inside its own savepoint (a bad
/// one fails alone), commits them together, then answers each. Nothing is answered before the
/// commit returned, so "persist, then broadcast" holds for every match in the group.
async fn sqlite_writer(pool: SqlitePool, mut rx: mpsc::Receiver<WriteReq>) {
    while let Some(first) = rx.recv().await {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(r) => group.push(r),
                Err(_) => break,
            }
        }
        match write_group(&pool, &group).await {
            Ok(results) => {
                for (req, result) in group.into_iter().zip(results) {
                    let _ = req.reply.send(result);
                }
            }
            Err(e) => {
                let message = e.to_string();
                for req in group {
                    let _ = req.reply.send(Err(StoreError::Commit(message.clone())));
                }
            }
        }
    }
}

async fn write_group(
    pool: &SqlitePool,
    group: &[WriteReq],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    let now = Utc::now();
    let mut tx = pool.begin().await?;
    let mut results = Vec::with_capacity(group.len());
    for req in group {
        sqlx::query("SAVEPOINT append").execute(&mut *tx).await?;
        match sqlite_append(&mut tx, req, now).await {
            Ok(()) => {
                sqlx::query("RELEASE append").execute(&mut *tx).await?;
                results.push(Ok(()));
            }
            Err(e) => {
                sqlx::query("ROLLBACK TO append").execute(&mut *tx).await?;
                sqlx::query("RELEASE append").execute(&mut *tx).await?;
                results.push(Err(e));
            }
        }
    }
    tx.commit().await?;
    Ok(results)
}

async fn sqlite_append(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    req: &WriteReq,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    for r in &req.records {
        sqlx::query(
            "INSERT INTO commands \
             (match_id, seq, seat, command_id, command, events, patch, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )
        .bind(req.id.to_string())
        .bind(seq_to_db(r.seq))
        .bind(i64::from(r.seat))
        .bind(&r.command_id)
        .bind(&r.command)
        .bind(&r.events)
        .bind(&r.patch)
        .bind(r.created_at)
        .execute(&mut **tx)
        .await?;
    }
    if let Some(status) = req.status {
        sqlx::query("UPDATE matches SET status = ?1, updated_at = ?2 WHERE id = ?3")
            .bind(status.as_str())
            .bind(now)
            .bind(req.id.to_string())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
