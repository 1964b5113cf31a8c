//! Determinization: a whole [`Game`] consistent with what a seat knows. The secrets are sampled
//! from what is public and fixed through the [`Setup`], then the public commands are replayed:
//!
//! - the pile (`Setup::draw_order`): the tiles drawn so far in their public order (a map's drawn
//!   start tile first), then the tiles left (their counts are in the view) in a random order;
//! - The Messages' stack (`Setup::dispatch_order`): drawn dispatches go under the stack (M7), so
//!   the draws so far are the stack's first dispatches in order; the others follow at random;
//! - the France chips (`MapSetup::chip_layout`): the chips taken lie where they were taken, the
//!   faces not seen yet go at random on the squares where a chip still lies face down;
//! - a map's start squares (`Setup::starts`): as the opening events show them;
//! - the seed: it then decides only the drawn start tile's turn (P2), so one is searched whose
//!   first draw gives the turn the opening shows.
//!
//! The replayed game's view must equal the real one (every decision and count alike): a sample
//! that does not is refused, so a bot never searches a game the seat could not be in.

use crate::input::BotInput;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rules::maps::{Chip, chip_set};
use rules::{ChipAt, Event, Game, Pos, Rotation, Setup, StartSquare, StartTile};

/// Why no game consistent with a bot's input could be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeterminizeError {
    #[error("the opening shows no tile on start square {0}")]
    MissingStart(Pos),
    #[error("no seed gives the start tiles' turns the opening shows")]
    NoSeed,
    #[error("the sampled setup is refused: {0}")]
    Setup(String),
    #[error("the replay refused move {index}: {error}")]
    Replay { index: usize, error: String },
    #[error("the replayed game's view differs from the public view")]
    Diverged,
}

/// Seeds tried for the drawn start tiles' turns (each matches with probability 1/4 per tile).
const SEED_TRIES: u64 = 4096;

/// What the public history tells about the secrets, worked out once per decision; each
/// [`Knowledge::sample`] then fills in the unknown rest at random.
#[derive(Debug, Clone)]
pub struct Knowledge {
    starts: Vec<StartSquare>,
    /// Tiles drawn so far, in order (the drawn start tiles first).
    drawn: Vec<String>,
    /// The tiles still in the pile, in no particular order.
    unseen: Vec<String>,
    dispatches_known: Vec<u8>,
    dispatches_unknown: Vec<u8>,
    chips_taken: Vec<ChipAt>,
    chip_squares: Vec<Pos>,
    chip_faces: Vec<Chip>,
    seed: u64,
}

