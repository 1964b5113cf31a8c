//! The start page creates test matches (base, the France map, The Messages) and links their
//! seats; the tile gallery draws the whole catalogue.

use crate::harness::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tile_gallery_draws_every_tile_of_the_catalogue() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let p = b.page(1280, 720).await;
    p.goto(&format!("{}/#tiles", server.http())).await;
    p.wait(
        "document.querySelectorAll('#gallery figure').length > 0",
        "the gallery",
    )
    .await;
    let cat = rules::catalogue();
    let drawn = p
        .eval("document.querySelectorAll('#gallery figure .tile').length")
        .await;
    assert_eq!(drawn, json!(cat.tiles.len()));
    // Every segment has its anchor, every picture its icon, every monastery its building.
    for t in &cat.tiles {
        let sel = format!("#gallery figure[data-tile=\"{}\"]", t.id);
        let counts = p
            .eval(&format!(
                "(() => {{ const f = document.querySelector({s}); return [f.querySelectorAll('.anchor').length,
                   f.querySelectorAll('.picture').length, f.querySelectorAll('.monastery').length,
                   f.querySelectorAll('.city').length, f.querySelectorAll('.road').length]; }})()",
                s = json!(sel)
            ))
            .await;
        let of = |k: rules::FeatureKind| t.segments.iter().filter(|s| s.kind == k).count();
        assert_eq!(
            counts,
            json!([
                t.segments.len(),
                t.pictures.len(),
                of(rules::FeatureKind::Monastery),
                of(rules::FeatureKind::City),
                of(rules::FeatureKind::Road)
            ]),
            "{}",
            t.id
        );
    }
    // Meeple targets are circles of radius 9 at these anchors: none may cover another.
    let crowded = p
        .eval(
            "[...document.querySelectorAll('#gallery figure')].flatMap(f => {
               const pts = [...f.querySelectorAll('.anchor')].map(a =>
                 a.getAttribute('transform').match(/-?[0-9.]+/g).map(Number));
               const bad = [];
               pts.forEach((p, i) => pts.slice(i + 1).forEach(q => {
                 if (Math.hypot(p[0] - q[0], p[1] - q[1]) < 18) bad.push(f.dataset.tile); }));
               return bad; })",
        )
        .await;
    assert_eq!(crowded, json!([]), "tiles with overlapping targets");
    p.viewport(1280, 2400, false).await;
    p.screenshot("tile-gallery").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_page_creates_a_test_match_and_links_its_seats() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let p = b.page(1280, 720).await;
    let href = create_from_start_page(&p, &server, "#create-tollkeepers").await;
    p.screenshot("start-page").await;
    assert!(href.starts_with("/#token="), "{href}");
    // The link seats its holder in a match with The Tollkeepers on.
    let seat = b.page(1280, 720).await;
    seat.goto(&format!("{}{href}", server.http())).await;
    seat.wait("window.carcassonne && window.carcassonne.view", "the view")
        .await;
    assert_eq!(seat.eval("window.carcassonne.seat").await, json!(0));
    assert_eq!(
        seat.eval("window.carcassonne.view.modules.tollkeepers")
            .await,
        json!(true)
    );
    assert_eq!(
        seat.eval("document.title").await,
        json!("● Your turn — Carcassonne")
    );
}

/// The start page offers a test match on the France map with its chips; its seat shows the map.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_page_creates_a_match_on_the_france_map() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let p = b.page(1280, 720).await;
    let href = create_from_start_page(&p, &server, "#create-map").await;
    let seat = b.page(1280, 720).await;
    seat.goto(&format!("{}{href}", server.http())).await;
    seat.wait(
        "document.querySelector('[data-map=\"france\"]') && document.querySelectorAll('[data-chip]').length === 30",
        "the France map with 30 chips face down (P7)",
    )
    .await;
    assert_eq!(
        seat.eval("window.carcassonne.view.map.info.id").await,
        json!("france")
    );
}

/// The start page offers a test match with The Messages; its seat shows the track with both
/// pawns of both players on space 0 and a full stack.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_page_creates_a_messages_match() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let p = b.page(1280, 720).await;
    let href = create_from_start_page(&p, &server, "#create-messages").await;
    let seat = b.page(1280, 720).await;
    seat.goto(&format!("{}{href}", server.http())).await;
    seat.wait(
        "document.querySelectorAll('#track [data-pawn][data-at=\"0\"]').length === 4",
        "four pawns on space 0",
    )
    .await;
    assert_eq!(
        seat.eval("window.carcassonne.view.modules.messages").await,
        json!(true)
    );
    assert_eq!(
        text_of(&seat, "document.getElementById('stack').textContent").await,
        "8"
    );
}
