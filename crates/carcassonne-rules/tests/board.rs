//! A board ready for maps (B1, B4; P1, P2, P4): start squares come from the setup, a square can
//! be opened with no neighbour, and a bounded board closes what faces off it.

use carcassonne_rules::{
    Bounds, Colour, Command, Event, Game, Pos, Rotation, Setup, StartSquare, StartTile, Target,
};

fn two() -> Setup {
    Setup::new(vec![Colour::Red, Colour::Blue], 3)
}

#[test]
fn the_default_start_is_the_start_tile_on_the_origin_b1() {
    let (_, events) = Game::start(two()).expect("valid");
    assert!(matches!(
        &events[0],
        Event::GameStarted { start_tile, pos, .. } if start_tile == "base/D" && *pos == Pos::new(0, 0)
    ));
}

#[test]
fn two_start_squares_the_start_tile_and_a_drawn_tile_p2() {
    let starts = vec![
        StartSquare {
            pos: Pos::new(-5, 2),
            rotation: Rotation::default(),
            tile: StartTile::Start,
        },
        StartSquare {
            pos: Pos::new(6, -1),
            rotation: Rotation::default(),
            tile: StartTile::Drawn,
        },
    ];
    let (plain, _) = Game::start(two()).expect("valid");
    let (game, events) = Game::start(two().starts(starts)).expect("valid");
    assert!(matches!(
        &events[0],
        Event::GameStarted { pos, .. } if *pos == Pos::new(-5, 2)
    ));
    assert!(matches!(
        &events[1],
        Event::StartTilePlaced { pos, .. } if *pos == Pos::new(6, -1)
    ));
    // Both tiles lie on the board; the drawn one left the pile.
    assert_eq!(game.placed_tiles().count(), 2);
    assert_eq!(game.pile_size() + 1, plain.pile_size());
    // Tiles may go next to either start square.
    let squares: Vec<Pos> = game.legal_placements().iter().map(|p| p.pos).collect();
    assert!(squares.iter().any(|p| p.x < 0) && squares.iter().any(|p| p.x > 0));
}

#[test]
fn an_open_start_square_takes_a_tile_with_no_neighbour_p1() {
    let starts = vec![
        StartSquare {
            pos: Pos::new(0, 0),
            rotation: Rotation::default(),
            tile: StartTile::Start,
        },
        StartSquare {
            pos: Pos::new(10, 10),
            rotation: Rotation::default(),
            tile: StartTile::Open,
        },
    ];
    let (mut game, _) = Game::start(two().starts(starts)).expect("valid");
    let far = game
        .legal_placements()
        .into_iter()
        .find(|p| p.pos == Pos::new(10, 10))
        .expect("the open square takes any tile");
    assert_eq!(far.rotations.len(), 4);
    game.apply(
        0,
        Command::PlaceTile {
            pos: far.pos,
            rotation: far.rotations[0],
        },
    )
    .expect("legal");
}

#[test]
fn bad_start_squares_are_refused() {
    let open = StartSquare {
        pos: Pos::new(0, 0),
        rotation: Rotation::default(),
        tile: StartTile::Open,
    };
    assert!(Game::start(two().starts(vec![open.clone()])).is_err());
    let start = StartSquare {
        tile: StartTile::Start,
        ..open.clone()
    };
    assert!(Game::start(two().starts(vec![start.clone(), start.clone()])).is_err());
    let bounds = Bounds {
        min: Pos::new(1, 1),
        max: Pos::new(3, 3),
    };
    assert!(Game::start(two().starts(vec![start.clone()]).bounds(bounds)).is_err());
    // The grid is sized by the distance from (0, 0): a start square far away is refused.
    for pos in [
        Pos::new(1_000_000, 0),
        Pos::new(0, i32::MIN),
        Pos::new(i32::MAX, i32::MAX),
    ] {
        let far = StartSquare {
            pos,
            ..start.clone()
        };
        assert!(Game::start(two().starts(vec![far])).is_err());
    }
    let edge = StartSquare {
        pos: Pos::new(500, -500),
        ..start
    };
    assert!(Game::start(two().starts(vec![edge])).is_ok());
}

