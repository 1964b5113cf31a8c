//! The admin console (`/admin`): the match list, the board stepped to any seq as the rules crate
//! replays it, the secrets of a finished match, aborting and marking away after a confirmation,
//! and a wrong token said in words.

use crate::cdp::{Browser, Page};
use crate::clicks::*;
use crate::harness::*;
use client::Connection;
use protocol::{CreateMatch, MatchCreated};
use rules::Command;
use rules::scenario::Scenario;
use serde_json::{Value, json};
use std::path::Path;

/// Plays `steps` over the wire with the native client, one connection per seat: the admin tests
/// need a played match, not the clicks that played it.
async fn play_natively(server: &Server, created: &MatchCreated, steps: &[(u8, Command)]) -> u64 {
    let mut seats = seat_connections(server, created).await;
    for (i, (player, command)) in steps.iter().enumerate() {
        let out = seats[usize::from(*player)]
            .command(&format!("c{i}"), command.clone())
            .await
            .expect("command");
        assert!(
            matches!(out, client::CommandOutcome::Accepted { .. }),
            "step {i}: {out:?}"
        );
    }
    steps.len() as u64
}

/// The console at 1280×720, signed in with `token` (typed into the prompt, as a person would).
pub(crate) async fn admin_page(b: &Browser, server: &Server, token: &str, hash: &str) -> Page {
    let p = b.page(1280, 720).await;
    p.goto(&format!("{}/admin{hash}", server.http())).await;
    p.wait(
        "document.getElementById('login') && !document.getElementById('login').hidden",
        "the token prompt",
    )
    .await;
    p.click("#token").await;
    for c in token.chars() {
        p.key(&c.to_string()).await;
    }
    p.key("Enter").await;
    p
}

/// What the console's board draws: the placed tiles (square, tile, rotation), the meeples (key,
/// player) and the tollhouses (colour, square), from the drawing's data attributes, sorted, and
/// the scores beside it.
async fn drawn_board(p: &Page) -> Value {
    p.eval(
        "({tiles: [...document.querySelectorAll('#board [data-square]')]
             .map(g => [g.dataset.square, g.dataset.tile, Number(g.dataset.rotation)]).sort(),
           meeples: [...document.querySelectorAll('#board [data-meeple]')]
             .map(g => [g.dataset.meeple, Number(g.dataset.player)]).sort(),
           tollhouses: [...document.querySelectorAll('#board [data-tollhouse]')]
             .map(g => [g.dataset.tollhouse, g.dataset.pos]).sort(),
           scores: [...document.querySelectorAll('#at-players td.score')].map(td => Number(td.textContent))})",
    )
    .await
}

/// The same from the rules crate's own view after the first `seq` steps.
fn rules_board(s: &Scenario, steps: &[(u8, Command)], seq: usize) -> (Value, Value) {
    let (mut game, _) = rules::Game::start(s.setup.clone()).expect("setup");
    for (player, command) in &steps[..seq] {
        game.apply(*player, command.clone()).expect("a legal step");
    }
    let view = serde_json::to_value(game.view()).expect("view json");
    let mut tiles: Vec<Value> = view["board"]
        .as_object()
        .expect("board")
        .iter()
        .map(|(k, t)| json!([k, t["tile"], t["rotation"]]))
        .collect();
    let mut meeples: Vec<Value> = view["meeples"]
        .as_object()
        .expect("meeples")
        .iter()
        .map(|(k, m)| json!([k, m["player"]]))
        .collect();
    let tollhouses: Vec<Value> = view["players"]
        .as_array()
        .expect("players")
        .iter()
        .filter(|p| p.get("tollhouse").is_some())
        .map(|p| {
            let pos = &p["tollhouse"]["pos"];
            json!([p["colour"], format!("{},{}", pos["x"], pos["y"])])
        })
        .collect();
    let key = |v: &Value| v.to_string();
    tiles.sort_by_key(key);
    meeples.sort_by_key(key);
    let drawn = json!({
        "tiles": tiles, "meeples": meeples, "tollhouses": tollhouses, "scores": scores(&view),
    });
    (drawn, view)
}

