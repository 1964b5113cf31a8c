//! The pages under their Content-Security-Policy in Chromium: the start page, a seat's page with
//! its coloured swatches, the gallery and the admin console load with no violation, no uncaught
//! error and no `console.error`; and a violation does show up, so a clean record means a clean
//! page (an inline script and a `style` attribute added to the page are refused and recorded).
//! The lobby page, logged out, logs no error at all: not even a failed request in the console.

use crate::cdp::Page;
use crate::harness::*;
use serde_json::{Value, json};

/// Runs in every document before its own scripts (DevTools' injection, outside the policy):
/// records policy violations, uncaught errors and `console.error` calls.
const RECORDER: &str = r#"
window.__problems = [];
document.addEventListener('securitypolicyviolation', (e) =>
  window.__problems.push(`csp ${e.violatedDirective}: ${e.blockedURI} ${e.sample}`));
window.addEventListener('error', (e) => window.__problems.push(`error: ${e.message}`));
window.addEventListener('unhandledrejection', (e) => window.__problems.push(`rejection: ${e.reason}`));
const consoleError = console.error;
console.error = (...args) => {
  window.__problems.push(`console.error: ${args.join(' ')}`);
  consoleError.apply(console, args);
};
"#;

async fn recording_page(b: &crate::cdp::Browser) -> Page {
    let p = b.page(1280, 720).await;
    p.call(
        "Page.addScriptToEvaluateOnNewDocument",
        json!({ "source": RECORDER }),
    )
    .await;
    p
}

async fn problems(p: &Page) -> Value {
    p.eval("window.__problems").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_run_clean_under_the_content_security_policy() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-coats-of-arms-complete-and-incomplete");
    let created = create(&server, &s).await;

    // A seat's page: the players' swatches are coloured through the style object.
    let seat = recording_page(&b).await;
    seat.goto(&format!(
        "{}/#token={}",
        server.http(),
        created.seats[0].token
    ))
    .await;
    seat.wait(
        "document.querySelector('#players .swatch') && window.carcassonne && window.carcassonne.view",
        "the seat's page",
    )
    .await;
    assert_eq!(
        seat.eval("getComputedStyle(document.querySelector('#players .swatch')).backgroundColor")
            .await,
        json!("rgb(213, 94, 0)"),
        "the first seat's swatch is red (#D55E00)"
    );
    assert_eq!(problems(&seat).await, json!([]), "the seat's page");

    for (path, ready, what) in [
        (
            "/",
            "!document.getElementById('lobbies').hidden",
            "the lobbies",
        ),
        (
            "/#test",
            "!document.getElementById('lobby').hidden",
            "the test start page",
        ),
        (
            "/#tiles",
            "document.querySelector('#gallery figure svg')",
            "the tile gallery",
        ),
        (
            "/admin",
            "!document.getElementById('login').hidden",
            "the admin console",
        ),
        (
            "/ratings",
            "document.body.dataset.ready !== undefined",
            "the leaderboard",
        ),
    ] {
        let p = recording_page(&b).await;
        p.goto(&format!("{}{path}", server.http())).await;
        p.wait(ready, what).await;
        // Let the page's own start-up (fetches, the socket) finish.
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert_eq!(problems(&p).await, json!([]), "{what}");
    }

    // The record catches what the policy refuses: an inline script does not run, a `style`
    // attribute is not applied, and both are reported.
    let ran = seat
        .eval(
            "(() => {
               const s = document.createElement('script');
               s.textContent = 'window.__inline = true';
               document.body.append(s);
               const d = document.createElement('div');
               d.innerHTML = '<span id=\"csp-probe\" style=\"color: rgb(1, 2, 3)\">x</span>';
               document.body.append(d);
               return window.__inline === true;
             })()",
        )
        .await;
    assert_eq!(ran, json!(false), "an inline script ran");
    seat.wait(
        "window.__problems.length >= 2",
        "the violations to be recorded",
    )
    .await;
    let got = problems(&seat).await.to_string();
    assert!(got.contains("script-src"), "{got}");
    assert!(got.contains("style-src"), "{got}");
    assert_ne!(
        seat.eval("getComputedStyle(document.getElementById('csp-probe')).color")
            .await,
        json!("rgb(1, 2, 3)"),
        "a style attribute was applied"
    );
    seat.screenshot("csp").await;
}

/// Logged out, the lobby asks who it is without a failed request: Chromium's own log (where a
/// 401 or a missing favicon shows as a network error) and the page's console stay clean.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_logged_out_logs_no_console_error() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let p = recording_page(&b).await;
    p.call("Log.enable", json!({})).await;
    p.call("Runtime.enable", json!({})).await;
    p.goto(&format!("{}/", server.http())).await;
    p.wait(
        "!document.getElementById('entry').hidden",
        "the lobby's entry form (logged out)",
    )
    .await;
    // Let the page's start-up (fetches, the favicon) finish.
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let errors: Vec<Value> = p
        .events("Log.entryAdded")
        .await
        .into_iter()
        .filter(|e| e["entry"]["level"] == "error")
        .collect();
    assert_eq!(errors, Vec::<Value>::new(), "Chromium's log");
    let console: Vec<Value> = p
        .events("Runtime.consoleAPICalled")
        .await
        .into_iter()
        .filter(|e| e["type"] == "error")
        .collect();
    assert_eq!(console, Vec::<Value>::new(), "console.error");
    assert_eq!(problems(&p).await, json!([]), "the page's own record");
    // The check can fail: a request the server refuses is in Chromium's log.
    p.eval("fetch('/api/me').then(r => r.status)").await;
    p.wait("true", "the refused request").await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let refused = p
        .events("Log.entryAdded")
        .await
        .into_iter()
        .filter(|e| e["entry"]["level"] == "error")
        .count();
    assert_eq!(refused, 1, "a 401 is logged as an error");
}
