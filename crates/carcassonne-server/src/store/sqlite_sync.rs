//! Durability of the SQLite writer's commits with the fsync out of its serial stage, and WAL
//! checkpoints off its path.
//!
//! # Pipelined sync
//!
//! The writing connection runs WAL with `synchronous=NORMAL`: a `COMMIT` writes its frames to the
//! WAL file (`pwrite`, into the page cache) and returns without an fsync. The writer then hands
//! the group's answers to the syncer thread and starts the next group at once. The syncer takes
//! every batch waiting, fdatasyncs the WAL file through its own descriptor, and only then answers
//! them. So "persist, then ack" still holds, the fsync of one group overlaps the writing of the
//! next, and one fdatasync covers every group whose `COMMIT` returned before it started.
//!
//! Why an acknowledged append survives a power cut:
//! - Its `COMMIT` returned before the syncer took its batch; the syncer then looks up the WAL
//!   file *at the path* (inode) and fdatasyncs that inode. fdatasync flushes the inode's dirty
//!   pages whoever wrote them, so every frame written before it started is on disk, the commit
//!   frame included.
//! - SQLite writes a commit's frames after the last one of the previous commit and never
//!   overwrites a frame of an earlier, committed transaction in the same WAL generation; a new
//!   generation (WAL restart) begins only after a checkpoint copied every frame into the database
//!   file and synced it, and its new header is synced (`synchronous=NORMAL` syncs "the WAL file
//!   header when a WAL file begins to be reused after a checkpoint").
//! - Recovery replays the WAL up to the last commit frame whose salt and cumulative checksums are
//!   valid: torn or missing frames of a later, unacknowledged group are discarded, a synced
//!   commit is kept.
//! - `synchronous=NORMAL` syncs the WAL before each checkpoint copies it and the database file
//!   after, so checkpointing never makes a synced commit depend on unsynced pages.
//! - If the WAL file at the path is not the one our descriptor holds, the old one was deleted:
//!   SQLite deletes a WAL only when its last connection closes, after a complete checkpoint that
//!   synced the database file, so the commits it held are in the database file; we open the new
//!   one, which holds every commit since. If there is no WAL file at all, no connection has one
//!   and every commit is in the database file; we fsync that file (redundant after SQLite's own
//!   sync, cheap, and safe even if that checkpoint ran with another connection's settings).
//!   The batch is taken before the lookup, so a commit it answers was written before the lookup
//!   and lives either in the file found or in one checkpointed before.
//!
//! Commits on the same connection outside the group writer (accounts, lobbies, chat, admin,
//! migrations) are synced the same way: they call [`SqliteStore::sync`](super::SqliteStore) after
//! their `COMMIT`. Readers use `synchronous=FULL` connections; they commit nothing.
//!
//! One thing `NORMAL` changes: another connection can read a commit between its `COMMIT` and its
//! sync (≈ 1 ms). Nothing is acknowledged or broadcast from the writer's side before the sync; a
//! reader that must not show an undurable commit calls `sync` after reading.
//!
//! # Checkpoints
//!
//! The writing connection has `wal_autocheckpoint=0`, so no `COMMIT` runs a checkpoint. A
//! checkpointer task with its own connection runs `PRAGMA wal_checkpoint(PASSIVE)` every
//! [`Tuning::checkpoint_rows`] rows written (and after [`Tuning::idle`] without any, if
//! something was written): it copies the frames into the database file while the writer goes on.
//! A passive checkpoint under continuous load never catches up with the writer, and the WAL only
//! starts over (is reused from its start) when a write begins with every frame copied, so past
//! [`Tuning::wal_bound`] frames the checkpointer asks the writer to copy the rest itself between
//! two groups (passive: it waits for nobody; the few frames written since the checkpointer's
//! run), and the next group starts the WAL over. If readers kept it from starting over and the
//! WAL passes four times the bound, the writer runs `RESTART`, which waits for them.
//!
//! SQLite syncs the database file only in a checkpoint that copies the WAL's last frame, which
//! under load is the writer's finish; so after each passive checkpoint the checkpointer syncs the
//! database file itself, and the finish has only its own few pages to write through.

use super::StoreError;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Where an append (or any write) waits for its sync.
pub(super) type Reply = oneshot::Sender<Result<(), StoreError>>;

/// One group's answers, each with the result of its write (a failed one is passed on as is).
pub(super) type Batch = Vec<(Reply, Result<(), StoreError>)>;

/// Groups waiting for the syncer: the writer waits when it is this far ahead (each holds at most
/// one append per match, so the memory is bounded by the matches anyway).
const SYNC_QUEUE: usize = 64;