impl Knowledge {
    /// What `input` reveals.
    pub fn of(input: &BotInput<'_>) -> Result<Knowledge, DeterminizeError> {
        let record = input.record;
        let setup = record.setup();
        let opening = record.opening();
        // The start squares: the setup's, else (a map, P2) as the opening laid them.
        let starts: Vec<StartSquare> = match setup.starts().is_empty() {
            false => setup.starts().to_vec(),
            true if setup.modules().map.is_some() => opening
                .iter()
                .filter_map(|e| match e {
                    Event::GameStarted { pos, rotation, .. } => Some(StartSquare {
                        pos: *pos,
                        rotation: *rotation,
                        tile: StartTile::Start,
                    }),
                    Event::StartTilePlaced { pos, .. } => Some(StartSquare {
                        pos: *pos,
                        rotation: Rotation::default(),
                        tile: StartTile::Drawn,
                    }),
                    _ => None,
                })
                .collect(),
            true => Vec::new(),
        };
        let laid = |at: Pos| {
            opening.iter().find_map(|e| match e {
                Event::GameStarted {
                    start_tile,
                    pos,
                    rotation,
                    ..
                } if *pos == at => Some((start_tile.clone(), *rotation)),
                Event::StartTilePlaced {
                    tile,
                    pos,
                    rotation,
                } if *pos == at => Some((tile.clone(), *rotation)),
                _ => None,
            })
        };
        let mut drawn = Vec::new();
        let mut turns = Vec::new();
        for s in starts.iter().filter(|s| s.tile == StartTile::Drawn) {
            let (tile, rotation) = laid(s.pos).ok_or(DeterminizeError::MissingStart(s.pos))?;
            drawn.push(tile);
            turns.push(rotation);
        }
        let mut dispatches = Vec::new();
        let mut chips_taken = Vec::new();
        for e in record.events() {
            match e {
                Event::TileDrawn { tile, .. } => drawn.push(tile.clone()),
                Event::DispatchDrawn { dispatch, .. } => dispatches.push(*dispatch),
                Event::ChipTaken { pos, chip, .. } => chips_taken.push(ChipAt {
                    pos: *pos,
                    grape: chip.grape,
                    value: chip.value,
                }),
                _ => {}
            }
        }
        // The stack turns over in a cycle: the first eight draws are the stack from the top.
        dispatches.truncate(8);
        let dispatches_unknown = (1..=8u8).filter(|d| !dispatches.contains(d)).collect();
        let unseen = input
            .view
            .pile
            .iter()
            .flat_map(|(id, &n)| std::iter::repeat_n(id.to_string(), n as usize))
            .collect();
        let (chip_squares, chip_faces) = match &input.view.map {
            Some(m) if setup.modules().map.as_ref().is_some_and(|s| s.chips) => {
                let mut faces = chip_set();
                for c in &chips_taken {
                    if let Some(i) = faces
                        .iter()
                        .position(|f| f.grape == c.grape && f.value == c.value)
                    {
                        faces.remove(i);
                    }
                }
                (m.chips.clone(), faces)
            }
            _ => (Vec::new(), Vec::new()),
        };
        let seed = (0..SEED_TRIES)
            .find(|&seed| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                turns
                    .iter()
                    .all(|r| (rng.next_u64() % 4) as u8 == r.quarters())
            })
            .ok_or(DeterminizeError::NoSeed)?;
        Ok(Knowledge {
            starts,
            drawn,
            unseen,
            dispatches_known: dispatches,
            dispatches_unknown,
            chips_taken,
            chip_squares,
            chip_faces,
            seed,
        })
    }

    /// A setup with these public parts and the secrets drawn with `next`.
    pub fn sample(&self, input: &BotInput<'_>, mut next: impl FnMut() -> u64) -> Setup {
        let setup = input.record.setup();
        let mut s = setup.to_setup(self.seed).starts(self.starts.clone());
        let mut rest = self.unseen.clone();
        shuffle(&mut rest, &mut next);
        s = s.draw_order(self.drawn.iter().cloned().chain(rest).collect());
        if setup.modules().messages {
            let mut rest = self.dispatches_unknown.clone();
            shuffle(&mut rest, &mut next);
            let order = self.dispatches_known.iter().copied().chain(rest).collect();
            s = s.dispatch_order(order);
        }
        if let Some(map) = &mut s.modules.map
            && map.chips
        {
            let mut faces = self.chip_faces.clone();
            shuffle(&mut faces, &mut next);
            let lying = self.chip_squares.iter().zip(faces).map(|(&pos, c)| ChipAt {
                pos,
                grape: c.grape,
                value: c.value,
            });
            map.chip_layout = Some(self.chips_taken.iter().cloned().chain(lying).collect());
        }
        s
    }

    /// A game consistent with `input`: a sample, started, the public commands replayed, and its
    /// view checked against the public one.
    pub fn game(
        &self,
        input: &BotInput<'_>,
        next: impl FnMut() -> u64,
    ) -> Result<Game, DeterminizeError> {
        let setup = self.sample(input, next);
        let (mut game, _) =
            Game::start(setup).map_err(|e| DeterminizeError::Setup(e.to_string()))?;
        for (index, m) in input.record.moves().iter().enumerate() {
            game.apply(m.player, m.command.clone())
                .map_err(|e| DeterminizeError::Replay {
                    index,
                    error: e.to_string(),
                })?;
        }
        let mut view = game.view();
        // The view repeats the setup's modules, forced chip layout included: that alone may differ.
        view.modules.clone_from(&input.view.modules);
        match view == *input.view {
            true => Ok(game),
            false => Err(DeterminizeError::Diverged),
        }
    }
}

/// Fisher–Yates with the caller's random words.
pub(crate) fn shuffle<T>(v: &mut [T], next: &mut impl FnMut() -> u64) {
    for i in (1..v.len()).rev() {
        let j = ((u128::from(next()) * (i as u128 + 1)) >> 64) as usize;
        v.swap(i, j);
    }
}
