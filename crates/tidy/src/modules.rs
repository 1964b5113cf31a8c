//! A crate's module tree as its files give it. `src/lib.rs` and `src/main.rs` are the root;
//! `a.rs` and `a/mod.rs` are module `a`; `a/b.rs` is `a::b`. Binaries under `src/bin/` are
//! crates of their own and are left out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A module's path from the crate root (`[]` is the root itself).
pub type ModPath = Vec<String>;

/// The modules of one crate and the file of each.
#[derive(Debug, Default)]
pub struct Tree {
    pub files: BTreeMap<ModPath, PathBuf>,
}

impl Tree {
    /// Reads the files under `src` (of one crate).
    pub fn of(src: &Path) -> Tree {
        let mut tree = Tree::default();
        for file in crate::rust_files(src) {
            let Ok(rel) = file.strip_prefix(src) else {
                continue;
            };
            let parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if parts.first().is_some_and(|p| p == "bin") {
                continue;
            }
            if let Some(path) = module_path(&parts) {
                tree.files.insert(path, file);
            }
        }
        tree
    }

    pub fn contains(&self, path: &[String]) -> bool {
        self.files.contains_key(path)
    }

    /// The deepest module of the tree that `path` starts with.
    pub fn resolve(&self, path: &[String]) -> ModPath {
        (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| self.contains(p))
            .unwrap_or_default()
    }
}

/// `["a", "b.rs"]` → `a::b`; `["a", "mod.rs"]` → `a`; `["lib.rs"]` → the root.
fn module_path(parts: &[String]) -> Option<ModPath> {
    let (last, dirs) = parts.split_last()?;
    let stem = last.strip_suffix(".rs")?;
    let mut path: ModPath = dirs.to_vec();
    match stem {
        "mod" => {}
        "lib" | "main" if dirs.is_empty() => {}
        _ => path.push(stem.to_string()),
    }
    Some(path)
}

/// A module path as written in Rust (`a::b`), `crate` for the root.
pub fn display(path: &[String]) -> String {
    if path.is_empty() {
        "crate".into()
    } else {
        path.join("::")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn files_name_their_modules() {
        assert_eq!(module_path(&p(&["lib.rs"])), Some(p(&[])));
        assert_eq!(module_path(&p(&["a.rs"])), Some(p(&["a"])));
        assert_eq!(module_path(&p(&["a", "mod.rs"])), Some(p(&["a"])));
        assert_eq!(module_path(&p(&["a", "b.rs"])), Some(p(&["a", "b"])));
        assert_eq!(module_path(&p(&["a", "main.rs"])), Some(p(&["a", "main"])));
        assert_eq!(module_path(&p(&["data.toml"])), None);
    }
}
