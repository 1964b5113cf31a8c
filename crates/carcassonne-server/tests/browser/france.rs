//! The France map in the page: the map drawn, chips taken and wines sold by clicking, and
//! refused placements said in words.

use crate::cdp::Page;
use crate::clicks::*;
use crate::harness::*;
use protocol::{CreateMatch, MatchCreated};
use rules::Command;
use serde_json::{Value, json};

/// A France-map match with a forced pile and chip layout: the start tile on Nancy, a
/// light blue 2 on (15,11) beside it, two more chips face down; base/U tiles only.
async fn create_france(server: &Server) -> MatchCreated {
    create_france_with(
        server,
        json!([
            {"pos": {"x": 15, "y": 11}, "grape": "light_blue", "value": 2},
            {"pos": {"x": 4, "y": 11}, "grape": "orange", "value": 1},
            {"pos": {"x": 12, "y": 8}, "grape": "purple", "value": 2}
        ]),
        json!(["base/U", "base/U", "base/U", "base/U", "base/U", "base/U"]),
    )
    .await
}

/// A two-player France-map match with chips, the starts on Nancy and Le Mans, and the given
/// chip layout and pile order.
async fn create_france_with(
    server: &Server,
    chip_layout: Value,
    draw_order: Value,
) -> MatchCreated {
    let req: CreateMatch = serde_json::from_value(json!({
        "players": ["red", "blue"],
        "modules": {"map": {
            "map": "france", "chips": true, "starts": ["Nancy", "Le Mans"],
            "chip_layout": chip_layout
        }},
        "draw_order": draw_order
    }))
    .expect("a create request");
    client::create_match(&server.http(), &req)
        .await
        .expect("create match")
}

/// Red passes the follower of the tile placed as `seq + 1` and waits for the wine decision.
async fn pass_to_the_sale(red: &Page, seq: u64) {
    wait_seq(red, seq + 1).await;
    red.click("#pass").await;
    wait_seq(red, seq + 2).await;
    red.wait(
        "window.carcassonne.view.decisions.some(d => d.type === 'sell_wine')",
        "the wine decision",
    )
    .await;
}

/// Places the drawn tile on a legal square in the rotation the page offers first, then passes
/// the follower; returns the next seq.
async fn place_and_pass(pages: &[&Page], p: &Page, key: &str, mut seq: u64) -> u64 {
    p.click(&format!("[data-legal=\"{key}\"]")).await;
    p.wait(
        &format!("document.querySelector('[data-preview=\"{key}\"]')"),
        "preview",
    )
    .await;
    p.click("#confirm").await;
    seq += 1;
    for q in pages {
        wait_seq(q, seq).await;
    }
    p.click("#pass").await;
    seq += 1;
    for q in pages {
        wait_seq(q, seq).await;
    }
    seq
}

/// Red (the first page) clicks the offered sale; every page reaches `seq`, the other page's log
/// tells the sale in `words`, and Red's score, every page's scores and view are the server's.
async fn sell_by_clicking(
    server: &Server,
    match_id: uuid::Uuid,
    pages: &[&Page; 2],
    seq: u64,
    words: &str,
    red_score: u64,
) {
    pages[0].click("button.sale").await;
    for p in pages {
        wait_seq(p, seq).await;
    }
    let log = text_of(pages[1], "document.getElementById('log').textContent").await;
    assert!(log.contains(words), "log: {log}");
    let (sseq, view) = server_view(server, match_id).await;
    assert_eq!(sseq, seq);
    assert_eq!(scores(&view)[0], red_score);
    for p in pages {
        assert_eq!(page_scores(p).await, scores(&view), "scores in the page");
        assert_eq!(page_view(p).await, view, "the page's view is the server's");
    }
}

