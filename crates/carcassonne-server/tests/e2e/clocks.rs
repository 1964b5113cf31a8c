//! Game clocks over the wire: the clocks in the view (only the active player's
//! runs, the increment comes at the end of each turn); a player whose bank runs out gets the
//! default as the server's command (`server:clock:<seq>`), is marked away and has later turns
//! played at once (`server:away:<seq>`) until a command from their seat brings them back; a
//! turn-based clock keeps its time across a restart, and a bank that ran out while the server was
//! down fires at once on start; bad settings are refused. On SQLite and on Postgres.
//!
//! The smallest bank a match accepts is 10 s, so the tests that let a clock run out wait that
//! long (the tests run in parallel).

use crate::common::*;
use client::CommandOutcome;
use protocol::admin::AdminMatchSummary;
use protocol::{ClockSettings, CreateMatch, ErrorBody, ErrorCode, MatchCreated, Seq};
use rules::{Colour, Command, PlayerId};
use serde_json::Value;
use std::time::Duration;

const BANK: u64 = 10_000;
const INCREMENT: u64 = 2_000;

/// Wall-clock now in Unix milliseconds, as the server's clocks are.
fn now_ms() -> u64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970");
    u64::try_from(d.as_millis()).expect("fits")
}

async fn create_clocked(server: &TestServer, bank_ms: u64, increment_ms: u64) -> MatchCreated {
    let req = CreateMatch {
        players: vec![Colour::Red, Colour::Blue],
        modules: Default::default(),
        meeples: None,
        draw_order: None,
        clock: Some(ClockSettings {
            bank_ms,
            increment_ms,
        }),
    };
    client::create_match(&server.http(), &req)
        .await
        .expect("create match")
}

/// One player's clock in a mirrored view: (remaining_ms, running_since).
fn clock(view: &Value, player: usize) -> (u64, Option<u64>) {
    let c = &view["clocks"][player];
    assert_eq!(c["player"], player, "clocks in seat order: {view}");
    (
        c["remaining_ms"].as_u64().expect("remaining_ms"),
        c["running_since"].as_u64(),
    )
}

fn away(view: &Value) -> Vec<u64> {
    view.get("away")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|p| p.as_u64().expect("a seat")).collect())
        .unwrap_or_default()
}

/// Plays the active player's whole turn with random legal moves (their tile, then their
/// meeple or pass); returns the seq of their last command. Every follower is synced.
async fn play_turn(seats: &mut [Follower], rng: &mut Rng) -> Seq {
    let view = seats[0].view();
    let player = view.active;
    let turn = view.turn;
    let mut seq = seats[0].seq().expect("synced");
    loop {
        let view = seats[0].view();
        if view.turn != turn || view.finished {
            return seq;
        }
        let (p, cmd) = pick_move(&view, rng).expect("a decision is open");
        assert_eq!(p, player, "only the active player decides here");
        let f = &mut seats[usize::from(p)];
        let id = f.new_id();
        seq = match f.command(&id, cmd).await {
            CommandOutcome::Accepted { seq, .. } => seq,
            CommandOutcome::Rejected(e) => panic!("a legal move was refused: {e:?}"),
        };
        for f in seats.iter_mut() {
            f.sync_to(seq).await;
        }
    }
}

/// Reads until `f`'s mirror shows `player` active with a decision open (the server played
/// what came before).
async fn wait_for_turn_of(f: &mut Follower, player: PlayerId) {
    f.sync_first().await;
    loop {
        let v = f.view();
        if v.active == player && !v.decisions.is_empty() {
            return;
        }
        let next = f.seq().expect("synced") + 1;
        f.sync_to(next).await;
    }
}

async fn summary(server: &TestServer, id: uuid::Uuid) -> AdminMatchSummary {
    let v = admin_json(server, &format!("/api/admin/matches/{id}")).await;
    serde_json::from_value(v).expect("a summary")
}

