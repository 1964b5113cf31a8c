//! Every module at once (The Tollkeepers, The Messages, Traders & Builders, the France map with
//! its chips, Inns & Cathedrals) over random games: they never panic, meeples, large meeples,
//! builders and pigs are conserved, a replay is byte for byte the same, the pawns add up to the
//! points the events report (chips, wine and goods included, M17), scores never decrease, no tile
//! lies off the map (P1, R18), a turn sells at most one wine, its dispatch-4 tiles and builder
//! parts included (P9, M11, R18), and the scorings of inn roads and cathedral cities follow I7–I10
//! (2 or 3 a unit when complete, 0 when not).

mod support;

use carcassonne_rules::maps;
use carcassonne_rules::{
    Colour, Command, Decision, Event, FeatureKind, Figure, Game, PlayerId, ScoreReason, Setup,
    View, bot,
};
use proptest::prelude::*;

fn setup(players: usize, seed: u64) -> Setup {
    Setup::new(Colour::ALL[..players].to_vec(), seed)
        .tollkeepers(true)
        .messages(true)
        .traders_builders(true)
        .map("france")
        .chips(true)
        .inns_cathedrals(true)
}

/// M2: each player's pawns plus the points still waiting for a pawn choice equal the score.
fn check_pawns(view: &View) {
    support::pawns_plus_waiting_equal_scores(view);
}

/// Plays a whole random game; with `dark` the even seats prefer dark spaces (M3), so dispatches
/// (and dispatch 4's extra tiles) come often.
fn play(setup: Setup, bot_seed: u64, dark: bool) -> (Vec<(PlayerId, Command)>, Vec<Event>, Game) {
    let meeples = setup.meeples;
    let (mut game, mut events) = Game::start(setup).expect("valid setup");
    let mut rng = bot_seed;
    let mut commands = Vec::new();
    if dark {
        support::prefer_dark(&mut game, &mut commands, &mut events);
    }
    // Wines sold in the current turn (P9: at most one, every turn part of it, M11).
    let mut sold_this_turn = 0;
    let mut scores = game.scores();
    while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
        let evs = game
            .apply(player, cmd.clone())
            .expect("bot moves are legal");
        for e in &evs {
            match e {
                Event::TurnStarted { .. } => sold_this_turn = 0,
                Event::WineSold { .. } => {
                    sold_this_turn += 1;
                    assert_eq!(sold_this_turn, 1, "one wine sale a turn (P9, M11)");
                }
                _ => {}
            }
        }
        if sold_this_turn > 0 {
            assert!(
                !game
                    .decisions()
                    .iter()
                    .any(|d| matches!(d, Decision::SellWine { .. })),
                "no second sale offered in a turn (M11)"
            );
        }
        commands.push((player, cmd));
        check_inns_and_cathedrals(&evs);
        events.extend(evs);
        support::meeples_conserved(&game, meeples);
        // Points are only ever added: an award is never negative, and no rule takes points back.
        for (now, before) in game.scores().iter().zip(&scores) {
            assert!(now >= before, "a score decreased: {before} -> {now}");
        }
        scores = game.scores();
        support::figures_conserved(&game);
        check_pawns(&game.view());
        if commands.len() == 60 {
            // A server snapshot with every module restores the same game.
            let text = serde_json::to_string(&game).expect("serializes");
            let copy: Game = serde_json::from_str(&text).expect("deserializes");
            assert_eq!(copy.view(), game.view());
            game = copy;
        }
        assert!(commands.len() < 3000, "the game must end");
    }
    (commands, events, game)
}

