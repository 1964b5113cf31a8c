//! Moderation, both dialects: players' reports (one open report per reporter and target, a
//! per-reporter count for the flood limit), admins' resolutions, one chat line read or removed,
//! and an account's chat lines (its export).

use super::chat::{pg_line, sqlite_line};
use super::sqlite::uuid_text;
use super::{PgStore, SqliteStore, Store, StoreError};
use chrono::{DateTime, Utc};
use protocol::ChatLine;
use sqlx::Row;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

/// A new report.
#[derive(Debug, Clone)]
pub struct NewReportRow {
    pub at: DateTime<Utc>,
    pub reporter: Uuid,
    /// `account:<uuid>` or `chat:<id>`.
    pub target_key: String,
    pub account_id: Option<Uuid>,
    pub chat_id: Option<i64>,
    pub chat_text: Option<String>,
    pub reason: String,
}

/// What storing a report did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportOutcome {
    Stored(i64),
    /// The reporter filed `max` reports or more since the cutoff: nothing stored.
    TooMany,
    /// The reporter has an open report of this target: nothing stored.
    Duplicate,
}

/// A report as admins read it.
#[derive(Debug, Clone)]
pub struct ReportRow {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub reporter: Uuid,
    pub reporter_name: Option<String>,
    pub account_id: Option<Uuid>,
    pub account_name: Option<String>,
    pub chat_id: Option<i64>,
    pub chat_text: Option<String>,
    pub reason: String,
    pub open: bool,
    pub resolved_at: Option<DateTime<Utc>>,
    pub resolved_by: Option<String>,
    pub resolution: Option<String>,
}

const REPORTS: &str = "SELECT r.id, r.at, r.reporter, rp.name AS reporter_name, r.account_id, \
     ra.name AS account_name, r.chat_id, r.chat_text, r.reason, r.status, r.resolved_at, \
     r.resolved_by, r.resolution FROM reports r \
     LEFT JOIN accounts rp ON rp.id = r.reporter LEFT JOIN accounts ra ON ra.id = r.account_id";

const LINE: &str =
    "SELECT id, match_id, lobby_id, channel, seat, account_id, name, text, at FROM chat";

fn sqlite_report(r: &SqliteRow) -> Result<ReportRow, StoreError> {
    let account: Option<String> = r.try_get("account_id")?;
    let status: String = r.try_get("status")?;
    Ok(ReportRow {
        id: r.try_get("id")?,
        at: r.try_get("at")?,
        reporter: uuid_text(r, "reporter")?,
        reporter_name: r.try_get("reporter_name")?,
        account_id: account
            .map(|a| Uuid::parse_str(&a).map_err(|e| StoreError::Corrupt(e.to_string())))
            .transpose()?,
        account_name: r.try_get("account_name")?,
        chat_id: r.try_get("chat_id")?,
        chat_text: r.try_get("chat_text")?,
        reason: r.try_get("reason")?,
        open: status == "open",
        resolved_at: r.try_get("resolved_at")?,
        resolved_by: r.try_get("resolved_by")?,
        resolution: r.try_get("resolution")?,
    })
}

fn pg_report(r: &PgRow) -> Result<ReportRow, StoreError> {
    let status: String = r.try_get("status")?;
    Ok(ReportRow {
        id: r.try_get("id")?,
        at: r.try_get("at")?,
        reporter: r.try_get("reporter")?,
        reporter_name: r.try_get("reporter_name")?,
        account_id: r.try_get("account_id")?,
        account_name: r.try_get("account_name")?,
        chat_id: r.try_get("chat_id")?,
        chat_text: r.try_get("chat_text")?,
        reason: r.try_get("reason")?,
        open: status == "open",
        resolved_at: r.try_get("resolved_at")?,
        resolved_by: r.try_get("resolved_by")?,
        resolution: r.try_get("resolution")?,
    })
}

