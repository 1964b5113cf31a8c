//! Lobbies, both dialects: a lobby's row, the lobbies a restart keeps, who may watch a lobby's
//! match, and the one transaction that starts a lobby's match.

use super::matches::{pg_insert_match, sqlite_insert_match};
use super::sqlite::uuid_text;
use super::{LobbyRow, MatchAccess, MatchRow, PgStore, SeatRow, SqliteStore, StoreError};
use chrono::Utc;
use sqlx::Row;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

// SQLite.

fn sqlite_lobby_row(r: &SqliteRow) -> Result<LobbyRow, StoreError> {
    let status: String = r.try_get("status")?;
    let match_id: Option<String> = r.try_get("match_id")?;
    Ok(LobbyRow {
        id: uuid_text(r, "id")?,
        started: status == "started",
        public: r.try_get::<i64, _>("public")? != 0,
        invite_code: r.try_get("invite_code")?,
        match_id: match_id
            .map(|m| Uuid::parse_str(&m).map_err(|e| StoreError::Corrupt(e.to_string())))
            .transpose()?,
        state: r.try_get("state")?,
    })
}

async fn sqlite_upsert_lobby(
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
    pub async fn save_lobby(&self, l: &LobbyRow) -> Result<(), StoreError> {
        let mut tx = self.write.begin().await?;
        sqlite_upsert_lobby(&mut tx, l).await?;
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
        .map(sqlite_lobby_row)
        .collect()
    }

    pub async fn match_lobby_state(&self, match_id: Uuid) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT state FROM lobbies WHERE match_id = ?1")
                .bind(match_id.to_string())
                .fetch_optional(&self.read)
                .await?,
        )
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
        sqlite_insert_match(&mut tx, m, seats).await?;
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
        sqlite_upsert_lobby(&mut tx, lobby).await?;
        tx.commit().await?;
        self.sync().await
    }
}

// Postgres.

fn pg_lobby_row(r: &PgRow) -> Result<LobbyRow, StoreError> {
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

async fn pg_upsert_lobby(
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
    pub async fn save_lobby(&self, l: &LobbyRow) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        pg_upsert_lobby(&mut tx, l).await?;
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
        .map(pg_lobby_row)
        .collect()
    }

    pub async fn match_lobby_state(&self, match_id: Uuid) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT state::text FROM lobbies WHERE match_id = $1")
                .bind(match_id)
                .fetch_optional(&self.pool)
                .await?,
        )
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
        pg_insert_match(&mut tx, m, seats).await?;
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
        pg_upsert_lobby(&mut tx, lobby).await?;
        tx.commit().await?;
        Ok(())
    }
}