/// I7–I10 on every scoring of a road or city: the rate is the inn's or the cathedral's when one
/// is there (2 a road tile, 3 a city tile and coat of arms when complete, 0 when not), else the
/// base game's (B6, B7). A large meeple counts 2 (I5): `count` is the meeples plus one per large.
fn check_inns_and_cathedrals(events: &[Event]) {
    for e in events {
        let Event::FeatureScored {
            feature,
            tiles,
            coats,
            complete,
            points,
            inn,
            cathedral,
            meeples,
            ..
        } = e
        else {
            continue;
        };
        let (units, special, normal) = match feature {
            FeatureKind::Road => (*tiles, *inn, 1),
            FeatureKind::City => (tiles + coats, *cathedral, if *complete { 2 } else { 1 }),
            _ => continue,
        };
        let rate = match (special, complete, feature) {
            (false, _, _) => normal,
            (true, false, _) => 0,
            (true, true, FeatureKind::Road) => 2,
            (true, true, _) => 3,
        };
        assert_eq!(*points, rate * units, "{e:?}");
        assert!(!(*inn && *feature != FeatureKind::Road), "{e:?}");
        assert!(!(*cathedral && *feature != FeatureKind::City), "{e:?}");
        for m in meeples {
            assert!(m.large <= 1 && m.count > m.large, "{e:?}");
        }
    }
}

/// Plays and checks one game; returns its events.
fn check(players: usize, seed: u64, bot_seed: u64, dark: bool) -> Vec<Event> {
    let s = setup(players, seed);
    let (commands, events, game) = play(s.clone(), bot_seed, dark);
    assert!(game.is_finished());

    // P1: every tile on a placeable square of the map.
    let map = maps::map("france").expect("built in");
    for (pos, _, _) in game.placed_tiles() {
        assert!(map.is_placeable(pos), "tile off the map at {pos}");
    }

    // Every point is in an event, and the pawns moved by exactly those points (M2, M17).
    let summed = support::pawns_hold_the_awards(&game, &events);
    // M17: every chip and wine point moved a pawn (before M16) with its reason.
    let earned = |reason: ScoreReason| -> u32 {
        events[..summed]
            .iter()
            .map(|e| match e {
                Event::ChipTaken { points, .. } if reason == ScoreReason::Chip => *points,
                Event::WineSold { points, .. } if reason == ScoreReason::Wine => *points,
                _ => 0,
            })
            .sum()
    };
    let moved = |reason: ScoreReason| -> u32 {
        events
            .iter()
            .map(|e| match e {
                Event::PawnMoved {
                    reason: r,
                    from,
                    to,
                    ..
                } if *r == reason => to - from,
                _ => 0,
            })
            .sum()
    };
    for reason in [ScoreReason::Chip, ScoreReason::Wine] {
        assert_eq!(moved(reason), earned(reason), "{reason:?}");
    }

    // The view's points by kind add up to each score, and each kind to its events' points.
    let view = game.view();
    for (i, p) in view.players.iter().enumerate() {
        assert_eq!(p.scored.total(), p.score, "seat {i}: {:?}", p.scored);
        let sum = |f: &dyn Fn(&Event) -> u32| -> u32 { events.iter().map(f).sum() };
        let me = i as u8;
        let tolls = sum(&|e| match e {
            Event::TollRaised { player, points, .. } if *player == me => *points,
            _ => 0,
        });
        let dispatches = sum(&|e| match e {
            Event::DispatchResolved { player, points, .. } if *player == me => *points,
            _ => 0,
        });
        let chips = sum(&|e| match e {
            Event::ChipTaken { player, points, .. } if *player == me => *points,
            _ => 0,
        });
        let wine = sum(&|e| match e {
            Event::WineSold { player, points, .. } if *player == me => *points,
            _ => 0,
        });
        // R13: a field pays its winners 3 a city, or 4 to one with their pig there.
        let award = |e: &Event| e.awards().iter().filter(|a| a.0 == me).map(|a| a.1).sum();
        let fields = sum(&|e| match e {
            Event::FieldScored { .. } => award(e),
            _ => 0,
        });
        let goods = sum(&|e| match e {
            Event::GoodsMajority { .. } => award(e),
            _ => 0,
        });
        let s = &p.scored;
        assert_eq!(
            (s.tolls, s.dispatches, s.chips, s.wine, s.fields, s.goods),
            (tolls, dispatches, chips, wine, fields, goods),
            "seat {i}"
        );
    }

    support::replays_identically(s, commands, &events, &view);
    events
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_games_with_every_module_keep_every_invariant(players in 2usize..=6, seed: u64, bot: u64, dark: bool) {
        check(players, seed, bot, dark);
    }
}

