//! Whole matches between bots, and what the `arena` binary prints of them: win rates with 95 %
//! Wilson intervals, the mean score difference, think times. A match is a function of its
//! setup, the bots and their seeds; only think times (measured when asked) depend on the machine.

use crate::input::{BotInput, Record};
use crate::mcts::{Budget, Settings};
use crate::{Bot, Greedy, Level, Mcts, RandomBot};
use rules::bot::splitmix64;
use rules::{Colour, Command, Game, MapSetup, Modules, Setup};
use std::str::FromStr;
use std::time::{Duration, Instant};

/// Commands one match may take before the arena calls it stuck (a whole game has a few hundred).
const MAX_MOVES: usize = 20_000;

/// A kind of bot, as the arena names it: `random`, `greedy`, `mcts:200ms`, `mcts:2s`,
/// `mcts:500i` (iterations), or a level (`easy`, `medium`, `hard`).
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub name: String,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Random,
    Greedy,
    Mcts(Settings),
    Level(Level),
}

impl Spec {
    /// A bot of this kind with random choices seeded by `seed`.
    pub fn bot(&self, seed: u64) -> Box<dyn Bot> {
        match self.kind {
            Kind::Random => Box::new(RandomBot::new(seed)),
            Kind::Greedy => Box::new(Greedy::new(seed)),
            Kind::Mcts(settings) => Box::new(Mcts::new(settings, seed)),
            Kind::Level(l) => l.bot(seed),
        }
    }
}

impl FromStr for Spec {
    type Err = String;
    fn from_str(s: &str) -> Result<Spec, String> {
        let kind = match s {
            "random" => Kind::Random,
            "greedy" => Kind::Greedy,
            "easy" => Kind::Level(Level::Easy),
            "medium" => Kind::Level(Level::Medium),
            "hard" => Kind::Level(Level::Hard),
            _ => {
                let rest = s.strip_prefix("mcts:").ok_or_else(|| {
                    format!(
                        "`{s}` is not a bot (random, greedy, mcts:200ms, mcts:500i, easy, medium, hard)"
                    )
                })?;
                let mut parts = rest.split('/');
                let budget = parts.next().unwrap_or_default();
                let number = |t: &str| {
                    t.parse::<u64>()
                        .map_err(|_| format!("`{t}` in `{s}` is not a number"))
                };
                let mut settings = Settings::new(if let Some(ms) = budget.strip_suffix("ms") {
                    Budget::time(Duration::from_millis(number(ms)?))
                } else if let Some(secs) = budget.strip_suffix('s') {
                    Budget::time(Duration::from_secs(number(secs)?))
                } else {
                    let n = number(budget.strip_suffix('i').unwrap_or(budget))?;
                    Budget::iterations(u32::try_from(n).map_err(|e| e.to_string())?)
                });
                // Tuning: `/d4` rollout depth, `/c12` candidates, `/w3` policy width, `/n8`
                // determinizations, `/x0.7` exploration, `/s10` the reward's scale.
                for p in parts {
                    let (key, value) = p.split_at(p.len().min(1));
                    let float = || {
                        value
                            .parse::<f64>()
                            .map_err(|_| format!("`{value}` in `{s}` is not a number"))
                    };
                    match key {
                        "d" => settings.depth = number(value)? as u32,
                        "c" => settings.candidates = number(value)? as usize,
                        "w" => settings.width = number(value)? as usize,
                        "n" => settings.determinizations = number(value)? as usize,
                        "x" => settings.exploration = float()?,
                        "s" => settings.scale = float()?,
                        _ => {
                            return Err(format!(
                                "`{p}` in `{s}` is not a setting (d, c, w, n, x, s)"
                            ));
                        }
                    }
                }
                Kind::Mcts(settings)
            }
        };
        Ok(Spec {
            name: s.to_string(),
            kind,
        })
    }
}

