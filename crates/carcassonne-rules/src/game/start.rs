//! The start of a match: the setup checked, the start squares laid out (a map module's, P1–P2,
//! or the setup's), the pile made, the start tiles placed, the modules' start hook run, and the
//! first turn begun. The seed's draws come in one fixed order: the map's start squares, the
//! pile's shuffle, the drawn start tile's turn, then the modules' start (the chips, P7).

use super::{Game, PlayerState};
use crate::engine::agenda::Agenda;
use crate::engine::board::{Board, MAX_PILE};
use crate::engine::features::Features;
use crate::engine::pile::Pile;
use crate::engine::rng::SavedRng;
use crate::error::SetupError;
use crate::event::Event;
use crate::geometry::{Pos, Rotation};
use crate::modules::{Modules, Step};
use crate::setup::{Setup, StartSquare, StartTile};
use crate::tiles::catalogue;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

impl Game {
    /// Starts a match: places the start tiles, shuffles the pile with the seed, draws the first
    /// tile. Returns the opening events.
    pub fn start(setup: Setup) -> Result<(Game, Vec<Event>), SetupError> {
        Game::start_as(setup, crate::REPLAY_VERSION)
    }

    /// [`Game::start`] for a match stored with replay version `version` (one that
    /// [`crate::replays`] accepts): a match stored before other players' pawn choices let the
    /// turn go on (`carcassonne-replay/1` and older) is replayed as it was played, every open
    /// decision holding the turn, so that its commands give the stored events.
    pub fn start_as(setup: Setup, version: &str) -> Result<(Game, Vec<Event>), SetupError> {
        check_setup(&setup)?;
        let cat = catalogue();
        let in_match = |set: &str| Modules::uses_set(&setup, set);
        let mut rng = ChaCha8Rng::seed_from_u64(setup.seed);
        // Carcassonne Maps (P1, P2): the map, and its bounding box as the board's outline.
        let map = Modules::board_setup(&setup, &mut rng)?;
        let bounds = match &map {
            Some(m) => Some(m.bounds()),
            None => setup.bounds,
        };
        let starts = match (setup.starts.is_empty(), map.and_then(|m| m.start_squares())) {
            (true, Some(starts)) => starts,
            (true, None) => vec![StartSquare {
                pos: Pos::new(0, 0),
                rotation: Rotation::default(),
                tile: StartTile::Start,
            }],
            (false, _) => setup.starts.clone(),
        };
        let first = starts
            .iter()
            .position(|s| s.tile != StartTile::Open)
            .ok_or(SetupError::StartSquares("no start square holds a tile"))?;
        if starts.iter().filter(|s| s.tile == StartTile::Start).count() > 1 {
            return Err(SetupError::StartSquares("the start tile is on two squares"));
        }
        for (i, s) in starts.iter().enumerate() {
            if starts[..i].iter().any(|o| o.pos == s.pos) {
                return Err(SetupError::StartSquares("two start squares on one square"));
            }
            if bounds.is_some_and(|b| !b.contains(s.pos))
                || map.is_some_and(|m| !m.map.is_placeable(s.pos))
            {
                return Err(SetupError::StartSquares("a start square is off the map"));
            }
            // The grid is sized by the distance from (0, 0): keep it bounded like the pile.
            let far = MAX_PILE as u32;
            if s.pos.x.unsigned_abs() > far || s.pos.y.unsigned_abs() > far {
                return Err(SetupError::StartSquares(
                    "a start square lies more than 500 squares from (0, 0)",
                ));
            }
        }
        let start_in_pile = starts.iter().all(|s| s.tile != StartTile::Start);
        let pile = Pile::new(
            cat,
            setup.draw_order.as_deref(),
            in_match,
            start_in_pile,
            &mut rng,
        )?;
        let total = pile.len() + starts.len();
        let players = (0..setup.players.len())
            .map(|i| {
                let start = setup.start_scores.get(i).map_or(0, |s| s.total());
                PlayerState {
                    score: start,
                    supply: setup.meeples,
                    large: crate::modules::inns_cathedrals::large_meeples(&setup.modules),
                    scored: crate::view::Scored {
                        start,
                        ..Default::default()
                    },
                }
            })
            .collect();
        let mut game = Game {
            cat,
            rng: SavedRng::save(&rng),
            pile,
            discarded: Vec::new(),
            board: Board::new(cat, total, bounds),
            features: Features::default(),
            players,
            on_board: Vec::new(),
            modules: Modules::new(&setup),
            agenda: Agenda::default(),
            active: 0,
            turn: 0,
            over: false,
            stalls: crate::stalls_for_others(version),
            setup,
        };
        if let Some(m) = map {
            game.board.set_map(m.map);
        }
        let mut events = Vec::new();
        for (i, s) in starts.iter().enumerate() {
            let (tile, rotation) = match s.tile {
                StartTile::Start => (cat.start, s.rotation),
                StartTile::Drawn => {
                    let tile = game
                        .pile
                        .pop()
                        .ok_or(SetupError::StartSquares("the pile is empty"))?;
                    let quarters = (rng.next_u64() % 4) as u8;
                    (tile, Rotation::from_quarters(quarters))
                }
                StartTile::Open => continue,
            };
            game.put_tile(tile, s.pos, rotation);
            let id = cat.get(tile).id.to_string();
            events.push(if i == first {
                Event::GameStarted {
                    players: game.setup.players.clone(),
                    start_tile: id,
                    pos: s.pos,
                    rotation,
                    pile: 0,
                }
            } else {
                Event::StartTilePlaced {
                    tile: id,
                    pos: s.pos,
                    rotation,
                }
            });
        }
        for s in starts.iter().filter(|s| s.tile == StartTile::Open) {
            game.board.open_square(s.pos, 0);
        }
        // After the start tiles (their drawn tile's turn drawn first): P7, the chips.
        game.modules.on_start(&game.setup, map.as_ref(), &mut rng)?;
        game.rng = SavedRng::save(&rng);
        if let Some(Event::GameStarted { pile, .. }) = events.first_mut() {
            *pile = game.pile.len() as u32;
        }
        game.agenda.push(Step::BeginTurn);
        game.run(&mut events);
        Ok((game, events))
    }
}

/// The setup's own limits: players (B3), colours, the dispatch order (M1), meeples.
fn check_setup(setup: &Setup) -> Result<(), SetupError> {
    let n = setup.players.len();
    if !(2..=6).contains(&n) {
        return Err(SetupError::PlayerCount(n));
    }
    for (i, c) in setup.players.iter().enumerate() {
        if setup.players[..i].contains(c) {
            return Err(SetupError::DuplicateColour(*c));
        }
    }
    if let Some(order) = &setup.dispatch_order
        && !crate::modules::messages::valid_order(order)
    {
        return Err(SetupError::DispatchOrder);
    }
    if !(1..=30).contains(&setup.meeples) {
        return Err(SetupError::Meeples(setup.meeples));
    }
    if !setup.start_scores.is_empty() && setup.start_scores.len() != n {
        return Err(SetupError::StartScores(
            "give one per player, in seat order",
        ));
    }
    for s in &setup.start_scores {
        if s.pawns()[1] > 0 && !setup.modules.messages {
            return Err(SetupError::StartScores(
                "a messenger's points need The Messages",
            ));
        }
        // Far beyond any game's score, and far from overflowing a sum of two.
        if s.pawns().iter().any(|&p| p > 100_000) {
            return Err(SetupError::StartScores("at most 100000 points a pawn"));
        }
    }
    Ok(())
}
