//! Decisions in one shape (B4, B5, T2): every open decision has a stable id, a deterministic
//! default answer that is legal, and options that count, index and list the same commands as
//! the decision clients see.

use carcassonne_rules::{Colour, Command, Game, Options, Setup, bot};
use proptest::prelude::*;

fn setup(players: usize, seed: u64, tollkeepers: bool) -> Setup {
    Setup::new(Colour::ALL[..players].to_vec(), seed).tollkeepers(tollkeepers)
}

/// Plays a random game; at every step checks the defaults and options of every open decision.
fn check(players: usize, seed: u64, bot_seed: u64, tollkeepers: bool) {
    check_setup(setup(players, seed, tollkeepers), bot_seed);
}

fn check_setup(setup: Setup, bot_seed: u64) {
    let (mut game, _) = Game::start(setup).expect("valid setup");
    let mut rng = bot_seed;
    let mut steps = 0;
    while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
        let open = game.open_decisions();
        assert!(!open.is_empty());
        for (id, decision) in &open {
            // The default is legal, answers this decision, and is deterministic.
            let (p, default) = game
                .default_command(*id)
                .expect("every decision has a default");
            assert_eq!(p, decision.player());
            assert_eq!(game.default_command(*id), Some((p, default.clone())));
            let mut copy = game.clone();
            copy.apply(p, default.clone())
                .unwrap_or_else(|e| panic!("default {default:?} of {decision:?} refused: {e}"));
            // The engine's options and the client's decision hold the same commands.
            let options = game.options(*id).expect("open");
            assert_eq!(options.player(), decision.player());
            assert_eq!(options.may_pass(), decision.may_pass());
            let ours: Vec<Vec<Command>> = (0..options.groups()).map(|g| options.list(g)).collect();
            let theirs: Vec<Vec<Command>> =
                (0..decision.groups()).map(|g| decision.list(g)).collect();
            let flat = |v: Vec<Vec<Command>>| {
                let mut f: Vec<String> = v
                    .into_iter()
                    .flatten()
                    .map(|c| serde_json::to_string(&c).expect("ser"))
                    .collect();
                f.sort();
                f
            };
            assert_eq!(flat(ours), flat(theirs));
            for g in 0..options.groups() {
                assert_eq!(options.list(g).len(), options.len(g));
            }
        }
        // A refused command keeps every id; ids change only when a decision is answered.
        let ids =
            |g: &Game| -> Vec<_> { g.open_decisions().into_iter().map(|(id, _)| id).collect() };
        let before = ids(&game);
        let far = Command::PlaceTile {
            pos: carcassonne_rules::Pos::new(1000, 1000),
            rotation: carcassonne_rules::Rotation::default(),
        };
        assert!(game.apply(player, far).is_err());
        assert_eq!(ids(&game), before);
        game.apply(player, cmd).expect("bot moves are legal");
        assert!(
            ids(&game)
                .iter()
                .all(|id| before.contains(id) || id > before.iter().max().unwrap_or(id))
        );
        steps += 1;
        assert!(steps < 1000, "the game must end");
    }
    assert!(game.is_finished());
    assert!(game.open_decisions().is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_decision_kind_has_a_legal_default(players in 2usize..=6, seed: u64, bot: u64, toll: bool) {
        check(players, seed, bot, toll);
    }

    /// M3, M6, M7: pawn choices, dispatches and chains have legal defaults and options too.
    #[test]
    fn every_messages_decision_has_a_legal_default(players in 2usize..=6, seed: u64, bot: u64, toll: bool) {
        check_setup(setup(players, seed, toll).messages(true), bot);
    }

    /// On the France map with its chips (P1–P10): placements, wine sales (P9: default no sale).
    #[test]
    fn every_decision_on_the_map_has_a_legal_default(players in 2usize..=6, seed: u64, bot: u64, toll: bool) {
        check_setup(setup(players, seed, toll).map("france").chips(true), bot);
    }

    /// All modules at once (M17 with P8/P9: chip and wine pawn choices, dispatch 4 on the map;
    /// the large meeple's targets in phase 2, I4; builders, pigs and double turns, R8–R12).
    #[test]
    fn every_decision_with_all_modules_has_a_legal_default(players in 2usize..=6, seed: u64, bot: u64, toll: bool) {
        check_setup(setup(players, seed, toll).messages(true).traders_builders(true).map("france").chips(true).inns_cathedrals(true), bot);
    }

    /// Inns & Cathedrals alone: the large meeple's options are the decision's, and legal (I4).
    #[test]
    fn every_decision_with_inns_cathedrals_has_a_legal_default(players in 2usize..=6, seed: u64, bot: u64, toll: bool) {
        check_setup(setup(players, seed, toll).inns_cathedrals(true), bot);
    }

    /// Traders & Builders (R8, R9, R12): figures in phase 2 and the double turn (default: take it).
    #[test]
    fn every_traders_builders_decision_has_a_legal_default(players in 2usize..=6, seed: u64, bot: u64, toll: bool) {
        check_setup(setup(players, seed, toll).traders_builders(true), bot);
    }
}

#[test]
fn playing_only_defaults_ends_the_game() {
    for (tollkeepers, messages, map) in [
        (false, false, false),
        (true, false, false),
        (false, true, false),
        (true, true, false),
        (true, false, true),
        (true, true, true),
    ] {
        let mut s = setup(3, 11, tollkeepers)
            .messages(messages)
            .traders_builders(messages);
        if map {
            s = s.map("france").chips(true);
        }
        let (mut game, _) = Game::start(s).expect("valid setup");
        let mut n = 0;
        while let Some((id, _)) = game.first_decision() {
            let (p, c) = game.default_command(id).expect("a default");
            game.apply(p, c).expect("defaults are legal");
            n += 1;
            assert!(n < 1000);
        }
        assert!(game.is_finished());
    }
}

#[test]
fn the_setup_builder_equals_the_struct_literal() {
    let built = Setup::new(vec![Colour::Red, Colour::Blue], 5)
        .tollkeepers(true)
        .meeples(9)
        .draw_order(vec!["base/U".into()]);
    let literal = Setup {
        meeples: 9,
        modules: carcassonne_rules::Modules {
            tollkeepers: true,
            ..Default::default()
        },
        draw_order: Some(vec!["base/U".into()]),
        ..Setup::new(vec![Colour::Red, Colour::Blue], 5)
    };
    assert_eq!(built, literal);
}
