//! What the nodes share besides matches: chat lines (with the nodes that have members in
//! their room), revoked sessions and lobbies.

use crate::common::READ_TIMEOUT;
use crate::harness::*;
use client::bot::Rng;
use client::{Connection, Follower};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;
use uuid::Uuid;

/// A chat line said at the table on one node reaches the players on the others; a session
/// revoked on one node closes its sockets on another (4002) within a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_and_revocations_reach_every_node() {
    let Some(cluster) = Cluster::start(3).await else {
        return;
    };
    let created = create(&cluster, 2).await;
    let id = created.match_id;
    let mut seats = seats_from_node_1(&cluster, &created).await;
    let said = protocol::ClientMessage::Chat {
        match_id: Some(id),
        lobby_id: None,
        text: "bonjour from node 1".into(),
    };
    seats[0].send(&said).await.expect("chat");
    // The sender hears its own line (stored and delivered on node 1) before node 2 can.
    let echo = seats[0]
        .wait_for(|m| {
            matches!(
                m,
                protocol::ServerMessage::Chat(_) | protocol::ServerMessage::Error(_)
            )
        })
        .await;
    assert!(
        matches!(&echo, Ok(protocol::ServerMessage::Chat(_))),
        "node 1 answered the chat with {echo:?}"
    );
    let heard = seats[1]
        .wait_for(
            |m| matches!(m, protocol::ServerMessage::Chat(l) if l.text == "bonjour from node 1"),
        )
        .await;
    assert!(
        heard.is_ok(),
        "the player on node 2 did not hear node 1's chat: {heard:?}"
    );

    let creds = r#"{"name": "Hedy", "password": "frequency hopping"}"#;
    let (status, body) = call(cluster.addrs[0], "POST", "/api/accounts", None, creds).await;
    assert_eq!(status, 201, "{body}");
    let token = serde_json::from_str::<serde_json::Value>(&body).expect("json")["token"]
        .as_str()
        .expect("a token")
        .to_owned();
    let bearer = format!("Bearer {token}");
    let mut device =
        Connection::connect_with_headers(&cluster.ws(1), &[("Authorization", &bearer)])
            .await
            .expect("connect with the session");
    device.set_read_timeout(Some(READ_TIMEOUT));
    let revoked = Instant::now();
    let (status, body) = call(
        cluster.addrs[2],
        "DELETE",
        "/api/sessions",
        Some(&token),
        "",
    )
    .await;
    assert_eq!(status, 204, "{body}");
    while let Ok(Some(_)) = device.next_message().await {}
    let took = revoked.elapsed();
    assert_eq!(
        device.close_frame().map(|c| c.code),
        Some(protocol::close::SESSION_REVOKED),
        "the socket on node 1 of a session revoked on node 2"
    );
    assert!(
        took < Duration::from_secs(1),
        "closed {took:?} after the revocation"
    );
    eprintln!("a revocation on node 2 closed the socket on node 1 in {took:?}");
}

/// A chat line crosses NATS once, on its room's subject, and only the nodes with members in
/// the room read it: node 0, with nobody at the match, hears nothing of its chat until a
/// spectator of its own comes, then the room's next line, and it stops following the room
/// when the spectator leaves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_line_reaches_only_the_nodes_with_members_in_its_room() {
    let Some(cluster) = Cluster::start(3).await else {
        return;
    };
    let created = create(&cluster, 2).await;
    let id = created.match_id;
    // Every message under the cluster's prefix that carries one of the test's lines.
    let crossed: Arc<Mutex<Vec<String>>> = Arc::default();
    let counting = Arc::clone(&crossed);
    let counter = every_message(&cluster, move |m| {
        if String::from_utf8_lossy(&m.payload).contains("said on node") {
            counting.lock().expect("lock").push(m.subject.to_string());
        }
    })
    .await;
    let mut seats = seats_from_node_1(&cluster, &created).await;
    for node in [1, 2] {
        assert!(
            rooms_become(&cluster, node, 1.0).await,
            "node {node} follows the room"
        );
    }
    say(&mut seats[0], id, "first line, said on node 1").await;
    heard(&mut seats[1], "first line, said on node 1").await;
    let subject = format!("{}.match.{}.chat", cluster.prefix, id.simple());
    // The line's one publication may still be on its way to the test's own subscription.
    wait_until(|| crossed.lock().expect("lock").len() == 1).await;
    assert_eq!(
        *crossed.lock().expect("lock"),
        std::slice::from_ref(&subject)
    );
    assert_eq!(received(&cluster, 0).await, 0.0, "node 0 has nobody there");
    assert_eq!(received(&cluster, 2).await, 1.0, "node 2 has a seat there");
    assert_eq!(cluster.metric(0, ROOMS, &[]).await, 0.0);

    let mut spectator = connect(&cluster, 0).await.expect("connect");
    spectator.subscribe(id, None).await.expect("subscribe");
    spectator
        .wait_for(|m| matches!(m, protocol::ServerMessage::Snapshot { .. }))
        .await
        .expect("the first view");
    assert!(
        rooms_become(&cluster, 0, 1.0).await,
        "node 0 follows the room"
    );
    say(&mut seats[1], id, "second line, said on node 2").await;
    heard(&mut spectator, "second line, said on node 2").await;
    heard(&mut seats[0], "second line, said on node 2").await;
    assert_eq!(received(&cluster, 0).await, 1.0, "node 0's spectator");
    wait_until(|| crossed.lock().expect("lock").len() == 2).await;
    assert_eq!(*crossed.lock().expect("lock"), [subject.clone(), subject]);

    drop(spectator);
    assert!(
        rooms_become(&cluster, 0, 0.0).await,
        "node 0 stops following the room once its spectator left"
    );
    counter.abort();
}

