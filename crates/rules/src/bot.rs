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

/// Phase 2: the kind of move first, uniformly among those open (0 meeple, 1 tollhouse, 2 pass),
/// since a uniform pick over all moves would mostly shuffle tollhouses between crossroads.
fn pick_kind(meeple: bool, tollhouse: bool, next: &mut impl FnMut() -> u64) -> usize {
    let kinds = [meeple, tollhouse, true];
    let open = kinds.iter().filter(|&&k| k).count();
    kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| **k)
        .nth(pick(next(), open))
        .map_or(2, |(i, _)| i)
}

/// One legal command for the player whose decision is open, or `None` when the game is over.
/// Uses the engine's allocation-light paths, so benchmarks measure the rules, not the bot.
pub fn random_move(game: &Game, mut next: impl FnMut() -> u64) -> Option<(PlayerId, Command)> {
    if game.is_finished() {
        return None;
    }
    let player = game.active();
    let placements = game.placement_count();
    if placements > 0 {
        let (pos, rotation) = game.placement(pick(next(), placements))?;
        return Some((player, Command::PlaceTile { pos, rotation }));
    }
    let meeples = game.meeple_target_count();
    let tolls = game.tollhouse_target_count();
    let kind = pick_kind(meeples > 0, tolls > 0, &mut next);
    let cmd = match kind {
        0 => Command::PlaceMeeple {
            target: game.meeple_target(pick(next(), meeples))?,
        },
        1 => Command::PlaceTollhouse {
            pos: game.tollhouse_target(pick(next(), tolls))?,
        },
        _ => Command::Pass {},
    };
    Some((player, cmd))
}

/// The same choice made from the decisions a client sees (a view's `decisions`), for bots and
/// tests that hold only the public view.
pub fn random_move_from(
    decisions: &[Decision],
    mut next: impl FnMut() -> u64,
) -> Option<(PlayerId, Command)> {
    match decisions.first()? {
        Decision::PlaceTile {
            player, placements, ..
        } => {
            let p = placements.get(pick(next(), placements.len()))?;
            let rotation = *p.rotations.get(pick(next(), p.rotations.len()))?;
            Some((
                *player,
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
            let kind = pick_kind(
                !meeple_targets.is_empty(),
                !tollhouse_targets.is_empty(),
                &mut next,
            );
            let cmd = match kind {
                0 => Command::PlaceMeeple {
                    target: meeple_targets[pick(next(), meeple_targets.len())],
                },
                1 => Command::PlaceTollhouse {
                    pos: tollhouse_targets[pick(next(), tollhouse_targets.len())],
                },
                _ => Command::Pass {},
            };
            Some((*player, cmd))
        }
    }
}

/// SplitMix64: a tiny seeded random source for bots, tests and benchmarks (the caller owns the
/// state; the rules themselves use ChaCha8 for the pile).
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
