//! A player's own pages and the admin's moderation screen in Chromium: "My games" lists the
//! account's match with whose turn it is and the clock, and follows the turn live; a password
//! change on the account page signs the other device out; the admin console lists a report,
//! removes the reported line from the players' pages, resolves the report, suspends and lifts
//! an account, and hands out a reset link whose page sets a new password.

use crate::admin::admin_page;
use crate::cdp::{Browser, Page};
use crate::harness::*;
use crate::lobby::click_first_legal;
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse";

/// A page signed in as a registered account `name` (registered by the page's own form, or
/// logged in when `login`); the session cookie stays in the page's browser context.
async fn account_page(
    b: &Browser,
    server: &Server,
    name: &str,
    password: &str,
    login: bool,
) -> Page {
    let p = b.page(1280, 720).await;
    p.goto(&format!("{}/", server.http())).await;
    p.wait("!document.getElementById('entry').hidden", "the entry form")
        .await;
    p.eval(&format!(
        "document.getElementById('login-name').value = {}; document.getElementById('login-password').value = {}",
        json!(name),
        json!(password)
    ))
    .await;
    p.click(if login {
        "#login-form button"
    } else {
        "#register"
    })
    .await;
    p.wait(
        &format!("document.body.dataset.account === {}", json!(name)),
        "signed in",
    )
    .await;
    p
}

/// A REST call from the page with its cookie: `{status, body}`.
async fn fetch(p: &Page, method: &str, path: &str, body: Value) -> Value {
    p.eval(&format!(
        "(async () => {{ const r = await fetch({path}, {{method: {method}, credentials: 'same-origin',
            headers: {{'content-type': 'application/json'}}, body: {body} }});
          const t = await r.text(); return {{status: r.status, body: t ? JSON.parse(t) : null}}; }})()",
        path = json!(path),
        method = json!(method),
        body = if body.is_null() { "undefined".to_string() } else { json!(body.to_string()).to_string() },
    ))
    .await
}

/// A two-seat lobby match between the pages' accounts (the host on seat 0) with a 5 min + 20 s
/// clock, started over the REST API from the pages; its id.
async fn lobby_match(host: &Page, guest: &Page) -> String {
    let lobby = fetch(
        host,
        "POST",
        "/api/lobbies",
        json!({"name": "Evening", "seats": 2, "clock": {"bank_ms": 300000, "increment_ms": 20000}}),
    )
    .await;
    assert_eq!(lobby["status"], 201, "{lobby}");
    let id = lobby["body"]["id"].as_str().expect("lobby id").to_string();
    let joined = fetch(guest, "POST", &format!("/api/lobbies/{id}/join"), json!({})).await;
    assert_eq!(joined["status"], 200, "{joined}");
    for p in [host, guest] {
        let r = fetch(
            p,
            "POST",
            &format!("/api/lobbies/{id}/ready"),
            json!({"ready": true}),
        )
        .await;
        assert_eq!(r["status"], 200, "{r}");
    }
    let started = fetch(
        host,
        "POST",
        &format!("/api/lobbies/{id}/start"),
        Value::Null,
    )
    .await;
    assert_eq!(started["status"], 201, "{started}");
    started["body"]["match_id"]
        .as_str()
        .expect("match id")
        .to_string()
}

/// Goes to a fragment of the lobby page (which reloads on a new fragment) and waits for `ready`.
async fn open(p: &Page, server: &Server, hash: &str, ready: &str) {
    p.goto(&format!("{}/{hash}", server.http())).await;
    p.wait(ready, hash).await;
}

fn row(id: &str) -> String {
    format!("document.querySelector('#games-body tr[data-match=\"{id}\"]')")
}

