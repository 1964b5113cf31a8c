//! `Game::refresh_view` gives exactly `Game::view`, whatever earlier view of the game it starts
//! from (one move behind, two behind as the server keeps it, the start, one whose pile lacks
//! designs or holds extra ones), over random games with and without every module; a view of
//! another, further game is rebuilt.

use carcassonne_rules::{Colour, Game, Setup, View, bot};
use proptest::prelude::*;

fn setup(players: usize, seed: u64, all: bool) -> Setup {
    let s = Setup::new(Colour::ALL[..players].to_vec(), seed);
    if all {
        s.tollkeepers(true)
            .messages(true)
            .traders_builders(true)
            .map("france")
            .chips(true)
            .inns_cathedrals(true)
    } else {
        s
    }
}

fn check(players: usize, seed: u64, all: bool) {
    let (mut game, _) = Game::start(setup(players, seed, all)).expect("valid setup");
    let start = game.view();
    let mut behind_one = game.view();
    let mut behind_two = game.view();
    let mut rng = seed;
    let mut moves = 0;
    while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
        game.apply(player, cmd).expect("a legal move");
        moves += 1;
        let fresh = game.view();
        // The server's way: the spare view, two moves old, is brought forward and swapped.
        game.refresh_view(&mut behind_two);
        assert_eq!(behind_two, fresh, "two behind, move {moves}");
        std::mem::swap(&mut behind_one, &mut behind_two);
        if moves % 17 == 0 {
            let mut from_start = start.clone();
            game.refresh_view(&mut from_start);
            assert_eq!(from_start, fresh, "from the start, move {moves}");
        }
        if moves % 13 == 0 {
            // A pile that lacks designs still in the pile, holds some that are not, and miscounts.
            let mut tampered = behind_one.clone();
            let first = tampered.pile.keys().next().cloned();
            let last = tampered.pile.keys().next_back().cloned();
            for k in first.iter().chain(&last) {
                tampered.pile.remove(k);
            }
            tampered.pile.insert("!".into(), 3);
            tampered.pile.insert("~".into(), 1);
            tampered.pile.values_mut().for_each(|n| *n += 7);
            game.refresh_view(&mut tampered);
            assert_eq!(tampered, fresh, "a tampered pile, move {moves}");
        }
    }
    let mut one = behind_one.clone();
    game.refresh_view(&mut one);
    assert_eq!(one, game.view());
    // A view of another game with more tiles down is rebuilt.
    let (other, _) = Game::start(setup(players, seed + 1, all)).expect("valid setup");
    let mut finished: View = game.view();
    other.refresh_view(&mut finished);
    assert_eq!(finished, other.view());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn refreshed_views_are_fresh_views(players in 2usize..=6, seed in any::<u64>(), all in any::<bool>()) {
        check(players, seed, all);
    }
}

#[test]
fn refreshed_views_base_and_all_modules() {
    for seed in 0..3 {
        check(2, seed, false);
        check(3, seed, true);
    }
}
