//! The configuration file: `--config FILE` or `CONFIG_FILE`, in TOML, one flat key per flag,
//! named as the flag's long name (kebab-case, as on the command line):
//!
//! ```toml
//! bind = "0.0.0.0:8080"
//! heartbeat-interval = "15s"
//! outgoing-queue = 512
//! public-origin = ["https://play.example"]
//! allow-test-setups = false
//! admin-token = "…"
//! ```
//!
//! Precedence: the command line, then the environment variable, then the file, then the flag's
//! default. The file's values become the flags' defaults before clap parses, so each goes
//! through the flag's own parser and a bad one gets the flag's own message. A key that names no
//! flag is refused by name (a typo is never ignored). Secrets may be in the file: no error about
//! the file repeats a value of it (a TOML syntax error gives the line and column only), and
//! [`Config`]'s `Debug` redacts them.

use crate::config::Config;
use clap::error::ErrorKind;
use clap::{ArgAction, Command, CommandFactory, FromArgMatches};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The flag and the environment variable that name the file.
const FLAG: &str = "--config";
const ENV: &str = "CONFIG_FILE";

impl Config {
    /// Parses the command line, the environment and the configuration file if one is named
    /// (exits with a usage message on an error), folding in the legacy `*_MS` variables.
    pub fn from_env() -> Config {
        parse_args(std::env::args_os()).unwrap_or_else(|e| e.exit())
    }
}

/// Parses the command line `args` (the program's name first) and the environment, with the
/// configuration file if `--config` or `CONFIG_FILE` names one.
pub fn parse_args<I, T>(args: I) -> Result<Config, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let command = Config::command();
    let path = file_flag(&args).or_else(|| std::env::var_os(ENV).filter(|p| !p.is_empty()));
    let file = match path.map(PathBuf::from) {
        None => None,
        Some(path) => match std::fs::read_to_string(&path) {
            Ok(text) => Some((path, text)),
            Err(e) => {
                let mut command = command;
                return Err(command.error(
                    ErrorKind::Io,
                    format!("cannot read the config file {}: {e}", path.display()),
                ));
            }
        },
    };
    parse_with(
        command,
        &args,
        file.as_ref().map(|(p, t)| (p.as_path(), t.as_str())),
    )
}

/// The value of `--config` on the command line, if given (before a `--`).
fn file_flag(args: &[OsString]) -> Option<OsString> {
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let text = arg.to_string_lossy();
        if text == "--" {
            break;
        }
        if text == FLAG {
            return rest.next().cloned();
        }
        if let Some(value) = text.strip_prefix("--config=") {
            return Some(value.into());
        }
    }
    None
}

/// Parses `args` with `command`, the file's values (if any) taken as the flags' defaults.
fn parse_with(
    command: Command,
    args: &[OsString],
    file: Option<(&Path, &str)>,
) -> Result<Config, clap::Error> {
    let mut command = match file {
        Some((path, text)) => with_file(command, path, text)?,
        None => command,
    };
    let matches = command.try_get_matches_from_mut(args)?;
    Config::from_arg_matches(&matches)
        .map_err(|e| e.format(&mut command))
        .map(Config::with_legacy)
}

/// `command` with every flag the file sets defaulting to the file's value.
fn with_file(mut command: Command, path: &Path, text: &str) -> Result<Command, clap::Error> {
    let at = path.display();
    let table: toml::Table = match toml::from_str(text) {
        Ok(t) => t,
        Err(e) => {
            // The line and column only: the TOML error's own text quotes the line, which may
            // hold a secret.
            let (line, column) = e.span().map_or((0, 0), |s| line_column(text, s.start));
            let message = e.message().trim();
            return Err(command.error(
                ErrorKind::InvalidValue,
                format!("{at}:{line}:{column}: not TOML: {message}"),
            ));
        }
    };
    for (key, value) in &table {
        let Some(arg) = command.get_arguments().find(|a| {
            a.get_long() == Some(key.as_str())
                && !a.is_hide_set()
                && !matches!(key.as_str(), "config" | "help" | "version")
        }) else {
            return Err(command.error(
                ErrorKind::UnknownArgument,
                format!(
                    "{at}: unknown key `{key}` (the keys are the flags' long names, such as \
                     `bind` or `heartbeat-interval`; `--help` lists them)"
                ),
            ));
        };
        let id = arg.get_id().clone();
        let many = matches!(arg.get_action(), ArgAction::Append);
        let switch = matches!(arg.get_action(), ArgAction::SetTrue);
        let values = match (value, many, switch) {
            (toml::Value::Boolean(b), _, true) => vec![b.to_string()],
            (_, _, true) => {
                return Err(command.error(
                    ErrorKind::InvalidValue,
                    format!("{at}: `{key}` is true or false"),
                ));
            }
            (toml::Value::Array(items), true, _) => {
                let mut values = Vec::new();
                for item in items {
                    values.push(scalar(item).ok_or_else(|| {
                        command.error(
                            ErrorKind::InvalidValue,
                            format!("{at}: `{key}` is a list of strings"),
                        )
                    })?);
                }
                values
            }
            (value, _, _) => vec![scalar(value).ok_or_else(|| {
                command.error(
                    ErrorKind::InvalidValue,
                    format!("{at}: `{key}` takes one value: a string, a number or a boolean"),
                )
            })?],
        };
        command = command.mut_arg(id, |a| a.default_values(values));
    }
    Ok(command)
}

/// A string, number or boolean as the flag's text.
fn scalar(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        toml::Value::Datetime(_) | toml::Value::Array(_) | toml::Value::Table(_) => None,
    }
}

