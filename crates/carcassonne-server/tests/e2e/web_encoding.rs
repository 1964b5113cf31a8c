//! The embedded files over a real socket: bodies by `Accept-Encoding` (gzip and brotli decode to
//! the plain bytes), `ETag` revalidation (`If-None-Match` → 304 with no body), and the pages'
//! security headers on every answer, a 304 included.

use crate::common::*;
use std::collections::HashMap;
use std::io::Read;

/// The header lines of a head, names in lower case.
fn headers(head: &str) -> HashMap<String, String> {
    head.lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect()
}

async fn get(
    server: &TestServer,
    path: &str,
    request: &[(&str, &str)],
) -> (u16, HashMap<String, String>, Vec<u8>) {
    let (status, head, body) = http_bytes(server, "GET", path, request, "").await;
    (status, headers(&head), body)
}

fn assert_page_headers(h: &HashMap<String, String>, at: &str) {
    assert_eq!(
        h.get("content-security-policy").map(String::as_str),
        Some(server::web::CONTENT_SECURITY_POLICY),
        "{at}: {h:?}"
    );
    assert_eq!(
        h.get("x-frame-options").map(String::as_str),
        Some("DENY"),
        "{at}"
    );
    assert_eq!(
        h.get("referrer-policy").map(String::as_str),
        Some("no-referrer"),
        "{at}"
    );
    assert_eq!(
        h.get("x-content-type-options").map(String::as_str),
        Some("nosniff"),
        "{at}"
    );
    assert_eq!(
        h.get("cache-control").map(String::as_str),
        Some("no-cache"),
        "{at}"
    );
    assert_eq!(
        h.get("vary").map(String::as_str),
        Some("accept-encoding"),
        "{at}"
    );
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("a gzip body");
    out
}

fn unbrotli(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::Decompressor::new(bytes, 4096)
        .read_to_end(&mut out)
        .expect("a brotli body");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_go_out_compressed_as_accepted_and_revalidate_by_etag() {
    let db = TestDb::sqlite();
    let server = TestServer::start(db.config());
    let file = |name: &str| {
        server::web::ASSETS
            .iter()
            .find(|a| a.path == name)
            .expect("an embedded file")
            .bytes
    };
    for (path, name) in [
        ("/", "index.html"),
        ("/admin", "admin.html"),
        ("/web/js/app.js", "js/app.js"),
        ("/web/style.css", "style.css"),
    ] {
        let (status, plain_h, plain) = get(&server, path, &[]).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(plain, file(name), "{path}: the embedded bytes");
        assert_eq!(plain_h.get("content-encoding"), None, "{path}");
        assert_page_headers(&plain_h, path);
        let plain_tag = plain_h.get("etag").expect("an ETag").clone();
        assert!(
            plain_tag.starts_with('"') && plain_tag.ends_with('"'),
            "strong: {plain_tag}"
        );

        let (status, gz_h, gz) = get(&server, path, &[("Accept-Encoding", "gzip, deflate")]).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(
            gz_h.get("content-encoding").map(String::as_str),
            Some("gzip"),
            "{path}"
        );
        assert!(
            gz.len() < plain.len(),
            "{path}: {} ≥ {}",
            gz.len(),
            plain.len()
        );
        assert_eq!(gunzip(&gz), plain, "{path}: gzip decodes to the plain body");
        assert_page_headers(&gz_h, path);
        let gz_tag = gz_h.get("etag").expect("an ETag").clone();
        assert_ne!(gz_tag, plain_tag, "{path}: one tag per body");

        let (status, br_h, br) =
            get(&server, path, &[("Accept-Encoding", "gzip, deflate, br")]).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(
            br_h.get("content-encoding").map(String::as_str),
            Some("br"),
            "{path}"
        );
        assert_eq!(
            unbrotli(&br),
            plain,
            "{path}: brotli decodes to the plain body"
        );
        let br_tag = br_h.get("etag").expect("an ETag").clone();

        // Refused codings are not used.
        let (_, h, body) = get(&server, path, &[("Accept-Encoding", "br;q=0, gzip;q=0")]).await;
        assert_eq!(
            (h.get("content-encoding"), body.as_slice()),
            (None, plain.as_slice()),
            "{path}"
        );

        // Revalidation: the tag of the body the client would get → 304, empty, same headers.
        for (encoding, tag) in [("identity", &plain_tag), ("gzip", &gz_tag), ("br", &br_tag)] {
            let (status, h, body) = get(
                &server,
                path,
                &[("Accept-Encoding", encoding), ("If-None-Match", tag)],
            )
            .await;
            assert_eq!(status, 304, "{path} {encoding}");
            assert!(body.is_empty(), "{path} {encoding}: a 304 has no body");
            assert_eq!(h.get("etag"), Some(tag), "{path} {encoding}");
            assert_page_headers(&h, path);
        }
        // A tag the server does not have, or one of another body, gets the full answer.
        for (encoding, tag) in [
            ("identity", "\"not-the-tag\""),
            ("gzip", plain_tag.as_str()),
            ("identity", gz_tag.as_str()),
        ] {
            let (status, h, body) = get(
                &server,
                path,
                &[("Accept-Encoding", encoding), ("If-None-Match", tag)],
            )
            .await;
            assert_eq!(status, 200, "{path} {encoding} {tag}");
            assert!(!body.is_empty(), "{path} {encoding} {tag}");
            assert_page_headers(&h, path);
        }
    }
    let (status, h, _) = get(
        &server,
        "/web/no-such-file.js",
        &[("Accept-Encoding", "gzip")],
    )
    .await;
    assert_eq!(status, 404);
    assert!(h.contains_key("content-security-policy"));
    server.stop().await;
}
