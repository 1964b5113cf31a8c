//! The browser client's checks that need no browser: its message types are generated from
//! `proto/*.schema.json` (and fail here when they drift), every file of `web/` is embedded in the
//! binary, the JSDoc types check with `tsc` when it is installed, and `GET /api/tiles` carries
//! the rules crate's whole catalogue.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// A TypeScript type for a JSON Schema (the subset schemars emits).
fn ts(schema: &Value) -> String {
    let Some(obj) = schema.as_object() else {
        return if schema == &Value::Bool(true) {
            "unknown".into()
        } else {
            "never".into()
        };
    };
    let mut parts: Vec<String> = Vec::new();
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        parts.push(r.rsplit('/').next().unwrap_or(r).to_string());
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(list) = obj.get(key).and_then(Value::as_array) {
            let alts: Vec<String> = list.iter().map(ts).collect();
            parts.push(format!("({})", alts.join(" | ")));
        }
    }
    if let Some(c) = obj.get("const") {
        return c.to_string();
    }
    if let Some(e) = obj.get("enum").and_then(Value::as_array) {
        let alts: Vec<String> = e.iter().map(Value::to_string).collect();
        return alts.join(" | ");
    }
    let types: Vec<&str> = match obj.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if !types.is_empty() {
        let alts: Vec<String> = types
            .iter()
            .map(|t| match *t {
                "string" => "string".to_string(),
                "integer" | "number" => "number".to_string(),
                "boolean" => "boolean".to_string(),
                "null" => "null".to_string(),
                "array" => format!(
                    "{}[]",
                    wrap(&obj.get("items").map(ts).unwrap_or("unknown".into()))
                ),
                "object" => object(obj),
                other => panic!("schema type {other} unknown to the generator"),
            })
            .collect();
        parts.push(alts.join(" | "));
    }
    match parts.len() {
        0 => "unknown".into(),
        _ => parts.join(" & "),
    }
}

fn wrap(t: &str) -> String {
    if t.contains(' ') {
        format!("({t})")
    } else {
        t.to_string()
    }
}

fn doc(obj: &serde_json::Map<String, Value>, indent: &str) -> String {
    match obj.get("description").and_then(Value::as_str) {
        Some(d) => format!(
            "{indent}/** {} */\n",
            d.replace("*/", "* /").replace('\n', " ")
        ),
        None => String::new(),
    }
}

fn object(obj: &serde_json::Map<String, Value>) -> String {
    let required: Vec<&str> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = String::from("{\n");
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        // `type` first: it names the variant.
        let mut keys: Vec<&String> = props.keys().collect();
        keys.sort_by_key(|k| (k.as_str() != "type", k.as_str()));
        for k in keys {
            let p = &props[k];
            if let Some(po) = p.as_object() {
                out.push_str(&doc(po, "  "));
            }
            let opt = if required.contains(&k.as_str()) {
                ""
            } else {
                "?"
            };
            out.push_str(&format!("  {k}{opt}: {};\n", ts(p).replace('\n', "\n  ")));
        }
    }
    if let Some(extra) = obj.get("additionalProperties")
        && extra.is_object()
    {
        out.push_str(&format!("  [key: string]: {};\n", ts(extra)));
    }
    out.push('}');
    out
}

/// `web/js/proto.d.ts` from the schemas in `proto/`.
fn generate() -> String {
    let mut defs: BTreeMap<String, String> = BTreeMap::new();
    let mut out = String::from(
        "// Generated from proto/*.schema.json by crates/carcassonne-server/tests/web_client.rs; do not edit.\n\
         // Regenerate: UPDATE_WEB_TYPES=1 cargo test -p carcassonne-server --test web_client\n\n",
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("proto"))
        .expect("proto/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".schema.json"))
        .collect();
    files.sort();
    let mut titles = std::collections::BTreeSet::new();
    for f in files {
        let schema: Value =
            serde_json::from_str(&std::fs::read_to_string(&f).expect("schema")).expect("json");
        let title = schema["title"].as_str().expect("title").to_string();
        titles.insert(title.clone());
        let obj = schema.as_object().expect("object");
        let mut top = obj.clone();
        top.remove("$defs");
        out.push_str(&doc(obj, ""));
        out.push_str(&format!(
            "export type {title} = {};\n\n",
            ts(&Value::Object(top))
        ));
        if let Some(d) = obj.get("$defs").and_then(Value::as_object) {
            for (name, s) in d {
                let text = format!(
                    "{}export type {name} = {};\n\n",
                    s.as_object().map(|o| doc(o, "")).unwrap_or_default(),
                    ts(s)
                );
                if let Some(prev) = defs.get(name) {
                    assert_eq!(prev, &text, "{name} differs between two schema files");
                } else {
                    defs.insert(name.clone(), text);
                }
            }
        }
    }
    // A definition that is also some file's top-level type (an admin list names its items'
    // type) is written once, as the top-level type.
    for (name, text) in &defs {
        if !titles.contains(name) {
            out.push_str(text);
        }
    }
    out
}

#[test]
fn proto_types_match_the_schemas() {
    let path = root().join("web/js/proto.d.ts");
    let fresh = generate();
    if std::env::var("UPDATE_WEB_TYPES").is_ok() {
        std::fs::write(&path, &fresh).expect("write proto.d.ts");
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        stored == fresh,
        "web/js/proto.d.ts is stale: run UPDATE_WEB_TYPES=1 cargo test -p carcassonne-server --test web_client"
    );
}

/// Files in `web/` that the page does not load: types and dev tooling.
fn dev_only(rel: &str) -> bool {
    rel.ends_with(".d.ts")
        || rel.starts_with("node_modules/")
        || matches!(
            rel,
            "package.json" | "package-lock.json" | "tsconfig.json" | "README.md"
        )
}

fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).expect("dir").flatten() {
        let p = e.path();
        let rel = p
            .strip_prefix(base)
            .expect("prefix")
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "node_modules" {
            continue;
        }
        if p.is_dir() {
            walk(&p, base, out);
        } else {
            out.push(rel);
        }
    }
}

