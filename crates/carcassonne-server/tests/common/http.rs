//! Raw HTTP/1.1 requests to a test server, with or without the admin token.

use super::{ADMIN_TOKEN, READ_TIMEOUT, TestServer};

/// A request with the test servers' admin token: the status and the body.
pub async fn admin_http(
    server: &TestServer,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, String) {
    let auth = format!("Bearer {ADMIN_TOKEN}");
    http(server, method, path, &[("Authorization", &auth)], body).await
}

/// An admin `GET` that must answer 200, read as JSON.
pub async fn admin_json(server: &TestServer, path: &str) -> serde_json::Value {
    let (status, body) = admin_http(server, "GET", path, "").await;
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
}

/// A minimal HTTP/1.1 request on a fresh socket (for headers the client crate does not send); a
/// body goes as `application/json`.
pub async fn http(
    server: &TestServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut all = headers.to_vec();
    if !body.is_empty() {
        all.insert(0, ("Content-Type", "application/json"));
    }
    http_exact(server, method, path, &all, body).await
}

/// [`http`] with exactly these headers: no content type is added.
pub async fn http_exact(
    server: &TestServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let (status, _, body) = http_with_head(server, method, path, headers, body).await;
    (status, body)
}

/// [`http_exact`], with the response's head too (the status line and the headers, lines joined
/// by `\n`, names as sent).
pub async fn http_with_head(
    server: &TestServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let (status, head, body) = http_bytes(server, method, path, headers, body).await;
    (status, head, String::from_utf8_lossy(&body).into_owned())
}

/// [`http_with_head`] with the body as bytes (a compressed body is not text).
pub async fn http_bytes(
    server: &TestServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
        server.addr,
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(READ_TIMEOUT, s.read_to_end(&mut raw))
        .await
        .expect("response in time")
        .expect("read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(raw.len());
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let body = raw.get(split + 4..).unwrap_or_default();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_vec()
    };
    (status, head.replace("\r\n", "\n"), body)
}

fn dechunk(mut s: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = s.windows(2).position(|w| w == b"\r\n") {
        let size = String::from_utf8_lossy(&s[..eol]);
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        let rest = &s[eol + 2..];
        if n == 0 || rest.len() < n {
            break;
        }
        out.extend_from_slice(&rest[..n]);
        s = rest[n..].strip_prefix(b"\r\n").unwrap_or(&rest[n..]);
    }
    out
}
