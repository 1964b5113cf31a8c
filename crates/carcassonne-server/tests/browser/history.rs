//! The whole log, always: a page reads the match's history from the server when it joins, so a
//! reload, a new tab or a late spectator shows every move from the opening on, and the chat said
//! before it came.

use crate::cdp::Page;
use crate::harness::*;
use serde_json::{Value, json};
use std::path::Path;

/// The log's lines as `[seq, text]`.
async fn log_lines(p: &Page) -> Vec<(u64, String)> {
    let v = p
        .eval("[...document.querySelectorAll('#log li')].map(li => [Number(li.dataset.seq), li.textContent])")
        .await;
    v.as_array()
        .expect("lines")
        .iter()
        .map(|l| {
            (
                l[0].as_u64().expect("a seq"),
                l[1].as_str().expect("text").to_string(),
            )
        })
        .collect()
}

/// Waits until the log shows every seq from the opening (0) to `seq`.
async fn wait_whole_log(p: &Page, seq: u64) {
    p.wait(
        &format!(
            "(() => {{ const s = new Set([...document.querySelectorAll('#log li')].map(li => Number(li.dataset.seq)));
                 for (let i = 0; i <= {seq}; i++) if (!s.has(i)) return false; return true; }})()"
        ),
        &format!("the log from the opening to seq {seq}"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_and_a_late_spectator_show_the_whole_log_and_chat() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let created = create(&server, &s).await;
    let mut seats = seat_connections(&server, &created).await;
    let mut seq = 0;
    for (i, step) in s.steps.iter().take(6).enumerate() {
        let out = seats[usize::from(step.player)]
            .command(&format!("h{i}"), step.command.clone().expect("a command"))
            .await
            .expect("command");
        assert!(
            matches!(out, client::CommandOutcome::Accepted { .. }),
            "{out:?}"
        );
        seq += 1;
    }
    // Red opens the page after six moves and says something at the table.
    let red = b.page(1280, 800).await;
    red.goto(&format!(
        "{}/#token={}",
        server.http(),
        created.seats[0].token
    ))
    .await;
    wait_seq(&red, seq).await;
    wait_whole_log(&red, seq).await;
    let before = log_lines(&red).await;
    assert!(
        before[0].0 == 0 && before[0].1.starts_with("The game begins"),
        "the opening first: {before:?}"
    );
    red.eval("document.getElementById('chat-text').value = 'the first words'")
        .await;
    red.click("#chat-form button").await;
    red.wait(
        "[...document.querySelectorAll('#chat-log li')].some(li => li.textContent.endsWith('the first words'))",
        "the chat line",
    )
    .await;

    // A reload shows the same log from the first tile, and the chat said before it.
    red.reload().await;
    red.wait("window.carcassonne && window.carcassonne.view", "the view")
        .await;
    wait_whole_log(&red, seq).await;
    assert_eq!(log_lines(&red).await, before, "the same log after a reload");
    red.wait(
        "[...document.querySelectorAll('#chat-log li')].some(li => li.textContent.endsWith('the first words'))",
        "the chat after a reload",
    )
    .await;
    // One more move, live: it follows the history with no hole and no repeat.
    let step = &s.steps[6];
    seats[usize::from(step.player)]
        .command("h6", step.command.clone().expect("a command"))
        .await
        .expect("command");
    seq += 1;
    wait_seq(&red, seq).await;
    wait_whole_log(&red, seq).await;
    let after = log_lines(&red).await;
    assert_eq!(&after[..before.len()], &before[..]);
    let seqs: Vec<u64> = after.iter().map(|(s, _)| *s).collect();
    assert!(seqs.windows(2).all(|w| w[0] <= w[1]), "in order: {seqs:?}");
    let shot = red.screenshot("log-after-reload").await;
    if std::env::var("UPDATE_DOCS_SCREENSHOTS").is_ok() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/log-after-reload.png");
        std::fs::copy(&shot, docs).expect("copy the screenshot to docs/");
    }

    // A spectator who comes late sees the same history and the table's chat.
    let watcher = b.page(1280, 800).await;
    watcher
        .goto(&format!("{}/watch/{}", server.http(), created.match_id))
        .await;
    wait_seq(&watcher, seq).await;
    wait_whole_log(&watcher, seq).await;
    assert_eq!(log_lines(&watcher).await, after);
    watcher
        .wait(
            "[...document.querySelectorAll('#chat-log li')].some(li => li.textContent === 'Red: the first words')",
            "the chat for a late spectator",
        )
        .await;
}

/// A whole random game: a spectator who arrives at the end scrolls the log to the top and
/// reaches the opening, page by page, with every move in between.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_scrolls_through_a_whole_game() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let req = protocol::CreateMatch {
        players: vec![rules::Colour::Red, rules::Colour::Blue],
        modules: Default::default(),
        meeples: None,
        draw_order: None,
        clock: None,
    };
    let created = client::create_match(&server.http(), &req)
        .await
        .expect("create");
    let seq = play_randomly(&server, &created, u64::MAX, 5).await;
    let watcher = b.page(1280, 800).await;
    watcher
        .goto(&format!("{}/watch/{}", server.http(), created.match_id))
        .await;
    wait_seq(&watcher, seq).await;
    watcher
        .wait("document.querySelectorAll('#log li').length > 0", "the log")
        .await;
    // Scrolled to the top until the opening shows.
    for _ in 0..10 {
        let first = watcher
            .eval("document.querySelector('#log li')?.dataset.seq")
            .await;
        if first == json!("0") {
            break;
        }
        watcher
            .eval("(() => { const l = document.getElementById('log'); l.scrollTop = 0; l.dispatchEvent(new Event('scroll')); })()")
            .await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    wait_whole_log(&watcher, seq).await;
    let scrolls: Value = watcher
        .eval("(() => { const l = document.getElementById('log'); return l.scrollHeight > l.clientHeight; })()")
        .await;
    assert_eq!(
        scrolls,
        json!(true),
        "a whole game is longer than the panel"
    );
    let last = log_lines(&watcher).await;
    // In the players' words: colours, no squares, no tile ids, no code.
    let internal = regex_free(&last);
    assert!(internal.is_empty(), "lines with internals: {internal:?}");
    assert!(
        last.last().is_some_and(|(_, t)| t.starts_with("Game over")),
        "{:?}",
        last.last()
    );
}

/// The lines that name a square (`3,-1`), a tile id (`base/U`), a seat number or code (a
/// backtick).
fn regex_free(lines: &[(u64, String)]) -> Vec<String> {
    lines
        .iter()
        .map(|(_, t)| t)
        .filter(|t| {
            let square = t.as_bytes().windows(3).any(|w| {
                w[0].is_ascii_digit() && w[1] == b',' && (w[2].is_ascii_digit() || w[2] == b'-')
            });
            square
                || t.contains('/')
                || t.contains('`')
                || t.contains("player ")
                || t.contains("seat")
        })
        .cloned()
        .collect()
}