/// The logged commands after `after`, as (seq, seat, command_id, origin).
async fn log_after(server: &TestServer, id: uuid::Uuid, after: Seq) -> Vec<(Seq, u64, String)> {
    let log = admin_json(server, &format!("/api/admin/matches/{id}/log")).await;
    log["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .filter(|c| c["seq"].as_u64().expect("seq") > after)
        .map(|c| {
            let command_id = c["command_id"].as_str().expect("id").to_string();
            let by_server = command_id.starts_with("server:");
            assert_eq!(
                c["origin"],
                if by_server { "server" } else { "player" },
                "{c}"
            );
            (
                c["seq"].as_u64().expect("seq"),
                c["seat"].as_u64().expect("seat"),
                command_id,
            )
        })
        .collect()
}

/// When the server stored a logged command, in Unix milliseconds.
async fn stored_at(server: &TestServer, id: uuid::Uuid, seq: Seq) -> u64 {
    let log = admin_json(server, &format!("/api/admin/matches/{id}/log")).await;
    let c = log["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .find(|c| c["seq"] == seq)
        .cloned()
        .expect("logged");
    let t = c["created_at"].as_str().expect("created_at");
    let t = chrono::DateTime::parse_from_rfc3339(t).expect("an RFC 3339 time");
    u64::try_from(t.timestamp_millis()).expect("after 1970")
}

/// The clocks in the view; the increment at the end of a turn; red's bank runs out: the
/// default as the server's command, marked away, the next turn played at once; red comes back
/// with a command the rules refuse, and plays again.
async fn a_player_times_out_is_played_for_and_comes_back(db: &TestDb) {
    let server = TestServer::start(db.config());
    let before_create = now_ms();
    let created = create_clocked(&server, BANK, INCREMENT).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    for f in seats.iter_mut() {
        f.sync_first().await;
    }
    let mut rng = Rng::new(0xc10c);

    // Red's clock runs from the match's creation; blue's is stopped.
    let v = seats[0].mirror.view().expect("view").clone();
    let (red, since) = clock(&v, 0);
    assert_eq!(red, BANK);
    let since = since.expect("red's clock runs");
    assert!((before_create..=now_ms()).contains(&since), "{v}");
    assert_eq!(clock(&v, 1), (BANK, None));
    assert!(away(&v).is_empty());

    // Red plays a turn: the time spent is charged, the increment added; blue's clock runs.
    let seq = play_turn(&mut seats, &mut rng).await;
    let v = seats[1].mirror.view().expect("view").clone();
    let red_end = stored_at(&server, id, seq).await;
    let (red, running) = clock(&v, 0);
    assert_eq!(running, None, "red's clock stopped: {v}");
    assert_eq!(
        red,
        BANK - (red_end - since) + INCREMENT,
        "bank - time spent + increment: {v}"
    );
    assert_eq!(clock(&v, 1), (BANK, Some(red_end)), "{v}");

    // Blue plays; red's turn comes and red does nothing until the flag falls.
    let seq = play_turn(&mut seats, &mut rng).await;
    let v = seats[0].mirror.view().expect("view").clone();
    let (red_left, red_since) = clock(&v, 0);
    let flag = red_since.expect("red's clock runs") + red_left;
    let mut watcher = Follower::join(&server, id, None, None).await;
    wait_for_turn_of(&mut watcher, 1).await;
    let fired = now_ms();
    assert!(
        fired >= flag,
        "played at {fired}, before the flag at {flag}"
    );
    let log = log_after(&server, id, seq).await;
    let ids: Vec<&str> = log.iter().map(|(_, _, c)| c.as_str()).collect();
    assert_eq!(
        ids,
        [
            format!("server:clock:{}", seq + 1),
            format!("server:away:{}", seq + 2)
        ],
        "the flag's default, then red's next decision at once, as away"
    );
    assert!(log.iter().all(|&(_, seat, _)| seat == 0));
    let applied = stored_at(&server, id, seq + 1).await;
    assert!(
        (flag..flag + 5_000).contains(&applied),
        "{applied} vs {flag}"
    );
    let v = watcher.mirror.view().expect("view").clone();
    assert_eq!(away(&v), [0], "{v}");
    assert_eq!(clock(&v, 0), (INCREMENT, None), "empty bank + increment");
    assert!(summary(&server, id).await.players[0].away_since.is_some());

    // Blue plays: red's next turn is played at once.
    for f in seats.iter_mut() {
        f.sync_to(seq + 2).await;
    }
    let seq = play_turn(&mut seats, &mut rng).await;
    watcher.sync_to(seq).await;
    wait_for_turn_of(&mut watcher, 1).await;
    let log = log_after(&server, id, seq).await;
    assert!(
        !log.is_empty()
            && log
                .iter()
                .all(|(_, seat, c)| *seat == 0 && c.starts_with("server:away:")),
        "{log:?}"
    );
    let seq = seq + log.len() as Seq;
    for f in seats.iter_mut() {
        f.sync_to(seq).await;
    }

    // Red comes back: any command from the seat, here one the rules refuse (not red's turn).
    let out = seats[0].command("back", Command::Pass {}).await;
    let CommandOutcome::Rejected(e) = out else {
        panic!("not red's turn: {out:?}");
    };
    assert_eq!(e.code, ErrorCode::Rule);
    assert!(summary(&server, id).await.players[0].away_since.is_none());
    // Blue plays; red's turn is red's again: nothing is played for red.
    let seq = play_turn(&mut seats, &mut rng).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (s, v) = server_view(&server, id).await;
    assert_eq!(s, seq, "nothing played for red");
    assert_eq!(v["active"], 0);
    assert!(clock(&v, 0).1.is_some(), "red's clock runs");
    assert_eq!(away(&v), [0], "shown until red's next accepted command");
    let seq = play_turn(&mut seats, &mut rng).await;
    let v = seats[1].mirror.view().expect("view").clone();
    assert!(away(&v).is_empty(), "{v}");
    watcher.sync_to(seq).await;
    assert_eq!(watcher.mirror.view(), seats[1].mirror.view());
}

/// A turn-based clock across restarts: a kill keeps blue's time (not reset to the bank, not
/// restarted at the restart), and a bank that ran out while the server was down fires at once
/// when it starts again.
async fn a_clock_survives_a_restart(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create_clocked(&server, BANK, 0).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    for f in seats.iter_mut() {
        f.sync_first().await;
    }
    let mut rng = Rng::new(0x7e57);
    let seq = play_turn(&mut seats, &mut rng).await;
    let live = seats[1].mirror.view().expect("view").clone();
    let (blue, since) = clock(&live, 1);
    let since = since.expect("blue's clock runs");
    assert_eq!(blue, BANK);
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    server.kill().await;

    // Restarted at once: the same clocks, counted from the same instant.
    let server = TestServer::start(db.config());
    let (s, v) = server_view(&server, id).await;
    assert_eq!(s, seq);
    assert_eq!(v["clocks"], live["clocks"], "not reset by the restart");
    assert_eq!(v, live);
    server.stop().await;

    // Down past blue's flag: recovery plays blue's turn at once, marked away.
    let flag = since + BANK;
    tokio::time::sleep(Duration::from_millis((flag + 500).saturating_sub(now_ms()))).await;
    let started = now_ms();
    let server = TestServer::start(db.config());
    let mut f = Follower::join(&server, id, None, None).await;
    f.sync_to(seq + 1).await;
    wait_for_turn_of(&mut f, 0).await;
    let log = log_after(&server, id, seq).await;
    assert_eq!(log[0].2, format!("server:clock:{}", seq + 1), "{log:?}");
    assert!(log.iter().all(|(_, seat, _)| *seat == 1), "{log:?}");
    let applied = stored_at(&server, id, seq + 1).await;
    assert!(
        (started..started + 5_000).contains(&applied),
        "fired at once on start: {applied}, started {started}"
    );
    let v = f.mirror.view().expect("view").clone();
    assert_eq!(away(&v), [1], "{v}");
    assert_eq!(clock(&v, 1), (0, None), "no time left, no increment");
    assert!(summary(&server, id).await.players[1].away_since.is_some());
    // Red's clock runs from blue's last default.
    let last = log.last().expect("logged").0;
    let red_since = stored_at(&server, id, last).await;
    assert_eq!(clock(&v, 0).1, Some(red_since));
    server.stop().await;

    // Marks and clocks read back the same after another restart.
    let server = TestServer::start(db.config());
    let (_, again) = server_view(&server, id).await;
    assert_eq!(&again, f.mirror.view().expect("view"));
}

/// Clock settings out of bounds or malformed are refused with a clear error; good ones are
/// stored and shown; a match without a clock shows none.
async fn invalid_clock_settings_are_refused(db: &TestDb) {
    let server = TestServer::start(db.config());
    let day = 86_400_000_u64;
    for (clock, needle) in [
        (r#"{"bank_ms":9999,"increment_ms":0}"#, "clock.bank_ms"),
        (
            &*format!(r#"{{"bank_ms":{},"increment_ms":0}}"#, 30 * day + 1),
            "clock.bank_ms",
        ),
        (
            &*format!(r#"{{"bank_ms":60000,"increment_ms":{}}}"#, 7 * day + 1),
            "clock.increment_ms",
        ),
        (r#"{"bank_ms":60000}"#, "increment_ms"),
        (r#"{"bank_ms":60000,"increment_ms":0,"x":1}"#, "x"),
        (r#"{"bank_ms":-1,"increment_ms":0}"#, "-1"),
    ] {
        let body = format!(r#"{{"players":["red","blue"],"clock":{clock}}}"#);
        let (status, text) = http(&server, "POST", "/api/matches", &[], &body).await;
        assert_eq!(status, 400, "{body}: {text}");
        let e: ErrorBody = serde_json::from_str(&text).expect("an error body");
        assert_eq!(e.code, ErrorCode::Malformed, "{text}");
        assert!(e.message.contains(needle), "{needle} in {text}");
    }
    // The bounds themselves are fine: 3 days + 1 day, turn-based.
    let created = create_clocked(&server, 3 * day, day).await;
    let (_, v) = server_view(&server, created.match_id).await;
    assert_eq!(clock(&v, 0).0, 3 * day);
    assert_eq!(clock(&v, 1), (3 * day, None));
    let created = create_clocked(&server, 10_000, 7 * day).await;
    let (_, v) = server_view(&server, created.match_id).await;
    assert_eq!(clock(&v, 1), (10_000, None));
    let created = create_clocked(&server, 30 * day, 0).await;
    assert_eq!(summary(&server, created.match_id).await.seq, 0);
    let plain = create(&server, 2).await;
    let (_, v) = server_view(&server, plain.match_id).await;
    assert!(v.get("clocks").is_none(), "{v}");
    assert!(v.get("away").is_none(), "{v}");
}

/// An admin's away mark in a match with a clock: the player's turn is played at once.
async fn an_admin_away_mark_plays_the_turn_at_once(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create_clocked(&server, 60_000, 0).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    for f in seats.iter_mut() {
        f.sync_first().await;
    }
    let (status, body) = admin_http(
        &server,
        "POST",
        &format!("/api/admin/matches/{id}/away"),
        r#"{"seat":0}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    wait_for_turn_of(&mut seats[1], 1).await;
    let log = log_after(&server, id, 0).await;
    assert!(
        !log.is_empty()
            && log
                .iter()
                .all(|(_, seat, c)| *seat == 0 && c.starts_with("server:away:")),
        "{log:?}"
    );
    let v = seats[1].mirror.view().expect("view").clone();
    assert_eq!(away(&v), [0], "{v}");
}

/// A match that goes quiet between moves holds no view: the next command
/// builds the view at its seq from the game and the clocks, and diffs against it. The players'
/// mirrors, built from diffs only, must equal a fresh snapshot after every move: across quiet
/// spells, a refused command (the view it built is kept) and a restart (whose replay builds no
/// view). A rebuilt view that differed from the one clients hold (a stale seq, clocks missing)
/// would give patches that leave the mirrors wrong or fail to apply.
async fn a_quiet_match_rebuilds_its_view_for_the_next_diff(db: &TestDb) {
    let mut config = db.config();
    // Quiet after 300 ms (the quiet time is at most `--match-idle`); the players stay
    // subscribed, so the match stays in memory.
    config.matches.match_idle = Duration::from_millis(300);
    let server = TestServer::start(config.clone());
    let created = create_clocked(&server, 60_000, INCREMENT).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let mut rng = Rng::new(0x5eed_0014);
    async fn quiet_move(
        server: &TestServer,
        id: uuid::Uuid,
        seats: &mut [Follower],
        rng: &mut Rng,
    ) {
        tokio::time::sleep(Duration::from_millis(700)).await;
        assert_eq!(play(seats, &mut [], rng, 1).await, 1);
        let (seq, view) = server_view(server, id).await;
        for f in seats.iter() {
            assert_eq!(f.seq(), Some(seq));
            assert_eq!(f.mirror.view(), Some(&view), "mirror at {seq}");
        }
    }
    for round in 0..5 {
        if round == 2 {
            // Refused in a quiet match: the view it built is the one the next move diffs from.
            tokio::time::sleep(Duration::from_millis(700)).await;
            let other = 1 - usize::from(seats[0].view().active);
            let id = seats[other].new_id();
            let out = seats[other].command(&id, Command::Pass {}).await;
            assert!(matches!(out, CommandOutcome::Rejected(_)), "{out:?}");
        }
        quiet_move(&server, id, &mut seats, &mut rng).await;
    }
    assert!(seats.iter().all(|f| f.snapshots == 1), "diffs only");
    server.stop().await;

    let server = TestServer::start(config);
    for (i, f) in seats.iter_mut().enumerate() {
        f.reconnect(&server, Some(&created.seats[i].token)).await;
    }
    for _ in 0..3 {
        quiet_move(&server, id, &mut seats, &mut rng).await;
    }
    server.stop().await;
}

on_both_stores!(
    a_player_times_out_is_played_for_and_comes_back,
    a_clock_survives_a_restart,
    invalid_clock_settings_are_refused,
    an_admin_away_mark_plays_the_turn_at_once,
    a_quiet_match_rebuilds_its_view_for_the_next_diff
);
