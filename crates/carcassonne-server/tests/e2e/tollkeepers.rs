//! The Tollkeepers over the wire: a match created with the module plays the seed's two
//! worked examples (T6, T9) through real sockets, and every client sees the toll payouts and the
//! turn-over arrive in the diffs, with the tollhouse in the public view. Then a whole random game
//! with the module runs to the end with every patch matching the server's view. On SQLite and on
//! Postgres.

use crate::common::*;
use protocol::CreateMatch;
use rules::scenario::Scenario;
use rules::{Colour, Event, Modules};

/// The scenario file that rebuilds the seed's worked examples; the rules crate checks its events
/// and scores on its own, this test checks that they reach clients unchanged.
fn seed_examples() -> Scenario {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../carcassonne-rules/scenarios/t-t6-t9-seed-examples.json"
    );
    let text = std::fs::read_to_string(path).expect("scenario file");
    serde_json::from_str(&text).expect("scenario parses")
}

/// Creates the match, joins every seat and one spectator.
async fn start(server: &TestServer, req: &CreateMatch) -> (uuid::Uuid, Vec<Follower>, Follower) {
    let created = client::create_match(&server.http(), req)
        .await
        .expect("create match");
    let id = created.match_id;
    let seats = join_seats(server, &created).await;
    let spectator = Follower::join(server, id, None, None).await;
    (id, seats, spectator)
}

async fn tolls_arrive_in_diffs(db: &TestDb) {
    let server = TestServer::start(db.config());
    let scenario = seed_examples();
    let req = CreateMatch {
        players: scenario.setup.players.clone(),
        modules: Modules {
            tollkeepers: true,
            ..Default::default()
        },
        meeples: None,
        draw_order: scenario.setup.draw_order.clone(),
        clock: None,
    };
    let (id, mut seats, mut spectator) = start(&server, &req).await;
    for f in seats.iter_mut().chain(std::iter::once(&mut spectator)) {
        f.sync_first().await;
    }

    for (i, step) in scenario.steps.iter().enumerate() {
        let seat = &mut seats[usize::from(step.player)];
        let out = seat
            .command(
                &format!("step-{i}"),
                step.command.clone().expect("a command"),
            )
            .await;
        match (&out, &step.error) {
            (client::CommandOutcome::Accepted { seq, .. }, None) => {
                let seq = *seq;
                for f in seats.iter_mut().chain(std::iter::once(&mut spectator)) {
                    f.sync_to(seq).await;
                }
            }
            (client::CommandOutcome::Rejected(e), Some(code)) => {
                assert_eq!(e.rule_code.as_deref(), Some(code.as_str()), "step {i}");
            }
            _ => panic!("step {i}: unexpected outcome {out:?}"),
        }
    }

    // The seed's first example: red's value-1 tollhouse collects 7 (2 groups × 3 + 1 farmhouse)
    // on a road green completed, and turns to 2 at the end of that turn. The second: 6 at value 2.
    let tolls: Vec<&Event> = spectator
        .events
        .iter()
        .filter(|e| matches!(e, Event::TollRaised { .. }))
        .collect();
    assert!(
        tolls.iter().any(|e| matches!(
            e,
            Event::TollRaised {
                player: 0,
                value: 1,
                travellers: 2,
                farmhouses: 1,
                points: 7,
                ..
            }
        )),
        "the 7-point toll reached the spectator: {tolls:?}"
    );
    assert!(
        tolls.iter().any(|e| matches!(
            e,
            Event::TollRaised {
                player: 0,
                value: 2,
                highwaymen: 2,
                sheds: 1,
                points: 6,
                ..
            }
        )),
        "the 6-point toll reached the spectator: {tolls:?}"
    );
    assert!(spectator.events.iter().any(|e| matches!(
        e,
        Event::TollhouseTurned {
            player: 0,
            from: 1,
            to: 2,
            ..
        }
    )));
    // Every client saw the same events, and the mirrored views agree with the server's.
    for s in &seats {
        assert_eq!(s.events, spectator.events);
    }
    let view = spectator.view();
    assert_eq!(view.players[0].colour, Colour::Red);
    assert!(
        view.players[0].tollhouse.is_some(),
        "the tollhouse is public"
    );
    if let Some(want) = scenario.expect.scores {
        let got: Vec<u32> = view.players.iter().map(|p| p.score).collect();
        assert_eq!(got, want);
    }
    let (seq, server) = server_view(&server, id).await;
    assert_eq!(spectator.seq(), Some(seq));
    assert_eq!(spectator.mirror.view(), Some(&server));
}

async fn random_tollkeepers_game_to_the_end(db: &TestDb) {
    let server = TestServer::start(db.config());
    let req = CreateMatch {
        players: vec![Colour::Red, Colour::Blue, Colour::Green],
        modules: Modules {
            tollkeepers: true,
            ..Default::default()
        },
        meeples: None,
        draw_order: None,
        clock: None,
    };
    let (id, mut seats, watcher) = start(&server, &req).await;
    let mut watchers = vec![watcher];
    let mut rng = Rng::new(2024);
    play(&mut seats, &mut watchers, &mut rng, 1_000).await;
    let view = watchers[0].view();
    assert!(view.finished, "the game ran to its end");
    assert!(
        view.board
            .values()
            .any(|t| t.tile.starts_with("tollkeepers/")),
        "the module's tiles were in the pile"
    );
    let (_, server) = server_view(&server, id).await;
    assert_eq!(watchers[0].mirror.view(), Some(&server));
}

on_both_stores!(tolls_arrive_in_diffs, random_tollkeepers_game_to_the_end);
