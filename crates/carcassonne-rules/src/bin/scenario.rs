//! Runs scenario files and prints, per file, the events and final scores as JSON; or draws maps
//! and positions as plain text.
//!
//! Usage:
//! - `scenario [--no-check] FILE...`: runs the scenarios, prints each outcome as JSON.
//! - `scenario [--no-check] --board FILE...`: runs them and draws each final position instead
//!   (on its map, P1–P10, or on the open table).
//! - `scenario --show-map MAP [--chips SEED [--reveal]]`: draws a built-in map (`france`); with
//!   `--chips` also the start squares and chips a match seeded with SEED would lay (P2, P7), face
//!   down unless `--reveal`.
//!
//! Exit status: 0 when every scenario ran (and met its expectations), 1 when a command was
//! illegal or an expectation failed (the message names the step and why), 2 when a file cannot
//! be read or parsed or an argument is wrong.

use carcassonne_rules::maps::{self, render};
use carcassonne_rules::scenario::{self, Scenario};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::process::ExitCode;

const USAGE: &str = "usage: scenario [--no-check] [--board] FILE...\n       scenario --show-map MAP [--chips SEED [--reveal]]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--show-map") {
        return show_map(&args[i + 1..]);
    }
    let mut check = true;
    let mut board = false;
    let mut files = Vec::new();
    for arg in args {
        match arg.as_str() {
            "--no-check" => check = false,
            "--board" => board = true,
            "-h" | "--help" => {
                eprintln!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ => files.push(arg),
        }
    }
    if files.is_empty() {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    let mut status = ExitCode::SUCCESS;
    for file in files {
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{file}: cannot read: {e}");
                return ExitCode::from(2);
            }
        };
        let s: Scenario = match serde_json::from_str(&text) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{file}: not a scenario: {e}");
                return ExitCode::from(2);
            }
        };
        let result = if check {
            scenario::run_game(&s)
        } else {
            scenario::play_game(&s)
        };
        match result {
            Ok((_, game)) if board => {
                println!("{file}: {}", s.name);
                print!("{}", carcassonne_rules::text::board(&game.view()));
            }
            Ok((out, _)) => match serde_json::to_string_pretty(&out) {
                Ok(json) => println!("{json}"),
                Err(e) => {
                    eprintln!("{file}: cannot print the outcome: {e}");
                    status = ExitCode::from(1);
                }
            },
            Err(e) => {
                eprintln!("{file}: {}: {e}", s.name);
                status = ExitCode::from(1);
            }
        }
    }
    status
}

/// `--show-map MAP [--chips SEED [--reveal]]` (P6; P2 and P7 with `--chips`).
fn show_map(args: &[String]) -> ExitCode {
    let Some(id) = args.first() else {
        let ids: Vec<&str> = maps::ids().collect();
        eprintln!("{USAGE}\nmaps: {}", ids.join(", "));
        return ExitCode::from(2);
    };
    let Some(map) = maps::map(id) else {
        eprintln!("no map `{id}`");
        return ExitCode::from(2);
    };
    let seed = match args.iter().position(|a| a == "--chips") {
        None => None,
        Some(i) => match args.get(i + 1).and_then(|s| s.parse::<u64>().ok()) {
            Some(s) => Some(s),
            None => {
                eprintln!("--chips needs a seed (a number)");
                return ExitCode::from(2);
            }
        },
    };
    let reveal = args.iter().any(|a| a == "--reveal");
    let mut shown = Vec::new();
    if let Some(seed) = seed {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let laid = maps::choose_starts(map, None, &mut rng).and_then(|starts| {
            let [a, b] = starts.squares(map);
            println!("start tile on {a}, random tile on {b}");
            maps::lay_chips(map, starts, &mut rng)
        });
        match laid {
            Ok(chips) => {
                shown = chips
                    .into_iter()
                    .map(|(p, c)| (p, reveal.then_some(c)))
                    .collect()
            }
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(1);
            }
        }
    }
    print!("{}", render::render(map, &shown));
    ExitCode::SUCCESS
}
