//! The Postgres dialect, used when a database URL is given. JSON columns are `jsonb`, read back
//! as text. Postgres coalesces concurrent commits itself, so appends go straight to the pool.

use super::{
    Append, CommandRow, MatchRow, MatchStatus, SeatRow, Seqs, StoreError, clock_from_db,
    clock_to_db, seat_from_db, seq_from_db, seq_to_db, timeout_from_db, timeout_to_db,
};
use chrono::Utc;
use sqlx::Row;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use std::str::FromStr;
use std::time::Duration;
use uuid::Uuid;

static MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

#[derive(Debug, Clone)]
pub struct PgStore {
    pub(super) pool: PgPool,
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
        Ok(PgStore { pool })
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
        sqlx::query(
            "INSERT INTO matches \
             (id, setup, status, rules_version, created_at, updated_at, decision_timeout_ms, \
              clock_bank_ms, clock_increment_ms) \
             VALUES ($1, $2::jsonb, $3, $4, $5, $5, $6, $7, $8)",
        )
        .bind(m.id)
        .bind(&m.setup)
        .bind(m.status.as_str())
        .bind(&m.rules_version)
        .bind(m.created_at)
        .bind(timeout_to_db(m.decision_timeout_ms))
        .bind(clock_to_db(m.clock).0)
        .bind(clock_to_db(m.clock).1)
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
             decision_timeout_ms, clock_bank_ms, clock_increment_ms FROM matches WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .map(|r| match_row(id, &r))
        .transpose()
    }

    pub async fn commands(&self, id: Uuid, seqs: Seqs) -> Result<Vec<CommandRow>, StoreError> {
        sqlx::query(
            "SELECT seq, seat, command_id, command::text AS command, events::text AS events, \
             patch::text AS patch, created_at FROM commands \
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

    pub async fn append(&self, id: Uuid, append: Append<'_>) -> Result<(), StoreError> {
        let Append { records, status } = append;
        let mut tx = self.pool.begin().await?;
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
                .bind(Utc::now())
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn unfinished(&self) -> Result<Vec<Uuid>, StoreError> {
        sqlx::query("SELECT id FROM matches WHERE status = 'active' ORDER BY created_at")
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| Ok(r.try_get("id")?))
            .collect()
    }
}
