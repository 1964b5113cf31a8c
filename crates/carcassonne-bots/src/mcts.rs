//! The search bot: determinized Monte Carlo search with UCT (UCB1) over the answers to the bot's
//! decision. Each iteration takes one of several consistent games (sampled from the public
//! history, [`crate::determinize`]), plays the chosen answer and the bot's own follow-ups of the
//! turn, then a rollout by the greedy-biased policy ([`crate::greedy::policy`]) for a number of
//! turns, cut off by the heuristic evaluation ([`crate::eval`]). The answer most visited wins.
//!
//! The answers searched are the greedy look-ahead's best few (the rest rarely matter and would
//! thin the visits). Given a seed and an iteration budget (no time budget) the answer is a
//! function of the input: the search reads no clock then.

use crate::determinize::Knowledge;
use crate::eval::value_for;
use crate::greedy::{consistent, policy, rank, settle, tollhouse_bonus};
use crate::input::BotInput;
use crate::{Bot, fallback};
use rules::bot::splitmix64;
use rules::{Command, Game, PlayerId};
use std::time::{Duration, Instant};

/// How long a search may run: at most `iterations`, and at most `time` when given (a time
/// budget makes the answer depend on the machine; tests give iterations only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub iterations: u32,
    pub time: Option<Duration>,
}

impl Budget {
    /// A fixed number of iterations: deterministic.
    pub fn iterations(n: u32) -> Budget {
        Budget {
            iterations: n,
            time: None,
        }
    }

    /// A wall-clock budget per decision (with a high iteration cap).
    pub fn time(t: Duration) -> Budget {
        Budget {
            iterations: 1_000_000,
            time: Some(t),
        }
    }
}

/// The search's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub budget: Budget,
    /// Answers searched: the greedy look-ahead's best this many.
    pub candidates: usize,
    /// Consistent games sampled and cycled through.
    pub determinizations: usize,
    /// Turns a rollout plays before the evaluation cuts it off.
    pub depth: u32,
    /// UCB1's exploration constant (rewards lie in 0..1).
    pub exploration: f64,
    /// Points of value difference that make a reward of about 0.73 (the logistic's scale).
    pub scale: f64,
    /// Answers the rollout policy samples in phase 1.
    pub width: usize,
}

impl Settings {
    pub fn new(budget: Budget) -> Settings {
        Settings {
            budget,
            candidates: 8,
            determinizations: 16,
            depth: 6,
            exploration: 0.5,
            scale: 8.0,
            width: 4,
        }
    }
}

/// The chance in 2^64 that a rollout move is uniformly random.
const EXPLORE: u64 = u64::MAX / 10;

/// The determinized search bot.
#[derive(Debug, Clone)]
pub struct Mcts {
    settings: Settings,
    rng: u64,
}

impl Mcts {
    pub fn new(settings: Settings, seed: u64) -> Mcts {
        Mcts {
            settings,
            rng: seed,
        }
    }
}

impl Bot for Mcts {
    fn name(&self) -> String {
        let b = self.settings.budget;
        match b.time {
            Some(t) => format!("mcts:{}ms", t.as_millis()),
            None => format!("mcts:{}i", b.iterations),
        }
    }

    fn choose(&mut self, input: &BotInput<'_>) -> Option<Command> {
        let d = input.decision()?;
        let chosen = Knowledge::of(input)
            .ok()
            .and_then(|know| self.search(input, &know));
        chosen.or_else(|| fallback(d))
    }
}

