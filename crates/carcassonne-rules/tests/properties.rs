//! Property tests over random legal games (B4–B11, T2–T10): they never panic, every placed tile
//! matches its neighbours, meeples are conserved, score events add up to the scores, a refused
//! command changes nothing, and a replay of the same commands is identical.

mod support;

use carcassonne_rules::{Colour, Command, Event, Game, PlayerId, Pos, Setup, Side, bot};
use proptest::prelude::*;

/// A base game for `players`, with or without The Tollkeepers.
fn setup(players: usize, seed: u64, tollkeepers: bool) -> Setup {
    Setup::new(Colour::ALL[..players].to_vec(), seed).tollkeepers(tollkeepers)
}

/// Plays a whole random game, checking invariants after every command. Returns the commands
/// and all events.
fn play(setup: Setup, bot_seed: u64) -> (Vec<(PlayerId, Command)>, Vec<Event>, Game) {
    let meeples = setup.meeples;
    let (mut game, mut events) = Game::start(setup).expect("valid setup");
    let mut rng = bot_seed;
    let mut commands = Vec::new();
    while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
        // A refused command leaves the state unchanged (no tile ever fits on the start square).
        let before = game.view();
        let wrong = Command::PlaceTile {
            pos: Pos::new(0, 0),
            rotation: carcassonne_rules::Rotation::default(),
        };
        assert!(game.apply(player, wrong).is_err());
        assert_eq!(game.view(), before);

        // Counted, indexed meeple targets and placements are exactly the listed ones.
        let targets = game.meeple_targets();
        assert_eq!(targets.len(), game.meeple_target_count());
        let indexed: Vec<_> = (0..targets.len())
            .filter_map(|i| game.meeple_target(i))
            .collect();
        assert_eq!(indexed, targets);
        let mut listed = Vec::new();
        game.placements_into(&mut listed);
        assert_eq!(listed.len(), game.placement_count());
        let indexed: Vec<_> = (0..listed.len())
            .filter_map(|k| game.placement(k))
            .collect();
        assert_eq!(indexed, listed);
        assert_eq!(game.placement(listed.len()), None);

        let evs = game
            .apply(player, cmd.clone())
            .expect("bot moves are legal");
        commands.push((player, cmd));
        events.extend(evs);
        // B3: meeples are conserved.
        for (s, b) in game.supplies().iter().zip(game.meeples_on_board()) {
            assert_eq!(s + b, meeples, "meeples conserved");
        }
        assert!(commands.len() < 1000, "the game must end");
    }
    (commands, events, game)
}

fn check_game(players: usize, seed: u64, bot_seed: u64, tollkeepers: bool) {
    let s = setup(players, seed, tollkeepers);
    let (commands, events, game) = play(s.clone(), bot_seed);
    assert!(game.is_finished());
    assert!(matches!(events.last(), Some(Event::GameEnded { .. })));

    // B4: every placed tile matches every neighbour.
    for (pos, _, _) in game.placed_tiles() {
        for side in Side::ALL {
            let n = pos.step(side);
            if let Some(e) = game.edge_at(n, side.opposite()) {
                assert_eq!(game.edge_at(pos, side), Some(e), "{pos} {side}");
            }
        }
    }

    // The sum of score events equals the scores.
    let mut sums = vec![0u32; players];
    for e in &events {
        for (p, pts) in e.awards() {
            sums[p as usize] += pts;
        }
    }
    assert_eq!(sums, game.scores());

    support::replays_identically(s, commands, &events, &game.view());

    // B9: the view holds no secret: the pile appears only as counts.
    let view = serde_json::to_value(game.view()).expect("view serializes");
    assert!(view.get("seed").is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_base_games_keep_every_invariant(players in 2usize..=6, seed: u64, bot: u64) {
        check_game(players, seed, bot, false);
    }

    #[test]
    fn random_tollkeepers_games_keep_every_invariant(players in 2usize..=6, seed: u64, bot: u64) {
        check_game(players, seed, bot, true);
    }
}

#[test]
fn the_same_seed_gives_the_same_pile_and_another_seed_another() {
    let first = |seed| {
        let (g, ev) = Game::start(setup(2, seed, false)).expect("valid");
        (g.view().drawn, ev)
    };
    assert_eq!(first(7), first(7));
    let drawn: std::collections::HashSet<_> = (0..20).map(|s| first(s).0).collect();
    assert!(drawn.len() > 3, "seeds shuffle the pile");
}

#[test]
fn a_serialized_game_continues_exactly_like_the_original() {
    let (mut game, _) = Game::start(setup(3, 99, true)).expect("valid");
    let mut rng = 5u64;
    for _ in 0..60 {
        let (p, c) = bot::random_move(&game, || bot::splitmix64(&mut rng)).expect("not over");
        game.apply(p, c).expect("legal");
    }
    let json = serde_json::to_string(&game).expect("serializes");
    let mut copy: Game = serde_json::from_str(&json).expect("deserializes");
    assert_eq!(copy.view(), game.view());
    let mut rng_copy = rng;
    loop {
        let a = bot::random_move(&game, || bot::splitmix64(&mut rng));
        let b = bot::random_move(&copy, || bot::splitmix64(&mut rng_copy));
        assert_eq!(a, b);
        let Some((p, c)) = a else { break };
        assert_eq!(game.apply(p, c.clone()), copy.apply(p, c));
    }
    assert!(copy.is_finished());
    assert_eq!(copy.scores(), game.scores());
}

/// A game shrunk now and then (as a server shrinks the matches it holds: after a replay and when
/// quiet, its grid fitted to the squares in use) plays on exactly like one never shrunk, and
/// serializes to a game that does too.
#[test]
fn a_shrunk_game_continues_exactly_like_the_original() {
    for (players, seed, all) in [(2, 1, false), (4, 7, false), (3, 99, true)] {
        let (mut game, _) = Game::start(setup(players, seed, all)).expect("valid");
        let mut shrunk = game.clone();
        let mut rng = seed;
        let mut moves = 0;
        while let Some((p, c)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
            assert_eq!(game.apply(p, c.clone()), shrunk.apply(p, c));
            moves += 1;
            if moves % 7 == 0 {
                shrunk.shrink_to_fit();
                assert_eq!(shrunk.view(), game.view());
            }
            if moves == 40 {
                let json = serde_json::to_string(&shrunk).expect("serializes");
                shrunk = serde_json::from_str(&json).expect("deserializes");
            }
        }
        assert!(shrunk.is_finished());
        assert_eq!(shrunk.scores(), game.scores());
        assert_eq!(shrunk.view(), game.view());
    }
}
