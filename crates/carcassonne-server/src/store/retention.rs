//! Retention: what the store deletes once it is old enough, in both dialects. The caller gives
//! the cutoffs (computed from its clock), so that tests pass any "now".
//!
//! - A guest account is unused when it was created before its cutoff and since then has not
//!   ended a match, said a chat line, nor holds a seat in an unfinished match or a place in an
//!   open lobby. It goes with its sessions and its seats' bindings; the matches it played keep
//!   every row (seats, commands, chat lines with the name said then): a seat without an account
//!   is still played by its seat token.
//! - A chat line goes when it is older than its cutoff.
//! - A finished or aborted match goes, with every row of it (commands, seats, bindings, chat,
//!   the lobby that started it), when it ended before its cutoff. Broken matches stay for
//!   inspection, and the admin audit trail keeps its entries.

use super::{PgStore, SqliteStore, StoreError};
use chrono::{DateTime, Utc};
use sqlx::Row;
use uuid::Uuid;

/// What a pass deletes: everything of a kind older than its cutoff; `None` keeps the kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cutoffs {
    pub guests: Option<DateTime<Utc>>,
    pub chat: Option<DateTime<Utc>>,
    pub matches: Option<DateTime<Utc>>,
}

impl Cutoffs {
    /// The cutoffs `days` before `now`, per kind (guests, chat, matches).
    pub fn before(now: DateTime<Utc>, days: [Option<u32>; 3]) -> Cutoffs {
        let ago = |d: Option<u32>| d.map(|d| now - chrono::Duration::days(i64::from(d)));
        Cutoffs {
            guests: ago(days[0]),
            chat: ago(days[1]),
            matches: ago(days[2]),
        }
    }
}

/// Rows deleted by a pass, per kind (a guest is one account, a match one match).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Deleted {
    pub guests: u64,
    pub chat: u64,
    pub matches: u64,
}

/// SQLite compares times by `julianday`: the stored texts are RFC 3339 with a varying number of
/// fractional digits, which do not all sort as text.
const SQLITE_STALE_GUESTS: &str = "SELECT a.id FROM accounts a \
     WHERE a.kind = 'guest' AND julianday(a.created_at) < julianday(?1) \
     AND NOT EXISTS (SELECT 1 FROM seat_accounts sa JOIN matches m ON m.id = sa.match_id \
         WHERE sa.account_id = a.id \
         AND (m.status = 'active' OR julianday(m.updated_at) >= julianday(?1))) \
     AND NOT EXISTS (SELECT 1 FROM chat c WHERE c.account_id = a.id \
         AND julianday(c.at) >= julianday(?1)) \
     AND NOT EXISTS (SELECT 1 FROM lobbies l WHERE l.status = 'open' \
         AND instr(l.state, a.id) > 0)";

const SQLITE_OLD_MATCHES: &str = "SELECT id FROM matches \
     WHERE status IN ('finished', 'aborted') AND julianday(updated_at) < julianday(?1)";

/// The tables that hold a match's rows, children first.
const MATCH_TABLES: [&str; 5] = ["commands", "seat_accounts", "seats", "chat", "lobbies"];

