//! The bots over whole seeded games: strength against the random bot, determinism, secrecy
//! (the same public state gives the same answer whatever the secrets), every module.

use carcassonne_bots::arena::{Spec, parse_modules, play, run, seating_of, setup_of, stats};
use carcassonne_bots::{Bot, BotInput, Budget, Greedy, Knowledge, Mcts, Record, Settings};
use rules::{Colour, Game, Modules, Setup};

fn specs(names: &str) -> Vec<Spec> {
    names
        .split(',')
        .map(|s| s.parse().unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

#[test]
fn greedy_beats_random_in_seeded_games_the_same_way_twice() {
    let specs = specs("greedy,random");
    let none = Modules::default();
    let first = run(&specs, &none, 6, 11, false, &mut Vec::new());
    let again = run(&specs, &none, 6, 11, false, &mut Vec::new());
    assert_eq!(first, again);
    let outcomes = first.unwrap_or_else(|e| panic!("{e}"));
    let s = stats(2, &outcomes);
    assert!(
        s[0].wins >= 6.0,
        "greedy won {} of 6: {outcomes:?}",
        s[0].wins
    );
    assert!(s[0].mean_diff > 20.0, "{s:?}");
}

#[test]
fn a_search_match_is_the_same_from_the_same_seeds() {
    let specs = specs("mcts:6i,greedy");
    let m = parse_modules("tollkeepers").unwrap_or_else(|e| panic!("{e}"));
    let once = |_| {
        play(
            &specs,
            &seating_of(2, 1),
            setup_of(2, &m, 5, 0),
            99,
            false,
            &mut Vec::new(),
        )
    };
    let (a, b) = (once(0), once(1));
    assert!(a.is_ok(), "{a:?}");
    assert_eq!(a, b);
}

#[test]
fn every_module_combination_plays_to_the_end_without_an_illegal_move() {
    for modules in [
        "none",
        "tollkeepers",
        "messages",
        "france",
        "chips",
        "tollkeepers,messages,chips",
    ] {
        let m = parse_modules(modules).unwrap_or_else(|e| panic!("{e}"));
        let out = run(&specs("greedy,random"), &m, 1, 3, false, &mut Vec::new());
        assert!(out.is_ok(), "{modules}: {out:?}");
    }
    let out = run(
        &specs("greedy,mcts:4i"),
        &Modules::all(),
        1,
        8,
        false,
        &mut Vec::new(),
    );
    assert!(out.is_ok(), "{out:?}");
}

/// Plays `turns` commands of `game` by the greedy bot, applying each to `twin` as well, and
/// returns both records.
fn play_twins(setups: [Setup; 2], commands: usize) -> ([Game; 2], [Record; 2]) {
    let start = |s: &Setup| Game::start(s.clone()).unwrap_or_else(|e| panic!("{e}"));
    let (mut a, oa) = start(&setups[0]);
    let (mut b, ob) = start(&setups[1]);
    let mut ra = Record::new(&setups[0], oa);
    let mut rb = Record::new(&setups[1], ob);
    let mut bot = Greedy::new(1);
    for _ in 0..commands {
        let Some((_, seat)) = a.first_decision() else {
            break;
        };
        let view = a.view();
        let c = bot
            .choose(&BotInput {
                seat,
                record: &ra,
                view: &view,
            })
            .unwrap_or_else(|| panic!("no answer"));
        let ea = a.apply(seat, c.clone()).unwrap_or_else(|e| panic!("{e}"));
        let eb = b.apply(seat, c.clone()).unwrap_or_else(|e| panic!("{e}"));
        ra.push(seat, c.clone(), ea);
        rb.push(seat, c, eb);
    }
    ([a, b], [ra, rb])
}

#[test]
fn a_bot_answers_the_same_whatever_the_pile_order_of_the_tiles_not_drawn() {
    let base = Setup::new(vec![Colour::Red, Colour::Blue], 21)
        .tollkeepers(true)
        .messages(true);
    let (g, _) = Game::start(base.clone()).unwrap_or_else(|e| panic!("{e}"));
    let pile = g.secrets().pile;
    // The first 14 tiles alike (about 12 turns are played), the rest in the opposite order.
    let mut other = pile[..14].to_vec();
    other.extend(pile[14..].iter().rev().cloned());
    assert_ne!(pile, other);
    let setups = [
        base.clone()
            .draw_order(pile)
            .dispatch_order(vec![1, 2, 3, 4, 5, 6, 7, 8]),
        base.draw_order(other)
            .dispatch_order(vec![8, 7, 6, 5, 4, 3, 2, 1]),
    ];
    let ([a, b], [ra, rb]) = play_twins(setups, 24);
    assert_ne!(a.secrets(), b.secrets());
    let (va, vb) = (a.view(), b.view());
    assert_eq!(va, vb, "the same public state");
    let seat = a.first_decision().map(|d| d.1).unwrap_or(0);
    let ia = BotInput {
        seat,
        record: &ra,
        view: &va,
    };
    let ib = BotInput {
        seat,
        record: &rb,
        view: &vb,
    };
    let bots = |seed| -> [Box<dyn Bot>; 2] {
        [
            Box::new(Greedy::new(seed)),
            Box::new(Mcts::new(Settings::new(Budget::iterations(12)), seed)),
        ]
    };
    let answers_a: Vec<_> = bots(5).iter_mut().map(|b| b.choose(&ia)).collect();
    let answers_b: Vec<_> = bots(5).iter_mut().map(|b| b.choose(&ib)).collect();
    assert!(answers_a.iter().all(Option::is_some));
    assert_eq!(answers_a, answers_b);
}

#[test]
fn every_determinization_replays_to_the_public_view() {
    let m = Modules::all();
    let setup = setup_of(3, &m, 4, 0);
    let (mut game, opening) = Game::start(setup.clone()).unwrap_or_else(|e| panic!("{e}"));
    let mut record = Record::new(&setup, opening);
    let mut rng = 77u64;
    let mut checked = 0;
    while let Some((seat, command)) =
        rules::bot::random_move(&game, || rules::bot::splitmix64(&mut rng))
    {
        if record.moves().len().is_multiple_of(15) {
            let view = game.view();
            let input = BotInput {
                seat,
                record: &record,
                view: &view,
            };
            let know = Knowledge::of(&input).unwrap_or_else(|e| panic!("{e}"));
            for k in 0..3u64 {
                let mut r = k;
                let g = know.game(&input, || rules::bot::splitmix64(&mut r));
                assert!(g.is_ok(), "move {}: {g:?}", record.moves().len());
            }
            checked += 1;
        }
        let events = game
            .apply(seat, command.clone())
            .unwrap_or_else(|e| panic!("{e}"));
        record.push(seat, command, events);
    }
    assert!(checked > 10);
}
