//! The Tollkeepers as the server sees it: the crossroads offered in phase 2 (T2–T5) and the
//! tollhouses in the public view.

use rules::view::TollhouseView;
use rules::{Colour, Command, Decision, Game, Modules, Pos, Rotation, Setup};

fn game(tollkeepers: bool, order: &[&str]) -> Game {
    let setup = Setup {
        modules: Modules { tollkeepers },
        draw_order: Some(order.iter().map(|s| s.to_string()).collect()),
        ..Setup::new(vec![Colour::Red, Colour::Green], 1)
    };
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