/// "My games" shows the match with whose turn and the clock, for both players, and follows the
/// turn while it is open: a move on another page makes it the other player's turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn my_games_shows_whose_turn_and_follows_it_live() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let ann = account_page(&b, &server, "Ann", PASSWORD, false).await;
    let bo = account_page(&b, &server, "Bo", PASSWORD, false).await;
    let m = lobby_match(&ann, &bo).await;
    for p in [&ann, &bo] {
        p.click("#my-games").await;
        p.wait(&row(&m), "the match listed").await;
    }
    let turn_js = format!("{}.querySelector('td.turn').textContent", row(&m));
    assert_eq!(text_of(&ann, &turn_js).await, "Your turn");
    assert_eq!(text_of(&bo, &turn_js).await, "Ann's turn");
    let cells = text_of(&bo, &format!("{}.textContent", row(&m))).await;
    assert!(
        cells.contains("Ann") && cells.contains("Bo (you)"),
        "{cells}"
    );
    assert!(
        cells.contains("5 min + 20 s") && cells.contains("next deadline in"),
        "{cells}"
    );
    assert_eq!(
        text_of(&ann, "document.title").await,
        "(1) My games — Carcassonne"
    );
    ann.screenshot("my-games").await;

    // Ann plays her turn on the play page; Bo's list, left open, turns to him.
    ann.click(&format!("#games-body tr[data-match=\"{m}\"] a"))
        .await;
    ann.wait(
        "window.carcassonne && window.carcassonne.view && window.carcassonne.seat === 0",
        "Ann's seat",
    )
    .await;
    click_first_legal(&ann).await;
    // Pushed: the list follows the match over the WebSocket (its poll is half a minute).
    bo.wait(
        &format!("{}.dataset.yourTurn === 'true'", row(&m)),
        "Bo's turn, live",
    )
    .await;
    assert!(
        text_of(&bo, "document.getElementById('games').dataset.pushes || ''")
            .await
            .parse::<u32>()
            .is_ok_and(|n| n >= 1),
        "the update came by a push"
    );
    assert_eq!(text_of(&bo, &turn_js).await, "Your turn");
    bo.screenshot("my-games-your-turn").await;
}

/// The account page changes the password: the other device's session ends (its list says so),
/// and the new password logs in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_change_signs_the_other_device_out() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let laptop = account_page(&b, &server, "Ann", PASSWORD, false).await;
    let phone = account_page(&b, &server, "Ann", PASSWORD, true).await;
    open(
        &phone,
        &server,
        "#games",
        "document.getElementById('games').dataset.loaded === 'true'",
    )
    .await;
    laptop.click("#my-account").await;
    laptop
        .wait(
            "!document.getElementById('account').hidden",
            "the account page",
        )
        .await;
    let fill = |old: &str, new: &str| {
        format!(
            "document.getElementById('old-password').value = {}; document.getElementById('new-password').value = {n}; document.getElementById('new-password-again').value = {n}",
            json!(old),
            n = json!(new)
        )
    };
    laptop.eval(&fill("wrong horse", "battery staple")).await;
    laptop.click("#change-password").await;
    laptop
        .wait(
            "document.getElementById('password-said').textContent.includes('That password is wrong')",
            "the refusal in words",
        )
        .await;
    laptop.eval(&fill(PASSWORD, "battery staple")).await;
    laptop.click("#change-password").await;
    laptop
        .wait(
            "document.getElementById('password-said').textContent.includes('Password changed')",
            "the change",
        )
        .await;
    laptop.screenshot("account-password").await;
    // The phone's session ended: its socket closed (4002) and the page is back at the entry
    // form; it logs in with the new password.
    phone
        .wait(
            "!document.getElementById('entry').hidden && !document.body.dataset.account",
            "the phone signed out",
        )
        .await;
    assert_eq!(
        fetch(&laptop, "GET", "/api/me", Value::Null).await["status"],
        200
    );
    phone
        .eval("document.getElementById('login-name').value = 'Ann'; document.getElementById('login-password').value = 'battery staple'")
        .await;
    phone.click("#login-form button").await;
    phone
        .wait("document.body.dataset.account === 'Ann'", "signed in again")
        .await;
}

