//! The SQLite dialect: a file under the data directory, the default so that the server runs with
//! no set-up.
//!
//! SQLite takes one writer at a time. Rather than let connections fight over the lock (SQLite's
//! busy handler sleeps up to 100 ms between tries), every write goes through one connection, and
//! appends go through one writer task that commits the appends of all matches queued at that
//! moment in ONE transaction (group commit). Its `COMMIT` does not fsync: a syncer thread does,
//! after it, while the writer goes on with the next group, and only then are the appends
//! answered; checkpoints run on a connection of their own ([`super::sqlite_sync`] has the
//! durability argument). Reads use their own pool; with WAL they never wait for the writer.

use super::sqlite_sync::{
    Batch, SyncStats, Tuning, WalControl, checkpointer, finish_checkpoint, spawn_syncer,
};
use super::{
    CommandRow, MatchRow, MatchStatus, SeatRow, Seqs, StoreError, WriteReq, clock_from_db,
    clock_to_db, seat_from_db, seq_from_db, seq_to_db, timeout_from_db, timeout_to_db,
};
use chrono::{DateTime, Utc};
use sqlx::ConnectOptions as _;
use sqlx::Row;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

static MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");

/// Most appends committed in one group.
const MAX_GROUP: usize = 256;

/// Statement texts the writing connection keeps prepared (sqlx's default is 100): the group
/// commit's 48 fixed texts ([`GroupTexts`]) and the other writes' single statements.
const WRITE_STATEMENT_CACHE: usize = 64;

#[derive(Debug, Clone)]
pub struct SqliteStore {
    pub(super) read: SqlitePool,
    /// The one writing connection (`synchronous=NORMAL`): a write through it is durable only
    /// once [`SqliteStore::sync`] returned after its `COMMIT`.
    pub(super) write: SqlitePool,
    pub(super) writer: mpsc::Sender<WriteReq>,
    /// Behind one pointer: every match's actor holds a store, and its run loop's future with it.
    durability: Arc<Durability>,
}

