//! The Messages in the page: pawn choices, dispatches and chains answered by clicking, the pawns
//! drawn as the server's view has them.

use crate::cdp::{Browser, Page};
use crate::clicks::*;
use crate::harness::*;
use rules::Command;
use rules::scenario::Scenario;
use serde_json::{Value, json};
use std::path::Path;

/// A scenario's match written straight into the store of `data` (the server must not run yet; it
/// resumes the match when it starts): the whole setup, so the forced dispatch stack
/// (`Setup::dispatch_order`, which `POST /api/matches` does not take) and the open squares hold.
/// Returns the match id and one seat token per player.
async fn store_scenario(data: &Path, s: &Scenario) -> (uuid::Uuid, Vec<String>) {
    use server::store::{MatchRow, MatchStatus, SeatRow, Store};
    let store = Store::open(None, data).await.expect("open the store");
    let id = uuid::Uuid::new_v4();
    let row = MatchRow {
        id,
        setup: serde_json::to_string(&s.setup).expect("setup json"),
        status: MatchStatus::Active,
        rules_version: rules::REPLAY_VERSION.to_string(),
        created_at: chrono::Utc::now(),
        // The server's own setting applies.
        decision_timeout_ms: None,
        clock: None,
        wake_at: None,
    };
    let tokens: Vec<String> = (0..s.setup.players.len())
        .map(|i| format!("seat-{i}-{}", uuid::Uuid::new_v4().simple()))
        .collect();
    let seats: Vec<SeatRow> = s
        .setup
        .players
        .iter()
        .zip(&tokens)
        .enumerate()
        .map(|(i, (c, t))| SeatRow {
            seat: u8::try_from(i).expect("seat"),
            colour: serde_json::to_value(c)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            token_hash: server::token_hash(t),
        })
        .collect();
    store.create_match(&row, &seats).await.expect("store match");
    store.close().await;
    (id, tokens)
}

/// The pawns the page shows in its players' table, per seat: `[scoring, messenger]`.
async fn page_pawns(p: &Page) -> Value {
    p.eval(
        "[...document.querySelectorAll('#players td.pawns')].map(td =>
           [Number(td.dataset.scoring), Number(td.dataset.messenger)])",
    )
    .await
}

/// The pawns of the server's view, per seat: `[scoring, messenger]`.
fn view_pawns(view: &Value) -> Value {
    let pawns = view["messages"]["players"].as_array().expect("pawns");
    Value::Array(
        pawns
            .iter()
            .map(|p| json!([p["scoring"], p["messenger"]]))
            .collect(),
    )
}

/// The pawns drawn on the track, per seat: `[scoring, messenger]` from the pawn glyphs.
async fn track_pawns(p: &Page, colours: &[&str]) -> Value {
    let mut out = Vec::new();
    for c in colours {
        let at = |pawn: &str| {
            format!(
                "Number(document.querySelector('#track [data-pawn=\"{c} {pawn}\"]').dataset.at)"
            )
        };
        out.push(
            p.eval(&format!("[{}, {}]", at("scoring"), at("messenger")))
                .await,
        );
    }
    Value::Array(out)
}

