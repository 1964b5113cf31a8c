//! `GET /metrics` over a real socket: who may read it, and that a match's
//! commands, refusals, resumes and closes show up in the counters. Each server has its own
//! recorder, so the counts here are this test's alone.

use crate::common::*;
use client::{CommandOutcome, Connection};
use protocol::{ErrorCode, ServerMessage};
use rules::Command;
use server::config::MetricsAccess;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

on_both_stores!(
    metrics_count_commands_refusals_resumes_and_closes,
    metrics_access_follows_the_flag,
    the_window_keeps_a_byte_budget_and_older_resumes_read_the_store,
    every_name_has_one_label_set_and_its_help_and_type,
);

/// The text exposition as `series → value`, where a series is the name with its labels as
/// printed (`carcassonne_commands_total{outcome="accepted",code="none"}`). Comments are checked to name a
/// type for every family.
fn parse(text: &str) -> HashMap<String, f64> {
    let mut series = HashMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if line.starts_with('#') {
            continue;
        }
        let (key, value) = line.rsplit_once(' ').expect("`series value`");
        let value: f64 = value.parse().expect("a number");
        series.insert(key.to_string(), value);
    }
    series
}

async fn scrape(server: &TestServer) -> HashMap<String, f64> {
    let (status, body) = admin_http(server, "GET", "/metrics", "").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("# TYPE carcassonne_commands_total counter"),
        "{body}"
    );
    parse(&body)
}

fn get(m: &HashMap<String, f64>, series: &str) -> f64 {
    m.get(series).copied().unwrap_or(0.0)
}

