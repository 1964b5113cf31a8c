//! Fits the screen: the side panel inside a 1280x800 window with every module and a clock on; on
//! a phone (390x844) the clocks and the tile's controls in view without scrolling; every button
//! at least 32 px; *Place* off and the preview tinted where the tile does not fit; a meeple put
//! only after a confirmation; a spectator without a player's controls.

use crate::cdp::Page;
use crate::clicks::canonical_steps;
use crate::harness::*;
use protocol::CreateMatch;
use rules::{Colour, Modules};
use serde_json::{Value, json};
use std::path::Path;

/// A match with every module and a game clock.
async fn everything(server: &Server) -> protocol::MatchCreated {
    let req = CreateMatch {
        players: vec![Colour::Red, Colour::Blue, Colour::Green],
        modules: Modules::all(),
        meeples: None,
        draw_order: None,
        clock: Some(protocol::ClockSettings {
            bank_ms: 900_000,
            increment_ms: 10_000,
        }),
    };
    client::create_match(&server.http(), &req)
        .await
        .expect("create")
}

/// `[left, top, right, bottom]` of the first element matching `selector`.
async fn rect(p: &Page, selector: &str) -> [f64; 4] {
    let v = p
        .eval(&format!(
            "(r => [r.left, r.top, r.right, r.bottom])(document.querySelector({}).getBoundingClientRect())",
            json!(selector)
        ))
        .await;
    let n = |i: usize| v[i].as_f64().expect("a number");
    [n(0), n(1), n(2), n(3)]
}

/// The visible buttons of the game smaller than 32 px either way, as `"text WxH"`.
async fn small_buttons(p: &Page) -> Value {
    p.eval(
        "[...document.querySelectorAll('#game button')].filter(b => b.getClientRects().length > 0)
           .map(b => [b.id || b.textContent || b.getAttribute('aria-label'), b.getBoundingClientRect()])
           .filter(([, r]) => r.width < 32 || r.height < 32)
           .map(([n, r]) => `${n} ${Math.round(r.width)}x${Math.round(r.height)}`)",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_side_panel_fits_1280x800_with_every_module_and_a_clock() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let created = everything(&server).await;
    // Some chips in hand and scores, so every column has something in it.
    let seq = play_randomly(&server, &created, 30, 3).await;
    let red = b.page(1280, 800).await;
    red.goto(&format!(
        "{}/#token={}",
        server.http(),
        created.seats[0].token
    ))
    .await;
    wait_seq(&red, seq).await;
    red.wait(
        "document.querySelectorAll('#players .clock').length === 3",
        "three clocks",
    )
    .await;
    red.screenshot("fits-1280x800").await;
    let aside = rect(&red, "aside").await;
    assert!(aside[2] <= 1280.0, "the panel's right edge: {aside:?}");
    let width = red.eval("document.documentElement.scrollWidth").await;
    assert!(
        width.as_f64().unwrap_or(9e9) <= 1280.0,
        "page width {width}"
    );
    // A player's row stays one or two lines high, chips and all.
    let rows = red
        .eval("[...document.querySelectorAll('#players tr')].map(tr => tr.getBoundingClientRect().height)")
        .await;
    for h in rows.as_array().expect("rows") {
        assert!(
            h.as_f64().unwrap_or(9e9) <= 48.0,
            "a row {h} px high: {rows}"
        );
    }
    assert_eq!(small_buttons(&red).await, json!([]), "buttons under 32 px");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_phone_the_clocks_and_the_tile_controls_are_in_view() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let created = everything(&server).await;
    let red = b.page(390, 844).await;
    red.viewport(390, 844, true).await;
    red.goto(&format!(
        "{}/#token={}",
        server.http(),
        created.seats[0].token
    ))
    .await;
    red.wait("window.carcassonne && window.carcassonne.view", "view")
        .await;
    // Pick the first legal square: the preview and the controls to turn and place it.
    red.click("[data-legal]").await;
    red.wait("document.querySelector('[data-preview]')", "the preview")
        .await;
    let shot = red.screenshot("phone-turn").await;
    for sel in [
        ".clock.running",
        "#drawn",
        "#rotate-ccw",
        "#rotate-cw",
        "#confirm",
    ] {
        let r = rect(&red, sel).await;
        assert!(
            r[0] >= 0.0 && r[1] >= 0.0 && r[2] <= 390.0 && r[3] <= 844.0,
            "{sel} out of view: {r:?}"
        );
    }
    let width = red.eval("document.documentElement.scrollWidth").await;
    assert!(width.as_f64().unwrap_or(9e9) <= 390.0, "page width {width}");
    assert_eq!(small_buttons(&red).await, json!([]), "buttons under 32 px");
    if std::env::var("UPDATE_DOCS_SCREENSHOTS").is_ok() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/phone-turn.png");
        std::fs::copy(&shot, docs).expect("copy the screenshot to docs/");
    }
}

