//! The SQLite store's connections: a file under the data directory, the default so that the
//! server runs with no set-up.
//!
//! SQLite takes one writer at a time. Rather than let connections fight over the lock (SQLite's
//! busy handler sleeps up to 100 ms between tries), every write goes through one connection, and
//! appends go through one writer task ([`super::sqlite_writer`]) that commits the appends of all
//! matches queued at that moment in ONE transaction (group commit). Its `COMMIT` does not fsync:
//! a syncer thread does, after it, while the writer goes on with the next group, and only then
//! are the appends answered; checkpoints run on a connection of their own ([`super::sqlite_sync`]
//! has the durability argument). Reads use their own pool; with WAL they never wait for the
//! writer.
//!
//! This file opens, migrates, syncs and closes the store; the queries are in the domain files
//! (`matches.rs`, `accounts.rs`, `lobbies.rs`, `chat.rs`, `admin.rs`).

use super::sqlite_sync::{Batch, SyncStats, Tuning, WalControl, checkpointer, spawn_syncer};
use super::sqlite_writer::{Turns, Writer, sqlite_writer};
use super::{PoolSettings, StoreError, WriteReq, missing_migrations};
use sqlx::ConnectOptions as _;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use sqlx::{Row, Sqlite, SqliteConnection, Transaction};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::{SemaphorePermit, mpsc, oneshot};
use uuid::Uuid;

/// Connections of the reading pool without `--db-pool-size`.
const DEFAULT_READERS: u32 = 4;
/// The readers' wait for a connection without `--db-acquire-timeout` (sqlx's default).
const DEFAULT_ACQUIRE: Duration = Duration::from_secs(30);

static MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");

/// Statement texts the writing connection keeps prepared (sqlx's default is 100): the group
/// commit's 48 fixed texts (`GroupTexts` in [`super::sqlite_writer`]) and the other writes'
/// single statements.
pub(super) const WRITE_STATEMENT_CACHE: usize = 64;

#[derive(Debug, Clone)]
pub struct SqliteStore {
    pub(super) read: SqlitePool,
    /// The one writing connection (`synchronous=NORMAL`): a write through it is durable only
    /// once [`SqliteStore::sync`] returned after its `COMMIT`.
    pub(super) write: SqlitePool,
    /// The other writes' turns at the writing connection: one at a time (see [`WriteConn`]).
    others: Arc<Turns>,
    pub(super) writer: mpsc::Sender<WriteReq>,
    /// Behind one pointer: every match's actor holds a store, and its run loop's future with it.
    durability: Arc<Durability>,
}

/// The writing connection, lent to one write outside the group writer while it holds the turn
/// ([`SqliteStore::writing`]); both go back when it is dropped, which a write does before it
/// waits for [`SqliteStore::sync`], so that the next write and the group writer need not wait
/// for its fsync.
pub(super) struct WriteConn<'a> {
    conn: PoolConnection<Sqlite>,
    _turn: SemaphorePermit<'a>,
}

impl WriteConn<'_> {
    pub(super) async fn begin(&mut self) -> Result<Transaction<'_, Sqlite>, StoreError> {
        Ok(sqlx::Connection::begin(&mut *self.conn).await?)
    }
}

impl std::ops::Deref for WriteConn<'_> {
    type Target = SqliteConnection;
    fn deref(&self) -> &SqliteConnection {
        &self.conn
    }
}

impl std::ops::DerefMut for WriteConn<'_> {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        &mut self.conn
    }
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

/// A UUID stored as text.
pub(super) fn uuid_text(r: &SqliteRow, column: &str) -> Result<Uuid, StoreError> {
    let id: String = r.try_get(column)?;
    Uuid::parse_str(&id).map_err(|e| StoreError::Corrupt(e.to_string()))
}

