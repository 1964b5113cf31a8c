//! An account's life cycle, both dialects: its standing (kind, suspension), a new password
//! (the other sessions revoked in the same transaction), one-time reset links, deletion (the
//! account kept under a placeholder name so that its matches keep their seats; its chat lines,
//! sessions and reset links gone), and what the "my games" list and the export read beyond the
//! match list: whose turn it is, the account's chat lines, its seats in running matches.

use super::sqlite::uuid_text;
use super::{PgStore, SqliteStore, Store, StoreError, seat_from_db};
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

/// The name a deleted account's seats show.
pub const DELETED_NAME: &str = "deleted player";

/// An account as moderation sees it.
#[derive(Debug, Clone)]
pub struct StandingRow {
    pub id: Uuid,
    pub name: String,
    /// `guest`, `registered` or `deleted`.
    pub kind: String,
    pub created_at: DateTime<Utc>,
    /// Since when, until when (`None`: for good), why.
    pub suspension: Option<SuspensionRow>,
    pub sessions: i64,
}

/// A suspension as stored (maybe over: the caller compares `until` with its clock).
#[derive(Debug, Clone)]
pub struct SuspensionRow {
    pub since: DateTime<Utc>,
    pub until: Option<DateTime<Utc>>,
    pub reason: String,
}

impl SuspensionRow {
    /// Whether it still holds at `now`.
    pub fn in_force(&self, now: DateTime<Utc>) -> bool {
        self.until.is_none_or(|u| u > now)
    }
}

/// A reset link as stored: only the token's hash.
#[derive(Debug, Clone)]
pub struct ResetRow {
    pub token_hash: String,
    pub account_id: Uuid,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

const STANDING: &str = "SELECT id, name, kind, created_at, suspended_at, suspended_until, \
     suspension_reason, (SELECT COUNT(*) FROM sessions s WHERE s.account_id = a.id) AS sessions \
     FROM accounts a WHERE a.id = ";

fn suspension(
    at: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
    reason: Option<String>,
) -> Option<SuspensionRow> {
    at.map(|since| SuspensionRow {
        since,
        until,
        reason: reason.unwrap_or_default(),
    })
}

fn sqlite_standing(r: &SqliteRow) -> Result<StandingRow, StoreError> {
    Ok(StandingRow {
        id: uuid_text(r, "id")?,
        name: r.try_get("name")?,
        kind: r.try_get("kind")?,
        created_at: r.try_get("created_at")?,
        suspension: suspension(
            r.try_get("suspended_at")?,
            r.try_get("suspended_until")?,
            r.try_get("suspension_reason")?,
        ),
        sessions: r.try_get("sessions")?,
    })
}

fn pg_standing(r: &PgRow) -> Result<StandingRow, StoreError> {
    Ok(StandingRow {
        id: r.try_get("id")?,
        name: r.try_get("name")?,
        kind: r.try_get("kind")?,
        created_at: r.try_get("created_at")?,
        suspension: suspension(
            r.try_get("suspended_at")?,
            r.try_get("suspended_until")?,
            r.try_get("suspension_reason")?,
        ),
        sessions: r.try_get("sessions")?,
    })
}

/// The events (JSON) and time of the last command that began a turn.
type TurnRecord = Option<(String, DateTime<Utc>)>;

/// A started lobby's state with the deleted account's name replaced; `None` when it does not
/// name the account.
fn renamed(state: &str, account: Uuid) -> Result<Option<String>, StoreError> {
    let mut lobby: protocol::LobbyState =
        serde_json::from_str(state).map_err(|e| StoreError::Corrupt(format!("lobby: {e}")))?;
    let mut hit = false;
    for seat in &mut lobby.seats {
        if let Some(protocol::Occupant::Player {
            account_id, name, ..
        }) = &mut seat.occupant
            && *account_id == account
        {
            *name = DELETED_NAME.to_string();
            hit = true;
        }
    }
    if !hit {
        return Ok(None);
    }
    serde_json::to_string(&lobby)
        .map(Some)
        .map_err(|e| StoreError::Corrupt(format!("lobby: {e}")))
}

impl SqliteStore {
    async fn standing(&self, id: Uuid) -> Result<Option<StandingRow>, StoreError> {
        sqlx::query(&format!("{STANDING}?1"))
            .bind(id.to_string())
            .fetch_optional(&self.read)
            .await?
            .map(|r| sqlite_standing(&r))
            .transpose()
    }

