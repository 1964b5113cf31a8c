//! The Postgres dialect, used when a database URL is given. The commands' JSON columns are text
//! (written and read whole, never queried inside; migration 0011); the other JSON columns are
//! `jsonb`, read back as text.
//!
//! Appends are group-committed like SQLite's: one transaction per match would cost a round trip
//! per statement and a commit per match, and fall behind SQLite under load. Writer tasks take every
//! append queued at that moment and write them all in one statement (one round trip, one
//! transaction): a multi-row insert (`UNNEST` of arrays) and one update of the matches;
//! [`WRITERS`] of them take turns, so the next group forms and is written while the previous
//! commit flushes. A match's appends never overlap (its actor waits for each),
//! so they stay in order. If a group fails, each of its appends is tried alone, so a bad one fails
//! alone. Nothing is answered before its commit returned: "persist, then broadcast" holds.
//!
//! This file opens, migrates and closes the store; the writers are in [`super::pg_writer`], the
//! queries in the domain files (`matches.rs`, `accounts.rs`, `lobbies.rs`, `chat.rs`,
//! `admin.rs`).

use super::pg_writer::{WRITERS, pg_writer};
use super::{PoolSettings, StoreError, WriteReq, missing_migrations, seat_from_db};
use sqlx::Row;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, mpsc};

/// Connections of the pool without `--db-pool-size`.
const DEFAULT_POOL: u32 = 16;
/// The wait for a connection without `--db-acquire-timeout`.
const DEFAULT_ACQUIRE: Duration = Duration::from_secs(10);

static MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

#[derive(Debug, Clone)]
pub struct PgStore {
    pub(super) pool: PgPool,
    pub(super) writer: mpsc::Sender<WriteReq>,
}

pub(super) fn seat(r: &PgRow) -> Result<u8, StoreError> {
    let seat: i16 = r.try_get("seat")?;
    seat_from_db(i64::from(seat))
}

impl PgStore {
    /// Opens the pool. The URL's `sslmode` (`disable`, `prefer` (the default), `require`,
    /// `verify-ca`, `verify-full`) and `sslrootcert` (a PEM file of the CA to trust; without
    /// it, the Mozilla roots compiled in) decide TLS, through rustls.
    pub async fn open(url: &str, settings: &PoolSettings) -> Result<PgStore, StoreError> {
        let options = PgConnectOptions::from_str(url)?;
        let pool = PgPoolOptions::new()
            .max_connections(settings.size.unwrap_or(DEFAULT_POOL))
            .acquire_timeout(settings.acquire_timeout.unwrap_or(DEFAULT_ACQUIRE))
            .idle_timeout(settings.idle_timeout)
            .max_lifetime(settings.max_lifetime)
            .connect_with(options)
            .await?;
        let (writer, rx) = mpsc::channel(4096);
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..WRITERS {
            tokio::spawn(pg_writer(pool.clone(), rx.clone()));
        }
        Ok(PgStore { pool, writer })
    }

    pub async fn migrate(&self) -> Result<(), StoreError> {
        MIGRATIONS.run(&self.pool).await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// How many migrations of this build the database lacks (a query, so it also tells whether
    /// the database answers).
    pub async fn missing_migrations(&self) -> Result<usize, StoreError> {
        let mut conn = self.pool.acquire().await?;
        missing_migrations(&mut *conn, &MIGRATIONS).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::postgres::PgSslMode;

    /// The TLS options of a `DATABASE_URL` are read (the connection itself is tested against a
    /// Postgres with TLS in the e2e suite `tls`).
    #[test]
    fn a_url_sets_the_tls_mode_and_the_ca() {
        for (url, mode) in [
            ("postgres://u@db/app", PgSslMode::Prefer),
            ("postgres://u@db/app?sslmode=disable", PgSslMode::Disable),
            ("postgres://u@db/app?sslmode=require", PgSslMode::Require),
            (
                "postgres://u@db/app?sslmode=verify-full&sslrootcert=/etc/ca.pem",
                PgSslMode::VerifyFull,
            ),
        ] {
            let options = PgConnectOptions::from_str(url).map_err(|e| e.to_string());
            assert!(
                matches!(&options, Ok(o) if format!("{:?}", o.get_ssl_mode()) == format!("{mode:?}")),
                "{url}: {options:?}"
            );
        }
        assert!(PgConnectOptions::from_str("postgres://u@db/app?sslmode=sometimes").is_err());
    }
}