impl SqliteStore {
    pub(super) async fn purge(&self, cutoffs: &Cutoffs) -> Result<Deleted, StoreError> {
        let mut deleted = Deleted::default();
        if let Some(at) = cutoffs.guests {
            let mut conn = self.writing().await?;
            let mut tx = conn.begin().await?;
            let ids: Vec<String> = sqlx::query(SQLITE_STALE_GUESTS)
                .bind(at)
                .fetch_all(&mut *tx)
                .await?
                .iter()
                .map(|r| r.try_get("id"))
                .collect::<Result<_, _>>()?;
            let ids =
                serde_json::to_string(&ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            for table in ["sessions", "seat_accounts"] {
                sqlx::query(&format!(
                    "DELETE FROM {table} WHERE account_id IN (SELECT value FROM json_each(?1))"
                ))
                .bind(&ids)
                .execute(&mut *tx)
                .await?;
            }
            deleted.guests =
                sqlx::query("DELETE FROM accounts WHERE id IN (SELECT value FROM json_each(?1))")
                    .bind(&ids)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            tx.commit().await?;
        }
        if let Some(at) = cutoffs.chat {
            deleted.chat = sqlx::query("DELETE FROM chat WHERE julianday(at) < julianday(?1)")
                .bind(at)
                .execute(&mut *self.writing().await?)
                .await?
                .rows_affected();
        }
        if let Some(at) = cutoffs.matches {
            let mut conn = self.writing().await?;
            let mut tx = conn.begin().await?;
            let ids: Vec<String> = sqlx::query(SQLITE_OLD_MATCHES)
                .bind(at)
                .fetch_all(&mut *tx)
                .await?
                .iter()
                .map(|r| r.try_get("id"))
                .collect::<Result<_, _>>()?;
            let ids =
                serde_json::to_string(&ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            for table in MATCH_TABLES {
                sqlx::query(&format!(
                    "DELETE FROM {table} WHERE match_id IN (SELECT value FROM json_each(?1))"
                ))
                .bind(&ids)
                .execute(&mut *tx)
                .await?;
            }
            deleted.matches =
                sqlx::query("DELETE FROM matches WHERE id IN (SELECT value FROM json_each(?1))")
                    .bind(&ids)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            tx.commit().await?;
        }
        // Deletions are answered like every other write: once on disk.
        self.sync().await?;
        Ok(deleted)
    }
}

const PG_STALE_GUESTS: &str = "SELECT a.id FROM accounts a \
     WHERE a.kind = 'guest' AND a.created_at < $1 \
     AND NOT EXISTS (SELECT 1 FROM seat_accounts sa JOIN matches m ON m.id = sa.match_id \
         WHERE sa.account_id = a.id AND (m.status = 'active' OR m.updated_at >= $1)) \
     AND NOT EXISTS (SELECT 1 FROM chat c WHERE c.account_id = a.id AND c.at >= $1) \
     AND NOT EXISTS (SELECT 1 FROM lobbies l WHERE l.status = 'open' \
         AND strpos(l.state::text, a.id::text) > 0)";

const PG_OLD_MATCHES: &str = "SELECT id FROM matches \
     WHERE status IN ('finished', 'aborted') AND updated_at < $1";

impl PgStore {
    pub(super) async fn purge(&self, cutoffs: &Cutoffs) -> Result<Deleted, StoreError> {
        let mut deleted = Deleted::default();
        if let Some(at) = cutoffs.guests {
            let mut tx = self.pool.begin().await?;
            let ids: Vec<Uuid> = sqlx::query(PG_STALE_GUESTS)
                .bind(at)
                .fetch_all(&mut *tx)
                .await?
                .iter()
                .map(|r| r.try_get("id"))
                .collect::<Result<_, _>>()?;
            for table in ["sessions", "seat_accounts"] {
                sqlx::query(&format!("DELETE FROM {table} WHERE account_id = ANY($1)"))
                    .bind(&ids)
                    .execute(&mut *tx)
                    .await?;
            }
            deleted.guests = sqlx::query("DELETE FROM accounts WHERE id = ANY($1)")
                .bind(&ids)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            tx.commit().await?;
        }
        if let Some(at) = cutoffs.chat {
            deleted.chat = sqlx::query("DELETE FROM chat WHERE at < $1")
                .bind(at)
                .execute(&self.pool)
                .await?
                .rows_affected();
        }
        if let Some(at) = cutoffs.matches {
            let mut tx = self.pool.begin().await?;
            let ids: Vec<Uuid> = sqlx::query(PG_OLD_MATCHES)
                .bind(at)
                .fetch_all(&mut *tx)
                .await?
                .iter()
                .map(|r| r.try_get("id"))
                .collect::<Result<_, _>>()?;
            for table in MATCH_TABLES {
                sqlx::query(&format!("DELETE FROM {table} WHERE match_id = ANY($1)"))
                    .bind(&ids)
                    .execute(&mut *tx)
                    .await?;
            }
            deleted.matches = sqlx::query("DELETE FROM matches WHERE id = ANY($1)")
                .bind(&ids)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            tx.commit().await?;
        }
        Ok(deleted)
    }
}
