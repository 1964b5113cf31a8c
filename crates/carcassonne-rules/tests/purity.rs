//! The rules crate is pure (ARCHITECTURE.md, invariant 1): no I/O, no async, no clock, no global
//! randomness, so that a match is a function of its setup and its commands (B10). This test reads
//! the crate's source and its manifest and fails, naming file, line and what was found, when that
//! stops being true:
//!
//! - no code in `crates/carcassonne-rules/src` names the file system, the network, the environment, processes
//!   or threads (`std::fs`, `std::net`, `std::env`, `std::process`, `std::thread`), the clock
//!   (`std::time`, `SystemTime`, `Instant`), async (`tokio`, `async`, `.await`) or randomness
//!   from outside the seed (`thread_rng`, `rand::random`, `OsRng`, `getrandom`, `from_os_rng`,
//!   `from_entropy`). Comments and string literals are not code and are not read; `env!` (a
//!   compile-time constant) is not `std::env`.
//! - `[dependencies]` of `crates/carcassonne-rules/Cargo.toml` holds only the allowed crates.
//!
//! The one allowed exception is `src/bin/scenario.rs`: the scenario runner is a command-line tool
//! around the library that reads the scenario files named on its command line (`std::env`,
//! `std::fs`) and sets its exit code (`std::process`). It is a separate binary; nothing in the
//! library calls it.

use std::path::{Path, PathBuf};

/// Paths that pure code must not name, and why. A path matches at a word boundary, so
/// `std::thread_local` is not `std::thread`.
const FORBIDDEN_PATHS: [(&str, &str); 8] = [
    ("std::fs", "file I/O"),
    ("std::net", "network I/O"),
    ("std::env", "reads the environment"),
    ("std::process", "processes"),
    ("std::thread", "threads"),
    ("std::time", "the clock"),
    ("rand::random", "global randomness"),
    ("tokio", "async runtime"),
];

/// Words that pure code must not use, and why.
const FORBIDDEN_WORDS: [(&str, &str); 9] = [
    ("SystemTime", "the clock"),
    ("Instant", "the clock"),
    ("async", "async"),
    ("await", "async"),
    ("thread_rng", "global randomness"),
    ("OsRng", "global randomness"),
    ("getrandom", "global randomness"),
    ("from_os_rng", "global randomness"),
    ("from_entropy", "global randomness"),
];

/// The only source file allowed to do I/O (see the module comment).
const EXCEPTION: &str = "bin/scenario.rs";

/// The crates `[dependencies]` may name, and whether each must be optional.
const ALLOWED_DEPENDENCIES: [(&str, bool); 10] = [
    ("serde", false),
    ("serde_json", false),
    ("thiserror", false),
    ("smallvec", false),
    // The view's inline strings (`carcassonne_rules::Key`): pure data structure, no I/O.
    ("compact_str", false),
    // Integers to decimal text without the formatting machinery (serde_json's own): pure.
    ("itoa", false),
    ("toml", false),
    ("rand_chacha", false),
    ("rand_core", false),
    // Only for the `schema` feature, which the protocol crate switches on to generate `proto/`.
    ("schemars", true),
];

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `source` with comments and the contents of string and char literals replaced by spaces, line
/// breaks kept (so line numbers stay right).
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !is_word(chars[i - 1]))
        {
            // A raw string r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('"');
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                out.push(blank(chars[j]));
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if let Some(&ch) = chars.get(i) {
                    out.push(blank(ch));
                }
                i += 1;
            }
            out.push('"');
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            // An escaped char literal: '\n', '\'', '\u{…}'.
            let end = (i + 3..chars.len())
                .find(|&j| chars[j] == '\'')
                .unwrap_or(chars.len() - 1);
            out.push_str(&" ".repeat(end + 1 - i));
            i = end + 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            out.push_str("   ");
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether `needle` occurs in `line` at byte `at` with word boundaries on both sides.
fn at_boundaries(line: &str, at: usize, needle: &str) -> bool {
    let before = line[..at].chars().next_back();
    let after = line[at + needle.len()..].chars().next();
    !before.is_some_and(is_word) && !after.is_some_and(is_word)
}

/// `std::{fs, time::Instant}` names `std::fs` and `std::time::Instant`: the paths inside the
/// braces of a grouped `std::` import, each written out with `std::` in front.
fn grouped_std_paths(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in line.match_indices("std::{") {
        let group = &line[at + "std::{".len()..];
        let mut depth = 0;
        let mut item = String::new();
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(format!("std::{}", item.trim()));
                    item.clear();
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
        if !item.trim().is_empty() {
            out.push(format!("std::{}", item.trim()));
        }
    }
    out
}

/// Every impure use in `source`, as `path:line: what (why)`.
fn impure_uses(path: &str, source: &str) -> Vec<String> {
    let code = code_only(source);
    // Join `use std::{` groups that rustfmt spreads over several lines, keeping line numbers by
    // reporting at the line where the group starts.
    let mut out = Vec::new();
    let lines: Vec<&str> = code.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        let mut found: Vec<(&str, &str)> = Vec::new();
        for (needle, why) in FORBIDDEN_PATHS.iter().chain(FORBIDDEN_WORDS.iter()) {
            if line
                .match_indices(needle)
                .any(|(at, _)| at_boundaries(line, at, needle))
            {
                found.push((needle, why));
            }
        }
        if line.contains("std::{") {
            let mut group = line.to_string();
            let mut k = n + 1;
            while group.matches('{').count() > group.matches('}').count() && k < lines.len() {
                group.push_str(lines[k]);
                k += 1;
            }
            for p in grouped_std_paths(&group) {
                for (needle, why) in FORBIDDEN_PATHS {
                    if p.starts_with(needle) && at_boundaries(&p, 0, needle) {
                        found.push((needle, why));
                    }
                }
            }
        }
        found.dedup();
        for (needle, why) in found {
            out.push(format!("{path}:{}: `{needle}` ({why})", n + 1));
        }
    }
    out
}

