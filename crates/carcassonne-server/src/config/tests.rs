//! The flags' defaults, ranges and messages; the README's table.

use super::*;

#[test]
fn defaults_parse_and_flags_override_them() {
    let d = Config::default();
    assert_eq!(d.bind.to_string(), "127.0.0.1:8080");
    assert_eq!(d.conn.heartbeat_interval, Duration::from_secs(15));
    assert_eq!(d.matches.match_idle, Duration::from_secs(300));
    assert_eq!(d.admin.metrics_access, MetricsAccess::Admin);
    assert!(d.store.database_url.is_none() && d.admin.token().is_none());

    let c = Config::try_parse_from([
        "server",
        "--allow-test-setups",
        "--log-format",
        "json",
        "--heartbeat-interval",
        "250ms",
        "--match-idle",
        "1h 30m",
    ]);
    let c = c.map_err(|e| e.to_string());
    assert!(
        matches!(&c, Ok(c) if c.matches.allow_test_setups
            && c.log_format == LogFormat::Json
            && c.conn.heartbeat_interval == Duration::from_millis(250)
            && c.matches.match_idle == Duration::from_secs(5400)),
        "{c:?}"
    );
}

#[test]
fn the_connection_limit_stays_within_the_open_files_limit() {
    let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                  Max cpu time              unlimited            unlimited            seconds   \n\
                  Max open files            1024                 524288               files     \n";
    assert_eq!(open_files(limits), Some(1024));
    assert_eq!(open_files(&limits.replace("1024 ", "unlimited ")), None);
    assert_eq!(open_files("Max processes 10 10 processes"), None);

    let d = Config::default();
    assert!((1..=DEFAULT_MAX_CONNECTIONS).contains(&d.conn.connection_limit()));
    let c =
        Config::try_parse_from(["server", "--max-connections", "70000"]).map_err(|e| e.to_string());
    assert!(
        matches!(&c, Ok(c) if c.conn.connection_limit() == 70_000),
        "{c:?}"
    );
}

#[test]
fn bad_values_are_refused_when_parsed() {
    for args in [
        ["--outgoing-queue", "2"],
        ["--match-inbox", "0"],
        ["--max-batch", "100000"],
        ["--heartbeat-interval", "0s"],
        ["--heartbeat-timeout", "15"],
        ["--write-timeout", "9000h"],
        ["--metrics-access", "public"],
        ["--chat-rate-conn", "5"],
        ["--chat-rate-conn", "0/10s"],
        ["--command-rate-addr", "10/0s"],
        ["--account-rate-addr", "x/1m"],
        ["--max-sessions", "0"],
        ["--public-origin", "play.example"],
        ["--public-origin", "https://play.example/lobby"],
        ["--trusted-proxies", "10.0.0.0/33"],
        ["--secure-cookie", "maybe"],
        ["--anonymous-matches", "perhaps"],
        ["--max-connections", "0"],
    ] {
        let parsed = Config::try_parse_from(std::iter::once("server").chain(args));
        assert!(parsed.is_err(), "{args:?} was accepted");
    }
}

#[test]
fn public_origins_repeat_or_separate_with_commas() {
    let c = Config::try_parse_from([
        "server",
        "--public-origin",
        "https://play.example,https://www.play.example",
        "--public-origin",
        "http://localhost:3000/",
    ])
    .map(|c| {
        c.conn
            .public_origin
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    })
    .map_err(|e| e.to_string());
    assert_eq!(
        c,
        Ok(vec![
            "https://play.example".to_string(),
            "https://www.play.example".to_string(),
            "http://localhost:3000".to_string(),
        ])
    );
    assert!(Config::default().conn.public_origin.is_empty());
}

#[test]
fn the_cookie_is_secure_behind_an_https_origin_unless_told() {
    let secure = |args: &[&str]| {
        Config::try_parse_from(std::iter::once("server").chain(args.iter().copied()))
            .map(|c| c.conn.cookie_secure())
            .map_err(|e| e.to_string())
    };
    assert_eq!(secure(&[]), Ok(false));
    assert_eq!(
        secure(&["--public-origin", "http://localhost:3000"]),
        Ok(false)
    );
    let https = ["--public-origin", "https://play.example"];
    assert_eq!(secure(&https), Ok(true));
    assert_eq!(
        secure(&[&https[..], &["--secure-cookie", "off"]].concat()),
        Ok(false)
    );
    assert_eq!(secure(&["--secure-cookie", "true"]), Ok(true));
    assert_eq!(secure(&["--secure-cookie", "on"]), Ok(true));
}

#[test]
fn anonymous_matches_default_on_and_short_admin_tokens_are_refused() {
    let c = Config::try_parse_from(["server", "--anonymous-matches", "off"]);
    assert!(matches!(c, Ok(c) if !c.matches.anonymous_matches));
    assert!(Config::default().matches.anonymous_matches);
    let with = |token: &str| {
        Config::try_parse_from(["server", "--admin-token", token])
            .map_err(|e| e.to_string())
            .map(|c| c.validate().map_err(|e| e.to_string()))
    };
    let short = with("hunter2");
    assert!(
        matches!(&short, Ok(Err(m)) if m.contains("at least 16") && !m.contains("hunter2")),
        "{short:?}"
    );
    assert!(matches!(with("0123456789abcdef"), Ok(Ok(()))));
    assert!(
        matches!(with(""), Ok(Ok(()))),
        "an empty token turns the admin API off"
    );
}

#[test]
fn rates_read_as_a_burst_over_a_period() {
    let c = Config::try_parse_from(["server", "--chat-rate-conn", " 3 / 1m "]).expect("parse");
    assert_eq!(
        c.limits.chat_rate_conn,
        Rate {
            burst: 3,
            period: Duration::from_secs(60)
        }
    );
}

