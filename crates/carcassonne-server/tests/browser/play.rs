//! Two players play by clicking: a whole game, a toll, a reload and a server restart that resume
//! the exact state, a refused command in words, keyboard play on a phone viewport, and a gap in
//! the diffs refilled.

use crate::clicks::*;
use crate::harness::*;
use client::Connection;
use rules::Command;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_players_play_a_whole_game_by_clicking() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b11-scoring-order-roads-cities-monasteries");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    let steps = canonical_steps(&s);
    let n = steps.len();
    // Mid-game, with the next tile picked up over a legal square: the README's picture.
    let mid = (n / 2..n)
        .find(|&i| matches!(steps[i].1, Command::PlaceTile { .. }))
        .expect("a tile step");
    let seq = play_steps(&[&red, &blue], &s, 0..mid, 0).await;
    let (player, Command::PlaceTile { pos, .. }) = &steps[mid] else {
        unreachable!()
    };
    let page = if *player == 0 { &red } else { &blue };
    page.click(&format!("[data-legal=\"{},{}\"]", pos.x, pos.y))
        .await;
    page.screenshot("game-in-progress").await;
    play_steps(&[&red, &blue], &s, mid..n, seq).await;

    for p in [&red, &blue] {
        p.wait("document.body.dataset.finished === 'true'", "the end")
            .await;
    }
    let (seq, view) = server_view(&server, created.match_id).await;
    assert_eq!(view["finished"], json!(true));
    let expected = expected_scores(&s);
    assert_eq!(scores(&view), expected, "the server's final scores");
    for p in [&red, &blue] {
        assert_eq!(page_scores(p).await, scores(&view), "scores in the page");
        assert_eq!(page_seq(p).await, Some(seq));
        assert_eq!(page_view(p).await, view, "the page's view is the server's");
    }
    let log = red.eval("document.getElementById('log').textContent").await;
    assert!(
        log.as_str().unwrap_or("").contains("Game over"),
        "log: {log}"
    );
    assert_eq!(
        red.eval("document.title").await,
        json!("Game over — Carcassonne")
    );
    red.screenshot("whole-game-red").await;
    blue.screenshot("whole-game-blue").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tollkeepers_toll_is_paid_and_shown() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    // The seed's worked examples (T6, T9): tolls paid, a tollhouse turned by travellers.
    let s = scenario("t-t6-t9-seed-examples");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    let steps = canonical_steps(&s);
    let mid = (steps.len() / 2..steps.len())
        .find(|&i| matches!(steps[i].1, Command::PlaceTile { .. }))
        .expect("a tile step");
    let seq = play_steps(&[&red, &blue], &s, 0..mid, 0).await;
    let (player, Command::PlaceTile { pos, .. }) = &steps[mid] else {
        unreachable!()
    };
    let page = if *player == 0 { &red } else { &blue };
    page.click(&format!("[data-legal=\"{},{}\"]", pos.x, pos.y))
        .await;
    page.screenshot("tollkeepers-in-progress").await;
    play_steps(&[&red, &blue], &s, mid..steps.len(), seq).await;

    let (_, view) = server_view(&server, created.match_id).await;
    let log = red.eval("document.getElementById('log').textContent").await;
    let log = log.as_str().unwrap_or_default().to_string();
    // T6's example: the road a player completes pays the tollhouse at its end, in words.
    assert!(
        log.contains("Green's road paid Red's tollhouse 7."),
        "a toll in words: {log}"
    );
    // The tollhouse is on the board and in the players' table with its value.
    let owner = view["players"]
        .as_array()
        .expect("players")
        .iter()
        .find(|p| p.get("tollhouse").is_some())
        .expect("a tollhouse in the server's view")
        .clone();
    let colour = owner["colour"].as_str().expect("colour");
    let value = owner["tollhouse"]["value"].as_u64().expect("value");
    red.wait(
        &format!("document.querySelector('[data-tollhouse=\"{colour}\"]')"),
        "tollhouse on the board",
    )
    .await;
    let cell = red
        .eval(&format!(
            "document.querySelector('tr[data-player=\"{colour}\"] td.toll').textContent"
        ))
        .await;
    assert!(
        cell.as_str().unwrap_or("").starts_with(&value.to_string()),
        "toll cell {cell}"
    );
    assert_eq!(page_scores(&red).await, scores(&view));
    red.screenshot("tollkeepers").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_mid_game_resumes_the_exact_state() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    let half = 6;
    let seq = play_steps(&[&red, &blue], &s, 0..half, 0).await;

    blue.reload().await;
    blue.wait(
        "window.carcassonne && window.carcassonne.view",
        "the view after reload",
    )
    .await;
    wait_seq(&blue, seq).await;
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, seq);
    assert_eq!(
        page_view(&blue).await,
        view,
        "the reloaded page shows the server's view"
    );
    assert_eq!(page_scores(&blue).await, scores(&view));
    // and play goes on from there
    play_steps(&[&red, &blue], &s, half..half + 2, seq).await;
    blue.screenshot("reload-resumed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_restart_shows_reconnecting_and_resumes() {
    let Some((b, data, server)) = browser_and_server().await else {
        return;
    };
    let addr = server.addr;
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    let seq = play_steps(&[&red, &blue], &s, 0..4, 0).await;

    server.kill();
    for p in [&red, &blue] {
        p.wait(
            "document.body.dataset.status === 'reconnecting'",
            "reconnecting",
        )
        .await;
        let status = p
            .eval("document.getElementById('status').textContent")
            .await;
        assert_eq!(status, json!("reconnecting…"));
    }
    red.screenshot("restart-reconnecting").await;

    let server = Server::start(addr, data.path());
    for p in [&red, &blue] {
        p.wait("document.body.dataset.status === 'live'", "live again")
            .await;
    }
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, seq, "no acknowledged move lost");
    for p in [&red, &blue] {
        assert_eq!(page_view(p).await, view, "the exact state back");
    }
    let seq = play_steps(&[&red, &blue], &s, 4..8, seq).await;
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, seq);
    assert_eq!(page_view(&red).await, view);
    red.screenshot("restart-resumed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_command_shows_the_servers_error_in_words() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-coats-of-arms-complete-and-incomplete");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let step = &s.steps[0];
    let cmd = serde_json::to_value(&step.command).expect("json");
    let key = format!("{},{}", cmd["pos"]["x"], cmd["pos"]["y"]);
    red.click(&format!("[data-legal=\"{key}\"]")).await;
    // Turn the tile until it does not fit there, and place it anyway: the server judges.
    for _ in 0..4 {
        if red
            .eval("document.getElementById('fit-hint').textContent")
            .await
            == json!("does not fit here")
        {
            break;
        }
        red.click("#rotate-cw").await;
    }
    assert_eq!(
        red.eval("document.getElementById('fit-hint').textContent")
            .await,
        json!("does not fit here")
    );
    // Place is off there; sent anyway (as another client could), the server judges.
    assert_eq!(
        red.eval("document.getElementById('confirm').disabled")
            .await,
        json!(true)
    );
    red.eval(
        "(() => { const s = document.querySelector('[data-preview]');
           const [x, y] = s.dataset.preview.split(',').map(Number);
           window.carcassonne.command({type: 'place_tile', pos: {x, y}, rotation: Number(s.dataset.rotation)}); })()",
    )
    .await;
    red.wait("!document.getElementById('error').hidden", "the error")
        .await;
    let text = red
        .eval("document.getElementById('error').textContent")
        .await;
    let text = text.as_str().unwrap_or_default();
    assert!(
        text.contains("does not match") && text.contains("(rule B4)"),
        "error shown: {text}"
    );
    assert!(
        !text.contains("The server refused") && !text.contains(','),
        "in words, without the server's message: {text}"
    );
    // Nothing changed, and the move that fits still goes through.
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, 0);
    assert_eq!(page_view(&red).await, view);
    red.screenshot("refused-command").await;
    // Pass in phase 1 is refused by the rules too, in words.
    red.click("#pass").await;
    red.wait(
        "document.getElementById('error').textContent.includes('rule B4')",
        "wrong phase error",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyboard_play_on_a_phone_viewport() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-coats-of-arms-complete-and-incomplete");
    let created = create(&server, &s).await;
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
    assert_eq!(
        red.eval("document.title").await,
        json!("● Your turn — Carcassonne")
    );
    let cmd = serde_json::to_value(&s.steps[0].command).expect("json");
    let key = format!("{},{}", cmd["pos"]["x"], cmd["pos"]["y"]);
    // N cycles the legal squares, R turns, Enter places.
    for _ in 0..20 {
        red.key("n").await;
        if red
            .eval(&format!(
                "!!document.querySelector('[data-preview=\"{key}\"]')"
            ))
            .await
            == json!(true)
        {
            break;
        }
    }
    for _ in 0..4 {
        if red
            .eval("document.getElementById('drawn-name').dataset.rotation")
            .await
            == json!(cmd["rotation"].to_string())
        {
            break;
        }
        red.key("r").await;
    }
    red.key("Enter").await;
    wait_seq(&red, 1).await;
    // Phase 2: N cycles the targets, Enter puts the meeple there.
    let t = serde_json::to_value(&canonical_steps(&s)[1].1).expect("json");
    if let Some(target) = t["target"].as_str() {
        for _ in 0..12 {
            red.key("n").await;
            if red
                .eval(&format!(
                    "!!document.querySelector('[data-target=\"{target}\"].focus')"
                ))
                .await
                == json!(true)
            {
                break;
            }
        }
        red.key("Enter").await;
    } else {
        red.key("s").await;
    }
    wait_seq(&red, 2).await;
    let (_, view) = server_view(&server, created.match_id).await;
    assert_eq!(page_view(&red).await, view);
    assert_eq!(
        red.eval("document.title").await,
        json!("Blue's turn — Carcassonne")
    );
    // Readable on a phone: the side panel does not overflow the viewport's width.
    let w = red.eval("document.documentElement.scrollWidth").await;
    assert!(w.as_u64().unwrap_or(9999) <= 390, "page width {w}");
    red.screenshot("phone-keyboard").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap_in_diffs_is_refilled_and_an_unanswered_command_is_resent() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let steps = canonical_steps(&s);
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    // The same seat in a second tab: both follow, either may play.
    let red2 = seat_page(&b, &server, &created.seats[0].token).await;
    let ws = server.ws();
    let mut blue = Connection::connect(&ws).await.expect("connect");
    blue.auth(&created.seats[1].token).await.expect("auth");

    // The first tab loses one diff on the way in; it must notice the gap at the next one and
    // fetch what it missed with `since`.
    red.eval(
        "(() => { const c = window.carcassonne; const orig = c.handle.bind(c); let dropped = false;
           c.handle = (m) => { if (m.type === 'diff' && !dropped) { dropped = true; return; } orig(m); }; })()",
    )
    .await;
    // Red plays steps 0 and 1 in the second tab by clicking.
    let seq = play_steps(&[&red2, &red2], &s, 0..2, 0).await;
    wait_seq(&red, seq).await;
    let (_, view) = server_view(&server, created.match_id).await;
    assert_eq!(page_view(&red).await, view, "the gap was refilled");

    // Blue's turn over the protocol.
    let mut seq = seq;
    for (i, (player, command)) in steps.iter().enumerate().skip(2).take(2) {
        assert_eq!(*player, 1);
        let out = blue
            .command(&format!("b{i}"), command.clone())
            .await
            .expect("command");
        assert!(
            matches!(out, client::CommandOutcome::Accepted { .. }),
            "{out:?}"
        );
        seq += 1;
    }
    wait_seq(&red, seq).await;

    // A command whose answer is lost: the socket drops right after sending it. On reconnect the
    // page sends it again with the same id; the server answers with the first ack and applies
    // nothing twice.
    let (_, command) = &steps[4];
    let js = format!(
        "(() => {{ const c = window.carcassonne; const id = c.command({});
            c.ws.close(); return id; }})()",
        serde_json::to_string(command).expect("json")
    );
    let id = red.eval(&js).await;
    assert!(id.is_string());
    red.wait(
        "window.carcassonne.pending.size === 0",
        "the resent command's ack",
    )
    .await;
    wait_seq(&red, seq + 1).await;
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, seq + 1, "applied exactly once");
    for p in [&red, &red2] {
        wait_seq(p, sseq).await;
        assert_eq!(page_view(p).await, view);
    }
    red2.screenshot("two-tabs").await;
}