/// Waits for the console's board at `seq`, then checks it: the tiles and meeples it drew and the
/// scores beside it are the rules crate's view after the first `seq` steps, and the view the page
/// drew from is exactly that view. Returns whether that seq has meeples on the board.
async fn board_is_the_rules_view(
    p: &Page,
    s: &Scenario,
    steps: &[(u8, Command)],
    seq: u64,
) -> bool {
    wait_admin_seq(p, seq).await;
    let (expected, view) = rules_board(s, steps, usize::try_from(seq).expect("seq"));
    assert_eq!(drawn_board(p).await, expected, "the board at seq {seq}");
    assert_eq!(
        p.eval("window.carcassonneAdmin.view").await,
        view,
        "the view at seq {seq}"
    );
    assert_eq!(
        p.eval("document.querySelector('#timeline li[aria-current=\"step\"]').dataset.seq")
            .await,
        json!(seq.to_string()),
        "the timeline marks seq {seq}"
    );
    !expected["meeples"].as_array().is_some_and(Vec::is_empty)
}

/// Waits until the console's board shows `seq`.
pub(crate) async fn wait_admin_seq(p: &Page, seq: u64) {
    p.wait(
        &format!("document.getElementById('board').dataset.seq === '{seq}'"),
        &format!("the board at seq {seq}"),
    )
    .await;
}