impl SqliteStore {
    async fn insert_report(
        &self,
        r: &NewReportRow,
        since: DateTime<Utc>,
        max: i64,
    ) -> Result<ReportOutcome, StoreError> {
        // One writing connection: the count and the insert run alone.
        let mut conn = self.writing().await?;
        let mut tx = conn.begin().await?;
        let filed: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM reports WHERE reporter = ?1 AND julianday(at) >= julianday(?2)",
        )
        .bind(r.reporter.to_string())
        .bind(since)
        .fetch_one(&mut *tx)
        .await?;
        if filed >= max {
            return Ok(ReportOutcome::TooMany);
        }
        let id = sqlx::query_scalar(
            "INSERT INTO reports (at, reporter, target_key, account_id, chat_id, chat_text, \
             reason, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'open') RETURNING id",
        )
        .bind(r.at)
        .bind(r.reporter.to_string())
        .bind(&r.target_key)
        .bind(r.account_id.map(|a| a.to_string()))
        .bind(r.chat_id)
        .bind(&r.chat_text)
        .bind(&r.reason)
        .fetch_one(&mut *tx)
        .await;
        let id = match id {
            Ok(id) => id,
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                return Ok(ReportOutcome::Duplicate);
            }
            Err(e) => return Err(e.into()),
        };
        tx.commit().await?;
        drop(conn);
        self.sync().await?;
        Ok(ReportOutcome::Stored(id))
    }

    async fn reports(
        &self,
        open: Option<bool>,
        before: i64,
        limit: u32,
    ) -> Result<Vec<ReportRow>, StoreError> {
        sqlx::query(&format!(
            "{REPORTS} WHERE r.id < ?1 AND (?2 IS NULL OR (r.status = 'open') = ?2) \
             ORDER BY r.id DESC LIMIT ?3"
        ))
        .bind(before)
        .bind(open)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(sqlite_report)
        .collect()
    }

    async fn resolve_report(
        &self,
        id: i64,
        by: &str,
        note: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE reports SET status = 'resolved', resolved_at = ?2, resolved_by = ?3, \
             resolution = ?4 WHERE id = ?1 AND status = 'open'",
        )
        .bind(id)
        .bind(at)
        .bind(by)
        .bind(note)
        .execute(&mut *self.writing().await?)
        .await?;
        self.sync().await?;
        Ok(done.rows_affected() > 0)
    }

    async fn chat_line(&self, id: i64) -> Result<Option<ChatLine>, StoreError> {
        sqlx::query(&format!("{LINE} WHERE id = ?1"))
            .bind(id)
            .fetch_optional(&self.read)
            .await?
            .map(|r| sqlite_line(&r))
            .transpose()
    }

    async fn remove_chat(&self, id: i64) -> Result<Option<ChatLine>, StoreError> {
        let line = sqlx::query(
            "DELETE FROM chat WHERE id = ?1 RETURNING id, match_id, lobby_id, channel, seat, \
             account_id, name, text, at",
        )
        .bind(id)
        .fetch_optional(&mut *self.writing().await?)
        .await?
        .map(|r| sqlite_line(&r))
        .transpose()?;
        self.sync().await?;
        Ok(line)
    }

    async fn chat_of_account(&self, account: Uuid) -> Result<Vec<ChatLine>, StoreError> {
        sqlx::query(&format!("{LINE} WHERE account_id = ?1 ORDER BY id"))
            .bind(account.to_string())
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(sqlite_line)
            .collect()
    }
}

