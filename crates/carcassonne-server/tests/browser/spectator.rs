//! A spectator page follows a game live, and follows a whole random game exactly.

use crate::harness::*;
use protocol::CreateMatch;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectator_follows_a_game_live() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-coats-of-arms-complete-and-incomplete");
    let created = create(&server, &s).await;
    let watcher = b.page(1280, 720).await;
    watcher
        .goto(&format!("{}/watch/{}", server.http(), created.match_id))
        .await;
    watcher
        .wait(
            "window.carcassonne && window.carcassonne.view",
            "the spectator's view",
        )
        .await;
    assert_eq!(
        watcher
            .eval("document.getElementById('whoami').textContent")
            .await,
        json!("Watching")
    );
    // The players play over the protocol; the spectator page follows every seq.
    let mut seats = seat_connections(&server, &created).await;
    let mut seq = 0;
    for (i, step) in s.steps.iter().enumerate() {
        let out = seats[usize::from(step.player)]
            .command(&format!("s{i}"), step.command.clone().expect("a command"))
            .await
            .expect("command");
        assert!(
            matches!(out, client::CommandOutcome::Accepted { .. }),
            "{out:?}"
        );
        seq += 1;
        wait_seq(&watcher, seq).await;
        let (_, view) = server_view(&server, created.match_id).await;
        assert_eq!(page_view(&watcher).await, view, "spectator at seq {seq}");
    }
    // A spectator has no moves to offer.
    assert_eq!(
        watcher
            .eval("document.querySelectorAll('.legal:not(.theirs)').length")
            .await,
        json!(0)
    );
    watcher.screenshot("spectator").await;
}

/// Every diff of a whole random 3-player game with The Tollkeepers (a full pile, so every kind of
/// patch the server makes) through the page's own JSON Patch code: the spectator page ends with
/// exactly the server's view, and draws the whole board.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectator_page_follows_a_whole_random_game_exactly() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let req = CreateMatch {
        players: vec![
            rules::Colour::Red,
            rules::Colour::Blue,
            rules::Colour::Green,
        ],
        modules: rules::Modules {
            tollkeepers: true,
            ..Default::default()
        },
        meeples: None,
        draw_order: None,
        clock: None,
    };
    let created = client::create_match(&server.http(), &req)
        .await
        .expect("create");
    let id = created.match_id;
    let watcher = b.page(1280, 720).await;
    watcher.goto(&format!("{}/watch/{id}", server.http())).await;
    watcher
        .wait("window.carcassonne && window.carcassonne.view", "the view")
        .await;

    // The whole game, whoever must decide.
    let seq = play_randomly(&server, &created, u64::MAX, 7).await;
    wait_seq(&watcher, seq).await;
    let (sseq, view) = server_view(&server, id).await;
    assert_eq!(sseq, seq);
    assert_eq!(
        page_view(&watcher).await,
        view,
        "the page's patches agree with the server's"
    );
    assert_eq!(page_scores(&watcher).await, scores(&view));
    let tiles = watcher
        .eval("document.querySelectorAll('#board .placed').length")
        .await;
    assert_eq!(
        tiles,
        json!(view["board"].as_object().map(|b| b.len()).unwrap_or(0))
    );
    watcher.screenshot("random-game-spectator").await;
}
