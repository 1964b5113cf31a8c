//! Bots for the Carcassonne rules engine, deciding from public information only.
//!
//! - [`input`]: what a bot is given ([`BotInput`]: its seat, the public history, the view);
//!   nothing secret fits in it.
//! - [`determinize`]: a whole game consistent with that input, the secrets sampled.
//! - [`eval`]: the heuristic value of a position.
//! - [`greedy`]: the greedy bot, and the look-ahead and rollout policy the search uses.
//! - [`mcts`]: the determinized Monte Carlo search bot.
//! - [`level`]: the difficulty levels a lobby offers, and the random bot.
//! - [`arena`]: whole matches between bots, and their statistics (the `arena` binary).

pub mod arena;
pub mod determinize;
pub mod eval;
pub mod greedy;
pub mod input;
pub mod level;
pub mod mcts;

pub use determinize::{DeterminizeError, Knowledge};
pub use greedy::Greedy;
pub use input::{BotInput, Move, PublicSetup, Record};
pub use level::{Level, RandomBot};
pub use mcts::{Budget, Mcts, Settings};

use rules::{Command, Decision, Options};

/// A player of one seat: given what the seat may see, an answer to its first open decision.
pub trait Bot: Send {
    /// A short name for reports (`greedy`, `mcts:200ms`).
    fn name(&self) -> String;
    /// The answer to the seat's first open decision; `None` when it has none.
    fn choose(&mut self, input: &BotInput<'_>) -> Option<Command>;
}

/// The answer when a bot cannot search: `pass` where allowed, else the decision's first option.
pub fn fallback(d: &Decision) -> Option<Command> {
    if d.may_pass() {
        return Some(Command::Pass {});
    }
    (0..d.groups()).find_map(|g| d.nth(g, 0))
}
