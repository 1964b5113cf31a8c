//! The repository's own rules, checked on its text: the code map is complete and names only
//! files that exist, no crate has an import circle, no source file holds two jobs' worth of
//! lines, and comments describe the present.

use std::path::{Path, PathBuf};
use tidy::imports::{circles, graph};
use tidy::modules::Tree;
use tidy::{crates, rust_files, workspace_root};

/// Spelled apart so that this file does not match its own check.
const SESSION: &str = concat!("ses", "sion");

/// Past this a file usually holds two jobs (see the developers' guide).
const MAX_LINES: usize = 800;

fn architecture() -> String {
    std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

fn rel(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Every module of every crate (but the `tests` modules of unit tests) is named in the code
/// map: by its path under `src/` (`conn/io.rs`), a folder module also as `conn/`.
#[test]
fn architecture_md_names_every_module() {
    let doc = architecture();
    let mut missing = Vec::new();
    for krate in crates(&workspace_root()) {
        let src = krate.join("src");
        for (module, file) in Tree::of(&src).files {
            if module.is_empty() || module.last().is_some_and(|m| m == "tests") {
                continue;
            }
            let path = rel(&file, &src);
            let folder = path.strip_suffix("/mod.rs").map(|f| format!("{f}/"));
            let named = doc.contains(&path) || folder.is_some_and(|f| doc.contains(&f));
            if !named {
                missing.push(format!("{}: {path}", rel(&krate, &workspace_root())));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's code map does not name these modules (say what each is for and \
         the invariant it keeps):\n{}",
        missing.join("\n")
    );
}

/// Every `.rs` file the code map names exists: a renamed or removed file leaves no stale
/// entry behind.
#[test]
fn architecture_md_names_only_files_that_exist() {
    let root = workspace_root();
    let files: Vec<String> = rust_files(&root.join("crates"))
        .iter()
        .map(|f| rel(f, &root))
        .collect();
    let doc = architecture();
    let mut stale = Vec::new();
    for word in doc.split(|c: char| c.is_whitespace() || "`()[],;:*".contains(c)) {
        let Some(name) = word
            .strip_suffix(".rs")
            .filter(|stem| !stem.is_empty())
            .map(|_| word)
        else {
            continue;
        };
        if name.contains('{') || name.contains('}') {
            continue;
        }
        let exists = files
            .iter()
            .any(|f| f == name || f.ends_with(&format!("/{name}")));
        if !exists {
            stale.push(name.to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "ARCHITECTURE.md names files that do not exist: {stale:?}"
    );
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut found = Vec::new();
    for krate in crates(&workspace_root()) {
        let tree = Tree::of(&krate.join("src"));
        for c in circles(&graph(&tree)) {
            found.push(format!("{}: {c}", rel(&krate, &workspace_root())));
        }
    }
    assert!(
        found.is_empty(),
        "modules that import each other in a circle (move the shared item down, to the module \
         both can name):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_source_file_is_over_800_lines() {
    let root = workspace_root();
    let mut big = Vec::new();
    for krate in crates(&root) {
        for file in rust_files(&krate.join("src")) {
            let lines = std::fs::read_to_string(&file)
                .map(|t| t.lines().count())
                .unwrap_or(0);
            if lines > MAX_LINES {
                big.push(format!("{} ({lines} lines)", rel(&file, &root)));
            }
        }
    }
    assert!(
        big.is_empty(),
        "source files over {MAX_LINES} lines usually hold two jobs; split them:\n{}",
        big.join("\n")
    );
}

/// Comments say what the code does and why; `git log` says where it came from.
#[test]
fn code_cites_no_issue_numbers_or_sessions_of_work() {
    let root = workspace_root();
    let mut files: Vec<PathBuf> = rust_files(&root.join("crates"));
    files.extend(
        rust_files(&root.join("web"))
            .into_iter()
            .chain(js_files(&root.join("web").join("js"))),
    );
    // "first" is left out: an account's first session is a session of the product.
    let ordinals = [
        "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
    ];
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let issue = lower.match_indices("issue ").any(|(i, m)| {
                lower[i + m.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_digit())
            });
            let session = ordinals
                .iter()
                .any(|o| lower.contains(&format!("{o} {SESSION}")))
                || lower.contains(&format!("in this {SESSION}"))
                || lower.contains(&format!("{SESSION}s of work"));
            if issue || session {
                found.push(format!("{}:{}: {}", rel(&file, &root), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "say what the code does and why instead:\n{}",
        found.join("\n")
    );
}

fn js_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "js"))
        .collect();
    out.sort();
    out
}

/// What the crates compile into themselves (`include_str!`, `include_bytes!`, `sqlx::migrate!`)
/// must be in the container's build stage: the Dockerfile copies it and `.dockerignore` keeps it.
#[test]
fn dockerfile_copies_what_the_crates_embed() {
    let root = workspace_root();
    let dockerfile = std::fs::read_to_string(root.join("Dockerfile")).expect("Dockerfile");
    let copied: Vec<String> = dockerfile
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("COPY ") && !l.contains("--from"))
        .flat_map(|l| {
            let words: Vec<&str> = l.split_whitespace().skip(1).collect();
            let sources = words.len().saturating_sub(1);
            words[..sources]
                .iter()
                .map(|w| w.trim_end_matches('/').to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let ignored: Vec<String> = std::fs::read_to_string(root.join(".dockerignore"))
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.contains('*'))
        .map(|l| l.trim_end_matches('/').to_string())
        .collect();
    let under = |path: &str, dir: &str| path == dir || path.starts_with(&format!("{dir}/"));
    let embedded = embedded_paths(&root);
    assert!(
        embedded.iter().any(|p| p.starts_with("web")),
        "the scan finds the embedded browser client: {embedded:?}"
    );
    let mut missing = Vec::new();
    for path in &embedded {
        if !copied.iter().any(|c| under(path, c)) {
            missing.push(format!("{path}: no COPY in the Dockerfile's build stage"));
        }
        if let Some(i) = ignored.iter().find(|i| under(path, i)) {
            missing.push(format!("{path}: left out by .dockerignore ({i})"));
        }
    }
    assert!(
        missing.is_empty(),
        "the image would not build:\n{}",
        missing.join("\n")
    );
}

/// The repository paths the crates' sources embed at compile time.
fn embedded_paths(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for krate in crates(root) {
        for file in rust_files(&krate.join("src")) {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (mac, base) in [
                    ("include_str!(", file.parent()),
                    ("include_bytes!(", file.parent()),
                    ("migrate!(", Some(krate.as_path())),
                ] {
                    let Some(at) = line.find(mac) else { continue };
                    let rest = &line[at + mac.len()..];
                    let Some(literal) = rest.split('"').nth(1) else {
                        continue;
                    };
                    if let Some(base) = base {
                        out.push(normalize(&base.join(literal), root));
                    }
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `a/b/../c` → `a/c`, relative to `root`.
fn normalize(path: &Path, root: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in rel(path, root).split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c.to_string()),
        }
    }
    parts.join("/")
}
