//! The cluster suite: three server processes on 127.0.0.1, each a node with its own id, on one
//! throwaway Postgres database and the machine's NATS server (`TEST_NATS_URL`, default
//! `nats://127.0.0.1:4222`). Clients of one match sit on different nodes; nodes are killed,
//! paused and resumed under them. With `CI=true` a missing NATS or Postgres fails the suite;
//! elsewhere it is skipped with a notice.

// The suite uses a few of the shared harness's helpers.
#[allow(dead_code, unused_imports)]
#[path = "../common/mod.rs"]
mod common;

mod bots;
mod fanout;
mod harness;
mod lobbies;
mod outages;
mod play;
mod shared;
