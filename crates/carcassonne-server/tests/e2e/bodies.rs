//! Request bodies on every route that takes one, walked from the served OpenAPI document, on
//! both stores: a body over the limit is 413 `too_large` and a body that is not typed as JSON is
//! 415 `unsupported_media_type`, each with the JSON error body, whatever the route; a JSON body
//! with parameters in its type, and an empty body where the route allows none, pass.

use crate::common::*;
use protocol::{ErrorBody, ErrorCode};
use serde_json::{Value, json};
use uuid::Uuid;

on_both_stores!(
    every_route_with_a_body_refuses_an_oversized_one_with_413,
    every_route_with_a_body_refuses_a_body_not_typed_as_json_with_415,
);

/// The router's body limit (`http::MAX_BODY_BYTES`).
const LIMIT: usize = 64 * 1024;

/// The refusal's JSON error body; fails unless it has `code`.
#[track_caller]
fn refusal(what: &str, (status, body): (u16, String), want: (u16, ErrorCode)) {
    let parsed: Result<ErrorBody, _> = serde_json::from_str(&body);
    assert_eq!(
        (status, parsed.as_ref().map(|b| b.code).ok()),
        (want.0, Some(want.1)),
        "{what}: {body}"
    );
}

/// Every (method, concrete path) of the served document whose operation has a request body; a
/// path's parameters are fresh UUIDs (the body is read before anything is looked up).
async fn routes_with_bodies(server: &TestServer) -> Vec<(String, String)> {
    let (status, text) = http_exact(server, "GET", "/api/openapi.json", &[], "").await;
    assert_eq!(status, 200, "{text}");
    let doc: Value = serde_json::from_str(&text).expect("the document is JSON");
    let mut out = Vec::new();
    for (template, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("a path item") {
            if op.get("requestBody").is_none() {
                continue;
            }
            let responses = &op["responses"];
            for status in ["413", "415"] {
                assert!(
                    responses.get(status).is_some(),
                    "{method} {template} does not document {status}"
                );
            }
            let path = template
                .split('/')
                .map(|seg| match seg.starts_with('{') {
                    true => Uuid::new_v4().to_string(),
                    false => seg.to_string(),
                })
                .collect::<Vec<_>>()
                .join("/");
            out.push((method.to_uppercase(), path));
        }
    }
    for must in ["/away", "/admin", "/api/matches", "/api/sessions", "/join"] {
        assert!(
            out.iter().any(|(_, p)| p.ends_with(must)),
            "no route with a body ends with {must}: {out:?}"
        );
    }
    out
}

/// The credential a route needs before it reads its body: the admin token under
/// `/api/admin`, else a guest's session (routes without one ignore it).
fn bearer<'a>(path: &str, session: &'a str) -> &'a str {
    if path.starts_with("/api/admin") {
        ADMIN_TOKEN
    } else {
        session
    }
}

async fn guest_session(server: &TestServer) -> String {
    let (status, text) = http_exact(
        server,
        "POST",
        "/api/accounts/guest",
        &[("Content-Type", "application/json; charset=utf-8")],
        r#"{"name":"Walker"}"#,
    )
    .await;
    assert_eq!(status, 201, "a JSON type with parameters passes: {text}");
    let v: Value = serde_json::from_str(&text).expect("json");
    v["token"].as_str().expect("token").to_string()
}

async fn every_route_with_a_body_refuses_an_oversized_one_with_413(db: &TestDb) {
    let server = TestServer::start(db.config());
    let session = guest_session(&server).await;
    let big = json!({ "padding": "x".repeat(LIMIT) }).to_string();
    assert!(big.len() > LIMIT);
    let routes = routes_with_bodies(&server).await;
    for (method, path) in &routes {
        let auth = format!("Bearer {}", bearer(path, &session));
        let headers = [
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
        ];
        let answer = http_exact(&server, method, path, &headers, &big).await;
        refusal(
            &format!("{method} {path}"),
            answer,
            (413, ErrorCode::TooLarge),
        );
    }
    eprintln!(
        "{}: {} routes with a body answer 413",
        db.kind(),
        routes.len()
    );
    server.stop().await;
}

async fn every_route_with_a_body_refuses_a_body_not_typed_as_json_with_415(db: &TestDb) {
    let server = TestServer::start(db.config());
    let session = guest_session(&server).await;
    let routes = routes_with_bodies(&server).await;
    for (method, path) in &routes {
        let auth = format!("Bearer {}", bearer(path, &session));
        for ty in [
            Some("text/plain"),
            Some("text/plain;charset=UTF-8"),
            Some("application/x-www-form-urlencoded"),
            None,
        ] {
            let mut headers = vec![("Authorization", auth.as_str())];
            headers.extend(ty.map(|t| ("Content-Type", t)));
            let answer = http_exact(&server, method, path, &headers, "{}").await;
            refusal(
                &format!("{method} {path} as {ty:?}"),
                answer,
                (415, ErrorCode::UnsupportedMediaType),
            );
        }
    }
    // A route whose body is optional takes an empty one with no type (here the lobby is
    // unknown, which is the next thing it checks); a `+json` type is JSON.
    let auth = format!("Bearer {session}");
    let join = format!("/api/lobbies/{}/join", Uuid::new_v4());
    let answer = http_exact(&server, "POST", &join, &[("Authorization", &auth)], "").await;
    refusal("an empty join", answer, (404, ErrorCode::UnknownLobby));
    let answer = http_exact(
        &server,
        "POST",
        &join,
        &[("Authorization", &auth), ("Content-Type", "text/plain")],
        "",
    )
    .await;
    refusal(
        "an empty join typed text",
        answer,
        (404, ErrorCode::UnknownLobby),
    );
    let (status, text) = http_exact(
        &server,
        "POST",
        "/api/accounts/guest",
        &[("Content-Type", "application/vnd.carcassonne+json")],
        r#"{"name":"Suffix"}"#,
    )
    .await;
    assert_eq!(status, 201, "{text}");
    // A required body that is empty stays `malformed`, whatever its type.
    let answer = http_exact(&server, "POST", "/api/accounts/guest", &[], "").await;
    refusal("an empty guest body", answer, (400, ErrorCode::Malformed));
    server.stop().await;
}
