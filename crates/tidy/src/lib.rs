//! Reads the workspace's Rust sources as text (no compiler, no dependencies) to check what the
//! compiler does not: that `ARCHITECTURE.md` names every module, that no crate's modules import
//! each other in a circle, that files stay small, and that comments say what the code does
//! rather than where it came from. The checks themselves are the tests in `tests/tidy.rs`.
//!
//! - [`modules`]: a crate's module tree, from its files (`a.rs`, `a/mod.rs`, `a/b.rs`).
//! - [`imports`]: which module names which, and the circles among them.

pub mod imports;
pub mod modules;

use std::path::{Path, PathBuf};

/// The workspace's root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The workspace's crates: each folder under `crates/` with a `src/`.
pub fn crates(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    out.sort();
    out
}

/// Every `.rs` file under `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The text without comments, string and char literals (blanked), so that a path in a doc
/// comment or a string is not taken for an import.
pub fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if rest.starts_with(b"r#\"") || rest.starts_with(b"r\"") {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            i += 2 + hashes;
            while i < b.len() && !b[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && is_char_literal(rest) {
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            let len = utf8_len(b[i]);
            out.push_str(&text[i..i + len]);
            i += len;
        }
    }
    out
}

/// A `'` that opens a char literal rather than a lifetime: `'x'`, `'\n'`, `'\u{..}'`.
fn is_char_literal(rest: &[u8]) -> bool {
    match rest.get(1) {
        Some(b'\\') => true,
        Some(&c) => {
            let len = utf8_len(c);
            rest.get(1 + len) == Some(&b'\'')
        }
        None => false,
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}
