//! A player that picks uniformly among legal moves, from a random source the caller owns (the
//! rules crate itself has no global randomness). Used by tests, benchmarks and load generators.

use crate::command::Command;
use crate::decision::{Decision, Options};
use crate::game::Game;
use crate::setup::PlayerId;

/// The most option groups a bot looks at in one decision (phase 2 with every module: meeples,
/// the large meeple, the tollhouse, the builder and the pig; counts kept small so the bot's own
/// cost stays out of benchmarks).
const MAX_GROUPS: usize = 5;

/// A uniform pick in `0..n` from a 64-bit random word.
#[inline]
fn pick(word: u64, n: usize) -> usize {
    ((u128::from(word) * n as u128) >> 64) as usize
}

/// One legal answer to any decision, walked through its [`Options`]: first a group uniformly
/// among the non-empty ones and `pass` (phase 2: meeple, tollhouse or pass, since a uniform pick
/// over all moves would mostly shuffle tollhouses between crossroads), then a command uniformly in
/// the group. `None` when the decision has no answer.
pub fn random_command(o: &impl Options, mut next: impl FnMut() -> u64) -> Option<Command> {
    // A decision has a few groups (phase 2: meeples and one per module); more are ignored.
    let groups = o.groups().min(MAX_GROUPS);
    let may_pass = o.may_pass();
    let mut lens = [0u32; MAX_GROUPS];
    let mut open = usize::from(may_pass);
    for (g, len) in lens.iter_mut().enumerate().take(groups) {
        *len = o.len(g) as u32;
        open += usize::from(*len > 0);
    }
    if open == 0 {
        return None;
    }
    let mut k = if groups > 1 || may_pass {
        pick(next(), open)
    } else {
        0
    };
    for (g, &n) in lens.iter().enumerate().take(groups) {
        if n == 0 {
            continue;
        }
        if k == 0 {
            return o.nth(g, pick(next(), n as usize));
        }
        k -= 1;
    }
    Some(Command::Pass {})
}

/// One legal command for the oldest open decision, or `None` when the game is over. Uses the
/// engine's counting and indexing, so benchmarks measure the rules, not the bot.
pub fn random_move(game: &Game, next: impl FnMut() -> u64) -> Option<(PlayerId, Command)> {
    let (id, player) = game.first_decision()?;
    let options = game.options(id)?;
    Some((player, random_command(&options, next)?))
}

/// The same choice made from the decisions a client sees (a view's `decisions`), for bots and
/// tests that hold only the public view.
pub fn random_move_from(
    decisions: &[Decision],
    next: impl FnMut() -> u64,
) -> Option<(PlayerId, Command)> {
    let d = decisions.first()?;
    Some((d.player(), random_command(d, next)?))
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
