//! The Tollkeepers as the server sees it: the crossroads offered in phase 2 (T2–T5) and the
//! tollhouses in the public view.

use carcassonne_rules::view::TollhouseView;
use carcassonne_rules::{Colour, Command, Decision, Event, Game, Pos, Rotation, Setup};

fn game(tollkeepers: bool, order: &[&str]) -> Game {
    let setup = Setup::new(vec![Colour::Red, Colour::Green], 1)
        .tollkeepers(tollkeepers)
        .draw_order(order.iter().map(|s| s.to_string()).collect());
    match Game::start(setup) {
        Ok((g, _)) => g,
        Err(e) => panic!("setup refused: {e}"),
    }
}

fn tollhouse_targets(g: &Game) -> Vec<Pos> {
    match g.decisions().first() {
        Some(Decision::PlaceFollower {
            tollhouse_targets, ..
        }) => tollhouse_targets.clone(),
        other => panic!("expected phase 2, got {other:?}"),
    }
}

fn place(g: &mut Game, player: u8, x: i32, y: i32) {
    let cmd = Command::PlaceTile {
        pos: Pos::new(x, y),
        rotation: Rotation::default(),
    };
    if let Err(e) = g.apply(player, cmd) {
        panic!("placement refused: {e}");
    }
}

#[test]
fn phase_two_offers_every_free_crossroads_t2_t4() {
    // tollkeepers/B is a 4-road village: east of the start tile it continues its road.
    let mut g = game(true, &["tollkeepers/B", "base/U", "base/U"]);
    place(&mut g, 0, 1, 0);
    assert_eq!(tollhouse_targets(&g), vec![Pos::new(1, 0)]);
    assert!(
        g.apply(
            0,
            Command::PlaceTollhouse {
                pos: Pos::new(1, 0)
            }
        )
        .is_ok()
    );
    assert_eq!(
        g.view().players[0].tollhouse,
        Some(TollhouseView {
            pos: Pos::new(1, 0),
            value: 1
        })
    );
    // Green's turn: the only crossroads is taken, so nothing is offered (T4).
    place(&mut g, 1, 2, 0);
    assert_eq!(tollhouse_targets(&g), Vec::<Pos>::new());
    let refused = g.apply(
        1,
        Command::PlaceTollhouse {
            pos: Pos::new(1, 0),
        },
    );
    assert_eq!(
        refused.map_err(|e| (e.code(), e.rule())),
        Err(("crossroads_taken", "T4"))
    );
}

#[test]
fn without_the_module_nothing_is_offered_and_the_view_has_no_tollhouse() {
    let mut g = game(false, &["base/X", "base/U"]);
    place(&mut g, 0, 1, 0);
    assert_eq!(tollhouse_targets(&g), Vec::<Pos>::new());
    let refused = g.apply(
        0,
        Command::PlaceTollhouse {
            pos: Pos::new(1, 0),
        },
    );
    assert_eq!(refused.map_err(|e| e.code()), Err("module_off"));
    let json = serde_json::to_value(g.view()).unwrap_or_default();
    assert!(json["players"][0].get("tollhouse").is_none());
}

/// T7, T10: every traveller group along a road counts, however long the road. A test setup may
/// repeat a design (counts are not checked against the box), so one road can carry more than 255
/// groups of one kind: the counts along a road must not stop at a byte.
#[test]
fn a_road_with_more_than_255_traveller_groups_counts_them_all_t7_t10() {
    let groups = 300;
    let mut order = vec!["tollkeepers/A".to_string()];
    order.extend(std::iter::repeat_n("tollkeepers/G".to_string(), groups));
    let setup = Setup::new(vec![Colour::Red, Colour::Blue], 0)
        .tollkeepers(true)
        .draw_order(order);
    let (mut game, _) = Game::start(setup).expect("valid setup");
    let mut events = Vec::new();
    // The crossroads east of the start tile, its W road joining the start tile's road.
    let mut play = |game: &mut Game, x: i32, second: Command| {
        let p = game.active();
        let place = Command::PlaceTile {
            pos: Pos::new(x, 0),
            rotation: Rotation::default(),
        };
        events.extend(game.apply(p, place).expect("the tile fits"));
        events.extend(game.apply(p, second).expect("legal"));
    };
    play(
        &mut game,
        1,
        Command::PlaceTollhouse {
            pos: Pos::new(1, 0),
        },
    );
    for x in 2..2 + groups as i32 {
        play(&mut game, x, Command::Pass {});
    }
    assert!(game.is_finished());
    // The road east of the crossroads: A's E segment (1 group) and 300 G tiles (1 group and
    // 1 highwaymen picture each). T10: 1 point each. The road west of the crossroads (A's W
    // segment with its farmhouse, then the start tile) is incomplete too: 1 more.
    let along = 1 + 2 * groups as u32;
    assert_eq!(game.scores(), vec![along + 1, 0]);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::TollRaised { travellers, highwaymen, at_final_scoring: true, .. }
            if *travellers == 1 + groups as u32 && *highwaymen == groups as u32
    )));
}
