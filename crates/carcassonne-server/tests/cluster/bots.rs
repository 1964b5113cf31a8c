//! A lobby's bots follow their match's ownership: they play on after the node that started the
//! match is gone.

use crate::common::READ_TIMEOUT;
use crate::harness::*;
use client::bot::{Rng, answer_one};
use client::{FollowError, Follower};
use std::time::Duration;
use tokio::time::Instant;
use uuid::Uuid;

/// Ana plays a bot in a lobby match started on one node, from another node. The node that
/// owns the match (and runs its bot) is killed; another node takes the match over and its bot
/// goes on playing there: the match reaches its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobbys_bot_plays_on_after_its_node_died() {
    let Some(mut cluster) = Cluster::start(3).await else {
        return;
    };
    let (_, token) = guest(&cluster, 0, "Ana").await;
    let host = 0;
    let lobby = post(
        &cluster,
        host,
        "/api/lobbies",
        &token,
        r#"{"name": "Ana vs bot", "seats": 2}"#,
    )
    .await;
    let id = lobby["id"].as_str().expect("a lobby id").to_owned();
    post(
        &cluster,
        host,
        &format!("/api/lobbies/{id}/bot"),
        &token,
        r#"{"seat": 1}"#,
    )
    .await;
    post(
        &cluster,
        host,
        &format!("/api/lobbies/{id}/ready"),
        &token,
        r#"{"ready": true}"#,
    )
    .await;
    let started = post(
        &cluster,
        host,
        &format!("/api/lobbies/{id}/start"),
        &token,
        "",
    )
    .await;
    let match_id: Uuid = started["match_id"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("a match id");
    // The starting node loads the match (and takes its lease) just after the answer.
    let waited = Instant::now();
    let owner = loop {
        if let Some(o) = cluster.owner(match_id).await {
            break o;
        }
        assert!(waited.elapsed() < READ_TIMEOUT, "the match has no owner");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };

    let mut node = (owner + 1) % 3;
    let mut ana = seated(&cluster, node, &token, match_id).await;
    let ana_seat = ana.seat.expect("Ana holds a seat");
    let mut rng = Rng::new(5);
    let mut killed_after: Option<usize> = None;
    let mut failing_since: Option<Instant> = None;
    loop {
        let bot_moves = cluster
            .stored(match_id)
            .await
            .iter()
            .filter(|(_, seat, c)| *seat as u8 != ana_seat && !c.starts_with("server:"))
            .count();
        if killed_after.is_none() && bot_moves >= 2 {
            eprintln!(
                "killing node {owner} after {bot_moves} bot moves, at seq {:?}",
                ana.seq()
            );
            cluster.kill(owner);
            killed_after = Some(bot_moves);
        }
        let step = match answer_one(std::slice::from_mut(&mut ana), &mut [], &mut rng).await {
            Ok(None) => break,
            Ok(Some(_)) => Ok(()),
            // The bot's turn: its move is the next seq.
            Err(FollowError::NoDecision) => {
                let next = ana.seq().unwrap_or(0) + 1;
                ana.sync_to(next).await
            }
            Err(e) => Err(e),
        };
        match step {
            Ok(()) => failing_since = None,
            Err(e) => {
                let since = *failing_since.get_or_insert_with(Instant::now);
                assert!(
                    since.elapsed() < READ_TIMEOUT,
                    "no move for {:?}; last error: {e}",
                    since.elapsed()
                );
                // Moved or cut off: Ana reconnects to a live node and resumes.
                eprintln!("at seq {:?}: {e}", ana.seq());
                tokio::time::sleep(Duration::from_millis(200)).await;
                node = (node + 1..node + 4)
                    .map(|k| k % 3)
                    .find(|&i| cluster.alive(i))
                    .expect("a live node");
                if let Err(e) = resume(&cluster, node, &token, match_id, &mut ana).await {
                    eprintln!("resuming on node {node}: {e}");
                }
            }
        }
    }
    let before = killed_after.expect("the starting node was killed mid-game");
    let rows = cluster.stored(match_id).await;
    let after = rows
        .iter()
        .filter(|(_, seat, c)| *seat as u8 != ana_seat && !c.starts_with("server:"))
        .count();
    assert!(
        after > before,
        "the bot played {after} moves in all, {before} before its node died"
    );
    let now = cluster.owner(match_id).await;
    assert!(now.is_none_or(|n| n != owner), "adopted by {now:?}");
}

/// `POST` with Ana's session on node `i`; the answer's JSON (any 2xx).
async fn post(
    cluster: &Cluster,
    i: usize,
    path: &str,
    token: &str,
    body: &str,
) -> serde_json::Value {
    let (status, text) = call(cluster.addrs[i], "POST", path, Some(token), body).await;
    assert!((200..300).contains(&status), "{path}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
}

/// Ana's seat in the match through a session socket on node `i`, at the first view.
async fn seated(cluster: &Cluster, i: usize, token: &str, match_id: Uuid) -> Follower {
    let mut conn = ws_as(cluster, i, token).await;
    let seat = conn.take_seat(match_id).await.expect("take the seat");
    conn.subscribe(match_id, None).await.expect("subscribe");
    let mut f = Follower::from_conn(conn, match_id, Some(seat.seat));
    f.sync_first().await.expect("the first view");
    f
}

/// Ana's follower on a new socket on node `i`, caught up after its last seq.
async fn resume(
    cluster: &Cluster,
    i: usize,
    token: &str,
    match_id: Uuid,
    f: &mut Follower,
) -> Result<(), String> {
    let auth = format!("Bearer {token}");
    let mut conn =
        client::Connection::connect_with_headers(&cluster.ws(i), &[("Authorization", &auth)])
            .await
            .map_err(|e| e.to_string())?;
    conn.set_read_timeout(Some(Duration::from_secs(3)));
    conn.take_seat(match_id).await.map_err(|e| e.to_string())?;
    f.replace_conn(conn, None)
        .await
        .map_err(|e| e.to_string())?;
    f.resubscribe().await.map_err(|e| e.to_string())?;
    f.sync_first().await.map_err(|e| e.to_string())
}
