//! Plays N random games and prints games per second: a quick figure outside criterion, and a
//! fixed workload for instruction counts (`valgrind --tool=callgrind`).
//!
//! Usage: `cargo run --release -p carcassonne-rules --example random_games -- [games] [players] [flags]`,
//! flags any of `tollkeepers`, `messages`, `inns` (Inns & Cathedrals), `all` (these three),
//! `traders` (Traders & Builders, R1–R20), `france` (on the France map, P1–P6) and `chips` (with
//! its chips, P7–P10).

use carcassonne_rules::{Colour, Game, Setup, bot};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let games: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let players: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2);
    let flag = |f: &str| args.iter().skip(2).any(|a| a == f);
    let tollkeepers = flag("tollkeepers") || flag("all");
    let messages = flag("messages") || flag("all");
    let inns = flag("inns") || flag("all");
    let traders = flag("traders");
    let france = flag("france") || flag("chips");
    let chips = flag("chips");
    let colours = Colour::ALL;
    let start = Instant::now();
    let (mut turns, mut points) = (0u64, 0u64);
    let mut events = Vec::new();
    for seed in 0..games {
        let mut setup = Setup::new(colours[..players.clamp(2, 6)].to_vec(), seed)
            .tollkeepers(tollkeepers)
            .messages(messages)
            .inns_cathedrals(inns)
            .traders_builders(traders);
        if france {
            setup = setup.map("france").chips(chips);
        }
        let Ok((mut game, _)) = Game::start(setup) else {
            eprintln!("bad setup");
            return;
        };
        let mut rng = seed;
        while let Some((p, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
            events.clear();
            if let Err(e) = game.apply_into(p, cmd, &mut events) {
                eprintln!("illegal bot move: {e}");
                return;
            }
            turns += 1;
        }
        points += game.scores().iter().map(|&s| u64::from(s)).sum::<u64>();
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{games} games ({players} players, tollkeepers: {tollkeepers}, messages: {messages}, inns: {inns}, traders: {traders}, france: {france}, chips: {chips}) in {secs:.3} s: {:.0} games/s, {:.0} commands/game, {:.1} points/game",
        games as f64 / secs,
        turns as f64 / games as f64,
        points as f64 / games as f64
    );
}