/// The account page downloads the account's data and deletes the account: a wrong password is
/// refused in words, the right one signs out, and the name no longer logs in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_account_page_exports_and_deletes() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let ann = account_page(&b, &server, "Ann", PASSWORD, false).await;
    open(
        &ann,
        &server,
        "#account",
        "!document.getElementById('account').hidden",
    )
    .await;
    let export = ann
        .eval("fetch(document.getElementById('export').href, {credentials: 'same-origin'}).then(r => r.json())")
        .await;
    assert_eq!(export["account"]["name"], "Ann", "{export}");
    assert_eq!(export["matches"], json!([]));
    ann.eval("document.getElementById('delete-password').value = 'wrong horse'; document.getElementById('delete-sure').checked = true")
        .await;
    ann.click("#delete-account").await;
    ann.wait(
        "document.getElementById('delete-said').textContent.includes('That password is wrong')",
        "the refusal in words",
    )
    .await;
    ann.eval(&format!(
        "document.getElementById('delete-password').value = {}",
        json!(PASSWORD)
    ))
    .await;
    ann.click("#delete-account").await;
    ann.wait(
        "!document.getElementById('entry').hidden && !document.body.dataset.account",
        "signed out, at the entry",
    )
    .await;
    let login = fetch(
        &ann,
        "POST",
        "/api/sessions",
        json!({"name": "Ann", "password": PASSWORD}),
    )
    .await;
    assert_eq!(login["status"], 401, "{login}");
}

