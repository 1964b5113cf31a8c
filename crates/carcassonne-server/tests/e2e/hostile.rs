//! Hostile or careless clients: input that must get a clear typed error and cost nobody else
//! anything. Every scenario runs on SQLite and on Postgres.

use crate::common::*;
use client::{CommandOutcome, Connection};
use protocol::{ClientMessage, ErrorCode, ServerMessage};
use rules::{Command, Decision};

on_both_stores!(
    control_characters_in_a_command_id_are_malformed,
    unknown_matches_do_not_use_up_subscriptions,
    a_flood_of_resumes_gets_snapshots_beyond_the_store_slots,
    one_seat_cannot_push_out_another_seats_refusals,
);

/// A NUL in a command id cannot be stored by Postgres: before the fix the write failed, every
/// command of the batch got `internal`, and the match was reloaded from the store. Such an id is
/// refused as `malformed` up front; the same move under a clean id is then accepted.
async fn control_characters_in_a_command_id_are_malformed(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let id = created.match_id;
    let mut a = Follower::join(&server, id, Some(&created.seats[0].token), None).await;
    a.sync_first().await;
    let (_, legal) = pick_move(&a.view(), &mut Rng::new(3)).expect("a move");
    for bad in ["nul\0id", "new\nline", "\u{7f}"] {
        let out = a.command(bad, legal.clone()).await;
        match out {
            CommandOutcome::Rejected(body) => {
                assert_eq!(body.code, ErrorCode::Malformed, "{bad:?}: {body:?}");
                assert_eq!(body.id.as_deref(), Some(bad));
            }
            other => panic!("{bad:?}: expected malformed, got {other:?}"),
        }
    }
    let out = a.command("clean-1", legal).await;
    assert!(
        matches!(out, CommandOutcome::Accepted { seq: 1, .. }),
        "{out:?}"
    );
    a.sync_to(1).await;
    server.stop().await;
}

/// Subscribing to unknown matches answers `unknown_match` and leaves no subscription behind:
/// before the fix each one kept a slot, and after 16 of them the connection could follow no
/// real match (`unavailable`).
async fn unknown_matches_do_not_use_up_subscriptions(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let mut conn = Connection::connect(&server.ws()).await.expect("connect");
    conn.set_read_timeout(Some(READ_TIMEOUT));
    for _ in 0..20 {
        conn.subscribe(uuid::Uuid::new_v4(), None)
            .await
            .expect("send");
        expect_unknown_match(&mut conn).await;
    }
    conn.subscribe(created.match_id, None).await.expect("send");
    let msg = conn
        .wait_for(|m| matches!(m, ServerMessage::Snapshot { .. } | ServerMessage::Error(_)))
        .await
        .expect("answer");
    assert!(
        matches!(msg, ServerMessage::Snapshot { match_id, .. } if match_id == created.match_id),
        "{msg:?}"
    );
    server.stop().await;
}

/// One spectator pipelines many resumes from far back (each a store read): before the fix each
/// spawned its own read, without bound, on the pool every match writes through. Beyond the
/// configured slots the server answers with a snapshot; the resume that holds a slot still gets
/// its diffs, and the match goes on.
async fn a_flood_of_resumes_gets_snapshots_beyond_the_store_slots(db: &TestDb) {
    let mut config = db.config();
    config.matches.diff_window = 1;
    config.matches.store_resume_slots = 1;
    let server = TestServer::start(config);
    let created = create(&server, 2).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let mut rng = Rng::new(0x5eed_0042);
    assert_eq!(play(&mut seats, &mut [], &mut rng, 8).await, 8);

    let mut flood = Connection::connect(&server.ws()).await.expect("connect");
    flood.set_read_timeout(Some(READ_TIMEOUT));
    const N: usize = 200;
    for _ in 0..N {
        flood
            .send(&ClientMessage::Subscribe {
                match_id: id,
                since: Some(0),
            })
            .await
            .expect("send");
    }
    // Count what comes back until the connection is quiet (shorter than the ping interval, since
    // pings restart the read timeout): snapshots and diffs.
    let mut snapshots = 0;
    let mut diffs = 0;
    flood.set_read_timeout(Some(std::time::Duration::from_millis(400)));
    loop {
        match flood.next_message().await {
            Ok(Some(ServerMessage::Snapshot { .. })) => snapshots += 1,
            Ok(Some(ServerMessage::Diff { .. })) => diffs += 1,
            Ok(Some(ServerMessage::Error(e))) => {
                assert_eq!(e.code, ErrorCode::Busy, "{e:?}");
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    assert!(
        snapshots > 0,
        "with one resume slot, a flood of {N} resumes gets snapshots (got {diffs} diffs)"
    );
    // The match goes on.
    assert_eq!(play(&mut seats, &mut [], &mut rng, 2).await, 2);
    server.stop().await;
}

/// A refused id sent again gets the same refusal. The cache of refusals is bounded; before the
/// fix the bound was per match, so one seat sending 300 refused commands pushed out another
/// seat's refusal, and that seat's repeated id was then judged anew (and here accepted).
async fn one_seat_cannot_push_out_another_seats_refusals(db: &TestDb) {
    let server = TestServer::start(db.config());
    let created = create(&server, 2).await;
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    for f in seats.iter_mut() {
        f.sync_first().await;
    }
    // Seat 1 passes out of turn: refused.
    let first = seats[1].command("b-pass", Command::Pass {}).await;
    let CommandOutcome::Rejected(first) = first else {
        panic!("expected a refusal, got {first:?}")
    };
    assert_eq!(first.rule_code.as_deref(), Some("not_your_turn"));
    // Play until seat 1 has placed its tile and may pass.
    let mut rng = Rng::new(0x5eed_0077);
    let mut guard = 0;
    while !matches!(
        seats[0].view().decisions.first(),
        Some(Decision::PlaceFollower { player: 1, .. })
    ) {
        assert_eq!(play(&mut seats, &mut [], &mut rng, 1).await, 1);
        guard += 1;
        assert!(guard < 20, "seat 1 never reached its second phase");
    }
    // Seat 0 fills the cache with refusals of its own (out of turn).
    for i in 0..300 {
        let out = seats[0]
            .command(&format!("junk-{i}"), Command::Pass {})
            .await;
        assert!(matches!(out, CommandOutcome::Rejected(_)), "{out:?}");
    }
    // Seat 1's repeated id still gets its first answer, and nothing is applied.
    let seq = seats[1].seq().expect("seq");
    let again = seats[1].command("b-pass", Command::Pass {}).await;
    assert_eq!(again, CommandOutcome::Rejected(first));
    let (now, _) = server_view(&server, id).await;
    assert_eq!(now, seq);
    server.stop().await;
}
