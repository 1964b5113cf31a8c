//! Traders & Builders over random games, alone and with the other modules: figures are conserved
//! (meeples, builders, pigs), scores never decrease and are the sum of the events' awards, the
//! goods tokens are the goods taken, a builder part never earns another (R9: no chain), and a
//! replay gives the same events. Plus the refusals of the builder and the pig (R8, R12).

mod support;

use carcassonne_rules::{
    Colour, Command, Event, Figure, Game, Goods, PlayerId, RuleError, Setup, Target, bot,
};
use proptest::prelude::*;

/// Plays a whole random game and checks every move; returns the events.
fn check(setup: Setup, bot_seed: u64) -> Vec<Event> {
    let meeples = setup.meeples;
    let messages = setup.modules.messages;
    let (mut game, mut events) = Game::start(setup.clone()).expect("valid setup");
    let mut rng = bot_seed;
    let mut commands: Vec<(PlayerId, Command)> = Vec::new();
    // R9: whether the turn part being played is a builder part, and whether its tile was laid.
    let (mut builder_part, mut builder_tile) = (false, false);
    while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
        let before = game.scores();
        let evs = game
            .apply(player, cmd.clone())
            .expect("bot moves are legal");
        for e in &evs {
            match e {
                Event::TurnStarted { .. } => (builder_part, builder_tile) = (false, false),
                Event::DoubleTurnStarted { .. } => builder_part = true,
                Event::TilePlaced { .. } => builder_tile = std::mem::take(&mut builder_part),
                Event::DoubleTurnEarned { .. } => {
                    assert!(!builder_tile, "R9: a builder part's tile earns none")
                }
                _ => {}
            }
        }
        // Scores only grow (every award is a gain; nothing takes points back).
        for (a, b) in before.iter().zip(game.scores()) {
            assert!(b >= *a, "a score went down");
        }
        commands.push((player, cmd));
        events.extend(evs);
        support::meeples_conserved(&game, meeples);
        support::figures_conserved(&game);
        if messages {
            support::pawns_plus_waiting_equal_scores(&game.view());
        }
        assert!(commands.len() < 4000, "the game must end");
    }
    assert!(game.is_finished());
    // Every point is an event's award.
    let mut sums = vec![0u32; game.scores().len()];
    for e in &events {
        for (p, pts) in e.awards() {
            sums[p as usize] += pts;
        }
    }
    assert_eq!(sums, game.scores(), "awards add up to the scores");
    // The tokens in the view are the goods taken (R5), at most the 20 of R1.
    let view = game.view();
    let mut taken = vec![[0u32; 3]; view.players.len()];
    for e in &events {
        if let Event::GoodsTaken { player, goods, .. } = e {
            for (i, g) in Goods::ALL.into_iter().enumerate() {
                taken[*player as usize][i] += goods.get(g);
            }
        }
    }
    for (i, p) in view.players.iter().enumerate() {
        let tokens = p.goods.expect("the goods in the view");
        assert_eq!(
            [tokens.wine, tokens.grain, tokens.cloth],
            taken[i],
            "seat {i}"
        );
        assert_eq!(p.scored.total(), p.score, "seat {i}");
    }
    let totals: Vec<u32> = (0..3).map(|k| taken.iter().map(|t| t[k]).sum()).collect();
    assert!(
        totals[0] <= 9 && totals[1] <= 6 && totals[2] <= 5,
        "R1: {totals:?}"
    );
    // R14: the goods majorities are the last scoring events.
    if let Some(i) = events
        .iter()
        .position(|e| matches!(e, Event::GoodsMajority { .. }))
    {
        assert!(
            events[i..].iter().all(|e| matches!(
                e,
                Event::GoodsMajority { .. } | Event::GameEnded { .. } | Event::PawnMoved { .. }
            )),
            "R14: nothing scores after the goods"
        );
    }
    support::replays_identically(setup, commands, &events, &view);
    events
}

fn traders(players: usize, seed: u64) -> Setup {
    Setup::new(Colour::ALL[..players].to_vec(), seed).traders_builders(true)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn random_games_with_traders_builders_keep_every_invariant(
        players in 2usize..=6, seed: u64, bot: u64, others: bool
    ) {
        let setup = traders(players, seed).tollkeepers(others).messages(others);
        check(setup, bot);
    }
}

