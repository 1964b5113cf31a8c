//! End-to-end suites: real servers, real sockets on 127.0.0.1, real stores. Every scenario runs
//! once on a SQLite file and once on a fresh Postgres database (see `common::TestDb`).

use crate::common::*;
use client::{CommandOutcome, Connection};
use protocol::{ErrorCode, MAX_FRAME_BYTES, ServerMessage, close};
use rules::{Command, Decision, Event, Pos, Rotation};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

on_both_stores!(
    whole_game_patches_match_server_views,
    bad_input_gets_typed_errors_and_the_match_goes_on,
    dropped_client_resumes_without_gap_or_repeat,
    restart_graceful_and_abrupt_loses_no_acknowledged_move,
    a_command_id_repeated_after_a_restart_is_answered_not_stored,
    slow_and_silent_clients_are_dropped_without_slowing_the_match,
    http_api,
    pipelined_commands_are_answered_in_order,
    idle_match_leaves_memory_and_comes_back,
    restart_loads_lazily_with_a_bounded_warm_up,
    diverging_replay_marks_the_match_broken,
    store_batches_are_atomic,
    a_failed_write_acknowledges_nothing,
);

fn expect_error(out: &CommandOutcome, code: ErrorCode) -> protocol::ErrorBody {
    match out {
        CommandOutcome::Rejected(body) if body.code == code => body.clone(),
        other => panic!("expected error {code:?}, got {other:?}"),
    }
}

/// Reads until an error frame arrives (skipping diffs and snapshots, which the follower absorbs).
async fn next_error(f: &mut Follower) -> protocol::ErrorBody {
    loop {
        let msg = f.conn.next_message().await.expect("read").expect("open");
        match msg {
            ServerMessage::Error(body) => return body,
            other => f.absorb(&other),
        }
    }
}

/// Two seats play a whole random base game; a spectator follows. After every move a fresh
/// snapshot from the server equals the view built by applying every patch to the first snapshot.
async fn whole_game_patches_match_server_views(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let mut watchers = vec![Follower::join(&server, id, None, None).await];
    let mut checker = Connection::connect(&server.ws()).await.expect("connect");
    checker.set_read_timeout(Some(READ_TIMEOUT));
    let mut rng = Rng::new(0x5eed_0001);
    let mut steps = 0;
    loop {
        let moved = play(&mut seats, &mut watchers, &mut rng, 1).await;
        let seq = seats[0].seq().expect("seq");
        // The server's view at this seq, from a snapshot.
        checker.subscribe(id, None).await.expect("subscribe");
        let snap = checker
            .wait_for(|m| matches!(m, ServerMessage::Snapshot { .. }))
            .await
            .expect("snapshot");
        checker.unsubscribe(id).await.expect("unsubscribe");
        let ServerMessage::Snapshot { seq: s, view, .. } = snap else {
            unreachable!()
        };
        assert_eq!(s, seq, "snapshot seq");
        let server_json = serde_json::to_value(&view).expect("json");
        for f in seats.iter().chain(watchers.iter()) {
            assert_eq!(
                f.mirror.view(),
                Some(&server_json),
                "mirror differs at seq {seq}"
            );
        }
        steps += 1;
        if moved == 0 {
            break;
        }
        assert!(steps < 1000, "the game does not end");
    }
    let view = seats[0].view();
    assert!(view.finished, "the game ended");
    let last = seats[0].seq().expect("seq");
    assert!(
        last > 72,
        "a base game takes more than 72 commands, got {last}"
    );
    let spectator = &watchers[0];
    assert_eq!(spectator.snapshots, 1);
    assert_eq!(
        spectator.diff_seqs,
        (1..=last).collect::<Vec<_>>(),
        "no gap, no repeat"
    );
    // Events tell the whole story: their awards add up to the scores, and the game ended.
    let mut totals = vec![0u32; view.players.len()];
    for e in &spectator.events {
        for (p, pts) in e.awards() {
            totals[usize::from(p)] += pts;
        }
    }
    let scores: Vec<u32> = view.players.iter().map(|p| p.score).collect();
    assert_eq!(totals, scores);
    assert!(
        matches!(spectator.events.last(), Some(Event::GameEnded { scores: s }) if *s == scores)
    );
    // Every command of the finished match answers `unavailable` now.
    let out = seats[0].command("after-the-end", Command::Pass {}).await;
    expect_error(&out, ErrorCode::Unavailable);
    // A late spectator gets the same final view.
    let (seq, late) = server_view(&server, id).await;
    assert_eq!(seq, last);
    assert_eq!(Some(&late), spectator.mirror.view());
    server.stop().await;
}

/// A square next to the board where nothing fits or that is taken: (0,0) always holds the start
/// tile.
fn occupied_square() -> Command {
    Command::PlaceTile {
        pos: Pos { x: 0, y: 0 },
        rotation: Rotation::default(),
    }
}

