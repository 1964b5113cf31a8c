//! Throughput of the rules engine: complete random games (2 and 4 players, base game, with The
//! Tollkeepers, with The Messages, with both; on the France map with its chips, and with every
//! module) and legal-placement generation on a board of about 70 tiles.
//!
//! Run with `cargo bench -p carcassonne-rules`. Figures are recorded in crates/carcassonne-rules/README.md.

use carcassonne_rules::{Colour, Game, Setup, bot};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const COLOURS: [Colour; 4] = [Colour::Red, Colour::Green, Colour::Blue, Colour::Yellow];

fn setup(players: usize, seed: u64, tollkeepers: bool) -> Setup {
    Setup::new(COLOURS[..players].to_vec(), seed).tollkeepers(tollkeepers)
}

/// Which modules a benchmarked game has: (name, The Tollkeepers, The Messages).
const MODULES: [(&str, bool, bool); 4] = [
    ("base", false, false),
    ("tollkeepers", true, false),
    ("messages", false, true),
    ("all", true, true),
];

/// One whole random game; returns the scores so nothing is optimised away.
fn random_game(players: usize, seed: u64, (toll, messages): (bool, bool)) -> Vec<u32> {
    play(setup(players, seed, toll).messages(messages), seed)
}

/// One whole random game on the France map (P1–P6), with its chips if `chips` (P7–P10).
fn map_game(players: usize, seed: u64, tollkeepers: bool, chips: bool) -> Vec<u32> {
    play(
        setup(players, seed, tollkeepers).map("france").chips(chips),
        seed,
    )
}

fn play(setup: Setup, seed: u64) -> Vec<u32> {
    let Ok((mut game, _)) = Game::start(setup) else {
        return Vec::new();
    };
    let mut rng = seed ^ 0xDEAD_BEEF;
    let mut events = Vec::with_capacity(16);
    while let Some((p, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
        events.clear();
        if game.apply_into(p, cmd, &mut events).is_err() {
            break;
        }
    }
    game.scores()
}

fn games(c: &mut Criterion) {
    let mut g = c.benchmark_group("random_game");
    g.throughput(Throughput::Elements(1));
    for (name, toll, messages) in MODULES {
        for players in [2, 4] {
            let mut seed = 0u64;
            g.bench_function(BenchmarkId::new(name, format!("{players}p")), |b| {
                b.iter(|| {
                    seed += 1;
                    black_box(random_game(players, seed, (toll, messages)))
                })
            });
        }
    }
    for (players, toll, chips) in [(2, false, false), (2, false, true), (4, true, true)] {
        let name = match (toll, chips) {
            (false, false) => "france",
            (false, true) => "france_chips",
            _ => "france_chips_tollkeepers",
        };
        let mut seed = 0u64;
        g.bench_function(BenchmarkId::new(name, format!("{players}p")), |b| {
            b.iter(|| {
                seed += 1;
                black_box(map_game(players, seed, toll, chips))
            })
        });
    }
    // Every module at once: The Tollkeepers, The Messages, the France map with its chips.
    let mut seed = 0u64;
    g.bench_function(BenchmarkId::new("france_chips_all", "4p"), |b| {
        b.iter(|| {
            seed += 1;
            let s = setup(4, seed, true)
                .messages(true)
                .map("france")
                .chips(true);
            black_box(play(s, seed))
        })
    });
    g.finish();
}

fn placements(c: &mut Criterion) {
    // Play a game until about 70 tiles lie on the board, then time placement generation.
    let (mut game, _) = match Game::start(setup(2, 42, false)) {
        Ok(g) => g,
        Err(e) => panic!("setup: {e}"),
    };
    let mut rng = 1u64;
    while game.pile_size() > 1 {
        match bot::random_move(&game, || bot::splitmix64(&mut rng)) {
            Some((p, cmd)) => {
                if game.apply(p, cmd).is_err() {
                    break;
                }
            }
            None => break,
        }
    }
    let tiles = game.placed_tiles().count();
    let ids: Vec<&str> = carcassonne_rules::catalogue()
        .set("base")
        .map(|(_, t)| t.id.as_str())
        .collect();
    let mut buf = Vec::new();
    let mut i = 0;
    // Placement generation from scratch, for each tile design in turn.
    c.bench_function(&format!("placements_of/{tiles}_tiles"), |b| {
        b.iter(|| {
            i = (i + 1) % ids.len();
            game.placements_of(ids[i], &mut buf);
            black_box(buf.len())
        })
    });
}

criterion_group!(benches, games, placements);
criterion_main!(benches);
