//! A small Chrome DevTools Protocol client over the WebSocket the browser opens: enough to give
//! each player a separate browser context, load pages, click with the real mouse, press keys,
//! read the page's state and take screenshots. CDP is a stable JSON-RPC; this client is the few
//! calls the tests need, on the tokio-tungstenite the server's tests already build (a full
//! binding such as chromiumoxide would add minutes of compilation to every clean build).

use base64::Engine as _;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// Any single wait; a hang fails the test instead of blocking the suite.
pub const WAIT: Duration = Duration::from_secs(20);

type Waiters = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;
/// The events Chromium sent (messages without an id), in order: a test reads its page's.
type Events = Arc<Mutex<Vec<Value>>>;

/// One headless Chromium, killed on drop.
pub struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    tx: mpsc::UnboundedSender<Message>,
    next: Arc<AtomicU64>,
    waiters: Waiters,
    events: Events,
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

fn find_chromium() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        })
}

impl Browser {
    /// Starts Chromium, or returns `None` with a notice when it is not installed (outside CI;
    /// with `CI=true` a missing browser fails the test).
    pub async fn launch() -> Option<Browser> {
        let Some(exe) = find_chromium() else {
            assert!(
                !ci(),
                "CI=true but Chromium is not installed (apt-get install chromium)"
            );
            eprintln!("NOTICE: Chromium not found; skipping this browser test");
            return None;
        };
        let profile = tempfile::tempdir().expect("profile dir");
        let mut child = Command::new(exe)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--hide-scrollbars",
                "--mute-audio",
                "--remote-debugging-port=0",
                "about:blank",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start chromium");
        let stderr = child.stderr.take().expect("stderr");
        let (url_tx, url_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(i) = line.find("ws://") {
                    let _ = url_tx.send(line[i..].trim().to_string());
                }
            }
        });
        let url = url_rx
            .recv_timeout(WAIT)
            .expect("DevTools URL from chromium");
        let (ws, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("connect to DevTools");
        let (mut sink, mut stream) = ws.split();
        let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
        tokio::spawn(async move {
            while let Some(m) = rx.recv().await {
                if sink.send(m).await.is_err() {
                    break;
                }
            }
        });
        let waiters: Waiters = Arc::default();
        let events: Events = Arc::default();
        let w = Arc::clone(&waiters);
        let ev = Arc::clone(&events);
        tokio::spawn(async move {
            while let Some(Ok(msg)) = stream.next().await {
                let Message::Text(text) = msg else { continue };
                let Ok(v) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                match v.get("id").and_then(Value::as_u64) {
                    Some(id) => {
                        if let Some(tx) = w.lock().await.remove(&id) {
                            let _ = tx.send(v);
                        }
                    }
                    None => ev.lock().await.push(v),
                }
            }
        });
        Some(Browser {
            child,
            _profile: profile,
            tx,
            next: Arc::new(AtomicU64::new(1)),
            waiters,
            events,
        })
    }

    fn handle(&self) -> Cdp {
        Cdp {
            tx: self.tx.clone(),
            next: Arc::clone(&self.next),
            waiters: Arc::clone(&self.waiters),
            events: Arc::clone(&self.events),
        }
    }

    /// A new page in its own browser context (own cookies and storage: another player).
    pub async fn page(&self, width: u32, height: u32) -> Page {
        let cdp = self.handle();
        let ctx = cdp
            .call(None, "Target.createBrowserContext", json!({}))
            .await;
        let ctx = ctx["browserContextId"]
            .as_str()
            .expect("context")
            .to_string();
        let target = cdp
            .call(
                None,
                "Target.createTarget",
                json!({"url": "about:blank", "browserContextId": ctx}),
            )
            .await;
        let target = target["targetId"].as_str().expect("target").to_string();
        let s = cdp
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
            )
            .await;
        let session = s["sessionId"].as_str().expect("session").to_string();
        let page = Page {
            cdp,
            session,
            context: ctx,
        };
        page.call("Page.enable", json!({})).await;
        page.viewport(width, height, false).await;
        page
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Clone)]
struct Cdp {
    tx: mpsc::UnboundedSender<Message>,
    next: Arc<AtomicU64>,
    waiters: Waiters,
    events: Events,
}

impl Cdp {
    async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.try_call(session, method, params)
            .await
            .unwrap_or_else(|e| panic!("{method} failed: {e}"))
    }

    /// A call whose error is the caller's to judge (an evaluation while the page navigates).
    async fn try_call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, Value> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiters.lock().await.insert(id, tx);
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.tx
            .send(Message::text(msg.to_string()))
            .expect("DevTools connection");
        let reply = tokio::time::timeout(WAIT, rx)
            .await
            .unwrap_or_else(|_| panic!("{method}: no answer"))
            .expect("DevTools answer");
        match reply.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(reply["result"].clone()),
        }
    }
}

/// One tab.
pub struct Page {
    cdp: Cdp,
    session: String,
    /// The page's own browser context (its cookies, storage and permissions).
    context: String,
}

impl Page {
    pub async fn call(&self, method: &str, params: Value) -> Value {
        self.cdp.call(Some(&self.session), method, params).await
    }

