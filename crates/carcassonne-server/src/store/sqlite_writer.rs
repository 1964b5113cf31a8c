//! The SQLite group writer: one task takes every append queued at that moment, writes them in
//! one transaction through the store's one writing connection, and hands the answers to the
//! syncer ([`super::sqlite_sync`]), which answers them once the WAL is on disk.

use super::sqlite_sync::{Batch, SyncStats, Tuning, WalControl, finish_checkpoint};
use super::{CommandRow, StoreError, WriteReq, seq_to_db};
use chrono::{DateTime, Utc};
use sqlx::sqlite::SqlitePool;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore, SemaphorePermit, mpsc};
use uuid::Uuid;

/// Most appends committed in one group.
const MAX_GROUP: usize = 256;

/// The other writes' turns at the writing connection (a new match, an account, a lobby): one at a
/// time, so that a burst of them never queues ahead of the group writer in the pool; and once one
/// has its turn the writer gives the connection back after the group it is writing, which it
/// otherwise keeps while appends keep coming.
#[derive(Debug)]
pub(super) struct Turns {
    one: Semaphore,
    /// Raised when a write takes its turn, so that a lingering writer gives the connection back.
    wanted: Notify,
}

impl Turns {
    pub(super) fn new() -> Self {
        Turns {
            one: Semaphore::new(1),
            wanted: Notify::new(),
        }
    }

    /// Waits for this write's turn; the connection is the pool's to hand out next.
    pub(super) async fn take(&self) -> Result<SemaphorePermit<'_>, StoreError> {
        let turn = self.one.acquire().await.map_err(|_| StoreError::Closed)?;
        self.wanted.notify_one();
        Ok(turn)
    }

    /// Whether a write has its turn (and so waits for the connection while the writer has it).
    fn taken(&self) -> bool {
        self.one.available_permits() == 0
    }
}

/// What the writer task holds.
#[derive(Debug)]
pub(super) struct Writer {
    pub(super) pool: SqlitePool,
    pub(super) rx: mpsc::Receiver<WriteReq>,
    pub(super) turns: Arc<Turns>,
    pub(super) sync: mpsc::Sender<Batch>,
    /// Wakes the checkpointer (capacity 1: a nudge pending is enough).
    pub(super) nudge: mpsc::Sender<()>,
    pub(super) ctl: Arc<WalControl>,
    pub(super) stats: Arc<SyncStats>,
    pub(super) tuning: Tuning,
}

/// The SQLite writer: takes every append queued now, writes each inside its own savepoint (a bad
/// one fails alone), commits them together, then hands the answers to the syncer and goes on
/// with the next group. Nothing is answered before the commit returned and the WAL was synced
/// after it, so "persist, then broadcast" holds for every match in the group.
pub(super) async fn sqlite_writer(w: Writer) {
    let Writer {
        pool,
        mut rx,
        turns,
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
        // each other) and no other write has its turn. Giving it back costs a ping on its
        // thread in a task sqlx spawns, and taking it again a wake-up: on busy cores that round
        // waits for the runtime's queues, 100 ms and more (measured), and every move waits with
        // it. Another write (a new match, an account) waits for the group being written at most.
        let mut next = Some(first);
        while let Some(first) = next.take() {
            // Let the tasks already woken run first (the actors whose commands have arrived,
            // and the connections the I/O driver finds readable): their appends join this
            // group instead of each paying a group of its own. Not behind a backlog.
            super::gather::gather(&rx).await;
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
            if !turns.taken() {
                next = match rx.try_recv() {
                    Ok(r) => Some(r),
                    // (A zero timeout would still wait for the timer's next tick.)
                    Err(_) if !tuning.linger.is_zero() => {
                        linger(&mut rx, &turns, tuning.linger).await
                    }
                    Err(_) => None,
                };
            }
        }
    }
}

/// The next append, if it comes within `linger` and no other write takes its turn meanwhile.
async fn linger(
    rx: &mut mpsc::Receiver<WriteReq>,
    turns: &Turns,
    linger: Duration,
) -> Option<WriteReq> {
    let until = tokio::time::Instant::now() + linger;
    loop {
        // `recv` is cancel-safe: an append that comes as the wait ends stays queued.
        tokio::select! {
            biased;
            r = rx.recv() => return r,
            // A notification left from a turn already over is no reason to stop.
            () = turns.wanted.notified() => if turns.taken() { return None },
            () = tokio::time::sleep_until(until) => return None,
        }
    }
}

/// Writes a group: first all of it in one statement batch, which the store's connection runs in
/// one call (sqlx hands each call to the connection's own thread and waits for its answer, so a
/// call per row would be most of the server's CPU per move); when that fails, append by append, so
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sqlite::WRITE_STATEMENT_CACHE;

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
