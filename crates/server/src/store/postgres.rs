//! The Postgres dialect, used when a database URL is given. The commands' JSON columns are text
//! (written and read whole, never queried inside; migration 0011); the other JSON columns are
//! `jsonb`, read back as text.
//!
//! Appends are group-committed like SQLite's: one transaction per match cost a round trip per
//! statement and a commit per match, and fell behind SQLite under load. Writer tasks take every
//! append queued at that moment and write them all in one statement (one round trip, one
//! transaction): a multi-row insert (`UNNEST` of arrays) and one update of the matches; [`WRITERS`] of them take turns, so the next group forms and is written
//! while the previous commit flushes. A match's appends never overlap (its actor waits for each),
//! so they stay in order. If a group fails, each of its appends is tried alone, so a bad one fails
//! alone. Nothing is answered before its commit returned: "persist, then broadcast" holds.

use super::{
    CommandRow, MatchRow, MatchStatus, SeatRow, Seqs, StoreError, WriteReq, clock_from_db,
    clock_to_db, seat_from_db, seq_from_db, seq_to_db, timeout_from_db, timeout_to_db,
};
use chrono::Utc;
use sqlx::Row;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, mpsc};
use uuid::Uuid;

static MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

/// Most appends committed in one group.
const MAX_GROUP: usize = 256;
/// Writer tasks taking turns: one forms its group while another's commit flushes.
const WRITERS: usize = 2;

#[derive(Debug, Clone)]
pub struct PgStore {
    pub(super) pool: PgPool,
    pub(super) writer: mpsc::Sender<WriteReq>,
}

// Row mapping: one function per row type.

fn match_row(id: Uuid, r: &PgRow) -> Result<MatchRow, StoreError> {
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

fn seat(r: &PgRow) -> Result<u8, StoreError> {
    let seat: i16 = r.try_get("seat")?;
    seat_from_db(i64::from(seat))
}

fn seat_ref(r: &PgRow) -> Result<(Uuid, u8), StoreError> {
    Ok((r.try_get("match_id")?, seat(r)?))
}

fn command_row(r: &PgRow) -> Result<CommandRow, StoreError> {
    Ok(CommandRow {
        seq: seq_from_db(r.try_get("seq")?)?,
        seat: seat(r)?,
        command_id: r.try_get("command_id")?,
        command: r.try_get("command")?,
        events: r.try_get("events")?,
        patch: r.try_get("patch")?,
        created_at: r.try_get("created_at")?,
    })
}

impl PgStore {
    pub async fn open(url: &str) -> Result<PgStore, StoreError> {
        let options = PgConnectOptions::from_str(url)?;
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await?;
        let (writer, rx) = mpsc::channel(4096);
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..WRITERS {
            tokio::spawn(pg_writer(pool.clone(), rx.clone()));
        }
        Ok(PgStore { pool, writer })
    }

    pub async fn migrate(&self) -> Result<(), StoreError> {
        MIGRATIONS.run(&self.pool).await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }

    pub async fn create_match(&self, m: &MatchRow, seats: &[SeatRow]) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        insert_match(&mut tx, m, seats).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn seat_for_token(&self, token_hash: &str) -> Result<Option<(Uuid, u8)>, StoreError> {
        sqlx::query("SELECT match_id, seat FROM seats WHERE token_hash = $1")
            .bind(token_hash)
            .fetch_optional(&self.pool)
            .await?
            .map(|r| seat_ref(&r))
            .transpose()
    }

    pub async fn load_match(&self, id: Uuid) -> Result<Option<MatchRow>, StoreError> {
        sqlx::query(
            "SELECT setup::text AS setup, status, rules_version, created_at, \
             decision_timeout_ms, clock_bank_ms, clock_increment_ms, wake_at FROM matches \
             WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .map(|r| match_row(id, &r))
        .transpose()
    }

    pub async fn commands(&self, id: Uuid, seqs: Seqs) -> Result<Vec<CommandRow>, StoreError> {
        sqlx::query(
            "SELECT seq, seat, command_id, command, events, patch, created_at FROM commands \
             WHERE match_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq",
        )
        .bind(id)
        .bind(seq_to_db(seqs.after))
        .bind(seq_to_db(seqs.upto))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(command_row)
        .collect()
    }

    pub async fn unfinished(&self) -> Result<Vec<Uuid>, StoreError> {
        sqlx::query("SELECT id FROM matches WHERE status = 'active' ORDER BY created_at")
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| Ok(r.try_get("id")?))
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
        .fetch(&self.pool);
        let mut waking = Vec::new();
        while let Some(r) = rows.try_next().await? {
            waking.push((r.try_get("id")?, r.try_get("wake_at")?));
        }
        Ok(waking)
    }

    pub async fn recently_played(&self, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        sqlx::query(
            "SELECT m.id AS id FROM matches m WHERE m.status = 'active' AND m.wake_at IS NULL \
             ORDER BY COALESCE((SELECT c.created_at FROM commands c WHERE c.match_id = m.id \
                                ORDER BY c.seq DESC LIMIT 1), m.created_at) DESC \
             LIMIT $1",
        )
        .bind(limit)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|r| Ok(r.try_get("id")?))
        .collect()
    }
}