/// The 1-based line and column of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MetricsAccess;
    use std::time::Duration;

    /// The flags without their environment variables (a test does not see the machine's), but
    /// `--data-dir` read from `PATH`, a variable every test run has.
    fn command() -> Command {
        Config::command()
            .mut_args(|a| a.env(None))
            .mut_arg("data_dir", |a| a.env("PATH"))
    }

    fn parse(args: &[&str], file: &str) -> Result<Config, String> {
        let args: Vec<OsString> = std::iter::once("server")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        parse_with(command(), &args, Some((Path::new("server.toml"), file)))
            .map_err(|e| e.to_string())
    }

    /// Command line over environment over file over default, on a few flags.
    #[test]
    fn flags_then_environment_then_file_then_defaults() {
        let file = r#"
            bind = "0.0.0.0:9000"
            data-dir = "/from/the/file"
            heartbeat-interval = "3s"
            outgoing-queue = 512
            allow-test-setups = true
            public-origin = ["https://a.example", "https://b.example"]
        "#;
        let c = parse(&["--bind", "127.0.0.1:9001"], file).expect("parses");
        assert_eq!(c.bind.to_string(), "127.0.0.1:9001", "the flag wins");
        let path = std::env::var_os("PATH").map(PathBuf::from);
        assert_eq!(
            Some(c.store.data_dir),
            path,
            "the environment beats the file"
        );
        assert_eq!(
            c.conn.heartbeat_interval,
            Duration::from_secs(3),
            "the file"
        );
        assert_eq!(c.conn.outgoing_queue, 512, "the file");
        assert!(c.matches.allow_test_setups, "the file");
        let origins: Vec<String> = c.conn.public_origin.iter().map(|o| o.to_string()).collect();
        assert_eq!(origins, ["https://a.example", "https://b.example"]);
        assert_eq!(
            c.matches.match_idle,
            Duration::from_secs(300),
            "the default"
        );

        let c = parse(&[], file).expect("parses");
        assert_eq!(
            c.bind.to_string(),
            "0.0.0.0:9000",
            "the file beats the default"
        );
        let c = parse(&[], "").expect("an empty file parses");
        assert_eq!(c.bind.to_string(), "127.0.0.1:8080", "the default");
        assert!(!c.matches.allow_test_setups);
    }

    #[test]
    fn unknown_keys_are_refused_by_name() {
        for (file, key) in [
            ("bnid = \"0.0.0.0:80\"", "bnid"),
            ("heartbeat_interval = \"1s\"", "heartbeat_interval"),
            ("[limits]\nmax-sessions = 3", "limits"),
            ("config = \"other.toml\"", "config"),
            ("heartbeat-interval-ms = 500", "heartbeat-interval-ms"),
        ] {
            let e = parse(&[], file).expect_err(file);
            assert!(e.contains(&format!("unknown key `{key}`")), "{file}: {e}");
        }
    }

    /// A bad value in the file is refused with the message the flag gives for it.
    #[test]
    fn bad_values_get_the_flags_message() {
        for (file, flag) in [
            (
                "heartbeat-interval = \"0s\"",
                ["--heartbeat-interval", "0s"],
            ),
            ("outgoing-queue = 2", ["--outgoing-queue", "2"]),
            (
                "metrics-access = \"public\"",
                ["--metrics-access", "public"],
            ),
            ("bind = \"nowhere\"", ["--bind", "nowhere"]),
        ] {
            let from_file = parse(&[], file).expect_err(file);
            let from_flag = parse(&flag, "").expect_err(file);
            assert_eq!(from_file, from_flag, "{file}");
        }
        for file in [
            "allow-test-setups = \"yes\"",
            "bind = [\"127.0.0.1:1\"]",
            "bind = { host = \"x\" }",
        ] {
            let e = parse(&[], file).expect_err(file);
            assert!(e.contains("server.toml: `"), "{file}: {e}");
        }
    }

    /// Secrets may be in the file; they reach the config and never its `Debug` output, nor the
    /// message of a syntax error on their line.
    #[test]
    fn secrets_in_the_file_stay_out_of_output() {
        let file = "admin-token = \"hunter2-admin\"\ndatabase-url = \"postgres://a:hunter2-db@db/a\"\n\
                    metrics-access = \"open\"";
        let c = parse(&[], file).expect("parses");
        assert_eq!(c.admin.token(), Some("hunter2-admin"));
        assert_eq!(c.store.url(), Some("postgres://a:hunter2-db@db/a"));
        assert_eq!(c.admin.metrics_access, MetricsAccess::Open);
        let text = format!("{c:?}");
        assert!(
            !text.contains("hunter2"),
            "a secret in Debug output: {text}"
        );

        let e = parse(&[], "bind = \"127.0.0.1:1\"\nadmin-token = \"hunter2 \n").expect_err("bad");
        assert!(e.contains("server.toml:2:"), "{e}");
        assert!(!e.contains("hunter2"), "a secret in an error: {e}");
    }

    #[test]
    fn the_file_is_named_by_the_flag_or_its_equals_form() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            file_flag(&args(&["server", "--bind", "x", "--config", "a.toml"])),
            Some("a.toml".into())
        );
        assert_eq!(
            file_flag(&args(&["server", "--config=b.toml"])),
            Some("b.toml".into())
        );
        assert_eq!(file_flag(&args(&["server", "--", "--config", "c"])), None);
        assert_eq!(file_flag(&args(&["server"])), None);
    }
}