    async fn set_suspension(
        &self,
        id: Uuid,
        s: Option<&SuspensionRow>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE accounts SET suspended_at = ?2, suspended_until = ?3, suspension_reason = ?4 \
             WHERE id = ?1 AND kind <> 'deleted'",
        )
        .bind(id.to_string())
        .bind(s.map(|s| s.since))
        .bind(s.and_then(|s| s.until))
        .bind(s.map(|s| s.reason.clone()))
        .execute(&mut *self.writing().await?)
        .await?;
        self.sync().await?;
        Ok(done.rows_affected() > 0)
    }

    async fn set_password(
        &self,
        id: Uuid,
        phc: &str,
        keep: Option<Uuid>,
    ) -> Result<Vec<Uuid>, StoreError> {
        let mut conn = self.writing().await?;
        let mut tx = conn.begin().await?;
        sqlx::query("UPDATE accounts SET password_hash = ?2 WHERE id = ?1")
            .bind(id.to_string())
            .bind(phc)
            .execute(&mut *tx)
            .await?;
        let keep = keep.map(|k| k.to_string()).unwrap_or_default();
        let gone =
            sqlx::query("DELETE FROM sessions WHERE account_id = ?1 AND id <> ?2 RETURNING id")
                .bind(id.to_string())
                .bind(keep)
                .fetch_all(&mut *tx)
                .await?
                .iter()
                .map(|r| uuid_text(r, "id"))
                .collect::<Result<Vec<_>, _>>()?;
        tx.commit().await?;
        drop(conn);
        self.sync().await?;
        Ok(gone)
    }

