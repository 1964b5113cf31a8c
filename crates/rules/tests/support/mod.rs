//! Checks shared by the random-game tests of several modules.
// Each test binary that includes this module uses only some of its checks.
#![allow(dead_code)]

use rules::{Command, Decision, Event, Game, PlayerId, Setup, View};

/// M2: each player's pawns plus the points still waiting for a pawn choice equal the score.
pub fn pawns_plus_waiting_equal_scores(view: &View) {
    let m = view.messages.as_ref().expect("the messages view");
    for (p, (pawns, player)) in m.players.iter().zip(&view.players).enumerate() {
        let waiting: u32 = view
            .decisions
            .iter()
            .filter_map(|d| match d {
                Decision::ChoosePawn { player, points, .. } if *player as usize == p => {
                    Some(*points)
                }
                _ => None,
            })
            .sum();
        assert_eq!(
            pawns.scoring + pawns.messenger + waiting,
            player.score,
            "seat {p}"
        );
    }
}

/// B10: replaying the same commands from the same setup yields the same events, byte for byte,
/// and the same view.
pub fn replays_identically(
    setup: Setup,
    commands: Vec<(PlayerId, Command)>,
    events: &[Event],
    view: &View,
) {
    let (mut replay, mut replayed) = Game::start(setup).expect("valid setup");
    for (p, c) in commands {
        replayed.extend(replay.apply(p, c).expect("replayed commands stay legal"));
    }
    assert_eq!(
        serde_json::to_string(&replayed).ok(),
        serde_json::to_string(events).ok()
    );
    assert_eq!(&replay.view(), view);
}
