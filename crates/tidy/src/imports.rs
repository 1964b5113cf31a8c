//! Which module of a crate names which, and the circles among them.
//!
//! A module names another when its code holds a path that starts with `crate::`, `super::` or
//! `self::` (in a `use` or anywhere else) and leads into that module. A path into the module's
//! own ancestors or descendants is containment, not an arrow between rooms: it is left out.
//! Unit tests are left out (an inline `#[cfg(test)] mod .. { .. }` and a `tests.rs` module):
//! a test names whatever it checks, and is no room of the house.

use crate::modules::{ModPath, Tree, display};
use std::collections::{BTreeMap, BTreeSet};

/// Module → the modules it names (neither its ancestors nor its descendants).
pub type Graph = BTreeMap<ModPath, BTreeSet<ModPath>>;

/// The import graph of a crate's tree.
pub fn graph(tree: &Tree) -> Graph {
    let mut g = Graph::new();
    for (module, file) in &tree.files {
        if module.last().is_some_and(|m| m == "tests") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let code = without_test_modules(&crate::code_only(&text));
        let targets = g.entry(module.clone()).or_default();
        for path in paths(&code) {
            let Some(abs) = absolute(module, &path) else {
                continue;
            };
            let target = tree.resolve(&abs);
            if !target.starts_with(module) && !module.starts_with(&target) {
                targets.insert(target);
            }
        }
    }
    g
}

/// The circles of a graph: each strongly connected group of two or more modules, as
/// `a -> b -> a` text.
pub fn circles(g: &Graph) -> Vec<String> {
    let nodes: Vec<&ModPath> = g.keys().collect();
    let index: BTreeMap<&ModPath, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let edges: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| g[*n].iter().filter_map(|t| index.get(t).copied()).collect())
        .collect();
    strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let names: Vec<String> = c.iter().map(|&i| display(nodes[i])).collect();
            format!("{} (each reaches the others)", names.join(", "))
        })
        .collect()
}

/// Tarjan's algorithm, iterative.
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = edges.len();
    let (mut index, mut low) = (vec![usize::MAX; n], vec![0; n]);
    let (mut on_stack, mut stack, mut out) = (vec![false; n], Vec::new(), Vec::new());
    let mut next = 0;
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = edges[v].get(*i) {
                *i += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut group = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    group.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(group);
            }
        }
    }
    out
}

/// The code without its inline test modules (`#[cfg(test)]` then `mod name { .. }`).
fn without_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        let is_inline_mod = item.starts_with("mod ")
            && item
                .find('{')
                .is_some_and(|b| item.find(';').is_none_or(|s| b < s));
        if !is_inline_mod {
            out.push_str("#[cfg(test)]");
            rest = after;
            continue;
        }
        let open = after.find('{').unwrap_or(after.len());
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// `path` (segments starting with `crate`, `super` or `self`) from `module`, as a path from
/// the crate root; `None` for any other path.
fn absolute(module: &[String], path: &[String]) -> Option<ModPath> {
    let (first, rest) = path.split_first()?;
    let mut base: ModPath = match first.as_str() {
        "crate" => Vec::new(),
        "self" => module.to_vec(),
        "super" => module[..module.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let mut rest = rest;
    while let Some((s, r)) = rest.split_first() {
        if s != "super" {
            break;
        }
        base.pop();
        rest = r;
    }
    base.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(base)
}

/// Every path in the code that starts with `crate`, `super` or `self`: the `use` trees
/// expanded, and the paths written in place.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    let mut outside = String::new();
    while let Some(at) = find_word(rest, "use") {
        outside.push_str(&rest[..at]);
        let after = &rest[at + 3..];
        let end = after.find(';').unwrap_or(after.len());
        expand(&[], &after[..end], &mut out);
        rest = after.get(end + 1..).unwrap_or("");
    }
    outside.push_str(rest);
    out.extend(inline_paths(&outside));
    out.retain(|p| {
        p.first()
            .is_some_and(|s| s == "crate" || s == "super" || s == "self")
    });
    out
}

/// The start of `word` standing alone (not part of an identifier).
fn find_word(s: &str, word: &str) -> Option<usize> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(i) = s[from..].find(word).map(|i| i + from) {
        let before = s[..i].chars().next_back();
        let after = s[i + word.len()..].chars().next();
        if !before.is_some_and(ident) && !after.is_some_and(ident) {
            return Some(i);
        }
        from = i + word.len();
    }
    None
}

