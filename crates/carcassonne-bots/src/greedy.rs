//! The greedy bot and the one-move look-ahead the search shares with it. A command is judged by
//! applying it to a clone of a consistent game, following the bot's own decisions of the same
//! turn (phase 2 after phase 1, a pawn choice, a dispatch, a wine sale) with their best answers,
//! and evaluating the position ([`crate::eval`]).

use crate::determinize::Knowledge;
use crate::eval::value_for;
use crate::input::BotInput;
use crate::{Bot, fallback};
use rules::bot::splitmix64;
use rules::{Command, Game, Options, PlayerId};

/// How many of its own decisions in a row a look-ahead follows (tile, meeple, pawn, dispatch).
const FOLLOW: u32 = 4;

/// What a tollhouse put into play is worth beyond the position it leaves (its future tolls),
/// times the share of the game left.
const TOLLHOUSE: f64 = 3.0;

/// Samples a determinization tries before a bot gives up on the search and answers by default.
pub(crate) const TRIES: usize = 4;

/// Every answer to `seat`'s first open decision in `game` (`pass` last when it is allowed).
pub fn commands_of(game: &Game, seat: PlayerId) -> Vec<Command> {
    let Some((id, _)) = game.open_asks().find(|&(_, p)| p == seat) else {
        return Vec::new();
    };
    let Some(o) = game.options(id) else {
        return Vec::new();
    };
    let mut out: Vec<Command> = (0..o.groups()).flat_map(|g| o.list(g)).collect();
    if o.may_pass() {
        out.push(Command::Pass {});
    }
    out
}

/// The value for `seat` of `game` after its own next decisions of turn `turn` are answered at
/// best (at most `depth` of them).
pub fn settle(game: &Game, seat: PlayerId, turn: u32, depth: u32) -> f64 {
    if depth == 0 || game.is_finished() || game.turn() != turn {
        return value_for(game, seat);
    }
    match game.first_decision() {
        Some((_, p)) if p == seat => commands_of(game, seat)
            .into_iter()
            .filter_map(|c| after(game, seat, c))
            .map(|g| settle(&g, seat, turn, depth - 1))
            .reduce(f64::max)
            .unwrap_or_else(|| value_for(game, seat)),
        _ => value_for(game, seat),
    }
}

/// `game` after `seat` plays `command`, or `None` if it is refused.
pub fn after(game: &Game, seat: PlayerId, command: Command) -> Option<Game> {
    let mut g = game.clone();
    g.apply(seat, command).ok()?;
    Some(g)
}

/// Every answer to `seat`'s decision with its look-ahead value, in the options' order.
pub fn rank(game: &Game, seat: PlayerId, tollhouse: f64) -> Vec<(Command, f64)> {
    let turn = game.turn();
    commands_of(game, seat)
        .into_iter()
        .filter_map(|c| {
            let g = after(game, seat, c.clone())?;
            let bonus = match c {
                Command::PlaceTollhouse { .. } => tollhouse,
                _ => 0.0,
            };
            Some((c, settle(&g, seat, turn, FOLLOW) + bonus))
        })
        .collect()
}

/// The bonus a tollhouse put into play gets now: none once it is in play (moving it earns
/// nothing by itself).
pub(crate) fn tollhouse_bonus(input: &BotInput<'_>) -> f64 {
    let in_play = input
        .view
        .players
        .get(input.seat as usize)
        .is_none_or(|p| p.tollhouse.is_some());
    let left = f64::from(input.view.pile_size) / 70.0;
    if in_play {
        0.0
    } else {
        TOLLHOUSE * left.min(1.0)
    }
}

/// The first of the best-valued commands.
pub fn best(ranked: &[(Command, f64)]) -> Option<Command> {
    let mut top: Option<&(Command, f64)> = None;
    for r in ranked {
        if top.is_none_or(|t| r.1 > t.1) {
            top = Some(r);
        }
    }
    top.map(|t| t.0.clone())
}

/// A consistent game for `input`, sampled with `rng` (a few samples tried).
pub(crate) fn consistent(input: &BotInput<'_>, know: &Knowledge, rng: &mut u64) -> Option<Game> {
    for _ in 0..TRIES {
        match know.game(input, || splitmix64(rng)) {
            Ok(g) => return Some(g),
            Err(e) => debug_assert!(false, "determinization failed: {e}"),
        }
    }
    None
}

/// The greedy bot: the command whose look-ahead value is highest in one consistent game.
#[derive(Debug, Clone)]
pub struct Greedy {
    rng: u64,
}

impl Greedy {
    pub fn new(seed: u64) -> Greedy {
        Greedy { rng: seed }
    }
}

impl Bot for Greedy {
    fn name(&self) -> String {
        "greedy".into()
    }

    fn choose(&mut self, input: &BotInput<'_>) -> Option<Command> {
        let d = input.decision()?;
        let chosen = Knowledge::of(input)
            .ok()
            .and_then(|know| consistent(input, &know, &mut self.rng))
            .and_then(|game| best(&rank(&game, input.seat, tollhouse_bonus(input))));
        chosen.or_else(|| fallback(d))
    }
}

/// The search's rollout policy: for the first open decision of `game`, sometimes (`explore` in
/// 2^64) a uniformly random answer, else the best of a few sampled answers (at most `width`)
/// judged one of the player's own decisions deep. Returns the commands to apply in order and
/// whose they are.
pub fn policy(
    game: &Game,
    rng: &mut u64,
    explore: u64,
    width: usize,
) -> Option<(PlayerId, Vec<Command>)> {
    let (id, player) = game.first_decision()?;
    let o = game.options(id)?;
    if splitmix64(rng) < explore {
        let c = rules::bot::random_command(&o, || splitmix64(rng))?;
        return Some((player, vec![c]));
    }
    let mut candidates = Vec::new();
    for g in 0..o.groups() {
        let n = o.len(g);
        if g == 0 && n > width {
            for _ in 0..width {
                let i = ((u128::from(splitmix64(rng)) * n as u128) >> 64) as usize;
                candidates.extend(o.nth(g, i));
            }
        } else {
            candidates.extend((0..n).filter_map(|i| o.nth(g, i)));
        }
    }
    if o.may_pass() {
        candidates.push(Command::Pass {});
    }
    let turn = game.turn();
    let mut top: Option<(f64, Vec<Command>)> = None;
    for c in candidates {
        let Some(g) = after(game, player, c.clone()) else {
            continue;
        };
        let mut plan = vec![c];
        let value = match g.first_decision() {
            Some((_, p)) if p == player && g.turn() == turn && !g.is_finished() => {
                let mut inner: Option<(f64, Command)> = None;
                for c2 in commands_of(&g, player) {
                    if let Some(g2) = after(&g, player, c2.clone()) {
                        let v = value_for(&g2, player);
                        if inner.as_ref().is_none_or(|t| v > t.0) {
                            inner = Some((v, c2));
                        }
                    }
                }
                match inner {
                    Some((v, c2)) => {
                        plan.push(c2);
                        v
                    }
                    None => value_for(&g, player),
                }
            }
            _ => value_for(&g, player),
        };
        if top.as_ref().is_none_or(|t| value > t.0) {
            top = Some((value, plan));
        }
    }
    top.map(|(_, plan)| (player, plan))
}
