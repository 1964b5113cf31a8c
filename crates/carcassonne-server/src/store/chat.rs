//! Chat messages, both dialects, and the store's methods for them: one insert before a message
//! is delivered, the admin's read of a match's chat, and the table's history for its players and
//! spectators (newest first).

use super::{PgStore, SqliteStore, Store, StoreError, seat_from_db};
use chrono::{DateTime, Utc};
use protocol::{ChatChannel, ChatFrom, ChatLine};
use sqlx::Row;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

/// Most chat lines one admin read returns.
pub const MAX_CHAT_PAGE: u32 = 1000;

fn channel(s: &str) -> Result<ChatChannel, StoreError> {
    match s {
        "table" => Ok(ChatChannel::Table),
        "spectators" => Ok(ChatChannel::Spectators),
        "lobby" => Ok(ChatChannel::Lobby),
        other => Err(StoreError::Corrupt(format!("chat channel `{other}`"))),
    }
}

fn uuid(s: Option<String>) -> Result<Option<Uuid>, StoreError> {
    s.map(|m| Uuid::parse_str(&m).map_err(|e| StoreError::Corrupt(e.to_string())))
        .transpose()
}

fn millis(at: DateTime<Utc>) -> u64 {
    u64::try_from(at.timestamp_millis()).unwrap_or(0)
}

pub(super) fn sqlite_line(r: &SqliteRow) -> Result<ChatLine, StoreError> {
    let seat: Option<i64> = r.try_get("seat")?;
    let at: DateTime<Utc> = r.try_get("at")?;
    Ok(ChatLine {
        id: r.try_get("id").ok(),
        match_id: uuid(r.try_get("match_id")?)?,
        lobby_id: uuid(r.try_get("lobby_id")?)?,
        channel: channel(r.try_get("channel")?)?,
        from: ChatFrom {
            seat: seat.map(seat_from_db).transpose()?,
            account_id: uuid(r.try_get("account_id")?)?,
            name: r.try_get("name")?,
        },
        text: r.try_get("text")?,
        at: millis(at),
    })
}

pub(super) fn pg_line(r: &PgRow) -> Result<ChatLine, StoreError> {
    let seat: Option<i16> = r.try_get("seat")?;
    let at: DateTime<Utc> = r.try_get("at")?;
    Ok(ChatLine {
        id: r.try_get("id").ok(),
        match_id: r.try_get("match_id")?,
        lobby_id: r.try_get("lobby_id")?,
        channel: channel(r.try_get("channel")?)?,
        from: ChatFrom {
            seat: seat.map(|s| seat_from_db(i64::from(s))).transpose()?,
            account_id: r.try_get("account_id")?,
            name: r.try_get("name")?,
        },
        text: r.try_get("text")?,
        at: millis(at),
    })
}

impl SqliteStore {
    pub(super) async fn insert_chat(
        &self,
        c: &ChatLine,
        at: DateTime<Utc>,
    ) -> Result<i64, StoreError> {
        let id = sqlx::query_scalar(
            "INSERT INTO chat (match_id, lobby_id, channel, seat, account_id, name, text, at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
        )
        .bind(c.match_id.map(|i| i.to_string()))
        .bind(c.lobby_id.map(|i| i.to_string()))
        .bind(c.channel.as_str())
        .bind(c.from.seat.map(i64::from))
        .bind(c.from.account_id.map(|i| i.to_string()))
        .bind(&c.from.name)
        .bind(&c.text)
        .bind(at)
        .fetch_one(&mut *self.writing().await?)
        .await?;
        self.sync().await?;
        Ok(id)
    }