/// *Place* is off and the preview tinted where the tile does not fit; a meeple is put only once
/// confirmed (a click on its circle picks it; *Cancel* drops the pick); a spectator sees no
/// player's controls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn place_waits_for_a_fit_and_a_meeple_for_a_confirmation() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-coats-of-arms-complete-and-incomplete");
    let created = create(&server, &s).await;
    let red = b.page(1280, 800).await;
    red.goto(&format!(
        "{}/#token={}",
        server.http(),
        created.seats[0].token
    ))
    .await;
    red.wait("window.carcassonne && window.carcassonne.view", "view")
        .await;
    let steps = canonical_steps(&s);
    let (_, tile) = &steps[0];
    let cmd = serde_json::to_value(tile).expect("json");
    let key = format!("{},{}", cmd["pos"]["x"], cmd["pos"]["y"]);
    red.click(&format!("[data-legal=\"{key}\"]")).await;
    // Turned until it does not fit: Place is off and the preview tinted.
    for _ in 0..4 {
        if text_of(&red, "document.getElementById('fit-hint').textContent").await
            == "does not fit here"
        {
            break;
        }
        red.click("#rotate-cw").await;
    }
    assert_eq!(
        red.eval("[document.getElementById('confirm').disabled, !!document.querySelector('[data-preview].misfit .misfit-tint')]")
            .await,
        json!([true, true])
    );
    // Turned to the scenario's rotation: it fits, and Place places it.
    for _ in 0..4 {
        if red
            .eval("document.getElementById('drawn-name').dataset.rotation")
            .await
            == json!(cmd["rotation"].to_string())
        {
            break;
        }
        red.click("#rotate-cw").await;
    }
    red.click("#confirm").await;
    wait_seq(&red, 1).await;
    // Phase 2: a click on a circle picks the target, nothing is sent until it is confirmed.
    let target = red
        .eval("document.querySelector('[data-target]').dataset.target")
        .await;
    let target = target.as_str().expect("a target").to_string();
    red.click(&format!("[data-target=\"{target}\"]")).await;
    red.wait(
        &format!("document.querySelector('[data-target=\"{target}\"].focus')"),
        "the picked target",
    )
    .await;
    assert_eq!(
        text_of(&red, "document.getElementById('confirm').textContent").await,
        "Put the meeple (Enter)"
    );
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(page_seq(&red).await, Some(1), "nothing sent on the pick");
    red.click("#cancel").await;
    red.wait(
        "!document.querySelector('[data-target].focus') && document.getElementById('confirm').disabled",
        "the pick dropped",
    )
    .await;
    red.click(&format!("[data-target=\"{target}\"]")).await;
    red.click("#confirm").await;
    wait_seq(&red, 2).await;
    let (_, view) = server_view(&server, created.match_id).await;
    assert_eq!(
        view["meeples"]
            .as_object()
            .map(|m| m.values().any(|x| x["target"] == json!(target))),
        Some(true),
        "the meeple is on {target}: {view}"
    );

    // A spectator has no tile, turn, place or pass controls.
    let watcher = b.page(1280, 800).await;
    watcher
        .goto(&format!("{}/watch/{}", server.http(), created.match_id))
        .await;
    wait_seq(&watcher, 2).await;
    assert_eq!(
        watcher
            .eval("[document.getElementById('hand').hidden,
                    ['confirm', 'pass', 'rotate-cw'].some(id => document.getElementById(id).getClientRects().length > 0)]")
            .await,
        json!([true, false])
    );
}

/// A seat link the server refuses: the page says so in words and offers no player's controls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_seat_link_shows_words_and_no_controls() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let p = b.page(390, 844).await;
    p.viewport(390, 844, true).await;
    p.goto(&format!("{}/#token=not-a-seat-token", server.http()))
        .await;
    p.wait("!document.getElementById('error').hidden", "the refusal")
        .await;
    assert_eq!(
        text_of(&p, "document.getElementById('error').textContent").await,
        "This seat link is not valid: check that it was copied whole."
    );
    assert_eq!(
        text_of(&p, "document.getElementById('status').textContent").await,
        "not joined"
    );
    assert_eq!(
        p.eval("['confirm', 'pass', 'rotate-cw', 'chat-form'].filter(id => document.getElementById(id).getClientRects().length > 0)")
            .await,
        json!([]),
        "no player's controls"
    );
    p.screenshot("refused-seat-link").await;
}

/// Six players with The Messages on the France map: the twelve pawns at the start of the track
/// all stand on space 0, and none covers another; the map's signs have a legend.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twelve_pawns_on_one_space_never_cover_each_other_and_the_map_has_a_legend() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let req = CreateMatch {
        players: Colour::ALL.to_vec(),
        modules: Modules::all(),
        meeples: None,
        draw_order: None,
        clock: None,
    };
    let created = client::create_match(&server.http(), &req)
        .await
        .expect("create");
    let red = b.page(1280, 800).await;
    red.goto(&format!(
        "{}/#token={}",
        server.http(),
        created.seats[0].token
    ))
    .await;
    red.wait(
        "document.querySelectorAll('#track .pawn').length === 12",
        "twelve pawns on the track",
    )
    .await;
    let overlaps = red
        .eval(
            "(() => { const r = [...document.querySelectorAll('#track .pawn')].map(p => p.getBoundingClientRect());
               const out = [];
               for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++) {
                 const w = Math.min(r[i].right, r[j].right) - Math.max(r[i].left, r[j].left);
                 const h = Math.min(r[i].bottom, r[j].bottom) - Math.max(r[i].top, r[j].top);
                 if (w > 0.5 && h > 0.5) out.push([i, j]);
               }
               return out; })()",
        )
        .await;
    assert_eq!(overlaps, json!([]), "pawns covering each other");
    assert_eq!(
        red.eval("document.getElementById('map-legend').hidden")
            .await,
        json!(false)
    );
    assert_eq!(
        red.eval("document.querySelectorAll('#map-legend li').length")
            .await,
        json!(7)
    );
    red.screenshot("twelve-pawns-and-the-map-legend").await;
}
