//! What just happened: each player's last tile outlined in their colour, points flashed where they
//! were scored, and the server's own moves marked as such in the log.

use crate::clicks::*;
use crate::harness::*;
use protocol::CreateMatch;
use serde_json::{Value, json};

/// The Okabe–Ito fills of `web/js/words.js`.
fn fill(colour: &str) -> &'static str {
    match colour {
        "red" => "#D55E00",
        "blue" => "#0072B2",
        other => panic!("no fill for {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_players_last_tile_is_outlined_in_their_colour() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-coats-of-arms-complete-and-incomplete");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    red.viewport(1280, 800, false).await;
    let steps = canonical_steps(&s);
    // Both players' first turns (a tile, then a meeple or a pass), by clicking.
    let two_turns = steps
        .iter()
        .enumerate()
        .filter(|(_, (_, c))| matches!(c, rules::Command::PlaceTile { .. }))
        .nth(2)
        .map_or(steps.len(), |(i, _)| i);
    let seq = play_steps(&[&red, &blue], &s, 0..two_turns, 0).await;
    let (_, view) = server_view(&server, created.match_id).await;
    // Each player's last placed tile, from the server's own log.
    let log: Value = red
        .eval(&format!(
            "fetch('/api/matches/{}/log').then(r => r.json())",
            created.match_id
        ))
        .await;
    let mut last = std::collections::BTreeMap::new();
    for entry in log["entries"].as_array().expect("entries") {
        for e in entry["events"].as_array().expect("events") {
            if e["type"] == "tile_placed" {
                let colour =
                    view["players"][e["player"].as_u64().expect("player") as usize]["colour"]
                        .as_str()
                        .expect("colour")
                        .to_string();
                last.insert(colour, format!("{},{}", e["pos"]["x"], e["pos"]["y"]));
            }
        }
    }
    assert_eq!(last.len(), 2, "both players placed a tile: {last:?}");
    for p in [&red, &blue] {
        wait_seq(p, seq).await;
        for (colour, at) in &last {
            let sel = format!("[data-last-tile=\"{colour}\"]");
            p.wait(
                &format!("document.querySelector('{sel}')"),
                "the last tile's outline",
            )
            .await;
            let got = p
                .eval(&format!(
                    "(e => [e.dataset.at, e.getAttribute('stroke'), document.querySelectorAll('{sel}').length])(document.querySelector('{sel}'))"
                ))
                .await;
            assert_eq!(got, json!([at, fill(colour), 1]), "{colour}'s last tile");
        }
    }
    red.screenshot("last-tiles").await;
}

/// A server move is marked in the log: Red's clock runs out and the server plays for Red; the
/// page says so live, and a page opened afterwards (from the stored history) says the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_own_moves_are_marked_in_the_log() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let req = CreateMatch {
        players: vec![rules::Colour::Red, rules::Colour::Blue],
        modules: Default::default(),
        meeples: None,
        draw_order: None,
        clock: Some(protocol::ClockSettings {
            bank_ms: protocol::ClockSettings::MIN_BANK_MS,
            increment_ms: 0,
        }),
    };
    let created = client::create_match(&server.http(), &req)
        .await
        .expect("create");
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let marked = "document.querySelector('#log li.by-server[data-by-server=\"clock\"]')";
    red.wait(marked, "the server's move in the log").await;
    let line = text_of(&red, &format!("{marked}.textContent")).await;
    assert_eq!(line, "Red's clock ran out: the server plays for Red.");
    let seq = page_seq(&red).await.expect("seq");
    let watcher = b.page(1280, 800).await;
    watcher
        .goto(&format!("{}/watch/{}", server.http(), created.match_id))
        .await;
    wait_seq(&watcher, seq).await;
    watcher.wait(marked, "the mark from the history").await;
    assert_eq!(
        text_of(&watcher, &format!("{marked}.textContent")).await,
        line
    );
}
