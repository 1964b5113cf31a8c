//! No command can panic the engine or change the state when refused (B4, B5, T2–T5): any player
//! id, any square (the extremes of `i32` included), any target, in every phase.

use rules::{Colour, Command, Game, Half, Pos, Rotation, Setup, Side, Target};

fn extreme_squares() -> Vec<Pos> {
    let values = [
        i32::MIN,
        i32::MIN + 1,
        -1_000_000,
        -14,
        -13,
        0,
        13,
        14,
        1_000_000,
        i32::MAX - 1,
        i32::MAX,
    ];
    let mut out = Vec::new();
    for &x in &values {
        for &y in &values {
            out.push(Pos::new(x, y));
        }
    }
    out
}

fn every_command() -> Vec<Command> {
    let mut out = Vec::new();
    for pos in extreme_squares() {
        for rotation in Rotation::ALL {
            out.push(Command::PlaceTile { pos, rotation });
        }
        out.push(Command::PlaceTollhouse { pos });
    }
    for s in Side::ALL {
        out.push(Command::PlaceMeeple {
            target: Target::Road(s),
        });
        out.push(Command::PlaceMeeple {
            target: Target::City(s),
        });
    }
    for h in Half::ALL {
        out.push(Command::PlaceMeeple {
            target: Target::Field(h),
        });
    }
    out.push(Command::PlaceMeeple {
        target: Target::Monastery,
    });
    out
}

/// Sends every command by every player id; only legal ones may change the state, and none may
/// panic. Returns nothing: a refused command must leave the view as it was.
fn refused_commands_change_nothing(game: &Game) {
    for player in (0..8).chain([u8::MAX]) {
        for cmd in every_command() {
            let mut copy = game.clone();
            let before = copy.view();
            if copy.apply(player, cmd.clone()).is_err() {
                assert_eq!(
                    copy.view(),
                    before,
                    "{player} {cmd:?} was refused but changed the state"
                );
            }
        }
    }
}

#[test]
fn extreme_squares_and_unknown_players_are_refused_without_panic_b4() {
    for tollkeepers in [false, true] {
        let setup = Setup::new(vec![Colour::Red, Colour::Blue], 7)
            .tollkeepers(tollkeepers)
            .draw_order(vec!["base/X".into(), "base/U".into()]);
        let (mut game, _) = Game::start(setup).expect("valid setup");
        // Phase 1.
        refused_commands_change_nothing(&game);
        for pos in extreme_squares() {
            let r = game.apply(
                0,
                Command::PlaceTile {
                    pos,
                    rotation: Rotation::default(),
                },
            );
            assert!(r.is_err(), "{pos} is not next to the board");
        }
        // Phase 2, with a crossroads on the board.
        game.apply(
            0,
            Command::PlaceTile {
                pos: Pos::new(1, 0),
                rotation: Rotation::default(),
            },
        )
        .expect("X fits east of the start tile");
        refused_commands_change_nothing(&game);
        game.apply(0, Command::Pass {}).expect("pass");
        // After the end.
        game.apply(
            1,
            Command::PlaceTile {
                pos: Pos::new(-1, 0),
                rotation: Rotation::default(),
            },
        )
        .expect("U fits west of the start tile");
        game.apply(1, Command::Pass {}).expect("pass");
        assert!(game.is_finished());
        refused_commands_change_nothing(&game);
    }
}
