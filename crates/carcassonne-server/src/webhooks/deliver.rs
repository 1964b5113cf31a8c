//! One post to a webhook: the URL's check, the payload's signature, and a minimal HTTP/1.1
//! `POST` over TCP or TLS (rustls with the webpki roots; no redirects followed, only the status
//! line read).

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest webhook URL accepted.
pub const MAX_URL: usize = 2048;
/// The header with the payload's signature.
pub const SIGNATURE_HEADER: &str = "X-Carcassonne-Signature";
/// The header that names one notice across its retries.
pub const DELIVERY_HEADER: &str = "X-Carcassonne-Delivery";

/// Why a URL is not a webhook.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("a webhook URL has at most {MAX_URL} characters")]
    TooLong,
    #[error("a webhook URL starts with https:// (http:// only where the server allows it)")]
    Scheme,
    #[error("a webhook URL names a host (and no user, password or fragment)")]
    Host,
    #[error("the port is not a number from 1 to 65535")]
    Port,
}

/// Where to post, from a checked URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// The path and query, `/` at least.
    pub path: String,
}

/// Checks a webhook URL: `https://host[:port][/path]`, or `http://` when `allow_http`.
pub fn parse_url(url: &str, allow_http: bool) -> Result<Target, UrlError> {
    if url.len() > MAX_URL {
        return Err(UrlError::TooLong);
    }
    let (tls, rest) = if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("http://")
        && allow_http
    {
        (false, r)
    } else {
        return Err(UrlError::Scheme);
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let bad = |c: char| c.is_whitespace() || c.is_control() || c == '#';
    if authority.is_empty() || authority.contains('@') || url.chars().any(bad) {
        return Err(UrlError::Host);
    }
    let default = if tls { 443 } else { 80 };
    let port_of = |p: &str| match p.parse::<u16>() {
        Ok(0) | Err(_) => Err(UrlError::Port),
        Ok(p) => Ok(p),
    };
    // `[v6]:port`, `[v6]`, `host:port` or `host`.
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let (h, after) = rest.split_once(']').ok_or(UrlError::Host)?;
            match after.strip_prefix(':') {
                Some(p) => (h, port_of(p)?),
                None if after.is_empty() => (h, default),
                None => return Err(UrlError::Host),
            }
        }
        None => match authority.split_once(':') {
            Some((h, p)) => (h, port_of(p)?),
            None => (authority, default),
        },
    };
    if host.is_empty() {
        return Err(UrlError::Host);
    }
    Ok(Target {
        tls,
        host: host.to_string(),
        port,
        path: path.to_string(),
    })
}

/// `sha256=<hex>`: the HMAC-SHA256 of `body` under `secret`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256=");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Why a post failed.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("the post took longer than its timeout")]
    Timeout,
    #[error("TLS: {0}")]
    Tls(String),
    #[error("the answer is not HTTP")]
    NotHttp,
}

// ring, as sqlx's TLS and the client kit's: no C toolchain for aws-lc in the build. rustls marks
// ring's provider deprecated for its lack of post-quantum key exchange; the classic groups stay
// secure.
#[allow(deprecated)]
fn tls_connector() -> Result<tokio_rustls::TlsConnector, PostError> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map(|b| Arc::new(b.with_root_certificates(roots).with_no_client_auth()))
        .map_err(|e| e.to_string())
    });
    match config {
        Ok(c) => Ok(tokio_rustls::TlsConnector::from(Arc::clone(c))),
        Err(e) => Err(PostError::Tls(e.clone())),
    }
}