async fn text(p: &Page, selector: &str) -> String {
    p.eval(&format!(
        "(e => e ? e.textContent : '')(document.querySelector({}))",
        json!(selector)
    ))
    .await
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// Clicks a timeline entry, scrolled into its pane first as a person would.
async fn click_timeline(p: &Page, seq: u64) {
    let sel = format!("#timeline li[data-seq=\"{seq}\"] button");
    p.eval(&format!(
        "document.querySelector({}).scrollIntoView({{block: 'center'}})",
        json!(sel)
    ))
    .await;
    p.click(&sel).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_console_lists_steps_and_reveals_a_played_match() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    // A finished match (The Tollkeepers: tolls paid, a tollhouse turned), and one still being
    // played.
    let s = scenario("t-t6-t9-seed-examples");
    let steps = canonical_steps(&s);
    let done = create(&server, &s).await;
    let n = play_natively(&server, &done, &steps).await;
    let t = scenario("b-b11-scoring-order-roads-cities-monasteries");
    let t_steps = canonical_steps(&t);
    let running = create(&server, &t).await;
    let half = play_natively(&server, &running, &t_steps[..t_steps.len() / 2]).await;

    let p = admin_page(&b, &server, ADMIN_TOKEN, "").await;
    // The list: both matches, with their status and seq.
    for (id, status, seq) in [
        (done.match_id, "finished", n),
        (running.match_id, "active", half),
    ] {
        let row = format!("#matches tr[data-match=\"{id}\"]");
        p.wait(
            &format!("document.querySelector('{row}')"),
            "the match listed",
        )
        .await;
        assert_eq!(text(&p, &format!("{row} .status")).await, status);
        assert_eq!(text(&p, &format!("{row} td.seq")).await, seq.to_string());
        // A single server: no node holds a lease, the column says so.
        assert_eq!(text(&p, &format!("{row} td.owner")).await, "–");
    }
    // The status filter keeps the finished one only.
    p.eval("document.getElementById('f-status').value = 'finished'")
        .await;
    p.click("#filters button").await;
    p.wait(
        &format!(
            "!document.querySelector('tr[data-match=\"{}\"]') && document.querySelector('tr[data-match=\"{}\"]')",
            running.match_id, done.match_id
        ),
        "the filtered list",
    )
    .await;
    p.screenshot("admin-list").await;

    // One match: opened from the list, at its last seq.
    p.click(&format!("tr[data-match=\"{}\"] a", done.match_id))
        .await;
    wait_admin_seq(&p, n).await;
    let items = p
        .eval("document.querySelectorAll('#timeline li[data-seq]').length")
        .await;
    assert_eq!(items, json!(n + 1), "the opening and every command");
    let timeline = text(&p, "#timeline").await;
    assert!(
        timeline.contains("Game over")
            && timeline.contains("Green's road at 1,0 paid Red's tollhouse 7."),
        "events in words: {timeline}"
    );
    assert!(
        timeline.contains("places the tile at"),
        "commands in words: {timeline}"
    );

    // Step the board: a timeline click, the stepper's buttons, the slider, the keyboard. At each
    // seq the board drawn is the rules crate's own view after that many commands, and the view
    // the page drew from is exactly that view.
    let mid = n / 2;
    let mut seen_meeples = false;
    click_timeline(&p, mid).await;
    seen_meeples |= board_is_the_rules_view(&p, &s, &steps, mid).await;
    p.click("#seq-prev").await;
    seen_meeples |= board_is_the_rules_view(&p, &s, &steps, mid - 1).await;
    p.click("#seq-first").await;
    seen_meeples |= board_is_the_rules_view(&p, &s, &steps, 0).await;
    p.click("#seq-next").await;
    seen_meeples |= board_is_the_rules_view(&p, &s, &steps, 1).await;
    p.click("#seq-last").await;
    seen_meeples |= board_is_the_rules_view(&p, &s, &steps, n).await;
    // The slider, as dragging it sets it.
    for seq in [3, mid + 1, n - 2] {
        p.eval(&format!(
            "(r => {{ r.value = '{seq}'; r.dispatchEvent(new Event('input')); }})(document.getElementById('seq'))"
        ))
        .await;
        seen_meeples |= board_is_the_rules_view(&p, &s, &steps, seq).await;
    }
    assert!(seen_meeples, "some seq shows meeples");
    assert!(
        p.eval("document.querySelectorAll('#board [data-tollhouse]').length")
            .await
            .as_u64()
            > Some(0),
        "a tollhouse drawn"
    );
    // The keyboard (from n - 2): ←, → and End step when the focus is not in a field.
    p.eval("document.activeElement.blur()").await;
    for (key, code, seq) in [
        ("ArrowLeft", 37, n - 3),
        ("ArrowRight", 39, n - 2),
        ("End", 35, n),
    ] {
        for kind in ["keyDown", "keyUp"] {
            p.call(
                "Input.dispatchKeyEvent",
                json!({"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code}),
            )
            .await;
        }
        wait_admin_seq(&p, seq).await;
    }

    // The secrets of a finished match: the pile after the first draw is the scenario's own.
    p.click("#reveal").await;
    p.wait(
        "document.querySelector('#secrets [data-pile=\"start\"]')",
        "the secrets",
    )
    .await;
    let pile = p
        .eval("[...document.querySelectorAll('#secrets [data-pile=\"start\"] li')].map(li => li.textContent)")
        .await;
    let order = s.setup.draw_order.clone().expect("a forced pile");
    assert_eq!(pile, json!(order[1..]), "the start pile, in order");
    assert!(!text(&p, "#seed").await.is_empty(), "the seed");
    p.wait(
        "document.querySelector('#m-trail li[data-action=\"secrets\"][data-outcome=\"ok\"]')",
        "the reveal in the audit trail",
    )
    .await;
    // The export: downloaded with the token, and audited.
    p.click("#download").await;
    p.wait(
        "Number(document.getElementById('download').dataset.downloaded) > 0",
        "the scenario downloaded",
    )
    .await;
    p.wait(
        "document.querySelector('#m-trail li[data-action=\"scenario\"]')",
        "the export in the audit trail",
    )
    .await;
    // The README's picture: the command after which a road paid a tollhouse.
    click_timeline(&p, mid + 1).await;
    wait_admin_seq(&p, mid + 1).await;
    let shot = p.screenshot("admin-console").await;
    if std::env::var("UPDATE_DOCS_SCREENSHOTS").is_ok() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/admin-console.png");
        std::fs::copy(&shot, docs).expect("copy the screenshot to docs/");
    }

    // A running match: its secrets are refused, in words.
    p.eval(&format!("location.hash = '#match={}'", running.match_id))
        .await;
    wait_admin_seq(&p, half).await;
    p.click("#reveal").await;
    p.wait("document.querySelector('#secrets .refused')", "the refusal")
        .await;
    let refused = text(&p, "#secrets .refused").await;
    assert!(
        refused.contains("The match is not over yet.") && refused.contains("not_finished"),
        "{refused}"
    );
    assert_eq!(
        p.eval("document.querySelectorAll('#secrets [data-pile]').length")
            .await,
        json!(0),
        "no secret of a running match"
    );
    p.screenshot("admin-secrets-refused").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_console_says_a_wrong_token_in_words() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    // Eleven matches: two pages of ten.
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let mut ids = Vec::new();
    for _ in 0..11 {
        ids.push(create(&server, &s).await.match_id.to_string());
    }
    let p = admin_page(&b, &server, "not-the-token", "").await;
    p.wait(
        "!document.getElementById('error').hidden && !document.getElementById('login').hidden",
        "the refusal",
    )
    .await;
    let error = text(&p, "#error").await;
    assert!(
        error.contains("The admin token was refused.") && error.contains("bad_token"),
        "{error}"
    );
    // The token is in no URL, and a wrong one is not kept.
    let url = p.eval("location.href").await;
    assert!(!url.as_str().unwrap_or("").contains("not-the-token"));
    assert_eq!(
        p.eval("sessionStorage.getItem('carcassonne.admin-token')")
            .await,
        Value::Null
    );
    p.screenshot("admin-wrong-token").await;
    // The right one opens the console, and is kept for this tab only.
    p.click("#token").await;
    for c in ADMIN_TOKEN.chars() {
        p.key(&c.to_string()).await;
    }
    p.key("Enter").await;
    p.wait(
        "!document.getElementById('list').hidden && document.getElementById('matches').dataset.page === '0'",
        "the list",
    )
    .await;
    assert_eq!(
        p.eval("document.getElementById('error').hidden").await,
        json!(true)
    );

    // Paging: ten per page, newest first, then the one left; and back to the first page.
    let listed =
        "[...document.querySelectorAll('#matches tr[data-match]')].map(tr => tr.dataset.match)";
    p.eval("document.getElementById('f-limit').value = '10'")
        .await;
    p.click("#filters button").await;
    p.wait(
        "document.querySelectorAll('#matches tr[data-match]').length === 10",
        "a page of ten",
    )
    .await;
    let first = p.eval(listed).await;
    p.click("#next-page").await;
    p.wait(
        "document.getElementById('matches').dataset.page === '1'",
        "page 2",
    )
    .await;
    let second = p.eval(listed).await;
    let mut all: Vec<String> = [&first, &second]
        .iter()
        .flat_map(|v| v.as_array().cloned().unwrap_or_default())
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    assert_eq!(second.as_array().map(Vec::len), Some(1));
    assert_eq!(
        first[0].as_str(),
        ids.last().map(String::as_str),
        "newest first"
    );
    all.sort();
    ids.sort();
    assert_eq!(all, ids, "every match once across the pages");
    assert_eq!(
        p.eval("document.getElementById('next-page').disabled")
            .await,
        json!(true)
    );
    p.click("#first-page").await;
    p.wait(
        "document.getElementById('matches').dataset.page === '0'",
        "page 1 again",
    )
    .await;
    assert_eq!(p.eval(listed).await, first);
    p.screenshot("admin-paging").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_console_aborts_and_marks_away_after_confirmation() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let steps = canonical_steps(&s);
    let created = create(&server, &s).await;
    let seq = play_natively(&server, &created, &steps[..4]).await;
    let p = admin_page(
        &b,
        &server,
        ADMIN_TOKEN,
        &format!("#match={}", created.match_id),
    )
    .await;
    wait_admin_seq(&p, seq).await;

    // Away, confirmed.
    p.click("[data-away-seat=\"1\"]").await;
    p.wait(
        "document.getElementById('confirm-dialog').open",
        "the question",
    )
    .await;
    p.click("#confirm-ok").await;
    p.wait(
        "document.querySelector('li[data-seat=\"1\"]').textContent.includes('away since')",
        "seat 1 away",
    )
    .await;
    // Abort: cancelled first (nothing changes), then confirmed.
    p.click("#abort").await;
    p.wait(
        "document.getElementById('confirm-dialog').open",
        "the question",
    )
    .await;
    let question = text(&p, "#confirm-text").await;
    assert!(question.contains("for good"), "{question}");
    p.click("#confirm-cancel").await;
    p.wait("!document.getElementById('confirm-dialog').open", "closed")
        .await;
    assert_eq!(text(&p, "#m-status").await, "active");
    p.click("#abort").await;
    p.wait(
        "document.getElementById('confirm-dialog').open",
        "the question",
    )
    .await;
    p.click("#confirm-ok").await;
    p.wait(
        "document.getElementById('m-status') && document.getElementById('m-status').textContent === 'aborted'",
        "aborted",
    )
    .await;
    p.wait(
        "document.querySelector('#m-trail li[data-action=\"abort\"][data-outcome=\"ok\"]') && document.querySelector('#m-trail li[data-action=\"away\"]')",
        "both in the audit trail",
    )
    .await;
    assert_eq!(
        p.eval("document.getElementById('abort').disabled").await,
        json!(true)
    );
    // The match refuses play now: a player's command is refused with `aborted`.
    let mut c = Connection::connect(&server.ws()).await.expect("connect");
    let refused = c.auth(&created.seats[0].token).await;
    let out = match refused {
        Ok(_) => format!(
            "{:?}",
            c.command("late", Command::Pass {})
                .await
                .expect("an answer")
        ),
        Err(e) => e.to_string(),
    };
    assert!(out.to_lowercase().contains("abort"), "{out}");
    p.screenshot("admin-aborted").await;
}

/// A match with every module the page draws (The Messages, the France map and its chips): at
/// each seq the console's view is `GET /state`'s, and its board draws that view's tiles,
/// meeples and face-down chips.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_console_steps_a_messages_match_on_the_france_map() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let req: CreateMatch = serde_json::from_value(json!({
        "players": ["red", "blue"],
        "modules": { "messages": true, "map": { "map": "france", "chips": true } },
    }))
    .expect("request");
    let created = client::create_match(&server.http(), &req)
        .await
        .expect("create");
    let n = play_randomly(&server, &created, 40, 11).await;
    let id = created.match_id;
    let p = admin_page(&b, &server, ADMIN_TOKEN, &format!("#match={id}")).await;
    wait_admin_seq(&p, n).await;
    for seq in [0, 1, n / 3, n / 2, n - 1, n] {
        p.eval(&format!(
            "(r => {{ r.value = '{seq}'; r.dispatchEvent(new Event('input')); }})(document.getElementById('seq'))"
        ))
        .await;
        wait_admin_seq(&p, seq).await;
        // The server's answer, asked from the page with the token it keeps.
        let state = p
            .eval(&format!(
                "fetch('/api/admin/matches/{id}/state?seq={seq}', {{headers: {{authorization:
                   'Bearer ' + sessionStorage.getItem('carcassonne.admin-token')}}}}).then(r => r.json())"
            ))
            .await;
        let view = &state["view"];
        assert_eq!(state["seq"], json!(seq));
        assert_eq!(
            &p.eval("window.carcassonneAdmin.view").await,
            view,
            "the view at seq {seq}"
        );
        let drawn = drawn_board(&p).await;
        let tiles = view["board"].as_object().map_or(0, |b| b.len());
        let meeples = view["meeples"].as_object().map_or(0, |m| m.len());
        assert_eq!(drawn["tiles"].as_array().map(Vec::len), Some(tiles));
        assert_eq!(drawn["meeples"].as_array().map(Vec::len), Some(meeples));
        assert_eq!(drawn["scores"], json!(scores(view)));
        let chips = view["map"]["chips"].as_array().map_or(0, Vec::len);
        assert_eq!(
            p.eval("document.querySelectorAll('#board [data-chip]').length")
                .await,
            json!(chips),
            "face-down chips at seq {seq}"
        );
        let pawns = text(&p, "#at-players").await;
        assert!(pawns.contains('●') && pawns.contains('◆'), "{pawns}");
    }
    p.screenshot("admin-france-messages").await;
}
