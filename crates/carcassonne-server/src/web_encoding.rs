//! The embedded files of the browser client as they go out: each with a strong `ETag` (a hash of
//! its bytes) and its bodies compressed once (gzip, brotli) at first use, never per request. An
//! answer picks the body by `Accept-Encoding` and is a `304 Not Modified` when `If-None-Match`
//! names its tag. Each coding has its own tag (`"<hash>"`, `"<hash>-gzip"`, `"<hash>-br"`): a
//! strong validator names one exact body.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::io::Write;

/// One body of a file: its content coding (`None`: the bytes as they are), bytes and tag.
#[derive(Debug)]
struct Body {
    coding: Option<&'static str>,
    bytes: Vec<u8>,
    etag: HeaderValue,
}

/// A file's bodies: the plain one first, then each compressed one that is smaller, the
/// preferred coding (brotli) first.
#[derive(Debug)]
pub struct Encoded {
    content_type: &'static str,
    bodies: Vec<Body>,
}

/// Brotli's window (log2 bytes): larger than any embedded file.
const BROTLI_WINDOW: u32 = 22;

impl Encoded {
    /// Hashes and compresses `bytes` (at the codings' best levels: this runs once per file).
    pub fn new(bytes: &'static [u8], content_type: &'static str) -> Encoded {
        let hash = Sha256::digest(bytes);
        let hex: String = hash[..16].iter().map(|b| format!("{b:02x}")).collect();
        let tag = |suffix: &str| {
            HeaderValue::from_str(&format!("\"{hex}{suffix}\""))
                .unwrap_or_else(|_| HeaderValue::from_static("\"\""))
        };
        let mut bodies = vec![Body {
            coding: None,
            bytes: bytes.to_vec(),
            etag: tag(""),
        }];
        let mut br = Vec::new();
        let params = brotli::enc::BrotliEncoderParams {
            quality: 11,
            lgwin: BROTLI_WINDOW as i32,
            ..Default::default()
        };
        let br = brotli::BrotliCompress(&mut &bytes[..], &mut br, &params).map(|_| br);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let gz = gz.write_all(bytes).and_then(|()| gz.finish());
        for (coding, compressed) in [("br", br), ("gzip", gz)] {
            // A failed or useless compression leaves that coding out; the plain body serves.
            if let Ok(compressed) = compressed
                && compressed.len() < bytes.len()
            {
                bodies.push(Body {
                    coding: Some(coding),
                    bytes: compressed,
                    etag: tag(&format!("-{coding}")),
                });
            }
        }
        Encoded {
            content_type,
            bodies,
        }
    }

    /// The answer to a `GET` with these request headers: the body the client accepts (the
    /// smallest coding it names), or `304` when its `If-None-Match` names that body's tag.
    pub fn respond(&'static self, request: &HeaderMap) -> Response {
        let accepted = header_text(request, header::ACCEPT_ENCODING);
        let body = self
            .bodies
            .iter()
            .skip(1)
            .find(|b| b.coding.is_some_and(|c| accepts(&accepted, c)))
            .unwrap_or(&self.bodies[0]);
        let mut headers = HeaderMap::new();
        headers.insert(header::ETAG, body.etag.clone());
        // The binary is the version: a restart may bring new files, so revalidate (a 304).
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        let if_none_match = header_text(request, header::IF_NONE_MATCH);
        if !if_none_match.is_empty() && names_tag(&if_none_match, &body.etag) {
            return (StatusCode::NOT_MODIFIED, headers).into_response();
        }
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(self.content_type),
        );
        if let Some(coding) = body.coding {
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(coding));
        }
        (headers, body.bytes.as_slice()).into_response()
    }
}

/// Every value of a request header, joined with commas (a list may come in several lines).
fn header_text(headers: &HeaderMap, name: header::HeaderName) -> String {
    let values: Vec<&str> = headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    values.join(",")
}

/// Whether an `Accept-Encoding` list accepts `coding`: named (or `*`) with a quality above 0.
/// A name beats `*`.
fn accepts(list: &str, coding: &str) -> bool {
    let mut star = None;
    for item in list.split(',') {
        let mut parts = item.split(';');
        let name = parts.next().unwrap_or_default().trim();
        let quality = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        if name.eq_ignore_ascii_case(coding) {
            return quality > 0.0;
        }
        if name == "*" {
            star = Some(quality > 0.0);
        }
    }
    star.unwrap_or(false)
}

/// Whether an `If-None-Match` list names `etag` (weak comparison, as the header wants: `W/`
/// is ignored) or is `*`.
fn names_tag(list: &str, etag: &HeaderValue) -> bool {
    let etag = etag.to_str().unwrap_or_default();
    list.split(',')
        .map(str::trim)
        .any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == etag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding_reads_names_qualities_and_star() {
        assert!(accepts("gzip, deflate, br", "br"));
        assert!(accepts("gzip;q=0.5", "gzip"));
        assert!(!accepts("gzip;q=0", "gzip"));
        assert!(!accepts("gzip; q=0.0, *", "gzip"));
        assert!(accepts("*", "br"));
        assert!(!accepts("*;q=0", "br"));
        assert!(!accepts("identity", "gzip"));
        assert!(!accepts("", "gzip"));
        assert!(accepts("GZIP", "gzip"));
    }

    #[test]
    fn if_none_match_compares_tags_weakly() {
        let tag = HeaderValue::from_static("\"abc-gzip\"");
        assert!(names_tag("\"abc-gzip\"", &tag));
        assert!(names_tag("W/\"abc-gzip\"", &tag));
        assert!(names_tag("\"x\", \"abc-gzip\"", &tag));
        assert!(names_tag("*", &tag));
        assert!(!names_tag("\"abc\"", &tag));
        assert!(!names_tag("\"abc-br\"", &tag));
    }

    /// Compressed bodies are kept only when smaller; tags differ by coding and by content.
    #[test]
    fn bodies_and_tags() {
        let text: &'static [u8] = &[b'a'; 4096];
        let e = Encoded::new(text, "text/plain");
        let codings: Vec<_> = e.bodies.iter().map(|b| b.coding).collect();
        assert_eq!(codings, [None, Some("br"), Some("gzip")]);
        let tags: std::collections::HashSet<_> = e.bodies.iter().map(|b| &b.etag).collect();
        assert_eq!(tags.len(), 3);
        let tiny = Encoded::new(b"x", "text/plain");
        assert_eq!(
            tiny.bodies.len(),
            1,
            "nothing gained by compressing one byte"
        );
        assert_ne!(
            tiny.bodies[0].etag,
            Encoded::new(b"y", "text/plain").bodies[0].etag
        );
    }
}
