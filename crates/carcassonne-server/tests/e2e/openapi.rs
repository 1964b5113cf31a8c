//! The OpenAPI document against the running server, on both stores: it is
//! served at `/api/openapi.json` as checked in, is a well-formed OpenAPI 3.1 document whose
//! `$ref`s all resolve, lists exactly the routes the server serves, and the answers of real
//! calls (and refusals) validate against the schemas it documents for them.

use crate::common::*;
use jsonschema::{Draft, Validator};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use uuid::Uuid;

on_both_stores!(
    the_served_document_is_valid_openapi_3_1_and_checked_in,
    the_document_lists_exactly_the_served_routes,
    answers_validate_against_the_documented_schemas,
);

const DOC_URI: &str = "urn:carcassonne:openapi";
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

async fn call(
    server: &TestServer,
    method: &str,
    path: &str,
    bearer: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let auth = bearer.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth
        .as_deref()
        .map(|a| vec![("Authorization", a)])
        .unwrap_or_default();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let (status, text) = http(server, method, path, &headers, &body).await;
    let value = match text.trim() {
        "" => Value::Null,
        t => serde_json::from_str(t).unwrap_or_else(|_| Value::String(t.to_string())),
    };
    (status, value)
}

async fn fetch_document(server: &TestServer) -> Value {
    let (status, doc) = call(server, "GET", "/api/openapi.json", None, None).await;
    assert_eq!(status, 200, "{doc}");
    assert!(doc.is_object(), "not JSON: {doc}");
    doc
}

/// `/api/lobbies/{id}` as a JSON Pointer token.
fn pointer_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get("$ref") {
                out.push(r);
            }
            o.values().for_each(|v| refs(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

/// A validator for the schema at `pointer` in the document, its `$ref`s resolved in it.
fn validator_at(doc: &Value, pointer: &str) -> Validator {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .with_resource(DOC_URI, Draft::Draft202012.create_resource(doc.clone()))
        .build(&json!({ "$ref": format!("{DOC_URI}#{}", pointer.replace('{', "%7B").replace('}', "%7D")) }))
        .unwrap_or_else(|e| panic!("the schema at {pointer} does not compile: {e}"))
}

/// Where the document keeps the JSON schema of `method path`'s answer with `status`.
fn response_pointer(doc: &Value, path: &str, method: &str, status: u16) -> String {
    let op = format!("/paths/{}/{method}", pointer_token(path));
    assert!(
        doc.pointer(&op).is_some(),
        "{method} {path} is not documented"
    );
    let pointer = format!("{op}/responses/{status}/content/application~1json/schema");
    assert!(
        doc.pointer(&pointer).is_some(),
        "{method} {path} answered {status}, which the document does not list with a JSON body"
    );
    pointer
}

/// Checks a real answer against the documented schema for its operation and status.
#[track_caller]
fn conforms(doc: &Value, path: &str, method: &str, (status, body): &(u16, Value)) {
    let pointer = response_pointer(doc, path, method, *status);
    let validator = validator_at(doc, &pointer);
    let errors: Vec<String> = validator
        .iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{method} {path} ({status}) does not match its documented schema: {errors:?}\n{body}"
    );
}

async fn the_served_document_is_valid_openapi_3_1_and_checked_in(db: &TestDb) {
    let server = TestServer::start(db.config());
    let doc = fetch_document(&server).await;

    let checked_in: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../proto/openapi.json"
        ))
        .expect("proto/openapi.json"),
    )
    .expect("proto/openapi.json is JSON");
    assert!(
        doc == checked_in,
        "the served document differs from proto/openapi.json"
    );

    // The structure of an OpenAPI 3.1 document.
    assert!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1.")),
        "{}",
        doc["openapi"]
    );
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());
    let paths = doc["paths"].as_object().expect("paths");
    assert!(paths.len() >= 25, "{} paths", paths.len());
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    assert!(schemas.contains_key("ErrorBody") && schemas.contains_key("ErrorCode"));
    let schemes = doc["components"]["securitySchemes"]
        .as_object()
        .expect("security schemes");
    assert_eq!(schemes["session_cookie"]["in"], "cookie");
    assert_eq!(schemes["session_cookie"]["name"], "session");
    for scheme in ["session_bearer", "admin_token"] {
        assert_eq!(schemes[scheme]["scheme"], "bearer", "{scheme}");
    }

    let mut operation_ids = BTreeSet::new();
    for (path, item) in paths {
        assert!(path.starts_with('/'), "{path}");
        let templated: BTreeSet<&str> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        for (method, op) in item.as_object().expect("a path item") {
            assert!(METHODS.contains(&method.as_str()), "{method} {path}");
            assert!(
                operation_ids.insert(op["operationId"].as_str().expect("operationId")),
                "{method} {path}: operationId {} is not unique",
                op["operationId"]
            );
            let responses = op["responses"].as_object().expect("responses");
            assert!(!responses.is_empty(), "{method} {path} has no responses");
            // Every templated segment is a required path parameter, and no other.
            let declared: BTreeSet<&str> = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path")
                .map(|p| {
                    assert_eq!(p["required"], true, "{method} {path}");
                    p["name"].as_str().expect("name")
                })
                .collect();
            assert_eq!(declared, templated, "{method} {path}: path parameters");
            for requirement in op["security"].as_array().into_iter().flatten() {
                for scheme in requirement.as_object().expect("requirement").keys() {
                    assert!(schemes.contains_key(scheme), "{method} {path}: {scheme}");
                }
            }
            // Every JSON answer's schema compiles (its refs resolve), and every refusal (4xx,
            // 5xx) with a body is the error body.
            for (status, response) in responses {
                assert!(
                    response["description"].is_string(),
                    "{method} {path} {status}"
                );
                let Some(schema) = response.pointer("/content/application~1json/schema") else {
                    continue;
                };
                let code: u16 = status.parse().expect("a status");
                validator_at(&doc, &response_pointer(&doc, path, method, code));
                if code >= 400 {
                    assert_eq!(
                        schema,
                        &json!({"$ref": "#/components/schemas/ErrorBody"}),
                        "{method} {path} {status}"
                    );
                }
            }
        }
    }

    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(all.len() > 50, "{} refs", all.len());
    for r in all {
        let target = r
            .strip_prefix('#')
            .and_then(|p| doc.pointer(p))
            .unwrap_or_else(|| panic!("{r} does not resolve"));
        assert!(target.is_object() || target.is_boolean(), "{r}");
    }
    server.stop().await;
}