/// The console's moderation screen: a reported chat line is listed with its text, removed from
/// the players' pages, the report resolved; the reporter's target is suspended (log-in refused)
/// and lifted; a reset link's page sets a new password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_moderation_screen_removes_resolves_suspends_and_resets() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let ann = account_page(&b, &server, "Ann", PASSWORD, false).await;
    let bo = account_page(&b, &server, "Bo", PASSWORD, false).await;
    let bo_id = fetch(&bo, "GET", "/api/me", Value::Null).await["body"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let m = lobby_match(&ann, &bo).await;
    for p in [&ann, &bo] {
        open(
            p,
            &server,
            &format!("#match={m}"),
            "window.carcassonne && window.carcassonne.view && window.carcassonne.seat !== null",
        )
        .await;
        p.wait("!document.getElementById('chat').hidden", "the chat")
            .await;
    }
    bo.eval("document.getElementById('chat-text').value = 'you play like a potato'")
        .await;
    bo.click("#chat-form button").await;
    ann.wait(
        "document.querySelector('#chat-log li[data-chat-id]')",
        "the line at Ann's",
    )
    .await;
    let chat_id = text_of(
        &ann,
        "document.querySelector('#chat-log li[data-chat-id]').dataset.chatId",
    )
    .await;
    // Ann reports the line, then its speaker, through the line's report form.
    let line = format!("#chat-log li[data-chat-id=\"{chat_id}\"]");
    for (what, reason) in [("line", "insults"), ("player", "keeps insulting")] {
        ann.click(&format!("{line} button.report")).await;
        ann.wait(
            &format!(
                "document.querySelector({})",
                json!(format!("{line} form.report-form"))
            ),
            "the report form",
        )
        .await;
        ann.eval(&format!(
            "(() => {{ const f = document.querySelector({}); f.what.value = {}; f.reason.value = {}; }})()",
            json!(format!("{line} form.report-form")),
            json!(what),
            json!(reason)
        ))
        .await;
        ann.click(&format!("{line} form.report-form button[type=submit]"))
            .await;
        ann.wait(
            &format!(
                "document.querySelector({})?.dataset.sent === 'true'",
                json!(format!("{line} form.report-form"))
            ),
            "the report sent",
        )
        .await;
        // Closed again (the button toggles the form), ready for the next report.
        ann.click(&format!("{line} button.report")).await;
    }

    let admin = admin_page(&b, &server, ADMIN_TOKEN, "#moderation").await;
    admin
        .wait("document.getElementById('moderation').dataset.loaded === 'true' && document.querySelector('#reports-body tr[data-report]')", "the report listed")
        .await;
    let listed = text_of(
        &admin,
        "document.getElementById('reports-body').textContent",
    )
    .await;
    assert!(
        listed.contains("you play like a potato")
            && listed.contains("insults")
            && listed.contains("keeps insulting")
            && listed.contains("Ann"),
        "{listed}"
    );
    admin.screenshot("moderation-reports").await;
    admin
        .click(&format!("button[data-remove=\"{chat_id}\"]"))
        .await;
    admin.click("#confirm-ok").await;
    for p in [&ann, &bo] {
        p.wait(
            &format!("!document.querySelector('#chat-log li[data-chat-id=\"{chat_id}\"]')"),
            "the line removed live",
        )
        .await;
    }
    for left in [1, 0] {
        let rid = text_of(
            &admin,
            "document.querySelector('#reports-body tr[data-report]').dataset.report",
        )
        .await;
        admin
            .eval(&format!(
                "document.getElementById('note-{rid}').value = 'line removed'"
            ))
            .await;
        admin
            .click(&format!("button[data-resolve=\"{rid}\"]"))
            .await;
        admin
            .wait(
                &format!(
                    "document.querySelectorAll('#reports-body tr[data-report]').length === {left}"
                ),
                "the report resolved",
            )
            .await;
    }

    // Bo's account, reached from the match's seats: suspended for an hour, his page signed
    // out, his log-in refused; lifted.
    admin.eval(&format!("location.hash = '#match={m}'")).await;
    let link = format!("#seats a[data-account=\"{bo_id}\"]");
    admin
        .wait(
            &format!("document.querySelector({})", json!(link)),
            "the seat's account link",
        )
        .await;
    admin
        .click_until(
            &link,
            "!document.getElementById('acc-panel').hidden",
            "the account",
        )
        .await;
    assert_eq!(
        admin.eval("document.getElementById('acc-id').value").await,
        json!(bo_id)
    );
    assert!(
        text_of(&admin, "document.getElementById('acc-name').textContent")
            .await
            .contains("Bo")
    );
    admin.eval("document.getElementById('sus-reason').value = 'insults'; document.getElementById('sus-for').value = '3600'").await;
    admin.click("#suspend").await;
    admin.click("#confirm-ok").await;
    admin
        .wait(
            "document.getElementById('acc-panel').dataset.suspended === 'true'",
            "suspended",
        )
        .await;
    assert!(
        text_of(
            &admin,
            "document.getElementById('acc-standing').textContent"
        )
        .await
        .contains("until")
    );
    admin.screenshot("moderation-account").await;
    bo.wait(
        "document.body.dataset.status === 'signed_out'",
        "Bo's page signed out",
    )
    .await;
    let login = fetch(
        &ann,
        "POST",
        "/api/sessions",
        json!({"name": "Bo", "password": PASSWORD}),
    )
    .await;
    assert_eq!(
        (login["status"].clone(), login["body"]["code"].clone()),
        (json!(403), json!("suspended")),
        "{login}"
    );
    admin.click("#unsuspend").await;
    admin.click("#confirm-ok").await;
    admin
        .wait(
            "document.getElementById('acc-panel').dataset.suspended === 'false'",
            "lifted",
        )
        .await;

    // A reset link: its page sets a new password once.
    admin.click("#reset-link").await;
    admin.click("#confirm-ok").await;
    admin
        .wait("document.getElementById('reset-url')", "the link")
        .await;
    let url = text_of(&admin, "document.getElementById('reset-url').value").await;
    assert!(url.contains("/#reset="), "{url}");
    let page = b.page(1280, 720).await;
    page.goto(&url).await;
    page.wait("!document.getElementById('reset').hidden", "the reset page")
        .await;
    page.eval("document.getElementById('reset-password').value = 'battery staple'; document.getElementById('reset-password-again').value = 'battery staple'").await;
    page.click("#reset-submit").await;
    page.wait(
        "document.getElementById('reset-said').textContent.includes('new password is set')",
        "the password set",
    )
    .await;
    assert_eq!(
        text_of(&page, "location.hash").await,
        "",
        "the token left the address bar"
    );
    page.screenshot("reset-link").await;
    let login = fetch(
        &page,
        "POST",
        "/api/sessions",
        json!({"name": "Bo", "password": "battery staple"}),
    )
    .await;
    assert_eq!(login["status"], 201, "{login}");
    let trail = text_of(&admin, "fetch('/api/admin/actions', {headers: {authorization: 'Bearer ' + sessionStorage.getItem('carcassonne.admin-token')}}).then(r => r.text())").await;
    for action in [
        "remove_chat",
        "resolve_report",
        "suspend",
        "unsuspend",
        "password_reset",
    ] {
        assert!(
            trail.contains(&format!("\"{action}\"")),
            "{action} in {trail}"
        );
    }
}
