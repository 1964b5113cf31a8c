//! The cap on an account's live sessions holds under concurrency, on both stores: thirty log-ins
//! of one account at once leave exactly `--max-sessions` live sessions, and every other log-in
//! is refused with `too_many_sessions`.

use crate::common::*;
use serde_json::{Value, json};

on_both_stores!(concurrent_log_ins_never_exceed_the_session_cap);

const CAP: usize = 10;
const LOG_INS: usize = 30;

async fn post_json(server: &TestServer, path: &str, body: &Value) -> (u16, Value) {
    let (status, text) = http(server, "POST", path, &[], &body.to_string()).await;
    let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, v)
}

async fn concurrent_log_ins_never_exceed_the_session_cap(db: &TestDb) {
    let mut config = db.config();
    config.limits.max_sessions = CAP;
    let server = std::sync::Arc::new(TestServer::start(config));
    let creds = json!({"name": "Racer", "password": "correct horse"});
    // Registering opens the first session.
    let (status, v) = post_json(&server, "/api/accounts", &creds).await;
    assert_eq!(status, 201, "{v}");
    let first = v["token"].as_str().expect("token").to_string();

    let mut tasks = Vec::new();
    for _ in 0..LOG_INS {
        let (creds, server) = (creds.clone(), std::sync::Arc::clone(&server));
        tasks.push(tokio::spawn(async move {
            post_json(&server, "/api/sessions", &creds).await
        }));
    }
    let (mut created, mut refused) = (0, 0);
    for t in tasks {
        let (status, v) = t.await.expect("log-in task");
        match (status, v["code"].as_str()) {
            (201, _) => created += 1,
            (409, Some("too_many_sessions")) => refused += 1,
            other => panic!("a log-in answered {other:?}: {v}"),
        }
    }
    let (status, text) = http(
        &server,
        "GET",
        "/api/sessions",
        &[("Authorization", &format!("Bearer {first}"))],
        "",
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let live: Vec<Value> = serde_json::from_str(&text).expect("a session list");
    eprintln!(
        "{}: {LOG_INS} concurrent log-ins with a cap of {CAP}: {created} created, {refused} \
         refused, {} live sessions",
        db.kind(),
        live.len()
    );
    assert_eq!(live.len(), CAP, "live sessions after the race");
    assert_eq!(created, CAP - 1, "log-ins that opened a session");
    assert_eq!(refused, LOG_INS - (CAP - 1), "log-ins refused");
    match std::sync::Arc::try_unwrap(server) {
        Ok(server) => server.stop().await,
        Err(_) => panic!("a log-in task still holds the server"),
    }
}