/// The modules of a run: `all`, `none`, or a comma list of `tollkeepers`, `messages`, `france`
/// (the map without chips), `chips` (the map with its chips).
pub fn parse_modules(s: &str) -> Result<Modules, String> {
    match s {
        "all" => return Ok(Modules::all()),
        "none" => return Ok(Modules::default()),
        _ => {}
    }
    let mut m = Modules::default();
    for part in s.split(',') {
        match part {
            "tollkeepers" => m.tollkeepers = true,
            "messages" => m.messages = true,
            "france" => m.map = Some(Box::new(MapSetup::france(false))),
            "chips" => m.map = Some(Box::new(MapSetup::france(true))),
            _ => {
                return Err(format!(
                    "`{part}` is not a module (tollkeepers, messages, france, chips)"
                ));
            }
        }
    }
    Ok(m)
}

/// Why a match could not be played to its end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArenaError {
    #[error("the setup is refused: {0}")]
    Setup(String),
    #[error("{bot} (seat {seat}) gave no answer to its decision")]
    NoAnswer { seat: u8, bot: String },
    #[error("{bot} (seat {seat}) played an illegal move {command:?}: {error}")]
    Illegal {
        seat: u8,
        bot: String,
        command: Command,
        error: String,
    },
    #[error("the match took more than {MAX_MOVES} commands")]
    TooLong,
}

/// One match's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Per seat, the index of its bot's spec.
    pub seating: Vec<usize>,
    /// Final scores in seat order.
    pub scores: Vec<u32>,
    /// Commands applied.
    pub moves: usize,
}

/// One match: `specs[seating[seat]]` plays each seat; bot seeds come from `seed`. With `timed`,
/// each decision's think time is noted as (spec index, time).
pub fn play(
    specs: &[Spec],
    seating: &[usize],
    setup: Setup,
    seed: u64,
    timed: bool,
    think: &mut Vec<(usize, Duration)>,
) -> Result<Outcome, ArenaError> {
    let (mut game, opening) =
        Game::start(setup.clone()).map_err(|e| ArenaError::Setup(e.to_string()))?;
    let mut record = Record::new(&setup, opening);
    let mut state = seed;
    let mut bots: Vec<Box<dyn Bot>> = seating
        .iter()
        .map(|&s| specs[s].bot(splitmix64(&mut state)))
        .collect();
    let mut view = game.view();
    while let Some((_, seat)) = game.first_decision() {
        if record.moves().len() >= MAX_MOVES {
            return Err(ArenaError::TooLong);
        }
        let input = BotInput {
            seat,
            record: &record,
            view: &view,
        };
        let bot = &mut bots[seat as usize];
        let start = timed.then(Instant::now);
        let command = bot.choose(&input).ok_or_else(|| ArenaError::NoAnswer {
            seat,
            bot: bot.name(),
        })?;
        if let Some(start) = start {
            think.push((seating[seat as usize], start.elapsed()));
        }
        let events = game
            .apply(seat, command.clone())
            .map_err(|e| ArenaError::Illegal {
                seat,
                bot: bot.name(),
                command: command.clone(),
                error: e.to_string(),
            })?;
        record.push(seat, command, events);
        game.refresh_view(&mut view);
    }
    Ok(Outcome {
        seating: seating.to_vec(),
        scores: game.scores(),
        moves: record.moves().len(),
    })
}

/// The setup of game `g` of a run: one seat per spec, colours in order, the run's modules and
/// their meeples, seeded `seed + g`.
pub fn setup_of(players: usize, modules: &Modules, seed: u64, g: u64) -> Setup {
    Setup::new(Colour::ALL[..players].to_vec(), seed.wrapping_add(g))
        .modules(modules.clone())
        .meeples(modules.default_meeples())
}

/// Game `g`'s seating: the specs rotated by `g`, so every bot plays every seat in turn.
pub fn seating_of(specs: usize, g: u64) -> Vec<usize> {
    (0..specs).map(|s| (s + g as usize) % specs).collect()
}

