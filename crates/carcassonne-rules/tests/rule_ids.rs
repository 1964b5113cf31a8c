//! The rules reference in `docs/reference/` is where a rule id means something. Code comments,
//! tests, scenario files, error responses and the docs cite ids (B6, T8, M5, P3); this test
//! collects every id cited anywhere in the repository's text and fails, naming the file, the line
//! and the id, when one is not defined in the reference. It also checks that the reference defines
//! each id once, keeps the ids of the rules it was written from, lists its DECISIONs, that
//! `docs/rules.md` lists every DECISION, and that the B1 table is the tile data.
//!
//! An id is one of the letters B, T, M, P, I, R followed by a number from 1 to 29 without a leading
//! zero, standing alone as a word. Higher numbers are no ids: no part of the reference comes near
//! them, and `B64` (base64) or `P404` stay out. Hex (`0xB1`, `#B1B2C3`), `P2P` and `T1a` are no
//! ids because a letter or digit touches them. A range written `B4–B7` cites both ends; the short
//! form `M8–15` cites M8 and M15.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const PREFIXES: [char; 6] = ['B', 'T', 'M', 'P', 'I', 'R'];
const MAX_NUMBER: u32 = 29;

/// The reference's rule files and the letter each defines.
const RULE_FILES: [(&str, char); 6] = [
    ("base-game.md", 'B'),
    ("tollkeepers.md", 'T'),
    ("messages.md", 'M'),
    ("maps-france.md", 'P'),
    ("inns-cathedrals.md", 'I'),
    ("traders-builders.md", 'R'),
];

/// The ids of the English reference this one was written from (`B1`–`B11`, `T1`–`T10`,
/// `M1`–`M18`, `P1`–`P10`, `I1`–`I18`, `R1`–`R20`). Ids are never dropped, so these must stay
/// defined.
const KEPT: [(char, u32); 6] = [
    ('B', 11),
    ('T', 10),
    ('M', 18),
    ('P', 10),
    ('I', 18),
    ('R', 20),
];

/// Letters of the modules the server applies. Their DECISIONs must be rows of the decisions table
/// of `docs/rules.md`; the others (not built yet) need only be cited there.
const APPLIED: [char; 6] = ['B', 'T', 'M', 'P', 'I', 'R'];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Reads a number of 1 or 2 digits without a leading zero at `chars[i..]`, ending at a word
/// boundary; returns it and the index after it.
fn number_at(chars: &[char], i: usize) -> Option<(u32, usize)> {
    let mut j = i;
    while j < chars.len() && chars[j].is_ascii_digit() {
        j += 1;
    }
    let digits = j - i;
    if digits == 0 || digits > 2 || chars[i] == '0' {
        return None;
    }
    if j < chars.len() && is_word(chars[j]) {
        return None;
    }
    let n: u32 = chars[i..j].iter().collect::<String>().parse().ok()?;
    (1..=MAX_NUMBER).contains(&n).then_some((n, j))
}

/// Every rule id cited in `text`, with its line number (from 1), in order of appearance.
fn cited(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (line_no, line) in text.lines().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        for i in 0..chars.len() {
            let prefix = chars[i];
            if !PREFIXES.contains(&prefix) || (i > 0 && is_word(chars[i - 1])) {
                continue;
            }
            let Some((n, end)) = number_at(&chars, i + 1) else {
                continue;
            };
            out.push((line_no + 1, format!("{prefix}{n}")));
            // The short range form `M8–15`: the second end takes the first end's letter.
            if chars.get(end) == Some(&'–')
                && let Some((m, _)) = number_at(&chars, end + 1)
            {
                out.push((line_no + 1, format!("{prefix}{m}")));
            }
        }
    }
    out
}

/// The ids a rule file defines: an id right after `**` (`**B4 Place a tile.**`, `**T2**`).
fn defined(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (pos, _) in text.match_indices("**") {
        let rest = &text[pos + 2..];
        let chars: Vec<char> = rest.chars().take(4).collect();
        if chars.first().is_some_and(|c| PREFIXES.contains(c))
            && let Some((n, _)) = number_at(&chars, 1)
        {
            out.push(format!("{}{n}", chars[0]));
        }
    }
    out
}

