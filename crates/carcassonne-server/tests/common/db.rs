//! A real store for one test: a SQLite file in a temp dir, or a fresh Postgres database created
//! for the test and dropped after.

use super::ADMIN_TOKEN;
use server::Config;
use sqlx::Connection as _;
use std::time::Duration;

/// A store for one test. Dropping it removes it.
pub enum TestDb {
    Sqlite(tempfile::TempDir),
    Postgres {
        admin_url: String,
        name: String,
        url: String,
    },
}

impl TestDb {
    pub fn sqlite() -> TestDb {
        TestDb::Sqlite(tempfile::tempdir().expect("temp dir"))
    }

    /// A fresh database on the test Postgres (`TEST_DATABASE_URL`, default the local `test`
    /// database). With `CI=true` an unreachable Postgres fails the test; elsewhere it is skipped
    /// with a notice.
    pub async fn postgres() -> Option<TestDb> {
        let admin_url = std::env::var("TEST_DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
        let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        let mut conn = match sqlx::PgConnection::connect(&admin_url).await {
            Ok(c) => c,
            Err(e) => {
                if ci {
                    panic!("CI=true but Postgres at {admin_url} is unreachable: {e}");
                }
                eprintln!(
                    "NOTICE: Postgres at {admin_url} unreachable ({e}); skipping this Postgres suite"
                );
                return None;
            }
        };
        let name = format!("server_test_{}", uuid::Uuid::new_v4().simple());
        sqlx::query(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut conn)
            .await
            .expect("create database");
        let _ = conn.close().await;
        let base = admin_url.split('?').next().unwrap_or(&admin_url);
        let prefix = base.rsplit_once('/').map(|(p, _)| p).unwrap_or(base);
        let url = format!("{prefix}/{name}");
        Some(TestDb::Postgres {
            admin_url,
            name,
            url,
        })
    }

    /// Runs one SQL statement on the store directly (to tamper with it in tests).
    pub async fn execute(&self, sql: &str) -> u64 {
        match self {
            TestDb::Sqlite(dir) => {
                let path = dir.path().join("data").join("server.db");
                let mut conn =
                    sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
                        .await
                        .expect("sqlite");
                let n = sqlx::query(sql)
                    .execute(&mut conn)
                    .await
                    .expect("sql")
                    .rows_affected();
                let _ = conn.close().await;
                n
            }
            TestDb::Postgres { url, .. } => {
                let mut conn = sqlx::PgConnection::connect(url).await.expect("postgres");
                let n = sqlx::query(sql)
                    .execute(&mut conn)
                    .await
                    .expect("sql")
                    .rows_affected();
                let _ = conn.close().await;
                n
            }
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            TestDb::Sqlite(_) => "sqlite",
            TestDb::Postgres { .. } => "postgres",
        }
    }

    /// A server configuration on this store, with test setups and the admin API on.
    pub fn config(&self) -> Config {
        let mut c = Config::default();
        c.matches.allow_test_setups = true;
        c.admin.admin_token = Some(ADMIN_TOKEN.into());
        c.limits.relax(); // the limits' own tests narrow them
        c.conn.heartbeat_interval = Duration::from_secs(1);
        c.conn.heartbeat_timeout = Duration::from_secs(15);
        c.shutdown_grace = Duration::from_secs(5);
        match self {
            TestDb::Sqlite(dir) => c.store.data_dir = dir.path().join("data"),
            TestDb::Postgres { url, .. } => c.store.database_url = Some(url.as_str().into()),
        }
        c
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let TestDb::Postgres {
            admin_url, name, ..
        } = self
        {
            let admin_url = admin_url.clone();
            let name = name.clone();
            // Our own thread and runtime: Drop may run inside or outside a tokio runtime.
            let _ = std::thread::spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                rt.block_on(async {
                    if let Ok(mut conn) = sqlx::PgConnection::connect(&admin_url).await {
                        let _ = sqlx::query(&format!(
                            "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
                        ))
                        .execute(&mut conn)
                        .await;
                        let _ = conn.close().await;
                    }
                });
            })
            .join();
        }
    }
}

/// The rows of a bare active two-seat match `id`: no command yet, token hashes unique to it.
pub fn match_rows(id: uuid::Uuid) -> (server::store::MatchRow, Vec<server::store::SeatRow>) {
    use server::store::{MatchRow, MatchStatus, SeatRow};
    let row = MatchRow {
        id,
        setup: r#"{"players":["red","blue"],"seed":7}"#.into(),
        status: MatchStatus::Active,
        rules_version: rules::RULES_VERSION.into(),
        created_at: chrono::Utc::now(),
        decision_timeout_ms: None,
        clock: None,
        wake_at: None,
    };
    let seats = (0..2)
        .map(|seat| SeatRow {
            seat,
            colour: "red".into(),
            token_hash: format!("{id}-{seat}"),
        })
        .collect();
    (row, seats)
}

/// A bare active two-seat match ([`match_rows`]) written straight to `store` (tests of the
/// store itself).
pub async fn stored_match(store: &server::Store) -> uuid::Uuid {
    let id = uuid::Uuid::new_v4();
    let (row, seats) = match_rows(id);
    store.create_match(&row, &seats).await.expect("create");
    id
}