impl PgStore {
    async fn insert_report(
        &self,
        r: &NewReportRow,
        since: DateTime<Utc>,
        max: i64,
    ) -> Result<ReportOutcome, StoreError> {
        let mut tx = self.pool.begin().await?;
        // The reporter's reports are counted under a lock of their name: two reports at once
        // cannot both pass the limit.
        sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))")
            .bind(format!("report:{}", r.reporter))
            .execute(&mut *tx)
            .await?;
        let filed: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM reports WHERE reporter = $1 AND at >= $2")
                .bind(r.reporter)
                .bind(since)
                .fetch_one(&mut *tx)
                .await?;
        if filed >= max {
            return Ok(ReportOutcome::TooMany);
        }
        let id = sqlx::query_scalar(
            "INSERT INTO reports (at, reporter, target_key, account_id, chat_id, chat_text, \
             reason, status) VALUES ($1, $2, $3, $4, $5, $6, $7, 'open') RETURNING id",
        )
        .bind(r.at)
        .bind(r.reporter)
        .bind(&r.target_key)
        .bind(r.account_id)
        .bind(r.chat_id)
        .bind(&r.chat_text)
        .bind(&r.reason)
        .fetch_one(&mut *tx)
        .await;
        let id = match id {
            Ok(id) => id,
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                return Ok(ReportOutcome::Duplicate);
            }
            Err(e) => return Err(e.into()),
        };
        tx.commit().await?;
        Ok(ReportOutcome::Stored(id))
    }

    async fn reports(
        &self,
        open: Option<bool>,
        before: i64,
        limit: u32,
    ) -> Result<Vec<ReportRow>, StoreError> {
        sqlx::query(&format!(
            "{REPORTS} WHERE r.id < $1 AND ($2::boolean IS NULL OR (r.status = 'open') = $2) \
             ORDER BY r.id DESC LIMIT $3"
        ))
        .bind(before)
        .bind(open)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(pg_report)
        .collect()
    }

    async fn resolve_report(
        &self,
        id: i64,
        by: &str,
        note: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE reports SET status = 'resolved', resolved_at = $2, resolved_by = $3, \
             resolution = $4 WHERE id = $1 AND status = 'open'",
        )
        .bind(id)
        .bind(at)
        .bind(by)
        .bind(note)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn chat_line(&self, id: i64) -> Result<Option<ChatLine>, StoreError> {
        sqlx::query(&format!("{LINE} WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .map(|r| pg_line(&r))
            .transpose()
    }

    async fn remove_chat(&self, id: i64) -> Result<Option<ChatLine>, StoreError> {
        sqlx::query(
            "DELETE FROM chat WHERE id = $1 RETURNING id, match_id, lobby_id, channel, seat, \
             account_id, name, text, at",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .map(|r| pg_line(&r))
        .transpose()
    }

    async fn chat_of_account(&self, account: Uuid) -> Result<Vec<ChatLine>, StoreError> {
        sqlx::query(&format!("{LINE} WHERE account_id = $1 ORDER BY id"))
            .bind(account)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(pg_line)
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
    /// Stores a report unless its reporter filed `max` since `since` or has an open report of
    /// the same target.
    pub async fn insert_report(
        &self,
        r: &NewReportRow,
        since: DateTime<Utc>,
        max: i64,
    ) -> Result<ReportOutcome, StoreError> {
        dispatch!(self.insert_report(r, since, max))
    }

    /// Reports newest first, with ids below `before`: open ones (`Some(true)`), resolved ones
    /// (`Some(false)`) or all.
    pub async fn reports(
        &self,
        open: Option<bool>,
        before: i64,
        limit: u32,
    ) -> Result<Vec<ReportRow>, StoreError> {
        dispatch!(self.reports(open, before, limit))
    }

    /// Resolves an open report; false when there is no open report with this id.
    pub async fn resolve_report(
        &self,
        id: i64,
        by: &str,
        note: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        dispatch!(self.resolve_report(id, by, note, at))
    }

    /// One stored chat line.
    pub async fn chat_line(&self, id: i64) -> Result<Option<ChatLine>, StoreError> {
        dispatch!(self.chat_line(id))
    }

    /// Deletes a chat line; the line it was, if there was one.
    pub async fn remove_chat(&self, id: i64) -> Result<Option<ChatLine>, StoreError> {
        dispatch!(self.remove_chat(id))
    }

    /// Every chat line an account said, oldest first.
    pub async fn chat_of_account(&self, account: Uuid) -> Result<Vec<ChatLine>, StoreError> {
        dispatch!(self.chat_of_account(account))
    }
}
