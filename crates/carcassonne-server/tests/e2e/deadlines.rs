//! Deadlines over the wire: a pawn choice of a player who is not the active one
//! has a deadline in the view; when nobody answers, the server applies the default as a command
//! of its own (stored, logged as the server's, named so on its diff and in the match's history,
//! replayed); an answer in time cancels it; a restart
//! keeps the original time. Also: an unchanged pawn preference is refused (nothing stored), and
//! client command ids may not take the server's prefix. On SQLite and on Postgres.

use crate::common::*;
use client::CommandOutcome;
use protocol::{CreateMatch, ErrorCode, Seq};
use rules::{Colour, Command, Decision, Event, Modules, Pawn, PawnPreference, Pos, Rotation};
use serde_json::Value;
use std::time::Duration;

/// Wall-clock now in Unix milliseconds, as the server's deadlines are.
fn now_ms() -> u64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970");
    u64::try_from(d.as_millis()).expect("fits")
}

fn config(db: &TestDb, timeout_ms: u64) -> server::Config {
    let mut c = db.config();
    c.matches.decision_timeout = std::time::Duration::from_millis(timeout_ms);
    c
}

/// A two-player match with The Messages and a forced pile in which blue's road is closed in
/// red's turn (red's third tile): blue (seat 1) must then choose a pawn for 4 points.
async fn create_messages_match(server: &TestServer) -> protocol::MatchCreated {
    let tiles = ["base/W", "base/U", "base/W", "base/U", "base/U", "base/U"];
    let req = CreateMatch {
        players: vec![Colour::Red, Colour::Blue],
        modules: Modules {
            messages: true,
            ..Default::default()
        },
        meeples: None,
        draw_order: Some(tiles.iter().map(|t| t.to_string()).collect()),
        clock: None,
    };
    client::create_match(&server.http(), &req)
        .await
        .expect("create match")
}

async fn accepted(f: &mut Follower, command: Command) -> Seq {
    let id = f.new_id();
    match f.command(&id, command.clone()).await {
        CommandOutcome::Accepted { seq, .. } => seq,
        CommandOutcome::Rejected(e) => panic!("{command:?} was refused: {e:?}"),
    }
}

fn place(x: i32, y: i32) -> Command {
    Command::PlaceTile {
        pos: Pos::new(x, y),
        rotation: Rotation::ALL[0],
    }
}