/// The France map in the page: the outline, large cities, towns, border prints and face-down
/// chips are drawn; Red takes a chip by placing a tile, sees it in the hand as a wine and the
/// event in words; then sells it to the town Colmar by clicking; the points in the page are the
/// server's (P8: +2, P9: +9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn france_map_chip_taken_and_wine_sold_by_clicking() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let created = create_france(&server).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    let pages = [&red, &blue];

    // The map as the server describes it, square by square.
    let v = page_view(&red).await;
    let outline = v["map"]["info"]["outline"].as_array().expect("outline");
    let on_map: usize = outline
        .iter()
        .map(|r| {
            r.as_str()
                .unwrap_or("")
                .chars()
                .filter(|&c| c != '.')
                .count()
        })
        .sum();
    let count = |sel: &str| format!("document.querySelectorAll('{sel}').length");
    assert_eq!(red.eval(&count("[data-map-square]")).await, json!(on_map));
    assert!(red.eval(&count("[data-offmap]")).await.as_u64() > Some(0));
    assert_eq!(
        red.eval(&count("[data-city=\"Paris\"] .coat")).await,
        json!(2)
    );
    assert_eq!(red.eval(&count("[data-town]")).await, json!(15));
    assert_eq!(
        text_of(
            &red,
            "document.querySelector('[data-town=\"Colmar\"]').textContent"
        )
        .await,
        "BColmarColmar: a town buying light blue wine"
    );
    assert_eq!(red.eval(&count("[data-print]")).await, json!(13));
    assert_eq!(
        red.eval(&count("[data-print=\"16,11 E\"].print-city-coat"))
            .await,
        json!(1)
    );
    assert_eq!(red.eval(&count("[data-chip]")).await, json!(3));
    // Face-down chips say only that a chip lies there.
    let chips = text_of(
        &red,
        "document.querySelector('[data-chip=\"15,11\"]').textContent",
    )
    .await;
    assert!(
        !chips.contains("light") && chips.contains("face down"),
        "{chips}"
    );
    red.screenshot("france-map").await;

    // P8: the chip on (15,11) is taken by the tile placed there.
    let seq = place_and_pass(&pages, &red, "15,11", 0).await;
    red.wait(
        "document.querySelectorAll('[data-chip]').length === 2",
        "the chip gone from the map",
    )
    .await;
    let hand = text_of(
        &red,
        "document.querySelector('#players tr[data-player=red] td.chips').textContent",
    )
    .await;
    assert_eq!(hand, "B2 light blue wine");
    let log = text_of(&blue, "document.getElementById('log').textContent").await;
    assert!(
        log.contains("Red takes a light blue chip worth 2: +2."),
        "log: {log}"
    );
    assert_eq!(page_scores(&blue).await, vec![2, 0]);

    // Blue plays beside Nancy; Red places on Colmar and is offered the sale to the town.
    let seq = place_and_pass(&pages, &blue, "13,11", seq).await;
    red.click("[data-legal=\"15,10\"]").await;
    red.wait(
        "document.querySelector('[data-preview=\"15,10\"]')",
        "preview",
    )
    .await;
    red.click("#confirm").await;
    pass_to_the_sale(&red, seq).await;
    let offer = text_of(&red, "document.querySelector('button.sale').textContent").await;
    assert_eq!(
        offer,
        "Sell the light blue wine (light blue 2) to Colmar: +9"
    );
    // The keyboard reaches the sale too (N focuses it, Enter would sell); the mouse sells.
    red.key("n").await;
    red.wait(
        "document.querySelector('button.sale.focus')",
        "the sale focused",
    )
    .await;
    red.screenshot("france-sell-wine").await;
    sell_by_clicking(
        &server,
        created.match_id,
        &pages,
        seq + 3,
        "Red sells a light blue wine (light blue 2) to Colmar: +9.",
        11, // 2 for the chip, 9 for the wine
    )
    .await;
    let hand = text_of(
        &red,
        "document.querySelector('#players tr[data-player=red] td.chips').textContent",
    )
    .await;
    assert_eq!(hand, "–", "the sold chips leave the hand");
    red.screenshot("france-wine-sold").await;
}

