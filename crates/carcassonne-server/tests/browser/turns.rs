//! The your-turn notice of the play page: the player turns on the sound and the browser
//! notification (the browser grants the permission), looks at another tab, and when the other
//! player's turn ends the title is marked and one notification is shown; the mark goes when
//! the player has moved, and the choices stay after a reload. The lobby page sets the account's
//! webhook, shows its secret once, and removes it.

use crate::harness::*;
use crate::lobby::guest_page;
use client::CommandOutcome;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_waiting_marks_the_title_and_notifies_a_player_elsewhere() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let created = create(&server, &s).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    blue.grant(&server.http(), &["notifications"]).await;
    assert!(
        !text_of(&blue, "document.title").await.starts_with('●'),
        "Red's turn: nothing waits for Blue"
    );
    blue.click("#notify-settings summary").await;
    blue.click("#notify-sound").await;
    blue.click("#notify-browser").await;
    blue.wait(
        "document.body.dataset.notify === 'sound notification'",
        "both notices chosen",
    )
    .await;
    // Blue looks at another tab.
    blue.eval("document.hasFocus = () => false").await;

    // Red's turn, over the wire, until a decision waits for Blue.
    let mut seats = seat_connections(&server, &created).await;
    let mut seq = 0;
    for (i, step) in s.steps.iter().enumerate() {
        if step.player != 0 {
            break;
        }
        let out = seats[0]
            .command(&format!("red{i}"), step.command.clone().expect("a command"))
            .await
            .expect("command");
        assert!(matches!(out, CommandOutcome::Accepted { .. }), "{out:?}");
        seq += 1;
    }
    wait_seq(&blue, seq).await;
    blue.wait(
        "document.title.startsWith('● Your turn')",
        "the title's mark",
    )
    .await;
    blue.wait(
        "(document.body.dataset.notices ?? '').endsWith('/1')",
        "one browser notification",
    )
    .await;
    let counts = text_of(&blue, "document.body.dataset.notices").await;
    eprintln!("notices (sounds/notifications): {counts}");
    blue.screenshot("turn-notice").await;

    // Blue moves: the mark goes; no second notification while Blue's own turn goes on.
    for (i, step) in s.steps.iter().enumerate().skip(seq as usize) {
        if step.player != 1 {
            break;
        }
        let out = seats[1]
            .command(
                &format!("blue{i}"),
                step.command.clone().expect("a command"),
            )
            .await
            .expect("command");
        assert!(matches!(out, CommandOutcome::Accepted { .. }), "{out:?}");
        seq += 1;
    }
    wait_seq(&blue, seq).await;
    blue.wait("!document.title.startsWith('●')", "the mark gone")
        .await;
    assert!(
        text_of(&blue, "document.body.dataset.notices")
            .await
            .ends_with("/1")
    );

    // The choices are the browser's: a reload keeps them.
    blue.reload().await;
    blue.wait(
        "window.carcassonne && window.carcassonne.view && document.getElementById('notify-sound').checked && document.getElementById('notify-browser').checked",
        "the choices after a reload",
    )
    .await;
    server.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_page_sets_and_removes_the_webhook() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let p = guest_page(&b, &server, "Hook", 1280, 900).await;
    p.wait(
        "document.getElementById('webhook-state').textContent.startsWith('No webhook')",
        "no webhook yet",
    )
    .await;
    p.eval("document.getElementById('webhook-url').value = 'https://relay.example/turns'")
        .await;
    p.click("#webhook-form button").await;
    p.wait(
        "document.getElementById('webhook-state').textContent.startsWith('Notices go to https://relay.example/turns')",
        "the webhook set",
    )
    .await;
    let secret = text_of(&p, "document.getElementById('webhook-secret').textContent").await;
    let hex = secret.rsplit(' ').next().unwrap_or_default();
    assert!(
        hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()),
        "{secret}"
    );
    p.screenshot("webhook-settings").await;
    // Shown once: after a reload the page knows the URL, never the secret.
    p.reload().await;
    p.wait(
        "document.getElementById('webhook-state').textContent.startsWith('Notices go to https://relay.example/turns') && document.getElementById('webhook-secret').hidden",
        "the webhook without its secret",
    )
    .await;
    assert!(!text_of(&p, "document.body.innerHTML").await.contains(hex));
    // An http URL is refused on a server that does not allow it, in words.
    p.eval("document.getElementById('webhook-url').value = 'http://127.0.0.1:9/h'")
        .await;
    p.click("#webhook-form button").await;
    p.wait(
        "!document.getElementById('lobby-error').hidden && document.getElementById('lobby-error').textContent.includes('https://')",
        "the refusal",
    )
    .await;
    p.click("#webhook-remove").await;
    p.wait(
        "document.getElementById('webhook-state').textContent.startsWith('No webhook')",
        "the webhook removed",
    )
    .await;
    server.kill();
}
