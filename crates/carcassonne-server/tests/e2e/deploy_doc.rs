//! `docs/deploy.md` names only what the server reads: every `--flag` is one of its flags, every
//! variable one of their environment variables (or `RUST_LOG`), every `X-…` header one the server
//! reads from a proxy, and each forwarding header the server reads is explained there. A renamed
//! flag or header fails here instead of leaving operators a configuration that is ignored.

use clap::CommandFactory;
use server::client_addr::HEADERS;

fn deploy_md() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/deploy.md");
    std::fs::read_to_string(path).expect("docs/deploy.md")
}

/// The words of `text` that `keep` accepts, split at anything but letters, digits, `-` and `_`.
fn words(text: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .filter(|w| keep(w))
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn deploy_md_names_only_flags_variables_and_headers_the_server_reads() {
    let doc = deploy_md();
    let command = server::Config::command();
    let flags: Vec<String> = command
        .get_arguments()
        .filter_map(|a| a.get_long())
        .map(|l| format!("--{l}"))
        .collect();
    let mut vars: Vec<String> = command
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .collect();
    vars.push("RUST_LOG".into());

    let named_flags = words(&doc, |w| {
        w.starts_with("--") && w.len() > 2 && w[2..].starts_with(|c: char| c.is_ascii_lowercase())
    });
    assert!(named_flags.len() >= 5, "{named_flags:?}");
    let unknown: Vec<&String> = named_flags.iter().filter(|f| !flags.contains(f)).collect();
    assert!(
        unknown.is_empty(),
        "docs/deploy.md names flags the server lacks: {unknown:?}"
    );

    // An environment variable: upper case, digits and `_`, with at least one `_` or known.
    let named_vars = words(&doc, |w| {
        w.len() > 3
            && w.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            && w.starts_with(|c: char| c.is_ascii_uppercase())
            && (w.contains('_') || vars.iter().any(|v| v == w))
    });
    assert!(
        named_vars.iter().any(|v| v == "TRUSTED_PROXIES"),
        "{named_vars:?}"
    );
    let unknown: Vec<&String> = named_vars.iter().filter(|v| !vars.contains(v)).collect();
    assert!(
        unknown.is_empty(),
        "docs/deploy.md names variables the server does not read: {unknown:?}"
    );

    let headers = words(&doc, |w| w.len() > 2 && w[..2].eq_ignore_ascii_case("x-"));
    let unread: Vec<&String> = headers
        .iter()
        .filter(|h| !HEADERS.contains(&h.to_ascii_lowercase().as_str()))
        .collect();
    assert!(
        unread.is_empty(),
        "docs/deploy.md names headers the server does not read: {unread:?}"
    );
    let lower = doc.to_ascii_lowercase();
    for h in HEADERS {
        assert!(
            lower.contains(&format!("`{h}`")),
            "docs/deploy.md does not explain `{h}`"
        );
    }
}