#[test]
fn every_web_file_is_embedded() {
    let base = root().join("web");
    let mut files = Vec::new();
    walk(&base, &base, &mut files);
    let embedded: Vec<&str> = server::web::ASSETS.iter().map(|a| a.path).collect();
    for f in files.iter().filter(|f| !dev_only(f)) {
        assert!(
            embedded.contains(&f.as_str()),
            "web/{f} is not in server::web::ASSETS"
        );
    }
    for a in server::web::ASSETS {
        let disk = std::fs::read(base.join(a.path)).expect("asset on disk");
        assert_eq!(disk, a.bytes, "web/{} changed since the build", a.path);
    }
}

/// The page's JSDoc types, checked by TypeScript (`npm ci --prefix web` installs it; `.ci/run`
/// does). Without it the check is skipped with a notice, and fails under CI.
#[test]
fn page_type_checks() {
    let tsc = root().join("web/node_modules/.bin/tsc");
    if !tsc.exists() {
        assert!(
            !ci(),
            "CI=true but web/node_modules/.bin/tsc is missing (npm ci --prefix web)"
        );
        eprintln!("NOTICE: tsc not installed (npm ci --prefix web); skipping the JSDoc type check");
        return;
    }
    let out = std::process::Command::new(&tsc)
        .args(["-p", "tsconfig.json"])
        .current_dir(root().join("web"))
        .output()
        .expect("run tsc");
    assert!(
        out.status.success(),
        "tsc found type errors:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn tiles_json_carries_the_whole_catalogue() {
    let json = server::web::tiles_json();
    let tiles = json["tiles"].as_array().expect("tiles");
    let cat = rules::catalogue();
    assert_eq!(tiles.len(), cat.tiles.len());
    assert_eq!(json["start"], cat.get(cat.start).id.as_str());
    for (t, kind) in tiles.iter().zip(&cat.tiles) {
        assert_eq!(t["id"], kind.id.as_str());
        // Each side's letter agrees with the segments that reach it, as the loader checks.
        let edges = t["edges"].as_array().expect("edges");
        for (i, side) in ["N", "E", "S", "W"].iter().enumerate() {
            let on = |kind: &str| {
                t["segments"].as_array().expect("segments").iter().any(|s| {
                    s["kind"] == kind
                        && s["sides"]
                            .as_array()
                            .is_some_and(|a| a.iter().any(|x| x == side))
                })
            };
            let expect = if on("city") {
                "C"
            } else if on("road") {
                "R"
            } else {
                "F"
            };
            assert_eq!(edges[i], expect, "{} side {side}", kind.id);
        }
        assert_eq!(
            t["pictures"].as_array().map(Vec::len),
            Some(kind.pictures.len())
        );
    }
}

/// The first load is capped at 300 KB transferred (gzip). The bound held here is stricter: the
/// uncompressed bytes of every file the player's page (`index.html`) loads, following its
/// stylesheet, its script and the modules they import, plus the tile catalogue. The other pages
/// (the admin console, the leaderboard, the replay viewer) load only when opened.
#[test]
fn first_load_stays_under_300_kb() {
    let asset = |path: &str| {
        server::web::ASSETS
            .iter()
            .find(|a| a.path == path)
            .unwrap_or_else(|| panic!("{path} is not embedded"))
    };
    let text = |path: &str| String::from_utf8_lossy(asset(path).bytes).into_owned();
    let index = text("index.html");
    let mut todo: Vec<String> = ["href=\"/web/", "src=\"/web/"]
        .iter()
        .flat_map(|attr| index.split(attr).skip(1))
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect();
    let mut loaded = std::collections::BTreeSet::from(["index.html".to_owned()]);
    while let Some(path) = todo.pop() {
        if !loaded.insert(path.clone()) || !path.ends_with(".js") {
            continue;
        }
        // `import … from './x.js'` in a module under js/.
        for rest in text(&path).split("from './").skip(1) {
            if let Some(name) = rest.split('\'').next() {
                todo.push(format!("js/{name}"));
            }
        }
    }
    let assets: usize = loaded.iter().map(|p| asset(p).bytes.len()).sum();
    let tiles = server::web::tiles_json().to_string().len();
    let total = assets + tiles;
    eprintln!(
        "first load: {} files, {assets} bytes + {tiles} bytes of tiles = {total}",
        loaded.len()
    );
    assert!(
        loaded.contains("js/app.js") && loaded.contains("style.css"),
        "{loaded:?}"
    );
    assert!(
        total < 300 * 1024,
        "first load is {total} bytes: {loaded:?}"
    );
}