/// The random games do reach what the module is about: goods taken, builders and pigs placed,
/// double turns played, pigs paying in field scoring, goods majorities.
#[test]
fn random_games_place_builders_and_pigs_and_play_double_turns() {
    let (mut goods, mut builders, mut pigs, mut doubles, mut pig_fields, mut majorities) =
        (0, 0, 0, 0, 0, 0);
    for seed in 0..12 {
        let setup = traders(2 + (seed % 3) as usize, seed).messages(seed % 2 == 0);
        for e in check(setup, seed * 7 + 1) {
            match e {
                Event::GoodsTaken { .. } => goods += 1,
                Event::MeeplePlaced {
                    figure: Figure::Builder,
                    ..
                } => builders += 1,
                Event::MeeplePlaced {
                    figure: Figure::Pig,
                    ..
                } => pigs += 1,
                Event::DoubleTurnStarted { .. } => doubles += 1,
                Event::FieldScored { pigs, .. } if !pigs.is_empty() => pig_fields += 1,
                Event::GoodsMajority { .. } => majorities += 1,
                _ => {}
            }
        }
    }
    assert!(
        goods > 0 && builders > 0 && pigs > 0,
        "{goods} {builders} {pigs}"
    );
    assert!(doubles > 0, "double turns played");
    assert!(pig_fields > 0, "a pig paid in a field");
    assert!(majorities > 0, "goods majorities scored");
}

/// R8, R12: the builder and the pig need an own meeple in their feature and the right kind of
/// feature; the large meeple needs Inns & Cathedrals; with the module off both are refused as such.
#[test]
fn builder_and_pig_refusals_r8_r12() {
    // The start tile's road runs W-E; each base/U (a straight road W-E) extends it eastwards.
    let setup = traders(2, 1).draw_order(vec!["base/U".into(), "base/U".into(), "base/U".into()]);
    let (mut game, _) = Game::start(setup).expect("starts");
    let place = |game: &mut Game, p: PlayerId, x: i32| {
        let c = Command::PlaceTile {
            pos: carcassonne_rules::Pos::new(x, 0),
            rotation: carcassonne_rules::Rotation::default(),
        };
        game.apply(p, c).expect("fits");
    };
    let figure = |target, figure| Command::PlaceMeeple { target, figure };
    let road = Target::Road(carcassonne_rules::Side::E);
    let field = Target::Field(carcassonne_rules::Half::Nw);
    place(&mut game, 0, 1);
    // No meeple of red on the road yet: no builder; no farmer: no pig.
    let before = game.view();
    assert!(matches!(
        game.apply(0, figure(road, Figure::Builder)),
        Err(RuleError::FigurePlacement { .. })
    ));
    assert!(matches!(
        game.apply(0, figure(field, Figure::Pig)),
        Err(RuleError::FigurePlacement { .. })
    ));
    // The builder in a field, the pig on a road: the wrong kind of feature.
    assert!(matches!(
        game.apply(0, figure(field, Figure::Builder)),
        Err(RuleError::FigurePlacement { .. })
    ));
    assert_eq!(
        game.apply(0, figure(road, Figure::LargeMeeple)),
        Err(RuleError::ModuleOff("inns & cathedrals"))
    );
    assert_eq!(game.view(), before, "refusals change nothing");
    game.apply(0, figure(road, Figure::Meeple))
        .expect("a highwayman");
    // Blue extends the road; red's next tile extends it and may take the builder.
    place(&mut game, 1, 2);
    game.apply(1, Command::Pass {}).expect("pass");
    place(&mut game, 0, 3);
    let d = game.view().decisions;
    assert!(
        matches!(&d[..], [carcassonne_rules::Decision::PlaceFollower { builder_targets, .. }]
            if builder_targets == &vec![road]),
        "{d:?}"
    );
    let events = game.apply(0, figure(road, Figure::Builder)).expect("R8");
    assert!(matches!(
        events[0],
        Event::MeeplePlaced {
            figure: Figure::Builder,
            ..
        }
    ));
    assert_eq!(game.view().players[0].builder, Some(0));

    // Off: the builder and the pig are refused as a module that is off.
    let setup = Setup::new(vec![Colour::Red, Colour::Blue], 1);
    let (mut game, _) = Game::start(setup).expect("starts");
    let (p, c) = bot::random_move(&game, || 3).expect("a placement");
    game.apply(p, c).expect("legal");
    assert_eq!(
        game.apply(0, figure(road, Figure::Pig)),
        Err(RuleError::ModuleOff("traders & builders"))
    );
    // The view of a match without the module has none of its fields.
    let json = serde_json::to_string(&game.view()).expect("serializes");
    assert!(!json.contains("goods") && !json.contains("\"pig\"") && !json.contains("builder"));
}
