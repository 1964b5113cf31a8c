//! Random games on the France map (P1–P10): they never panic, no tile lies off the map or on a
//! large city, every printed border side and open edge of a large city is met by the same edge,
//! meeples are conserved (9 a player), and a replay of the same commands is identical.

use carcassonne_rules::Edge;
use carcassonne_rules::maps::{self, Across, Print};
use carcassonne_rules::{Colour, Command, Event, Game, PlayerId, Setup, SetupError, Side, bot};

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
    let chips_at_start = game.view().map.as_ref().map_or(0, |m| m.chips.len());
    while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
        // B9, P7: a chip lying face down is only "a chip lies here" in the view.
        let view = game.view();
        let mut public = serde_json::to_value(&view).expect("serializes");
        if let Some(map) = public.get_mut("map").and_then(|m| m.as_object_mut()) {
            map.remove("info"); // towns show their grape
            map.remove("hands"); // chips taken are face up
        }
        if let Some(d) = public.get_mut("decisions") {
            *d = serde_json::Value::Null; // a sale names the seller's own open chips
        }
        assert!(!public.to_string().contains("grape"), "a chip's face leaks");
        let open: usize = view.map.as_ref().map_or(0, |m| {
            m.chips.len() + m.hands.iter().map(Vec::len).sum::<usize>()
        });
        let sold: usize = events
            .iter()
            .map(|e| match e {
                Event::WineSold { chips, .. } => chips.len(),
                _ => 0,
            })
            .sum();
        assert_eq!(open + sold, chips_at_start, "chips conserved");
        let evs = game
            .apply(player, cmd.clone())
            .expect("bot moves are legal");
        commands.push((player, cmd));
        events.extend(evs);
        if commands.len() == 40 {
            // A server snapshot (map layer, large cities, chips) restores the same game.
            let text = serde_json::to_string(&game).expect("serializes");
            let copy: Game = serde_json::from_str(&text).expect("deserializes");
            assert_eq!(copy.view(), game.view());
            game = copy;
        }
        for (s, b) in game.supplies().iter().zip(game.meeples_on_board()) {
            assert_eq!(s + b, meeples, "meeples conserved");
        }
        assert!(commands.len() < 1000, "the game must end");
    }
    (commands, events, game)
}

/// Plays and checks one game; returns how many wines were sold.
fn check(players: usize, seed: u64, bot_seed: u64, tollkeepers: bool, chips: bool) -> usize {
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
    // Every point is an event's award (chips and wine included).
    let mut sums = vec![0u32; players];
    for e in &events {
        for (p, pts) in e.awards() {
            sums[p as usize] += pts;
        }
    }
    assert_eq!(sums, game.scores());
    if chips {
        let taken = events
            .iter()
            .filter(|e| matches!(e, Event::ChipTaken { .. }))
            .count();
        assert!(taken > 0, "chips are taken ({taken})");
    }
    // B10: a replay is identical.
    let (mut again, mut replayed) = Game::start(s).expect("valid setup");
    for (p, c) in commands {
        replayed.extend(again.apply(p, c).expect("replay"));
    }
    assert_eq!(replayed, events);
    assert_eq!(again.view(), game.view());
    events
        .iter()
        .filter(|e| matches!(e, Event::WineSold { .. }))
        .count()
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
    let mut sales = 0;
    for seed in 0..12 {
        let players = 2 + (seed as usize % 4);
        sales += check(players, seed, seed * 13 + 5, seed % 2 == 0, true);
    }
    assert!(sales > 0, "random games sell wine");
}

/// P2: without names, the seed picks two distinct start squares of the three; named ones are
/// used; an unknown map or start square is refused. P7: 30 chips; 9 meeples on a map.
#[test]
fn start_squares_from_the_seed_or_the_setup_p2() {
    let map = maps::map("france").expect("built in");
    let starts: Vec<_> = map.starts().iter().map(|s| s.pos).collect();
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let (_, events) = Game::start(setup(2, seed, false, true)).expect("valid");
        let (a, b) = match &events[..2] {
            [
                Event::GameStarted { pos: a, .. },
                Event::StartTilePlaced { pos: b, .. },
            ] => (*a, *b),
            other => panic!("opening events {other:?}"),
        };
        assert!(starts.contains(&a) && starts.contains(&b) && a != b);
        seen.insert((a, b));
    }
    assert_eq!(seen.len(), 6, "every ordered pair of start squares occurs");
    let named = setup(2, 1, false, true).map_starts("Le Mans", "Nancy");
    let (game, _) = Game::start(named).expect("valid");
    let view = game.view();
    assert!(view.board.contains_key("6,10") && view.board.contains_key("14,11"));
    assert_eq!(
        view.map.as_ref().map(|m| m.chips.len()),
        Some(30),
        "P7: 30 chips"
    );
    assert_eq!(view.players[0].meeples, 9);
    // The text picture shows where chips lie, never what they are.
    let text = carcassonne_rules::text::board(&view);
    assert_eq!(text.matches(" ? ").count(), 30, "{text}");
    assert!(text.contains("D0 "), "the start tile, unturned: {text}");
    let bad = setup(2, 1, false, false).map_starts("Paris", "Nancy");
    assert!(matches!(Game::start(bad), Err(SetupError::Map(_))));
    let mut unknown = setup(2, 1, false, false);
    if let Some(m) = &mut unknown.modules.map {
        m.map = "atlantis".into();
    }
    assert!(matches!(Game::start(unknown), Err(SetupError::Map(_))));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Any seed, any bot, any player count, with or without The Tollkeepers and the chips.
    #[test]
    fn any_random_game_on_the_france_map(
        players in 2usize..=6,
        seed: u64,
        bot_seed: u64,
        toll: bool,
        chips: bool,
    ) {
        check(players, seed, bot_seed, toll, chips);
    }
}