/// The ids whose rule text holds a **DECISION**. A rule's text runs from the line that defines
/// it to the next definition or heading.
fn with_decision(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with('#') {
            current = None;
        }
        if let Some(id) = defined(line).into_iter().next() {
            current = Some(id);
        }
        if line.contains("DECISION")
            && let Some(id) = &current
        {
            out.insert(id.clone());
        }
    }
    out
}

/// One failure line per cited id of `text` that `known` lacks: `path:line: id`.
fn unknown_ids(path: &str, text: &str, known: &BTreeSet<String>) -> Vec<String> {
    cited(text)
        .into_iter()
        .filter(|(_, id)| !known.contains(id))
        .map(|(line, id)| format!("{path}:{line}: {id} is not defined in docs/reference/"))
        .collect()
}

/// The rule ids in a scenario's file name (`b-b3-b4-b5-refused-commands.json` cites B3, B4, B5).
fn ids_in_scenario_name(name: &str) -> Vec<String> {
    name.trim_end_matches(".json")
        .split('-')
        .filter_map(|part| {
            let upper = part.to_ascii_uppercase();
            let chars: Vec<char> = upper.chars().collect();
            if chars.len() < 2 || !PREFIXES.contains(&chars[0]) {
                return None;
            }
            number_at(&chars, 1)
                .filter(|&(_, end)| end == chars.len())
                .map(|(n, _)| format!("{}{n}", chars[0]))
        })
        .collect()
}

/// The reference: every defined id with the file that defines it.
fn reference() -> BTreeMap<String, Vec<&'static str>> {
    let dir = root().join("docs/reference");
    let mut out: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    for (file, _) in RULE_FILES {
        for id in defined(&read(&dir.join(file))) {
            out.entry(id).or_default().push(file);
        }
    }
    out
}

fn known() -> BTreeSet<String> {
    reference().into_keys().collect()
}

fn walk(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                walk(&path, exts, out);
            }
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
        {
            out.push(path);
        }
    }
}

/// Every file whose text may cite a rule id: the crates' code, data, scenarios and READMEs, the
/// docs (the reference included: its cross-references count too), the protocol document and
/// schemas, and the top-level README and ARCHITECTURE.
fn citing_files() -> Vec<PathBuf> {
    let root = root();
    let mut files = Vec::new();
    walk(
        &root.join("crates"),
        &["rs", "json", "toml", "md"],
        &mut files,
    );
    walk(&root.join("docs"), &["md"], &mut files);
    walk(&root.join("proto"), &["md", "json"], &mut files);
    files.push(root.join("README.md"));
    files.push(root.join("ARCHITECTURE.md"));
    files.sort();
    files
}

fn relative(path: &Path) -> String {
    let root = root().canonicalize().expect("workspace root");
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    path.strip_prefix(&root)
        .unwrap_or(&path)
        .display()
        .to_string()
}

