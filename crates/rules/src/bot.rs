//! A player that picks uniformly among legal moves, from a random source the caller owns (the
//! rules crate itself has no global randomness). Used by tests, benchmarks and load generators.

use crate::command::Command;
use crate::game::Game;
use crate::setup::PlayerId;

/// A uniform pick in `0..n` from a 64-bit random word.
fn pick(word: u64, n: usize) -> usize {
    ((u128::from(word) * n as u128) >> 64) as usize
}

/// One legal command for the player whose decision is open, or `None` when the game is over.
/// Uses the engine's allocation-light paths, so benchmarks measure the rules, not the bot.
pub fn random_move(game: &Game, mut next: impl FnMut() -> u64) -> Option<(PlayerId, Command)> {
    if game.is_finished() {
        return None;
    }
    let player = game.active();
    let mut placements = Vec::with_capacity(256);
    game.placements_into(&mut placements);
    if !placements.is_empty() {
        let (pos, rotation) = placements[pick(next(), placements.len())];
        return Some((player, Command::PlaceTile { pos, rotation }));
    }
    let meeples = game.meeple_targets();
    let tolls = game.tollhouse_targets();
    // Passing is one choice among the others, so supplies do not run dry at once.
    let i = pick(next(), meeples.len() + tolls.len() + 1);
    let cmd = if i < meeples.len() {
        Command::PlaceMeeple { target: meeples[i] }
    } else if i < meeples.len() + tolls.len() {
        Command::PlaceTollhouse {
            pos: tolls[i - meeples.len()],
        }
    } else {
        Command::Pass
    };
    Some((player, cmd))
}