    pub(super) async fn match_chat(
        &self,
        match_id: Uuid,
        after: i64,
        limit: u32,
    ) -> Result<Vec<(i64, ChatLine)>, StoreError> {
        sqlx::query(
            "SELECT id, match_id, lobby_id, channel, seat, account_id, name, text, at FROM chat \
             WHERE match_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
        )
        .bind(match_id.to_string())
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("id")?, sqlite_line(r)?)))
        .collect()
    }
    pub(super) async fn match_chat_before(
        &self,
        match_id: Uuid,
        before: i64,
        spectators: bool,
        limit: u32,
    ) -> Result<Vec<(i64, ChatLine)>, StoreError> {
        sqlx::query(
            "SELECT id, match_id, lobby_id, channel, seat, account_id, name, text, at FROM chat \
             WHERE match_id = ?1 AND id < ?2 AND (channel = 'table' OR ?3) \
             ORDER BY id DESC LIMIT ?4",
        )
        .bind(match_id.to_string())
        .bind(before)
        .bind(spectators)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("id")?, sqlite_line(r)?)))
        .collect()
    }
}

impl PgStore {
    pub(super) async fn insert_chat(
        &self,
        c: &ChatLine,
        at: DateTime<Utc>,
    ) -> Result<i64, StoreError> {
        let id = sqlx::query_scalar(
            "INSERT INTO chat (match_id, lobby_id, channel, seat, account_id, name, text, at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        )
        .bind(c.match_id)
        .bind(c.lobby_id)
        .bind(c.channel.as_str())
        .bind(c.from.seat.map(i16::from))
        .bind(c.from.account_id)
        .bind(&c.from.name)
        .bind(&c.text)
        .bind(at)
        .fetch_one(&self.pool)
        .await?;
        Ok(id)
    }

    pub(super) async fn match_chat(
        &self,
        match_id: Uuid,
        after: i64,
        limit: u32,
    ) -> Result<Vec<(i64, ChatLine)>, StoreError> {
        sqlx::query(
            "SELECT id, match_id, lobby_id, channel, seat, account_id, name, text, at FROM chat \
             WHERE match_id = $1 AND id > $2 ORDER BY id LIMIT $3",
        )
        .bind(match_id)
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("id")?, pg_line(r)?)))
        .collect()
    }

    pub(super) async fn match_chat_before(
        &self,
        match_id: Uuid,
        before: i64,
        spectators: bool,
        limit: u32,
    ) -> Result<Vec<(i64, ChatLine)>, StoreError> {
        sqlx::query(
            "SELECT id, match_id, lobby_id, channel, seat, account_id, name, text, at FROM chat \
             WHERE match_id = $1 AND id < $2 AND (channel = 'table' OR $3) \
             ORDER BY id DESC LIMIT $4",
        )
        .bind(match_id)
        .bind(before)
        .bind(spectators)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("id")?, pg_line(r)?)))
        .collect()
    }
}

// The store's chat, by dialect.

impl Store {
    /// Stores a chat message (its `at` is the time given, in milliseconds on the wire); its id.
    pub async fn insert_chat(&self, c: &ChatLine, at: DateTime<Utc>) -> Result<i64, StoreError> {
        match self {
            Store::Sqlite(s) => s.insert_chat(c, at).await,
            Store::Postgres(p) => p.insert_chat(c, at).await,
        }
    }

    /// A match's chat (both channels) in the order it was said, after the line `after`, with
    /// each line's id (the cursor for the next page).
    pub async fn match_chat(
        &self,
        match_id: Uuid,
        after: i64,
        limit: u32,
    ) -> Result<Vec<(i64, ChatLine)>, StoreError> {
        match self {
            Store::Sqlite(s) => s.match_chat(match_id, after, limit).await,
            Store::Postgres(p) => p.match_chat(match_id, after, limit).await,
        }
    }

    /// A match's chat before the line `before`, newest first, `limit` lines: the table's, and
    /// the spectators' too with `spectators`; each with its id (the cursor of the page before).
    pub async fn match_chat_before(
        &self,
        match_id: Uuid,
        before: i64,
        spectators: bool,
        limit: u32,
    ) -> Result<Vec<(i64, ChatLine)>, StoreError> {
        match self {
            Store::Sqlite(s) => {
                s.match_chat_before(match_id, before, spectators, limit)
                    .await
            }
            Store::Postgres(p) => {
                p.match_chat_before(match_id, before, spectators, limit)
                    .await
            }
        }
    }
}