/// The legacy `*_MS` flags (and so their variables) still work, and conflict with the new
/// ones.
#[test]
fn legacy_millisecond_flags_still_work() {
    let c = Config::try_parse_from(["server", "--heartbeat-timeout-ms", "1500"])
        .map(Config::with_legacy)
        .map_err(|e| e.to_string());
    assert!(
        matches!(&c, Ok(c) if c.conn.heartbeat_timeout == Duration::from_millis(1500)),
        "{c:?}"
    );
    let both = Config::try_parse_from([
        "server",
        "--heartbeat-timeout-ms",
        "1500",
        "--heartbeat-timeout",
        "2s",
    ]);
    assert!(both.is_err());
}

/// Secrets never reach `Debug` output (which logs and panics use).
#[test]
fn secrets_are_redacted_in_debug_output() {
    let c = Config::try_parse_from([
        "server",
        "--admin-token",
        "hunter2-admin-token",
        "--database-url",
        "postgres://app:hunter2-db@db/app",
    ])
    .map_err(|e| e.to_string());
    let text = format!("{c:?}");
    assert!(text.contains("REDACTED"), "{text}");
    assert!(
        !text.contains("hunter2"),
        "a secret in Debug output: {text}"
    );
    let c = c.ok();
    assert_eq!(
        c.as_ref().and_then(|c| c.admin.token()),
        Some("hunter2-admin-token")
    );
    assert_eq!(
        c.as_ref().and_then(|c| c.store.url()),
        Some("postgres://app:hunter2-db@db/app")
    );
}

/// `server backup --to FILE` takes the store's flags before or after the command; the plain
/// run keeps its flags and has no command.
#[test]
fn backup_is_a_command_beside_the_plain_run() {
    let backup = |args: &[&str]| {
        Config::try_parse_from(std::iter::once("server").chain(args.iter().copied()))
            .map(|c| (c.command, c.store.data_dir))
            .map_err(|e| e.to_string())
    };
    let to = Some(Command::Backup { to: "b.db".into() });
    for args in [
        &["backup", "--to", "b.db", "--data-dir", "d"][..],
        &["--data-dir", "d", "backup", "--to", "b.db"][..],
    ] {
        let parsed = backup(args);
        assert!(
            matches!(&parsed, Ok((c, d)) if format!("{c:?}") == format!("{to:?}") && d == &PathBuf::from("d")),
            "{args:?}: {parsed:?}"
        );
    }
    assert!(backup(&["backup"]).is_err(), "backup needs --to");
    let run = backup(&["--bind", "127.0.0.1:9000", "--db-pool-size", "8"]);
    assert!(matches!(run, Ok((None, _))), "{run:?}");
    assert!(Config::default().command.is_none());
}

/// The README's table is the flags' own: regenerate it with `UPDATE_README=1`.
#[test]
fn readme_table_matches_the_flags() {
    const START: &str =
        "<!-- config-table: generated from crates/carcassonne-server/src/config.rs -->\n";
    const END: &str = "<!-- /config-table -->";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let (Some(start), Some(end)) = (readme.find(START), readme.find(END)) else {
        panic!("README.md has no `{START}` … `{END}` section");
    };
    let current = &readme[start + START.len()..end];
    let table = markdown_table();
    if current != table {
        if std::env::var_os("UPDATE_README").is_some() {
            let updated = format!("{}{START}{table}{}", &readme[..start], &readme[end..]);
            std::fs::write(&path, updated).expect("write README.md");
        } else {
            panic!(
                "README.md's configuration table differs from the flags; run \
                 `UPDATE_README=1 cargo test -p carcassonne-server --lib config` to regenerate it.\n\
                 expected:\n{table}"
            );
        }
    }
}

/// Every variable the compose file and the Dockerfile set for the server is one it reads:
/// a flag's `env`, or `RUST_LOG` (the log filter, see `telemetry`). A misspelt one would be
/// ignored without a word.
#[test]
fn the_container_files_set_only_variables_the_server_reads() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut known: Vec<String> = Config::command()
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .collect();
    known.push("RUST_LOG".into());
    assert!(known.iter().any(|k| k == "DATABASE_URL"), "{known:?}");

    let compose = std::fs::read_to_string(root.join("docker-compose.yml")).expect("compose");
    let mut set = Vec::new();
    let mut in_server = false;
    let mut in_env = false;
    for line in compose.lines() {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if indent == 2 {
            in_server = trimmed == "server:";
            in_env = false;
        } else if in_server && indent == 4 {
            in_env = trimmed == "environment:";
        } else if in_server && in_env && indent == 6 {
            set.push(trimmed.split(':').next().unwrap_or_default().to_string());
        }
    }
    assert!(
        !set.is_empty(),
        "the compose file's server sets no variable"
    );

    let dockerfile = std::fs::read_to_string(root.join("Dockerfile")).expect("Dockerfile");
    let mut in_env = false;
    for line in dockerfile.lines() {
        let trimmed = line.trim();
        let words = match trimmed.strip_prefix("ENV ") {
            Some(rest) => rest,
            None if in_env => trimmed,
            None => continue,
        };
        set.extend(
            words
                .split_whitespace()
                .filter_map(|w| w.split_once('=').map(|(k, _)| k.to_string())),
        );
        in_env = trimmed.ends_with('\\');
    }
    let unknown: Vec<&String> = set.iter().filter(|v| !known.contains(v)).collect();
    assert!(
        unknown.is_empty(),
        "set for the server but read by nothing: {unknown:?} (known: {known:?})"
    );
}
