//! `docs/scenarios.md` is complete for scenario authors: it names every command, event and
//! decision type the rules define (read from their JSON Schemas) and every refusal code.

use serde_json::Value;

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");
    std::fs::read_to_string(path).expect("docs/scenarios.md is readable")
}

/// Every `"type"` tag a schema's variants take (`{"properties": {"type": {"const": ...}}}`).
fn type_tags(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(o) => {
            if let Some(Value::Object(props)) = o.get("properties")
                && let Some(tag) = props.get("type")
            {
                let consts = tag.get("const").into_iter().chain(
                    tag.get("enum")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten(),
                );
                out.extend(consts.filter_map(Value::as_str).map(str::to_string));
            }
            o.values().for_each(|v| type_tags(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| type_tags(v, out)),
        _ => {}
    }
}

fn tags_of(schema: schemars::Schema) -> Vec<String> {
    let mut out = Vec::new();
    type_tags(
        &serde_json::to_value(schema).expect("a schema serializes"),
        &mut out,
    );
    out.sort();
    out.dedup();
    out
}

fn missing(doc: &str, names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|n| !doc.contains(&format!("`{n}`")) && !doc.contains(&format!("\"{n}\"")))
        .cloned()
        .collect()
}

#[test]
fn every_command_event_and_decision_type_is_documented() {
    let doc = doc();
    let kinds = [
        ("command", tags_of(schemars::schema_for!(rules::Command))),
        ("event", tags_of(schemars::schema_for!(rules::Event))),
        ("decision", tags_of(schemars::schema_for!(rules::Decision))),
    ];
    for (kind, tags) in kinds {
        // The walk finds the tags at all (a schema layout change must not pass silently).
        assert!(tags.len() >= 5, "{kind}: only {tags:?} found in its schema");
        let gone = missing(&doc, &tags);
        assert!(
            gone.is_empty(),
            "docs/scenarios.md does not name the {kind} types {gone:?}"
        );
    }
}

#[test]
fn every_refusal_code_is_documented() {
    let doc = doc();
    let codes: Vec<String> = rules::RuleError::CODES
        .iter()
        .map(|c| c.to_string())
        .collect();
    let gone = missing(&doc, &codes);
    assert!(
        gone.is_empty(),
        "docs/scenarios.md does not name the refusal codes {gone:?}"
    );
}
