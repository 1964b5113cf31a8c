//! The server binary as a process of its own (the tests that kill it, limit its open files, or
//! run its subcommands beside it): started with JSON logs, its address read from the `listening`
//! line, killed when dropped.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use super::READ_TIMEOUT;

pub struct ServerProcess {
    pub child: Child,
    pub addr: SocketAddr,
}

impl ServerProcess {
    /// Spawns `cmd` (the server binary, or a shell that execs it, given `--bind 127.0.0.1:0
    /// --log-format json`) and waits for its address.
    pub fn spawn(mut cmd: Command) -> ServerProcess {
        // `TEST_SERVER_LOG=<directives>` (`server::lobby=debug`, say) echoes the log to stderr,
        // with these directives added to `info` (the harness reads the `listening` line).
        let echo = std::env::var("TEST_SERVER_LOG").ok();
        let filter = match &echo {
            Some(extra) if !extra.is_empty() => format!("info,{extra}"),
            _ => "info".to_owned(),
        };
        let mut child = cmd
            .env("RUST_LOG", filter)
            .env_remove("DATABASE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the server binary");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        // Reads the log to its end (a full pipe would block the server): the first `listening`
        // line gives the address.
        let echo = echo.is_some();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if echo {
                    eprintln!("{line}");
                }
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                if v["fields"]["message"] == "listening"
                    && let Some(addr) = v["fields"]["addr"].as_str()
                {
                    let _ = tx.send(addr.parse::<SocketAddr>().expect("addr"));
                }
            }
        });
        let addr = rx.recv_timeout(READ_TIMEOUT).expect("the server listens");
        ServerProcess { child, addr }
    }

    /// Whether the process still runs.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