/// The Messages in the page: one placement scores for both players, and both pawn
/// choices are open at once; each player answers by clicking in their own page (Blue, not the
/// active player, first). Red's pawn lands on a dark space and draws dispatch 6, which has
/// nothing to act on: Red takes the 2 points by clicking. A deadline in the view's agreed shape
/// shows as a countdown; the standing preference is set from the page. The pawns in the table
/// and on the track equal the server's view throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_pawn_choices_and_a_dispatch_by_clicking() {
    let Some(b) = Browser::launch().await else {
        return;
    };
    let data = tempfile::tempdir().expect("tmp");
    let s = scenario("m-m2-m3-m4-two-players-scoring-from-one-placement");
    let (id, tokens) = store_scenario(data.path(), &s).await;
    let server = Server::start(free_addr(), data.path());
    let red = seat_page(&b, &server, &tokens[0]).await;
    let blue = seat_page(&b, &server, &tokens[1]).await;
    let pages = [&red, &blue];
    let steps = canonical_steps(&s);
    // Up to the placement that scores the road for both players.
    let both = steps
        .iter()
        .position(|(_, c)| matches!(c, Command::ChoosePawn { .. }))
        .expect("a pawn choice");
    let seq = play_steps(&pages, &s, 0..both, 0).await;
    for p in pages {
        p.wait(
            "document.querySelectorAll('[data-key^=\"pawn:\"]').length === 2",
            "the pawn choice buttons",
        )
        .await;
    }
    let offer = text_of(&blue, "document.getElementById('targets').textContent").await;
    assert!(
        offer.contains("◆ Messenger 0 → 5 (dark space)") && offer.contains("● Scoring pawn 0 → 5"),
        "blue's offer: {offer}"
    );
    assert_eq!(
        text_of(&blue, "document.title").await,
        "● Your choice — Carcassonne"
    );
    // The keyboard reaches the choice: the first button has the focus, N moves it.
    blue.key("n").await;
    assert_eq!(
        blue.eval("document.activeElement.dataset.key").await,
        json!("pawn:messenger")
    );
    // Blue, not the active player, has a deadline (M3 and the server's decision timeout, 30 s by
    // default): both pages show it as a countdown, Blue's beside its own buttons.
    for p in pages {
        p.wait(
            "document.querySelector('#deadlines [data-deadline=\"1\"]')",
            "Blue's deadline",
        )
        .await;
    }
    let at = red.eval("window.carcassonne.view.deadlines[0].at").await;
    let (_, server_now) = server_view(&server, id).await;
    assert_eq!(
        server_now["deadlines"][0]["at"], at,
        "the server's deadline"
    );
    let line = text_of(
        &red,
        "document.querySelector('#deadlines [data-deadline=\"1\"]').textContent",
    )
    .await;
    let left: u64 = line
        .strip_prefix("Blue has ")
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a countdown in seconds: {line}"));
    assert!((1..=30).contains(&left), "{line}");
    let mine = text_of(
        &blue,
        "document.querySelector('#targets .my-deadline').textContent",
    )
    .await;
    assert!(
        mine.contains(" s, or the server moves your scoring pawn."),
        "{mine}"
    );
    blue.screenshot("messages-pawn-choice").await;

    // Both choices, the dispatch's 2 points, Red's pawn for them: all by clicking.
    let dispatch = steps
        .iter()
        .position(|(_, c)| matches!(c, Command::DispatchPoints {}))
        .expect("the dispatch");
    let seq = play_steps(&pages, &s, both..dispatch, seq).await;
    red.wait(
        "document.querySelector('[data-key=\"dispatch:points\"]')",
        "the dispatch decision",
    )
    .await;
    assert_eq!(
        red.eval("document.querySelectorAll('[data-key^=\"dispatch:\"]').length")
            .await,
        json!(1),
        "dispatch 6 without a knight offers only the 2 points (M7)"
    );
    let hint = text_of(&red, "document.getElementById('hint').textContent").await;
    assert!(
        hint.starts_with("Dispatch 6: 2 points per knight."),
        "{hint}"
    );
    assert_eq!(
        text_of(&red, "document.getElementById('stack').textContent").await,
        "7"
    );
    red.screenshot("messages-dispatch").await;
    let seq = play_steps(&pages, &s, dispatch..steps.len(), seq).await;

    let (sseq, view) = server_view(&server, id).await;
    assert_eq!(sseq, seq);
    assert_eq!(scores(&view), vec![7, 5]);
    assert_eq!(view_pawns(&view), json!([[7, 0], [0, 5]]));
    for p in pages {
        wait_seq(p, seq).await;
        assert_eq!(page_view(p).await, view, "the page's view is the server's");
        assert_eq!(page_pawns(p).await, view_pawns(&view), "pawns in the table");
        // Every choice answered: no deadline left, and no countdown.
        assert!(view.get("deadlines").is_none(), "{view}");
        assert_eq!(
            p.eval("document.querySelectorAll('.countdown').length")
                .await,
            json!(0)
        );
        assert_eq!(
            track_pawns(p, &["red", "blue"]).await,
            view_pawns(&view),
            "pawns on the track"
        );
        assert_eq!(page_scores(p).await, scores(&view));
        assert_eq!(
            text_of(p, "document.getElementById('stack').textContent").await,
            "8"
        );
    }
    let log = text_of(&blue, "document.getElementById('log').textContent").await;
    for line in [
        "Blue's messenger moves from 0 to 5 for a feature, a dark space.",
        "Red's scoring pawn moves from 0 to 5 for a feature, a dark space.",
        "Red draws dispatch 6: 2 points per knight.",
        "Red takes 2 points instead of dispatch 6.",
        "Red's scoring pawn moves from 5 to 7 for a dispatch.",
    ] {
        assert!(log.contains(line), "{line} in the log: {log}");
    }
    // The dark spaces are marked on the track: every fifth of the 50.
    assert_eq!(
        red.eval(
            "[...document.querySelectorAll('#track .space.dark')].map(g => Number(g.dataset.space))"
        )
        .await,
        json!([0, 5, 10, 15, 20, 25, 30, 35, 40, 45])
    );

    // M3: a standing preference from the page's control reaches the server.
    blue.eval(
        "(() => { const s = document.getElementById('pref'); s.scrollIntoView(); s.focus();
           s.value = 'messenger'; s.dispatchEvent(new Event('change')); })()",
    )
    .await;
    wait_seq(&blue, seq + 1).await;
    let (_, view) = server_view(&server, id).await;
    assert_eq!(
        view["messages"]["players"][1]["preference"],
        json!("messenger")
    );
    let log = text_of(&red, "document.getElementById('log').textContent").await;
    assert!(
        log.contains("Blue will not be asked which pawn: always the messenger."),
        "{log}"
    );
    blue.screenshot("messages-after-dispatch").await;
    // Readable on a phone: nothing overflows the viewport's width.
    blue.viewport(390, 844, true).await;
    let w = blue.eval("document.documentElement.scrollWidth").await;
    assert!(w.as_u64().unwrap_or(9999) <= 390, "page width {w}");
    blue.eval("document.getElementById('messages').scrollIntoView()")
        .await;
    blue.screenshot("messages-phone").await;
}

