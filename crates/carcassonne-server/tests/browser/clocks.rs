//! Game clocks in the page, and an away player who comes back.

use crate::harness::*;
use client::Connection;
use protocol::CreateMatch;
use serde_json::json;
use std::time::Duration;

/// Game clocks in the page: one per player, the running one counting down with no diff from the
/// server; when Red's bank runs out the server plays Red's turn and the page offers "I'm back";
/// after the click (a command the rules refuse, no error shown) Red's next turn waits for Red,
/// who has the increment of the turn played for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clocks_count_down_and_an_away_player_comes_back() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let req = CreateMatch {
        players: vec![rules::Colour::Red, rules::Colour::Blue],
        modules: Default::default(),
        meeples: None,
        draw_order: None,
        clock: Some(protocol::ClockSettings {
            bank_ms: 10_000,
            increment_ms: 5_000,
        }),
    };
    let created = client::create_match(&server.http(), &req)
        .await
        .expect("create");
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    red.wait(
        "!document.getElementById('clock-head').hidden && document.querySelectorAll('.clock').length === 2",
        "two clocks",
    )
    .await;
    let first = text_of(&red, "document.querySelector('.clock.running').textContent").await;
    assert!(first.starts_with("0:"), "{first}");
    red.wait(
        &format!("document.querySelector('.clock.running').textContent !== '{first}'"),
        "the countdown",
    )
    .await;
    assert_eq!(
        page_seq(&red).await,
        Some(0),
        "counted in the page, no diff"
    );
    red.screenshot("clocks").await;

    // Red does nothing: the server plays Red's turn, and the page says so.
    red.wait(
        "!document.getElementById('away-row').hidden",
        "the away row",
    )
    .await;
    let red_clock = text_of(&red, "document.querySelectorAll('.clock')[0].textContent").await;
    assert!(red_clock.ends_with("(away)"), "{red_clock}");
    red.click("#back").await;
    red.wait("document.getElementById('away-row').hidden", "back")
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        red.eval("document.getElementById('error').hidden").await,
        json!(true),
        "the expected refusal is not shown"
    );

    // Blue plays its turn from a native client; Red's next turn is Red's again.
    let mut blue = Connection::connect(&server.ws()).await.expect("connect");
    blue.auth(&created.seats[1].token).await.expect("auth");
    let mut n = 0;
    loop {
        let view = page_view(&red).await;
        if view["active"] != 1 {
            break;
        }
        let decisions: Vec<rules::Decision> =
            serde_json::from_value(view["decisions"].clone()).expect("decisions");
        let (_, cmd) = rules::bot::random_move_from(&decisions, || 7).expect("a move");
        n += 1;
        match blue.command(&format!("b{n}"), cmd).await.expect("answer") {
            client::CommandOutcome::Accepted { seq, .. } => wait_seq(&red, seq).await,
            other => panic!("refused: {other:?}"),
        }
    }
    let seq = page_seq(&red).await.expect("seq");
    tokio::time::sleep(Duration::from_millis(700)).await;
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, seq, "nothing played for Red");
    assert_eq!(view["active"], 0);
    assert!(view["clocks"][0]["running_since"].is_u64(), "{view}");
    assert_eq!(page_view(&red).await, view);
}