impl Mcts {
    fn search(&mut self, input: &BotInput<'_>, know: &Knowledge) -> Option<Command> {
        let start = self.settings.budget.time.map(|_| Instant::now());
        let seat = input.seat;
        let first = consistent(input, know, &mut self.rng)?;
        let mut ranked = rank(&first, seat, tollhouse_bonus(input));
        if ranked.len() <= 1 {
            return ranked.pop().map(|r| r.0);
        }
        // The best few by the look-ahead, stable among equals (the options' order).
        let mut order: Vec<usize> = (0..ranked.len()).collect();
        order.sort_by(|&a, &b| ranked[b].1.total_cmp(&ranked[a].1).then(a.cmp(&b)));
        order.truncate(self.settings.candidates.max(1));
        let arms: Vec<(Command, f64)> = order.iter().map(|&i| ranked[i].clone()).collect();
        let mut pool = vec![first];
        let mut visits = vec![0u32; arms.len()];
        let mut total = vec![0f64; arms.len()];
        let turn = pool[0].turn();
        let streams = splitmix64(&mut self.rng);
        // The longest iteration so far: with a time budget, the search stops when one more like
        // it would end past the budget, so that the answer comes within it, not one iteration
        // after it.
        let mut longest = Duration::ZERO;
        for it in 0..self.settings.budget.iterations {
            let began = match (start, self.settings.budget.time) {
                (Some(s), Some(t)) => {
                    let spent = s.elapsed();
                    if spent + longest >= t {
                        break;
                    }
                    Some(spent)
                }
                _ => None,
            };
            let arm = self.select(&visits, &total, it);
            // Common random numbers: every arm's k-th visit plays in the same consistent game
            // with the same rollout stream, so arms are compared on the same futures.
            let k = visits[arm];
            let mut slot = k as usize % self.settings.determinizations.max(1);
            if slot == pool.len() {
                match consistent(input, know, &mut self.rng) {
                    Some(g) => pool.push(g),
                    // No further sample: the games already sampled serve again.
                    None => slot %= pool.len(),
                }
            }
            visits[arm] += 1;
            let mut g = pool[slot].clone();
            if g.apply(seat, arms[arm].0.clone()).is_err() {
                // Impossible in a consistent game: the decision is the view's.
                continue;
            }
            let mut stream = streams ^ u64::from(k).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            total[arm] += self.rollout(g, seat, turn, &mut stream);
            if let (Some(s), Some(b)) = (start, began) {
                longest = longest.max(s.elapsed().saturating_sub(b));
            }
        }
        let mut top = 0;
        for i in 1..arms.len() {
            let better = (visits[i], total[i] / f64::from(visits[i].max(1)))
                > (visits[top], total[top] / f64::from(visits[top].max(1)));
            if better {
                top = i;
            }
        }
        Some(arms[top].0.clone())
    }

    /// UCB1: every arm once (best look-ahead first), then mean plus exploration bonus.
    fn select(&self, visits: &[u32], total: &[f64], it: u32) -> usize {
        if let Some(i) = visits.iter().position(|&v| v == 0) {
            return i;
        }
        let ln = f64::from(it.max(1)).ln();
        let mut top = 0;
        let mut top_v = f64::NEG_INFINITY;
        for (i, (&n, &w)) in visits.iter().zip(total).enumerate() {
            let n = f64::from(n);
            let v = w / n + self.settings.exploration * (ln / n).sqrt();
            if v > top_v {
                (top, top_v) = (i, v);
            }
        }
        top
    }

    /// Plays the bot's own follow-ups of this turn at best, then `depth` turns of the policy;
    /// the reward is the logistic of the bot's value against the best opponent.
    fn rollout(&self, mut g: Game, seat: PlayerId, turn: u32, rng: &mut u64) -> f64 {
        // The rest of the bot's own turn (phase 2 and the like): at best, as the look-ahead.
        while !g.is_finished() && g.turn() == turn {
            match g.first_decision() {
                Some((_, p)) if p == seat => {
                    let own = rank(&g, seat, 0.0);
                    let Some(c) = crate::greedy::best(&own) else {
                        break;
                    };
                    if g.apply(seat, c).is_err() {
                        break;
                    }
                }
                _ => break,
            }
        }
        let stop = turn + self.settings.depth;
        while !g.is_finished() && g.turn() < stop {
            let Some((player, plan)) = policy(&g, rng, EXPLORE, self.settings.width) else {
                break;
            };
            let mut refused = false;
            for c in plan {
                if g.apply(player, c).is_err() {
                    refused = true;
                    break;
                }
            }
            if refused {
                break;
            }
        }
        let v = match g.is_finished() {
            true => value_for(&g, seat),
            false => settle(&g, seat, g.turn(), 0),
        };
        1.0 / (1.0 + (-v / self.settings.scale).exp())
    }
}
