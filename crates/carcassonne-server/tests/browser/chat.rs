//! Two players chat at the table.

use crate::cdp::Page;
use crate::harness::*;
use serde_json::json;

/// Types a chat message on a page and sends it with the Send button.
async fn say(p: &Page, text: &str) {
    let set = format!(
        "document.getElementById('chat-text').value = {}",
        serde_json::to_string(text).expect("json")
    );
    p.eval(&set).await;
    p.click("#chat-form button").await;
}

/// Waits until a page's chat shows a line with `text`.
async fn wait_chat(p: &Page, text: &str) {
    let js = format!(
        "[...document.querySelectorAll('#chat-log li')].some((li) => li.textContent.endsWith({}))",
        serde_json::to_string(text).expect("json")
    );
    p.wait(&js, "the chat line").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_players_chat_at_the_table() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-coats-of-arms-complete-and-incomplete");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    say(&red, "good luck, <b>Blue</b>").await;
    wait_chat(&blue, "good luck, <b>Blue</b>").await;
    wait_chat(&red, "good luck, <b>Blue</b>").await;
    // The text is shown as text, with its sender's colour.
    assert_eq!(
        blue.eval("document.querySelector('#chat-log li').textContent")
            .await,
        json!("Red: good luck, <b>Blue</b>")
    );
    assert_eq!(
        blue.eval("document.querySelectorAll('#chat-log b').length")
            .await,
        json!(1)
    );
    say(&blue, "you too").await;
    wait_chat(&red, "you too").await;
    assert_eq!(
        red.eval("document.getElementById('chat-text').value").await,
        json!("")
    );
    // Chat is not a move: the match did not advance.
    assert_eq!(page_seq(&red).await, Some(0));
    blue.screenshot("chat").await;

    // Blue mutes Red from Red's line: the line goes, and Red's next one never reaches Blue
    // (Blue's own line, said after Red's was delivered, shows alone).
    assert_eq!(
        red.eval("document.querySelectorAll('#chat-log li[data-speaker] button.mute').length")
            .await,
        json!(1),
        "only the other player's line offers a mute"
    );
    blue.click("#chat-log li button.mute").await;
    blue.wait(
        "!document.getElementById('chat-muted').hidden",
        "the muted list",
    )
    .await;
    assert_eq!(
        text_of(&blue, "document.getElementById('chat-muted').textContent").await,
        "unmute Red"
    );
    say(&red, "are you there?").await;
    wait_chat(&red, "are you there?").await;
    say(&blue, "anyone?").await;
    wait_chat(&blue, "anyone?").await;
    wait_chat(&red, "anyone?").await;
    assert_eq!(
        blue.eval("[...document.querySelectorAll('#chat-log li')].map((li) => li.textContent)")
            .await,
        json!(["Blue: you too", "Blue: anyone?"]),
        "Red's lines are gone from Blue's page"
    );
    blue.screenshot("chat-muted").await;
    // Unmuted, Red is heard again.
    blue.click("#chat-muted button").await;
    say(&red, "back").await;
    wait_chat(&blue, "back").await;
    assert!(
        blue.eval("document.getElementById('chat-muted').hidden")
            .await
            == json!(true)
    );
}
