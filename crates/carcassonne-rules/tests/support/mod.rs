//! Checks shared by the random-game tests of several modules.
// Each test binary that includes this module uses only some of its checks.
#![allow(dead_code)]

use carcassonne_rules::{Command, Decision, Event, Game, PawnPreference, PlayerId, Setup, View};

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

/// M3: the even seats start out preferring dark spaces (random games then reach many more
/// dispatches). The commands and their events are recorded.
pub fn prefer_dark(
    game: &mut Game,
    commands: &mut Vec<(PlayerId, Command)>,
    events: &mut Vec<Event>,
) {
    for p in (0..game.scores().len() as PlayerId).step_by(2) {
        let c = Command::SetPawnPreference {
            preference: Some(PawnPreference::DarkInMyTurn),
        };
        events.extend(game.apply(p, c.clone()).expect("accepted"));
        commands.push((p, c));
    }
}

/// After every move: each meeple is in its owner's supply or on the board (M15 returns one).
pub fn meeples_conserved(game: &Game, meeples: u8) {
    for (s, b) in game.supplies().iter().zip(game.meeples_on_board()) {
        assert_eq!(s + b, meeples, "meeples conserved");
    }
    // Inns & Cathedrals: one large meeple a player, in the supply or on the board (I4, I14).
    let large = u8::from(game.setup().modules.inns_cathedrals);
    let on_board = game.figures_on_board(carcassonne_rules::Figure::LargeMeeple);
    for (s, b) in game.large_supplies().iter().zip(on_board) {
        assert_eq!(s + b, large, "large meeples conserved");
    }
}

/// At the end of a game with The Messages: every point is in an event, and the pawns moved by
/// exactly those points (M2, M17); once summed (M16) the scoring pawn holds them and the
/// messenger none. Returns where the pawns were summed in `events`.
pub fn pawns_hold_the_awards(game: &Game, events: &[Event]) -> usize {
    let mut sums = vec![0u32; game.scores().len()];
    for e in events {
        for (p, pts) in e.awards() {
            sums[p as usize] += pts;
        }
    }
    assert_eq!(sums, game.scores());
    let view = game.view();
    let m = view.messages.as_ref().expect("messages view");
    for (p, pawns) in m.players.iter().enumerate() {
        assert_eq!(
            (pawns.scoring, pawns.messenger),
            (sums[p], 0),
            "M16 seat {p}"
        );
    }
    events
        .iter()
        .position(|e| matches!(e, Event::PawnsSummed { .. }))
        .expect("M16: the pawns are summed")
}

/// Traders & Builders, after every move: each builder and pig is in its owner's supply or on the
/// board, never both (R8, R11, R12), and the view says the same.
pub fn figures_conserved(game: &Game) {
    use carcassonne_rules::Figure;
    let view = game.view();
    let on_board = game.builders_and_pigs_on_board();
    for (i, p) in view.players.iter().enumerate() {
        for (figure, supply) in [(Figure::Builder, p.builder), (Figure::Pig, p.pig)] {
            let placed = on_board
                .iter()
                .filter(|f| f.0 as usize == i && f.3 == figure)
                .count();
            assert_eq!(
                usize::from(supply.expect("the module's view")) + placed,
                1,
                "seat {i}: {figure:?} conserved"
            );
        }
    }
    let in_view = view
        .meeples
        .values()
        .filter(|m| matches!(m.figure, Figure::Builder | Figure::Pig));
    assert_eq!(
        in_view.count(),
        on_board.len(),
        "builders and pigs in the view"
    );
}
