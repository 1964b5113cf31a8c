//! Each open lobby is decided by one node, the holder of its lease: the node that opened it
//! while it lives, another one once its lease expired (killed) or was taken over (paused), and
//! never two at once.

use crate::common::READ_TIMEOUT;
use crate::harness::*;
use client::Connection;
use protocol::{LobbyState, ServerMessage};
use sqlx::Connection as _;
use std::time::Duration;
use tokio::time::Instant;
use uuid::Uuid;

const LOBBY_LEASES: &str = "carcassonne_cluster_lobby_leases_total";

/// A lobby action on node `i`: (status, body).
async fn act(cluster: &Cluster, i: usize, token: &str, path: &str, body: &str) -> (u16, String) {
    call(cluster.addrs[i], "POST", path, Some(token), body).await
}

/// The lobby an answer carries (a 200's body).
fn lobby_of(status: u16, text: &str) -> LobbyState {
    assert_eq!(status, 200, "{text}");
    serde_json::from_str(text).expect("a lobby")
}

/// The refusal's code of an error body.
fn code_of(text: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    v["code"].as_str().unwrap_or_default().to_owned()
}

/// Opens a `seats`-seat public lobby on node `i` as `token`'s account.
async fn open_lobby(cluster: &Cluster, i: usize, token: &str, seats: u8) -> LobbyState {
    let body = format!(r#"{{"name": "Leased", "seats": {seats}}}"#);
    let (status, text) = call(cluster.addrs[i], "POST", "/api/lobbies", Some(token), &body).await;
    assert_eq!(status, 201, "{text}");
    serde_json::from_str(&text).expect("a lobby")
}

/// The stored lobby.
async fn stored_lobby(cluster: &Cluster, id: Uuid) -> LobbyState {
    let mut conn = sqlx::PgConnection::connect(&cluster.url)
        .await
        .expect("postgres");
    let state: String = sqlx::query_scalar("SELECT state::text FROM lobbies WHERE id = $1")
        .bind(id)
        .fetch_one(&mut conn)
        .await
        .expect("the lobby's row");
    let _ = conn.close().await;
    serde_json::from_str(&state).expect("a stored lobby")
}

/// Every lobby push a follower got, in order, until none comes for `quiet`.
async fn pushes(conn: &mut Connection, quiet: Duration) -> Vec<LobbyState> {
    let mut got = Vec::new();
    conn.set_read_timeout(Some(quiet));
    while let Ok(Some(m)) = conn.next_message().await {
        if let ServerMessage::Lobby { lobby } = m {
            got.push(lobby);
        }
    }
    got
}

/// Waits until the lobby's lease is free (expired by the database's clock).
async fn wait_free(cluster: &Cluster, id: Uuid) {
    let waited = Instant::now();
    while cluster.lobby_owner(id).await.is_some() {
        assert!(waited.elapsed() < READ_TIMEOUT, "the lease never expired");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A lobby opened on node 0 is acted on from nodes 1 and 2 by its members, and even its host:
/// node 0 decides everything under the lease it took at the opening (epoch 1 throughout, no
/// other node takes a lobby lease), applying the same checks as for its own clients; the
/// start releases the lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobby_is_decided_by_the_node_that_opened_it() {
    let Some(cluster) = Cluster::start(3).await else {
        return;
    };
    let ana = guest(&cluster, 0, "Ana").await.1;
    let ben = guest(&cluster, 1, "Ben").await.1;
    let cleo = guest(&cluster, 2, "Cleo").await.1;
    let dan = guest(&cluster, 2, "Dan").await.1;
    let lobby = open_lobby(&cluster, 0, &ana, 3).await;
    let id = lobby.id;
    assert_eq!(cluster.lobby_owner(id).await, Some((0, 1)));
    let mut follower = ws_as(&cluster, 1, &ben).await;
    follower.subscribe_lobby(id).await.expect("follow");
    lobby_at(&mut follower, 1).await;

    let path = |what: &str| format!("/api/lobbies/{id}/{what}");
    let (s, t) = act(&cluster, 1, &ben, &path("join"), "{}").await;
    lobby_of(s, &t);
    let (s, t) = act(&cluster, 2, &cleo, &path("join"), "{}").await;
    lobby_of(s, &t);
    // The owner checks the account that came with the request.
    let (s, t) = act(&cluster, 1, &ben, &path("kick"), r#"{"seat": 2}"#).await;
    assert_eq!((s, code_of(&t).as_str()), (403, "not_host"), "{t}");
    let (s, t) = act(&cluster, 2, &dan, &path("ready"), r#"{"ready": true}"#).await;
    assert_eq!((s, code_of(&t).as_str()), (403, "not_in_lobby"), "{t}");
    // The host, from another node than the owner's.
    let (s, t) = act(&cluster, 2, &ana, &path("colour"), r#"{"colour": "black"}"#).await;
    assert_eq!(lobby_of(s, &t).seats[0].colour, Some(rules::Colour::Black));
    let mut version = 0;
    for (i, token) in [(2, &ana), (1, &ben), (2, &cleo)] {
        let (s, t) = act(&cluster, i, token, &path("ready"), r#"{"ready": true}"#).await;
        version = lobby_of(s, &t).version;
        assert_eq!(cluster.lobby_owner(id).await, Some((0, 1)), "no takeover");
    }
    // The follower on node 1 saw the last change.
    assert!(
        lobby_at(&mut follower, version)
            .await
            .seats
            .iter()
            .all(|s| s.ready)
    );
    for i in 1..3 {
        let node = cluster.node_id(i);
        let taken = cluster
            .metric(i, LOBBY_LEASES, &[("event", "taken"), ("node", &node)])
            .await;
        assert_eq!(taken, 0.0, "node {i} took a lobby lease");
    }
    let (s, t) = act(&cluster, 1, &ana, &path("start"), "").await;
    assert_eq!(s, 201, "{t}");
    let started = lobby_at(&mut follower, version + 1).await;
    assert!(started.match_id.is_some(), "{started:?}");
    assert_eq!(cluster.lobby_owner(id).await, None, "released at the start");
    let node = cluster.node_id(0);
    let released = cluster
        .metric(0, LOBBY_LEASES, &[("event", "released"), ("node", &node)])
        .await;
    assert_eq!(released, 1.0);
}

/// The start of the failure tests: Ana opens a lobby of three seats on node 0, Ben joins it
/// from node 1, and Dan follows it from node 2 (having seen that join). Returns Ana's, Ben's
/// and Cleo's tokens (Cleo, on node 2, has not joined), the lobby's id and Dan's connection.
async fn ana_opens_and_ben_joins(cluster: &Cluster) -> (String, String, String, Uuid, Connection) {
    let ana = guest(cluster, 0, "Ana").await.1;
    let ben = guest(cluster, 1, "Ben").await.1;
    let cleo = guest(cluster, 2, "Cleo").await.1;
    let dan = guest(cluster, 2, "Dan").await.1;
    let id = open_lobby(cluster, 0, &ana, 3).await.id;
    let (s, t) = act(cluster, 1, &ben, &format!("/api/lobbies/{id}/join"), "{}").await;
    lobby_of(s, &t);
    let mut dans = ws_as(cluster, 2, &dan).await;
    dans.subscribe_lobby(id).await.expect("follow");
    lobby_at(&mut dans, 2).await;
    (ana, ben, cleo, id, dans)
}

/// The node that decides for a lobby is killed: until its lease expires a decision sent to it
/// gets a typed `unavailable`; then the next node a request touches takes the lobby (reading
/// it from the store), and joins, readies and the start all succeed from the other nodes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_lobby_owner_is_replaced_after_its_lease_expires() {
    let Some(mut cluster) = Cluster::start(3).await else {
        return;
    };
    let (ana, ben, cleo, id, mut follower) = ana_opens_and_ben_joins(&cluster).await;
    let path = |what: &str| format!("/api/lobbies/{id}/{what}");

    cluster.kill(0);
    let killed = Instant::now();
    let (s, t) = act(&cluster, 2, &cleo, &path("join"), "{}").await;
    assert_eq!(
        (s, code_of(&t).as_str()),
        (503, "unavailable"),
        "a join while the dead owner's lease runs: {t}"
    );
    let joined = loop {
        let (s, t) = act(&cluster, 2, &cleo, &path("join"), "{}").await;
        if s == 200 {
            break lobby_of(s, &t);
        }
        assert_eq!(code_of(&t), "unavailable", "{s} {t}");
        assert!(killed.elapsed() < READ_TIMEOUT, "no node took the lobby");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let after = killed.elapsed();
    assert!(joined.seats[1].occupant.is_some(), "Ben's join is kept");
    assert!(joined.seats[2].occupant.is_some(), "{joined:?}");
    assert_eq!(cluster.lobby_owner(id).await, Some((2, 2)));
    let mut version = 0;
    for (i, token) in [(1, &ana), (1, &ben), (2, &cleo)] {
        let (s, t) = act(&cluster, i, token, &path("ready"), r#"{"ready": true}"#).await;
        version = lobby_of(s, &t).version;
    }
    let (s, t) = act(&cluster, 1, &ana, &path("start"), "").await;
    assert_eq!(s, 201, "{t}");
    let started = lobby_at(&mut follower, version + 1).await;
    assert!(started.match_id.is_some(), "{started:?}");
    eprintln!("the lobby was taken over {after:?} after its owner was killed");
}

/// The node that decides for a lobby is paused (`SIGSTOP`) until its lease expires; another
/// node takes the lobby over and changes it (Cleo joins). A change sent to the paused node
/// waits in its socket; resumed (`SIGCONT`), the old owner either finds its lease lost first
/// and sends the change on to the new owner, or tries to write under its old lease and is
/// refused by the fence (`unavailable`), never by the version (`busy`); Cleo's join is never
/// lost, no version is pushed twice with two states, and the new owner keeps the lobby.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_lobby_owner_is_fenced_when_it_wakes() {
    let Some(mut cluster) = Cluster::start(3).await else {
        return;
    };
    let (ana, ben, cleo, id, mut watcher) = ana_opens_and_ben_joins(&cluster).await;
    let path = |what: &str| format!("/api/lobbies/{id}/{what}");

    cluster.signal(0, "-STOP");
    wait_free(&cluster, id).await;
    let (s, t) = act(&cluster, 1, &cleo, &path("join"), "{}").await;
    let joined = lobby_of(s, &t);
    assert_eq!(cluster.lobby_owner(id).await, Some((1, 2)));
    // Ben's change, sent to the paused node: it waits there.
    let addr = cluster.addrs[0];
    let (ben2, ready) = (ben.clone(), path("ready"));
    let pending =
        tokio::spawn(
            async move { call(addr, "POST", &ready, Some(&ben2), r#"{"ready": true}"#).await },
        );
    tokio::time::sleep(Duration::from_millis(300)).await;
    cluster.signal(0, "-CONT");
    let (s, t) = pending.await.expect("the request");
    let fenced = match s {
        200 => {
            let l = lobby_of(s, &t);
            assert!(l.seats[1].ready, "{l:?}");
            assert!(l.seats[2].occupant.is_some(), "Cleo's join lost: {l:?}");
            false
        }
        _ => {
            assert_eq!((s, code_of(&t).as_str()), (503, "unavailable"), "{t}");
            true
        }
    };
    // The old owner saw its lease lost (by its renewal or by the fence).
    let node = cluster.node_id(0);
    let waited = Instant::now();
    while cluster
        .metric(0, LOBBY_LEASES, &[("event", "lost"), ("node", &node)])
        .await
        < 1.0
    {
        assert!(waited.elapsed() < READ_TIMEOUT, "node 0 never saw it lost");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Ben again through the old owner (sent on now), and Ana from node 2.
    let (s, t) = act(&cluster, 0, &ben, &path("ready"), r#"{"ready": true}"#).await;
    lobby_of(s, &t);
    let (s, t) = act(&cluster, 2, &ana, &path("ready"), r#"{"ready": true}"#).await;
    let last = lobby_of(s, &t);
    assert_eq!(
        cluster.lobby_owner(id).await,
        Some((1, 2)),
        "node 1 keeps it"
    );
    let stored = stored_lobby(&cluster, id).await;
    assert_eq!(stored.version, last.version);
    assert!(
        stored.seats.iter().all(|s| s.occupant.is_some()),
        "{stored:?}"
    );
    assert!(last.version > joined.version);
    let seen = pushes(&mut watcher, Duration::from_millis(500)).await;
    for w in seen.windows(2) {
        assert!(
            w[0].version < w[1].version,
            "pushed out of order, or one version twice: {seen:?}"
        );
    }
    assert_eq!(
        seen.last(),
        Some(&stored),
        "the last push is the stored lobby"
    );
    eprintln!(
        "the woken owner's write was {}",
        if fenced {
            "fenced"
        } else {
            "sent on to the new owner"
        }
    );
}
