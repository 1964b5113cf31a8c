//! No command can panic the engine or change the state when refused (B4, B5, T2–T5, R8, R12):
//! any player id, any square (the extremes of `i32` included), any target and figure, in every
//! phase.

use carcassonne_rules::{Colour, Command, Figure, Game, Half, Pos, Rotation, Setup, Side, Target};

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
    let mut targets: Vec<Target> = Side::ALL
        .into_iter()
        .flat_map(|s| [Target::Road(s), Target::City(s)])
        .chain(Half::ALL.map(Target::Field))
        .collect();
    targets.extend([Target::Monastery, Target::InnerField]);
    for target in targets {
        for figure in [
            Figure::Meeple,
            Figure::LargeMeeple,
            Figure::Builder,
            Figure::Pig,
        ] {
            out.push(Command::PlaceMeeple { target, figure });
        }
    }
    out.push(Command::TakeDoubleTurn {});
    out.push(Command::SetDoubleTurnPreference {
        preference: Some(carcassonne_rules::DoubleTurnPreference::Decline),
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
    for (tollkeepers, traders) in [(false, false), (true, false), (true, true)] {
        let setup = Setup::new(vec![Colour::Red, Colour::Blue], 7)
            .tollkeepers(tollkeepers)
            .inns_cathedrals(tollkeepers)
            .traders_builders(traders)
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

/// Start scores (scenarios and tests) set the score and, with The Messages, both pawns; a setup
/// that gives the wrong number of them, or a messenger without The Messages, is refused.
#[test]
fn start_scores_set_scores_and_pawns_or_are_refused() {
    use carcassonne_rules::{SetupError, StartScore};
    let players = vec![Colour::Red, Colour::Blue];
    let pawns = StartScore::Pawns {
        scoring: 14,
        messenger: 5,
    };
    let setup = Setup::new(players.clone(), 3)
        .messages(true)
        .start_scores(vec![pawns, StartScore::Points(9)]);
    let (game, _) = Game::start(setup).expect("starts");
    assert_eq!(game.scores(), vec![19, 9]);
    let view = serde_json::to_value(game.view()).expect("view");
    assert_eq!(view["messages"]["players"][0]["scoring"], 14);
    assert_eq!(view["messages"]["players"][0]["messenger"], 5);
    assert_eq!(view["messages"]["players"][1]["scoring"], 9);

    let short = Setup::new(players.clone(), 3).start_scores(vec![StartScore::Points(1)]);
    assert!(matches!(
        Game::start(short),
        Err(SetupError::StartScores(_))
    ));
    let no_messages = Setup::new(players, 3).start_scores(vec![pawns, StartScore::Points(0)]);
    assert!(matches!(
        Game::start(no_messages),
        Err(SetupError::StartScores(_))
    ));
}