/// Every dependency of the manifest's `[dependencies]` (and `[target.*.dependencies]`) that is
/// not allowed, or that must be optional and is not.
fn dependency_problems(manifest: &str) -> Vec<String> {
    let doc: toml::Table = match toml::from_str(manifest) {
        Ok(doc) => doc,
        Err(e) => return vec![format!("Cargo.toml does not parse: {e}")],
    };
    let mut tables = Vec::new();
    if let Some(deps) = doc.get("dependencies").and_then(|d| d.as_table()) {
        tables.push(("dependencies".to_string(), deps));
    }
    if let Some(targets) = doc.get("target").and_then(|t| t.as_table()) {
        for (cfg, target) in targets {
            if let Some(deps) = target.get("dependencies").and_then(|d| d.as_table()) {
                tables.push((format!("target.{cfg}.dependencies"), deps));
            }
        }
    }
    let mut out = Vec::new();
    for (section, deps) in tables {
        for (name, spec) in deps {
            let optional = spec
                .get("optional")
                .and_then(|o| o.as_bool())
                .unwrap_or(false);
            match ALLOWED_DEPENDENCIES
                .iter()
                .find(|(n, _)| *n == name.as_str())
            {
                None => out.push(format!("[{section}] {name} is not on the allowlist")),
                Some((_, true)) if !optional => {
                    out.push(format!("[{section}] {name} must be optional"))
                }
                Some(_) => {}
            }
        }
    }
    out.sort();
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_rules_source_does_no_io_no_async_no_clock_no_global_randomness() {
    let src = crate_dir().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut failures = Vec::new();
    let mut scanned = 0;
    for path in &files {
        let rel = path.strip_prefix(&src).unwrap_or(path);
        if rel == Path::new(EXCEPTION) {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("readable source");
        failures.extend(impure_uses(
            &format!("crates/carcassonne-rules/src/{}", rel.display()),
            &text,
        ));
        scanned += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        files.iter().any(|p| p.ends_with("game/mod.rs")) && scanned >= 10,
        "the scan saw only {scanned} files"
    );
    assert!(
        src.join(EXCEPTION).exists(),
        "the exception {EXCEPTION} is gone: remove it from this test"
    );
}

#[test]
fn the_rules_crate_depends_only_on_the_allowlist() {
    let manifest = std::fs::read_to_string(crate_dir().join("Cargo.toml")).expect("Cargo.toml");
    let problems = dependency_problems(&manifest);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        manifest.contains("[dependencies]"),
        "no [dependencies] section read"
    );
}

// The scanners themselves.

#[test]
fn scanner_finds_impure_uses() {
    let source = r#"use std::fs;
fn now() -> u64 { std::time::SystemTime::now(); 0 }
use std::{collections::BTreeMap, env};
use std::{
    fmt,
    net::TcpStream,
};
async fn f() { g().await }
fn r() { let x = rand::thread_rng(); let y: u8 = rand::random(); }
fn c() { let t = Instant::now(); tokio::spawn(h()); }
"#;
    let found = impure_uses("x.rs", source);
    let expected = [
        "x.rs:1: `std::fs` (file I/O)",
        "x.rs:2: `std::time` (the clock)",
        "x.rs:2: `SystemTime` (the clock)",
        "x.rs:3: `std::env` (reads the environment)",
        "x.rs:4: `std::net` (network I/O)",
        "x.rs:8: `async` (async)",
        "x.rs:8: `await` (async)",
        "x.rs:9: `rand::random` (global randomness)",
        "x.rs:9: `thread_rng` (global randomness)",
        "x.rs:10: `tokio` (async runtime)",
        "x.rs:10: `Instant` (the clock)",
    ];
    assert_eq!(found, expected);
}

#[test]
fn scanner_ignores_comments_strings_and_lookalikes() {
    let source = r##"//! Pure: no std::fs, no tokio, no Instant.
/* a block comment naming std::time /* nested: SystemTime */ still a comment: async */
const VERSION: &str = env!("CARGO_PKG_VERSION");
fn f() -> &'static str { let q = '"'; let e = '\''; "std::fs and tokio in a string" }
fn g() -> &'static str { r#"raw "std::env" string"# }
thread_local! { static X: u8 = 0; }
fn instantiate(asynchronous: bool, my_tokio_like: u8) {}
use std::{collections::HashMap, fmt::Write};
"##;
    assert_eq!(impure_uses("y.rs", source), Vec::<String>::new());
}

#[test]
fn dependency_check_refuses_crates_off_the_allowlist() {
    let manifest = r#"
[package]
name = "rules"

[dependencies]
serde = { workspace = true }
tokio = "1"
schemars = { workspace = true }

[target.'cfg(unix)'.dependencies]
getrandom = "0.3"

[dev-dependencies]
proptest = "1"
"#;
    assert_eq!(
        dependency_problems(manifest),
        [
            "[dependencies] schemars must be optional",
            "[dependencies] tokio is not on the allowlist",
            "[target.cfg(unix).dependencies] getrandom is not on the allowlist",
        ]
    );
    let fine = "[dependencies]\nserde = \"1\"\nschemars = { version = \"1\", optional = true }\n";
    assert_eq!(dependency_problems(fine), Vec::<String>::new());
}