async fn bad_input_gets_typed_errors_and_the_match_goes_on(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let id = created.match_id;
    let mut a = Follower::join(&server, id, Some(&created.seats[0].token), None).await;
    let mut b = Follower::join(&server, id, Some(&created.seats[1].token), None).await;
    let mut spectator = Follower::join(&server, id, None, None).await;
    for f in [&mut a, &mut b, &mut spectator] {
        f.sync_first().await;
    }
    assert_eq!(a.seat, Some(0));

    // Malformed JSON, an unknown type, an unknown field (the error names the command id).
    a.conn.send_raw_text("{nope".into()).await.expect("send");
    assert_eq!(next_error(&mut a).await.code, ErrorCode::Malformed);
    a.conn
        .send_raw_text(r#"{"type":"dance"}"#.into())
        .await
        .expect("send");
    assert_eq!(next_error(&mut a).await.code, ErrorCode::Malformed);
    a.conn
        .send_raw_text(r#"{"type":"command","id":"x1","command":{"type":"pass"},"extra":1}"#.into())
        .await
        .expect("send");
    let e = next_error(&mut a).await;
    assert_eq!(
        (e.code, e.id.as_deref()),
        (ErrorCode::Malformed, Some("x1"))
    );
    // Binary frames.
    a.conn.send_raw_binary(vec![1, 2, 3]).await.expect("send");
    assert_eq!(next_error(&mut a).await.code, ErrorCode::Binary);
    // Oversized (over MAX_FRAME_BYTES, under the hard limit): an error, the connection stays.
    let big = format!(
        r#"{{"type":"auth","token":"{}"}}"#,
        "x".repeat(MAX_FRAME_BYTES)
    );
    a.conn.send_raw_text(big).await.expect("send");
    assert_eq!(next_error(&mut a).await.code, ErrorCode::TooLarge);
    // Empty command id.
    let out = a.command("", Command::Pass {}).await;
    expect_error(&out, ErrorCode::Malformed);
    // Auth twice; a wrong token; a command without a seat; an unknown match.
    a.conn
        .send(&protocol::ClientMessage::Auth {
            token: created.seats[1].token.clone(),
        })
        .await
        .expect("send");
    assert_eq!(
        next_error(&mut a).await.code,
        ErrorCode::AlreadyAuthenticated
    );
    let mut stranger = Connection::connect(&server.ws()).await.expect("connect");
    stranger.set_read_timeout(Some(READ_TIMEOUT));
    match stranger.auth("not-a-token").await {
        Err(client::ClientError::Refused(body)) => assert_eq!(body.code, ErrorCode::BadToken),
        other => panic!("expected bad_token, got {other:?}"),
    }
    let out = stranger
        .command("s1", Command::Pass {})
        .await
        .expect("answer");
    expect_error(&out, ErrorCode::Unauthenticated);
    stranger
        .subscribe(uuid::Uuid::new_v4(), None)
        .await
        .expect("send");
    expect_unknown_match(&mut stranger).await;

    // Out of turn: seat 1 moves while seat 0 must.
    let view = a.view();
    assert!(matches!(
        view.decisions.first(),
        Some(Decision::PlaceTile { player: 0, .. })
    ));
    let mut rng = Rng::new(7);
    let (_, legal) = pick_move(&view, &mut rng).expect("a move");
    let out = b.command("b1", legal.clone()).await;
    let e = expect_error(&out, ErrorCode::Rule);
    assert_eq!(
        (e.rule_code.as_deref(), e.rule.as_deref(), e.id.as_deref()),
        (Some("not_your_turn"), Some("B4"), Some("b1"))
    );
    // Illegal: a taken square. Repeating the refused id gives the same refusal.
    let out = a.command("a1", occupied_square()).await;
    let first = expect_error(&out, ErrorCode::Rule);
    assert_eq!(first.rule_code.as_deref(), Some("occupied"));
    let again = a.command("a1", occupied_square()).await;
    assert_eq!(again, CommandOutcome::Rejected(first));
    // A legal move is accepted as seq 1; repeating its id answers seq 1 again, applies nothing.
    let out = a.command("a2", legal.clone()).await;
    assert!(
        matches!(out, CommandOutcome::Accepted { seq: 1, .. }),
        "{out:?}"
    );
    let again = a.command("a2", legal).await;
    assert!(
        matches!(again, CommandOutcome::Accepted { seq: 1, .. }),
        "{again:?}"
    );
    // Even with another command under the same id.
    let again = a.command("a2", Command::Pass {}).await;
    assert!(
        matches!(again, CommandOutcome::Accepted { seq: 1, .. }),
        "{again:?}"
    );

    // The match goes on, and nobody saw anything twice.
    for f in [&mut a, &mut b, &mut spectator] {
        f.sync_to(1).await;
    }
    let mut seats = vec![a, b];
    let mut watchers = vec![spectator];
    let moves = play(&mut seats, &mut watchers, &mut Rng::new(8), 10).await;
    assert_eq!(moves, 10);
    let last = seats[0].seq().expect("seq");
    assert_eq!(last, 11);
    assert_eq!(watchers[0].diff_seqs, (1..=last).collect::<Vec<_>>());

    // A frame over the hard limit closes the connection with 1009.
    let mut huge = Connection::connect(&server.ws()).await.expect("connect");
    huge.set_read_timeout(Some(READ_TIMEOUT));
    let _ = huge.send_raw_text("y".repeat(17 * MAX_FRAME_BYTES)).await;
    while let Ok(Some(_)) = huge.next_message().await {}
    assert_eq!(huge.close_frame().map(|c| c.code), Some(1009));
    server.stop().await;
}

async fn dropped_client_resumes_without_gap_or_repeat(db: &TestDb) {
    let mut config = db.config();
    config.matches.diff_window = 8;
    config.matches.max_store_resume = 16;
    let server = TestServer::start(config);
    let created = create(&server, 2).await;
    let id = created.match_id;
    let tokens = seat_tokens(&created);
    let mut seats = join_seats(&server, &created).await;
    let mut watchers = vec![Follower::join(&server, id, None, None).await];
    let mut rng = Rng::new(0x5eed_0003);
    assert_eq!(play(&mut seats, &mut watchers, &mut rng, 6).await, 6);

    // The spectator's connection drops (no closing handshake), `away` moves happen, and it comes
    // back with `since`. Gone 5 moves: the diffs come from the window, in order, and no
    // snapshot. Gone 12, longer than the window holds: the diffs are read from the store (with
    // their events). Gone 20, longer than `max_store_resume`: a snapshot, then diffs again.
    let mut spectator = watchers.pop().expect("spectator");
    let mut seq = 6;
    for (away, snapshots, diffs) in [(5, 1, 1..=11), (12, 1, 1..=23), (20, 2, 1..=23)] {
        spectator.drop_and_connect(&server, None).await;
        assert_eq!(play(&mut seats, &mut watchers, &mut rng, away).await, away);
        seq += away as u64;
        spectator.resubscribe().await;
        spectator.sync_to(seq).await;
        assert_eq!(spectator.snapshots, snapshots, "gone {away} moves");
        let diffs: Vec<_> = diffs.collect();
        assert_eq!(spectator.diff_seqs, diffs, "gone {away} moves");
        assert_eq!(
            spectator.mirror.view(),
            seats[0].mirror.view(),
            "gone {away} moves"
        );
    }
    watchers.push(spectator);

    // A seat drops right after sending a command, before its answer. It reconnects and sends
    // the same id again: the first answer comes back and the move is applied once.
    let view = seats[0].view();
    let (player, cmd) = pick_move(&view, &mut rng).expect("a move");
    let p = usize::from(player);
    let before = seats[p].seq().expect("seq");
    let cid = seats[p].new_id();
    seats[p]
        .conn
        .send_command(&cid, cmd.clone())
        .await
        .expect("send");
    seats[p].reconnect(&server, Some(&tokens[p])).await;
    let out = seats[p].command(&cid, cmd).await;
    assert!(
        matches!(out, CommandOutcome::Accepted { seq, .. } if seq == before + 1),
        "{out:?}"
    );
    for f in seats.iter_mut().chain(watchers.iter_mut()) {
        f.sync_to(before + 1).await;
    }

    // The game finishes; nobody saw a diff twice or missed one while connected.
    play(&mut seats, &mut watchers, &mut rng, usize::MAX).await;
    let last = seats[0].seq().expect("seq");
    assert!(seats[0].view().finished);
    let expected: Vec<u64> = (1..=23).chain(44..=last).collect();
    assert_eq!(watchers[0].diff_seqs, expected);
    let repeated_seat = &seats[p];
    let mut sorted = repeated_seat.diff_seqs.clone();
    sorted.dedup();
    assert_eq!(
        sorted, repeated_seat.diff_seqs,
        "no repeat for the reconnected seat"
    );
    let (seq, view) = server_view(&server, id).await;
    assert_eq!(seq, last);
    for f in seats.iter().chain(watchers.iter()) {
        assert_eq!(f.mirror.view(), Some(&view));
    }
    server.stop().await;
}

async fn admin_log(server: &TestServer, id: uuid::Uuid) -> serde_json::Value {
    admin_json(server, &format!("/api/admin/matches/{id}/log")).await
}

async fn restart_graceful_and_abrupt_loses_no_acknowledged_move(db: &TestDb) {
    let config = db.config();
    let server = TestServer::start(config.clone());
    let created = create(&server, 2).await;
    let id = created.match_id;
    let tokens = seat_tokens(&created);
    let mut seats = join_seats(&server, &created).await;
    let mut watchers = vec![Follower::join(&server, id, None, None).await];
    let mut rng = Rng::new(0x5eed_0004);
    assert_eq!(play(&mut seats, &mut watchers, &mut rng, 15).await, 15);

    // Graceful stop: every socket is closed with 1001 (going away).
    server.stop().await;
    for f in seats.iter_mut().chain(watchers.iter_mut()) {
        assert_eq!(f.read_to_close().await, Some(1001));
    }

    // Started again on the same store: the match is resumed where it was.
    let server = TestServer::start(config.clone());
    for (i, f) in seats.iter_mut().enumerate() {
        f.reconnect(&server, Some(&tokens[i])).await;
    }
    watchers[0].reconnect(&server, None).await;
    assert_eq!(play(&mut seats, &mut watchers, &mut rng, 15).await, 15);
    assert_eq!(seats[0].seq(), Some(30));

    // Abrupt stop while a command is in flight: the runtime is dropped, nothing graceful runs.
    let view = seats[0].view();
    let (player, cmd) = pick_move(&view, &mut rng).expect("a move");
    let p = usize::from(player);
    let cid = seats[p].new_id();
    seats[p]
        .conn
        .send_command(&cid, cmd.clone())
        .await
        .expect("send");
    server.kill().await;

    let server = TestServer::start(config.clone());
    for (i, f) in seats.iter_mut().enumerate() {
        f.reconnect(&server, Some(&tokens[i])).await;
    }
    watchers[0].reconnect(&server, None).await;
    // Whether or not it was stored before the crash, resending the id applies it exactly once.
    let out = seats[p].command(&cid, cmd).await;
    assert!(
        matches!(out, CommandOutcome::Accepted { seq: 31, .. }),
        "{out:?}"
    );
    for f in seats.iter_mut().chain(watchers.iter_mut()) {
        f.sync_to(31).await;
    }
    play(&mut seats, &mut watchers, &mut rng, usize::MAX).await;
    assert!(seats[0].view().finished, "the game finished");
    let last = seats[0].seq().expect("seq");

    // One more restart: a finished match is not resumed but still served.
    server.stop().await;
    let server = TestServer::start(config);
    let (seq, view) = server_view(&server, id).await;
    assert_eq!(seq, last);
    assert_eq!(Some(&view), seats[0].mirror.view());

    // Every acknowledged move is in the log, with its seq; the log has no hole.
    let log = admin_log(&server, id).await;
    assert_eq!(log["status"], "finished");
    let commands = log["commands"].as_array().expect("commands");
    let seqs: Vec<u64> = commands.iter().filter_map(|c| c["seq"].as_u64()).collect();
    assert_eq!(seqs, (1..=last).collect::<Vec<_>>());
    let stored: BTreeMap<(u64, String), u64> = commands
        .iter()
        .map(|c| {
            let seat = c["seat"].as_u64().expect("seat");
            let cid = c["command_id"].as_str().expect("id").to_string();
            ((seat, cid), c["seq"].as_u64().expect("seq"))
        })
        .collect();
    let mut acked = 0;
    for (seat, f) in seats.iter().enumerate() {
        for (cid, seq) in &f.acks {
            assert_eq!(
                stored.get(&(seat as u64, cid.clone())),
                Some(seq),
                "ack {cid}"
            );
            acked += 1;
        }
    }
    assert_eq!(
        acked, last as usize,
        "every stored command was acknowledged to someone"
    );
    server.stop().await;
}

/// A command id re-sent after a restart (graceful, then abrupt) gets its first ack and seq, and
/// nothing more is stored: the store no longer refuses a repeated id (migration 0010), the
/// actor's dedupe, rebuilt from the store on each load, does.
async fn a_command_id_repeated_after_a_restart_is_answered_not_stored(db: &TestDb) {
    let config = db.config();
    let mut server = TestServer::start(config.clone());
    let created = create(&server, 2).await;
    let id = created.match_id;
    let tokens = seat_tokens(&created);
    let mut seats = join_seats(&server, &created).await;
    let mut rng = Rng::new(0x5eed_0010);
    assert_eq!(play(&mut seats, &mut [], &mut rng, 6).await, 6);

    // One more move whose command we keep, to send it again word for word.
    let (player, cmd) = pick_move(&seats[0].view(), &mut rng).expect("a move");
    let p = usize::from(player);
    let cid = seats[p].new_id();
    let out = seats[p].command(&cid, cmd.clone()).await;
    assert!(
        matches!(out, CommandOutcome::Accepted { seq: 7, .. }),
        "{out:?}"
    );
    for f in seats.iter_mut() {
        f.sync_to(7).await;
    }
    let (old_id, old_seq) = seats[0].acks[0].clone();

    for abrupt in [false, true] {
        if abrupt {
            server.kill().await;
        } else {
            server.stop().await;
        }
        server = TestServer::start(config.clone());
        for (i, f) in seats.iter_mut().enumerate() {
            f.reconnect(&server, Some(&tokens[i])).await;
        }
        let out = seats[p].command(&cid, cmd.clone()).await;
        assert!(
            matches!(out, CommandOutcome::Accepted { seq: 7, .. }),
            "abrupt {abrupt}: {out:?}"
        );
        // An older id, with another command: still its first answer.
        let out = seats[0].command(&old_id, Command::Pass {}).await;
        assert!(
            matches!(out, CommandOutcome::Accepted { seq, .. } if seq == old_seq),
            "abrupt {abrupt}: {out:?}"
        );
        let (seq, _) = server_view(&server, id).await;
        assert_eq!(seq, 7, "abrupt {abrupt}: nothing was applied again");
        let log = admin_log(&server, id).await;
        let seqs: Vec<u64> = log["commands"]
            .as_array()
            .expect("commands")
            .iter()
            .filter_map(|c| c["seq"].as_u64())
            .collect();
        assert_eq!(seqs, (1..=7).collect::<Vec<_>>(), "abrupt {abrupt}");
    }
    // Play goes on from seq 8.
    assert_eq!(play(&mut seats, &mut [], &mut rng, 2).await, 2);
    assert_eq!(seats[0].seq(), Some(9));
    server.stop().await;
}

/// A raw socket with a tiny receive buffer (so that the kernel cannot absorb what the server
/// sends), which asks for snapshot after snapshot and reads none of them.
async fn hostile_reader(
    server: &TestServer,
) -> tokio_tungstenite::WebSocketStream<tokio::net::TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("rcvbuf");
    let stream = socket.connect(server.addr).await.expect("connect");
    let (ws, _) = tokio_tungstenite::client_async(server.ws(), stream)
        .await
        .expect("handshake");
    ws
}

async fn slow_and_silent_clients_are_dropped_without_slowing_the_match(db: &TestDb) {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let mut config = db.config();
    config.conn.outgoing_queue = 8;
    config.conn.write_timeout = Duration::from_millis(10_000);
    // Room for the whole flood in the match's inbox, so that every request costs a snapshot
    // (rather than a short `busy`) and the kernel's socket buffers surely overflow.
    config.matches.match_inbox = 10_000;
    let server = TestServer::start(config);
    let created = create(&server, 2).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let mut rng = Rng::new(0x5eed_0005);
    play(&mut seats, &mut [], &mut rng, 4).await;

    let mut slow = hostile_reader(&server).await;
    let subscribe = serde_json::to_string(&protocol::ClientMessage::Subscribe {
        match_id: id,
        since: None,
    })
    .expect("json");
    let flood = async {
        for _ in 0..6000 {
            if slow.feed(Message::text(subscribe.clone())).await.is_err() {
                break;
            }
        }
        let _ = slow.flush().await;
    };
    let _ = tokio::time::timeout(Duration::from_secs(20), flood).await;

    // Meanwhile and after, the match runs at full speed for everyone else.
    let started = Instant::now();
    for _ in 0..10 {
        let t = Instant::now();
        assert_eq!(play(&mut seats, &mut [], &mut rng, 1).await, 1);
        // Far below the 10 s write timeout that a match blocked on the flooder would show.
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "a move took {:?}",
            t.elapsed()
        );
    }
    assert!(started.elapsed() < Duration::from_secs(20));

    // The flooder was closed as too slow (it finds the close frame after what was queued).
    let mut code = None;
    let mut frames = 0;
    let read_all = async {
        while let Some(Ok(msg)) = slow.next().await {
            frames += 1;
            if let Message::Close(Some(frame)) = msg {
                code = Some(u16::from(frame.code));
            }
        }
    };
    tokio::time::timeout(READ_TIMEOUT, read_all)
        .await
        .expect("the slow connection ends");
    assert_eq!(code, Some(close::TOO_SLOW), "after {frames} frames");
    assert!(
        frames < 6000,
        "the server stopped sending to it early ({frames} frames)"
    );

    // A client that stops answering pings is closed with 4000 (short heartbeat on this server).
    let mut config = db.config();
    config.conn.heartbeat_interval = Duration::from_millis(200);
    config.conn.heartbeat_timeout = Duration::from_millis(1_000);
    let quick = TestServer::start(config);
    let mut silent = Connection::connect(&quick.ws()).await.expect("connect");
    silent.set_read_timeout(Some(READ_TIMEOUT));
    let mut alive = Connection::connect(&quick.ws()).await.expect("connect");
    alive.set_read_timeout(Some(Duration::from_millis(50)));
    // `alive` keeps reading (and so answering pings); `silent` does not read at all.
    let until = Instant::now() + Duration::from_millis(2_500);
    while Instant::now() < until {
        match alive.next_message().await {
            Err(client::ClientError::Timeout(_)) => {}
            other => panic!("the reading client was disturbed: {other:?}"),
        }
    }
    while let Ok(Some(_)) = silent.next_message().await {}
    assert_eq!(
        silent.close_frame().map(|c| c.code),
        Some(close::HEARTBEAT_TIMEOUT)
    );
    quick.stop().await;
    server.stop().await;
}

