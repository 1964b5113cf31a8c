//! Moderation over real sockets, on both stores: a suspension (its sockets closed, log-in
//! refused with until when, its seats played by the server, lifted), chat removal for every
//! viewer and from the history, players' reports with their limits, resolved by an admin; every
//! admin route refused to a non-admin and every action in the audit trail.

use crate::common::*;
use crate::community::{
    PASSWORD, closed_with, lobby_match, login, my_matches, refused, registered, say, seated,
};
use crate::lobby::{call, guest, ws_as};
use protocol::admin::{AdminActionList, AdminMatchSummary};
use protocol::moderation::{AccountStanding, ReportList, ReportStatus};
use protocol::{ServerMessage, close};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use uuid::Uuid;

on_both_stores!(
    moderation_routes_refuse_a_non_admin,
    a_suspension_closes_sockets_refuses_log_in_and_plays_the_seats,
    a_removed_chat_line_leaves_every_viewer_and_the_history,
    reports_are_bounded_listed_and_resolved,
);

fn routes(account: Uuid) -> Vec<(&'static str, String, &'static str)> {
    vec![
        ("GET", format!("/api/admin/accounts/{account}"), ""),
        (
            "POST",
            format!("/api/admin/accounts/{account}/suspension"),
            r#"{"reason":"spam"}"#,
        ),
        (
            "DELETE",
            format!("/api/admin/accounts/{account}/suspension"),
            "",
        ),
        (
            "POST",
            format!("/api/admin/accounts/{account}/password-reset"),
            "",
        ),
        ("DELETE", "/api/admin/chat/1".into(), ""),
        ("GET", "/api/admin/reports".into(), ""),
        (
            "POST",
            "/api/admin/reports/1/resolve".into(),
            r#"{"note":"done"}"#,
        ),
    ]
}

async fn admin_call(server: &TestServer, method: &str, path: &str, body: Value) -> (u16, Value) {
    let text = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let (s, t) = admin_http(server, method, path, &text).await;
    let v = if t.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&t).unwrap_or_else(|e| panic!("{method} {path}: {e}: {t}"))
    };
    (s, v)
}

async fn actions(server: &TestServer) -> Vec<String> {
    let a: AdminActionList =
        serde_json::from_value(admin_json(server, "/api/admin/actions").await).expect("actions");
    a.actions.into_iter().map(|a| a.action).collect()
}

async fn moderation_routes_refuse_a_non_admin(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (ann, ta) = registered(&server, "Ann").await;
    let bearer = format!("Bearer {ta}");
    for (method, path, body) in routes(ann) {
        for headers in [vec![], vec![("Authorization", bearer.as_str())]] {
            let (status, text) = http(&server, method, &path, &headers, body).await;
            assert_eq!(status, 401, "{method} {path}: {text}");
            assert!(text.contains("bad_token"), "{method} {path}: {text}");
        }
    }
    // Nothing happened: Ann logs in, nothing is audited.
    assert_eq!(login(&server, "Ann", PASSWORD).await.0, 201);
    assert!(actions(&server).await.is_empty());
    server.stop().await;
}