    /// Grants `origin` these permissions in the page's context, as a player answering the
    /// browser's prompt would (`notifications`).
    pub async fn grant(&self, origin: &str, permissions: &[&str]) {
        self.cdp
            .call(
                None,
                "Browser.grantPermissions",
                json!({"origin": origin, "permissions": permissions, "browserContextId": self.context}),
            )
            .await;
    }

    pub async fn viewport(&self, width: u32, height: u32, mobile: bool) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
        )
        .await;
    }

    pub async fn goto(&self, url: &str) {
        self.call("Page.navigate", json!({ "url": url })).await;
    }

    /// The parameters of every event `method` this page was sent so far (after the domain was
    /// enabled, e.g. `Log.enable` for `Log.entryAdded`).
    pub async fn events(&self, method: &str) -> Vec<Value> {
        self.cdp
            .events
            .lock()
            .await
            .iter()
            .filter(|e| e["sessionId"] == self.session.as_str() && e["method"] == method)
            .map(|e| e["params"].clone())
            .collect()
    }

    pub async fn reload(&self) {
        self.call("Page.reload", json!({})).await;
    }

    /// Evaluates `js` in the page (awaiting a promise) and returns its JSON value.
    pub async fn eval(&self, js: &str) -> Value {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": js, "returnByValue": true, "awaitPromise": true}),
            )
            .await;
        if let Some(e) = r.get("exceptionDetails") {
            panic!("page script failed: {e}\n{js}");
        }
        r["result"]["value"].clone()
    }

    /// Waits until `js` is truthy in the page; panics with `what` after [`WAIT`].
    pub async fn wait(&self, js: &str, what: &str) {
        let start = Instant::now();
        loop {
            // A page that reloads (the lobby moves by reloading) cannot answer for a moment.
            let v = self
                .cdp
                .try_call(
                    Some(&self.session),
                    "Runtime.evaluate",
                    json!({"expression": format!("!!({js})"), "returnByValue": true}),
                )
                .await
                .unwrap_or_default();
            if v["result"]["value"] == json!(true) {
                return;
            }
            if start.elapsed() > WAIT {
                self.screenshot("timeout").await;
                panic!("timed out waiting for {what}: {js}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Clicks the centre of the first element matching `selector` with the mouse, once it is
    /// shown, after checking that the element (and not something over it) is what is under that point.
    pub async fn click(&self, selector: &str) {
        self.wait(&shown(selector), selector).await;
        let js = format!(
            "(() => {{ const e = document.querySelector({s}); const r = e.getBoundingClientRect();
               const x = r.left + r.width / 2, y = r.top + r.height / 2;
               const hit = document.elementFromPoint(x, y);
               return [x, y, !!hit && (hit === e || e.contains(hit)), hit ? hit.outerHTML.slice(0, 120) : null]; }})()",
            s = json!(selector)
        );
        let v = self.eval(&js).await;
        let (x, y) = (v[0].as_f64().unwrap_or(0.0), v[1].as_f64().unwrap_or(0.0));
        assert_eq!(
            v[2],
            json!(true),
            "{selector} is covered or off screen at {x},{y}: {}",
            v[3]
        );
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await;
        }
    }

    /// Clicks `selector` until `js` holds (or [`WAIT`] passes): a page still laying itself out
    /// (a panel whose later parts load after its links) can move the element between the
    /// measure of its place and the click, which then lands beside it, as a person's would.
    pub async fn click_until(&self, selector: &str, js: &str, what: &str) {
        let start = Instant::now();
        loop {
            self.click(selector).await;
            let clicked = Instant::now();
            while clicked.elapsed() < Duration::from_secs(2) {
                let v = self.eval(&format!("!!({js})")).await;
                if v == json!(true) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // Gone from the page: the click took, and what it started is still on its way.
            if self.eval(&format!("!!({})", shown(selector))).await != json!(true) {
                return self.wait(js, what).await;
            }
            if start.elapsed() > WAIT {
                self.screenshot("timeout").await;
                panic!("timed out clicking {selector} for {what}: {js}");
            }
        }
    }

    /// Presses one key: a printable character, or `Enter`.
    pub async fn key(&self, key: &str) {
        let (code, vk, text) = match key {
            "Enter" => ("Enter".to_string(), 13, "\r".to_string()),
            k => (
                format!("Key{}", k.to_uppercase()),
                i64::from(k.to_uppercase().as_bytes()[0]),
                k.to_string(),
            ),
        };
        for kind in ["keyDown", "keyUp"] {
            let mut p =
                json!({"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": vk});
            if kind == "keyDown" {
                p["text"] = json!(text);
            }
            self.call("Input.dispatchKeyEvent", p).await;
        }
    }

    /// Saves a PNG of the page as `target/browser-tests/NAME.png`.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let r = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap_or_default())
            .expect("png");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/browser-tests");
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, bytes).expect("write screenshot");
        path
    }
}

/// JS that holds while `selector` names an element laid out on the page.
fn shown(selector: &str) -> String {
    format!(
        "(e => !!e && e.getClientRects().length > 0)(document.querySelector({s}))",
        s = json!(selector)
    )
}