impl SqliteStore {
    /// WAL, readers never block the writer; an acknowledged write is on disk (see
    /// [`super::sqlite_sync`]), so an acknowledged move survives a power cut.
    pub async fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_pooled(path, &PoolSettings::default()).await
    }

    /// [`SqliteStore::open`] with these settings of the reading pool.
    pub async fn open_pooled(path: &Path, pool: &PoolSettings) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_tuned(path, Tuning::default(), pool).await
    }

    /// [`SqliteStore::open_pooled`] with other checkpoint settings (tests).
    pub async fn open_tuned(
        path: &Path,
        tuning: Tuning,
        pool: &PoolSettings,
    ) -> Result<SqliteStore, StoreError> {
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
            .max_connections(pool.size.unwrap_or(DEFAULT_READERS))
            .acquire_timeout(pool.acquire_timeout.unwrap_or(DEFAULT_ACQUIRE))
            .idle_timeout(pool.idle_timeout)
            .max_lifetime(pool.max_lifetime)
            .test_before_acquire(false)
            .connect_with(options)
            .await?;
        // Its own connection, never closed by a pool: it also keeps the WAL file from being
        // deleted and created again while the store is open. `NORMAL` syncs the WAL before a
        // checkpoint and the database file after it, as `FULL` does.
        let checkpointing = writing.clone().connect().await?;
        // The checkpointer's handle on the database file, which it syncs after each checkpoint
        // (opened once: SQLite never replaces the file while the store is open).
        let db_file = Arc::new(std::fs::File::open(path).map_err(|e| {
            StoreError::Sync(format!("cannot open the database file to sync it: {e}"))
        })?);
        let stats = Arc::new(SyncStats::default());
        let ctl = Arc::new(WalControl::default());
        let sync = spawn_syncer(path, stats.clone())?;
        let (nudge, nudges) = mpsc::channel(1);
        let checkpoints = tokio::spawn(checkpointer(
            checkpointing,
            db_file,
            nudges,
            ctl.clone(),
            stats.clone(),
            tuning,
        ));
        let (writer, rx) = mpsc::channel(4096);
        let others = Arc::new(Turns::new());
        tokio::spawn(sqlite_writer(Writer {
            pool: write.clone(),
            rx,
            turns: others.clone(),
            sync: sync.clone(),
            nudge,
            ctl: ctl.clone(),
            stats: stats.clone(),
            tuning,
        }));
        Ok(SqliteStore {
            read,
            write,
            others,
            writer,
            durability: Arc::new(Durability {
                sync,
                ctl,
                stats,
                checkpoints: std::sync::Mutex::new(Some(checkpoints)),
            }),
        })
    }

    /// The writing connection for a write outside the group writer (a new match, an account, a
    /// lobby, chat...). The pool hands its one connection out first come, first served, so a
    /// burst of such writes (hundreds of matches created at once) would queue ahead of the group
    /// writer and hold every running match's moves for as long as the burst lasts (measured:
    /// 1 s for 2,000 matches created at once). These writes therefore wait their turn here, one
    /// at a time, and the group writer waits in the pool's queue behind one of them at most. The
    /// writer, for its part, gives the connection back after the group it is writing once a
    /// write has its turn, so that new matches open at the pace of the groups (a few
    /// milliseconds each).
    pub(super) async fn writing(&self) -> Result<WriteConn<'_>, StoreError> {
        let turn = self.others.take().await?;
        let conn = self.write.acquire().await?;
        Ok(WriteConn { conn, _turn: turn })
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

    /// How many migrations of this build the file lacks (a query, so it also tells whether the
    /// file answers).
    pub async fn missing_migrations(&self) -> Result<usize, StoreError> {
        let mut conn = self.read.acquire().await?;
        missing_migrations(&mut *conn, &MIGRATIONS).await
    }

    /// The syncer's and checkpointer's counters.
    pub fn sync_stats(&self) -> &SyncStats {
        &self.durability.stats
    }

    /// Queues the append for the writer task and waits until its group is committed and synced
    /// (the server goes through [`super::Store::write`]).
    #[cfg(test)]
    pub async fn append(&self, id: Uuid, append: super::Append) -> Result<(), StoreError> {
        super::queue_append(&self.writer, id, append).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Append, CommandRow, MatchRow, MatchStatus, SeatRow, Seqs};
    use chrono::Utc;

    async fn store_with_match(
        dir: &Path,
        tuning: Tuning,
        matches: usize,
    ) -> Result<(SqliteStore, Vec<Uuid>), StoreError> {
        let store =
            SqliteStore::open_tuned(&dir.join("t.db"), tuning, &PoolSettings::default()).await?;
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
            ..Append::default()
        }
    }

    /// Appends that follow each other closely (each sent once the one before is answered, as a
    /// match's moves are) keep the writer's connection: one acquisition for all of them, where
    /// a writer that gave it back whenever its queue was empty took it once an append. Another
    /// write does not wait for the linger: the writer gives the connection back when it wants it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn close_appends_keep_the_write_connection() -> Result<(), Box<dyn std::error::Error>> {
        for (linger, expected) in [(Duration::ZERO, 10), (Duration::from_secs(10), 1)] {
            let dir = tempfile::tempdir()?;
            let tuning = Tuning {
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
            let waited = started.elapsed();
            assert!(
                waited < Duration::from_secs(5),
                "the new match waited {waited:?} for the writer (linger {linger:?})"
            );
            let stored = store.commands(ids[0], Seqs { after: 0, upto: 99 }).await?;
            assert_eq!(stored.len(), 10);
            store.close().await;
        }
        Ok(())
    }

    /// A burst of other writes (new matches) does not queue ahead of the moves' writer: with 300
    /// new matches waiting for the writing connection, an append is written after one of them
    /// at most, not after all of them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_of_new_matches_does_not_hold_the_moves()
    -> Result<(), Box<dyn std::error::Error>> {
        const BURST: usize = 300;
        let dir = tempfile::tempdir()?;
        let (store, ids) = store_with_match(dir.path(), Tuning::default(), 1).await?;
        let created = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut burst = Vec::new();
        for _ in 0..BURST {
            let (store, created) = (store.clone(), Arc::clone(&created));
            burst.push(tokio::spawn(async move {
                let made = new_match(&store).await;
                created.fetch_add(1, Ordering::SeqCst);
                made
            }));
        }
        // Every new match is waiting for the connection (or has had it) before the move comes.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let waiting = BURST - created.load(Ordering::SeqCst);
        store
            .append(ids[0], append(&[record(1, "[]".into())]))
            .await?;
        let after = BURST - created.load(Ordering::SeqCst);
        for b in burst {
            b.await??;
        }
        assert!(
            waiting > BURST / 2,
            "the burst was still waiting: {waiting}"
        );
        assert!(
            after > waiting / 2,
            "the move waited for {} of the {waiting} new matches waiting before it",
            waiting - after
        );
        store.close().await;
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
            stats.db_flushes.load(Ordering::Relaxed) > 0,
            "the checkpointer wrote the copied pages through, off the writer's path"
        );
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
}