/// Squares off the map or against a border print may be tried on the France map: the page says
/// it does not fit there and offers no *Place*; sent anyway, the server refuses and the page says
/// why in words (P1, P4), and nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn france_map_refused_placements_show_the_reason_in_words() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let created = create_france(&server).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;

    // Off the map: the sea north of (15,11).
    red.click("[data-offmap=\"15,12\"]").await;
    red.wait(
        "document.querySelector('[data-preview=\"15,12\"]')",
        "preview",
    )
    .await;
    assert_eq!(
        text_of(&red, "document.getElementById('fit-hint').textContent").await,
        "off the map"
    );
    // Place is off there; sent anyway (as another client could), the server says why.
    assert_eq!(
        red.eval("document.getElementById('confirm').disabled")
            .await,
        serde_json::json!(true)
    );
    red.eval(
        "(() => { const s = document.querySelector('[data-preview]');
           const [x, y] = s.dataset.preview.split(',').map(Number);
           window.carcassonne.command({type: 'place_tile', pos: {x, y}, rotation: Number(s.dataset.rotation)}); })()",
    )
    .await;
    red.wait("!document.getElementById('error').hidden", "the error")
        .await;
    let text = text_of(&red, "document.getElementById('error').textContent").await;
    assert!(
        text.contains("That square is not on the map.") && text.contains("(rule P1)"),
        "error shown: {text}"
    );
    red.screenshot("france-refused-off-map").await;
    assert_eq!(server_view(&server, created.match_id).await.0, 0);

    // Against a border print: base/U on (16,11) shows a road where the map prints a city with a
    // coat of arms (to Germany).
    let seq = place_and_pass(&[&red, &blue], &red, "15,11", 0).await;
    blue.wait(
        "window.carcassonne.view.decisions.some(d => d.player === 1 && d.type === 'place_tile')",
        "blue's turn",
    )
    .await;
    blue.click("[data-map-square=\"16,11\"]").await;
    blue.wait(
        "document.querySelector('[data-preview=\"16,11\"]')",
        "preview",
    )
    .await;
    assert_eq!(
        text_of(&blue, "document.getElementById('fit-hint').textContent").await,
        "does not fit here"
    );
    assert_eq!(
        blue.eval("document.getElementById('confirm').disabled")
            .await,
        serde_json::json!(true)
    );
    blue.eval(
        "(() => { const s = document.querySelector('[data-preview]');
           const [x, y] = s.dataset.preview.split(',').map(Number);
           window.carcassonne.command({type: 'place_tile', pos: {x, y}, rotation: Number(s.dataset.rotation)}); })()",
    )
    .await;
    blue.wait("!document.getElementById('error').hidden", "the error")
        .await;
    let text = text_of(&blue, "document.getElementById('error').textContent").await;
    assert!(
        text.contains("The tile must show what the map prints on that border.")
            && text.contains("(rule P4)"),
        "error shown: {text}"
    );
    blue.screenshot("france-refused-border-print").await;
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, seq);
    assert_eq!(page_view(&blue).await, view);
}

/// A wine sold abroad on the France map by clicking (P9): Red takes a light blue chip
/// next to Nancy, then lays a city tile against the printed Strasbourg–Kehl border city (a coat
/// of arms) and sells the wine abroad for 5; the page's scores are the server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn france_map_wine_sold_abroad_by_clicking() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    // The random start tile on Le Mans is drawn first; then Red's base/U, Blue's, Red's base/J.
    let created = create_france_with(
        &server,
        json!([
            {"pos": {"x": 15, "y": 11}, "grape": "light_blue", "value": 2},
            {"pos": {"x": 4, "y": 11}, "grape": "orange", "value": 1}
        ]),
        json!(["base/U", "base/U", "base/U", "base/J", "base/U", "base/U"]),
    )
    .await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    let pages = [&red, &blue];
    let seq = place_and_pass(&pages, &red, "15,11", 0).await;
    let seq = place_and_pass(&pages, &blue, "13,11", seq).await;
    // base/J turned 90: its city faces the border print to the east, its road Red's tile.
    red.wait(
        "window.carcassonne.view.decisions.some(d => d.player === 0 && d.type === 'place_tile')",
        "red's turn",
    )
    .await;
    click_command(
        &red,
        &Command::PlaceTile {
            pos: rules::Pos { x: 16, y: 11 },
            rotation: rules::Rotation::from_quarters(1),
        },
    )
    .await;
    pass_to_the_sale(&red, seq).await;
    let offer = text_of(&red, "document.querySelector('button.sale').textContent").await;
    assert_eq!(offer, "Sell the light blue wine (light blue 2) abroad: +5");
    red.screenshot("france-sell-abroad").await;
    sell_by_clicking(
        &server,
        created.match_id,
        &pages,
        seq + 3,
        "Red sells a light blue wine (light blue 2) abroad: +5.",
        7, // 2 for the chip, 5 for the wine abroad
    )
    .await;
    red.screenshot("france-sold-abroad").await;
}
