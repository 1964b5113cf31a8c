//! Inns & Cathedrals and Traders & Builders in the page: the large meeple, the builder and the pig
//! put by clicking and drawn as their own figures, the builder's double turn taken with its
//! button, goods shown once a city with goods is completed, and the lobby offering both modules.

use crate::admin::{admin_page, wait_admin_seq};
use crate::cdp::{Browser, Page};
use crate::clicks::*;
use crate::harness::*;
use crate::lobby::{guest_page, seat_bot, start_with_bots};
use rules::scenario::Scenario;
use serde_json::{Value, json};

/// How many figures of `figure` the page draws on the board.
async fn drawn(p: &Page, figure: &str) -> Value {
    p.eval(&format!(
        "document.querySelectorAll('#board [data-meeple][data-figure=\"{figure}\"]').length"
    ))
    .await
}

/// How many figures of `figure` the view holds on the board.
fn in_view(view: &Value, figure: &str) -> usize {
    view["meeples"]
        .as_object()
        .expect("meeples")
        .values()
        .filter(|m| m["figure"] == json!(figure))
        .count()
}

/// A scenario's match with both seat pages open.
async fn scenario_pages(b: &Browser, server: &Server, s: &Scenario) -> (uuid::Uuid, Page, Page) {
    let created = create(server, s).await;
    let red = seat_page(b, server, &created.seats[0].token).await;
    let blue = seat_page(b, server, &created.seats[1].token).await;
    (created.match_id, red, blue)
}

/// Every page's view is the server's at `seq`.
async fn same_as_server(server: &Server, id: uuid::Uuid, pages: &[&Page], seq: u64) -> Value {
    let (sseq, view) = server_view(server, id).await;
    assert_eq!(sseq, seq);
    for p in pages {
        assert_eq!(page_view(p).await, view, "the page's view is the server's");
    }
    view
}

/// Inns & Cathedrals (I4, I5): Red picks the large meeple with its button and puts it on the
/// city by clicking; the board draws it as a large meeple (not a meeple), the panel shows it out
/// of the supply, and the completed city scores for Red alone (I5: the large meeple counts 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_meeple_put_by_clicking() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("i-i4-i5-i6-large-meeple-breaks-a-tie");
    let (id, red, blue) = scenario_pages(&b, &server, &s).await;
    let pages = [&red, &blue];
    // The tile placed; the placement step offers the large meeple beside the meeple.
    let seq = play_steps(&pages, &s, 0..1, 0).await;
    red.wait(
        "document.querySelector('[data-figure-choice=\"large_meeple\"]')",
        "the large meeple's button",
    )
    .await;
    assert_eq!(
        text_of(&red, "document.getElementById('figures').textContent").await,
        "MeepleLarge meeple"
    );
    let seq = play_steps(&pages, &s, 1..2, seq).await;
    let view = same_as_server(&server, id, &pages, seq).await;
    assert_eq!(in_view(&view, "large_meeple"), 1, "{view}");
    for p in pages {
        assert_eq!(drawn(p, "large_meeple").await, json!(1));
        assert_eq!(drawn(p, "meeple").await, json!(0));
        assert_eq!(
            p.eval("document.querySelector('#players tr[data-player=\"red\"] [data-figure=\"large_meeple\"]').dataset.count")
                .await,
            json!("0")
        );
    }
    let log = text_of(&blue, "document.getElementById('log').textContent").await;
    assert!(
        log.contains("Red puts the large meeple on the city"),
        "log: {log}"
    );
    red.screenshot("expansions-large-meeple").await;
    let steps = canonical_steps(&s).len();
    let seq = play_steps(&pages, &s, 2..steps, seq).await;
    same_as_server(&server, id, &pages, seq).await;
    let log = text_of(&red, "document.getElementById('log').textContent").await;
    assert!(log.contains("Red's completed city scores"), "log: {log}");
}

