//! Runs scenario files and prints, per file, the events and final scores as JSON.
//!
//! Usage: `scenario [--no-check] FILE...`. Exit status: 0 when every scenario ran (and met its
//! expectations), 1 when a command was illegal or an expectation failed (the message names the
//! step and why), 2 when a file cannot be read or parsed.

use rules::scenario::{self, Scenario};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut check = true;
    let mut files = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--no-check" => check = false,
            "-h" | "--help" => {
                eprintln!("usage: scenario [--no-check] FILE...");
                return ExitCode::SUCCESS;
            }
            _ => files.push(arg),
        }
    }
    if files.is_empty() {
        eprintln!("usage: scenario [--no-check] FILE...");
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
            scenario::run(&s)
        } else {
            scenario::play(&s)
        };
        match result {
            Ok(out) => match serde_json::to_string_pretty(&out) {
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
