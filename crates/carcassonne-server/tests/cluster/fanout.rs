//! A match's live diffs cross NATS once per diff, whatever the number of a node's connections
//! that follow the match: the owner publishes each once, and the node fans it out.

use crate::harness::*;
use client::bot::{Rng, answer_one};
use client::{Follower, Mirror};
use protocol::{Seq, ServerMessage};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// Spectators on node 1.
const SPECTATORS: usize = 8;
/// Moves before a late spectator joins (from seq `SINCE`), and moves in all.
const LATE_AT: u64 = 10;
const SINCE: Seq = 3;
const MOVES: u64 = 30;

/// A match owned by node 0, with one seat there and the other seat and eight spectators on
/// node 1; a ninth spectator joins on node 1 mid-game with `since`. A NATS client of the test's
/// own counts every message under the cluster's prefix that carries one of the match's diffs:
/// each live diff crosses once (the publication), not once per connection of node 1; only the
/// late spectator's resume crosses on its own. The owner counts one publication a diff, node 1
/// one delivery a follower and diff and no resume of its own, and every follower gets every seq
/// once, in order, the seat on node 1 its acks too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_diff_crosses_once_for_every_follower_of_a_node() {
    let Some(cluster) = Cluster::start(2).await else {
        return;
    };
    let created = create(&cluster, 2).await;
    let id = created.match_id;
    let crossed: Arc<Mutex<BTreeMap<Seq, usize>>> = Arc::default();
    let counting = Arc::clone(&crossed);
    let counter = every_message(&cluster, move |m| {
        if let Ok(ServerMessage::Diff { match_id, seq, .. }) =
            serde_json::from_slice::<ServerMessage>(&m.payload)
            && match_id == id
        {
            *counting.lock().expect("lock").entry(seq).or_default() += 1;
        }
    })
    .await;

    // Seat 0 on node 0, at its first view before seat 1 comes on node 1: its first touch
    // takes the lease there.
    let mut seats = Vec::new();
    for (i, s) in created.seats.iter().enumerate() {
        let mut p = Player::join(&cluster, id, i, Some(s.token.clone())).await;
        p.follower.sync_first().await.expect("first view");
        seats.push(p);
    }
    assert_eq!(cluster.owner(id).await, Some(0), "node 0 owns the match");
    let mut watchers = Vec::new();
    for _ in 0..SPECTATORS {
        let mut w = Player::join(&cluster, id, 1, None).await;
        w.follower.sync_first().await.expect("first view");
        assert_eq!(w.follower.seq(), Some(0));
        watchers.push(w.follower);
    }
    let mut seats: Vec<Follower> = seats.drain(..).map(|p| p.follower).collect();
    let mut rng = Rng::new(11);
    let mut late = None;
    let mut base: Option<Mirror> = None;
    let mut last = 0;
    while last < MOVES {
        if last == SINCE {
            // The view at `SINCE`, from a snapshot on the owner (nothing crosses for it).
            let mut b = Player::join(&cluster, id, 0, None).await;
            b.follower.sync_first().await.expect("a snapshot");
            assert_eq!(b.follower.seq(), Some(SINCE));
            base = Some(b.follower.mirror.clone());
            b.follower.conn.close().await.ok();
        }
        if last == LATE_AT {
            let conn = connect(&cluster, 1).await.expect("connect");
            let mut f = Follower::join(conn, id, None, Some(SINCE))
                .await
                .expect("join late");
            f.mirror = base.take().expect("the view at SINCE");
            f.sync_to(last)
                .await
                .expect("the late spectator catches up");
            late = Some(f);
        }
        let answered = answer_one(&mut seats, &mut watchers, &mut rng)
            .await
            .expect("a move")
            .expect("the match goes on");
        last = answered.seq;
        if let Some(f) = &mut late {
            f.sync_to(last).await.expect("the late spectator follows");
        }
    }
    let mut late = late.expect("the late spectator");

    // The counter has seen the last diff once it crossed.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !crossed.lock().expect("lock").contains_key(&last) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    counter.abort();
    let crossed = crossed.lock().expect("lock").clone();
    let expected: BTreeMap<Seq, usize> = (1..=last)
        .map(|seq| {
            // The late spectator's resume from the window crosses on its relay, once each.
            let resumed = (SINCE + 1..=LATE_AT).contains(&seq);
            (seq, 1 + usize::from(resumed))
        })
        .collect();
    assert_eq!(
        crossed, expected,
        "NATS messages carrying each diff (seq → count)"
    );

    let node = |i| cluster.node_id(i);
    let published = cluster
        .metric(
            0,
            "carcassonne_cluster_diffs_published_total",
            &[("node", &node(0))],
        )
        .await;
    assert_eq!(published, last as f64, "publications by the owner");
    let followers_on_1 = (SPECTATORS + 1) as u64;
    let fanned_out = cluster
        .metric(
            1,
            "carcassonne_cluster_diffs_fanned_out_total",
            &[("node", &node(1))],
        )
        .await;
    assert_eq!(
        fanned_out,
        (followers_on_1 * last + (last - LATE_AT)) as f64,
        "deliveries on node 1"
    );
    let resumes = cluster
        .metric(
            1,
            "carcassonne_cluster_edge_resumes_total",
            &[("node", &node(1))],
        )
        .await;
    assert_eq!(resumes, 0.0, "no diff was missed");

    let all: Vec<Seq> = (1..=last).collect();
    for (i, w) in watchers.iter().enumerate() {
        assert_eq!(w.diff_seqs, all, "spectator {i}");
        assert_eq!(w.snapshots, 1, "spectator {i}");
    }
    for s in &seats {
        assert_eq!(s.diff_seqs, all, "seat {:?}", s.seat);
        let acked: Vec<Seq> = s.acks.iter().map(|(_, q)| *q).collect();
        assert!(!acked.is_empty(), "seat {:?} has its acks", s.seat);
    }
    assert_eq!(
        late.diff_seqs,
        (SINCE + 1..=last).collect::<Vec<_>>(),
        "the late spectator"
    );
    let truth = serde_json::to_value(seats[0].view().expect("view")).expect("json");
    for f in watchers.iter().chain(seats.iter()).chain([&late]) {
        let view = serde_json::to_value(f.view().expect("view")).expect("json");
        assert_eq!(view, truth, "a mirror differs");
    }
    late.conn.close().await.ok();
}