/// When the checkpointer runs, how large the WAL may grow, and how long the writer keeps the
/// write connection.
#[derive(Debug, Clone, Copy)]
pub struct Tuning {
    /// A passive checkpoint after this many rows written. A row of a played match takes ≈ 1–2
    /// WAL frames (its page of the `commands` table and of its index, shared with the rows of
    /// the same group), so 1000 rows are about SQLite's default of 1000 pages per checkpoint.
    pub checkpoint_rows: u64,
    /// Frames the WAL may hold before the writer finishes a checkpoint itself so that it starts
    /// over (4096 + 24 bytes each): 8192 frames, 32 MiB.
    pub wal_bound: i64,
    /// A checkpoint after this long without `checkpoint_rows`, if anything was written.
    pub idle: Duration,
    /// How long the writer, its queue empty after a group, waits for the next append before it
    /// gives the connection back (at once when another write takes its turn). A give-back pings
    /// the connection (a round trip to its thread, two context switches) and the next group
    /// takes it again: at M = 20, half the groups did so, and at M = 2 nearly every one, because
    /// the next append comes only once the group's sync answered its players and they moved
    /// again.
    pub linger: Duration,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            checkpoint_rows: 1000,
            wal_bound: 8192,
            idle: Duration::from_secs(1),
            linger: Duration::from_millis(5),
        }
    }
}

/// What the syncer records at each sync, on the server's metrics (`crate::meters` registers
/// them; the store only holds the handles).
#[derive(Debug, Clone)]
pub struct SyncMeters {
    /// One fdatasync of the WAL: the disk's part of every move's round trip.
    pub seconds: metrics::Histogram,
    /// Appends (a match's batch each) answered after one fdatasync, with the other writes'
    /// sync requests (a new match, an account: one each).
    pub appends: metrics::Histogram,
}

/// Counters, for tests and the debug log.
#[derive(Debug, Default)]
pub struct SyncStats {
    /// fdatasyncs (or database file syncs) done.
    pub syncs: AtomicU64,
    /// Times the syncer (re)opened the WAL file because the one at the path was another.
    pub wal_opens: AtomicU64,
    /// Syncs that found no WAL file and synced the database file.
    pub no_wal: AtomicU64,
    /// Passive checkpoints of the checkpointer.
    pub checkpoints: AtomicU64,
    /// Checkpoints the writer ran itself to start the WAL over.
    pub writer_checkpoints: AtomicU64,
    /// Syncs of the database file by the checkpointer, after a passive checkpoint.
    pub db_flushes: AtomicU64,
    /// Times the writer took the write connection from the pool (each give-back before it
    /// cost a ping of the connection).
    pub writer_acquires: AtomicU64,
    /// Where the syncer records each sync's time and appends (`/metrics`), once the server
    /// has made its metrics (after the store: they are labelled with the store's kind).
    pub meters: std::sync::OnceLock<SyncMeters>,
    /// Test hook: the syncer holds this lock while it syncs, so a test holding it holds syncs.
    #[cfg(test)]
    pub gate: std::sync::Mutex<()>,
}

/// What the checkpointer asks of the writer.
#[derive(Debug, Default)]
pub(super) struct WalControl {
    /// 0: nothing; [`FINISH_PASSIVE`]; [`FINISH_RESTART`].
    pub finish: AtomicU8,
    /// Something was committed since the checkpointer's last run.
    pub dirty: AtomicBool,
}

pub(super) const FINISH_PASSIVE: u8 = 1;
pub(super) const FINISH_RESTART: u8 = 2;

/// The database's WAL file, as the syncer holds it.
#[derive(Debug)]
struct WalFile {
    wal: PathBuf,
    db: PathBuf,
    file: Option<File>,
}

/// Whether two metadata are of the same file (device and inode).
#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Elsewhere no inode to compare: reopen before every sync (always safe, a little slower).
#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

impl WalFile {
    fn new(db: &Path) -> WalFile {
        let mut wal = db.as_os_str().to_owned();
        wal.push("-wal");
        WalFile {
            wal: PathBuf::from(wal),
            db: db.to_path_buf(),
            file: None,
        }
    }

    /// Makes every commit that returned before this call durable (see the module's comment).
    fn sync(&mut self, stats: &SyncStats) -> io::Result<()> {
        let at_path = match std::fs::metadata(&self.wal) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let Some(at_path) = at_path else {
            return self.sync_db(stats);
        };
        let current = match &self.file {
            Some(f) => same_file(&f.metadata()?, &at_path),
            None => false,
        };
        if !current {
            // Opened read-only: fdatasync needs no write access, and we never write to it.
            match File::open(&self.wal) {
                Ok(f) => {
                    self.file = Some(f);
                    stats.wal_opens.fetch_add(1, Ordering::Relaxed);
                }
                // Deleted between the lookup and the open: checkpointed, as above.
                Err(e) if e.kind() == io::ErrorKind::NotFound => return self.sync_db(stats),
                Err(e) => return Err(e),
            }
        }
        match &self.file {
            Some(f) => f.sync_data(),
            None => self.sync_db(stats),
        }
    }