/// The deadlines in a mirrored view, as (player, at).
fn deadlines(view: &Value) -> Vec<(u64, u64)> {
    view.get("deadlines")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|d| {
                    let n = |k: &str| d[k].as_u64().expect("a number");
                    (n("player"), n("at"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Plays red's and blue's first tiles and red's closing tile: the road between two villages
/// with blue's highwayman closes in red's turn, and blue's pawn choice opens. Returns the seq
/// at which it opened and the wall-clock window around that command (before sending, after
/// every follower saw its diff).
async fn open_blues_choice(seats: &mut [Follower], watchers: &mut [Follower]) -> (Seq, u64, u64) {
    for f in seats.iter_mut().chain(watchers.iter_mut()) {
        f.sync_first().await;
    }
    let steps: [(usize, Command); 5] = [
        (0, place(-1, 0)),
        (0, Command::Pass {}),
        (1, place(1, 0)),
        (
            1,
            Command::PlaceMeeple {
                target: "road:E".parse().expect("target"),
                figure: Default::default(),
            },
        ),
        (0, place(2, 0)),
    ];
    for (seat, command) in steps {
        let seq = accepted(&mut seats[seat], command).await;
        for f in seats.iter_mut().chain(watchers.iter_mut()) {
            f.sync_to(seq).await;
        }
        assert!(
            deadlines(seats[0].mirror.view().expect("view")).is_empty(),
            "no deadline for the active player's decisions"
        );
    }
    let before = now_ms();
    let seq = accepted(&mut seats[0], Command::Pass {}).await;
    for f in seats.iter_mut().chain(watchers.iter_mut()) {
        f.sync_to(seq).await;
    }
    let after = now_ms();
    let view = seats[1].view();
    assert!(
        matches!(
            view.decisions.as_slice(),
            [Decision::ChoosePawn {
                player: 1,
                points: 4,
                ..
            }]
        ),
        "blue's pawn choice is open in red's turn: {:?}",
        view.decisions
    );
    (seq, before, after)
}

async fn admin_log(server: &TestServer, id: uuid::Uuid) -> Value {
    admin_json(server, &format!("/api/admin/matches/{id}/log")).await
}

/// The commands of the log that the server sent.
fn server_commands(log: &Value) -> Vec<Value> {
    log["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .filter(|c| c["origin"] == "server")
        .cloned()
        .collect()
}

/// When the server stored a logged command, in Unix milliseconds.
fn stored_at(c: &Value) -> u64 {
    let t = c["created_at"].as_str().expect("created_at");
    let t = chrono::DateTime::parse_from_rfc3339(t).expect("an RFC 3339 time");
    u64::try_from(t.timestamp_millis()).expect("after 1970")
}

/// Checks the diff at `seq` as the server's default for blue: the scoring pawn moved 4.
fn assert_default_applied(f: &Follower, seq: Seq, events_before: usize) {
    assert_eq!(f.seq(), Some(seq));
    let events = &f.events[events_before..];
    assert!(
        matches!(
            events.first(),
            Some(Event::PawnMoved {
                player: 1,
                pawn: Pawn::Scoring,
                from: 0,
                to: 4,
                ..
            })
        ),
        "the default moved blue's scoring pawn: {events:?}"
    );
    assert!(
        deadlines(f.mirror.view().expect("view")).is_empty(),
        "the deadline left the view"
    );
}

/// Nobody answers blue's pawn choice: at the deadline the server applies the default (the
/// scoring pawn) as its own command, logged as the server's; no ack goes to anyone.
async fn unanswered_choice_gets_the_default_at_the_deadline(db: &TestDb) {
    const TIMEOUT: u64 = 300;
    let server = TestServer::start(config(db, TIMEOUT));
    let created = create_messages_match(&server).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let mut watchers = vec![Follower::join(&server, id, None, None).await];
    let (seq, before, after) = open_blues_choice(&mut seats, &mut watchers).await;
    let found = deadlines(watchers[0].mirror.view().expect("view"));
    let [(1, at)] = found[..] else {
        panic!("one deadline, blue's: {found:?}");
    };
    assert!(
        (before + TIMEOUT..=after + TIMEOUT).contains(&at),
        "the deadline is the opening time plus the timeout: {at} not in {}..={}",
        before + TIMEOUT,
        after + TIMEOUT
    );
    let events_before = watchers[0].events.len();
    watchers[0].sync_to(seq + 1).await;
    let fired = now_ms();
    assert!(fired >= at, "fired at {fired}, before the deadline {at}");
    assert_default_applied(&watchers[0], seq + 1, events_before);
    seats[1].sync_to(seq + 1).await;
    assert_eq!(seats[1].mirror.view(), watchers[0].mirror.view());

    let log = admin_log(&server, id).await;
    let by_server = server_commands(&log);
    assert_eq!(by_server.len(), 1, "{log}");
    let c = &by_server[0];
    assert_eq!(c["seq"], seq + 1);
    assert_eq!(c["seat"], 1);
    assert_eq!(c["command_id"], format!("server:deadline:{}", seq + 1));
    assert_eq!(
        c["command"],
        serde_json::json!({"type": "choose_pawn", "pawn": "scoring"})
    );
    let applied = stored_at(c);
    assert!(
        (at..at + 5_000).contains(&applied),
        "applied at {applied}, the deadline was {at}"
    );
    // Its diff says the server made the move (a resume's copy too), and so does the history.
    let mut late = client::Connection::connect(&server.ws())
        .await
        .expect("connect");
    late.subscribe(id, Some(seq)).await.expect("subscribe");
    let diff = late
        .wait_for(|m| matches!(m, protocol::ServerMessage::Diff { .. }))
        .await
        .expect("the diff");
    assert!(
        matches!(diff, protocol::ServerMessage::Diff { seq: s, by_server: Some(protocol::ServerMove::Deadline), .. } if s == seq + 1),
        "{diff:?}"
    );
    let (status, body) = http(&server, "GET", &format!("/api/matches/{id}/log"), &[], "").await;
    assert_eq!(status, 200, "{body}");
    let history: protocol::MatchLog = serde_json::from_str(&body).expect("a match log");
    let last = history.entries.last().expect("an entry");
    assert_eq!(
        (last.seq, last.seat, last.by_server),
        (seq + 1, Some(1), Some(protocol::ServerMove::Deadline))
    );
    // The match goes on: blue's turn, and the server's snapshot agrees with the mirrors.
    let (s, view) = server_view(&server, id).await;
    assert_eq!(s, seq + 1);
    assert_eq!(watchers[0].mirror.view(), Some(&view));
    assert_eq!(view["active"], 1);
}

/// Blue answers in time: the deadline leaves the view with the answer, and nothing fires.
async fn answer_in_time_cancels_the_deadline(db: &TestDb) {
    const TIMEOUT: u64 = 1_500;
    let server = TestServer::start(config(db, TIMEOUT));
    let created = create_messages_match(&server).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let (seq, _, _) = open_blues_choice(&mut seats, &mut []).await;
    let found = deadlines(seats[0].mirror.view().expect("view"));
    let [(1, at)] = found[..] else {
        panic!("one deadline, blue's: {found:?}");
    };
    let answer = Command::ChoosePawn {
        pawn: Pawn::Messenger,
    };
    let answered = accepted(&mut seats[1], answer).await;
    assert_eq!(answered, seq + 1);
    for f in seats.iter_mut() {
        f.sync_to(answered).await;
        assert!(deadlines(f.mirror.view().expect("view")).is_empty());
    }
    // Past the old deadline, nothing more happened.
    let wait = (at + 400).saturating_sub(now_ms());
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let (s, view) = server_view(&server, id).await;
    assert_eq!(s, answered, "no command after the answer");
    assert!(deadlines(&view).is_empty());
    let log = admin_log(&server, id).await;
    assert!(server_commands(&log).is_empty(), "{log}");
}

/// A restart while blue's deadline is pending: the recovered match shows the same deadline (not
/// reset to restart + timeout) and fires it at about the original time. Resuming clients get the
/// stored diffs, which give the same view as the live ones.
async fn restart_keeps_a_pending_deadline(db: &TestDb) {
    const TIMEOUT: u64 = 3_000;
    let server = TestServer::start(config(db, TIMEOUT));
    let created = create_messages_match(&server).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let mut watchers = vec![Follower::join(&server, id, None, None).await];
    // A spectator that stays at seq 0 (the diffs wait unread on its old socket).
    let mut lagger = Follower::join(&server, id, None, None).await;
    lagger.sync_first().await;
    assert_eq!(lagger.seq(), Some(0));
    let (seq, _, _) = open_blues_choice(&mut seats, &mut watchers).await;
    let found = deadlines(watchers[0].mirror.view().expect("view"));
    let [(1, at)] = found[..] else {
        panic!("one deadline, blue's: {found:?}");
    };
    let live_view = watchers[0].mirror.view().cloned();
    // Half the time passes, then the server dies.
    tokio::time::sleep(Duration::from_millis(TIMEOUT / 2)).await;
    server.kill().await;

    let server = TestServer::start(config(db, TIMEOUT));
    // From seq 0: every diff read back from the store, the deadline's ops included.
    lagger.reconnect(&server, None).await;
    lagger.sync_to(seq).await;
    assert_eq!(lagger.snapshots, 1, "resumed from the store's diffs");
    assert_eq!(
        lagger.mirror.view().cloned(),
        live_view,
        "stored = live diffs"
    );
    let (s, view) = server_view(&server, id).await;
    assert_eq!(s, seq, "not fired yet");
    assert_eq!(deadlines(&view), [(1, at)], "the deadline was not reset");
    // The live watcher comes back and waits for the default.
    watchers[0].reconnect(&server, None).await;
    let events_before = watchers[0].events.len();
    watchers[0].sync_to(seq + 1).await;
    let fired = now_ms();
    assert!(fired >= at, "fired at {fired}, before the deadline {at}");
    assert_default_applied(&watchers[0], seq + 1, events_before);
    lagger.sync_to(seq + 1).await;
    assert_eq!(lagger.mirror.view(), watchers[0].mirror.view());
    let log = admin_log(&server, id).await;
    let by_server = server_commands(&log);
    assert_eq!(by_server.len(), 1, "{log}");
    // The stored time of the server's command: at the original deadline, not one reset by the
    // restart (which would be at least TIMEOUT / 2 later).
    let applied = stored_at(&by_server[0]);
    assert!(
        (at..at + TIMEOUT / 2 - 100).contains(&applied),
        "applied at {applied}, {} ms after the deadline {at}: reset by the restart?",
        applied.saturating_sub(at)
    );
    server.stop().await;

    // After one more restart the server's command replays like any other.
    let server = TestServer::start(config(db, TIMEOUT));
    let (s, again) = server_view(&server, id).await;
    assert_eq!(s, seq + 1);
    assert_eq!(Some(&again), watchers[0].mirror.view());
}

/// The server is down when the deadline passes: on start, recovery fires it at once.
async fn a_deadline_passed_while_down_fires_on_start(db: &TestDb) {
    const TIMEOUT: u64 = 1_000;
    let server = TestServer::start(config(db, TIMEOUT));
    let created = create_messages_match(&server).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let (seq, _, _) = open_blues_choice(&mut seats, &mut []).await;
    let found = deadlines(seats[0].mirror.view().expect("view"));
    let [(1, at)] = found[..] else {
        panic!("one deadline, blue's: {found:?}");
    };
    server.stop().await;
    // Down past the deadline (the graceful stop fired nothing: the log ends at `seq`).
    tokio::time::sleep(Duration::from_millis((at + 300).saturating_sub(now_ms()))).await;
    let started = now_ms();
    let server = TestServer::start(config(db, 60_000));
    // Recovery fires it, most likely before anyone subscribes: the snapshot is at `seq + 1`.
    let mut f = Follower::join(&server, id, None, None).await;
    f.sync_to(seq + 1).await;
    let view = f.mirror.view().expect("view");
    assert!(deadlines(view).is_empty());
    assert_eq!(view["messages"]["players"][1]["scoring"], 4, "{view}");
    assert!(
        now_ms() < started + 10_000,
        "fired at once, with the match's own timeout (not the new server's 60 s)"
    );
    let log = admin_log(&server, id).await;
    assert_eq!(server_commands(&log).len(), 1, "{log}");
}

/// How many rows of `matches` have the id and a `wake_at` meeting `cond` (0 or 1), through a
/// no-op update (the harness runs statements, not queries).
async fn wake_is(db: &TestDb, id: uuid::Uuid, cond: &str) -> u64 {
    db.execute(&format!(
        "UPDATE matches SET wake_at = wake_at WHERE id = '{id}' AND wake_at {cond}"
    ))
    .await
}

/// Lazy recovery: the stored wake time is the pending deadline, written with
/// the command that opened it. After a restart without warm-up, the background recovery loads
/// that match (and no other) by it, and the deadline fires with no client touching the match;
/// the append of the server's command clears the wake time.
async fn a_pending_deadline_fires_after_a_restart_untouched(db: &TestDb) {
    const TIMEOUT: u64 = 1_500;
    let mut c = config(db, TIMEOUT);
    c.matches.warm_up = 0;
    let server = TestServer::start(c.clone());
    let created = create_messages_match(&server).await;
    let id = created.match_id;
    let other = create(&server, 2).await;
    assert_eq!(wake_is(db, other.match_id, "IS NULL").await, 1);
    let mut seats = join_seats(&server, &created).await;
    let (seq, _, _) = open_blues_choice(&mut seats, &mut []).await;
    let found = deadlines(seats[0].mirror.view().expect("view"));
    let [(1, at)] = found[..] else {
        panic!("one deadline, blue's: {found:?}");
    };
    assert_eq!(
        wake_is(db, id, &format!("= {at}")).await,
        1,
        "wake_at = {at}"
    );
    server.kill().await;

    let server = TestServer::start(c);
    let log = wait_server_command(&server, id, now_ms() + TIMEOUT + 15_000).await;
    let by_server = server_commands(&log);
    assert_eq!(by_server.len(), 1, "{log}");
    assert_eq!(by_server[0]["seq"], seq + 1);
    assert!(stored_at(&by_server[0]) >= at, "{log}");
    assert_eq!(
        wake_is(db, id, "IS NULL").await,
        1,
        "cleared with the append"
    );
    assert_eq!(
        in_memory(&server).await,
        1,
        "only the match with a deadline"
    );
    server.stop().await;
}

/// The admin stats' `matches_in_memory`.
async fn in_memory(server: &TestServer) -> Value {
    admin_json(server, "/api/admin/stats").await["matches_in_memory"].clone()
}

/// Polls the admin log until the server has applied a command of its own.
async fn wait_server_command(server: &TestServer, id: uuid::Uuid, until: u64) -> Value {
    loop {
        let log = admin_log(server, id).await;
        if !server_commands(&log).is_empty() {
            return log;
        }
        assert!(now_ms() < until, "the deadline did not fire: {log}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An idle match whose deadline is more than `--match-idle` away leaves memory; the registry's
/// waker loads it at the deadline, which fires with no client touching the match.
async fn a_far_deadline_leaves_memory_and_still_fires(db: &TestDb) {
    const TIMEOUT: u64 = 4_000;
    let mut c = config(db, TIMEOUT);
    c.matches.match_idle = Duration::from_millis(300);
    let server = TestServer::start(c);
    let created = create_messages_match(&server).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let (seq, _, _) = open_blues_choice(&mut seats, &mut []).await;
    let found = deadlines(seats[0].mirror.view().expect("view"));
    let [(1, at)] = found[..] else {
        panic!("one deadline, blue's: {found:?}");
    };
    for f in seats.iter_mut() {
        f.conn.close().await.expect("close");
    }
    while in_memory(&server).await != 0 {
        assert!(
            now_ms() < at,
            "the idle match stayed in memory until its deadline"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = wait_server_command(&server, id, at + 15_000).await;
    let by_server = server_commands(&log);
    assert_eq!(by_server.len(), 1, "{log}");
    assert_eq!(by_server[0]["seq"], seq + 1);
    assert!(stored_at(&by_server[0]) >= at, "{log}");
    server.stop().await;
}

/// Lazy recovery of deadlines: after a restart a match whose deadline is more than the
/// recovery's few seconds away stays out of memory (the waker has it), yet fires on time with no
/// client touching it; another one that a client touches before its deadline loads at once and
/// fires by its own timers, once (the waker's later entry finds it live).
async fn a_far_deadline_stays_out_of_memory_after_a_restart(db: &TestDb) {
    // Beyond the recovery's horizon (5 s) even after this test's set-up and restart.
    const TIMEOUT: u64 = 9_000;
    let mut c = config(db, TIMEOUT);
    c.matches.warm_up = 0;
    let server = TestServer::start(c.clone());
    let mut opened = Vec::new();
    for _ in 0..2 {
        let created = create_messages_match(&server).await;
        let mut seats = join_seats(&server, &created).await;
        let (seq, _, _) = open_blues_choice(&mut seats, &mut []).await;
        let found = deadlines(seats[0].mirror.view().expect("view"));
        let [(1, at)] = found[..] else {
            panic!("one deadline, blue's: {found:?}");
        };
        opened.push((created.match_id, seq, at));
    }
    server.kill().await;

    let server = TestServer::start(c);
    let restarted = now_ms();
    let [(untouched, seq_u, at_u), (touched, seq_t, at_t)] = opened[..] else {
        unreachable!()
    };
    assert!(
        at_u.min(at_t) > restarted + 6_000,
        "set-up too slow for the test: deadlines {at_u}, {at_t}, restart at {restarted}"
    );
    let (status, body) = http(&server, "GET", "/healthz", &[], "").await;
    assert_eq!(status, 200, "{body}");
    // Recovery has run (it lists the wake times at once) and loaded neither.
    while now_ms() < restarted + 1_500 {
        assert_eq!(
            in_memory(&server).await,
            0,
            "a far deadline loaded at start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A client touches one match: it loads, with its deadline unchanged.
    let mut watcher = Follower::join(&server, touched, None, None).await;
    watcher.sync_to(seq_t).await;
    assert_eq!(deadlines(watcher.mirror.view().expect("view")), [(1, at_t)]);
    assert_eq!(in_memory(&server).await, 1, "only the touched match");
    // The untouched one fires at its time, loaded by the waker.
    let log = wait_server_command(&server, untouched, at_u + 15_000).await;
    let by_server = server_commands(&log);
    assert_eq!(by_server.len(), 1, "{log}");
    assert_eq!(by_server[0]["seq"], seq_u + 1);
    let applied = stored_at(&by_server[0]);
    assert!(
        (at_u..at_u + 3_000).contains(&applied),
        "applied at {applied}, the deadline was {at_u}"
    );
    // The touched one fires by its own timers, once.
    let events_before = watcher.events.len();
    watcher.sync_to(seq_t + 1).await;
    assert!(now_ms() >= at_t);
    assert_default_applied(&watcher, seq_t + 1, events_before);
    tokio::time::sleep(Duration::from_millis(
        (at_t.max(at_u) + 500).saturating_sub(now_ms()),
    ))
    .await;
    let log = admin_log(&server, touched).await;
    let by_server = server_commands(&log);
    assert_eq!(by_server.len(), 1, "{log}");
    let applied = stored_at(&by_server[0]);
    assert!(
        (at_t..at_t + 3_000).contains(&applied),
        "applied at {applied}, the deadline was {at_t}"
    );
    server.stop().await;
}

/// M3: setting the preference one already has is refused (`unchanged`) and stores nothing; a
/// client's command id may not start with the server's prefix.
async fn unchanged_preference_and_server_ids_are_refused(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create_messages_match(&server).await;
    let mut seats = join_seats(&server, &created).await;
    seats[0].sync_first().await;
    let preference = Some(PawnPreference::Messenger);
    let seq = accepted(&mut seats[0], Command::SetPawnPreference { preference }).await;
    for (id, preference) in [("again", preference), ("none", None)] {
        let out = if id == "none" {
            // Clearing when none is set is unchanged too (seat 1 has none).
            seats[1].sync_first().await;
            seats[1]
                .command(id, Command::SetPawnPreference { preference })
                .await
        } else {
            seats[0]
                .command(id, Command::SetPawnPreference { preference })
                .await
        };
        let CommandOutcome::Rejected(e) = out else {
            panic!("an unchanged preference is refused: {out:?}");
        };
        assert_eq!(e.code, ErrorCode::Rule);
        assert_eq!(e.rule_code.as_deref(), Some("unchanged"));
        assert_eq!(e.rule.as_deref(), Some("M3"));
    }
    let out = seats[0]
        .command("server:deadline:9", Command::Pass {})
        .await;
    let CommandOutcome::Rejected(e) = out else {
        panic!("the server's prefix is refused: {out:?}");
    };
    assert_eq!(e.code, ErrorCode::Malformed);
    let (s, _) = server_view(&server, created.match_id).await;
    assert_eq!(s, seq, "nothing stored");
    // Another preference is still accepted.
    let preference = Some(PawnPreference::Scoring);
    let next = accepted(&mut seats[0], Command::SetPawnPreference { preference }).await;
    assert_eq!(next, seq + 1);
}

on_both_stores!(
    unanswered_choice_gets_the_default_at_the_deadline,
    answer_in_time_cancels_the_deadline,
    restart_keeps_a_pending_deadline,
    a_deadline_passed_while_down_fires_on_start,
    a_pending_deadline_fires_after_a_restart_untouched,
    a_far_deadline_leaves_memory_and_still_fires,
    a_far_deadline_stays_out_of_memory_after_a_restart,
    unchanged_preference_and_server_ids_are_refused
);