    async fn create_reset(&self, r: &ResetRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO password_resets (token_hash, account_id, created_at, expires_at) \
             VALUES (?1, ?2, ?3, ?4)",
        )
        .bind(&r.token_hash)
        .bind(r.account_id.to_string())
        .bind(r.created_at)
        .bind(r.expires_at)
        .execute(&mut *self.writing().await?)
        .await?;
        self.sync().await
    }

    async fn redeem_reset(
        &self,
        token_hash: &str,
        phc: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Uuid>, StoreError> {
        let mut conn = self.writing().await?;
        let mut tx = conn.begin().await?;
        let row = sqlx::query(
            "SELECT r.account_id, r.expires_at FROM password_resets r \
             JOIN accounts a ON a.id = r.account_id \
             WHERE r.token_hash = ?1 AND r.used_at IS NULL AND a.kind = 'registered'",
        )
        .bind(token_hash)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let expires: DateTime<Utc> = row.try_get("expires_at")?;
        if expires <= now {
            return Ok(None);
        }
        let account = uuid_text(&row, "account_id")?;
        sqlx::query("UPDATE password_resets SET used_at = ?2 WHERE token_hash = ?1")
            .bind(token_hash)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE accounts SET password_hash = ?2 WHERE id = ?1")
            .bind(account.to_string())
            .bind(phc)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM sessions WHERE account_id = ?1")
            .bind(account.to_string())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        drop(conn);
        self.sync().await?;
        Ok(Some(account))
    }

    async fn delete_account(&self, id: Uuid, now: DateTime<Utc>) -> Result<(), StoreError> {
        let key = id.to_string();
        let mut conn = self.writing().await?;
        let mut tx = conn.begin().await?;
        for sql in [
            "DELETE FROM sessions WHERE account_id = ?1",
            "DELETE FROM chat WHERE account_id = ?1",
            "DELETE FROM password_resets WHERE account_id = ?1",
            "DELETE FROM webhooks WHERE account_id = ?1",
            "UPDATE reports SET chat_text = NULL WHERE account_id = ?1",
        ] {
            sqlx::query(sql).bind(&key).execute(&mut *tx).await?;
        }
        sqlx::query(
            "UPDATE accounts SET kind = 'deleted', name = ?2, name_key = ?3, \
             password_hash = NULL, admin = 0, deleted_at = ?4 WHERE id = ?1",
        )
        .bind(&key)
        .bind(DELETED_NAME)
        .bind(format!("deleted:{key}"))
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let lobbies = sqlx::query(
            "SELECT id, state FROM lobbies WHERE status = 'started' AND instr(state, ?1) > 0",
        )
        .bind(&key)
        .fetch_all(&mut *tx)
        .await?;
        for r in lobbies {
            let state: String = r.try_get("state")?;
            if let Some(state) = renamed(&state, id)? {
                let lobby: String = r.try_get("id")?;
                sqlx::query("UPDATE lobbies SET state = ?2 WHERE id = ?1")
                    .bind(lobby)
                    .bind(state)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        drop(conn);
        self.sync().await
    }

    async fn last_turn(&self, match_id: Uuid) -> Result<TurnRecord, StoreError> {
        sqlx::query(
            "SELECT events, created_at FROM commands WHERE match_id = ?1 \
             AND instr(events, '\"turn_started\"') > 0 ORDER BY seq DESC LIMIT 1",
        )
        .bind(match_id.to_string())
        .fetch_optional(&self.read)
        .await?
        .map(|r| Ok((r.try_get("events")?, r.try_get("created_at")?)))
        .transpose()
    }

    async fn running_seats_of(&self, account: Uuid) -> Result<Vec<(Uuid, u8)>, StoreError> {
        sqlx::query(
            "SELECT sa.match_id, sa.seat FROM seat_accounts sa \
             JOIN matches m ON m.id = sa.match_id \
             WHERE sa.account_id = ?1 AND m.status = 'active' ORDER BY sa.match_id, sa.seat",
        )
        .bind(account.to_string())
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(|r| Ok((uuid_text(r, "match_id")?, seat_from_db(r.try_get("seat")?)?)))
        .collect()
    }

    async fn open_lobbies_of(&self, account: Uuid) -> Result<Vec<Uuid>, StoreError> {
        sqlx::query("SELECT id FROM lobbies WHERE status = 'open' AND instr(state, ?1) > 0")
            .bind(account.to_string())
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(|r| uuid_text(r, "id"))
            .collect()
    }
}

impl PgStore {
    async fn standing(&self, id: Uuid) -> Result<Option<StandingRow>, StoreError> {
        sqlx::query(&format!("{STANDING}$1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .map(|r| pg_standing(&r))
            .transpose()
    }

    async fn set_suspension(
        &self,
        id: Uuid,
        s: Option<&SuspensionRow>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE accounts SET suspended_at = $2, suspended_until = $3, suspension_reason = $4 \
             WHERE id = $1 AND kind <> 'deleted'",
        )
        .bind(id)
        .bind(s.map(|s| s.since))
        .bind(s.and_then(|s| s.until))
        .bind(s.map(|s| s.reason.clone()))
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn set_password(
        &self,
        id: Uuid,
        phc: &str,
        keep: Option<Uuid>,
    ) -> Result<Vec<Uuid>, StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("UPDATE accounts SET password_hash = $2 WHERE id = $1")
            .bind(id)
            .bind(phc)
            .execute(&mut *tx)
            .await?;
        let gone = sqlx::query(
            "DELETE FROM sessions WHERE account_id = $1 AND ($2::uuid IS NULL OR id <> $2) \
             RETURNING id",
        )
        .bind(id)
        .bind(keep)
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|r| r.try_get("id"))
        .collect::<Result<Vec<Uuid>, _>>()?;
        tx.commit().await?;
        Ok(gone)
    }

    async fn create_reset(&self, r: &ResetRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO password_resets (token_hash, account_id, created_at, expires_at) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(&r.token_hash)
        .bind(r.account_id)
        .bind(r.created_at)
        .bind(r.expires_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn redeem_reset(
        &self,
        token_hash: &str,
        phc: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Uuid>, StoreError> {
        let mut tx = self.pool.begin().await?;
        // The row lock makes a link single-use under concurrent redemptions.
        let row = sqlx::query(
            "SELECT r.account_id, r.expires_at FROM password_resets r \
             JOIN accounts a ON a.id = r.account_id \
             WHERE r.token_hash = $1 AND r.used_at IS NULL AND a.kind = 'registered' \
             FOR UPDATE OF r",
        )
        .bind(token_hash)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let expires: DateTime<Utc> = row.try_get("expires_at")?;
        if expires <= now {
            return Ok(None);
        }
        let account: Uuid = row.try_get("account_id")?;
        sqlx::query("UPDATE password_resets SET used_at = $2 WHERE token_hash = $1")
            .bind(token_hash)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE accounts SET password_hash = $2 WHERE id = $1")
            .bind(account)
            .bind(phc)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM sessions WHERE account_id = $1")
            .bind(account)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(account))
    }

    async fn delete_account(&self, id: Uuid, now: DateTime<Utc>) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        for sql in [
            "DELETE FROM sessions WHERE account_id = $1",
            "DELETE FROM chat WHERE account_id = $1",
            "DELETE FROM password_resets WHERE account_id = $1",
            "DELETE FROM webhooks WHERE account_id = $1",
            "UPDATE reports SET chat_text = NULL WHERE account_id = $1",
        ] {
            sqlx::query(sql).bind(id).execute(&mut *tx).await?;
        }
        sqlx::query(
            "UPDATE accounts SET kind = 'deleted', name = $2, name_key = $3, \
             password_hash = NULL, admin = FALSE, deleted_at = $4 WHERE id = $1",
        )
        .bind(id)
        .bind(DELETED_NAME)
        .bind(format!("deleted:{id}"))
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let lobbies = sqlx::query(
            "SELECT id, state::text AS state FROM lobbies \
             WHERE status = 'started' AND strpos(state::text, $1) > 0",
        )
        .bind(id.to_string())
        .fetch_all(&mut *tx)
        .await?;
        for r in lobbies {
            let state: String = r.try_get("state")?;
            if let Some(state) = renamed(&state, id)? {
                let lobby: Uuid = r.try_get("id")?;
                sqlx::query("UPDATE lobbies SET state = $2::jsonb WHERE id = $1")
                    .bind(lobby)
                    .bind(state)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    async fn last_turn(&self, match_id: Uuid) -> Result<TurnRecord, StoreError> {
        sqlx::query(
            "SELECT events::text AS events, created_at FROM commands WHERE match_id = $1 \
             AND strpos(events::text, '\"turn_started\"') > 0 ORDER BY seq DESC LIMIT 1",
        )
        .bind(match_id)
        .fetch_optional(&self.pool)
        .await?
        .map(|r| Ok((r.try_get("events")?, r.try_get("created_at")?)))
        .transpose()
    }

    async fn running_seats_of(&self, account: Uuid) -> Result<Vec<(Uuid, u8)>, StoreError> {
        sqlx::query(
            "SELECT sa.match_id, sa.seat FROM seat_accounts sa \
             JOIN matches m ON m.id = sa.match_id \
             WHERE sa.account_id = $1 AND m.status = 'active' ORDER BY sa.match_id, sa.seat",
        )
        .bind(account)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("match_id")?, super::postgres::seat(r)?)))
        .collect()
    }

    async fn open_lobbies_of(&self, account: Uuid) -> Result<Vec<Uuid>, StoreError> {
        sqlx::query("SELECT id FROM lobbies WHERE status = 'open' AND strpos(state::text, $1) > 0")
            .bind(account.to_string())
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| r.try_get("id").map_err(StoreError::from))
            .collect()
    }
}

macro_rules! dispatch {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match $self {
            Store::Sqlite(s) => s.$method($($arg),*).await,
            Store::Postgres(p) => p.$method($($arg),*).await,
        }
    };
}

impl Store {
    /// An account's kind, suspension and live sessions.
    pub async fn standing(&self, id: Uuid) -> Result<Option<StandingRow>, StoreError> {
        dispatch!(self.standing(id))
    }

    /// Suspends an account (`Some`) or lifts its suspension (`None`). False when there is no
    /// such account (or it was deleted).
    pub async fn set_suspension(
        &self,
        id: Uuid,
        s: Option<&SuspensionRow>,
    ) -> Result<bool, StoreError> {
        dispatch!(self.set_suspension(id, s))
    }

    /// A new password hash, and every session but `keep` revoked, in one transaction; the ids
    /// of the revoked sessions.
    pub async fn set_password(
        &self,
        id: Uuid,
        phc: &str,
        keep: Option<Uuid>,
    ) -> Result<Vec<Uuid>, StoreError> {
        dispatch!(self.set_password(id, phc, keep))
    }

    pub async fn create_reset(&self, r: &ResetRow) -> Result<(), StoreError> {
        dispatch!(self.create_reset(r))
    }

    /// Uses a reset link: if it is unused, unexpired at `now` and its account registered, marks
    /// it used, sets the password and revokes every session, in one transaction; the account.
    pub async fn redeem_reset(
        &self,
        token_hash: &str,
        phc: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Uuid>, StoreError> {
        dispatch!(self.redeem_reset(token_hash, phc, now))
    }

    /// Deletes an account in one transaction: its sessions, chat lines and reset links go, the
    /// texts of reports of its lines too, and the account stays as a `deleted` row named
    /// [`DELETED_NAME`] (also in the started lobbies that name its seats), so that its matches
    /// keep their seats.
    pub async fn delete_account(&self, id: Uuid, now: DateTime<Utc>) -> Result<(), StoreError> {
        dispatch!(self.delete_account(id, now))
    }

    /// The events and time of a match's last command that began a turn (none before the first
    /// command: the first seat's turn since the match's creation).
    pub async fn last_turn(&self, match_id: Uuid) -> Result<TurnRecord, StoreError> {
        dispatch!(self.last_turn(match_id))
    }

    /// The account's seats in active matches.
    pub async fn running_seats_of(&self, account: Uuid) -> Result<Vec<(Uuid, u8)>, StoreError> {
        dispatch!(self.running_seats_of(account))
    }

    /// The open lobbies whose state names the account (a candidate list: the caller checks).
    pub async fn open_lobbies_of(&self, account: Uuid) -> Result<Vec<Uuid>, StoreError> {
        dispatch!(self.open_lobbies_of(account))
    }
}
