//! `arena --games N --bots greedy,mcts:200ms --modules all|none|tollkeepers,... --seed S`: plays
//! N games between the bots (one seat each, seats rotated), prints win rates with 95 % Wilson
//! intervals, the mean score difference and think times per decision.

use carcassonne_bots::arena::{Spec, mean_p99, parse_modules, run, stats, wilson};
use std::process::ExitCode;

fn main() -> ExitCode {
    match main_inner() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("arena: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main_inner() -> Result<(), String> {
    let mut games = 10u64;
    let mut bots = "greedy,random".to_string();
    let mut modules = "none".to_string();
    let mut seed = 1u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--games" => games = value()?.parse().map_err(|e| format!("--games: {e}"))?,
            "--bots" => bots = value()?,
            "--modules" => modules = value()?,
            "--seed" => seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            _ => {
                return Err(format!(
                    "unknown argument `{a}`; usage: arena --games N --bots greedy,mcts:200ms \
                     --modules all|none|tollkeepers,messages,france,chips --seed S"
                ));
            }
        }
    }
    let specs: Vec<Spec> = bots.split(',').map(str::parse).collect::<Result<_, _>>()?;
    if !(2..=6).contains(&specs.len()) {
        return Err("--bots names 2 to 6 bots (one seat each)".into());
    }
    let modules = parse_modules(&modules)?;
    let mut think = Vec::new();
    let outcomes =
        run(&specs, &modules, games, seed, true, &mut think).map_err(|e| e.to_string())?;
    let moves: usize = outcomes.iter().map(|o| o.moves).sum();
    println!(
        "{games} games, {} players, modules {modules:?}, seed {seed}, {moves} commands",
        specs.len()
    );
    println!(
        "bot            wins   rate  95% CI          mean diff  think mean  think p99  decisions"
    );
    for (i, (spec, s)) in specs.iter().zip(stats(specs.len(), &outcomes)).enumerate() {
        let (lo, hi) = wilson(s.wins, f64::from(s.games));
        let mut times: Vec<_> = think.iter().filter(|t| t.0 == i).map(|t| t.1).collect();
        let n = times.len();
        let (mean, p99) = mean_p99(&mut times);
        println!(
            "{:<14} {:>5.1} {:>5.1}%  [{:>5.1}%, {:>5.1}%]  {:>+9.1}  {:>9.2}ms  {:>8.2}ms  {n}",
            spec.name,
            s.wins,
            100.0 * s.wins / f64::from(s.games.max(1)),
            100.0 * lo,
            100.0 * hi,
            s.mean_diff,
            mean.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3,
        );
    }
    Ok(())
}