/// Expands a `use` tree (`a::{b, c::D as E}`) into its paths, each after `prefix`.
fn expand(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = segments(&tree[..open]);
        let close = tree.rfind('}').unwrap_or(tree.len());
        let mut base = prefix.to_vec();
        base.extend(head);
        for part in split_top(&tree[open + 1..close]) {
            expand(&base, part, out);
        }
    } else {
        let tree = tree.split(" as ").next().unwrap_or("");
        let mut path = prefix.to_vec();
        path.extend(segments(tree));
        if !path.is_empty() {
            out.push(path);
        }
    }
}

fn segments(s: &str) -> Vec<String> {
    s.split("::")
        .map(str::trim)
        .filter(|p| !p.is_empty() && *p != "*")
        .map(str::to_string)
        .collect()
}

/// Splits on the commas outside braces.
fn split_top(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Paths written in place: `crate::a::b`, `super::x`, `self::y`.
fn inline_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for root in ["crate", "super", "self"] {
        let mut rest = code;
        while let Some(i) = find_word(rest, root) {
            let tail = &rest[i..];
            let len = tail
                .char_indices()
                .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(tail.len(), |(j, _)| j);
            let path = segments(&tail[..len]);
            if path.len() > 1 {
                out.push(path);
            }
            rest = &rest[i + root.len()..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn use_trees_and_inline_paths_are_found() {
        let code = "use crate::{a::{B, c::D as E}, f};\nuse super::g::H;\nfn x() { crate::k::l(); self::m::N; }";
        let found = paths(code);
        for want in [
            s(&["crate", "a", "B"]),
            s(&["crate", "a", "c", "D"]),
            s(&["crate", "f"]),
            s(&["super", "g", "H"]),
            s(&["crate", "k", "l"]),
            s(&["self", "m", "N"]),
        ] {
            assert!(found.contains(&want), "{want:?} in {found:?}");
        }
        assert!(!found.iter().any(|p| p.contains(&"E".to_string())));
    }

    #[test]
    fn paths_resolve_from_the_module() {
        let m = s(&["actor", "commands"]);
        assert_eq!(
            absolute(&m, &s(&["super", "replay", "x"])),
            Some(s(&["actor", "replay", "x"]))
        );
        assert_eq!(absolute(&m, &s(&["crate", "wire"])), Some(s(&["wire"])));
        assert_eq!(
            absolute(&m, &s(&["self", "t"])),
            Some(s(&["actor", "commands", "t"]))
        );
        assert_eq!(absolute(&m, &s(&["tokio", "x"])), None);
    }

    #[test]
    fn a_circle_is_found_and_a_chain_is_not() {
        let mut g = Graph::new();
        let (a, b, c) = (s(&["a"]), s(&["b"]), s(&["c"]));
        g.entry(a.clone()).or_default().insert(b.clone());
        g.entry(b.clone()).or_default().insert(c.clone());
        g.entry(c.clone()).or_default();
        assert!(circles(&g).is_empty());
        g.entry(c.clone()).or_default().insert(a.clone());
        let found = circles(&g);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains('a') && found[0].contains('b') && found[0].contains('c'));
    }

    #[test]
    fn inline_test_modules_are_left_out() {
        let code = "use crate::a::B;\n#[cfg(test)]\nmod tests {\n use crate::c::D;\n fn f() { if x { crate::e::f(); } }\n}\n#[cfg(test)]\nmod witness;\nfn g() { crate::h::i(); }";
        let found = paths(&without_test_modules(code));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found.contains(&s(&["crate", "a", "B"])));
        assert!(found.contains(&s(&["crate", "h", "i"])));
    }

    #[test]
    fn comments_and_strings_are_not_code() {
        let code = crate::code_only(
            "// use crate::x;\nlet s = \"crate::y::z\"; /* crate::w */ crate::v::u();",
        );
        let found = paths(&code);
        assert_eq!(found, vec![s(&["crate", "v", "u"])]);
    }
}