#[test]
fn a_bounded_board_offers_no_square_off_the_map_and_closes_ends_facing_it_p4() {
    // Two squares: (-1, 0) and the start square (0, 0). The start tile's city (north) and road
    // (east) face off the map.
    let bounds = Bounds {
        min: Pos::new(-1, 0),
        max: Pos::new(0, 0),
    };
    let (mut game, _) =
        Game::start(two().draw_order(vec!["base/A".into()]).bounds(bounds)).expect("valid");
    let placements = game.legal_placements();
    assert_eq!(placements.len(), 1);
    assert_eq!(placements[0].pos, Pos::new(-1, 0));
    let rotation = placements[0].rotations[0];
    game.apply(
        0,
        Command::PlaceTile {
            pos: Pos::new(-1, 0),
            rotation,
        },
    )
    .expect("legal");
    // The road runs from the monastery to the border east of the start tile: closed at both ends.
    let events = game
        .apply(
            0,
            Command::PlaceMeeple {
                target: Target::Road(carcassonne_rules::Side::E),
                figure: carcassonne_rules::Figure::Meeple,
            },
        )
        .expect("legal");
    assert!(events.iter().any(|e| matches!(
        e,
        Event::FeatureScored {
            feature: carcassonne_rules::FeatureKind::Road,
            tiles: 2,
            points: 2,
            complete: true,
            ..
        }
    )));
    // The monastery counts the squares off the map as present (P4 DECISION): 1 + 8 = 9 at the end.
    assert!(game.is_finished());
}

/// Random games on a bounded board with two start tiles and an opened square (P1, P2, P4):
/// they end, no tile lies off the map, meeples are conserved, awards add up to the scores, and a
/// replay of the commands gives the same events.
#[test]
fn random_games_on_a_bounded_board_keep_every_invariant_p1_p2_p4() {
    let bounds = Bounds {
        min: Pos::new(-5, -4),
        max: Pos::new(6, 4),
    };
    let starts = vec![
        StartSquare {
            pos: Pos::new(-3, 0),
            rotation: Rotation::default(),
            tile: StartTile::Start,
        },
        StartSquare {
            pos: Pos::new(4, 1),
            rotation: Rotation::default(),
            tile: StartTile::Drawn,
        },
        StartSquare {
            pos: Pos::new(0, -4),
            rotation: Rotation::default(),
            tile: StartTile::Open,
        },
    ];
    for seed in 0..12u64 {
        let setup = Setup::new(Colour::ALL[..3].to_vec(), seed)
            .tollkeepers(seed % 2 == 0)
            .starts(starts.clone())
            .bounds(bounds);
        let (mut game, mut events) = Game::start(setup.clone()).expect("valid");
        let mut rng = seed;
        let mut commands = Vec::new();
        while let Some((p, c)) = carcassonne_rules::bot::random_move(&game, || {
            carcassonne_rules::bot::splitmix64(&mut rng)
        }) {
            events.extend(game.apply(p, c.clone()).expect("bot moves are legal"));
            commands.push((p, c));
            for (s, b) in game.supplies().iter().zip(game.meeples_on_board()) {
                assert_eq!(s + b, 7);
            }
            assert!(commands.len() < 1000);
        }
        assert!(game.is_finished());
        assert!(game.placed_tiles().all(|(pos, _, _)| bounds.contains(pos)));
        let mut sums = vec![0u32; 3];
        for e in &events {
            for (p, pts) in e.awards() {
                sums[p as usize] += pts;
            }
        }
        assert_eq!(sums, game.scores());
        let (mut replay, mut again) = Game::start(setup).expect("valid");
        for (p, c) in commands {
            again.extend(replay.apply(p, c).expect("replays"));
        }
        assert_eq!(again, events);
    }
}
