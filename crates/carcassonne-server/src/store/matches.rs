//! A match's rows, both dialects: the match and its seats, its command log, and the queries a
//! restart runs (unfinished, waking, recently played). Appends go through the writers
//! ([`super::sqlite_writer`], [`super::pg_writer`]).

use super::postgres::seat;
use super::sqlite::uuid_text;
use super::{
    CommandRow, MatchRow, MatchStatus, PgStore, SeatRow, Seqs, SqliteStore, StoreError,
    clock_from_db, clock_to_db, seat_from_db, seq_from_db, seq_to_db, timeout_from_db,
    timeout_to_db,
};
use sqlx::Row;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

// SQLite.

fn sqlite_match_row(id: Uuid, r: &SqliteRow) -> Result<MatchRow, StoreError> {
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

fn sqlite_seat_ref(r: &SqliteRow) -> Result<(Uuid, u8), StoreError> {
    Ok((uuid_text(r, "match_id")?, seat_from_db(r.try_get("seat")?)?))
}

fn sqlite_command_row(r: &SqliteRow) -> Result<CommandRow, StoreError> {
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
    pub async fn create_match(&self, m: &MatchRow, seats: &[SeatRow]) -> Result<(), StoreError> {
        let mut conn = self.writing().await?;
        let mut tx = conn.begin().await?;
        sqlite_insert_match(&mut tx, m, seats).await?;
        tx.commit().await?;
        drop(conn);
        self.sync().await
    }

    pub async fn seat_for_token(&self, token_hash: &str) -> Result<Option<(Uuid, u8)>, StoreError> {
        sqlx::query("SELECT match_id, seat FROM seats WHERE token_hash = ?1")
            .bind(token_hash)
            .fetch_optional(&self.read)
            .await?
            .map(|r| sqlite_seat_ref(&r))
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
        .map(|r| sqlite_match_row(id, &r))
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
        .map(sqlite_command_row)
        .collect()
    }

    pub async fn unfinished(&self) -> Result<Vec<Uuid>, StoreError> {
        sqlx::query("SELECT id FROM matches WHERE status = 'active' ORDER BY created_at")
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(|r| uuid_text(r, "id"))
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
            waking.push((uuid_text(&r, "id")?, r.try_get("wake_at")?));
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
        .map(|r| uuid_text(r, "id"))
        .collect()
    }
}

/// The match row and its seats, in the caller's transaction: a match created by `POST
/// /api/matches` and one started by a lobby are stored alike.
pub(super) async fn sqlite_insert_match(
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

// Postgres.

fn pg_match_row(id: Uuid, r: &PgRow) -> Result<MatchRow, StoreError> {
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

fn pg_seat_ref(r: &PgRow) -> Result<(Uuid, u8), StoreError> {
    Ok((r.try_get("match_id")?, seat(r)?))
}

fn pg_command_row(r: &PgRow) -> Result<CommandRow, StoreError> {
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
    pub async fn create_match(&self, m: &MatchRow, seats: &[SeatRow]) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        pg_insert_match(&mut tx, m, seats).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn seat_for_token(&self, token_hash: &str) -> Result<Option<(Uuid, u8)>, StoreError> {
        sqlx::query("SELECT match_id, seat FROM seats WHERE token_hash = $1")
            .bind(token_hash)
            .fetch_optional(&self.pool)
            .await?
            .map(|r| pg_seat_ref(&r))
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
        .map(|r| pg_match_row(id, &r))
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
        .map(pg_command_row)
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

/// The match row and its seats, in the caller's transaction: a match created by `POST
/// /api/matches` and one started by a lobby are stored alike.
pub(super) async fn pg_insert_match(
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
