//! The server binary started with `--config FILE`: the file's settings take effect (the port it
//! listens on, the admin token), an environment variable overrides the file, the secret in the
//! file never reaches the log, and a file with an unknown key stops the server with the key's
//! name.

use crate::common::*;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};

/// A port nobody listens on now (bound, then released).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// The server binary with only `args` and `env` from the test (no stray `DATABASE_URL`).
fn server(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_carcassonne-server"));
    c.args(args)
        .env_remove("DATABASE_URL")
        .env_remove("CONFIG_FILE")
        .env_remove("METRICS_ACCESS")
        .env_remove("BIND")
        .env_remove("ADMIN_TOKEN")
        .env("RUST_LOG", "info")
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_file_sets_the_port_and_the_token_under_the_environment() {
    const SECRET: &str = "file-secret-token-5ab1e";
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let path = dir.path().join("server.toml");
    let file = format!(
        "bind = \"127.0.0.1:{port}\"\ndata-dir = {:?}\nlog-format = \"json\"\n\
         metrics-access = \"off\"\nadmin-token = \"{SECRET}\"\n",
        dir.path().join("data").display().to_string()
    );
    std::fs::write(&path, file).expect("write the file");
    let mut child = server(
        &["--config", &path.display().to_string()],
        &[("METRICS_ACCESS", "open")],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start the server binary");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    // Reads the log to its end (a full pipe would block the server), keeping every line.
    let reader = std::thread::spawn(move || {
        let mut log = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
                && v["fields"]["message"] == "listening"
                && let Some(addr) = v["fields"]["addr"].as_str()
            {
                let _ = tx.send(addr.parse::<SocketAddr>().expect("addr"));
            }
            log.push(line);
        }
        log
    });
    let errors = std::thread::spawn(move || {
        BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<_>>()
    });
    let addr = rx.recv_timeout(READ_TIMEOUT);
    let checked = async {
        let addr = addr.expect("the server listens (a JSON log line, as the file says)");
        assert_eq!(addr.port(), port, "the file's bind");
        let server = TestServer::attach(addr);
        // The file says `off`, the environment `open`: the environment wins.
        let (status, body) = http(&server, "GET", "/metrics", &[], "").await;
        assert_eq!(status, 200, "{body}");
        // The file's admin token opens the admin API.
        let auth = format!("Bearer {SECRET}");
        let (status, body) = http(
            &server,
            "GET",
            "/api/admin/matches",
            &[("Authorization", &auth)],
            "",
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let wrong = [("Authorization", "Bearer not-it")];
        let (status, _) = http(&server, "GET", "/api/admin/matches", &wrong, "").await;
        assert_eq!(status, 401);
    };
    checked.await;
    let _ = child.kill();
    let _ = child.wait();
    let log = reader.join().expect("the log");
    let errors = errors.join().expect("stderr");
    assert!(!log.is_empty());
    for line in log.iter().chain(&errors) {
        assert!(!line.contains(SECRET), "the secret in the log: {line}");
    }
}

#[test]
fn a_config_file_with_an_unknown_key_stops_the_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("server.toml");
    std::fs::write(
        &path,
        "bind = \"127.0.0.1:0\"\nheartbeat-intreval = \"5s\"\n",
    )
    .expect("write");
    let out = server(&[], &[("CONFIG_FILE", &path.display().to_string())])
        .output()
        .expect("run the server binary");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown key `heartbeat-intreval`"),
        "{stderr}"
    );
}
