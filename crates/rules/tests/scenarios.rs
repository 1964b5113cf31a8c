//! Every scenario file in `crates/rules/scenarios/` must run and meet its expectations. Each file
//! names the rule ids it checks; this test also insists that every file cites at least one.

use rules::scenario::{self, Scenario};
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
