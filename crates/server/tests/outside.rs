//! Regressions found by outside testing (issue 7): a client written only from `proto/`, run
//! against the server over real sockets. Every scenario runs on SQLite and on Postgres.

#[macro_use]
mod common;

use common::*;
use std::time::Duration;

on_both_stores!(own_diff_arrives_without_a_nagle_stall);

/// Item 1. The ack and the diff of a command used to leave as two small writes on a socket with
/// Nagle's algorithm on: the diff waited for the client's delayed ACK, about 40 ms. Measured from
/// the client side over real TCP: the own diff must follow the ack closely. (The gap, not the
/// whole latency, so that a slow store or a loaded machine cannot make this flaky.)
async fn own_diff_arrives_without_a_nagle_stall(db: &TestDb) {
    let server = TestServer::start(db.config());
    let mut all = client::latency::Latencies::default();
    let mut seed = 7;
    while all.own_diff.len() < 50 {
        let l = client::latency::play_game(&server.http(), &server.ws(), seed, 50)
            .await
            .expect("a game");
        all.extend(l);
        seed += 1;
    }
    let gaps: Vec<Duration> = all
        .ack
        .iter()
        .zip(&all.own_diff)
        .map(|(ack, diff)| diff.saturating_sub(*ack))
        .collect();
    let median = client::latency::percentile(&gaps, 50.0);
    assert!(
        median < Duration::from_millis(15),
        "own diff trails its ack by {median:?} (median); {}",
        all.summary()
    );
    server.stop().await;
}
