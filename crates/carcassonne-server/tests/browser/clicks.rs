//! Playing a scenario's commands in a page by clicking, as a player would.

use crate::cdp::Page;
use crate::harness::wait_seq;
use rules::Command;
use rules::scenario::Scenario;
use serde_json::json;

/// Plays one command on the page by clicking, as a player would: a legal square, the tile on
/// the board until it shows the rotation, Place; a meeple circle (after the figure's button for
/// a large meeple, builder or pig) or a tollhouse square, then the confirmation; Pass; the
/// buttons of the other decisions.
pub(crate) async fn click_command(p: &Page, command: &Command) {
    let cmd = serde_json::to_value(command).expect("command json");
    match cmd["type"].as_str() {
        Some("place_tile") => {
            let key = format!("{},{}", cmd["pos"]["x"], cmd["pos"]["y"]);
            let picked = format!("!!document.querySelector('[data-preview=\"{key}\"]')");
            if p.eval(&picked).await != json!(true) {
                p.click(&format!("[data-legal=\"{key}\"]")).await;
            }
            p.wait(
                &format!("document.querySelector('[data-preview=\"{key}\"]')"),
                "preview",
            )
            .await;
            for _ in 0..4 {
                let r = p
                    .eval("document.getElementById('drawn-name').dataset.rotation")
                    .await;
                if r.as_str() == Some(&cmd["rotation"].to_string()) {
                    break;
                }
                // Clicking the tile on the board turns it.
                p.click(&format!("[data-preview=\"{key}\"]")).await;
            }
            p.click("#confirm").await;
        }
        // A click picks the target; the meeple (or tollhouse) is put once confirmed.
        // Another figure (large meeple, builder, pig) is chosen first; its circles then show.
        Some("place_meeple") => {
            let t = cmd["target"].as_str().expect("target");
            let sel = match cmd["figure"].as_str() {
                Some(f) => {
                    p.click(&format!("[data-figure-choice=\"{f}\"]")).await;
                    format!("[data-target=\"{t}\"][data-figure=\"{f}\"]")
                }
                None => format!("[data-target=\"{t}\"]"),
            };
            p.wait(&format!("document.querySelector('{sel}')"), "the target")
                .await;
            p.click(&sel).await;
            p.wait(
                &format!("document.querySelector('{sel}.focus')"),
                "the pick",
            )
            .await;
            p.click("#confirm").await;
        }
        Some("place_tollhouse") => {
            let key = format!("{},{}", cmd["pos"]["x"], cmd["pos"]["y"]);
            let sel = format!("[data-toll-target=\"{key}\"]");
            p.click(&sel).await;
            p.wait(
                &format!("document.querySelector('{sel}.focus')"),
                "the pick",
            )
            .await;
            p.click("#confirm").await;
        }
        // A chain of dispatches (M6) and the double turn (R9) are declined with their own button.
        Some("pass") => {
            let mut sel = "#pass";
            for own in ["[data-key=\"chain:pass\"]", "[data-key=\"double:pass\"]"] {
                if p.eval(&format!("!!document.querySelector('{own}')")).await == json!(true) {
                    sel = own;
                }
            }
            p.click(sel).await;
        }
        // The Messages: the buttons of the decision.
        Some("choose_pawn") => {
            let pawn = cmd["pawn"].as_str().expect("pawn");
            p.click(&format!("[data-key=\"pawn:{pawn}\"]")).await;
        }
        Some("dispatch_points") => p.click("[data-key=\"dispatch:points\"]").await,
        Some("dispatch_action") => {
            let key = match cmd.get("meeple") {
                Some(m) => format!(
                    "dispatch:{},{} {}",
                    m["pos"]["x"],
                    m["pos"]["y"],
                    m["target"].as_str().expect("target")
                ),
                None => "dispatch:action".to_string(),
            };
            p.click(&format!("[data-key=\"{key}\"]")).await;
        }
        Some("draw_dispatch") => p.click("[data-key=\"chain:draw\"]").await,
        // Traders & Builders: the builder's double turn (R9).
        Some("take_double_turn") => p.click("[data-key=\"double:take\"]").await,
        other => panic!("no click for {other:?}"),
    }
}

/// The scenario's commands with meeple targets in the canonical names the page offers (a
/// scenario may name a segment by any side it reaches), from the rules crate's own events.
/// A step that sends the default (The Messages' scenarios) becomes the default's own command,
/// which the page offers like any other.
pub(crate) fn canonical_steps(s: &Scenario) -> Vec<(u8, Command)> {
    let (mut game, _) = rules::Game::start(s.setup.clone()).expect("setup");
    let mut out = Vec::new();
    for step in &s.steps {
        let default = || {
            let (id, _) = game
                .open_decisions()
                .into_iter()
                .find(|(_, d)| d.player() == step.player)?;
            game.default_command(id).map(|(_, c)| c)
        };
        let Some(command) = step
            .command
            .clone()
            .or_else(|| step.default.then(default).flatten())
        else {
            continue;
        };
        let Ok(events) = game.apply(step.player, command.clone()) else {
            continue; // a step the scenario expects to be refused
        };
        let cmd = events
            .iter()
            .find_map(|e| match e {
                rules::Event::MeeplePlaced { target, figure, .. } => Some(Command::PlaceMeeple {
                    target: *target,
                    figure: *figure,
                }),
                _ => None,
            })
            .unwrap_or(command);
        out.push((step.player, cmd));
    }
    out
}

/// Plays `steps` of the scenario on the seat pages by clicking, each step awaited in every page.
pub(crate) async fn play_steps(
    pages: &[&Page],
    s: &Scenario,
    range: std::ops::Range<usize>,
    mut seq: u64,
) -> u64 {
    let steps = canonical_steps(s);
    for (player, command) in &steps[range] {
        let p = pages[usize::from(*player)];
        // The page must know it is its turn before it offers the move.
        p.wait(
            &format!("window.carcassonne.view.decisions.some(d => d.player === {player})"),
            "my decision",
        )
        .await;
        click_command(p, command).await;
        seq += 1;
        for q in pages {
            wait_seq(q, seq).await;
        }
    }
    seq
}
