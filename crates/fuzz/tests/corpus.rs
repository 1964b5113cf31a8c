//! The short fuzz run of CI: every file of the checked-in corpus (`corpus/<target>/`) and the
//! seed inputs through their target, then a fixed-seed batch of inputs mutated from them. A
//! panic in a target fails the test and names the input.
//!
//! `cargo test -p fuzz --test corpus -- --ignored write_seeds` (re)writes the seed inputs into
//! the corpus directories.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::path::PathBuf;

/// Generated inputs per target: a few thousand in all, a few seconds in a debug build.
const GENERATED: &[(&str, usize)] = &[
    ("client_message", 2000),
    ("mirror", 300),
    ("game", 100),
    ("catalogue", 400),
    ("map", 150),
];

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target)
}

/// The checked-in corpus of `target`, sorted by file name.
fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let Ok(dir) = std::fs::read_dir(corpus_dir(target)) else {
        return Vec::new();
    };
    let mut files: Vec<(String, Vec<u8>)> = dir
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .filter_map(|e| {
            let bytes = std::fs::read(e.path()).ok()?;
            Some((e.file_name().to_string_lossy().into_owned(), bytes))
        })
        .collect();
    files.sort();
    files
}

/// Runs `f` on `input`, naming the input if it panics.
fn run(target: &str, what: &str, f: fn(&[u8]), input: &[u8]) {
    if std::panic::catch_unwind(|| f(input)).is_err() {
        panic!(
            "target {target} panicked on {what}: {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

/// One mutation of `input` in the manner of a fuzzer: bytes overwritten, inserted or removed, a
/// truncation, or a splice from `other`.
fn mutate(rng: &mut ChaCha8Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    let below = |rng: &mut ChaCha8Rng, n: usize| (rng.next_u64() % n.max(1) as u64) as usize;
    for _ in 0..1 + below(rng, 4) {
        let at = below(rng, out.len() + 1);
        match below(rng, 6) {
            0 if at < out.len() => out[at] = rng.next_u64() as u8,
            1 if at < out.len() => out[at] ^= 1 << below(rng, 8),
            2 => {
                let b = *b"{}[]\":,0-19e.\\ntxy/~";
                out.insert(at, b[below(rng, b.len())]);
            }
            3 if at < out.len() => {
                let end = (at + 1 + below(rng, 16)).min(out.len());
                out.drain(at..end);
            }
            4 => out.truncate(at),
            _ => {
                let from = below(rng, other.len() + 1);
                let end = (from + below(rng, 64)).min(other.len());
                let piece = other[from..end].to_vec();
                out.splice(at..at, piece);
            }
        }
    }
    out
}

#[test]
fn every_target_survives_its_corpus_and_a_fixed_seed_batch() {
    for &(target, f) in fuzz::TARGETS {
        let started = std::time::Instant::now();
        let mut inputs: Vec<Vec<u8>> = fuzz::seeds::seeds(target);
        for (name, bytes) in corpus(target) {
            run(target, &name, f, &bytes);
            inputs.push(bytes);
        }
        for (i, seed) in inputs.iter().enumerate() {
            run(target, &format!("seed {i}"), f, seed);
        }
        assert!(!inputs.is_empty(), "target {target} has no corpus");
        let count = GENERATED
            .iter()
            .find(|(t, _)| *t == target)
            .map_or(0, |c| c.1);
        let mut rng = ChaCha8Rng::seed_from_u64(0x5EED_F0F0 ^ target.len() as u64);
        for i in 0..count {
            let a = &inputs[(rng.next_u64() % inputs.len() as u64) as usize];
            let b = &inputs[(rng.next_u64() % inputs.len() as u64) as usize];
            let input = mutate(&mut rng, a, b);
            run(target, &format!("generated input {i}"), f, &input);
        }
        eprintln!(
            "{target}: {} corpus and seed inputs, {count} generated, {:.1} s",
            inputs.len(),
            started.elapsed().as_secs_f64()
        );
    }
}

#[test]
fn every_target_has_a_corpus_directory() {
    for &(target, _) in fuzz::TARGETS {
        assert!(
            !corpus(target).is_empty(),
            "{} is empty: run the ignored write_seeds test",
            corpus_dir(target).display()
        );
    }
}

#[test]
#[ignore = "writes the seed inputs into corpus/"]
fn write_seeds() {
    for &(target, _) in fuzz::TARGETS {
        let dir = corpus_dir(target);
        std::fs::create_dir_all(&dir).expect("corpus directory");
        for (i, seed) in fuzz::seeds::seeds(target).iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{i:02}")), seed).expect("seed file");
        }
    }
}