/// `games` matches between `specs` (one seat each, rotated), from `seed`.
pub fn run(
    specs: &[Spec],
    modules: &Modules,
    games: u64,
    seed: u64,
    timed: bool,
    think: &mut Vec<(usize, Duration)>,
) -> Result<Vec<Outcome>, ArenaError> {
    (0..games)
        .map(|g| {
            let setup = setup_of(specs.len(), modules, seed, g);
            let bot_seed = splitmix64(&mut seed.wrapping_mul(31).wrapping_add(g));
            play(
                specs,
                &seating_of(specs.len(), g),
                setup,
                bot_seed,
                timed,
                think,
            )
        })
        .collect()
}

/// One bot kind's results over a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub games: u32,
    /// Won games, a tie shared among the tied.
    pub wins: f64,
    /// Mean of (own score − best opponent's score).
    pub mean_diff: f64,
}

/// Each spec's [`Stats`] over `outcomes`.
pub fn stats(specs: usize, outcomes: &[Outcome]) -> Vec<Stats> {
    let mut out = vec![
        Stats {
            games: 0,
            wins: 0.0,
            mean_diff: 0.0,
        };
        specs
    ];
    for o in outcomes {
        let top = o.scores.iter().copied().max().unwrap_or(0);
        let tied = o.scores.iter().filter(|&&s| s == top).count() as f64;
        for (seat, &spec) in o.seating.iter().enumerate() {
            let own = o.scores[seat];
            let best_other = o
                .scores
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != seat)
                .map(|(_, &s)| s)
                .max()
                .unwrap_or(0);
            let s = &mut out[spec];
            s.games += 1;
            if own == top {
                s.wins += 1.0 / tied;
            }
            s.mean_diff += f64::from(own) - f64::from(best_other);
        }
    }
    for s in &mut out {
        if s.games > 0 {
            s.mean_diff /= f64::from(s.games);
        }
    }
    out
}

/// The 95 % Wilson score interval of `wins` successes in `n` trials.
pub fn wilson(wins: f64, n: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let z = 1.96f64;
    let p = wins / n;
    let denom = 1.0 + z * z / n;
    let centre = p + z * z / (2.0 * n);
    let spread = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    (
        ((centre - spread) / denom).max(0.0),
        ((centre + spread) / denom).min(1.0),
    )
}

/// Mean and 99th percentile of some durations (zero when there are none).
pub fn mean_p99(times: &mut [Duration]) -> (Duration, Duration) {
    if times.is_empty() {
        return (Duration::ZERO, Duration::ZERO);
    }
    times.sort_unstable();
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    let i = ((times.len() as f64) * 0.99).ceil() as usize;
    (mean, times[i.clamp(1, times.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_brackets_the_rate() {
        let (lo, hi) = wilson(95.0, 100.0);
        assert!(
            lo > 0.88 && lo < 0.95 && hi > 0.95 && hi < 0.99,
            "{lo} {hi}"
        );
        assert_eq!(wilson(0.0, 0.0), (0.0, 1.0));
    }

    #[test]
    fn specs_and_modules_parse() {
        assert!("mcts:200ms".parse::<Spec>().is_ok());
        assert!("mcts:300i".parse::<Spec>().is_ok());
        assert!("mcts:2s".parse::<Spec>().is_ok());
        assert!("mcts:50i/d4/c12/w3/n8/x0.7/s10".parse::<Spec>().is_ok());
        assert!("mcts:50i/q1".parse::<Spec>().is_err());
        assert!("mcts:x".parse::<Spec>().is_err());
        assert!("minimax".parse::<Spec>().is_err());
        assert_eq!(parse_modules("all"), Ok(Modules::all()));
        assert!(parse_modules("tollkeepers,chips").is_ok_and(|m| m.tollkeepers && m.map.is_some()));
        assert!(parse_modules("inns").is_err());
    }

    #[test]
    fn a_tie_is_shared_and_differences_are_against_the_best_opponent() {
        let o = Outcome {
            seating: vec![1, 0],
            scores: vec![10, 10],
            moves: 0,
        };
        let s = stats(2, &[o]);
        assert_eq!(s[0].wins, 0.5);
        assert_eq!(s[1].mean_diff, 0.0);
    }
}
