//! `GET /readyz`: 200 while the store answers and holds every migration of the build, 503
//! `unavailable` otherwise, and 200 again once the store is back; `/healthz` answers 200
//! throughout (liveness only).

use crate::common::*;
use sqlx::Connection as _;
use std::time::{Duration, Instant};

on_both_stores!(readiness_follows_the_migrations_the_store_holds);

/// The readiness answer: status and body.
async fn readyz(server: &TestServer) -> (u16, String) {
    http(server, "GET", "/readyz", &[], "").await
}

/// Asserts a 503 with the `unavailable` error body whose message contains `says`.
fn assert_unavailable((status, body): &(u16, String), says: &str) {
    assert_eq!(*status, 503, "{body}");
    let v: serde_json::Value = serde_json::from_str(body).expect("a JSON error body");
    assert_eq!(v["code"], "unavailable", "{body}");
    let message = v["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "{message:?} lacks {says:?}");
}

/// Polls `/readyz` until it answers `status` (a pool may take a few tries to see a change),
/// within [`READ_TIMEOUT`]; the last answer.
async fn wait_for(server: &TestServer, status: u16) -> (u16, String) {
    let started = Instant::now();
    loop {
        let answer = readyz(server).await;
        if answer.0 == status || started.elapsed() > READ_TIMEOUT {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn readiness_follows_the_migrations_the_store_holds(db: &TestDb) {
    let server = TestServer::start(db.config());
    assert_eq!(readyz(&server).await, (200, "ready".to_string()));

    // The newest migration unrecorded, as on a database an older build migrated.
    let hidden = db
        .execute("UPDATE _sqlx_migrations SET version = -version WHERE version = (SELECT MAX(version) FROM _sqlx_migrations)")
        .await;
    assert_eq!(hidden, 1);
    assert_unavailable(&readyz(&server).await, "1 migration");
    assert_eq!(http(&server, "GET", "/healthz", &[], "").await.0, 200);

    db.execute("UPDATE _sqlx_migrations SET version = -version WHERE version < 0")
        .await;
    assert_eq!(readyz(&server).await, (200, "ready".to_string()));
    server.stop().await;
}

/// Postgres refuses the server's connections (its database closed to new ones, the open ones
/// ended), without touching the shared cluster: not ready; opened again: ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_readiness_fails_while_the_database_refuses_connections() {
    let Some(db) = TestDb::postgres().await else {
        return;
    };
    let TestDb::Postgres {
        admin_url, name, ..
    } = &db
    else {
        unreachable!("a Postgres test database");
    };
    let server = TestServer::start(db.config());
    assert_eq!(readyz(&server).await, (200, "ready".to_string()));

    let mut admin = sqlx::PgConnection::connect(admin_url).await.expect("admin");
    sqlx::query(&format!(
        "ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS false"
    ))
    .execute(&mut admin)
    .await
    .expect("close the database");
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1")
        .bind(name)
        .execute(&mut admin)
        .await
        .expect("end its connections");
    let answer = wait_for(&server, 503).await;
    assert_unavailable(&answer, "store");
    assert_eq!(http(&server, "GET", "/healthz", &[], "").await.0, 200);

    sqlx::query(&format!("ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS true"))
        .execute(&mut admin)
        .await
        .expect("open the database");
    let _ = admin.close().await;
    assert_eq!(wait_for(&server, 200).await, (200, "ready".to_string()));
    server.stop().await;
}