/// A Postgres writer: waits for its turn at the queue, takes every append queued now, and writes
/// them in one transaction while the next writer takes the next group.
async fn pg_writer(pool: PgPool, rx: Arc<Mutex<mpsc::Receiver<WriteReq>>>) {
    // The writer keeps one connection of the pool: sqlx pings a connection each time it goes
    // back to the pool (a round trip to Postgres), which was one more round trip a group. It is
    // given back (and tested) after an error, and taken again for the next group; and when the
    // pool closes (the server's shutdown), which waits for every connection to come back.
    let mut held: Option<sqlx::pool::PoolConnection<sqlx::Postgres>> = None;
    let mut closing = std::pin::pin!(pool.close_event());
    loop {
        let next = async {
            let mut rx = rx.lock().await;
            let first = rx.recv().await?;
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
            Ok(()) => {
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
            // already stored, say) fails without its neighbours.
            Err(_) => {
                for req in group {
                    let result = append_one(&pool, &req).await;
                    let _ = req.reply.send(result);
                }
            }
        }
    }
}

/// The whole group in ONE statement, so one round trip and one implicit transaction: every record
/// in one multi-row insert (`UNNEST` of arrays), the matches' new statuses and wake times in one
/// update (one row per match: a statement may not update a row twice). Was `BEGIN`, insert,
/// updates and `COMMIT`, four round trips a group.
async fn write_group(conn: &mut sqlx::PgConnection, group: &[WriteReq]) -> Result<(), StoreError> {
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
    Ok(())
}

/// One match's append in its own transaction (a failed group's appends, one by one).
async fn append_one(pool: &PgPool, req: &WriteReq) -> Result<(), StoreError> {
    let mut tx = pool.begin().await?;
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

// Accounts, sessions and lobbies (issue 12).

use super::{AccountRow, LobbyRow, MatchAccess, SessionRow};

fn account_row(r: &PgRow) -> Result<AccountRow, StoreError> {
    let kind: String = r.try_get("kind")?;
    Ok(AccountRow {
        id: r.try_get("id")?,
        name: r.try_get("name")?,
        name_key: r.try_get("name_key")?,
        registered: kind == "registered",
        password_hash: r.try_get("password_hash")?,
        admin: r.try_get("admin")?,
        created_at: r.try_get("created_at")?,
    })
}

fn session_row(r: &PgRow) -> Result<SessionRow, StoreError> {
    Ok(SessionRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        token_hash: r.try_get("token_hash")?,
        created_at: r.try_get("created_at")?,
    })
}

fn lobby_row(r: &PgRow) -> Result<LobbyRow, StoreError> {
    let status: String = r.try_get("status")?;
    Ok(LobbyRow {
        id: r.try_get("id")?,
        started: status == "started",
        public: r.try_get("public")?,
        invite_code: r.try_get("invite_code")?,
        match_id: r.try_get("match_id")?,
        state: r.try_get("state")?,
    })
}

const ACCOUNT_COLUMNS: &str = "a.id AS id, a.name AS name, a.name_key AS name_key, a.kind AS kind, \
     a.password_hash AS password_hash, a.admin AS admin, a.created_at AS created_at";

async fn insert_session(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    s: &SessionRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO sessions (id, account_id, token_hash, created_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(s.id)
    .bind(s.account_id)
    .bind(&s.token_hash)
    .bind(s.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn upsert_lobby(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    l: &LobbyRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO lobbies (id, status, public, invite_code, match_id, state, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7) \
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, public = excluded.public, \
         invite_code = excluded.invite_code, match_id = excluded.match_id, \
         state = excluded.state, updated_at = excluded.updated_at",
    )
    .bind(l.id)
    .bind(if l.started { "started" } else { "open" })
    .bind(l.public)
    .bind(&l.invite_code)
    .bind(l.match_id)
    .bind(&l.state)
    .bind(Utc::now())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

impl PgStore {
    pub async fn create_account(&self, a: &AccountRow, s: &SessionRow) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO accounts (id, name, name_key, kind, password_hash, admin, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(a.id)
        .bind(&a.name)
        .bind(&a.name_key)
        .bind(if a.registered { "registered" } else { "guest" })
        .bind(&a.password_hash)
        .bind(a.admin)
        .bind(a.created_at)
        .execute(&mut *tx)
        .await?;
        insert_session(&mut tx, s).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn registered_account(
        &self,
        name_key: &str,
    ) -> Result<Option<AccountRow>, StoreError> {
        sqlx::query(&format!(
            "SELECT {ACCOUNT_COLUMNS} FROM accounts a \
             WHERE a.name_key = $1 AND a.kind = 'registered'"
        ))
        .bind(name_key)
        .fetch_optional(&self.pool)
        .await?
        .map(|r| account_row(&r))
        .transpose()
    }

    pub async fn create_session(&self, s: &SessionRow) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        insert_session(&mut tx, s).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn session_account(
        &self,
        token_hash: &str,
    ) -> Result<Option<(Uuid, AccountRow)>, StoreError> {
        let Some(r) = sqlx::query(&format!(
            "SELECT s.id AS session_id, {ACCOUNT_COLUMNS} FROM sessions s \
             JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = $1"
        ))
        .bind(token_hash)
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        Ok(Some((r.try_get("session_id")?, account_row(&r)?)))
    }

    pub async fn sessions_of(&self, account_id: Uuid) -> Result<Vec<SessionRow>, StoreError> {
        sqlx::query(
            "SELECT id, account_id, token_hash, created_at FROM sessions \
             WHERE account_id = $1 ORDER BY created_at, id",
        )
        .bind(account_id)
        .fetch_all(&self.pool)
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
                sqlx::query("DELETE FROM sessions WHERE account_id = $1 AND id = $2")
                    .bind(account_id)
                    .bind(id)
                    .execute(&self.pool)
                    .await?
            }
            None => {
                sqlx::query("DELETE FROM sessions WHERE account_id = $1")
                    .bind(account_id)
                    .execute(&self.pool)
                    .await?
            }
        };
        Ok(done.rows_affected())
    }

    pub async fn seat_of_account(
        &self,
        match_id: Uuid,
        account_id: Uuid,
    ) -> Result<Option<u8>, StoreError> {
        sqlx::query(
            "SELECT seat FROM seat_accounts WHERE match_id = $1 AND account_id = $2 \
             ORDER BY seat LIMIT 1",
        )
        .bind(match_id)
        .bind(account_id)
        .fetch_optional(&self.pool)
        .await?
        .map(|r| seat(&r))
        .transpose()
    }

    pub async fn save_lobby(&self, l: &LobbyRow) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        upsert_lobby(&mut tx, l).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn delete_lobby(&self, id: Uuid) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM lobbies WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn live_lobbies(&self) -> Result<Vec<LobbyRow>, StoreError> {
        sqlx::query(
            "SELECT l.id AS id, l.status AS status, l.public AS public, \
             l.invite_code AS invite_code, l.match_id AS match_id, l.state::text AS state \
             FROM lobbies l LEFT JOIN matches m ON m.id = l.match_id \
             WHERE l.status = 'open' OR m.status = 'active'",
        )
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(lobby_row)
        .collect()
    }

    pub async fn match_access(&self, match_id: Uuid) -> Result<Option<MatchAccess>, StoreError> {
        let Some(r) = sqlx::query("SELECT public, invite_code FROM lobbies WHERE match_id = $1")
            .bind(match_id)
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(None);
        };
        Ok(Some(MatchAccess {
            public: r.try_get("public")?,
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
        let mut tx = self.pool.begin().await?;
        insert_match(&mut tx, m, seats).await?;
        for (seat, account) in owners {
            sqlx::query(
                "INSERT INTO seat_accounts (match_id, seat, account_id) VALUES ($1, $2, $3)",
            )
            .bind(m.id)
            .bind(i16::from(*seat))
            .bind(*account)
            .execute(&mut *tx)
            .await?;
        }
        upsert_lobby(&mut tx, lobby).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// The match row and its seats, in the caller's transaction: a match created by `POST
/// /api/matches` and one started by a lobby are stored alike.
async fn insert_match(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    m: &MatchRow,
    seats: &[SeatRow],
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO matches \
         (id, setup, status, rules_version, created_at, updated_at, decision_timeout_ms, \
          clock_bank_ms, clock_increment_ms, wake_at) \
         VALUES ($1, $2::jsonb, $3, $4, $5, $5, $6, $7, $8, $9)",
    )
    .bind(m.id)
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
            "INSERT INTO seats (match_id, seat, colour, token_hash) VALUES ($1, $2, $3, $4)",
        )
        .bind(m.id)
        .bind(i16::from(s.seat))
        .bind(&s.colour)
        .bind(&s.token_hash)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}