async fn a_suspension_closes_sockets_refuses_log_in_and_plays_the_seats(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (ann, ta) = registered(&server, "Ann").await;
    let (_, tb) = registered(&server, "Bo").await;
    // A game clock: the server plays an away player's decisions at once.
    let clock = json!({"clock": {"bank_ms": 600_000, "increment_ms": 0}});
    let m = lobby_match(&server, &ta, &tb, clock).await;
    let mut ann_conn = ws_as(&server, &ta).await;
    let mut bo = seated(&server, &tb, m).await;
    bo.sync_first().await;
    assert_eq!(my_matches(&server, &tb, "").await.matches[0].turn, Some(0));

    let path = format!("/api/admin/accounts/{ann}/suspension");
    refused(
        admin_call(&server, "POST", &path, json!({"reason": ""})).await,
        400,
        "malformed",
    );
    refused(
        admin_call(
            &server,
            "POST",
            &path,
            json!({"reason": "spam", "seconds": 0}),
        )
        .await,
        400,
        "malformed",
    );
    refused(
        admin_call(
            &server,
            "POST",
            &format!("/api/admin/accounts/{}/suspension", Uuid::new_v4()),
            json!({"reason": "spam"}),
        )
        .await,
        404,
        "unknown_account",
    );
    let (s, v) = admin_call(
        &server,
        "POST",
        &path,
        json!({"reason": "spam", "seconds": 3600}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let st: AccountStanding = serde_json::from_value(v).expect("standing");
    let until = st
        .suspension
        .as_ref()
        .and_then(|x| x.until.clone())
        .expect("until");
    assert_eq!(st.sessions, 0);

    // Its socket closes, its session is gone, log-in says until when.
    assert_eq!(
        closed_with(&mut ann_conn).await,
        Some(close::SESSION_REVOKED)
    );
    refused(
        call(&server, "GET", "/api/me", Some(&ta), None).await,
        401,
        "unknown_session",
    );
    let (s, v) = login(&server, "Ann", PASSWORD).await;
    refused((s, v.clone()), 403, "suspended");
    let message = v["message"].as_str().expect("message");
    assert!(
        message.contains(&until[..16]) && message.contains("spam"),
        "{message}"
    );
    // A wrong password says nothing of the suspension.
    refused(
        login(&server, "Ann", "wrong horse").await,
        401,
        "bad_credentials",
    );

    // Its seat is away and the server plays it: the turn comes to Bo with no move of Ann's.
    let summary: AdminMatchSummary =
        serde_json::from_value(admin_json(&server, &format!("/api/admin/matches/{m}")).await)
            .expect("summary");
    assert!(summary.players[0].away_since.is_some(), "{summary:?}");
    let start = Instant::now();
    while my_matches(&server, &tb, "").await.matches[0].turn != Some(1) {
        assert!(
            start.elapsed() < READ_TIMEOUT,
            "the server did not play the seat"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // A suspension whose time is up no longer holds.
    let n = db
        .execute(
            "UPDATE accounts SET suspended_until = '2000-01-01T00:00:00+00:00' WHERE name = 'Ann'",
        )
        .await;
    assert_eq!(n, 1);
    assert_eq!(login(&server, "Ann", PASSWORD).await.0, 201);
    // Lifted: Ann logs in again. For good: the message says so.
    let (s, v) = admin_call(&server, "DELETE", &path, Value::Null).await;
    assert_eq!((s, v["suspension"].is_null()), (200, true), "{v}");
    assert_eq!(login(&server, "Ann", PASSWORD).await.0, 201);
    let (s, v) = admin_call(&server, "POST", &path, json!({"reason": "again"})).await;
    assert_eq!(s, 200, "{v}");
    assert!(v["suspension"]["until"].is_null(), "{v}");
    let (_, v) = login(&server, "Ann", PASSWORD).await;
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| m.contains("for good")),
        "{v}"
    );
    assert_eq!(
        actions(&server)
            .await
            .iter()
            .filter(|a| a.contains("suspend"))
            .count(),
        6
    );
    drop(bo);
    server.stop().await;
}

async fn a_removed_chat_line_leaves_every_viewer_and_the_history(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (_, ta) = registered(&server, "Ann").await;
    let (_, tb) = registered(&server, "Bo").await;
    let m = lobby_match(&server, &ta, &tb, json!({})).await;
    let mut ca = ws_as(&server, &ta).await;
    ca.take_seat(m).await.expect("seat");
    ca.subscribe(m, None).await.expect("subscribe");
    let mut cb = ws_as(&server, &tb).await;
    cb.take_seat(m).await.expect("seat");
    cb.subscribe(m, None).await.expect("subscribe");
    let line = say(&mut cb, m, "something rude").await;
    let id = line.id.expect("an id");
    // Ann got it too, with the same id.
    let got = ca
        .wait_for(|msg| matches!(msg, ServerMessage::Chat(l) if l.id == Some(id)))
        .await
        .expect("Ann reads it");
    assert!(matches!(got, ServerMessage::Chat(_)));

    let path = format!("/api/admin/chat/{id}");
    refused(
        call(&server, "DELETE", &path, Some(&ta), None).await,
        401,
        "bad_token",
    );
    let (s, v) = admin_call(&server, "DELETE", &path, Value::Null).await;
    assert_eq!(s, 204, "{v}");
    for c in [&mut ca, &mut cb] {
        let removed = c
            .wait_for(|msg| matches!(msg, ServerMessage::ChatRemoved { .. }))
            .await
            .expect("told of the removal");
        assert_eq!(
            removed,
            ServerMessage::ChatRemoved {
                id,
                match_id: Some(m),
                lobby_id: None
            }
        );
    }
    let (s, v) = call(
        &server,
        "GET",
        &format!("/api/matches/{m}/chat"),
        Some(&ta),
        None,
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(v["chat"], json!([]), "the history shows nothing of it");
    refused(
        admin_call(&server, "DELETE", &path, Value::Null).await,
        404,
        "bad_report",
    );
    assert!(actions(&server).await.contains(&"remove_chat".to_string()));
    server.stop().await;
}

async fn reports_are_bounded_listed_and_resolved(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (ann, ta) = registered(&server, "Ann").await;
    let (bo, tb) = registered(&server, "Bo").await;
    let m = lobby_match(&server, &ta, &tb, json!({})).await;
    let mut cb = ws_as(&server, &tb).await;
    cb.take_seat(m).await.expect("seat");
    cb.subscribe(m, None).await.expect("subscribe");
    let chat_id = say(&mut cb, m, "something rude").await.id.expect("id");

    let report = |body: Value| {
        let (server, ta) = (&server, ta.clone());
        async move { call(server, "POST", "/api/reports", Some(&ta), Some(body)).await }
    };
    refused(
        call(
            &server,
            "POST",
            "/api/reports",
            None,
            Some(json!({"chat_id": chat_id, "reason": "x"})),
        )
        .await,
        401,
        "unauthenticated",
    );
    refused(
        report(json!({"chat_id": chat_id, "reason": "  "})).await,
        400,
        "bad_report",
    );
    refused(
        report(json!({"chat_id": chat_id, "reason": "x".repeat(501)})).await,
        400,
        "bad_report",
    );
    refused(
        report(json!({"reason": "no target"})).await,
        400,
        "bad_report",
    );
    refused(
        report(json!({"chat_id": chat_id, "account_id": bo, "reason": "both"})).await,
        400,
        "bad_report",
    );
    refused(
        report(json!({"account_id": ann, "reason": "me"})).await,
        400,
        "bad_report",
    );
    refused(
        report(json!({"chat_id": 999_999, "reason": "gone"})).await,
        404,
        "bad_report",
    );
    refused(
        report(json!({"account_id": Uuid::new_v4(), "reason": "nobody"})).await,
        404,
        "unknown_account",
    );
    let (s, v) = report(json!({"chat_id": chat_id, "reason": "insults"})).await;
    assert_eq!(s, 201, "{v}");
    let first = v["id"].as_i64().expect("id");
    refused(
        report(json!({"chat_id": chat_id, "reason": "again"})).await,
        409,
        "already_reported",
    );
    let (s, v) = report(json!({"account_id": bo, "reason": "rude all game"})).await;
    assert_eq!(s, 201, "{v}");
    // The flood limit: ten an hour.
    for i in 0..8 {
        let (other, _) = guest(&server, &format!("Guest{i}")).await;
        let (s, v) = report(json!({"account_id": other, "reason": "flood"})).await;
        assert_eq!(s, 201, "report {i}: {v}");
    }
    let (other, _) = guest(&server, "Guest9").await;
    refused(
        report(json!({"account_id": other, "reason": "flood"})).await,
        429,
        "rate_limited",
    );

    // The admins' list: newest first, with names and the line's text.
    refused(
        call(&server, "GET", "/api/admin/reports", Some(&ta), None).await,
        401,
        "bad_token",
    );
    let list: ReportList =
        serde_json::from_value(admin_json(&server, "/api/admin/reports?status=open").await)
            .expect("reports");
    assert_eq!(list.reports.len(), 10);
    let r = list
        .reports
        .iter()
        .find(|r| r.id == first)
        .expect("the first");
    assert_eq!(r.chat_text.as_deref(), Some("something rude"));
    assert_eq!(
        (
            r.reporter,
            r.reporter_name.as_deref(),
            r.account,
            r.account_name.as_deref()
        ),
        (ann, Some("Ann"), Some(bo), Some("Bo"))
    );
    let page: ReportList =
        serde_json::from_value(admin_json(&server, "/api/admin/reports?limit=4").await)
            .expect("page");
    assert_eq!(page.reports.len(), 4);
    assert!(page.reports.windows(2).all(|w| w[0].id > w[1].id));
    assert!(page.next_before.is_some());

    // Resolved once, with who and what.
    let path = format!("/api/admin/reports/{first}/resolve");
    refused(
        admin_call(&server, "POST", &path, json!({"note": ""})).await,
        400,
        "malformed",
    );
    let (s, v) = admin_call(&server, "POST", &path, json!({"note": "warned"})).await;
    assert_eq!(s, 204, "{v}");
    refused(
        admin_call(&server, "POST", &path, json!({"note": "again"})).await,
        409,
        "bad_report",
    );
    let done: ReportList =
        serde_json::from_value(admin_json(&server, "/api/admin/reports?status=resolved").await)
            .expect("resolved");
    assert_eq!(done.reports.len(), 1);
    let r = &done.reports[0];
    assert_eq!(r.status, ReportStatus::Resolved);
    assert_eq!(
        (r.resolved_by.as_deref(), r.resolution.as_deref()),
        (Some("admin_token"), Some("warned"))
    );
    assert!(
        actions(&server)
            .await
            .contains(&"resolve_report".to_string())
    );
    server.stop().await;
}
