//! The restart probe (`--probe FILE`): how long after the server's start `/healthz` answers and
//! a first command in a filled match is answered.

use crate::config::{Args, context};
use crate::error::LoadError;
use crate::procfs::process_age;
use client::Connection;
use std::time::Duration;
use tokio::time::Instant;
use uuid::Uuid;

/// Restart probe: the times from the server's start until `/healthz` answers, then until a
/// first command is answered in the first, middle and last match of `seats` (each a fresh
/// connection: auth, then a pass, which the match's actor answers once it has loaded).
pub(crate) async fn probe(args: Args, seats: std::path::PathBuf) -> Result<(), LoadError> {
    let ctx = context(&args);
    let lines = std::fs::read_to_string(&seats)?;
    let matches: Vec<(Uuid, &str)> = lines
        .lines()
        .filter_map(|l| {
            let (id, token) = l.split_once(' ')?;
            Some((id.parse().ok()?, token))
        })
        .collect();
    if matches.is_empty() {
        return Err(LoadError::Args(format!("no match in {}", seats.display())));
    }
    let picks = [0, matches.len() / 2, matches.len() - 1];
    // Since the server's process start when known, else since ours.
    let probe_start = Instant::now();
    let offset = match args.server_pid {
        Some(pid) => process_age(pid)?,
        None => Duration::ZERO,
    };
    let since = || (offset + probe_start.elapsed()).as_secs_f64() * 1e3;
    let healthz = format!("{}/healthz", ctx.http);
    loop {
        if let Ok((200, _)) = client::http_get(&healthz).await {
            break;
        }
        if probe_start.elapsed() > Duration::from_secs(600) {
            return Err(LoadError::Args("/healthz did not answer in 600 s".into()));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    println!(
        "healthz answered {:.0} ms after the server started",
        since()
    );
    for (n, i) in picks.into_iter().enumerate() {
        let (id, token) = matches[i];
        let asked = Instant::now();
        let mut conn = Connection::connect(&ctx.ws).await?;
        conn.set_read_timeout(Some(Duration::from_secs(600)));
        conn.auth(token).await?;
        let out = conn
            .command(&format!("probe-{n}"), rules::Command::Pass {})
            .await?;
        let answer = match out {
            client::CommandOutcome::Accepted { seq, .. } => format!("accepted at seq {seq}"),
            client::CommandOutcome::Rejected(e) => format!("refused ({:?})", e.code),
        };
        println!(
            "match {id} (line {}): first command {answer} {:.0} ms after the server started, {:.1} ms after asking",
            i + 1,
            since(),
            asked.elapsed().as_secs_f64() * 1e3
        );
        let _ = conn.close().await;
    }
    Ok(())
}