    /// No WAL file: every commit is in the database file; sync it.
    fn sync_db(&mut self, stats: &SyncStats) -> io::Result<()> {
        self.file = None;
        stats.no_wal.fetch_add(1, Ordering::Relaxed);
        File::open(&self.db)?.sync_data()
    }
}

/// Starts the syncer thread of the database at `db`; it ends when every sender is dropped.
pub(super) fn spawn_syncer(
    db: &Path,
    stats: Arc<SyncStats>,
) -> Result<mpsc::Sender<Batch>, StoreError> {
    let (tx, rx) = mpsc::channel(SYNC_QUEUE);
    let wal = WalFile::new(db);
    // A thread of its own rather than `spawn_blocking`: it blocks in fdatasync most of its life,
    // and should not take one of the runtime's blocking threads for the server's lifetime.
    std::thread::Builder::new()
        .name("sqlite-sync".into())
        .spawn(move || syncer(rx, wal, &stats))
        .map_err(|e| StoreError::Sync(format!("cannot start the syncer: {e}")))?;
    Ok(tx)
}

fn syncer(mut rx: mpsc::Receiver<Batch>, mut wal: WalFile, stats: &SyncStats) {
    while let Some(first) = rx.blocking_recv() {
        // Every batch queued now: their commits all returned before this sync starts.
        let mut batches = vec![first];
        while let Ok(b) = rx.try_recv() {
            batches.push(b);
        }
        #[cfg(test)]
        let gate = stats.gate.lock().unwrap_or_else(|e| e.into_inner());
        let started = std::time::Instant::now();
        let outcome = wal.sync(stats);
        let took = started.elapsed();
        #[cfg(test)]
        drop(gate);
        stats.syncs.fetch_add(1, Ordering::Relaxed);
        if let Some(m) = stats.meters.get() {
            m.seconds.record(took.as_secs_f64());
            m.appends
                .record(batches.iter().map(Vec::len).sum::<usize>() as f64);
        }
        if let Err(e) = &outcome {
            tracing::error!(error = %e, "the WAL sync failed; its writes are answered as failed");
        }
        for (reply, result) in batches.into_iter().flatten() {
            let answer = match (&outcome, result) {
                (Ok(()), r) => r,
                (Err(e), Ok(())) => Err(StoreError::Sync(e.to_string())),
                (Err(_), Err(e)) => Err(e),
            };
            let _ = reply.send(answer);
        }
    }
}

/// The checkpointer: a passive checkpoint on its own connection whenever the writer nudges it
/// (every `checkpoint_rows` rows) or after `idle` if something was written; ends when the writer
/// drops its nudges' sender.
pub(super) async fn checkpointer(
    mut conn: sqlx::SqliteConnection,
    db: Arc<File>,
    mut nudges: mpsc::Receiver<()>,
    ctl: Arc<WalControl>,
    stats: Arc<SyncStats>,
    tuning: Tuning,
) {
    loop {
        match tokio::time::timeout(tuning.idle, nudges.recv()).await {
            Ok(Some(())) => {}
            Ok(None) => break,
            Err(_) if ctl.dirty.load(Ordering::Relaxed) => {}
            Err(_) => continue,
        }
        // The writer's turn to finish one: two checkpoints at once would only wait for each other.
        if ctl.finish.load(Ordering::Acquire) != 0 {
            continue;
        }
        ctl.dirty.store(false, Ordering::Relaxed);
        let ran: Result<(i64, i64, i64), sqlx::Error> =
            sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)")
                .fetch_one(&mut conn)
                .await;
        match ran {
            Ok((busy, log, copied)) => {
                stats.checkpoints.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(busy, log, copied, "passive checkpoint");
                if copied > 0 {
                    flush_db(&db, &stats).await;
                }
                if log > tuning.wal_bound.saturating_mul(4) {
                    ctl.finish.store(FINISH_RESTART, Ordering::Release);
                } else if log > tuning.wal_bound {
                    ctl.finish.store(FINISH_PASSIVE, Ordering::Release);
                }
            }
            Err(e) => tracing::warn!(error = %e, "passive checkpoint failed"),
        }
    }
    use sqlx::Connection as _;
    let _ = conn.close().await;
}

