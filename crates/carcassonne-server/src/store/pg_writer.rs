//! The Postgres group writers: [`WRITERS`] tasks take turns at the append queue, each writing
//! every append queued at that moment in one statement.
//!
//! Fenced appends (cluster mode, [`super::leases`]): a group with a fence checks every fence in
//! its own statement and key-share-locks the leases it checked; one stale fence writes nothing
//! of the group, whose appends are then tried alone, so the stale one fails alone
//! ([`StoreError::Fenced`]). A group without a fence runs the unfenced statement.

use super::leases::check_fence;
use super::{StoreError, WriteReq, seq_to_db};
use chrono::Utc;
use sqlx::postgres::PgPool;
use std::sync::Arc;
use tokio::sync::{Mutex, mpsc};

/// Most appends committed in one group.
const MAX_GROUP: usize = 256;
/// Writer tasks taking turns: one forms its group while another's commit flushes.
pub(super) const WRITERS: usize = 2;

/// A Postgres writer: waits for its turn at the queue, takes every append queued now, and writes
/// them in one transaction while the next writer takes the next group.
pub(super) async fn pg_writer(pool: PgPool, rx: Arc<Mutex<mpsc::Receiver<WriteReq>>>) {
    // The writer keeps one connection of the pool: sqlx pings a connection each time it goes
    // back to the pool (a round trip to Postgres), which would be one more round trip a group. It is
    // given back (and tested) after an error, and taken again for the next group; and when the
    // pool closes (the server's shutdown), which waits for every connection to come back.
    let mut held: Option<sqlx::pool::PoolConnection<sqlx::Postgres>> = None;
    let mut closing = std::pin::pin!(pool.close_event());
    loop {
        let next = async {
            let mut rx = rx.lock().await;
            let first = rx.recv().await?;
            super::gather::gather(&rx).await;
            let mut group = vec![first];
            while group.len() < MAX_GROUP {
                match rx.try_recv() {
                    Ok(r) => group.push(r),
                    Err(_) => break,
                }
            }
            Some(group)
        };
        let group = tokio::select! {
            group = next => match group {
                Some(group) => group,
                None => return,
            },
            // What is still queued fails with the pool closed anyway; its appends are answered
            // as closed when their replies drop.
            () = &mut closing => return,
        };
        let written = match held.as_mut() {
            Some(conn) => write_group(conn, &group).await,
            None => match pool.acquire().await {
                Ok(conn) => write_group(held.insert(conn), &group).await,
                Err(e) => Err(e.into()),
            },
        };
        if written.is_err() {
            held = None;
        }
        match written {
            Ok(Written::All) => {
                for req in group {
                    let _ = req.reply.send(Ok(()));
                }
            }
            // Alone it can only fail by itself.
            Err(e) if group.len() == 1 => {
                if let Some(req) = group.into_iter().next() {
                    let _ = req.reply.send(Err(e));
                }
            }
            // Nothing of the group was stored: each append is tried alone, so a bad one (a seq
            // already stored, a stale fence) fails without its neighbours. (A stale fence is
            // rare, so finding which one with a second try costs nothing that matters.)
            Ok(Written::Fenced) | Err(_) => {
                for req in group {
                    let result = append_one(&pool, &req).await;
                    let _ = req.reply.send(result);
                }
            }
        }
    }
}

/// What a group's statement did.
enum Written {
    /// Every append of the group is committed.
    All,
    /// A fence of the group is stale: nothing was written.
    Fenced,
}

/// The group's inserts and update, after the fences' check (`$14`..`$16`) when the group has
/// fences: each statement below writes only `WHERE (SELECT ok FROM fence)`.
const FENCED_GROUP: &str = "WITH held AS ( \
       SELECT l.id FROM leases l \
       JOIN UNNEST($14::uuid[], $15::text[], $16::bigint[]) AS f(id, node, epoch) \
         ON l.kind = 'match' AND l.id = f.id AND l.node_id = f.node AND l.epoch = f.epoch \
       WHERE l.expires_at > now() \
       FOR KEY SHARE OF l), \
     fence AS (SELECT (SELECT count(*) FROM held) = cardinality($14::uuid[]) AS ok), \
     inserted AS ( \
       INSERT INTO commands \
       (match_id, seq, seat, command_id, command, events, patch, created_at) \
       SELECT m, s, st, ci, c, e, p, t \
       FROM UNNEST($1::uuid[], $2::bigint[], $3::smallint[], $4::text[], $5::text[], \
                   $6::text[], $7::text[], $8::timestamptz[]) \
            AS u(m, s, st, ci, c, e, p, t) \
       WHERE (SELECT ok FROM fence) \
       RETURNING 1), \
     updated AS ( \
       UPDATE matches SET \
         status = COALESCE(u.status, matches.status), \
         updated_at = CASE WHEN u.status IS NULL THEN matches.updated_at ELSE $13 END, \
         wake_at = CASE WHEN u.set_wake THEN u.wake_at ELSE matches.wake_at END \
       FROM UNNEST($9::uuid[], $10::text[], $11::bool[], $12::bigint[]) \
            AS u(id, status, set_wake, wake_at) \
       WHERE matches.id = u.id AND (SELECT ok FROM fence) \
       RETURNING 1) \
     SELECT ok FROM fence";