/// Dispatches carried out by clicking (M7): dispatch 1 with two equally short roads offered as
/// buttons, one picked; dispatch 4's extra tile placed by clicking on the board, leading to a
/// second dispatch (M11); a chain (M6) drawn by clicking. Each match ends equal to the server's
/// view, with the scenario's scores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_dispatches_resolved_by_clicking() {
    let Some(b) = Browser::launch().await else {
        return;
    };
    let data = tempfile::tempdir().expect("tmp");
    let names = [
        "m-m8-dispatch-1-tie-offers-both-roads",
        "m-m11-dispatch-4-extra-tile-draws-a-second-dispatch",
        "m-m6-chain-of-two-dispatches",
    ];
    let mut stored = Vec::new();
    for n in names {
        let s = scenario(n);
        let (id, tokens) = store_scenario(data.path(), &s).await;
        stored.push((n, s, id, tokens));
    }
    let server = Server::start(free_addr(), data.path());
    for (name, s, id, tokens) in &stored {
        let red = seat_page(&b, &server, &tokens[0]).await;
        let blue = seat_page(&b, &server, &tokens[1]).await;
        let pages = [&red, &blue];
        let steps = canonical_steps(s);
        let first = steps
            .iter()
            .position(|(_, c)| {
                matches!(
                    c,
                    Command::DispatchAction { .. } | Command::DispatchPoints {}
                )
            })
            .expect("a dispatch");
        let seq = play_steps(&pages, s, 0..first, 0).await;
        red.wait(
            "document.querySelector('[data-key=\"dispatch:points\"]')",
            "the dispatch decision",
        )
        .await;
        let offered = red
            .eval("[...document.querySelectorAll('[data-key^=\"dispatch:\"]')].map(b => b.dataset.key)")
            .await;
        match *name {
            "m-m8-dispatch-1-tie-offers-both-roads" => assert_eq!(
                offered,
                json!([
                    "dispatch:-1,0 road:W",
                    "dispatch:3,0 road:E",
                    "dispatch:points"
                ])
            ),
            "m-m11-dispatch-4-extra-tile-draws-a-second-dispatch" => {
                assert_eq!(offered, json!(["dispatch:action", "dispatch:points"]));
            }
            _ => assert_eq!(offered, json!(["dispatch:points"])),
        }
        red.screenshot(&format!("{name}-offer")).await;
        let mut seq = seq;
        for (i, (_, command)) in steps.iter().enumerate().skip(first) {
            if let Command::DispatchAction { meeple: Some(m) } = command {
                // Dispatch 1's roads are ringed on the board too: pick the road there.
                assert_eq!(
                    red.eval("document.querySelectorAll('#board .meeple.pick').length")
                        .await,
                    json!(2)
                );
                let key = format!("{},{} {}", m.pos.x, m.pos.y, m.target);
                red.click(&format!("#board [data-meeple=\"{key}\"].pick"))
                    .await;
                seq += 1;
                for p in pages {
                    wait_seq(p, seq).await;
                }
                continue;
            }
            seq = play_steps(&pages, s, i..i + 1, seq).await;
            // The extra tile of dispatch 4 is an ordinary placement, named as such.
            if matches!(command, Command::DispatchAction { .. }) && name.contains("dispatch-4") {
                let hint = text_of(&red, "document.getElementById('hint').textContent").await;
                assert!(hint.starts_with("Dispatch 4, the extra tile:"), "{hint}");
                red.screenshot(&format!("{name}-extra-tile")).await;
            }
            if name.contains("chain")
                && red
                    .eval("!!document.querySelector('[data-key=\"chain:draw\"]')")
                    .await
                    == json!(true)
            {
                red.screenshot(&format!("{name}-chain")).await;
            }
        }
        let (sseq, view) = server_view(&server, *id).await;
        assert_eq!(sseq, seq);
        let expected = expected_scores(s);
        assert_eq!(scores(&view), expected, "{name}: the scenario's scores");
        for p in pages {
            wait_seq(p, seq).await;
            assert_eq!(page_view(p).await, view, "{name}: the page's view");
            assert_eq!(page_pawns(p).await, view_pawns(&view), "{name}: pawns");
            assert_eq!(page_scores(p).await, scores(&view));
        }
        let log = text_of(&red, "document.getElementById('log').textContent").await;
        assert!(
            log.contains("Red carries out dispatch") || name.contains("chain"),
            "{log}"
        );
        red.screenshot(&format!("{name}-done")).await;
    }
}

