//! The browser-facing defences over real sockets: the WebSocket upgrade refuses the session
//! cookie from a page of another origin (another site, a sibling subdomain) and takes it from the
//! server's own pages or its configured public origins; tokens that a browser never sends on its
//! own (a bearer, no cookie at all) open the socket from anywhere. The pages and their files carry
//! the Content-Security-Policy and the other security headers; every API answer carries nosniff.

use crate::common::*;
use futures_util::StreamExt;
use protocol::{ErrorBody, ErrorCode};
use serde_json::Value;
use std::collections::HashMap;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

on_both_stores!(
    a_cookie_from_another_origin_cannot_open_the_socket,
    configured_public_origins_replace_same_origin,
);

/// A guest account's session token.
async fn guest(server: &TestServer, name: &str) -> String {
    let body = format!(r#"{{"name":"{name}"}}"#);
    let (status, text) = http(server, "POST", "/api/accounts/guest", &[], &body).await;
    assert_eq!(status, 201, "guest: {text}");
    let v: Value = serde_json::from_str(&text).expect("json");
    v["token"].as_str().expect("token").to_string()
}

/// What an upgrade came to: `Ok(true)` when the socket opened and the server named the account
/// (`identified` after `welcome`), `Ok(false)` when it opened anonymous, `Err((status, body))`
/// when it was refused.
async fn upgrade(server: &TestServer, headers: &[(&str, &str)]) -> Result<bool, (u16, String)> {
    let mut req = server.ws().into_client_request().expect("request");
    for (k, v) in headers {
        let name: tokio_tungstenite::tungstenite::http::HeaderName = k.parse().expect("name");
        req.headers_mut()
            .insert(name, HeaderValue::from_str(v).expect("value"));
    }
    match tokio_tungstenite::connect_async(req).await {
        Ok((mut ws, _)) => {
            let mut texts = Vec::new();
            while texts.len() < 2 {
                let next = tokio::time::timeout(std::time::Duration::from_millis(500), ws.next());
                match next.await {
                    Ok(Some(Ok(Message::Text(t)))) => texts.push(t.to_string()),
                    Ok(Some(Ok(_))) => {}
                    _ => break, // anonymous: nothing after `welcome`
                }
            }
            assert!(
                texts
                    .first()
                    .is_some_and(|t| t.contains(r#""type":"welcome""#)),
                "{texts:?}"
            );
            Ok(texts
                .get(1)
                .is_some_and(|t| t.contains(r#""type":"identified""#)))
        }
        Err(WsError::Http(res)) => {
            let body = res
                .body()
                .as_ref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            Err((res.status().as_u16(), body))
        }
        Err(e) => panic!("upgrade failed: {e}"),
    }
}

fn assert_forbidden_origin(got: Result<bool, (u16, String)>, case: &str) {
    let Err((status, body)) = got else {
        panic!("{case}: the upgrade was accepted");
    };
    assert_eq!(status, 403, "{case}: {body}");
    let body: ErrorBody = serde_json::from_str(&body).expect("an error body");
    assert_eq!(body.code, ErrorCode::ForbiddenOrigin, "{case}");
}

/// Same-origin by default: the cookie opens the socket from the server's own page, and is
/// refused from another site, another port, a sibling subdomain and `null`; without the cookie
/// (anonymous, or a bearer token) any origin may connect.
async fn a_cookie_from_another_origin_cannot_open_the_socket(db: &TestDb) {
    let server = TestServer::start(db.config());
    let token = guest(&server, "Ann").await;
    let cookie = format!("theme=dark; session={token}");
    let own = format!("http://{}", server.addr);
    assert_eq!(
        upgrade(&server, &[("Cookie", &cookie), ("Origin", &own)]).await,
        Ok(true),
        "the server's own page"
    );
    let other_port = format!("http://127.0.0.1:{}", server.addr.port() + 1);
    for origin in [
        "https://evil.example",
        other_port.as_str(),
        "null",
        "http://localhost",
    ] {
        let got = upgrade(&server, &[("Cookie", &cookie), ("Origin", origin)]).await;
        assert_forbidden_origin(got, origin);
    }
    // Behind a name: a sibling subdomain shares the cookie's site but is another origin.
    let host = format!("play.example:{}", server.addr.port());
    let sibling = format!("http://chat.play.example:{}", server.addr.port());
    let named = format!("http://play.example:{}", server.addr.port());
    let got = upgrade(
        &server,
        &[("Host", &host), ("Cookie", &cookie), ("Origin", &sibling)],
    )
    .await;
    assert_forbidden_origin(got, "a sibling subdomain");
    assert_eq!(
        upgrade(
            &server,
            &[("Host", &host), ("Cookie", &cookie), ("Origin", &named)]
        )
        .await,
        Ok(true),
        "the page's own name"
    );
    // No ambient credential: anonymous from anywhere, a bearer from anywhere, and a cookie
    // without `Origin` (no browser sends that).
    assert_eq!(
        upgrade(&server, &[("Origin", "https://evil.example")]).await,
        Ok(false)
    );
    let bearer = format!("Bearer {token}");
    assert_eq!(
        upgrade(
            &server,
            &[
                ("Authorization", &bearer),
                ("Origin", "https://evil.example")
            ]
        )
        .await,
        Ok(true)
    );
    assert_eq!(upgrade(&server, &[("Cookie", &cookie)]).await, Ok(true));
    server.stop().await;
}

/// With `--public-origin`, the list decides, whatever the `Host`: a front end on its own name
/// works, the server's own address and a sibling of the front end do not.
async fn configured_public_origins_replace_same_origin(db: &TestDb) {
    let mut config = db.config();
    config.conn.public_origin = ["https://play.example", "http://localhost:3000"]
        .iter()
        .map(|o| server::origin::Origin::parse(o).expect("origin"))
        .collect();
    let server = TestServer::start(config);
    let token = guest(&server, "Bo").await;
    let cookie = format!("session={token}");
    for origin in ["https://play.example", "http://localhost:3000"] {
        assert_eq!(
            upgrade(&server, &[("Cookie", &cookie), ("Origin", origin)]).await,
            Ok(true),
            "{origin}"
        );
    }
    let own = format!("http://{}", server.addr);
    for origin in [
        own.as_str(),
        "https://www.play.example",
        "http://play.example",
    ] {
        let got = upgrade(&server, &[("Cookie", &cookie), ("Origin", origin)]).await;
        assert_forbidden_origin(got, origin);
    }
    server.stop().await;
}

/// `GET path` over a plain socket: the status and the response's headers (lower-cased names).
async fn head_of(server: &TestServer, path: &str) -> (u16, HashMap<String, String>) {
    let mut s = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        server.addr
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(READ_TIMEOUT, s.read_to_end(&mut raw))
        .await
        .expect("response in time")
        .expect("read");
    let text = String::from_utf8_lossy(&raw);
    let head = text.split("\r\n\r\n").next().unwrap_or_default();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers)
}

/// The pages and their files carry the policy (no inline script or style, never framed, no
/// referrer, no sniffing); API answers, refusals included, carry nosniff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_carry_the_security_headers() {
    let db = TestDb::sqlite();
    let server = TestServer::start(db.config());
    let watch = format!("/watch/{}", uuid::Uuid::new_v4());
    for (path, status) in [
        ("/", 200),
        (watch.as_str(), 200),
        ("/admin", 200),
        ("/web/js/app.js", 200),
        ("/web/style.css", 200),
        ("/web/no-such-file.js", 404),
    ] {
        let (got, h) = head_of(&server, path).await;
        assert_eq!(got, status, "{path}");
        let csp = h.get("content-security-policy").map(String::as_str);
        assert_eq!(csp, Some(server::web::CONTENT_SECURITY_POLICY), "{path}");
        for directive in [
            "script-src 'self'",
            "style-src 'self'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
        ] {
            assert!(
                csp.is_some_and(|c| c.contains(directive)),
                "{path}: {csp:?}"
            );
        }
        assert!(
            !csp.is_some_and(|c| c.contains("unsafe")),
            "{path}: {csp:?}"
        );
        assert_eq!(h.get("x-frame-options").map(String::as_str), Some("DENY"));
        assert_eq!(
            h.get("referrer-policy").map(String::as_str),
            Some("no-referrer")
        );
        assert_eq!(
            h.get("x-content-type-options").map(String::as_str),
            Some("nosniff"),
            "{path}"
        );
    }
    for (path, status) in [
        ("/api/tiles", 200),
        ("/api/openapi.json", 200),
        ("/healthz", 200),
        ("/api/no-such-route", 404),
        ("/api/me", 401),
    ] {
        let (got, h) = head_of(&server, path).await;
        assert_eq!(got, status, "{path}");
        assert_eq!(
            h.get("x-content-type-options").map(String::as_str),
            Some("nosniff"),
            "{path}"
        );
    }
    server.stop().await;
}

/// The pages hold no inline script, inline event handler or `style` attribute, which the policy
/// would refuse (the Chromium tests run the pages under it).
#[test]
fn pages_need_nothing_the_policy_refuses() {
    for asset in server::web::ASSETS {
        let text = String::from_utf8_lossy(asset.bytes);
        if asset.path.ends_with(".html") {
            for tag in text.split("<script").skip(1) {
                let open = tag.split('>').next().unwrap_or_default();
                assert!(open.contains("src="), "{}: an inline script", asset.path);
            }
        }
        if asset.path.ends_with(".html") || asset.path.ends_with(".js") {
            assert!(
                !text.contains("style=\""),
                "{}: a style attribute",
                asset.path
            );
            assert!(
                !text.contains("style: `"),
                "{}: a style attribute",
                asset.path
            );
            assert!(
                !text.contains(" onclick="),
                "{}: an inline handler",
                asset.path
            );
            assert!(!text.contains("eval("), "{}: eval", asset.path);
        }
    }
}
