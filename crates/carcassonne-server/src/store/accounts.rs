//! Accounts and their sessions, both dialects, and the seat an account holds in a match.

use super::postgres::seat;
use super::sqlite::uuid_text;
use super::{AccountRow, PgStore, SessionRow, SqliteStore, StoreError, seat_from_db};
use sqlx::Row;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

const ACCOUNT_COLUMNS: &str = "a.id AS id, a.name AS name, a.name_key AS name_key, a.kind AS kind, \
     a.password_hash AS password_hash, a.admin AS admin, a.created_at AS created_at";

/// What [`super::Store::create_session`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewSession {
    /// The session was stored.
    Opened,
    /// The account already holds this many live sessions, the cap or more: nothing stored.
    Full(usize),
}

// SQLite.

fn sqlite_account_row(r: &SqliteRow) -> Result<AccountRow, StoreError> {
    let kind: String = r.try_get("kind")?;
    Ok(AccountRow {
        id: uuid_text(r, "id")?,
        name: r.try_get("name")?,
        name_key: r.try_get("name_key")?,
        registered: kind == "registered",
        password_hash: r.try_get("password_hash")?,
        admin: r.try_get::<i64, _>("admin")? != 0,
        created_at: r.try_get("created_at")?,
    })
}

fn sqlite_session_row(r: &SqliteRow) -> Result<SessionRow, StoreError> {
    Ok(SessionRow {
        id: uuid_text(r, "id")?,
        account_id: uuid_text(r, "account_id")?,
        token_hash: r.try_get("token_hash")?,
        created_at: r.try_get("created_at")?,
    })
}

async fn sqlite_insert_session(
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

impl SqliteStore {
    pub async fn create_account(&self, a: &AccountRow, s: &SessionRow) -> Result<(), StoreError> {
        let mut conn = self.writing().await?;
        let mut tx = conn.begin().await?;
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
        sqlite_insert_session(&mut tx, s).await?;
        tx.commit().await?;
        drop(conn);
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
        .map(|r| sqlite_account_row(&r))
        .transpose()
    }

    pub async fn create_session(
        &self,
        s: &SessionRow,
        max_sessions: usize,
    ) -> Result<NewSession, StoreError> {
        // Every write goes through the one writing connection, so this transaction runs alone:
        // no other session of the account can be inserted between the count and the insert.
        let mut conn = self.writing().await?;
        let mut tx = conn.begin().await?;
        let live: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions WHERE account_id = ?1")
            .bind(s.account_id.to_string())
            .fetch_one(&mut *tx)
            .await?;
        let live = usize::try_from(live).unwrap_or(usize::MAX);
        if live >= max_sessions {
            tx.rollback().await?;
            return Ok(NewSession::Full(live));
        }
        sqlite_insert_session(&mut tx, s).await?;
        tx.commit().await?;
        drop(conn);
        self.sync().await?;
        Ok(NewSession::Opened)
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
        Ok(Some((
            uuid_text(&r, "session_id")?,
            sqlite_account_row(&r)?,
        )))
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
        .map(sqlite_session_row)
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
                    .execute(&mut *self.writing().await?)
                    .await?
            }
            None => {
                sqlx::query("DELETE FROM sessions WHERE account_id = ?1")
                    .bind(account_id.to_string())
                    .execute(&mut *self.writing().await?)
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
}

// Postgres.

fn pg_account_row(r: &PgRow) -> Result<AccountRow, StoreError> {
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

fn pg_session_row(r: &PgRow) -> Result<SessionRow, StoreError> {
    Ok(SessionRow {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        token_hash: r.try_get("token_hash")?,
        created_at: r.try_get("created_at")?,
    })
}

async fn pg_insert_session(
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
        pg_insert_session(&mut tx, s).await?;
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
        .map(|r| pg_account_row(&r))
        .transpose()
    }

    pub async fn create_session(
        &self,
        s: &SessionRow,
        max_sessions: usize,
    ) -> Result<NewSession, StoreError> {
        let mut tx = self.pool.begin().await?;
        // The account's row lock serializes the log-ins of one account: the next one counts
        // (in a fresh snapshot, read committed) only after this one committed its insert.
        sqlx::query("SELECT id FROM accounts WHERE id = $1 FOR UPDATE")
            .bind(s.account_id)
            .execute(&mut *tx)
            .await?;
        let live: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions WHERE account_id = $1")
            .bind(s.account_id)
            .fetch_one(&mut *tx)
            .await?;
        let live = usize::try_from(live).unwrap_or(usize::MAX);
        if live >= max_sessions {
            tx.rollback().await?;
            return Ok(NewSession::Full(live));
        }
        pg_insert_session(&mut tx, s).await?;
        tx.commit().await?;
        Ok(NewSession::Opened)
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
        Ok(Some((r.try_get("session_id")?, pg_account_row(&r)?)))
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
        .map(pg_session_row)
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
}
