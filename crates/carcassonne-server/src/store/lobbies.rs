//! Lobbies, both dialects: a lobby's row, the lobbies a restart keeps, who may watch a lobby's
//! match, and the one transaction that starts a lobby's match. On Postgres a write may carry its
//! owner's [`Fence`] (cluster mode): the lobby's lease is checked and key-share-locked in the
//! write's own transaction, so that a node that lost the lobby never writes it again.

use super::leases::{Fence, LeaseKey, check_fence};
use super::matches::{pg_insert_match, sqlite_insert_match};
use super::sqlite::uuid_text;
use super::{LobbyRow, MatchAccess, MatchRow, PgStore, SeatRow, SqliteStore, StoreError};
use chrono::Utc;
use sqlx::Row;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

// SQLite.

/// The version in a stored lobby's state (0 when absent).
fn version_of(state: &str) -> u64 {
    #[derive(serde::Deserialize)]
    struct Versioned {
        #[serde(default)]
        version: u64,
    }
    serde_json::from_str::<Versioned>(state).map_or(0, |v| v.version)
}

fn sqlite_lobby_row(r: &SqliteRow) -> Result<LobbyRow, StoreError> {
    let status: String = r.try_get("status")?;
    let state: String = r.try_get("state")?;
    let match_id: Option<String> = r.try_get("match_id")?;
    Ok(LobbyRow {
        id: uuid_text(r, "id")?,
        started: status == "started",
        public: r.try_get::<i64, _>("public")? != 0,
        invite_code: r.try_get("invite_code")?,
        match_id: match_id
            .map(|m| Uuid::parse_str(&m).map_err(|e| StoreError::Corrupt(e.to_string())))
            .transpose()?,
        version: version_of(&state),
        state,
    })
}

async fn sqlite_upsert_lobby(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    l: &LobbyRow,
) -> Result<(), StoreError> {
    let done = sqlx::query(
        "INSERT INTO lobbies (id, status, public, invite_code, match_id, state, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, public = excluded.public, \
         invite_code = excluded.invite_code, match_id = excluded.match_id, \
         state = excluded.state, updated_at = excluded.updated_at \
         WHERE json_extract(lobbies.state, '$.version') = ?8 - 1",
    )
    .bind(l.id.to_string())
    .bind(if l.started { "started" } else { "open" })
    .bind(i64::from(l.public))
    .bind(&l.invite_code)
    .bind(l.match_id.map(|m| m.to_string()))
    .bind(&l.state)
    .bind(Utc::now())
    .bind(i64::try_from(l.version).unwrap_or(i64::MAX))
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::StaleLobby(l.id));
    }
    Ok(())
}

impl SqliteStore {
    pub async fn save_lobby(&self, l: &LobbyRow) -> Result<(), StoreError> {
        let mut conn = self.writing().await?;
        let mut tx = conn.begin().await?;
        sqlite_upsert_lobby(&mut tx, l).await?;
        tx.commit().await?;
        drop(conn);
        self.sync().await
    }

    pub async fn delete_lobby(&self, id: Uuid, version: u64) -> Result<(), StoreError> {
        let done = sqlx::query(
            "DELETE FROM lobbies WHERE id = ?1 AND json_extract(state, '$.version') = ?2",
        )
        .bind(id.to_string())
        .bind(i64::try_from(version).unwrap_or(i64::MAX))
        .execute(&mut *self.writing().await?)
        .await?;
        self.sync().await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::StaleLobby(id));
        }
        Ok(())
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

    pub async fn lobby(&self, id: Uuid) -> Result<Option<LobbyRow>, StoreError> {
        sqlx::query(
            "SELECT id, status, public, invite_code, match_id, state FROM lobbies WHERE id = ?1",
        )
        .bind(id.to_string())
        .fetch_optional(&self.read)
        .await?
        .as_ref()
        .map(sqlite_lobby_row)
        .transpose()
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
        let mut conn = self.writing().await?;
        let mut tx = conn.begin().await?;
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
        drop(conn);
        self.sync().await
    }
}

// Postgres.

fn pg_lobby_row(r: &PgRow) -> Result<LobbyRow, StoreError> {
    let status: String = r.try_get("status")?;
    let state: String = r.try_get("state")?;
    Ok(LobbyRow {
        id: r.try_get("id")?,
        started: status == "started",
        public: r.try_get("public")?,
        invite_code: r.try_get("invite_code")?,
        match_id: r.try_get("match_id")?,
        version: version_of(&state),
        state,
    })
}

async fn pg_upsert_lobby(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    l: &LobbyRow,
) -> Result<(), StoreError> {
    let done = sqlx::query(
        "INSERT INTO lobbies (id, status, public, invite_code, match_id, state, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7) \
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, public = excluded.public, \
         invite_code = excluded.invite_code, match_id = excluded.match_id, \
         state = excluded.state, updated_at = excluded.updated_at \
         WHERE (lobbies.state->>'version')::bigint = $8 - 1",
    )
    .bind(l.id)
    .bind(if l.started { "started" } else { "open" })
    .bind(l.public)
    .bind(&l.invite_code)
    .bind(l.match_id)
    .bind(&l.state)
    .bind(Utc::now())
    .bind(i64::try_from(l.version).unwrap_or(i64::MAX))
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::StaleLobby(l.id));
    }
    Ok(())
}

/// The fence's check, first in a lobby write's transaction.
async fn pg_fenced(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    id: Uuid,
    fence: Option<&Fence>,
) -> Result<(), StoreError> {
    match fence {
        Some(fence) => check_fence(tx, LeaseKey::of_lobby(id), fence).await,
        None => Ok(()),
    }
}

impl PgStore {
    pub async fn save_lobby(&self, l: &LobbyRow, fence: Option<&Fence>) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        pg_fenced(&mut tx, l.id, fence).await?;
        pg_upsert_lobby(&mut tx, l).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn delete_lobby(
        &self,
        id: Uuid,
        version: u64,
        fence: Option<&Fence>,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        pg_fenced(&mut tx, id, fence).await?;
        let done =
            sqlx::query("DELETE FROM lobbies WHERE id = $1 AND (state->>'version')::bigint = $2")
                .bind(id)
                .bind(i64::try_from(version).unwrap_or(i64::MAX))
                .execute(&mut *tx)
                .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::StaleLobby(id));
        }
        tx.commit().await?;
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

    pub async fn lobby(&self, id: Uuid) -> Result<Option<LobbyRow>, StoreError> {
        sqlx::query(
            "SELECT id, status, public, invite_code, match_id, state::text AS state \
             FROM lobbies WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(pg_lobby_row)
        .transpose()
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
        fence: Option<&Fence>,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        pg_fenced(&mut tx, lobby.id, fence).await?;
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
