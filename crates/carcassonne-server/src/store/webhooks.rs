//! Webhooks in both dialects: an account's webhook (URL and signing secret), the accounts that
//! have one, and which accounts hold a match's seats (whose webhook a your-turn notice goes to).

use super::sqlite::uuid_text;
use super::{PgStore, SqliteStore, Store, StoreError, seat_from_db};
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

    /// Every account with a webhook.
    pub async fn webhook_accounts(&self) -> Result<Vec<Uuid>, StoreError> {
        both!(self.webhook_accounts())
    }

    /// The accounts that hold the seats of a match, by seat (a lobby's match; none otherwise).
    pub async fn seat_accounts(&self, match_id: Uuid) -> Result<Vec<(u8, Uuid)>, StoreError> {
        both!(self.seat_accounts(match_id))
    }
}

impl SqliteStore {
    async fn webhook_accounts(&self) -> Result<Vec<Uuid>, StoreError> {
        sqlx::query("SELECT account_id FROM webhooks")
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(|r| uuid_text(r, "account_id"))
            .collect()
    }

    async fn seat_accounts(&self, match_id: Uuid) -> Result<Vec<(u8, Uuid)>, StoreError> {
        sqlx::query("SELECT seat, account_id FROM seat_accounts WHERE match_id = ?1")
            .bind(match_id.to_string())
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(|r| {
                Ok((
                    seat_from_db(r.try_get("seat")?)?,
                    uuid_text(r, "account_id")?,
                ))
            })
            .collect()
    }

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
        .execute(&mut *self.writing().await?)
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
            .execute(&mut *self.writing().await?)
            .await?;
        self.sync().await?;
        Ok(done.rows_affected() == 1)
    }
}

impl PgStore {
    async fn webhook_accounts(&self) -> Result<Vec<Uuid>, StoreError> {
        Ok(sqlx::query_scalar("SELECT account_id FROM webhooks")
            .fetch_all(&self.pool)
            .await?)
    }

    async fn seat_accounts(&self, match_id: Uuid) -> Result<Vec<(u8, Uuid)>, StoreError> {
        sqlx::query("SELECT seat, account_id FROM seat_accounts WHERE match_id = $1")
            .bind(match_id)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| {
                let seat: i16 = r.try_get("seat")?;
                Ok((seat_from_db(i64::from(seat))?, r.try_get("account_id")?))
            })
            .collect()
    }

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
}
