//! Random games on the France map (P1–P10): they never panic, no tile lies off the map or on a
//! large city, every printed border side and open edge of a large city is met by the same edge,
//! meeples are conserved (9 a player), and a replay of the same commands is identical.

use rules::Edge;
use rules::maps::{self, Across, Print};
use rules::{Colour, Command, Event, Game, PlayerId, Setup, Side, bot};

fn setup(players: usize, seed: u64, tollkeepers: bool, chips: bool) -> Setup {
    Setup::new(Colour::ALL[..players].to_vec(), seed)
        .tollkeepers(tollkeepers)
        .map("france")
        .chips(chips)
}

fn play(setup: Setup, bot_seed: u64) -> (Vec<(PlayerId, Command)>, Vec<Event>, Game) {
    let meeples = setup.meeples;
    let (mut game, mut events) = Game::start(setup).expect("valid setup");
    let mut rng = bot_seed;
    let mut commands = Vec::new();
    while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
        let evs = game
            .apply(player, cmd.clone())
            .expect("bot moves are legal");
        commands.push((player, cmd));
        events.extend(evs);
        for (s, b) in game.supplies().iter().zip(game.meeples_on_board()) {
            assert_eq!(s + b, meeples, "meeples conserved");
        }
        assert!(commands.len() < 1000, "the game must end");
    }
    (commands, events, game)
}

fn check(players: usize, seed: u64, bot_seed: u64, tollkeepers: bool, chips: bool) {
    let s = setup(players, seed, tollkeepers, chips);
    assert_eq!(s.meeples, 9, "9 meeples a player on a map");
    let (commands, events, game) = play(s.clone(), bot_seed);
    assert!(game.is_finished());
    let map = maps::map("france").expect("built in");
    let mut placed = 0;
    for (pos, _, _) in game.placed_tiles() {
        placed += 1;
        // P1: on a placeable square only (never a large city, P3).
        assert!(map.is_placeable(pos), "tile off the map at {pos}");
        for side in Side::ALL {
            let edge = game.edge_at(pos, side);
            match map.across(pos, side) {
                Across::Border(Print::Road) => assert_eq!(edge, Some(Edge::Road), "{pos} {side}"),
                Across::Border(Print::City { .. }) | Across::LargeCity { .. } => {
                    assert_eq!(edge, Some(Edge::City), "{pos} {side}")
                }
                Across::Square(n) => {
                    if let Some(e) = game.edge_at(n, side.opposite()) {
                        assert_eq!(edge, Some(e), "{pos} {side}");
                    }
                }
                _ => {}
            }
        }
    }
    assert!(placed > 40, "a map game places most of the pile ({placed})");
    // B10: a replay is identical.
    let (mut again, mut replayed) = Game::start(s).expect("valid setup");
    for (p, c) in commands {
        replayed.extend(again.apply(p, c).expect("replay"));
    }
    assert_eq!(replayed, events);
    assert_eq!(again.view(), game.view());
}

#[test]
fn random_games_on_the_france_map() {
    for seed in 0..12 {
        check(2 + (seed as usize % 4), seed, seed * 7 + 1, false, false);
    }
}

#[test]
fn random_games_on_the_france_map_with_tollkeepers() {
    for seed in 0..12 {
        check(2 + (seed as usize % 4), seed, seed * 11 + 3, true, false);
    }
}

#[test]
fn random_games_on_the_france_map_with_chips() {
    for seed in 0..12 {
        check(
            2 + (seed as usize % 4),
            seed,
            seed * 13 + 5,
            seed % 2 == 0,
            true,
        );
    }
}