/// The whole group in ONE statement, so one round trip and one implicit transaction: every record
/// in one multi-row insert (`UNNEST` of arrays), the matches' new statuses and wake times in one
/// update (one row per match: a statement may not update a row twice), where `BEGIN`,
/// insert, updates and `COMMIT` would be four round trips a group. With fences, the same
/// statement checks them first ([`FENCED_GROUP`]).
async fn write_group(
    conn: &mut sqlx::PgConnection,
    group: &[WriteReq],
) -> Result<Written, StoreError> {
    let n: usize = group.iter().map(|r| r.records.len()).sum();
    let mut ids = Vec::with_capacity(n);
    let mut seqs = Vec::with_capacity(n);
    let mut seats = Vec::with_capacity(n);
    let mut command_ids = Vec::with_capacity(n);
    let mut commands = Vec::with_capacity(n);
    let mut events = Vec::with_capacity(n);
    let mut patches = Vec::with_capacity(n);
    let mut times = Vec::with_capacity(n);
    for req in group {
        for r in &req.records {
            ids.push(req.id);
            seqs.push(seq_to_db(r.seq));
            seats.push(i16::from(r.seat));
            command_ids.push(r.command_id.as_str());
            commands.push(r.command.as_str());
            events.push(r.events.as_str());
            patches.push(r.patch.as_deref());
            times.push(r.created_at);
        }
    }
    // One entry per match whose status or wake time changes; NULL keeps the column.
    let mut match_ids = Vec::new();
    let mut statuses: Vec<Option<&str>> = Vec::new();
    let mut set_wake = Vec::new();
    let mut wakes: Vec<Option<i64>> = Vec::new();
    for req in group
        .iter()
        .filter(|r| r.status.is_some() || r.wake.is_some())
    {
        match_ids.push(req.id);
        statuses.push(req.status.map(|s| s.as_str()));
        set_wake.push(req.wake.is_some());
        wakes.push(req.wake.flatten());
    }
    let fences: Vec<_> = group
        .iter()
        .filter_map(|r| r.fence.as_ref().map(|f| (r.id, f)))
        .collect();
    if !fences.is_empty() {
        let fenced_ids: Vec<uuid::Uuid> = fences.iter().map(|(id, _)| *id).collect();
        let nodes: Vec<&str> = fences.iter().map(|(_, f)| &*f.node).collect();
        let epochs: Vec<i64> = fences.iter().map(|(_, f)| f.epoch).collect();
        let ok: bool = sqlx::query_scalar(FENCED_GROUP)
            .bind(&ids)
            .bind(&seqs)
            .bind(&seats)
            .bind(&command_ids)
            .bind(&commands)
            .bind(&events)
            .bind(&patches)
            .bind(&times)
            .bind(&match_ids)
            .bind(&statuses)
            .bind(&set_wake)
            .bind(&wakes)
            .bind(Utc::now())
            .bind(&fenced_ids)
            .bind(&nodes)
            .bind(&epochs)
            .fetch_one(conn)
            .await?;
        return Ok(if ok { Written::All } else { Written::Fenced });
    }
    sqlx::query(
        "WITH inserted AS ( \
           INSERT INTO commands \
           (match_id, seq, seat, command_id, command, events, patch, created_at) \
           SELECT m, s, st, ci, c, e, p, t \
           FROM UNNEST($1::uuid[], $2::bigint[], $3::smallint[], $4::text[], $5::text[], \
                       $6::text[], $7::text[], $8::timestamptz[]) \
                AS u(m, s, st, ci, c, e, p, t) \
           RETURNING 1) \
         UPDATE matches SET \
           status = COALESCE(u.status, matches.status), \
           updated_at = CASE WHEN u.status IS NULL THEN matches.updated_at ELSE $13 END, \
           wake_at = CASE WHEN u.set_wake THEN u.wake_at ELSE matches.wake_at END \
         FROM UNNEST($9::uuid[], $10::text[], $11::bool[], $12::bigint[]) \
              AS u(id, status, set_wake, wake_at) \
         WHERE matches.id = u.id",
    )
    .bind(&ids)
    .bind(&seqs)
    .bind(&seats)
    .bind(&command_ids)
    .bind(&commands)
    .bind(&events)
    .bind(&patches)
    .bind(&times)
    .bind(&match_ids)
    .bind(&statuses)
    .bind(&set_wake)
    .bind(&wakes)
    .bind(Utc::now())
    .execute(conn)
    .await?;
    Ok(Written::All)
}

/// One match's append in its own transaction (a failed group's appends, one by one), after its
/// fence's check (a stale one rolls back with nothing written).
async fn append_one(pool: &PgPool, req: &WriteReq) -> Result<(), StoreError> {
    let mut tx = pool.begin().await?;
    if let Some(fence) = &req.fence {
        check_fence(&mut tx, super::LeaseKey::of_match(req.id), fence).await?;
    }
    for r in &req.records {
        sqlx::query(
            "INSERT INTO commands \
             (match_id, seq, seat, command_id, command, events, patch, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(req.id)
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
    if let Some(status) = req.status {
        sqlx::query("UPDATE matches SET status = $1, updated_at = $2 WHERE id = $3")
            .bind(status.as_str())
            .bind(Utc::now())
            .bind(req.id)
            .execute(&mut *tx)
            .await?;
    }
    if let Some(wake) = req.wake {
        sqlx::query("UPDATE matches SET wake_at = $1 WHERE id = $2")
            .bind(wake)
            .bind(req.id)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}