/// Inns & Cathedrals (I4) with the keyboard alone: F picks the large meeple, N walks its
/// targets on the board, Enter puts it where the scenario puts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_meeple_put_with_the_keyboard() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("i-i4-i5-i6-large-meeple-breaks-a-tie");
    let (id, red, blue) = scenario_pages(&b, &server, &s).await;
    let pages = [&red, &blue];
    let seq = play_steps(&pages, &s, 0..1, 0).await;
    let chosen = "document.querySelector('[data-figure-choice=\"large_meeple\"]')";
    red.wait(chosen, "the large meeple's button").await;
    red.key("f").await;
    red.wait(
        &format!("{chosen}.getAttribute('aria-pressed') === 'true' && !!document.querySelector('#board .target[data-figure=\"large_meeple\"]')"),
        "the large meeple chosen, its targets on the board",
    )
    .await;
    let step = serde_json::to_value(&canonical_steps(&s)[1].1).expect("json");
    assert_eq!(step["figure"], "large_meeple", "{step}");
    let target = step["target"].as_str().expect("a target");
    let focused = format!(
        "!!document.querySelector('#board .target.focus[data-figure=\"large_meeple\"][data-target=\"{target}\"]')"
    );
    for _ in 0..12 {
        red.key("n").await;
        if red.eval(&focused).await == json!(true) {
            break;
        }
    }
    assert_eq!(red.eval(&focused).await, json!(true), "N reaches {target}");
    red.key("Enter").await;
    wait_seq(&red, seq + 1).await;
    let view = same_as_server(&server, id, &pages, seq + 1).await;
    assert_eq!(in_view(&view, "large_meeple"), 1, "{view}");
}

/// Traders & Builders (R5, R8, R9, R7): Red puts the builder beside its road meeple by clicking,
/// extends the road, takes the double turn with its button, and the double turn's tile completes
/// a city with grain: the grain token shows in Red's panel, and the log tells the builder, the
/// double turn, the goods and the majority at the end, in the page and in the admin console.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builder_double_turn_and_goods_by_clicking() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("r-r5-r9-r15-builder-double-turn-completes-a-city-with-goods");
    let (id, red, blue) = scenario_pages(&b, &server, &s).await;
    let pages = [&red, &blue];
    // Up to the builder's placement (the sixth command).
    let seq = play_steps(&pages, &s, 0..6, 0).await;
    let view = same_as_server(&server, id, &pages, seq).await;
    assert_eq!(in_view(&view, "builder"), 1, "{view}");
    for p in pages {
        assert_eq!(drawn(p, "builder").await, json!(1));
    }
    red.screenshot("expansions-builder").await;
    // Blue's turn, then Red extends the builder's road and passes: the double turn is offered.
    let seq = play_steps(&pages, &s, 6..10, seq).await;
    red.wait(
        "document.querySelector('[data-key=\"double:take\"]')",
        "the double turn's buttons",
    )
    .await;
    assert_eq!(
        text_of(&red, "document.getElementById('hint').textContent").await,
        "Your builder earned a double turn: draw and place another tile, or pass it up."
    );
    red.screenshot("expansions-double-turn").await;
    let steps = canonical_steps(&s).len();
    let seq = play_steps(&pages, &s, 10..steps, seq).await;
    let view = same_as_server(&server, id, &pages, seq).await;
    assert_eq!(
        view["players"][0]["goods"],
        json!({"wine": 0, "grain": 1, "cloth": 0})
    );
    for p in pages {
        let count = |g: &str| {
            format!(
                "document.querySelector('#players tr[data-player=\"red\"] .goods [data-goods=\"{g}\"]').dataset.count"
            )
        };
        assert_eq!(p.eval(&count("grain")).await, json!("1"));
        assert_eq!(p.eval(&count("wine")).await, json!("0"));
        let log = text_of(p, "document.getElementById('log').textContent").await;
        for line in [
            "Red puts the builder on the road",
            "Red's builder earns a double turn.",
            "Red takes the double turn.",
            "Red takes 1 grain from the completed city.",
            "Red has the most grain (1): +10.",
        ] {
            assert!(log.contains(line), "{line:?} not in the log: {log}");
        }
    }
    red.screenshot("expansions-goods").await;

    // The admin console's timeline tells the same events, with their squares; its board draws
    // the builder, and its player lines show the goods.
    let admin = admin_page(&b, &server, ADMIN_TOKEN, &format!("#match={id}")).await;
    wait_admin_seq(&admin, seq).await;
    let timeline = text_of(&admin, "document.getElementById('timeline').textContent").await;
    for line in [
        "Red puts the builder on the road to the east at 2,0.",
        "Red's builder earns a double turn at 3,0.",
        "Red takes 1 grain from the completed city at 0,0.",
        "Red has the most grain (1): +10.",
    ] {
        assert!(
            timeline.contains(line),
            "{line:?} not in the timeline: {timeline}"
        );
    }
    assert_eq!(
        drawn(&admin, "builder").await,
        json!(in_view(&view, "builder"))
    );
    let players = text_of(&admin, "document.getElementById('at-players').textContent").await;
    assert!(players.contains("W0 G1 C0"), "{players}");
    admin.screenshot("expansions-admin").await;
}

