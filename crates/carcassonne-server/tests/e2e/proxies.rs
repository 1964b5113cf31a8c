//! Behind a reverse proxy, over real sockets: the test itself (127.0.0.1) plays the proxy. When
//! its address is in `--trusted-proxies`, the forwarded client address (`X-Forwarded-For`, or
//! RFC 7239 `Forwarded`) keys the per-address limits, on the REST side and on the WebSocket:
//! two forwarded clients have a budget each, one exhausts its own. When it is not trusted, a
//! forwarding header changes nothing (spoofing one does not escape a limit); a malformed header
//! from a trusted proxy counts against the proxy's own address and never fails the request. The
//! session cookie carries `Secure` as `--secure-cookie` (or an https `--public-origin`) says,
//! on every cookie the server sets.

use crate::common::*;
use client::Connection;
use protocol::{ErrorCode, ServerMessage};
use server::Config;
use server::client_addr::ProxyRange;
use server::config::{Rate, SecureCookie};
use server::origin::Origin;
use std::time::Duration;
use uuid::Uuid;

/// A budget of two per address, with no refill during a test.
const BUDGET: u32 = 2;

fn two_a_minute() -> Rate {
    Rate {
        burst: BUDGET,
        period: Duration::from_secs(600),
    }
}

/// A server trusting `trusted` (the test's own 127.0.0.1, or a network it is not in), with
/// the match-creation and lobby-action limits at [`BUDGET`]; and its store.
fn start(trusted: &str, tune: impl FnOnce(&mut Config)) -> (TestServer, TestDb) {
    let db = TestDb::sqlite();
    let mut config = db.config();
    config.conn.trusted_proxies = vec![ProxyRange::parse(trusted).expect("range")];
    config.limits.match_rate_addr = two_a_minute();
    config.limits.lobby_rate_addr = two_a_minute();
    tune(&mut config);
    (TestServer::start(config), db)
}

const MATCH: &str = r#"{"players":["red","blue"]}"#;

/// `POST /api/matches` with these headers: the status.
async fn create_match(server: &TestServer, headers: &[(&str, &str)]) -> u16 {
    let (status, head, body) = http_with_head(
        server,
        "POST",
        "/api/matches",
        &[&[("Content-Type", "application/json")][..], headers].concat(),
        MATCH,
    )
    .await;
    match status {
        201 => {}
        429 => assert!(
            head.to_ascii_lowercase().contains("\nretry-after: ") && body.contains("rate_limited"),
            "{head}\n{body}"
        ),
        other => panic!("POST /api/matches answered {other}: {body}"),
    }
    status
}