/// The syncer's and the checkpointer's side of the store.
#[derive(Debug)]
struct Durability {
    /// The syncer's queue.
    sync: mpsc::Sender<Batch>,
    ctl: Arc<WalControl>,
    stats: Arc<SyncStats>,
    /// The checkpointer, stopped and awaited by `close`.
    checkpoints: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

// Row mapping: one function per row type.

fn match_id(r: &SqliteRow, column: &str) -> Result<Uuid, StoreError> {
    let id: String = r.try_get(column)?;
    Uuid::parse_str(&id).map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn match_row(id: Uuid, r: &SqliteRow) -> Result<MatchRow, StoreError> {
    Ok(MatchRow {
        id,
        setup: r.try_get("setup")?,
        status: MatchStatus::parse(r.try_get("status")?)?,
        rules_version: r.try_get("rules_version")?,
        created_at: r.try_get("created_at")?,
        decision_timeout_ms: timeout_from_db(r.try_get("decision_timeout_ms")?)?,
        clock: clock_from_db(
            r.try_get("clock_bank_ms")?,
            r.try_get("clock_increment_ms")?,
        )?,
        wake_at: r.try_get("wake_at")?,
    })
}

fn seat_ref(r: &SqliteRow) -> Result<(Uuid, u8), StoreError> {
    Ok((match_id(r, "match_id")?, seat_from_db(r.try_get("seat")?)?))
}

fn command_row(r: &SqliteRow) -> Result<CommandRow, StoreError> {
    Ok(CommandRow {
        seq: seq_from_db(r.try_get("seq")?)?,
        seat: seat_from_db(r.try_get("seat")?)?,
        command_id: r.try_get("command_id")?,
        command: r.try_get("command")?,
        events: r.try_get("events")?,
        patch: r.try_get("patch")?,
        created_at: r.try_get("created_at")?,
    })
}

impl SqliteStore {
    /// WAL, readers never block the writer; an acknowledged write is on disk (see
    /// [`super::sqlite_sync`]), so an acknowledged move survives a power cut.
    pub async fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_tuned(path, Tuning::default()).await
    }

    /// [`SqliteStore::open`] with other checkpoint settings (tests).
    pub async fn open_tuned(path: &Path, tuning: Tuning) -> Result<SqliteStore, StoreError> {
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
        // The writer's commits do not fsync (the syncer does, before anything is answered) and
        // run no checkpoint (the checkpointer does). Each connection the pool opens again (sqlx
        // closes idle and old ones) gets the same settings.
        let writing = options
            .clone()
            .synchronous(SqliteSynchronous::Normal)
            .pragma("wal_autocheckpoint", "0");
        // sqlx keeps each text prepared, one statement per statement of the text. The group
        // commit uses a fixed set of texts whatever the groups' sizes (`GroupTexts`, 451
        // statements at most), so the cache holds them all and the memory stays bounded.
        // No ping before a connection is handed out: it tests a network link, and a file has
        // none (each ping is a round trip to the connection's thread).
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .connect_with(
                writing
                    .clone()
                    .statement_cache_capacity(WRITE_STATEMENT_CACHE),
            )
            .await?;
        // Readers keep `FULL`: they commit nothing, and the checkpoint of the last connection to
        // close syncs either way.
        let read = SqlitePoolOptions::new()
            .max_connections(4)
            .test_before_acquire(false)
            .connect_with(options)
            .await?;
        // Its own connection, never closed by a pool: it also keeps the WAL file from being
        // deleted and created again while the store is open. `NORMAL` syncs the WAL before a
        // checkpoint and the database file after it, as `FULL` does.
        let checkpointing = writing.clone().connect().await?;
        let stats = Arc::new(SyncStats::default());
        let ctl = Arc::new(WalControl::default());
        let sync = spawn_syncer(path, stats.clone())?;
        let (nudge, nudges) = mpsc::channel(1);
        let checkpoints = tokio::spawn(checkpointer(
            checkpointing,
            nudges,
            ctl.clone(),
            stats.clone(),
            tuning,
        ));
        let (writer, rx) = mpsc::channel(4096);
        tokio::spawn(sqlite_writer(Writer {
            pool: write.clone(),
            rx,
            sync: sync.clone(),
            nudge,
            ctl: ctl.clone(),
            stats: stats.clone(),
            tuning,
        }));
        Ok(SqliteStore {
            read,
            write,
            writer,
            durability: Arc::new(Durability {
                sync,
                ctl,
                stats,
                checkpoints: std::sync::Mutex::new(Some(checkpoints)),
            }),
        })
    }

    pub async fn migrate(&self) -> Result<(), StoreError> {
        MIGRATIONS.run(&self.write).await?;
        self.sync().await
    }

    pub async fn close(&self) {
        self.read.close().await;
        self.write.close().await;
        let checkpoints = self
            .durability
            .checkpoints
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(task) = checkpoints {
            // Its connection closes when the task ends; an abort drops it mid-checkpoint, which
            // SQLite survives like any interrupted checkpoint (the WAL stays authoritative).
            task.abort();
            let _ = task.await;
        }
    }

    /// Waits until every write whose `COMMIT` returned before this call is on disk: every write
    /// through `self.write` outside the group writer calls it before answering, and a reader
    /// that must not show a commit that is not durable yet may call it after reading.
    pub async fn sync(&self) -> Result<(), StoreError> {
        self.durability.ctl.dirty.store(true, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        self.durability
            .sync
            .send(vec![(reply, Ok(()))])
            .await
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }

    /// The syncer's and checkpointer's counters.
    pub fn sync_stats(&self) -> &SyncStats {
        &self.durability.stats
    }

    pub async fn create_match(&self, m: &MatchRow, seats: &[SeatRow]) -> Result<(), StoreError> {
        let mut tx = self.write.begin().await?;
        insert_match(&mut tx, m, seats).await?;
        tx.commit().await?;
        self.sync().await
    }

    pub async fn seat_for_token(&self, token_hash: &str) -> Result<Option<(Uuid, u8)>, StoreError> {
        sqlx::query("SELECT match_id, seat FROM seats WHERE token_hash = ?1")
            .bind(token_hash)
            .fetch_optional(&self.read)
            .await?
            .map(|r| seat_ref(&r))
            .transpose()
    }

    pub async fn load_match(&self, id: Uuid) -> Result<Option<MatchRow>, StoreError> {
        sqlx::query(
            "SELECT setup, status, rules_version, created_at, decision_timeout_ms, \
             clock_bank_ms, clock_increment_ms, wake_at FROM matches WHERE id = ?1",
        )
        .bind(id.to_string())
        .fetch_optional(&self.read)
        .await?
        .map(|r| match_row(id, &r))
        .transpose()
    }

    pub async fn commands(&self, id: Uuid, seqs: Seqs) -> Result<Vec<CommandRow>, StoreError> {
        sqlx::query(
            "SELECT seq, seat, command_id, command, events, patch, created_at FROM commands \
             WHERE match_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq",
        )
        .bind(id.to_string())
        .bind(seq_to_db(seqs.after))
        .bind(seq_to_db(seqs.upto))
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(command_row)
        .collect()
    }

    /// Queues the append for the writer task and waits until its group is committed and synced
    /// (the server goes through [`super::Store::write`]).
    #[cfg(test)]
    pub async fn append(&self, id: Uuid, append: super::Append) -> Result<(), StoreError> {
        super::queue_append(&self.writer, id, append).await
    }

    pub async fn unfinished(&self) -> Result<Vec<Uuid>, StoreError> {
        sqlx::query("SELECT id FROM matches WHERE status = 'active' ORDER BY created_at")
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(|r| match_id(r, "id"))
            .collect()
    }

    /// Row by row rather than `fetch_all`: only the pairs are held, not every row at once
    /// (a restart with very many unfinished matches).
    pub async fn waking(&self) -> Result<Vec<(Uuid, i64)>, StoreError> {
        use futures_util::TryStreamExt;
        let mut rows = sqlx::query(
            "SELECT id, wake_at FROM matches WHERE status = 'active' AND wake_at IS NOT NULL \
             ORDER BY wake_at",
        )
        .fetch(&self.read);
        let mut waking = Vec::new();
        while let Some(r) = rows.try_next().await? {
            waking.push((match_id(&r, "id")?, r.try_get("wake_at")?));
        }
        Ok(waking)
    }

    pub async fn recently_played(&self, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        sqlx::query(
            "SELECT m.id AS id FROM matches m WHERE m.status = 'active' AND m.wake_at IS NULL \
             ORDER BY COALESCE((SELECT c.created_at FROM commands c WHERE c.match_id = m.id \
                                ORDER BY c.seq DESC LIMIT 1), m.created_at) DESC \
             LIMIT ?1",
        )
        .bind(limit)
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(|r| match_id(r, "id"))
        .collect()
    }
}

/// What the writer task holds.
#[derive(Debug)]
struct Writer {
    pool: SqlitePool,
    rx: mpsc::Receiver<WriteReq>,
    sync: mpsc::Sender<Batch>,
    /// Wakes the checkpointer (capacity 1: a nudge pending is enough).
    nudge: mpsc::Sender<()>,
    ctl: Arc<WalControl>,
    stats: Arc<SyncStats>,
    tuning: Tuning,
}

/// The SQLite writer: takes every append queued now, writes each inside its own savepoint (a bad
/// one fails alone), commits them together, then hands the answers to the syncer and goes on
/// with the next group. Nothing is answered before the commit returned and the WAL was synced
/// after it, so "persist, then broadcast" holds for every match in the group.
async fn sqlite_writer(w: Writer) {
    let Writer {
        pool,
        mut rx,
        sync,
        nudge,
        ctl,
        stats,
        tuning,
    } = w;
    let mut rows_since_nudge = 0u64;
    while let Some(first) = rx.recv().await {
        let mut conn = match pool.acquire().await {
            Ok(conn) => conn,
            Err(e) => {
                let _ = first.reply.send(Err(e.into()));
                continue;
            }
        };
        stats.writer_acquires.fetch_add(1, Ordering::Relaxed);
        // The connection stays with the writer while appends keep coming (within `linger` of
        // each other), up to `hold`: giving it back costs a round trip to its thread (sqlx pings
        // a connection on release); the other writes (a new match, an account) wait at most
        // `hold`, `linger` and a group.
        let held = std::time::Instant::now();
        let mut next = Some(first);
        while let Some(first) = next.take() {
            let mut group = vec![first];
            while group.len() < MAX_GROUP {
                match rx.try_recv() {
                    Ok(r) => group.push(r),
                    Err(_) => break,
                }
            }
            if ctl.finish.load(Ordering::Acquire) != 0 {
                finish_checkpoint(&mut conn, &ctl, &stats).await;
            }
            let rows: usize = group.iter().map(|r| r.records.len()).sum();
            match write_group(&mut conn, &group).await {
                Ok(results) => {
                    ctl.dirty.store(true, Ordering::Relaxed);
                    rows_since_nudge += rows as u64;
                    if rows_since_nudge >= tuning.checkpoint_rows {
                        rows_since_nudge = 0;
                        let _ = nudge.try_send(());
                    }
                    let batch: Batch = group
                        .into_iter()
                        .zip(results)
                        .map(|(req, result)| (req.reply, result))
                        .collect();
                    if let Err(mpsc::error::SendError(batch)) = sync.send(batch).await {
                        // No syncer (it cannot have ended while we hold a sender, but never ack
                        // unsynced): fail them.
                        for (reply, _) in batch {
                            let _ = reply.send(Err(StoreError::Closed));
                        }
                    }
                }
                Err(e) => {
                    // Nothing of the group was committed: nothing to sync.
                    let message = e.to_string();
                    for req in group {
                        let _ = req.reply.send(Err(StoreError::Commit(message.clone())));
                    }
                }
            }
            if held.elapsed() < tuning.hold {
                next = match rx.try_recv() {
                    Ok(r) => Some(r),
                    // `recv` is cancel-safe: an append that comes as the wait ends stays queued.
                    // (A zero timeout would still wait for the timer's next tick.)
                    Err(_) if !tuning.linger.is_zero() => {
                        tokio::time::timeout(tuning.linger, rx.recv())
                            .await
                            .ok()
                            .flatten()
                    }
                    Err(_) => None,
                };
            }
        }
    }
}

/// Writes a group: first all of it in one statement batch, which the store's connection runs in
/// one call (sqlx hands each call to the connection's own thread and waits for its answer, so a
/// call per row was most of the server's CPU per move); when that fails, append by append, so
/// that a bad one (a seq already stored, say) fails alone.
async fn write_group(
    conn: &mut sqlx::SqliteConnection,
    group: &[WriteReq],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    match write_group_at_once(conn, group).await {
        Ok(()) => Ok(group.iter().map(|_| Ok(())).collect()),
        Err(e) => {
            // The batch stops at its first failing statement, inside its transaction, or after
            // a failed commit; either way nothing of it stays. "No transaction" is fine here.
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
            if group.len() == 1 {
                return Ok(vec![Err(e)]);
            }
            write_group_each(conn, group).await
        }
    }
}

/// One row a statement: a multi-row `INSERT` keeps a statement journal of every page it
/// touches (spilled to a temporary file past 64 KiB), which doubled the bytes written per move.
const INSERT: &str = "INSERT INTO commands \
     (match_id, seq, seat, command_id, command, events, patch, created_at) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?);";

/// One match's new status and wake time in one statement of one text, whatever the mix: a
/// `NULL` status (with its `updated_at`) keeps the stored one, and `wake_at` changes only when
/// the flag says so (`NULL` is a wake time too: nothing pending).
const UPDATE: &str = "UPDATE matches SET status = COALESCE(?, status), \
     updated_at = COALESCE(?, updated_at), \
     wake_at = CASE WHEN ? THEN ? ELSE wake_at END WHERE id = ?;";

const BEGIN: &str = "BEGIN IMMEDIATE;";
const COMMIT: &str = "COMMIT;";

/// A group of at most this many rows and no update is written as one text (`BEGIN IMMEDIATE;`,
/// its `INSERT`s, `COMMIT;`) in one call: the groups of a lightly loaded server keep one call
/// into the connection per group (each call waits for the connection's thread to be woken and
/// scheduled, which on a busy machine is the group's latency), and these texts stay prepared.
const WHOLE_MAX: usize = 16;

/// The largest chunk of a larger group: its rows go in chunks of 32, 16, …, 1 statements.
const CHUNK_MAX: usize = 32;

/// log2 of `CHUNK_MAX`.
const CHUNK_BITS: u32 = CHUNK_MAX.trailing_zeros();

/// Every statement text the group commit uses. A group's batch of one text per group size and
/// update mix missed the prepared statements' cache at any load (≈ 6 % of the server's CPU in
/// `sqlite3_prepare` at M = 100); these texts are few and fixed, so they stay prepared: a group
/// of `n` rows is `whole[n]` when small, else the chunks of `n` (full chunks of 32, then the
/// rest's binary digits, the first chunk with the `BEGIN`), then its updates in chunks alike,
/// the last chunk with the `COMMIT`: two or three calls for most groups. Memory: 136 + 5 × 63
/// prepared statements at most, whatever the group sizes.
struct GroupTexts {
    /// `whole[n]`: `BEGIN IMMEDIATE;`, `n` inserts, `COMMIT;` (index 0 unused).
    whole: Vec<String>,
    /// `inserts[first][last][k]`: 2^k inserts, after `BEGIN IMMEDIATE;` if `first`, before
    /// `COMMIT;` if `last` (not both: that group is a `whole` one or ends with a lone `COMMIT`).
    inserts: [[Vec<String>; 2]; 2],
    /// `updates[last][k]`: 2^k updates, before `COMMIT;` if `last`.
    updates: [Vec<String>; 2],
}

static GROUP_TEXTS: std::sync::LazyLock<GroupTexts> = std::sync::LazyLock::new(|| {
    let family = |first: bool, stmt: &str, last: bool| -> Vec<String> {
        (0..=CHUNK_BITS)
            .map(|k| {
                let mut text = String::new();
                if first {
                    text.push_str(BEGIN);
                }
                text.push_str(&stmt.repeat(1 << k));
                if last {
                    text.push_str(COMMIT);
                }
                text
            })
            .collect()
    };
    GroupTexts {
        whole: (0..=WHOLE_MAX)
            .map(|n| format!("{BEGIN}{}{COMMIT}", INSERT.repeat(n)))
            .collect(),
        inserts: [
            [family(false, INSERT, false), family(false, INSERT, true)],
            [family(true, INSERT, false), Vec::new()],
        ],
        updates: [family(false, UPDATE, false), family(false, UPDATE, true)],
    }
});

/// The chunk sizes (as log2) of `n` items, largest first: as many full `CHUNK_MAX` chunks as fit,
/// then the rest's binary digits.
fn chunks(n: usize) -> impl Iterator<Item = u32> {
    let full = n / CHUNK_MAX;
    let rest = n % CHUNK_MAX;
    std::iter::repeat_n(CHUNK_BITS, full)
        .chain((0..CHUNK_BITS).rev().filter(move |k| rest & (1 << k) != 0))
}

/// One call of a chunked group: what it holds and which fixed text it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    /// 2^k inserts; `first`: with the `BEGIN`, `last`: with the `COMMIT`.
    Inserts { k: u32, first: bool, last: bool },
    /// 2^k updates; `last`: with the `COMMIT`.
    Updates { k: u32, last: bool },
    /// A lone `BEGIN IMMEDIATE` (a group of updates only).
    Begin,
    /// A lone `COMMIT` (a group of one chunk of inserts and no update).
    Commit,
}

/// The calls of a group of `rows` rows and `updates` updates, written in chunks.
fn plan(rows: usize, updates: usize) -> Vec<Call> {
    let mut calls: Vec<Call> = chunks(rows)
        .map(|k| Call::Inserts {
            k,
            first: false,
            last: false,
        })
        .chain(chunks(updates).map(|k| Call::Updates { k, last: false }))
        .collect();
    match calls.first_mut() {
        Some(Call::Inserts { first, .. }) => *first = true,
        _ => calls.insert(0, Call::Begin),
    }
    match calls.last_mut() {
        Some(Call::Inserts {
            first: false, last, ..
        })
        | Some(Call::Updates { last, .. }) => *last = true,
        _ => calls.push(Call::Commit),
    }
    calls
}

/// One row's parameters, in `INSERT`'s order.
fn bind_row<'q>(
    q: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>,
    id: Uuid,
    r: &'q CommandRow,
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>> {
    q.bind(id.to_string())
        .bind(seq_to_db(r.seq))
        .bind(i64::from(r.seat))
        .bind(r.command_id.as_str())
        .bind(r.command.as_str())
        .bind(r.events.as_str())
        .bind(r.patch.as_deref())
        .bind(r.created_at)
}

/// The whole group in one transaction (`BEGIN IMMEDIATE`, one `INSERT` a row, one `UPDATE` a
/// match whose status or wake time changed, `COMMIT`), as the fixed texts of [`GroupTexts`]: one
/// call into the connection for a small group, a few for a large one (sqlx hands each call to
/// the connection's own thread and waits for its answer).
async fn write_group_at_once(
    conn: &mut sqlx::SqliteConnection,
    group: &[WriteReq],
) -> Result<(), StoreError> {
    let now = Utc::now();
    let texts = &*GROUP_TEXTS;
    let mut rows: Vec<(Uuid, &CommandRow)> = Vec::new();
    for req in group {
        rows.extend(req.records.iter().map(|r| (req.id, r)));
    }
    let updates: Vec<&WriteReq> = group
        .iter()
        .filter(|req| req.status.is_some() || req.wake.is_some())
        .collect();
    if updates.is_empty() && (1..=WHOLE_MAX).contains(&rows.len()) {
        let mut q = sqlx::query(texts.whole[rows.len()].as_str());
        for &(id, r) in &rows {
            q = bind_row(q, id, r);
        }
        q.execute(&mut *conn).await?;
        return Ok(());
    }
    let (mut rows, mut updates) = (rows.as_slice(), updates.as_slice());
    for call in plan(rows.len(), updates.len()) {
        let q = match call {
            Call::Inserts { k, first, last } => {
                let (chunk, rest) = rows.split_at(1 << k);
                rows = rest;
                let text = &texts.inserts[usize::from(first)][usize::from(last)][k as usize];
                let mut q = sqlx::query(text.as_str());
                for &(id, r) in chunk {
                    q = bind_row(q, id, r);
                }
                q
            }
            Call::Updates { k, last } => {
                let (chunk, rest) = updates.split_at(1 << k);
                updates = rest;
                let mut q = sqlx::query(texts.updates[usize::from(last)][k as usize].as_str());
                for req in chunk {
                    q = q
                        .bind(req.status.map(|s| s.as_str()))
                        .bind(req.status.map(|_| now))
                        .bind(req.wake.is_some())
                        .bind(req.wake.flatten())
                        .bind(req.id.to_string());
                }
                q
            }
            Call::Begin => sqlx::query(BEGIN),
            Call::Commit => sqlx::query(COMMIT),
        };
        q.execute(&mut *conn).await?;
    }
    Ok(())
}

/// The group append by append, each inside its own savepoint, in one transaction.
async fn write_group_each(
    conn: &mut sqlx::SqliteConnection,
    group: &[WriteReq],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    use sqlx::Connection as _;
    let now = Utc::now();
    let mut tx = conn.begin().await?;
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
    if let Some(wake) = req.wake {
        sqlx::query("UPDATE matches SET wake_at = ?1 WHERE id = ?2")
            .bind(wake)
            .bind(req.id.to_string())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

// Accounts, sessions and lobbies (issue 12).

use super::{AccountRow, LobbyRow, MatchAccess, SessionRow};

fn uuid_col(r: &SqliteRow, column: &str) -> Result<Uuid, StoreError> {
    match_id(r, column)
}

fn account_row(r: &SqliteRow) -> Result<AccountRow, StoreError> {
    let kind: String = r.try_get("kind")?;
    Ok(AccountRow {
        id: uuid_col(r, "id")?,
        name: r.try_get("name")?,
        name_key: r.try_get("name_key")?,
        registered: kind == "registered",
        password_hash: r.try_get("password_hash")?,
        admin: r.try_get::<i64, _>("admin")? != 0,
        created_at: r.try_get("created_at")?,
    })
}

fn session_row(r: &SqliteRow) -> Result<SessionRow, StoreError> {
    Ok(SessionRow {
        id: uuid_col(r, "id")?,
        account_id: uuid_col(r, "account_id")?,
        token_hash: r.try_get("token_hash")?,
        created_at: r.try_get("created_at")?,
    })
}

fn lobby_row(r: &SqliteRow) -> Result<LobbyRow, StoreError> {
    let status: String = r.try_get("status")?;
    let match_id: Option<String> = r.try_get("match_id")?;
    Ok(LobbyRow {
        id: uuid_col(r, "id")?,
        started: status == "started",
        public: r.try_get::<i64, _>("public")? != 0,
        invite_code: r.try_get("invite_code")?,
        match_id: match_id
            .map(|m| Uuid::parse_str(&m).map_err(|e| StoreError::Corrupt(e.to_string())))
            .transpose()?,
        state: r.try_get("state")?,
    })
}

const ACCOUNT_COLUMNS: &str = "a.id AS id, a.name AS name, a.name_key AS name_key, a.kind AS kind, \
     a.password_hash AS password_hash, a.admin AS admin, a.created_at AS created_at";

async fn insert_session(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    s: &SessionRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO sessions (id, account_id, token_hash, created_at) VALUES (?1, ?2, ?3, ?4)",
    )
    .bind(s.id.to_string())
    .bind(s.account_id.to_string())
    .bind(&s.token_hash)
    .bind(s.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn upsert_lobby(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    l: &LobbyRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO lobbies (id, status, public, invite_code, match_id, state, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, public = excluded.public, \
         invite_code = excluded.invite_code, match_id = excluded.match_id, \
         state = excluded.state, updated_at = excluded.updated_at",
    )
    .bind(l.id.to_string())
    .bind(if l.started { "started" } else { "open" })
    .bind(i64::from(l.public))
    .bind(&l.invite_code)
    .bind(l.match_id.map(|m| m.to_string()))
    .bind(&l.state)
    .bind(Utc::now())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

impl SqliteStore {
    pub async fn create_account(&self, a: &AccountRow, s: &SessionRow) -> Result<(), StoreError> {
        let mut tx = self.write.begin().await?;
        sqlx::query(
            "INSERT INTO accounts (id, name, name_key, kind, password_hash, admin, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .bind(a.id.to_string())
        .bind(&a.name)
        .bind(&a.name_key)
        .bind(if a.registered { "registered" } else { "guest" })
        .bind(&a.password_hash)
        .bind(i64::from(a.admin))
        .bind(a.created_at)
        .execute(&mut *tx)
        .await?;
        insert_session(&mut tx, s).await?;
        tx.commit().await?;
        self.sync().await
    }

    pub async fn registered_account(
        &self,
        name_key: &str,
    ) -> Result<Option<AccountRow>, StoreError> {
        sqlx::query(&format!(
            "SELECT {ACCOUNT_COLUMNS} FROM accounts a \
             WHERE a.name_key = ?1 AND a.kind = 'registered'"
        ))
        .bind(name_key)
        .fetch_optional(&self.read)
        .await?
        .map(|r| account_row(&r))
        .transpose()
    }

    pub async fn create_session(&self, s: &SessionRow) -> Result<(), StoreError> {
        let mut tx = self.write.begin().await?;
        insert_session(&mut tx, s).await?;
        tx.commit().await?;
        self.sync().await
    }

    pub async fn session_account(
        &self,
        token_hash: &str,
    ) -> Result<Option<(Uuid, AccountRow)>, StoreError> {
        let Some(r) = sqlx::query(&format!(
            "SELECT s.id AS session_id, {ACCOUNT_COLUMNS} FROM sessions s \
             JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = ?1"
        ))
        .bind(token_hash)
        .fetch_optional(&self.read)
        .await?
        else {
            return Ok(None);
        };
        Ok(Some((uuid_col(&r, "session_id")?, account_row(&r)?)))
    }

    pub async fn sessions_of(&self, account_id: Uuid) -> Result<Vec<SessionRow>, StoreError> {
        sqlx::query(
            "SELECT id, account_id, token_hash, created_at FROM sessions \
             WHERE account_id = ?1 ORDER BY created_at, id",
        )
        .bind(account_id.to_string())
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(session_row)
        .collect()
    }

    pub async fn revoke_sessions(
        &self,
        account_id: Uuid,
        session: Option<Uuid>,
    ) -> Result<u64, StoreError> {
        let done = match session {
            Some(id) => {
                sqlx::query("DELETE FROM sessions WHERE account_id = ?1 AND id = ?2")
                    .bind(account_id.to_string())
                    .bind(id.to_string())
                    .execute(&self.write)
                    .await?
            }
            None => {
                sqlx::query("DELETE FROM sessions WHERE account_id = ?1")
                    .bind(account_id.to_string())
                    .execute(&self.write)
                    .await?
            }
        };
        self.sync().await?;
        Ok(done.rows_affected())
    }

    pub async fn seat_of_account(
        &self,
        match_id: Uuid,
        account_id: Uuid,
    ) -> Result<Option<u8>, StoreError> {
        sqlx::query(
            "SELECT seat FROM seat_accounts WHERE match_id = ?1 AND account_id = ?2 \
             ORDER BY seat LIMIT 1",
        )
        .bind(match_id.to_string())
        .bind(account_id.to_string())
        .fetch_optional(&self.read)
        .await?
        .map(|r| seat_from_db(r.try_get("seat")?))
        .transpose()
    }

    pub async fn save_lobby(&self, l: &LobbyRow) -> Result<(), StoreError> {
        let mut tx = self.write.begin().await?;
        upsert_lobby(&mut tx, l).await?;
        tx.commit().await?;
        self.sync().await
    }

    pub async fn delete_lobby(&self, id: Uuid) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM lobbies WHERE id = ?1")
            .bind(id.to_string())
            .execute(&self.write)
            .await?;
        self.sync().await
    }

    pub async fn live_lobbies(&self) -> Result<Vec<LobbyRow>, StoreError> {
        sqlx::query(
            "SELECT l.id AS id, l.status AS status, l.public AS public, \
             l.invite_code AS invite_code, l.match_id AS match_id, l.state AS state \
             FROM lobbies l LEFT JOIN matches m ON m.id = l.match_id \
             WHERE l.status = 'open' OR m.status = 'active'",
        )
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(lobby_row)
        .collect()
    }

    pub async fn match_access(&self, match_id: Uuid) -> Result<Option<MatchAccess>, StoreError> {
        let Some(r) = sqlx::query("SELECT public, invite_code FROM lobbies WHERE match_id = ?1")
            .bind(match_id.to_string())
            .fetch_optional(&self.read)
            .await?
        else {
            return Ok(None);
        };
        Ok(Some(MatchAccess {
            public: r.try_get::<i64, _>("public")? != 0,
            invite_code: r.try_get("invite_code")?,
        }))
    }

    pub async fn start_lobby_match(
        &self,
        m: &MatchRow,
        seats: &[SeatRow],
        owners: &[(u8, Uuid)],
        lobby: &LobbyRow,
    ) -> Result<(), StoreError> {
        let mut tx = self.write.begin().await?;
        insert_match(&mut tx, m, seats).await?;
        for (seat, account) in owners {
            sqlx::query(
                "INSERT INTO seat_accounts (match_id, seat, account_id) VALUES (?1, ?2, ?3)",
            )
            .bind(m.id.to_string())
            .bind(i64::from(*seat))
            .bind(account.to_string())
            .execute(&mut *tx)
            .await?;
        }
        upsert_lobby(&mut tx, lobby).await?;
        tx.commit().await?;
        self.sync().await
    }
}

/// The match row and its seats, in the caller's transaction: a match created by `POST
/// /api/matches` and one started by a lobby are stored alike.
async fn insert_match(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    m: &MatchRow,
    seats: &[SeatRow],
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO matches \
         (id, setup, status, rules_version, created_at, updated_at, decision_timeout_ms, \
          clock_bank_ms, clock_increment_ms, wake_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8, ?9)",
    )
    .bind(m.id.to_string())
    .bind(&m.setup)
    .bind(m.status.as_str())
    .bind(&m.rules_version)
    .bind(m.created_at)
    .bind(timeout_to_db(m.decision_timeout_ms))
    .bind(clock_to_db(m.clock).0)
    .bind(clock_to_db(m.clock).1)
    .bind(m.wake_at)
    .execute(&mut **tx)
    .await?;
    for s in seats {
        sqlx::query(
            "INSERT INTO seats (match_id, seat, colour, token_hash) VALUES (?1, ?2, ?3, ?4)",
        )
        .bind(m.id.to_string())
        .bind(i64::from(s.seat))
        .bind(&s.colour)
        .bind(&s.token_hash)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Append;

    async fn store_with_match(
        dir: &Path,
        tuning: Tuning,
        matches: usize,
    ) -> Result<(SqliteStore, Vec<Uuid>), StoreError> {
        let store = SqliteStore::open_tuned(&dir.join("t.db"), tuning).await?;
        store.migrate().await?;
        let mut ids = Vec::new();
        for _ in 0..matches {
            ids.push(new_match(&store).await?);
        }
        Ok((store, ids))
    }

    /// A new active match of one seat.
    async fn new_match(store: &SqliteStore) -> Result<Uuid, StoreError> {
        let id = Uuid::new_v4();
        let row = MatchRow {
            id,
            setup: "{}".into(),
            status: MatchStatus::Active,
            rules_version: "test".into(),
            created_at: Utc::now(),
            decision_timeout_ms: None,
            clock: None,
            wake_at: None,
        };
        let seat = SeatRow {
            seat: 0,
            colour: "red".into(),
            token_hash: format!("h-{id}"),
        };
        store.create_match(&row, &[seat]).await?;
        Ok(id)
    }

    fn record(seq: u64, events: String) -> CommandRow {
        CommandRow {
            seq,
            seat: 0,
            command_id: format!("c{seq}"),
            command: "{}".into(),
            events,
            patch: None,
            created_at: Utc::now(),
        }
    }

    fn append(records: &[CommandRow]) -> Append {
        Append {
            records: records.to_vec(),
            status: None,
            wake: None,
        }
    }

    /// Appends that follow each other closely (each sent once the one before is answered, as a
    /// match's moves are) keep the writer's connection: one acquisition for all of them, where
    /// a writer that gave it back whenever its queue was empty took it once an append. Another
    /// write waits for the linger at most.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn close_appends_keep_the_write_connection() -> Result<(), Box<dyn std::error::Error>> {
        for (linger, expected) in [(Duration::ZERO, 10), (Duration::from_secs(2), 1)] {
            let dir = tempfile::tempdir()?;
            let tuning = Tuning {
                hold: Duration::from_secs(600),
                linger,
                ..Tuning::default()
            };
            let (store, ids) = store_with_match(dir.path(), tuning, 1).await?;
            let acquires = || store.sync_stats().writer_acquires.load(Ordering::Relaxed);
            let before = acquires();
            for seq in 1..=10 {
                store
                    .append(ids[0], append(&[record(seq, "[]".into())]))
                    .await?;
            }
            assert_eq!(acquires() - before, expected, "linger {linger:?}");
            // A new match while the writer lingers with the connection.
            let started = std::time::Instant::now();
            new_match(&store).await?;
            assert!(started.elapsed() < linger + Duration::from_secs(10));
            let stored = store.commands(ids[0], Seqs { after: 0, upto: 99 }).await?;
            assert_eq!(stored.len(), 10);
            store.close().await;
        }
        Ok(())
    }

    /// "Persist, then ack": an append whose group is committed is not answered while its sync
    /// has not run, and is answered once it ran.
    // The gate is a std mutex held across awaits on purpose: the syncer thread blocks on it.
    #[allow(clippy::await_holding_lock)]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_append_is_answered_only_after_its_sync() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (store, ids) = store_with_match(dir.path(), Tuning::default(), 1).await?;
        let id = ids[0];
        let before = store.sync_stats().syncs.load(Ordering::Relaxed);
        let gate = store.sync_stats().gate.lock().map_err(|e| e.to_string())?;
        let pending = tokio::spawn({
            let store = store.clone();
            async move {
                let rows = [record(1, "[]".into())];
                store.append(id, append(&rows)).await
            }
        });
        // Committed (a reader sees it) but not acknowledged.
        let seqs = Seqs { after: 0, upto: 9 };
        let mut seen = Vec::new();
        for _ in 0..100 {
            seen = store.commands(id, seqs).await?;
            if !seen.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(seen.len(), 1, "the group is committed");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!pending.is_finished(), "answered before its sync");
        assert_eq!(store.sync_stats().syncs.load(Ordering::Relaxed), before);
        drop(gate);
        pending.await??;
        assert!(store.sync_stats().syncs.load(Ordering::Relaxed) > before);
        store.close().await;
        Ok(())
    }

    /// Under continuous appends the checkpoints keep the WAL file within a few times its bound
    /// (the commits themselves run none), and readers see every row.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_wal_stays_bounded_and_readers_see_every_row()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let tuning = Tuning {
            checkpoint_rows: 16,
            wal_bound: 64,
            idle: Duration::from_millis(50),
            ..Tuning::default()
        };
        let (store, ids) = store_with_match(dir.path(), tuning, 4).await?;
        const PER_MATCH: u64 = 250;
        let mut tasks = Vec::new();
        for &id in &ids {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                for seq in 1..=PER_MATCH {
                    // About one page a row.
                    let rows = [record(seq, format!("[\"{}\"]", "e".repeat(3000)))];
                    store.append(id, append(&rows)).await?;
                }
                Ok::<_, StoreError>(())
            }));
        }
        for t in tasks {
            t.await??;
        }
        let wal = std::fs::metadata(dir.path().join("t.db-wal"))?.len();
        let frame = 4096 + 24;
        let stats = store.sync_stats();
        let written = ids.len() as u64 * PER_MATCH;
        assert!(
            wal <= 32 + 8 * 64 * frame,
            "WAL {wal} bytes ({} frames) after {written} rows",
            wal / frame
        );
        assert!(
            stats.writer_checkpoints.load(Ordering::Relaxed) > 0,
            "the WAL was started over"
        );
        assert!(stats.checkpoints.load(Ordering::Relaxed) > 0);
        assert!(
            stats.syncs.load(Ordering::Relaxed) <= written + 16,
            "one sync per group at most"
        );
        for &id in &ids {
            let rows = store
                .commands(
                    id,
                    Seqs {
                        after: 0,
                        upto: PER_MATCH,
                    },
                )
                .await?;
            assert_eq!(rows.len() as u64, PER_MATCH);
            assert!(rows.iter().zip(1..).all(|(r, seq)| r.seq == seq));
        }
        store.close().await;
        Ok(())
    }

    /// A group's rows are split into chunks that add up to it, none larger than `CHUNK_MAX`,
    /// each with a fixed text, so that every size reuses the same few prepared texts.
    #[test]
    fn chunks_cover_every_group_size_with_the_fixed_texts() {
        let texts = &*GROUP_TEXTS;
        for n in 0..=3 * MAX_GROUP {
            let sizes: Vec<usize> = chunks(n).map(|k| 1 << k).collect();
            assert_eq!(sizes.iter().sum::<usize>(), n, "{n}");
            assert!(sizes.iter().all(|&s| s <= CHUNK_MAX), "{n}: {sizes:?}");
            assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{n}: largest first");
            assert!(
                sizes.len() <= n / CHUNK_MAX + CHUNK_BITS as usize,
                "{n}: {sizes:?}"
            );
        }
        for n in 1..=WHOLE_MAX {
            let whole = &texts.whole[n];
            assert!(whole.starts_with(BEGIN) && whole.ends_with(COMMIT));
            assert_eq!(whole.matches("INSERT").count(), n);
        }
        let all = texts.whole.len() - 1
            + texts.inserts.iter().flatten().map(Vec::len).sum::<usize>()
            + texts.updates.iter().map(Vec::len).sum::<usize>()
            + 2;
        // The cache keeps them all, and room for the other writes' texts.
        assert_eq!(all, 48);
        assert!(all + 16 <= WRITE_STATEMENT_CACHE, "{all} texts");
    }

    /// Each plan is one transaction: one `BEGIN` first, one `COMMIT` last, every row and update
    /// once, in order, each call a text that exists.
    #[test]
    fn a_plan_begins_once_commits_once_and_covers_the_group() {
        let texts = &*GROUP_TEXTS;
        for rows in 0..=2 * MAX_GROUP {
            for updates in [0, 1, 2, 3, 7, 40, 77, MAX_GROUP] {
                if rows == 0 && updates == 0 {
                    continue;
                }
                let calls = plan(rows, updates);
                let mut sql = String::new();
                for call in &calls {
                    sql.push_str(match *call {
                        Call::Inserts { k, first, last } => {
                            &texts.inserts[usize::from(first)][usize::from(last)][k as usize]
                        }
                        Call::Updates { k, last } => &texts.updates[usize::from(last)][k as usize],
                        Call::Begin => BEGIN,
                        Call::Commit => COMMIT,
                    });
                }
                let why = format!("{rows} rows, {updates} updates: {calls:?}");
                assert!(sql.starts_with(BEGIN) && sql.ends_with(COMMIT), "{why}");
                assert_eq!(sql.matches("BEGIN").count(), 1, "{why}");
                assert_eq!(sql.matches("COMMIT").count(), 1, "{why}");
                assert_eq!(sql.matches("INSERT").count(), rows, "{why}");
                assert_eq!(sql.matches("UPDATE").count(), updates, "{why}");
                let last_insert = sql.rfind("INSERT").unwrap_or(0);
                assert!(sql.find("UPDATE").is_none_or(|u| u > last_insert), "{why}");
            }
        }
        assert_eq!(plan(20, 0).len(), 2, "16 + 4 rows, the COMMIT with the 4");
    }
}
