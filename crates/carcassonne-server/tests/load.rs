//! A load smoke test, run by hand (ignored by default):
//!
//! ```sh
//! MATCHES=200 cargo test --release -p carcassonne-server --test load -- --ignored --nocapture
//! ```
//!
//! `MATCHES` matches are played to the end at once, two seat connections each, against one server
//! on 127.0.0.1; the clients share the machine's cores with the server, so the numbers are a floor.
//! Then a few games are played one command at a time and the sender's ack and own-diff latency
//! percentiles are printed (`crates/carcassonne-client/examples/latency.rs` does the same against any
//! running server).

// The load test uses a few of the shared harness's helpers.
#[allow(dead_code, unused_imports)]
mod common;

use common::*;
use std::time::Instant;

async fn many_matches(db: TestDb) {
    let n: usize = std::env::var("MATCHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let server = TestServer::start(db.config());
    let mut created = Vec::new();
    for _ in 0..n {
        created.push(create(&server, 2).await);
    }
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (i, m) in created.into_iter().enumerate() {
        let ws = server.ws();
        tasks.push(tokio::spawn(async move {
            let mut seats = Vec::new();
            for seat in &m.seats[..2] {
                let mut conn = client::Connection::connect(&ws).await.expect("connect");
                conn.set_read_timeout(Some(READ_TIMEOUT));
                let f = client::Follower::join(conn, m.match_id, Some(&seat.token), None)
                    .await
                    .expect("join");
                seats.push(f);
            }
            let mut rng = client::bot::Rng::new(i as u64);
            let moves = client::bot::play(&mut seats, &mut [], &mut rng, usize::MAX)
                .await
                .expect("a game played to the end");
            assert!(seats[0].view().expect("view").finished);
            moves
        }));
    }
    let mut moves = 0;
    for t in tasks {
        moves += t.await.expect("game task");
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{}: {n} matches, {moves} moves in {secs:.1} s: {:.0} moves/s",
        db.kind(),
        moves as f64 / secs
    );
    // Latency as a player feels it, on the now idle server: a few games one command at a time.
    let mut latencies = client::latency::Latencies::default();
    for seed in 0..4 {
        let l = client::latency::play_game(&server.http(), &server.ws(), seed, usize::MAX)
            .await
            .expect("a timed game");
        latencies.extend(l);
    }
    println!("{}: {}", db.kind(), latencies.summary());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "load smoke test; run by hand"]
async fn many_matches_sqlite() {
    many_matches(TestDb::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "load smoke test; run by hand"]
async fn many_matches_postgres() {
    if let Some(db) = TestDb::postgres().await {
        many_matches(db).await;
    }
}