async fn metrics_count_commands_refusals_resumes_and_closes(db: &TestDb) {
    let server = TestServer::start(db.config());
    let before = scrape(&server).await;
    let store = db.kind();
    assert_eq!(
        get(
            &before,
            r#"carcassonne_commands_total{outcome="accepted",code="none"}"#
        ),
        0.0
    );

    let created = create(&server, 2).await;
    let mut seats = join_seats(&server, &created).await;
    let moves = play(&mut seats, &mut [], &mut Rng::new(11), 6).await;
    assert_eq!(moves, 6);

    // Refused by the rules: the seat without a decision plays the other seat's move.
    let view = seats[0].view();
    let (player, legal) = pick_move(&view, &mut Rng::new(3)).expect("a move");
    let other = &mut seats[1 - usize::from(player)];
    let id = other.new_id();
    let out = other.command(&id, legal).await;
    assert!(
        matches!(&out, CommandOutcome::Rejected(e) if e.code == ErrorCode::Rule),
        "{out:?}"
    );
    // A repeated id: its first answer, counted as a duplicate.
    let (acked, seq) = seats[0].acks[0].clone();
    let out = seats[0].command(&acked, Command::Pass {}).await;
    assert!(
        matches!(out, CommandOutcome::Accepted { seq: s, .. } if s == seq),
        "{out:?}"
    );
    // Refused before reaching the match: no seat.
    let mut stranger = Connection::connect(&server.ws()).await.expect("connect");
    stranger.set_read_timeout(Some(READ_TIMEOUT));
    let out = stranger
        .command("x", Command::Pass {})
        .await
        .expect("answer");
    assert!(
        matches!(&out, CommandOutcome::Rejected(e) if e.code == ErrorCode::Unauthenticated),
        "{out:?}"
    );
    // A resume from the window, then a clean close.
    let now = seats[0].seq().expect("seq");
    let mut watcher = Connection::connect(&server.ws()).await.expect("connect");
    watcher.set_read_timeout(Some(READ_TIMEOUT));
    watcher
        .subscribe(created.match_id, Some(now - 2))
        .await
        .expect("subscribe");
    let last = watcher
        .wait_for(|m| matches!(m, ServerMessage::Diff { seq, .. } if *seq == now))
        .await;
    assert!(last.is_ok(), "{last:?}");
    let _ = watcher.close().await;
    let _ = stranger.close().await;

    // The closes are counted when the server's side of each connection ends: wait for them.
    let deadline = tokio::time::Instant::now() + READ_TIMEOUT;
    let after = loop {
        let m = scrape(&server).await;
        let gone = get(&m, r#"carcassonne_closes_total{code="none"}"#) >= 2.0
            && get(&m, "carcassonne_connections") <= 2.0;
        if gone || tokio::time::Instant::now() > deadline {
            break m;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let delta = |series: &str| get(&after, series) - get(&before, series);
    assert_eq!(
        delta(r#"carcassonne_commands_total{outcome="accepted",code="none"}"#),
        6.0
    );
    assert_eq!(
        delta(r#"carcassonne_commands_total{outcome="duplicate",code="none"}"#),
        1.0
    );
    assert_eq!(
        delta(r#"carcassonne_commands_total{outcome="refused",code="rule"}"#),
        1.0
    );
    assert_eq!(
        delta(r#"carcassonne_commands_total{outcome="refused",code="unauthenticated"}"#),
        1.0
    );
    assert_eq!(
        delta(r#"carcassonne_commands_total{outcome="refused",code="busy"}"#),
        0.0
    );
    assert_eq!(delta("carcassonne_command_ack_seconds_count"), 6.0);
    assert_eq!(
        delta(&format!(
            "carcassonne_store_batch_commands_sum{{store=\"{store}\"}}"
        )),
        6.0,
        "every accepted command was written once"
    );
    assert!(
        delta(&format!(
            "carcassonne_store_commit_seconds_count{{store=\"{store}\"}}"
        )) >= 1.0
    );
    // SQLite: every accepted command waited for a sync of the WAL, which the syncer timed.
    let syncs = delta(r#"carcassonne_store_sync_seconds_count{store="sqlite"}"#);
    let synced = delta(r#"carcassonne_store_sync_appends_sum{store="sqlite"}"#);
    if store == "sqlite" {
        assert!(
            (1.0..=synced).contains(&syncs),
            "{syncs} syncs, {synced} appends"
        );
        assert!(synced >= 6.0, "{synced}");
    } else {
        assert_eq!((syncs, synced), (0.0, 0.0));
    }
    assert_eq!(delta(r#"carcassonne_resumes_total{kind="window"}"#), 1.0);
    assert!(delta(r#"carcassonne_resumes_total{kind="snapshot"}"#) >= 2.0);
    assert!(delta(r#"carcassonne_closes_total{code="none"}"#) >= 2.0);
    assert!(delta("carcassonne_match_inbox_depth_count") >= 6.0);
    assert!(delta("carcassonne_outgoing_queue_depth_count") >= 6.0);
    assert_eq!(get(&after, "carcassonne_matches_in_memory"), 1.0);
    assert_eq!(get(&after, "carcassonne_connections"), 2.0, "the two seats");
    server.stop().await;
}

/// `--metrics-access`: `admin` wants the admin token, `open` wants none, `off` serves nothing;
/// refusals carry the JSON error body.
async fn metrics_access_follows_the_flag(db: &TestDb) {
    let server = TestServer::start(db.config());
    let (status, body) = http(&server, "GET", "/metrics", &[], "").await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains(r#""code":"bad_token""#), "{body}");
    let wrong = [("Authorization", "Bearer not-the-token")];
    assert_eq!(http(&server, "GET", "/metrics", &wrong, "").await.0, 401);
    server.stop().await;

    let mut config = db.config();
    config.admin.metrics_access = MetricsAccess::Open;
    let server = TestServer::start(config);
    let (status, body) = http(&server, "GET", "/metrics", &[], "").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        parse(&body).contains_key("carcassonne_connections"),
        "{body}"
    );
    server.stop().await;

    let mut config = db.config();
    config.admin.metrics_access = MetricsAccess::Off;
    let server = TestServer::start(config);
    let (status, body) = admin_http(&server, "GET", "/metrics", "").await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains(r#""code":"unavailable""#), "{body}");
    server.stop().await;
}

/// The diff window is bounded by bytes (`--diff-window-bytes`) as well as by
/// count. 12 moves (≈ 1 KB a diff) are more than the default 4 KiB holds although the count
/// (64) would keep them: a resume from the last diff is served from memory, a resume from 0
/// from the store, and both bring every diff in order.
async fn the_window_keeps_a_byte_budget_and_older_resumes_read_the_store(db: &TestDb) {
    let mut config = db.config();
    config.matches.diff_window = 64;
    config.matches.diff_window_bytes = 4096;
    let server = TestServer::start(config);
    let created = create(&server, 2).await;
    let mut seats = join_seats(&server, &created).await;
    let moves = play(&mut seats, &mut [], &mut Rng::new(0x5eed_0714), 12).await;
    assert_eq!(moves, 12);
    let now = seats[0].seq().expect("seq");
    let before = scrape(&server).await;
    for since in [now - 1, 0] {
        let mut watcher = Connection::connect(&server.ws()).await.expect("connect");
        watcher.set_read_timeout(Some(READ_TIMEOUT));
        watcher
            .subscribe(created.match_id, Some(since))
            .await
            .expect("subscribe");
        for want in since + 1..=now {
            match watcher.next_message().await.expect("read") {
                Some(ServerMessage::Diff { seq, .. }) => assert_eq!(seq, want, "from {since}"),
                other => panic!("resuming from {since}: expected diff {want}, got {other:?}"),
            }
        }
        let _ = watcher.close().await;
    }
    let after = scrape(&server).await;
    let delta = |series: &str| get(&after, series) - get(&before, series);
    assert_eq!(delta(r#"carcassonne_resumes_total{kind="window"}"#), 1.0);
    assert_eq!(delta(r#"carcassonne_resumes_total{kind="store"}"#), 1.0);
    assert_eq!(delta(r#"carcassonne_resumes_total{kind="snapshot"}"#), 0.0);
    server.stop().await;
}

/// The label keys of a sample line (`name{a="x",b="y"} 1` → `{a, b}`), and its name. Label values
/// here hold no `,`, `=` or `}` (the test would misread them, and fail).
fn sample_keys(line: &str) -> (&str, BTreeSet<&str>) {
    let (series, _) = line.rsplit_once(' ').expect("`series value`");
    match series.split_once('{') {
        None => (series, BTreeSet::new()),
        Some((name, labels)) => {
            let labels = labels.strip_suffix('}').expect("labels end with `}`");
            let keys = labels
                .split(',')
                .map(|kv| kv.split_once('=').expect("`key=\"value\"`").0)
                .collect();
            (name, keys)
        }
    }
}

/// The family a sample belongs to: a histogram's `_bucket`, `_sum` and `_count` samples are its
/// family's.
fn family<'a>(name: &'a str, types: &BTreeMap<&str, &str>) -> &'a str {
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(base) = name.strip_suffix(suffix)
            && types.get(base) == Some(&"histogram")
        {
            return base;
        }
    }
    name
}

/// After some activity (a match played, a refusal, a close), the scrape follows the Prometheus
/// conventions: every sample name has one set of label keys over all its samples, every family
/// has a `# HELP` and a `# TYPE`, and the process and build-info series are there (Linux).
async fn every_name_has_one_label_set_and_its_help_and_type(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let mut seats = join_seats(&server, &created).await;
    assert_eq!(play(&mut seats, &mut [], &mut Rng::new(5), 4).await, 4);
    let view = seats[0].view();
    let (player, legal) = pick_move(&view, &mut Rng::new(3)).expect("a move");
    let other = &mut seats[1 - usize::from(player)];
    let id = other.new_id();
    let out = other.command(&id, legal).await;
    assert!(matches!(out, CommandOutcome::Rejected(_)), "{out:?}");
    let mut watcher = Connection::connect(&server.ws()).await.expect("connect");
    watcher.set_read_timeout(Some(READ_TIMEOUT));
    watcher
        .subscribe(created.match_id, Some(0))
        .await
        .expect("subscribe");
    let _ = watcher.close().await;

    let (status, text) = admin_http(&server, "GET", "/metrics", "").await;
    assert_eq!(status, 200, "{text}");
    let mut types = BTreeMap::new();
    let mut helps = BTreeSet::new();
    for line in text.lines() {
        let mut words = line.splitn(4, ' ');
        match (words.next(), words.next(), words.next(), words.next()) {
            (Some("#"), Some("TYPE"), Some(name), Some(kind)) => {
                assert!(types.insert(name, kind).is_none(), "two TYPEs of {name}");
            }
            (Some("#"), Some("HELP"), Some(name), Some(_)) => {
                assert!(helps.insert(name), "two HELPs of {name}");
            }
            _ => {}
        }
    }
    let mut keys: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (name, these) = sample_keys(line);
        let family = family(name, &types);
        assert!(types.contains_key(family), "no TYPE for {family} ({line})");
        assert!(helps.contains(family), "no HELP for {family} ({line})");
        match keys.get(name) {
            Some(first) => assert_eq!(first, &these, "{name}: two label sets ({line})\n{text}"),
            None => {
                keys.insert(name, these);
            }
        }
    }
    assert!(keys.contains_key("carcassonne_commands_total"), "{text}");
    let build = format!(
        "carcassonne_build_info{{version=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION")
    );
    assert!(text.lines().any(|l| l == build), "{build} in\n{text}");
    if cfg!(target_os = "linux") {
        for name in server::process_metrics::SERIES {
            assert_eq!(keys.get(name), Some(&BTreeSet::new()), "{name} in\n{text}");
        }
    }
    server.stop().await;
}