#[test]
fn every_cited_rule_id_is_defined_in_the_reference() {
    let known = known();
    let files = citing_files();
    let mut failures = Vec::new();
    let mut citations = 0;
    let mut per_file: BTreeMap<String, usize> = BTreeMap::new();
    for path in &files {
        let text = read(path);
        let rel = relative(path);
        let n = cited(&text).len();
        citations += n;
        per_file.insert(rel.clone(), n);
        failures.extend(unknown_ids(&rel, &text, &known));
        if rel.starts_with("crates/carcassonne-rules/scenarios/") {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            for id in ids_in_scenario_name(name) {
                if !known.contains(&id) {
                    failures.push(format!("{rel} (file name): {id} is not defined"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The scan must have seen the places that cite ids, or it proves nothing.
    for must in [
        "crates/carcassonne-rules/src/error.rs",
        "docs/rules.md",
        "proto/README.md",
        "docs/reference/messages.md",
    ] {
        assert!(
            per_file.get(must).copied().unwrap_or(0) > 0,
            "{must}: no rule id found; the scan missed it"
        );
    }
    assert!(citations > 300, "only {citations} citations found");
}

/// The docs point at `docs/reference/`, not at the team's copy outside the repository that it
/// replaced (`shared/rules/`, `shared/seeds/`).
#[test]
fn docs_cite_the_reference_in_the_repository() {
    let root = root();
    let mut files = Vec::new();
    walk(&root.join("docs"), &["md"], &mut files);
    files.extend(["README.md", "ARCHITECTURE.md", "proto/README.md"].map(|f| root.join(f)));
    let mut failures = Vec::new();
    for path in &files {
        for (n, line) in read(path).lines().enumerate() {
            if line.contains("shared/rules") || line.contains("shared/seeds") {
                failures.push(format!("{}:{}: {line}", relative(path), n + 1));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "cite docs/reference/ instead:\n{}",
        failures.join("\n")
    );
}

/// The values `RuleError::rule()` returns (the `rule` field of error responses) must be ids,
/// written exactly as the reference defines them.
#[test]
fn error_rule_values_are_defined_ids() {
    let known = known();
    let text = read(&root().join("crates/carcassonne-rules/src/error.rs"));
    let start = text.find("fn rule(").expect("error.rs has fn rule()");
    let body = &text[start..];
    let body = &body[..body.find("\n    }\n").expect("end of fn rule()")];
    let values: Vec<&str> = body.split('"').skip(1).step_by(2).collect();
    assert!(!values.is_empty(), "no string in fn rule()");
    let bad: Vec<&&str> = values.iter().filter(|v| !known.contains(**v)).collect();
    assert!(bad.is_empty(), "error.rs rule(): not defined ids: {bad:?}");
}

/// Every scenario's `rules` list holds ids written exactly as the reference defines them.
#[test]
fn scenario_rules_lists_hold_defined_ids() {
    let known = known();
    let mut files = Vec::new();
    walk(
        &root().join("crates/carcassonne-rules/scenarios"),
        &["json"],
        &mut files,
    );
    assert!(!files.is_empty(), "no scenarios found");
    let mut failures = Vec::new();
    for path in &files {
        let json: serde_json::Value =
            serde_json::from_str(&read(path)).expect("a scenario is JSON");
        let rules = json["rules"].as_array().cloned().unwrap_or_default();
        if rules.is_empty() {
            failures.push(format!("{}: no `rules` list", relative(path)));
        }
        for id in rules {
            if !id.as_str().is_some_and(|id| known.contains(id)) {
                failures.push(format!("{}: `rules` holds {id}", relative(path)));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every rule of Inns & Cathedrals (I1–I18) is cited by the `rules` list of at least one
/// scenario: each has a written-down game that shows how the server reads it.
#[test]
fn every_inns_cathedrals_rule_has_a_scenario() {
    let mut files = Vec::new();
    walk(
        &root().join("crates/carcassonne-rules/scenarios"),
        &["json"],
        &mut files,
    );
    let mut cited_ids = BTreeSet::new();
    for path in &files {
        let json: serde_json::Value =
            serde_json::from_str(&read(path)).expect("a scenario is JSON");
        for id in json["rules"].as_array().cloned().unwrap_or_default() {
            if let Some(id) = id.as_str() {
                cited_ids.insert(id.to_string());
            }
        }
    }
    let missing: Vec<String> = (1..=18)
        .map(|n| format!("I{n}"))
        .filter(|id| !cited_ids.contains(id))
        .collect();
    assert!(missing.is_empty(), "no scenario cites {missing:?}");
}

#[test]
fn the_reference_defines_each_id_once_in_its_file_and_keeps_every_id() {
    let reference = reference();
    let mut failures = Vec::new();
    for (id, files) in &reference {
        if files.len() > 1 {
            failures.push(format!("{id} is defined {} times: {files:?}", files.len()));
        }
        let letter = id.chars().next().unwrap_or(' ');
        for file in files {
            if !RULE_FILES.contains(&(file, letter)) {
                failures.push(format!("{id} is defined in {file}, not its letter's file"));
            }
        }
    }
    for (letter, kept) in KEPT {
        let highest = (1..=MAX_NUMBER)
            .filter(|n| reference.contains_key(&format!("{letter}{n}")))
            .max()
            .unwrap_or(0);
        for n in 1..=highest.max(kept) {
            if !reference.contains_key(&format!("{letter}{n}")) {
                failures.push(format!(
                    "{letter}{n} is not defined (ids are never dropped)"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The README of the reference lists its DECISIONs; the list must be the rules that hold one.
#[test]
fn the_readme_lists_exactly_the_decisions_of_the_rules() {
    let dir = root().join("docs/reference");
    let mut decisions = BTreeSet::new();
    for (file, _) in RULE_FILES {
        decisions.extend(with_decision(&read(&dir.join(file))));
    }
    let readme = read(&dir.join("README.md"));
    let marker = "The DECISIONs in this reference:";
    let start = readme.find(marker).expect("the README lists the DECISIONs");
    let list = &readme[start + marker.len()..];
    let list = &list[..list.find("\n\n").unwrap_or(list.len())];
    let listed: BTreeSet<String> = cited(list).into_iter().map(|(_, id)| id).collect();
    assert!(!decisions.is_empty(), "no DECISION found in the rule files");
    assert_eq!(listed, decisions, "README list vs rules marked DECISION");
}

/// `docs/rules.md` lists every DECISION the server applies: those of the applied modules are rows
/// of its decisions table; the others are at least cited (as not applied yet).
#[test]
fn rules_md_lists_every_decision() {
    let dir = root().join("docs/reference");
    let rules_md = read(&root().join("docs/rules.md"));
    let cited_there: BTreeSet<String> = cited(&rules_md).into_iter().map(|(_, id)| id).collect();
    let heading = "## Decisions of the rules reference";
    let table = &rules_md[rules_md.find(heading).expect("a decisions section")..];
    let table = &table[..table[heading.len()..]
        .find("\n## ")
        .map_or(table.len(), |end| heading.len() + end)];
    let mut failures = Vec::new();
    for (file, letter) in RULE_FILES {
        for id in with_decision(&read(&dir.join(file))) {
            let row = format!("\n| {id} |");
            if APPLIED.contains(&letter) {
                if !table.contains(&row) {
                    failures.push(format!(
                        "{id}: no row in the decisions table of docs/rules.md"
                    ));
                }
            } else if !cited_there.contains(&id) {
                failures.push(format!("{id}: not cited in docs/rules.md"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The B1 table of `docs/reference/base-game.md` is the base tile data: per letter the count,
/// the edges at rotation 0 and whether a coat of arms shows, against `crates/carcassonne-rules/data/base.toml`.
#[test]
fn the_b1_table_is_the_tile_data() {
    let doc = read(&root().join("docs/reference/base-game.md"));
    let mut table: BTreeMap<String, (u32, String, bool)> = BTreeMap::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | kind | count | N E S W | what is on it | coat of arms |
        if cells.len() != 7
            || cells[1].len() != 1
            || !cells[1].chars().all(|c| c.is_ascii_uppercase())
        {
            continue;
        }
        let count = cells[2].parse().expect("a count");
        table.insert(
            cells[1].to_string(),
            (count, cells[3].to_string(), cells[5] == "yes"),
        );
    }
    assert_eq!(table.len(), 24, "B1: 24 kinds in the table");

    let data: toml::Table = toml::from_str(&read(
        &root().join("crates/carcassonne-rules/data/base.toml"),
    ))
    .expect("base.toml");
    let mut from_data: BTreeMap<String, (u32, String, bool)> = BTreeMap::new();
    for tile in data["tile"].as_array().expect("[[tile]]") {
        let letter = tile["letter"].as_str().expect("letter").to_string();
        let count = tile["count"].as_integer().expect("count") as u32;
        let edges = tile["edges"].as_str().expect("edges").to_string();
        let coat = tile
            .get("city")
            .and_then(|c| c.as_array())
            .is_some_and(|cities| {
                cities
                    .iter()
                    .any(|c| c.get("coat").and_then(|v| v.as_bool()) == Some(true))
            });
        let entry = from_data
            .entry(letter.clone())
            .or_insert((0, edges.clone(), coat));
        entry.0 += count;
        assert_eq!(entry.1, edges, "B1: the copies of {letter} differ in edges");
        assert_eq!(entry.2, coat, "B1: the copies of {letter} differ in coat");
    }
    assert_eq!(table, from_data, "B1 table (left) vs base.toml (right)");
    let total: u32 = table.values().map(|(n, _, _)| n).sum();
    assert_eq!(total, 72, "B1: 72 tiles");
}

// The collector itself. Ids that must not exist are built with `concat!` so that this file does
// not cite them.

#[test]
fn collector_finds_ids_lists_and_both_ends_of_ranges() {
    let text = "B6 scores; see B4–B7, (T6, T10) and M8–15.\n`P3`: **M5** and T2's rule";
    let ids: Vec<String> = cited(text).into_iter().map(|(_, id)| id).collect();
    assert_eq!(
        ids,
        ["B6", "B4", "B7", "T6", "T10", "M8", "M15", "P3", "M5", "T2"]
    );
    assert_eq!(cited("a\nb T9")[0].0, 2, "line numbers count from 1");
}

#[test]
fn collector_ignores_lookalikes() {
    let text = "0xB1 #B1B2C3 P2P B64 P404 HTTP 404 DB1 B04 T1a T_1 b6 B100 base64 M1x _P3";
    assert_eq!(cited(text), Vec::<(usize, String)>::new());
}

#[test]
fn a_bogus_id_fails_naming_file_line_and_id() {
    let known: BTreeSet<String> = ["B4", "T4"].map(String::from).into();
    let bogus = concat!("B", "12");
    let text = format!("refused by B4\nsee {bogus} and T4");
    let failures = unknown_ids("docs/x.md", &text, &known);
    assert_eq!(
        failures,
        [format!(
            "docs/x.md:2: {bogus} is not defined in docs/reference/"
        )]
    );
    // The same through the real reference: an id past the last rule of a letter is unknown.
    let past = concat!("T", "11");
    assert_eq!(unknown_ids("a.rs", past, &self::known()).len(), 1);
}

#[test]
fn definitions_decisions_and_scenario_names_are_read() {
    let text = "# T\n- **T1 Tiles.** x\n  **DECISION:** y\n- **T2** cites T1\n## h\nDECISION";
    assert_eq!(defined(text), ["T1", "T2"]);
    assert_eq!(with_decision(text), BTreeSet::from(["T1".to_string()]));
    assert_eq!(
        ids_in_scenario_name("b-b3-b4-b5-refused-commands.json"),
        ["B3", "B4", "B5"]
    );
    assert_eq!(
        ids_in_scenario_name("t-t6-t9-seed-examples.json"),
        ["T6", "T9"]
    );
}

/// Traders & Builders: every rule R1–R20 is cited by a scenario (its file name or `rules` list),
/// so each has at least one case written out.
#[test]
fn every_traders_builders_rule_has_a_scenario() {
    let mut files = Vec::new();
    walk(
        &root().join("crates/carcassonne-rules/scenarios"),
        &["json"],
        &mut files,
    );
    let mut seen = BTreeSet::new();
    for path in &files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        seen.extend(ids_in_scenario_name(name));
        let json: serde_json::Value =
            serde_json::from_str(&read(path)).expect("a scenario is JSON");
        for id in json["rules"].as_array().cloned().unwrap_or_default() {
            seen.extend(id.as_str().map(str::to_string));
        }
    }
    let missing: Vec<String> = (1..=20)
        .map(|n| format!("R{n}"))
        .filter(|id| !seen.contains(id))
        .collect();
    assert!(missing.is_empty(), "no scenario cites {missing:?}");
}
