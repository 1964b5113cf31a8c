//! What the parts around the nodes do to a game: NATS and Postgres stopped mid-game, a clock
//! that runs out after its owner died, and a node refused without Postgres.

use crate::common::READ_TIMEOUT;
use crate::harness::*;
use client::Follower;
use client::bot::Rng;
use protocol::CreateMatch;
use rules::{Colour, Modules};
use std::process::Command;
use std::time::Duration;
use tokio::time::Instant;
use uuid::Uuid;

/// The NATS server is stopped mid-game and started again: while it is down, a command
/// forwarded to the owner gets a typed `unavailable`; then play resumes, and nothing
/// acknowledged is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nats_down_mid_game_costs_errors_not_moves() {
    let Some(mut nats) = OwnNats::start() else {
        return;
    };
    let Some(mut cluster) = Cluster::start_on(3, nats.url()).await else {
        return;
    };
    let created = create(&cluster, 2).await;
    let id = created.match_id;
    // Node 0 owns the match (its spectator touches it first); the seats are on nodes 1 and 2.
    let mut watcher = Player::join(&cluster, id, 0, None).await;
    watcher.follower.sync_first().await.expect("first view");
    let mut players = seat_players(&cluster, &created, |i| 1 + i).await;
    assert_eq!(cluster.owner(id).await, Some(0));
    let mut refused = None;
    let moves = play_through(
        &mut cluster,
        id,
        &mut players,
        async |c: &mut Cluster, n| {
            if n == 20 {
                nats.down();
                // A seat on node 1 commands while NATS is down: refused with a typed error.
                let mut conn = connect(c, 1).await.expect("connect");
                conn.auth(&created.seats[0].token).await.expect("auth");
                let answer = conn.command("nats-down-1", rules::Command::Pass {}).await;
                refused = Some(answer);
                nats.up().expect("NATS again");
            }
        },
    )
    .await;
    let refused = refused.expect("the outage happened");
    assert!(
        matches!(&refused, Ok(client::CommandOutcome::Rejected(b)) if b.code == protocol::ErrorCode::Unavailable),
        "a command forwarded while NATS was down: {refused:?}"
    );
    check_nothing_lost(&cluster, id, &players).await;
    eprintln!("{moves} moves across a NATS outage; the forwarded command got {refused:?}");
}

/// Postgres stops mid-game (immediately, as in a crash) and starts again: while it is down a
/// command gets a typed `unavailable`, nothing is acknowledged; then play resumes on whichever
/// node takes the match, and nothing acknowledged is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_down_mid_game_costs_errors_not_moves() {
    if !crate::common::private_pg::tools_present(&[]) {
        return;
    }
    let Some(nats) = nats_url() else {
        return;
    };
    let mut pg = crate::common::private_pg::PrivatePg::init();
    pg.start();
    let url = pg.url("postgres");
    let mut cluster = Cluster::start_with(3, nats, url, None).await;
    let created = create(&cluster, 2).await;
    let id = created.match_id;
    let mut players = seat_players(&cluster, &created, |i| i).await;
    let mut refused = None;
    let moves = play_through(
        &mut cluster,
        id,
        &mut players,
        async |c: &mut Cluster, n| {
            if n == 20 {
                // Both seats on a live node, at the current seq, and a legal move of one of
                // them, made while Postgres is down.
                let node = (0..3).find(|&i| c.alive(i)).unwrap_or(0);
                let mut now = Vec::new();
                for s in &created.seats {
                    let conn = connect(c, node).await.expect("connect");
                    let mut f = Follower::join(conn, id, Some(&s.token), None)
                        .await
                        .expect("join");
                    f.sync_first().await.expect("the current view");
                    now.push(f);
                }
                let view = now[0].view().expect("view");
                let (player, cmd) =
                    client::bot::pick_move(&view, &mut Rng::new(11)).expect("a move");
                pg.stop();
                refused = Some(now[usize::from(player)].command("pg-down-1", cmd).await);
                pg.start();
            }
        },
    )
    .await;
    let refused = refused.expect("the outage happened");
    assert!(
        matches!(&refused, Ok(client::CommandOutcome::Rejected(b)) if b.code == protocol::ErrorCode::Unavailable),
        "a command while Postgres was down: {refused:?}"
    );
    check_nothing_lost(&cluster, id, &players).await;
    eprintln!("{moves} moves across a Postgres outage; the command got {refused:?}");
}

/// A deadline outlives its owner: a match with a game clock whose owner is killed while the
/// active player's bank runs, and no client comes back; another node adopts the match when the
/// bank runs out and plays for the player (a `server:clock` command is stored).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_runs_out_on_another_node_after_its_owner_died() {
    let Some(mut cluster) = Cluster::start(3).await else {
        return;
    };
    let req = CreateMatch {
        players: vec![Colour::Red, Colour::Blue],
        modules: Modules::default(),
        meeples: None,
        draw_order: None,
        clock: Some(protocol::ClockSettings {
            bank_ms: 10_000,
            increment_ms: 0,
        }),
    };
    let created = client::create_match(&cluster.http(0), &req)
        .await
        .expect("create match");
    let id = created.match_id;
    let mut red = Player::join(&cluster, id, 1, Some(created.seats[0].token.clone())).await;
    red.follower.sync_first().await.expect("first view");
    let owner = cluster.owner(id).await.expect("an owner");
    cluster.kill(owner);
    drop(red);
    let waited = Instant::now();
    loop {
        let stored = cluster.stored(id).await;
        if stored.iter().any(|(_, _, c)| c.starts_with("server:clock")) {
            break;
        }
        assert!(
            waited.elapsed() < READ_TIMEOUT,
            "no node played the clock's default: {stored:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let now = cluster.owner(id).await;
    assert!(now.is_some_and(|n| n != owner), "adopted by {now:?}");
    eprintln!(
        "the clock's default played {:?} after the kill",
        waited.elapsed()
    );
}

/// A cluster node refuses the embedded store with a clear message.
#[test]
fn a_cluster_node_needs_postgres() {
    let out = Command::new(env!("CARGO_BIN_EXE_carcassonne-server"))
        .args([
            "--bind",
            "127.0.0.1:0",
            "--nats-url",
            "nats://127.0.0.1:4222",
        ])
        .arg("--data-dir")
        .arg(std::env::temp_dir().join(format!("cluster-{}", Uuid::new_v4().simple())))
        .env_remove("DATABASE_URL")
        .output()
        .expect("run the server");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs Postgres"), "{err}");
}
