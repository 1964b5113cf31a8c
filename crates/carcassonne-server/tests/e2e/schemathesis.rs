//! The REST API fuzzed from its own OpenAPI document by schemathesis (PyPI, pinned in
//! `tests/schemathesis/requirements.txt`): generated requests, valid and not, against every
//! documented operation of a real server, signed in as a registered account that holds the admin
//! role (so one bearer opens both the account routes and the admin API). Every answer must be
//! no 5xx and match the document's schema for its status. Without the CLI the test is skipped
//! with a notice (and fails with `CI=true`); `SCHEMATHESIS` names the executable when it is not
//! `st` on the `PATH` (.ci/run installs it into a virtual environment).

use crate::common::*;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

on_both_stores!(the_api_answers_generated_requests_as_documented);

/// Test cases per operation and phase: the whole run takes about 15 s.
const MAX_EXAMPLES: &str = "50";

/// Operations left out: they would take away the credential the run signs in with (log out
/// everywhere, revoke a session listed by `GET /api/sessions`, take the admin role from the
/// account `GET /api/me` names). The e2e tests of accounts and the admin role cover them.
const EXCLUDED: [&str; 3] = ["revoke_all", "revoke_one", "admin_set_role"];

fn schemathesis() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SCHEMATHESIS") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("st"))
            .find(|p| p.is_file())
    })
}

/// A registered account with the admin role (granted with the admin token): its session token.
async fn admin_account(server: &TestServer) -> String {
    let (status, text) = http(
        server,
        "POST",
        "/api/accounts",
        &[],
        r#"{"name":"Fuzzer","password":"correct horse battery"}"#,
    )
    .await;
    assert_eq!(status, 201, "register: {text}");
    let v: Value = serde_json::from_str(&text).expect("json");
    let id = v["account"]["id"].as_str().expect("account id");
    let (status, text) = admin_http(
        server,
        "PUT",
        &format!("/api/admin/accounts/{id}/admin"),
        r#"{"admin":true}"#,
    )
    .await;
    assert_eq!(status, 204, "grant the admin role: {text}");
    v["token"].as_str().expect("token").to_string()
}

async fn the_api_answers_generated_requests_as_documented(db: &TestDb) {
    let Some(st) = schemathesis() else {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        assert!(
            !ci,
            "CI=true but schemathesis is not installed \
             (pip install -r crates/carcassonne-server/tests/schemathesis/requirements.txt)"
        );
        eprintln!("NOTICE: schemathesis (`st`) not found; skipping the API fuzz test");
        return;
    };
    let server = TestServer::start(db.config());
    let token = admin_account(&server).await;
    let mut cmd = Command::new(&st);
    cmd.args(["--no-color", "run"])
        .arg(format!("{}/api/openapi.json", server.http()))
        .args(["--checks", "not_a_server_error,response_schema_conformance"])
        .arg("--header")
        .arg(format!("Authorization: Bearer {token}"))
        .args(["--max-examples", MAX_EXAMPLES])
        .args(["--seed", "1", "--request-timeout", "10"])
        // One worker: the coverage phase of this version races in CPython 3.11's `ast` with
        // several ("AST constructor recursion depth mismatch"), an error of the tool's own.
        .args(["--workers", "1"]);
    for op in EXCLUDED {
        cmd.args(["--exclude-operation-id", op]);
    }
    // Its example database (`.hypothesis/`) goes to a scratch folder, not the source tree.
    let scratch = tempfile::tempdir().expect("scratch dir");
    cmd.current_dir(scratch.path()).env("NO_COLOR", "1");
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run schemathesis");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let summary = text
        .lines()
        .find(|l| l.contains(" generated,"))
        .unwrap_or("no summary line")
        .trim()
        .to_string();
    eprintln!("schemathesis on {}: {summary}", db.kind());
    // A failure's report can be long (a whole traceback per error): its end says what failed.
    let tail: String = {
        let chars: Vec<char> = text.chars().collect();
        chars[chars.len().saturating_sub(20_000)..].iter().collect()
    };
    assert!(out.status.success(), "schemathesis failed:\n{tail}");
    assert!(summary.contains("passed"), "{summary}\n{tail}");
    server.stop().await;
}