/// M3: another player's pawn choice does not stop the active player. Red and Blue score one road
/// together; Red chooses, draws dispatch 4 and places its extra tile and a meeple by clicking
/// while Blue's choice is still open (Blue's page offers its pawn buttons all along). Then the
/// turn line of both pages says that the next turn waits for Blue, with Blue's countdown; Blue
/// chooses by clicking and the game ends. The standing preference is offered at the start, and
/// declined.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_the_active_player_plays_on_while_another_chooses() {
    let Some(b) = Browser::launch().await else {
        return;
    };
    let data = tempfile::tempdir().expect("tmp");
    let s = scenario("m-m3-m11-active-player-plays-on-while-another-chooses");
    let (id, tokens) = store_scenario(data.path(), &s).await;
    let server = Server::start(free_addr(), data.path());
    let red = seat_page(&b, &server, &tokens[0]).await;
    let blue = seat_page(&b, &server, &tokens[1]).await;
    let pages = [&red, &blue];
    // M3: the standing preference is offered at the start of the game, beside the turn's
    // controls; both players decline it there (they choose each time), which sends nothing.
    for p in pages {
        p.wait(
            "!document.getElementById('pref-offer').hidden",
            "the preference offered at the start",
        )
        .await;
        assert_eq!(
            p.eval("[...document.querySelectorAll('#pref-offer button')].map(b => b.dataset.pref)")
                .await,
            json!(["scoring", "messenger", "dark_in_my_turn", ""])
        );
    }
    red.screenshot("messages-preference-offered").await;
    for p in pages {
        let before = page_seq(p).await;
        p.click("#pref-offer button[data-pref=\"\"]").await;
        p.wait(
            "document.getElementById('pref-offer').hidden",
            "the offer declined",
        )
        .await;
        assert_eq!(page_seq(p).await, before, "declining sends no command");
    }
    let steps = canonical_steps(&s);
    let extra = steps
        .iter()
        .position(|(_, c)| matches!(c, Command::DispatchAction { .. }))
        .expect("dispatch 4's action")
        + 1;
    let seq = play_steps(&pages, &s, 0..extra, 0).await;
    // Red places the extra tile while Blue's pawn choice is open.
    wait_seq(&red, seq).await;
    let (_, view) = server_view(&server, id).await;
    let open: Vec<&str> = view["decisions"]
        .as_array()
        .expect("decisions")
        .iter()
        .filter_map(|d| d["type"].as_str())
        .collect();
    assert_eq!(open, ["choose_pawn", "place_tile"], "{view}");
    let hint = text_of(&red, "document.getElementById('hint').textContent").await;
    assert!(hint.starts_with("Dispatch 4, the extra tile:"), "{hint}");
    assert_eq!(
        red.eval("document.getElementById('hand').hidden").await,
        json!(false)
    );
    assert_eq!(
        blue.eval("document.querySelectorAll('[data-key^=\"pawn:\"]').length")
            .await,
        json!(2),
        "Blue's pawn buttons stay offered"
    );
    red.screenshot("messages-plays-on-while-another-chooses")
        .await;
    let blues = steps.len() - 1;
    let seq = play_steps(&pages, &s, extra..blues, seq).await;
    // Red's turn is over; the next turn (here final scoring) waits for Blue.
    for p in pages {
        wait_seq(p, seq).await;
        p.wait(
            "document.getElementById('turn').dataset.held === 'true'",
            "the turn line says the next turn waits",
        )
        .await;
        let line = text_of(p, "document.getElementById('turn').textContent").await;
        assert!(
            line.contains("the next turn waits for Blue to choose a pawn") && line.contains(" s."),
            "{line}"
        );
        assert_eq!(
            p.eval("document.querySelectorAll('#turn .countdown').length")
                .await,
            json!(1)
        );
    }
    let hint = text_of(&red, "document.getElementById('hint').textContent").await;
    assert_eq!(
        hint,
        "Waiting for Blue to choose a pawn before the next turn."
    );
    red.screenshot("messages-next-turn-waits").await;
    let seq = play_steps(&pages, &s, blues..steps.len(), seq).await;
    let (sseq, view) = server_view(&server, id).await;
    assert_eq!(sseq, seq);
    assert_eq!(scores(&view), expected_scores(&s));
    assert_eq!(view["finished"], json!(true));
    for p in pages {
        wait_seq(p, seq).await;
        assert_eq!(page_view(p).await, view, "the page's view is the server's");
        assert_eq!(
            p.eval("document.getElementById('turn').dataset.held").await,
            json!("false")
        );
    }
}
