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
use super::{StoreError, WriteReq, seat_from_db};
use sqlx::Row;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, mpsc};

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
    pub async fn open(url: &str) -> Result<PgStore, StoreError> {
        let options = PgConnectOptions::from_str(url)?;
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
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
}