/// Posts `body` to `target` with the signature and delivery headers; the answer's status.
pub async fn post(
    target: &Target,
    body: &[u8],
    signature: &str,
    delivery: &str,
    timeout: Duration,
) -> Result<u16, PostError> {
    tokio::time::timeout(timeout, async {
        let tcp = TcpStream::connect((target.host.as_str(), target.port)).await?;
        if target.tls {
            let name = rustls::pki_types::ServerName::try_from(target.host.clone())
                .map_err(|e| PostError::Tls(e.to_string()))?;
            let stream = tls_connector()?
                .connect(name, tcp)
                .await
                .map_err(|e| PostError::Tls(e.to_string()))?;
            exchange(stream, target, body, signature, delivery).await
        } else {
            exchange(tcp, target, body, signature, delivery).await
        }
    })
    .await
    .map_err(|_| PostError::Timeout)?
}

/// The `Host` header: the host (an IPv6 address in brackets), with the port unless it is the
/// scheme's.
fn host_header(t: &Target) -> String {
    let host = match t.host.contains(':') {
        true => format!("[{}]", t.host),
        false => t.host.clone(),
    };
    match (t.tls, t.port) {
        (true, 443) | (false, 80) => host,
        (_, port) => format!("{host}:{port}"),
    }
}

async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: S,
    target: &Target,
    body: &[u8],
    signature: &str,
    delivery: &str,
) -> Result<u16, PostError> {
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: carcassonne-server\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n{SIGNATURE_HEADER}: {signature}\r\n\
         {DELIVERY_HEADER}: {delivery}\r\nConnection: close\r\n\r\n",
        target.path,
        host_header(target),
        body.len()
    );
    s.write_all(head.as_bytes()).await?;
    s.write_all(body).await?;
    s.flush().await?;
    // Only the status line matters: `HTTP/1.1 204 No Content`.
    let mut got = Vec::with_capacity(64);
    let mut buf = [0u8; 256];
    while !got.windows(2).any(|w| w == b"\r\n") && got.len() < 4096 {
        let n = s.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&got);
    let mut parts = line.split_whitespace();
    match (
        parts.next(),
        parts.next().and_then(|c| c.parse::<u16>().ok()),
    ) {
        (Some(v), Some(code)) if v.starts_with("HTTP/") => Ok(code),
        _ => Err(PostError::NotHttp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_https_unless_allowed() {
        let t = parse_url("https://relay.example/hook?x=1", false).expect("https");
        assert_eq!(
            (t.tls, t.host.as_str(), t.port, t.path.as_str()),
            (true, "relay.example", 443, "/hook?x=1")
        );
        assert_eq!(
            parse_url("http://127.0.0.1:9000/h", false),
            Err(UrlError::Scheme)
        );
        let t = parse_url("http://127.0.0.1:9000", true).expect("http allowed");
        assert_eq!((t.tls, t.port, t.path.as_str()), (false, 9000, "/"));
        assert_eq!(
            parse_url("https://user:pw@host/", false),
            Err(UrlError::Host)
        );
        assert_eq!(parse_url("https://host:0/", false), Err(UrlError::Port));
        assert_eq!(parse_url("https://host:x/", false), Err(UrlError::Port));
        assert_eq!(parse_url("https:///path", false), Err(UrlError::Host));
        assert_eq!(parse_url("https://h/a b", false), Err(UrlError::Host));
        assert_eq!(parse_url("ftp://h/", true), Err(UrlError::Scheme));
        let v6 = parse_url("https://[::1]:8443/h", false).expect("v6 with a port");
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 8443));
        assert_eq!(parse_url("https://[::1]/h", false).map(|t| t.port), Ok(443));
        assert_eq!(parse_url("https://[::1/h", false), Err(UrlError::Host));
        assert_eq!(host_header(&v6), "[::1]:8443");
        assert_eq!(host_header(&t), "127.0.0.1:9000");
        assert_eq!(
            host_header(&parse_url("https://relay.example/", false).expect("https")),
            "relay.example"
        );
        assert_eq!(
            parse_url(&format!("https://h/{}", "a".repeat(MAX_URL)), false),
            Err(UrlError::TooLong)
        );
    }

    #[test]
    fn the_signature_is_hmac_sha256_of_the_body() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