async fn http_api(db: &TestDb) {
    let server = TestServer::start(db.config());
    assert_eq!(http(&server, "GET", "/healthz", &[], "").await.0, 200);
    let (status, body) = http(&server, "POST", "/api/matches", &[], "{not json").await;
    assert_eq!(status, 400);
    assert!(body.contains("\"code\":\"malformed\""), "{body}");
    let (status, body) = http(
        &server,
        "POST",
        "/api/matches",
        &[],
        r#"{"players":["red"]}"#,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = http(
        &server,
        "POST",
        "/api/matches",
        &[],
        r#"{"players":["red","blue"],"draw_order":["nope"]}"#,
    )
    .await;
    assert_eq!(status, 400, "an unknown tile: {body}");
    let created = create(&server, 3).await;
    assert_eq!(created.seats.len(), 3);
    let tokens: std::collections::HashSet<_> = created.seats.iter().map(|s| &s.token).collect();
    assert_eq!(tokens.len(), 3, "tokens differ");
    // Admin log: refused without or with a wrong token; answers with the right one.
    let path = format!("/api/admin/matches/{}/log", created.match_id);
    assert_eq!(http(&server, "GET", &path, &[], "").await.0, 401);
    assert_eq!(
        http(
            &server,
            "GET",
            &path,
            &[("Authorization", "Bearer wrong")],
            ""
        )
        .await
        .0,
        401
    );
    let log = admin_log(&server, created.match_id).await;
    assert_eq!(log["status"], "active");
    assert_eq!(log["commands"].as_array().map(Vec::len), Some(0));
    assert!(
        log.get("setup").is_none(),
        "the setup (and its seed) stays secret"
    );
    server.stop().await;

    // Without `allow_test_setups`, a forced pile is refused.
    let mut config = db.config();
    config.matches.allow_test_setups = false;
    let server = TestServer::start(config);
    let (status, body) = http(
        &server,
        "POST",
        "/api/matches",
        &[],
        r#"{"players":["red","blue"],"draw_order":["base/A"]}"#,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("draw_order"), "{body}");
    server.stop().await;
}

/// Commands sent back to back, without waiting, are likely drained and stored as one batch: the
/// answers still come in order, a repeated id in the same batch gets the same seq.
async fn pipelined_commands_are_answered_in_order(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let id = created.match_id;
    let mut a = Follower::join(&server, id, Some(&created.seats[0].token), None).await;
    a.sync_first().await;
    let (_, tile) = pick_move(&a.view(), &mut Rng::new(11)).expect("a move");
    a.conn.send_command("p1", tile.clone()).await.expect("send");
    a.conn.send_command("p1", tile).await.expect("send");
    a.conn
        .send_command("p2", occupied_square())
        .await
        .expect("send");
    a.conn
        .send_command("p3", Command::Pass {})
        .await
        .expect("send");
    let mut answers = Vec::new();
    while answers.len() < 4 {
        match a.conn.next_message().await.expect("read").expect("open") {
            ServerMessage::Ack { id, seq, .. } => answers.push(format!("ack {id} {seq}")),
            ServerMessage::Error(e) => {
                answers.push(format!("error {} {:?}", e.id.unwrap_or_default(), e.code))
            }
            other => a.absorb(&other),
        }
    }
    assert_eq!(
        answers,
        ["ack p1 1", "ack p1 1", "error p2 Rule", "ack p3 2"]
    );
    a.sync_to(2).await;
    assert_eq!(a.diff_seqs, [1, 2]);
    server.stop().await;
}

/// The admin stats (`GET /api/admin/stats`).
async fn stats(server: &TestServer) -> serde_json::Value {
    admin_json(server, "/api/admin/stats").await
}

/// A match nobody holds leaves memory after the idle time and is reloaded from the store on
/// demand, with its command ids remembered.
async fn idle_match_leaves_memory_and_comes_back(db: &TestDb) {
    let mut config = db.config();
    config.matches.match_idle = Duration::from_millis(200);
    let server = TestServer::start(config);
    let created = create(&server, 2).await;
    let tokens = seat_tokens(&created);
    let mut seats = join_seats(&server, &created).await;
    let mut rng = Rng::new(0x5eed_0006);
    assert_eq!(play(&mut seats, &mut [], &mut rng, 5).await, 5);
    assert_eq!(stats(&server).await["matches_in_memory"], 1);
    for f in seats.iter_mut() {
        f.conn.close().await.expect("close");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while stats(&server).await["matches_in_memory"] != 0 {
        assert!(Instant::now() < deadline, "the idle match stays in memory");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Back: a snapshot at seq 5 (the diff window left with the actor), then play goes on.
    for (i, f) in seats.iter_mut().enumerate() {
        f.reconnect(&server, Some(&tokens[i])).await;
    }
    assert_eq!(play(&mut seats, &mut [], &mut rng, 3).await, 3);
    assert_eq!(seats[0].seq(), Some(8));
    // A command id acknowledged before the actor left still answers with its first seq.
    let (first_id, first_seq) = seats[0].acks[0].clone();
    let out = seats[0].command(&first_id, Command::Pass {}).await;
    assert!(
        matches!(out, CommandOutcome::Accepted { seq, .. } if seq == first_seq),
        "{out:?}"
    );
    server.stop().await;
}

/// Waits until `n` matches are in memory.
async fn wait_in_memory(server: &TestServer, n: u64, why: &str) {
    let deadline = Instant::now() + READ_TIMEOUT;
    while stats(server).await["matches_in_memory"] != n {
        assert!(Instant::now() < deadline, "{why}: {}", stats(server).await);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Lazy recovery: a restart serves before loading the unfinished matches that
/// have no deadline; each loads on its first touch and plays on. The warm-up loads at most
/// `--warm-up` of them, the most recently played first.
async fn restart_loads_lazily_with_a_bounded_warm_up(db: &TestDb) {
    let mut config = db.config();
    config.matches.warm_up = 0;
    let server = TestServer::start(config.clone());
    let mut matches = Vec::new();
    for i in 0..4u64 {
        let m = create(&server, 2).await;
        let mut seats = vec![
            Follower::join(&server, m.match_id, Some(&m.seats[0].token), None).await,
            Follower::join(&server, m.match_id, Some(&m.seats[1].token), None).await,
        ];
        assert_eq!(play(&mut seats, &mut [], &mut Rng::new(40 + i), 3).await, 3);
        matches.push((m, seats));
    }
    server.stop().await;

    // No warm-up: the server answers with no match in memory.
    let server = TestServer::start(config.clone());
    let (status, body) = http(&server, "GET", "/healthz", &[], "").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        stats(&server).await["matches_in_memory"],
        0,
        "loaded at start"
    );
    // The first touch replays the match, which plays on.
    let (m, seats) = &mut matches[0];
    for (i, f) in seats.iter_mut().enumerate() {
        f.reconnect(&server, Some(&m.seats[i].token)).await;
    }
    assert_eq!(play(seats, &mut [], &mut Rng::new(50), 2).await, 2);
    assert_eq!(seats[0].seq(), Some(5));
    assert_eq!(
        stats(&server).await["matches_in_memory"],
        1,
        "only the touched match"
    );
    for f in seats.iter_mut() {
        f.conn.close().await.expect("close");
    }
    server.stop().await;

    // A warm-up of two: the two most recently played (the first match, then the last).
    config.matches.warm_up = 2;
    let server = TestServer::start(config);
    wait_in_memory(&server, 2, "the warm-up loads two matches").await;
    let warm = [matches[0].0.match_id, matches[3].0.match_id];
    for id in warm {
        server_view(&server, id).await;
    }
    assert_eq!(
        stats(&server).await["matches_in_memory"],
        2,
        "{warm:?} were warm"
    );
    let (seq, _) = server_view(&server, matches[1].0.match_id).await;
    assert_eq!(seq, 3);
    assert_eq!(
        stats(&server).await["matches_in_memory"],
        3,
        "loaded on touch"
    );
    server.stop().await;
}

/// A stored history that the rules no longer reproduce is not resumed: the match is marked
/// broken and refuses service, and the other matches are unaffected.
async fn diverging_replay_marks_the_match_broken(db: &TestDb) {
    let config = db.config();
    let server = TestServer::start(config.clone());
    let bad = create(&server, 2).await;
    let good = create(&server, 2).await;
    for m in [&bad, &good] {
        let mut seats = vec![
            Follower::join(&server, m.match_id, Some(&m.seats[0].token), None).await,
            Follower::join(&server, m.match_id, Some(&m.seats[1].token), None).await,
        ];
        assert_eq!(play(&mut seats, &mut [], &mut Rng::new(3), 4).await, 4);
    }
    server.stop().await;
    let n = db
        .execute(&format!(
            "UPDATE commands SET events = '[]' WHERE seq = 2 AND match_id = '{}'",
            bad.match_id
        ))
        .await;
    assert_eq!(n, 1);

    let server = TestServer::start(config);
    let mut f = Follower::join(&server, bad.match_id, Some(&bad.seats[0].token), None).await;
    let e = next_error(&mut f).await;
    assert_eq!(e.code, ErrorCode::Unavailable, "{e:?}");
    assert_eq!(admin_log(&server, bad.match_id).await["status"], "broken");
    let (seq, _) = server_view(&server, good.match_id).await;
    assert_eq!(seq, 4);
    server.stop().await;
}

/// The store writes a batch in one transaction: a batch with one bad record stores nothing.
async fn store_batches_are_atomic(db: &TestDb) {
    use server::store::{Append, CommandRow, MatchRow, MatchStatus, SeatRow, Store};
    let config = db.config();
    let store = Store::open(config.store.url(), &config.store.data_dir)
        .await
        .expect("open");
    let id = uuid::Uuid::new_v4();
    let row = MatchRow {
        id,
        setup: r#"{"players":["red","blue"],"seed":18446744073709551615}"#.into(),
        status: MatchStatus::Active,
        rules_version: rules::RULES_VERSION.into(),
        created_at: chrono::Utc::now(),
        decision_timeout_ms: Some(1234),
        clock: None,
        wake_at: None,
    };
    let seat = |seat: u8, hash: &str| SeatRow {
        seat,
        colour: "red".into(),
        token_hash: hash.into(),
    };
    store
        .create_match(&row, &[seat(0, "h0"), seat(1, "h1")])
        .await
        .expect("create");
    assert_eq!(
        store.seat_for_token("h1").await.expect("lookup"),
        Some((id, 1))
    );
    assert_eq!(store.seat_for_token("nope").await.expect("lookup"), None);
    let loaded = store.load_match(id).await.expect("load").expect("found");
    assert_eq!(
        loaded.decision_timeout_ms,
        Some(1234),
        "the match keeps its timeout"
    );
    let setup: serde_json::Value = serde_json::from_str(&loaded.setup).expect("json");
    assert_eq!(
        setup["seed"].as_u64(),
        Some(u64::MAX),
        "the seed survives the store exactly"
    );
    let rec = |seq: u64, cid: &str| CommandRow {
        seq,
        seat: 0,
        command_id: cid.into(),
        command: r#"{"type":"pass"}"#.into(),
        events: "[]".into(),
        patch: Some(format!(
            r#"[{{"op":"replace","path":"/turn","value":{seq}}}]"#
        )),
        created_at: chrono::Utc::now(),
    };
    // Same seq twice in one batch: the whole batch fails.
    assert!(
        store
            .append(id, &[rec(1, "a"), rec(1, "b")], None)
            .await
            .is_err()
    );
    assert!(store.commands(id, 0).await.expect("read").is_empty());
    store
        .append(id, &[rec(1, "a"), rec(2, "b")], Some(MatchStatus::Finished))
        .await
        .expect("append");
    // The same seq twice is refused.
    assert!(store.append(id, &[rec(2, "c")], None).await.is_err());
    // A repeated command id is not the store's to refuse (migration 0010): the match's actor
    // answers it from its dedupe before anything reaches the store.
    store
        .append(id, &[rec(3, "a")], None)
        .await
        .expect("a repeated command id at a new seq");
    let got = store.commands(id, 1).await.expect("read");
    assert_eq!(got.iter().map(|r| r.seq).collect::<Vec<_>>(), [2, 3]);
    let patch: serde_json::Value =
        serde_json::from_str(got[0].patch.as_deref().expect("patch")).expect("json");
    assert_eq!(patch[0]["value"], 2, "the patch is stored as sent");
    let between = store.commands_between(id, 0, 1).await.expect("read");
    assert_eq!(between.iter().map(|r| r.seq).collect::<Vec<_>>(), [1]);
    assert!(
        store
            .unfinished()
            .await
            .expect("list")
            .iter()
            .all(|m| *m != id)
    );

    // Many matches appending at once (committed as groups on both stores): a bad append fails
    // alone, the others are stored.
    let mut ids = Vec::new();
    for i in 0..20u8 {
        let mid = uuid::Uuid::new_v4();
        let m = MatchRow {
            id: mid,
            ..row.clone()
        };
        store
            .create_match(&m, &[seat(0, &format!("g{i}-{mid}"))])
            .await
            .expect("create");
        ids.push(mid);
    }
    let mut tasks = Vec::new();
    for (i, mid) in ids.iter().copied().enumerate() {
        let store = store.clone();
        let records = if i == 7 {
            vec![rec(1, "x"), rec(1, "y")]
        } else {
            vec![rec(1, "x"), rec(2, "y")]
        };
        tasks.push(tokio::spawn(async move {
            store.append(mid, &records, None).await.is_ok()
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        assert_eq!(t.await.expect("task"), i != 7, "append {i}");
        let stored = store.commands(ids[i], 0).await.expect("read").len();
        assert_eq!(stored, if i == 7 { 0 } else { 2 }, "match {i}");
    }

    // A large group with every mix of records (none to three), status and wake time (SQLite
    // writes a large group as chunks of fixed texts): each append is stored as written.
    let mut ids = Vec::new();
    for i in 0..90u8 {
        let mid = uuid::Uuid::new_v4();
        let m = MatchRow {
            id: mid,
            wake_at: Some(5),
            ..row.clone()
        };
        store
            .create_match(&m, &[seat(0, &format!("w{i}-{mid}"))])
            .await
            .expect("create");
        ids.push(mid);
    }
    let records = move |i: u8| -> Vec<CommandRow> {
        (1..=u64::from(i % 4))
            .map(|s| rec(s, &format!("m{s}")))
            .collect()
    };
    let status = |i: u8| i.is_multiple_of(3).then_some(MatchStatus::Finished);
    let wake = |i: u8| match i % 5 {
        1 => Some(Some(1000 + i64::from(i))),
        2 => Some(None),
        _ => None,
    };
    let mut tasks = Vec::new();
    for (i, mid) in ids.iter().copied().enumerate() {
        let store = store.clone();
        let i = i as u8;
        tasks.push(tokio::spawn(async move {
            let append = Append {
                records: records(i),
                status: status(i),
                wake: wake(i),
                fence: None,
            };
            store.write(mid, append).await
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        t.await.expect("task").expect("write");
        let i = i as u8;
        let stored = store.commands(ids[usize::from(i)], 0).await.expect("read");
        let keys = |rows: &[CommandRow]| -> Vec<(u64, String)> {
            rows.iter().map(|r| (r.seq, r.command_id.clone())).collect()
        };
        assert_eq!(keys(&stored), keys(&records(i)), "match {i}: records");
        let m = store
            .load_match(ids[usize::from(i)])
            .await
            .expect("load")
            .expect("match");
        let expect_status = status(i).unwrap_or(MatchStatus::Active);
        assert_eq!(m.status, expect_status, "match {i}: status");
        assert_eq!(m.wake_at, wake(i).unwrap_or(Some(5)), "match {i}: wake");
    }
    store.close().await;
}

/// When the store refuses a write, the command is answered `internal`, nothing is applied or
/// broadcast, and the same command id goes through once the store works again.
async fn a_failed_write_acknowledges_nothing(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let mut watchers = vec![Follower::join(&server, id, None, None).await];
    let mut rng = Rng::new(0x5eed_0007);
    assert_eq!(play(&mut seats, &mut watchers, &mut rng, 4).await, 4);

    let (block, unblock) = match db.kind() {
        "sqlite" => (
            "CREATE TRIGGER block_writes BEFORE INSERT ON commands WHEN NEW.seq >= 5 \
             BEGIN SELECT RAISE(ABORT, 'store down'); END",
            "DROP TRIGGER block_writes",
        ),
        _ => (
            "ALTER TABLE commands ADD CONSTRAINT block_writes CHECK (seq < 5)",
            "ALTER TABLE commands DROP CONSTRAINT block_writes",
        ),
    };
    db.execute(block).await;
    let (player, cmd) = pick_move(&seats[0].view(), &mut rng).expect("a move");
    let p = usize::from(player);
    let out = seats[p].command("f1", cmd.clone()).await;
    let e = expect_error(&out, ErrorCode::Internal);
    assert_eq!(e.id.as_deref(), Some("f1"));

    db.execute(unblock).await;
    let out = seats[p].command("f1", cmd).await;
    assert!(
        matches!(out, CommandOutcome::Accepted { seq: 5, .. }),
        "{out:?}"
    );
    for f in seats.iter_mut().chain(watchers.iter_mut()) {
        f.sync_to(5).await;
    }
    assert_eq!(play(&mut seats, &mut watchers, &mut rng, 3).await, 3);
    let (seq, view) = server_view(&server, id).await;
    assert_eq!(seq, 8);
    for f in seats.iter().chain(watchers.iter()) {
        assert_eq!(f.mirror.view(), Some(&view));
    }
    // Seq 5 was broadcast once: the failed attempt sent no diff.
    let fives = watchers[0].diff_seqs.iter().filter(|s| **s == 5).count();
    assert_eq!(fives, 1);
    server.stop().await;
}
