//! What players come back to: the leaderboard and a player's profile after rated matches, and
//! the replay viewer stepping through a finished match (first, previous, next, last, a jump to
//! a seq, the step's events in words, the score chart, the shareable link); a running match has
//! no replay yet.

use crate::cdp::Page;
use crate::harness::*;
use client::bot::Rng;
use client::{Client, Follower};
use protocol::{CreateLobby, JoinLobby, Leaderboard, ServerMessage};
use serde_json::json;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// A registered account's client.
async fn account(server: &Server, name: &str) -> Client {
    let mut c = Client::new(&server.http()).expect("client");
    c.register(name, "a long enough password")
        .await
        .expect("register");
    c
}

/// A rated lobby of these accounts (the first hosts), started and played to its end with
/// random moves: the match id.
async fn rated_match(players: &[&Client], seed: u64) -> Uuid {
    let lobby = players[0]
        .create_lobby(&CreateLobby {
            name: "Rated".into(),
            seats: players.len() as u8,
            modules: Default::default(),
            meeples: None,
            clock: None,
            public: true,
            rated: true,
        })
        .await
        .expect("a rated lobby");
    for p in &players[1..] {
        p.join_lobby(lobby.id, &JoinLobby::default())
            .await
            .expect("join");
    }
    for p in players {
        p.set_ready(lobby.id, true).await.expect("ready");
    }
    let match_id = players[0].start(lobby.id).await.expect("start").match_id;
    let mut seats = Vec::new();
    for p in players {
        let mut conn = p.connect().await.expect("connect");
        while !matches!(
            conn.next_message().await.expect("read"),
            Some(ServerMessage::Identified { .. })
        ) {}
        let seat = conn.take_seat(match_id).await.expect("seat");
        conn.subscribe(match_id, None).await.expect("subscribe");
        seats.push((
            seat.seat,
            Follower::from_conn(conn, match_id, Some(seat.seat)),
        ));
    }
    seats.sort_by_key(|(s, _)| *s);
    let mut seats: Vec<Follower> = seats.into_iter().map(|(_, f)| f).collect();
    client::bot::play(&mut seats, &mut [], &mut Rng::new(seed), 5_000)
        .await
        .expect("play to the end");
    match_id
}

async fn leaderboard(server: &Server) -> Leaderboard {
    let (status, body) = client::http_get(&format!("{}/api/ratings?family=duel", server.http()))
        .await
        .expect("the leaderboard");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leaderboard_and_a_profile_show_rated_matches() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let (ann, bo) = (account(&server, "Ann").await, account(&server, "Bo").await);
    let match_id = rated_match(&[&ann, &bo], 11).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let board = loop {
        let board = leaderboard(&server).await;
        if board.entries.len() == 2 {
            break board;
        }
        assert!(Instant::now() < deadline, "not rated in time");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };

    // The lobby links to the leaderboard; it lists both, best first, as the API ranks them.
    let p = b.page(1280, 900).await;
    p.goto(&format!("{}/ratings", server.http())).await;
    p.wait(
        "document.querySelectorAll('#leaders tbody tr').length === 2",
        "two rated players",
    )
    .await;
    let rows = p
        .eval("[...document.querySelectorAll('#leaders tbody tr')].map(tr => [tr.dataset.name, tr.querySelector('.rating').textContent])")
        .await;
    let expected: Vec<_> = board
        .entries
        .iter()
        .map(|e| json!([e.name, format!("{:.1} ?", e.rating.rating)]))
        .collect();
    assert_eq!(rows, json!(expected), "the page's board is the API's");
    p.screenshot("ratings-leaderboard").await;

    // A profile: the rating per family, the history with its replay link, the chart's line.
    p.click(&format!(
        "#leaders tr[data-name=\"{}\"] a",
        board.entries[0].name
    ))
    .await;
    p.wait(
        &format!(
            "document.getElementById('p-name').textContent === {}",
            json!(board.entries[0].name)
        ),
        "the profile",
    )
    .await;
    p.wait(
        &format!("document.querySelector('#p-history tr[data-match=\"{match_id}\"]') !== null"),
        "the rated match in the history",
    )
    .await;
    let duel = text_of(
        &p,
        "document.querySelector('#p-ratings tr[data-family=\"duel\"] .rating').textContent",
    )
    .await;
    assert_eq!(duel, format!("{:.1} ?", board.entries[0].rating.rating));
    assert_eq!(
        p.eval("document.querySelectorAll('#p-chart path.line').length")
            .await,
        json!(1),
        "one family, one line"
    );
    p.screenshot("ratings-profile").await;
    p.click(&format!(
        "#p-history tr[data-match=\"{match_id}\"] a.replay-link"
    ))
    .await;
    p.wait(
        "document.body.dataset.seq !== undefined && document.getElementById('r-seq').textContent === document.getElementById('r-last').textContent",
        "the replay at its end",
    )
    .await;
    server.kill();
}