/// The budget of one address, spent from a fresh bucket: `BUDGET` pass, the next is refused.
async fn spend(server: &TestServer, headers: &[(&str, &str)]) {
    for i in 0..BUDGET {
        assert_eq!(
            create_match(server, headers).await,
            201,
            "{headers:?}, #{i}"
        );
    }
    assert_eq!(create_match(server, headers).await, 429, "{headers:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_proxy_forwards_the_client_address_to_the_limits() {
    let (server, _db) = start("127.0.0.1", |_| {});
    // Two forwarded clients, a budget each; the fake first hop a client wrote is skipped.
    spend(&server, &[("X-Forwarded-For", "6.6.6.6, 198.51.100.1")]).await;
    spend(&server, &[("X-Forwarded-For", "198.51.100.2")]).await;
    // The same client through the RFC 7239 header (with a port, and IPv6 quoted): spent already.
    let forwarded = [("Forwarded", "for=198.51.100.1:4711;proto=https")];
    assert_eq!(create_match(&server, &forwarded).await, 429);
    spend(&server, &[("Forwarded", r#"for="[2001:db8::7]:80""#)]).await;
    // `Forwarded` is read before `X-Forwarded-For`.
    let both = [
        ("Forwarded", "for=198.51.100.3"),
        ("X-Forwarded-For", "198.51.100.1"),
    ];
    assert_eq!(create_match(&server, &both).await, 201);
    // Without a header, and with malformed ones, the proxy's own address: one budget for all,
    // and never an error other than the limit.
    let malformed: [&[(&str, &str)]; 4] = [
        &[("X-Forwarded-For", "not an address")],
        &[("Forwarded", "for=unknown")],
        &[("X-Forwarded-For", "198.51.100.9,,")],
        &[],
    ];
    let mut statuses = Vec::new();
    for headers in malformed {
        statuses.push(create_match(&server, headers).await);
    }
    assert_eq!(statuses, [201, 201, 429, 429], "the proxy's own budget");
    // Every other client still has its own.
    assert_eq!(
        create_match(&server, &[("X-Forwarded-For", "198.51.100.4")]).await,
        201
    );
    let (status, body) = http(&server, "GET", "/healthz", &[], "").await;
    assert_eq!((status, body.as_str()), (200, "ok"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarding_headers_from_an_untrusted_peer_are_ignored() {
    // 127.0.0.1 is not in 10.0.0.0/8: every header below is a client's own claim.
    let (server, _db) = start("10.0.0.0/8", |_| {});
    let spoofs: [&[(&str, &str)]; 3] = [
        &[("X-Forwarded-For", "198.51.100.1")],
        &[("X-Forwarded-For", "198.51.100.2")],
        &[("Forwarded", "for=198.51.100.3")],
    ];
    let mut statuses = Vec::new();
    for headers in spoofs {
        statuses.push(create_match(&server, headers).await);
    }
    assert_eq!(statuses, [201, 201, 429], "spoofing escaped the limit");
    // With no trusted proxy at all, the same.
    let (open, _db) = server_without_proxies();
    spend(&open, &[("X-Forwarded-For", "198.51.100.1")]).await;
    assert_eq!(
        create_match(&open, &[("X-Forwarded-For", "198.51.100.2")]).await,
        429
    );
}

fn server_without_proxies() -> (TestServer, TestDb) {
    let db = TestDb::sqlite();
    let mut config = db.config();
    config.limits.match_rate_addr = two_a_minute();
    (TestServer::start(config), db)
}

/// A lobby follow (`subscribe_lobby`, a lobby action) of an unknown lobby: `Ok` for the lobby
/// actor's `unknown_lobby` (the limits let it through), `Err` for `rate_limited`.
async fn follow(conn: &mut Connection) -> Result<(), ()> {
    conn.subscribe_lobby(Uuid::new_v4()).await.expect("send");
    let answer = conn
        .wait_for(|m| matches!(m, ServerMessage::Error(b) if b.id.is_none()))
        .await
        .expect("a refusal");
    match answer {
        ServerMessage::Error(b) if b.code == ErrorCode::UnknownLobby => Ok(()),
        ServerMessage::Error(b) if b.code == ErrorCode::RateLimited => Err(()),
        other => panic!("{other:?}"),
    }
}

async fn socket(server: &TestServer, headers: &[(&str, &str)]) -> Connection {
    Connection::connect_with_headers(&server.ws(), headers)
        .await
        .expect("connect")
}

/// The per-address lobby limit on the WebSocket: two follows per address, and the connection's
/// own limit wide.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_websocket_keys_its_limits_on_the_forwarded_address() {
    let (server, _db) = start("127.0.0.1", |_| {});
    let mut a = socket(&server, &[("X-Forwarded-For", "198.51.100.1")]).await;
    let mut b = socket(&server, &[("Forwarded", "for=198.51.100.2")]).await;
    let mut a2 = socket(&server, &[("X-Forwarded-For", "198.51.100.1")]).await;
    assert_eq!(follow(&mut a).await, Ok(()));
    assert_eq!(follow(&mut a2).await, Ok(()));
    // Client A's address is spent on both its connections; B's is not.
    assert_eq!(follow(&mut a).await, Err(()));
    assert_eq!(follow(&mut a2).await, Err(()));
    assert_eq!(follow(&mut b).await, Ok(()));
    assert_eq!(follow(&mut b).await, Ok(()));
    assert_eq!(follow(&mut b).await, Err(()));
    // A malformed header: the proxy's own address, and the socket opens.
    let mut bad = socket(&server, &[("X-Forwarded-For", "garbage")]).await;
    assert_eq!(follow(&mut bad).await, Ok(()));

    // Untrusted: two spoofed addresses share the peer's budget.
    let (untrusted, _db2) = start("10.0.0.0/8", |_| {});
    let mut x = socket(&untrusted, &[("X-Forwarded-For", "198.51.100.1")]).await;
    let mut y = socket(&untrusted, &[("X-Forwarded-For", "198.51.100.2")]).await;
    assert_eq!(follow(&mut x).await, Ok(()));
    assert_eq!(follow(&mut y).await, Ok(()));
    assert_eq!(follow(&mut y).await, Err(()), "spoofing escaped the limit");
}

/// Every `Set-Cookie` of log-in, guest, registration and log-out.
async fn cookies(server: &TestServer) -> Vec<String> {
    let mut out = Vec::new();
    let mut session = None;
    for (path, body) in [
        ("/api/accounts/guest", r#"{"name":"Guest"}"#),
        (
            "/api/accounts",
            r#"{"name":"Reggie","password":"correct horse"}"#,
        ),
        (
            "/api/sessions",
            r#"{"name":"Reggie","password":"correct horse"}"#,
        ),
    ] {
        let (status, head, body) = http_with_head(
            server,
            "POST",
            path,
            &[("Content-Type", "application/json")],
            body,
        )
        .await;
        assert_eq!(status, 201, "{path}: {body}");
        out.push(set_cookie(&head));
        let v: serde_json::Value = serde_json::from_str(&body).expect("json");
        session = v["token"].as_str().map(str::to_string);
    }
    let cookie = format!("session={}", session.expect("a session"));
    let (status, head, _) = http_with_head(
        server,
        "DELETE",
        "/api/sessions/current",
        &[("Cookie", &cookie)],
        "",
    )
    .await;
    assert_eq!(status, 204);
    let cleared = set_cookie(&head);
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    out.push(cleared);
    out
}

fn set_cookie(head: &str) -> String {
    head.lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no Set-Cookie in {head}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_cookie_is_secure_as_configured() {
    // (case, an https public origin, --secure-cookie, whether the cookie is Secure)
    let cases = [
        ("the defaults", false, SecureCookie::Auto, false),
        ("an https public origin", true, SecureCookie::Auto, true),
        ("--secure-cookie off", true, SecureCookie::Off, false),
        ("--secure-cookie on", false, SecureCookie::On, true),
    ];
    for (case, https, flag, secure) in cases {
        let (server, _db) = start("10.0.0.0/8", |c| {
            if https {
                c.conn.public_origin = vec![Origin::parse("https://play.example").expect("origin")];
            }
            c.conn.secure_cookie = flag;
        });
        for c in cookies(&server).await {
            assert!(c.starts_with("session="), "{case}: {c}");
            for attr in ["HttpOnly", "SameSite=Strict", "Path=/"] {
                assert!(c.contains(attr), "{case}: {c} lacks {attr}");
            }
            assert_eq!(c.contains("; Secure"), secure, "{case}: {c}");
        }
    }
}