/// A concrete path for a documented template (`{id}` → a fresh id).
fn concrete(template: &str) -> String {
    template.replace("{id}", &Uuid::new_v4().to_string())
}

/// Every documented (method, path) reaches a handler: the answer is not the router's own 404 or
/// 405. Every other method on a documented path is the router's 405. That no route is served
/// without being documented holds by construction: the API's routes can only be added with
/// their annotations (`server::http::openapi::Routes`), the browser's pages aside.
async fn the_document_lists_exactly_the_served_routes(db: &TestDb) {
    let server = TestServer::start(db.config());
    let doc = fetch_document(&server).await;
    let paths = doc["paths"].as_object().expect("paths");
    let mut documented = BTreeSet::new();
    for (template, item) in paths {
        for method in METHODS {
            let upper = method.to_ascii_uppercase();
            let (status, body) = call(&server, &upper, &concrete(template), None, None).await;
            let router_refusal = match status {
                404 => body["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("no endpoint")),
                405 => body["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("does not take")),
                _ => false,
            };
            if item.get(method).is_some() {
                documented.insert((upper.clone(), template.clone()));
                assert!(
                    !router_refusal,
                    "{upper} {template} is documented but not served: {status} {body}"
                );
            } else {
                assert!(
                    status == 405 && router_refusal,
                    "{upper} {template} is served ({status} {body}) but not documented"
                );
            }
        }
    }
    // The routes the issue names, and that nothing else under /api is answered.
    for (method, path) in [
        ("POST", "/api/matches"),
        ("GET", "/healthz"),
        ("GET", "/metrics"),
        ("GET", "/api/tiles"),
        ("GET", "/ws"),
        ("GET", "/api/openapi.json"),
        ("POST", "/api/accounts/guest"),
        ("POST", "/api/accounts"),
        ("POST", "/api/sessions"),
        ("GET", "/api/sessions"),
        ("DELETE", "/api/sessions"),
        ("DELETE", "/api/sessions/{id}"),
        ("GET", "/api/me"),
        ("POST", "/api/lobbies/{id}/start"),
        ("POST", "/api/admin/matches/{id}/abort"),
    ] {
        assert!(
            documented.contains(&(method.to_string(), path.to_string())),
            "{method} {path} is not documented"
        );
    }
    let (status, body) = call(&server, "GET", "/api/no-such-thing", None, None).await;
    assert_eq!(status, 404, "{body}");
    server.stop().await;
}

async fn answers_validate_against_the_documented_schemas(db: &TestDb) {
    let server = TestServer::start(db.config());
    let doc = fetch_document(&server).await;
    let admin = Some(ADMIN_TOKEN);

    // A match with seat tokens, and the admin's view of it.
    let created = call(
        &server,
        "POST",
        "/api/matches",
        None,
        Some(json!({"players": ["red", "blue"], "clock": {"bank_ms": 300000, "increment_ms": 20000}})),
    )
    .await;
    assert_eq!(created.0, 201, "{}", created.1);
    conforms(&doc, "/api/matches", "post", &created);
    let match_id = created.1["match_id"]
        .as_str()
        .expect("match_id")
        .to_string();

    // A guest, its account and sessions.
    let guest = call(
        &server,
        "POST",
        "/api/accounts/guest",
        None,
        Some(json!({"name": "Ann"})),
    )
    .await;
    assert_eq!(guest.0, 201, "{}", guest.1);
    conforms(&doc, "/api/accounts/guest", "post", &guest);
    let token = guest.1["token"].as_str().expect("token").to_string();
    let session = Some(token.as_str());
    let me = call(&server, "GET", "/api/me", session, None).await;
    assert_eq!(me.0, 200, "{}", me.1);
    conforms(&doc, "/api/me", "get", &me);
    let sessions = call(&server, "GET", "/api/sessions", session, None).await;
    assert_eq!(sessions.0, 200, "{}", sessions.1);
    conforms(&doc, "/api/sessions", "get", &sessions);

    // A lobby, the list, and one lobby read back.
    let lobby = call(
        &server,
        "POST",
        "/api/lobbies",
        session,
        Some(
            json!({"name": "Friday table", "seats": 3, "modules": {"tollkeepers": true},
                    "clock": {"bank_ms": 600000, "increment_ms": 10000}}),
        ),
    )
    .await;
    assert_eq!(lobby.0, 201, "{}", lobby.1);
    conforms(&doc, "/api/lobbies", "post", &lobby);
    let lobby_id = lobby.1["id"].as_str().expect("lobby id").to_string();
    let list = call(&server, "GET", "/api/lobbies", None, None).await;
    assert_eq!(list.0, 200, "{}", list.1);
    assert!(list.1.to_string().contains(&lobby_id), "{}", list.1);
    conforms(&doc, "/api/lobbies", "get", &list);
    let read = call(
        &server,
        "GET",
        &format!("/api/lobbies/{lobby_id}"),
        None,
        None,
    )
    .await;
    assert_eq!(read.0, 200, "{}", read.1);
    conforms(&doc, "/api/lobbies/{id}", "get", &read);
    let bot = call(
        &server,
        "POST",
        &format!("/api/lobbies/{lobby_id}/bot"),
        session,
        Some(json!({"seat": 1})),
    )
    .await;
    assert_eq!(bot.0, 200, "{}", bot.1);
    conforms(&doc, "/api/lobbies/{id}/bot", "post", &bot);

    // The admin API with the admin token.
    for path in [
        "/api/admin/matches".to_string(),
        format!("/api/admin/matches/{match_id}"),
        format!("/api/admin/matches/{match_id}/log"),
        format!("/api/admin/matches/{match_id}/state"),
        "/api/admin/actions".to_string(),
        "/api/admin/stats".to_string(),
    ] {
        let answer = call(&server, "GET", &path, admin, None).await;
        assert_eq!(answer.0, 200, "{path}: {}", answer.1);
        let template = path.replace(&match_id, "{id}");
        conforms(&doc, &template, "get", &answer);
    }
    // A match's history and who the request is, as a player's page reads them.
    for (path, template) in [
        (
            format!("/api/matches/{match_id}/log"),
            "/api/matches/{id}/log",
        ),
        (
            format!("/api/matches/{match_id}/chat"),
            "/api/matches/{id}/chat",
        ),
        ("/api/whoami".to_string(), "/api/whoami"),
    ] {
        let answer = call(&server, "GET", &path, session, None).await;
        assert_eq!(answer.0, 200, "{path}: {}", answer.1);
        conforms(&doc, template, "get", &answer);
    }
    let tiles = call(&server, "GET", "/api/tiles", None, None).await;
    assert_eq!(tiles.0, 200);
    conforms(&doc, "/api/tiles", "get", &tiles);

    // Refusals validate against the error body documented for their status.
    let refusals = [
        (
            "/api/matches",
            "post",
            call(
                &server,
                "POST",
                "/api/matches",
                None,
                Some(json!({"players": ["purple"]})),
            )
            .await,
            400,
        ),
        (
            "/api/me",
            "get",
            call(&server, "GET", "/api/me", None, None).await,
            401,
        ),
        (
            "/api/me",
            "get",
            call(&server, "GET", "/api/me", Some("not-a-session"), None).await,
            401,
        ),
        (
            "/api/admin/matches",
            "get",
            call(&server, "GET", "/api/admin/matches", session, None).await,
            401,
        ),
        (
            "/api/lobbies/{id}",
            "get",
            call(
                &server,
                "GET",
                &format!("/api/lobbies/{}", Uuid::new_v4()),
                None,
                None,
            )
            .await,
            404,
        ),
        (
            "/api/lobbies",
            "post",
            call(
                &server,
                "POST",
                "/api/lobbies",
                session,
                Some(json!({"name": "Too big", "seats": 9})),
            )
            .await,
            400,
        ),
        (
            "/api/admin/matches/{id}/secrets",
            "get",
            call(
                &server,
                "GET",
                &format!("/api/admin/matches/{match_id}/secrets"),
                admin,
                None,
            )
            .await,
            409,
        ),
    ];
    for (path, method, answer, status) in refusals {
        assert_eq!(answer.0, status, "{method} {path}: {}", answer.1);
        conforms(&doc, path, method, &answer);
    }
    // The refusal of a route the document does not have is the error body too.
    let unknown = call(&server, "GET", "/api/nowhere", None, None).await;
    assert_eq!(unknown.0, 404);
    let errors: Vec<String> = validator_at(&doc, "/components/schemas/ErrorBody")
        .iter_errors(&unknown.1)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}: {}", unknown.1);
    // A body that is not the error body fails the validation (the check can fail).
    assert!(
        !validator_at(&doc, "/components/schemas/ErrorBody")
            .is_valid(&json!({"code": "no_such_code", "message": "x"}))
    );
    server.stop().await;
}
