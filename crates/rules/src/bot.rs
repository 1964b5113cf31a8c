//! A player that picks uniformly among legal moves, from a random source the caller owns (the
//! rules crate itself has no global randomness). Used by tests, benchmarks and load generators.

use crate::command::Command;
use crate::decision::Decision;
use crate::game::Game;
use crate::setup::PlayerId;

/// A uniform pick in `0..n` from a 64-bit random word.
fn pick(word: u64, n: usize) -> usize {
    ((u128::from(word) * n as u128) >> 64) as usize
}

/// One legal command for a player who has a decision open, or `None` when the game is over.
pub fn random_move(game: &Game, mut next: impl FnMut() -> u64) -> Option<(PlayerId, Command)> {
    let decision = game.decisions().into_iter().next()?;
    match decision {
        Decision::PlaceTile {
            player, placements, ..
        } => {
            let p = &placements[pick(next(), placements.len())];
            let rotation = p.rotations[pick(next(), p.rotations.len())];
            Some((
                player,
                Command::PlaceTile {
                    pos: p.pos,
                    rotation,
                },
            ))
        }
        Decision::PlaceFollower {
            player,
            meeple_targets,
            tollhouse_targets,
            ..
        } => {
            // Pass with some weight, so that supplies do not run dry at once.
            let n = meeple_targets.len() + tollhouse_targets.len() + 1;
            let i = pick(next(), n);
            let cmd = if i < meeple_targets.len() {
                Command::PlaceMeeple {
                    target: meeple_targets[i],
                }
            } else if i < meeple_targets.len() + tollhouse_targets.len() {
                Command::PlaceTollhouse {
                    pos: tollhouse_targets[i - meeple_targets.len()],
                }
            } else {
                Command::Pass
            };
            Some((player, cmd))
        }
    }
}
