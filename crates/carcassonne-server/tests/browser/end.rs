//! The end of a game: a banner names the winner, ranks the players and splits each score by kind
//! of scoring, the same for a player and for a spectator who arrives after the end.

use crate::harness::*;
use protocol::CreateMatch;
use rules::{Colour, Modules};
use serde_json::{Value, json};
use std::path::Path;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_banner_names_the_winner_and_splits_each_score() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    // Every module on, so that tolls, dispatches, chips and wine can all appear.
    let req = CreateMatch {
        players: vec![Colour::Red, Colour::Blue, Colour::Green],
        modules: Modules::all(),
        meeples: None,
        draw_order: None,
        clock: None,
    };
    let created = client::create_match(&server.http(), &req)
        .await
        .expect("create match");
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    red.eval("document.getElementById('end').hidden")
        .await
        .as_bool()
        .filter(|&hidden| hidden)
        .expect("no banner while the game runs");
    play_randomly(&server, &created, u64::MAX, 11).await;
    red.wait("document.body.dataset.finished === 'true'", "the end")
        .await;
    let (_, view) = server_view(&server, created.match_id).await;
    assert_eq!(view["finished"], json!(true));

    let watcher = b.page(1280, 800).await;
    watcher
        .goto(&format!("{}/watch/{}", server.http(), created.match_id))
        .await;
    watcher
        .wait("document.body.dataset.finished === 'true'", "the end, late")
        .await;

    let players = view["players"].as_array().expect("players");
    let score = |p: &Value| p["score"].as_u64().expect("score");
    let best = players.iter().map(score).max().expect("a best score");
    let winners: Vec<String> = players
        .iter()
        .filter(|p| score(p) == best)
        .map(|p| p["colour"].as_str().expect("colour").to_string())
        .collect();
    for page in [&red, &watcher] {
        let heading = page
            .eval("document.getElementById('end-h').textContent")
            .await;
        let heading = heading.as_str().expect("a heading");
        assert!(heading.contains(&format!("{best} points")), "{heading}");
        for w in &winners {
            let name = format!("{}{}", w[..1].to_uppercase(), &w[1..]);
            assert!(heading.contains(&name), "{heading} should name {name}");
        }
        // One column per player, ranked by score: each total the server's score and the sum of
        // the parts above it.
        let table = page
            .eval(
                "({
                    colours: [...document.querySelectorAll('#end-table thead th[data-player]')]
                        .map(th => th.dataset.player),
                    rows: [...document.querySelectorAll('#end-table tbody tr')]
                        .map(tr => [...tr.cells].slice(1).map(td => Number(td.textContent))),
                })",
            )
            .await;
        let colours = table["colours"].as_array().expect("colours");
        let rows: Vec<Vec<u64>> = table["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| {
                r.as_array()
                    .expect("a row")
                    .iter()
                    .map(|c| c.as_u64().expect("a number"))
                    .collect()
            })
            .collect();
        assert_eq!(colours.len(), players.len());
        let (totals, parts) = rows.split_last().expect("a total row");
        let mut last = u64::MAX;
        for (j, colour) in colours.iter().enumerate() {
            let p = players
                .iter()
                .find(|p| &p["colour"] == colour)
                .expect("a player");
            assert_eq!(totals[j], score(p), "{colour}'s total");
            assert_eq!(
                parts.iter().map(|r| r[j]).sum::<u64>(),
                totals[j],
                "{colour}'s parts"
            );
            assert!(totals[j] <= last, "ranked by score");
            last = totals[j];
        }
        // The player's controls are gone with the game.
        assert_eq!(
            page.eval("document.getElementById('hand').hidden").await,
            json!(true)
        );
    }
    let shot = red.screenshot("end-of-game").await;
    if std::env::var("UPDATE_DOCS_SCREENSHOTS").is_ok() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/end-of-game.png");
        std::fs::copy(&shot, docs).expect("copy the screenshot to docs/");
    }
}
