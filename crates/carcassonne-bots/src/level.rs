//! The difficulty levels a lobby may offer (by their serde names), and the random bot.

use crate::input::BotInput;
use crate::mcts::{Budget, Mcts, Settings};
use crate::{Bot, Greedy};
use rules::Command;
use rules::bot::{random_command, splitmix64};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How strong a bot plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Uniformly random legal moves.
    Random,
    /// The greedy bot.
    Easy,
    /// The search bot, 200 ms a decision.
    Medium,
    /// The search bot, 1 s a decision.
    Hard,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::Random, Level::Easy, Level::Medium, Level::Hard];

    /// A bot of this level, its random choices seeded with `seed`.
    pub fn bot(self, seed: u64) -> Box<dyn Bot> {
        match self {
            Level::Random => Box::new(RandomBot::new(seed)),
            Level::Easy => Box::new(Greedy::new(seed)),
            Level::Medium => Box::new(Mcts::new(
                Settings::new(Budget::time(Duration::from_millis(200))),
                seed,
            )),
            Level::Hard => Box::new(Mcts::new(
                Settings::new(Budget::time(Duration::from_secs(1))),
                seed,
            )),
        }
    }
}

/// Uniformly random legal answers ([`rules::bot::random_command`]) from the view's decision.
#[derive(Debug, Clone)]
pub struct RandomBot {
    rng: u64,
}

impl RandomBot {
    pub fn new(seed: u64) -> RandomBot {
        RandomBot { rng: seed }
    }
}

impl Bot for RandomBot {
    fn name(&self) -> String {
        "random".into()
    }

    fn choose(&mut self, input: &BotInput<'_>) -> Option<Command> {
        let rng = &mut self.rng;
        random_command(input.decision()?, || splitmix64(rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_have_snake_case_names() -> Result<(), serde_json::Error> {
        let names: Vec<String> = Level::ALL
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<_, _>>()?;
        assert_eq!(names, ["\"random\"", "\"easy\"", "\"medium\"", "\"hard\""]);
        assert_eq!(serde_json::from_str::<Level>("\"hard\"")?, Level::Hard);
        Ok(())
    }
}