/// The games above do reach what the combination is about: chips and wines moved pawns,
/// dispatch 4's extra tiles were laid on the map, large meeples were placed and counted in a
/// scoring, and inn roads and cathedral cities scored (complete or not).
#[test]
fn random_games_with_every_module_take_chips_sell_wine_and_lay_extra_tiles() {
    let (mut chip_moves, mut wine_moves, mut extra_tiles) = (0, 0, 0);
    let (mut large_placed, mut large_counted, mut inns, mut cathedrals) = (0, 0, 0, 0);
    for seed in 0..16 {
        let events = check(2 + (seed % 3) as usize, seed, seed * 13 + 5, true);
        for e in &events {
            match e {
                Event::PawnMoved {
                    reason: ScoreReason::Chip,
                    ..
                } => chip_moves += 1,
                Event::PawnMoved {
                    reason: ScoreReason::Wine,
                    ..
                } => wine_moves += 1,
                Event::DispatchResolved {
                    dispatch: 4,
                    action: true,
                    ..
                } => extra_tiles += 1,
                Event::MeeplePlaced {
                    figure: Figure::LargeMeeple,
                    ..
                } => large_placed += 1,
                Event::FeatureScored {
                    inn,
                    cathedral,
                    meeples,
                    ..
                } => {
                    inns += usize::from(*inn);
                    cathedrals += usize::from(*cathedral);
                    large_counted += usize::from(meeples.iter().any(|m| m.large > 0));
                }
                _ => {}
            }
        }
    }
    assert!(
        large_placed > 0 && large_counted > 0,
        "large meeples played"
    );
    assert!(
        inns > 0 && cathedrals > 0,
        "inn roads ({inns}) and cathedral cities ({cathedrals}) scored"
    );
    assert!(chip_moves > 0, "chips moved pawns");
    assert!(
        wine_moves > 0,
        "wines moved pawns ({chip_moves} chip moves)"
    );
    assert!(extra_tiles > 0, "dispatch 4 laid extra tiles");
}

/// R18, I17: a France match takes both expansions' tiles: 72 base + 18 Inns & Cathedrals + 24
/// Traders & Builders = 114, and 124 with The Tollkeepers' 10; every tile is on the board, drawn
/// or in the pile when the game starts, and each set is whole.
#[test]
fn a_france_setup_with_both_expansions_holds_114_tiles_124_with_the_tollkeepers() {
    for (tollkeepers, total) in [(false, 114), (true, 124)] {
        let setup = Setup::new(Colour::ALL[..3].to_vec(), 7)
            .tollkeepers(tollkeepers)
            .messages(true)
            .traders_builders(true)
            .inns_cathedrals(true)
            .map("france")
            .chips(true);
        let (game, _) = Game::start(setup).expect("valid setup");
        let view = game.view();
        let cat = carcassonne_rules::catalogue();
        let mut by_set = std::collections::BTreeMap::<String, u32>::new();
        let ids = view
            .board
            .values()
            .map(|t| (&t.tile, 1))
            .chain(view.drawn.iter().map(|d| (d, 1)))
            .chain(view.pile.iter().map(|(id, &n)| (id, n)));
        for (id, n) in ids {
            let design = cat.get(cat.find(id).expect("a tile of the catalogue"));
            *by_set.entry(design.set.clone()).or_default() += n;
        }
        let mut expected = std::collections::BTreeMap::from([
            ("base".to_string(), 72),
            ("inns-cathedrals".to_string(), 18),
            ("traders-builders".to_string(), 24),
        ]);
        if tollkeepers {
            expected.insert("tollkeepers".to_string(), 10);
        }
        assert_eq!(by_set, expected, "tollkeepers: {tollkeepers}");
        assert_eq!(by_set.values().sum::<u32>(), total);
        let drawn = u32::from(view.drawn.is_some());
        assert_eq!(
            view.pile_size + view.board.len() as u32 + drawn,
            total,
            "pile, board and drawn tile"
        );
    }
}
