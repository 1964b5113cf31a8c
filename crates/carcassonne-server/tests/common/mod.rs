//! Test harness shared by the server's test binaries: real servers on 127.0.0.1 ephemeral ports
//! ([`server`]), on a real store ([`db`]), followed by the client crate's followers and bots
//! ([`follow`]), raw HTTP requests ([`http`]), the server binary as a process of its own
//! ([`process`]), and a private Postgres to stop and restart ([`private_pg`]).

/// Runs each async scenario `fn name(db: &TestDb)` on both stores, as the tests
/// `sqlite::name` and `postgres::name` (the Postgres one skips with a notice outside CI when no
/// Postgres is reachable). Needs `#[macro_use] mod common;` and `use common::*;`.
#[allow(unused_macros)]
macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let db = super::TestDb::sqlite();
                    super::$name(&db).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(db) = super::TestDb::postgres().await else { return };
                    super::$name(&db).await;
                }
            )*
        }
    };
}

mod db;
mod follow;
mod http;
// Each test binary uses its part of it (the TLS test configures, the cluster suite stops).
#[allow(dead_code)]
pub mod private_pg;
mod process;
mod server;

pub use db::{TestDb, match_rows, stored_match};
pub use follow::*;
pub use http::{admin_http, admin_json, http, http_bytes, http_exact, http_with_head};
pub use process::ServerProcess;
pub use server::{TestServer, create, seat_tokens};

use std::time::Duration;

pub const ADMIN_TOKEN: &str = "admin-secret-for-tests";
/// Any single wait in a test; a hang fails the test instead of blocking the suite.
pub const READ_TIMEOUT: Duration = Duration::from_secs(20);

/// Fails if `v` holds anything that could reveal The Messages' dispatch stack (invariant 4, M1):
/// a `dispatch_order`, a `stack` that is not a bare count, a list of the dispatches 1–8 in some
/// order, or the match's `seed`.
pub fn assert_no_stack(v: &serde_json::Value, at: &str) {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                assert_ne!(k, "dispatch_order", "{at}: the stack order was sent");
                assert_ne!(k, "seed", "{at}: the seed was sent");
                if k == "stack" {
                    assert!(x.is_u64(), "{at}: `stack` must be a count, is {x}");
                }
                assert_no_stack(x, at);
            }
        }
        Value::Array(a) => {
            let mut nums: Vec<u64> = a.iter().filter_map(Value::as_u64).collect();
            nums.sort_unstable();
            assert!(
                !(a.len() == 8 && nums == (1..=8).collect::<Vec<_>>()),
                "{at}: a list of the eight dispatches was sent: {v}"
            );
            for x in a {
                assert_no_stack(x, at);
            }
        }
        _ => {}
    }
}
