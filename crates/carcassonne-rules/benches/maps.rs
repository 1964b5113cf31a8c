//! The map setup of a France match (P2, P7): choosing the start squares and laying the 30 chips
//! from a fresh seed, as the start of a match does (`Modules::board_setup`, `Modules::on_start`).
//! The target is under 1 ms per setup.
//!
//! Run with `cargo bench -p carcassonne-rules --bench maps`. Figures are recorded in crates/carcassonne-rules/README.md.

use carcassonne_rules::maps;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::hint::black_box;

fn chip_setup(c: &mut Criterion) {
    let Some(map) = maps::map("france") else {
        panic!("no france map");
    };
    let mut g = c.benchmark_group("map_setup");
    g.throughput(Throughput::Elements(1));
    let mut seed = 0u64;
    g.bench_function("france_starts_and_chips", |b| {
        b.iter(|| {
            seed += 1;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let starts = maps::choose_starts(map, None, &mut rng);
            black_box(starts.and_then(|s| maps::lay_chips(map, s, &mut rng)))
        })
    });
    g.bench_function("parse_france_toml", |b| {
        let text = include_str!("../data/maps/france.toml");
        b.iter(|| black_box(maps::parse("france", text).is_ok()))
    });
    g.finish();
}

criterion_group!(benches, chip_setup);
criterion_main!(benches);