/// Traders & Builders (R12, R13): Red puts the pig into the field of its farmer by clicking (its
/// target offered as a button too); the board draws the pig, and the field's line in the log
/// says what the pig earned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pig_put_by_clicking() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("r-r12-r13-pig-in-a-field-with-a-tie");
    let (id, red, blue) = scenario_pages(&b, &server, &s).await;
    let pages = [&red, &blue];
    let steps = canonical_steps(&s);
    let last = steps.len() - 1;
    let seq = play_steps(&pages, &s, 0..last, 0).await;
    // The pig is offered in the field of Red's farmer, as a button and as a circle.
    red.wait(
        "document.querySelector('[data-figure-button^=\"pig \"]')",
        "the pig's target button",
    )
    .await;
    let seq = play_steps(&pages, &s, last..steps.len(), seq).await;
    let view = same_as_server(&server, id, &pages, seq).await;
    for p in pages {
        assert_eq!(drawn(p, "pig").await, json!(in_view(&view, "pig")));
        let log = text_of(p, "document.getElementById('log').textContent").await;
        assert!(log.contains("Red puts the pig on the field"), "log: {log}");
        // R13: Red's pig makes Red's share 4 a city.
        assert!(
            log.contains("Red and Blue's field scores 3 for 1 cities (Red with the pig: 4)."),
            "log: {log}"
        );
    }
    red.screenshot("expansions-pig").await;
}

/// The lobby offers both expansions (with the France map): the host ticks them, the room names
/// them, and the match started from it plays them (its view and the panel's figures and goods).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lobby_offers_inns_cathedrals_and_traders_builders() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let ann = guest_page(&b, &server, "Ann", 1280, 720).await;
    assert_eq!(
        ann.eval("[...document.querySelectorAll('#filter-module option')].map(o => o.value).filter(v => v.includes('_'))")
            .await,
        json!(["inns_cathedrals", "traders_builders"])
    );
    ann.eval("document.getElementById('new-name').value = 'Builders and inns'")
        .await;
    for id in ["new-inns-cathedrals", "new-traders-builders", "new-france"] {
        ann.click(&format!("#{id}")).await;
    }
    ann.click("#create-lobby").await;
    ann.wait(
        "document.getElementById('room-name').textContent === 'Builders and inns'",
        "the new lobby's room",
    )
    .await;
    assert!(
        text_of(&ann, "document.getElementById('room-about').textContent")
            .await
            .starts_with("France map, Inns & Cathedrals, Traders & Builders ·")
    );
    seat_bot(&ann, 1, "random").await;
    start_with_bots(&ann).await;
    assert_eq!(
        ann.eval("[window.carcassonne.view.modules.inns_cathedrals, window.carcassonne.view.modules.traders_builders]")
            .await,
        json!([true, true])
    );
    assert_eq!(
        ann.eval("[...document.querySelectorAll('#players tr[data-player] .figures [data-figure]')].map(e => e.dataset.figure + e.dataset.count)")
            .await,
        json!([
            "large_meeple1",
            "builder1",
            "pig1",
            "large_meeple1",
            "builder1",
            "pig1"
        ])
    );
    assert_eq!(
        ann.eval("[...document.querySelectorAll('#players tr[data-player] .goods [data-goods]')].map(e => e.dataset.goods + e.dataset.count)")
            .await,
        json!(["wine0", "grain0", "cloth0", "wine0", "grain0", "cloth0"])
    );
    ann.screenshot("expansions-lobby-match").await;
}

/// The start page's test match offers both expansions: each box ticked gives a match with that
/// module on (and the other off).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_page_creates_matches_with_either_expansion() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    for (option, on) in [
        ("#create-inns", [true, false]),
        ("#create-traders", [false, true]),
    ] {
        // A fresh page each time: the form starts unticked.
        let p = b.page(1280, 720).await;
        let href = create_from_start_page(&p, &server, option).await;
        let seat = b.page(1280, 720).await;
        seat.goto(&format!("{}{href}", server.http())).await;
        seat.wait("window.carcassonne && window.carcassonne.view", "the view")
            .await;
        assert_eq!(
            seat.eval("[!!window.carcassonne.view.modules.inns_cathedrals, !!window.carcassonne.view.modules.traders_builders]")
                .await,
            json!(on),
            "{option}"
        );
    }
}
