//! Webhooks in both dialects: an account's webhook (URL and signing secret), and which account
//! holds a seat (to find whose webhook a your-turn notice goes to).

use super::sqlite::uuid_text;
use super::{PgStore, SqliteStore, Store, StoreError};
use chrono::{DateTime, Utc};
use sqlx::Row;
use uuid::Uuid;

/// An account's webhook as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRow {
    pub url: String,
    pub secret: String,
    pub created_at: DateTime<Utc>,
}

macro_rules! both {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match $self {
            Store::Sqlite(s) => s.$method($($arg),*).await,
            Store::Postgres(p) => p.$method($($arg),*).await,
        }
    };
}

impl Store {
    /// Sets (or replaces) an account's webhook.
    pub async fn set_webhook(&self, account: Uuid, w: &WebhookRow) -> Result<(), StoreError> {
        both!(self.set_webhook(account, w))
    }

    pub async fn webhook(&self, account: Uuid) -> Result<Option<WebhookRow>, StoreError> {
        both!(self.webhook(account))
    }

    /// Removes an account's webhook; false when it had none.
    pub async fn delete_webhook(&self, account: Uuid) -> Result<bool, StoreError> {
        both!(self.delete_webhook(account))
    }

    /// The account that holds a seat of a match, if one does (a lobby's match).
    pub async fn account_of_seat(
        &self,
        match_id: Uuid,
        seat: u8,
    ) -> Result<Option<Uuid>, StoreError> {
        both!(self.account_of_seat(match_id, seat))
    }
}

impl SqliteStore {
    async fn set_webhook(&self, account: Uuid, w: &WebhookRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO webhooks (account_id, url, secret, created_at) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (account_id) DO UPDATE SET url = excluded.url, \
             secret = excluded.secret, created_at = excluded.created_at",
        )
        .bind(account.to_string())
        .bind(&w.url)
        .bind(&w.secret)
        .bind(w.created_at)
        .execute(&self.write)
        .await?;
        self.sync().await
    }

    async fn webhook(&self, account: Uuid) -> Result<Option<WebhookRow>, StoreError> {
        sqlx::query("SELECT url, secret, created_at FROM webhooks WHERE account_id = ?1")
            .bind(account.to_string())
            .fetch_optional(&self.read)
            .await?
            .map(|r| {
                Ok(WebhookRow {
                    url: r.try_get("url")?,
                    secret: r.try_get("secret")?,
                    created_at: r.try_get("created_at")?,
                })
            })
            .transpose()
    }

    async fn delete_webhook(&self, account: Uuid) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM webhooks WHERE account_id = ?1")
            .bind(account.to_string())
            .execute(&self.write)
            .await?;
        self.sync().await?;
        Ok(done.rows_affected() == 1)
    }

    async fn account_of_seat(&self, match_id: Uuid, seat: u8) -> Result<Option<Uuid>, StoreError> {
        sqlx::query("SELECT account_id FROM seat_accounts WHERE match_id = ?1 AND seat = ?2")
            .bind(match_id.to_string())
            .bind(i64::from(seat))
            .fetch_optional(&self.read)
            .await?
            .map(|r| uuid_text(&r, "account_id"))
            .transpose()
    }
}

impl PgStore {
    async fn set_webhook(&self, account: Uuid, w: &WebhookRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO webhooks (account_id, url, secret, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (account_id) DO UPDATE SET url = excluded.url, \
             secret = excluded.secret, created_at = excluded.created_at",
        )
        .bind(account)
        .bind(&w.url)
        .bind(&w.secret)
        .bind(w.created_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn webhook(&self, account: Uuid) -> Result<Option<WebhookRow>, StoreError> {
        sqlx::query("SELECT url, secret, created_at FROM webhooks WHERE account_id = $1")
            .bind(account)
            .fetch_optional(&self.pool)
            .await?
            .map(|r| {
                Ok(WebhookRow {
                    url: r.try_get("url")?,
                    secret: r.try_get("secret")?,
                    created_at: r.try_get("created_at")?,
                })
            })
            .transpose()
    }

    async fn delete_webhook(&self, account: Uuid) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM webhooks WHERE account_id = $1")
            .bind(account)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn account_of_seat(&self, match_id: Uuid, seat: u8) -> Result<Option<Uuid>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT account_id FROM seat_accounts WHERE match_id = $1 AND seat = $2",
        )
        .bind(match_id)
        .bind(i16::from(seat))
        .fetch_optional(&self.pool)
        .await?)
    }
}
