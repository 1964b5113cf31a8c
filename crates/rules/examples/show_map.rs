//! Shows a map in the terminal (P6), optionally with a chip layout (P7).
//!
//! ```text
//! cargo run -p rules --example show_map -- france
//! cargo run -p rules --example show_map -- france --chips 42          # chips face down
//! cargo run -p rules --example show_map -- france --chips 42 --reveal # and what they are
//! ```
//!
//! With `--chips SEED` the start squares and the chips come from a ChaCha8 stream seeded with
//! SEED, as a match's setup draws them (P2, P7). The lead will fold this into the scenario binary.

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use rules::maps::{self, render};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(id) = args.first() else {
        let ids: Vec<&str> = maps::ids().collect();
        eprintln!(
            "usage: show_map MAP [--chips SEED [--reveal]]; maps: {}",
            ids.join(", ")
        );
        return ExitCode::FAILURE;
    };
    let Some(map) = maps::map(id) else {
        eprintln!("no map `{id}`");
        return ExitCode::FAILURE;
    };
    let seed = match args.iter().position(|a| a == "--chips") {
        None => None,
        Some(i) => match args.get(i + 1).and_then(|s| s.parse::<u64>().ok()) {
            Some(s) => Some(s),
            None => {
                eprintln!("--chips needs a seed (a number)");
                return ExitCode::FAILURE;
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
                return ExitCode::FAILURE;
            }
        }
    }
    print!("{}", render::render(map, &shown));
    ExitCode::SUCCESS
}