async fn seq_shown(p: &Page) -> u64 {
    text_of(p, "document.body.dataset.seq ?? ''")
        .await
        .parse()
        .unwrap_or(u64::MAX)
}

async fn wait_step(p: &Page, seq: u64) {
    p.wait(
        &format!("document.body.dataset.seq === '{seq}'"),
        &format!("step {seq}"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_viewer_steps_through_a_finished_match() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let created = create(&server, &s).await;
    let last = play_randomly(&server, &created, 10_000, 5).await;
    let (seq, view) = server_view(&server, created.match_id).await;
    assert_eq!(seq, last);
    assert_eq!(view["finished"], json!(true));
    let id = created.match_id;

    // The end of the game links to its replay.
    let seat = seat_page(&b, &server, &created.seats[0].token).await;
    seat.wait(
        "!document.getElementById('replay-row').hidden",
        "the replay link at the end",
    )
    .await;
    assert_eq!(
        text_of(
            &seat,
            "document.getElementById('replay-link').getAttribute('href')"
        )
        .await,
        format!("/replay?match={id}")
    );

    let p = b.page(1280, 900).await;
    p.goto(&format!("{}/replay?match={id}&seq=0", server.http()))
        .await;
    wait_step(&p, 0).await;
    let events = text_of(&p, "document.getElementById('r-events').textContent").await;
    assert!(events.contains("The game begins"), "{events}");
    p.click("#r-next").await;
    wait_step(&p, 1).await;
    p.click("#r-prev").await;
    wait_step(&p, 0).await;
    p.click("#r-last-btn").await;
    wait_step(&p, last).await;
    assert_eq!(
        page_scores_of_replay(&p).await,
        scores(&view),
        "the last step's scores are the match's"
    );
    p.click("#r-first").await;
    wait_step(&p, 0).await;
    let to = last / 2;
    p.eval(&format!("document.getElementById('r-to').value = '{to}'"))
        .await;
    p.click("#r-jump button").await;
    wait_step(&p, to).await;
    assert_eq!(seq_shown(&p).await, to);
    // The link names the match and the step; opened again, it shows the same step.
    let link = text_of(&p, "document.getElementById('r-link').value").await;
    assert!(
        link.ends_with(&format!("/replay?match={id}&seq={to}")),
        "{link}"
    );
    assert_eq!(
        p.eval("document.querySelectorAll('#r-chart path.line').length")
            .await,
        json!(created.seats.len()),
        "a line per player"
    );
    p.screenshot("replay-viewer").await;
    let other = b.page(1280, 900).await;
    other.goto(&link).await;
    wait_step(&other, to).await;

    // A running match has no replay yet: the page says so in words.
    let running = create(&server, &s).await;
    other
        .goto(&format!(
            "{}/replay?match={}",
            server.http(),
            running.match_id
        ))
        .await;
    other
        .wait(
            "document.getElementById('error').textContent.includes('not over yet')",
            "the refusal in words",
        )
        .await;
    server.kill();
}

async fn page_scores_of_replay(p: &Page) -> Vec<u64> {
    p.eval("[...document.querySelectorAll('#r-players .score')].map(td => Number(td.textContent))")
        .await
        .as_array()
        .expect("scores")
        .iter()
        .map(|v| v.as_u64().expect("a number"))
        .collect()
}