/// Writes the pages a checkpoint copied into the database file through to the disk, here rather
/// than on the writer's path. SQLite syncs the database file only in the checkpoint that copies
/// the WAL's last frame: under a steady load that is the writer's own [`finish_checkpoint`], which
/// would then write out every page copied since the WAL last started over (≈ 20–30 ms of a
/// stalled writer, once a second at 5,000 moves/s). Flushed here after each passive checkpoint,
/// the finish syncs only the few pages it copies itself. An extra sync never weakens durability;
/// a failed one is only logged, as SQLite's own sync at the finish still runs.
async fn flush_db(db: &Arc<File>, stats: &SyncStats) {
    let f = db.clone();
    match tokio::task::spawn_blocking(move || f.sync_data()).await {
        Ok(Ok(())) => {
            stats.db_flushes.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Err(e)) => tracing::warn!(error = %e, "flushing the database file failed"),
        Err(e) => tracing::warn!(error = %e, "flushing the database file did not run"),
    }
}

/// The writer's part, between two groups: finishes the checkpoint the checkpointer asked for,
/// so that the next group starts the WAL over.
pub(super) async fn finish_checkpoint(
    conn: &mut sqlx::SqliteConnection,
    ctl: &WalControl,
    stats: &SyncStats,
) {
    let text = match ctl.finish.load(Ordering::Acquire) {
        FINISH_PASSIVE => "PRAGMA wal_checkpoint(PASSIVE)",
        FINISH_RESTART => "PRAGMA wal_checkpoint(RESTART)",
        _ => return,
    };
    let ran: Result<(i64, i64, i64), sqlx::Error> =
        sqlx::query_as(text).fetch_one(&mut *conn).await;
    stats.writer_checkpoints.fetch_add(1, Ordering::Relaxed);
    match ran {
        Ok((busy, log, copied)) => tracing::debug!(text, busy, log, copied, "writer checkpoint"),
        Err(e) => tracing::warn!(error = %e, "writer checkpoint failed"),
    }
    // Whether or not the WAL starts over, the checkpointer measures it again on its next run.
    ctl.finish.store(0, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::ConnectOptions as _;
    use sqlx::Connection as _;
    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};

    fn ino(path: &Path) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }

    /// The syncer follows the WAL file through its replacements: after the last connection closed
    /// (SQLite deletes the WAL) it syncs the database file, and once a new WAL file exists it
    /// opens and syncs that one, not the deleted one it held.
    #[tokio::test]
    async fn the_syncer_follows_a_replaced_wal_file() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("t.db");
        let options = SqliteConnectOptions::new()
            .filename(&db)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal);
        let stats = SyncStats::default();
        let mut wal = WalFile::new(&db);

        let mut conn = options.connect().await?;
        sqlx::query("CREATE TABLE t (x INTEGER)")
            .execute(&mut conn)
            .await?;
        assert!(ino(&wal.wal).is_some(), "a WAL file");
        wal.sync(&stats)?;
        assert_eq!(stats.wal_opens.load(Ordering::Relaxed), 1);
        wal.sync(&stats)?;
        assert_eq!(
            stats.wal_opens.load(Ordering::Relaxed),
            1,
            "the same file kept"
        );

        conn.close().await?;
        assert_eq!(
            ino(&wal.wal),
            None,
            "SQLite deleted the WAL on the last close"
        );
        wal.sync(&stats)?;
        assert_eq!(stats.no_wal.load(Ordering::Relaxed), 1);

        let mut conn = options.connect().await?;
        sqlx::query("INSERT INTO t VALUES (1)")
            .execute(&mut conn)
            .await?;
        wal.sync(&stats)?;
        assert_eq!(
            stats.wal_opens.load(Ordering::Relaxed),
            2,
            "the new file opened"
        );
        let before = ino(&wal.wal).ok_or("no WAL file")?;

        // Replaced while the syncer holds the old one (which keeps its inode from being reused):
        // the next sync must be of the new file.
        conn.close().await?;
        let mut conn = options.connect().await?;
        sqlx::query("INSERT INTO t VALUES (2)")
            .execute(&mut conn)
            .await?;
        let second = ino(&wal.wal).ok_or("no new WAL file")?;
        assert_ne!(second, before);
        wal.sync(&stats)?;
        assert_eq!(
            stats.wal_opens.load(Ordering::Relaxed),
            3,
            "the newest file opened"
        );
        let held = wal.file.as_ref().ok_or("no file held")?.metadata()?;
        {
            use std::os::unix::fs::MetadataExt;
            assert_eq!(
                (held.dev(), held.ino()),
                second,
                "the file at the path is synced"
            );
        }
        conn.close().await?;
        Ok(())
    }
}
