//! Every scenario file in `crates/carcassonne-rules/scenarios/` must run and meet its expectations. Each file
//! names the rule ids it checks; this test also insists that every file cites at least one.

use carcassonne_rules::scenario::{self, Scenario};
use std::path::PathBuf;

fn scenario_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_scenario_meets_its_expectations() {
    let files = scenario_files();
    assert!(!files.is_empty(), "no scenario files found");
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable scenario");
        let s: Scenario = match serde_json::from_str(&text) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{}: not a scenario: {e}", f.display()));
                continue;
            }
        };
        if s.rules.is_empty() {
            failures.push(format!("{}: cites no rule id", f.display()));
        }
        let has_expectation = s.expect.scores.is_some()
            || !s.expect.events.is_empty()
            || s.expect.view.is_some()
            || s.steps.iter().any(|st| {
                st.error.is_some()
                    || !st.events.is_empty()
                    || st.decisions.is_some()
                    || st.view.is_some()
            });
        if !has_expectation {
            failures.push(format!("{}: expects nothing", f.display()));
        }
        if let Err(e) = scenario::run(&s) {
            failures.push(format!("{} ({}): {e}", f.display(), s.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Random games with every module that keeps to the open table, written down by
/// `scenario::record` with and without their secrets: each export replays to the same events and
/// scores, and the one without secrets holds no seed and only the tiles and dispatches drawn (in
/// order) before the rest in canonical order. A match on a map cannot be exported without its
/// seed.
#[test]
fn a_recorded_match_replays_to_the_same_events_and_scores() {
    use carcassonne_rules::{Colour, Event, Game, Setup};
    for seed in [1u64, 2, 3] {
        let setup = Setup::new(vec![Colour::Red, Colour::Blue, Colour::Green], seed)
            .tollkeepers(true)
            .messages(true);
        let (mut game, mut events) = Game::start(setup.clone()).expect("starts");
        let mut state = seed;
        let mut log = Vec::new();
        // Part of a game, then the whole game.
        for stop in [40usize, usize::MAX] {
            while log.len() < stop && !game.is_finished() {
                let (p, c) = carcassonne_rules::bot::random_move(&game, || {
                    carcassonne_rules::bot::splitmix64(&mut state)
                })
                .expect("a move");
                events.extend(game.apply(p, c.clone()).expect("legal"));
                log.push((p, c));
            }
            for reveal in [true, false] {
                let s = scenario::record("t", &setup, log.clone(), reveal).expect("records");
                assert_eq!(s.setup.seed == seed, reveal);
                let out = scenario::run(&s).expect("the export meets its expectations");
                assert_eq!(out.events, events, "seed {seed} reveal {reveal}");
                assert_eq!(out.scores, game.scores());
                assert_eq!(out.finished, game.is_finished());
                if !reveal {
                    let drawn: Vec<String> = events
                        .iter()
                        .filter_map(|e| match e {
                            Event::TileDrawn { tile, .. } => Some(tile.clone()),
                            _ => None,
                        })
                        .collect();
                    let order = s.setup.draw_order.clone().expect("a pile");
                    assert_eq!(order[..drawn.len()], drawn[..]);
                    let mut rest = order[drawn.len()..].to_vec();
                    rest.sort();
                    assert_eq!(rest, order[drawn.len()..], "the rest in tile-id order");
                }
            }
        }
    }
    let on_map = Setup::new(vec![Colour::Red, Colour::Blue], 5)
        .map("france")
        .chips(true);
    assert!(matches!(
        scenario::record("m", &on_map, Vec::new(), false),
        Err(scenario::ScenarioError::Secret(_))
    ));
    assert!(scenario::record("m", &on_map, Vec::new(), true).is_ok());
}