const ROOMS: &str = "carcassonne_cluster_chat_rooms";

async fn say(conn: &mut Connection, id: Uuid, text: &str) {
    let said = protocol::ClientMessage::Chat {
        match_id: Some(id),
        lobby_id: None,
        text: text.into(),
    };
    conn.send(&said).await.expect("chat");
    heard(conn, text).await;
}

async fn heard(conn: &mut Connection, text: &str) {
    let line = conn
        .wait_for(|m| matches!(m, protocol::ServerMessage::Chat(l) if l.text == text))
        .await;
    assert!(line.is_ok(), "{text:?} was not heard: {line:?}");
}

/// Chat news from other nodes that reached node `i`.
async fn received(cluster: &Cluster, i: usize) -> f64 {
    let node = cluster.node_id(i);
    cluster
        .metric(
            i,
            "carcassonne_cluster_chat_received_total",
            &[("node", &node)],
        )
        .await
}

/// Whether node `i` comes to follow `rooms` chat rooms within five seconds.
async fn rooms_become(cluster: &Cluster, i: usize, rooms: f64) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        if cluster.metric(i, ROOMS, &[]).await == rooms {
            return true;
        }
        if Instant::now() > until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn wait_until(done: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(5);
    while !done() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A lobby opened on node 0 is joined from nodes 1 and 2 (each guest on its own node), every
/// change reaches the followers on every node, the host starts it, and the three play the
/// match to its end, each from its own node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobby_opened_on_one_node_is_joined_and_played_from_the_others() {
    let Some(cluster) = Cluster::start(3).await else {
        return;
    };
    let mut guests = Vec::new();
    for (i, name) in ["Ana", "Ben", "Cleo"].into_iter().enumerate() {
        guests.push(guest(&cluster, i, name).await);
    }
    let body = r#"{"name": "Across nodes", "seats": 3}"#;
    let (status, text) = call(
        cluster.addrs[0],
        "POST",
        "/api/lobbies",
        Some(&guests[0].1),
        body,
    )
    .await;
    assert_eq!(status, 201, "{text}");
    let lobby: protocol::LobbyState = serde_json::from_str(&text).expect("a lobby");
    let id = lobby.id;
    let mut conns = Vec::new();
    for (i, (_, token)) in guests.iter().enumerate() {
        conns.push(ws_as(&cluster, i, token).await);
    }
    conns[0].subscribe_lobby(id).await.expect("follow");
    lobby_at(&mut conns[0], 1).await;
    for i in 1..3 {
        let path = format!("/api/lobbies/{id}/join");
        let (status, text) = call(cluster.addrs[i], "POST", &path, Some(&guests[i].1), "{}").await;
        assert_eq!(status, 200, "join from node {i}: {text}");
        conns[i].subscribe_lobby(id).await.expect("follow");
        let joined: protocol::LobbyState = serde_json::from_str(&text).expect("a lobby");
        // The host, on node 0, sees the join made on node i.
        let seen = lobby_at(&mut conns[0], joined.version).await;
        assert!(seen.seats[i].occupant.is_some(), "{seen:?}");
    }
    let mut version = 0;
    for (i, (_, token)) in guests.iter().enumerate() {
        let path = format!("/api/lobbies/{id}/ready");
        let (status, text) = call(
            cluster.addrs[i],
            "POST",
            &path,
            Some(token),
            r#"{"ready": true}"#,
        )
        .await;
        assert_eq!(status, 200, "ready on node {i}: {text}");
        version = serde_json::from_str::<protocol::LobbyState>(&text)
            .expect("a lobby")
            .version;
    }
    let path = format!("/api/lobbies/{id}/start");
    let (status, text) = call(cluster.addrs[0], "POST", &path, Some(&guests[0].1), "").await;
    assert_eq!(status, 201, "{text}");
    let match_id: Uuid =
        serde_json::from_str::<serde_json::Value>(&text).expect("json")["match_id"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .expect("a match id");
    let mut seats = Vec::new();
    for (i, mut conn) in conns.into_iter().enumerate() {
        let started = lobby_at(&mut conn, version + 1).await;
        assert_eq!(started.match_id, Some(match_id), "node {i} saw the start");
        let seat = conn.take_seat(match_id).await.expect("take the seat");
        conn.subscribe(match_id, None).await.expect("subscribe");
        seats.push(Follower::from_conn(conn, match_id, Some(seat.seat)));
    }
    seats.sort_by_key(|f| f.seat);
    let mut rng = Rng::new(3);
    let moves = client::bot::play(&mut seats, &mut [], &mut rng, 2_000)
        .await
        .expect("the match is played");
    assert!(
        seats[0].view().expect("view").finished,
        "after {moves} moves"
    );
}
