//! Idle mode (`--idle N`): N WebSocket connections that only read (which answers the server's
//! pings) and join no match, opened in `--steps` equal steps. After each step, once its
//! connections are open and `--secs` have passed, it prints the server's resident memory
//! (`--server-pid`) and its growth per connection opened since the step before: what an idle
//! connection costs the server on its own, a match's memory aside. Connections the server
//! refuses (a 503 past its `--max-connections`) are counted apart.

use crate::config::Args;
use crate::error::LoadError;
use crate::pace::plan::source;
use crate::procfs::rss_bytes;
use client::Connection;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// What the connections counted.
#[derive(Debug, Default)]
struct Counts {
    open: AtomicUsize,
    /// Upgrades answered with an HTTP status (503 past the server's limit).
    refused: AtomicUsize,
    /// Any other failure to connect, and connections that ended before the run did.
    failed: AtomicUsize,
}

impl Counts {
    fn settled(&self) -> usize {
        self.open.load(Ordering::Relaxed)
            + self.refused.load(Ordering::Relaxed)
            + self.failed.load(Ordering::Relaxed)
    }
}

pub(crate) async fn idle(args: Args, total: usize) -> Result<(), LoadError> {
    let ws = crate::config::context(&args).ws.clone();
    let steps = args.steps.max(1);
    let settle = Duration::try_from_secs_f64(args.secs)
        .map_err(|e| LoadError::Args(format!("--secs: {e}")))?;
    let counts = Arc::new(Counts::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let mut spawned = 0;
    let rss = || args.server_pid.map(rss_bytes).transpose();
    let mut last = (0usize, rss()?);
    if let Some(r) = last.1 {
        println!("idle step 0: 0 open, server RSS {:.1} MB", mb(r));
    }
    for step in 1..=steps {
        let target = total * step / steps;
        let ramp = Instant::now();
        for i in spawned..target {
            let (ws, counts, stop) = (ws.clone(), counts.clone(), stop_rx.clone());
            let from = source(i, args.sources);
            tasks.spawn(hold(ws, from, counts, stop));
            // Thousands of handshakes at once would measure the burst, not the connections.
            if i % 100 == 99 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        spawned = spawned.max(target);
        while counts.settled() < target && ramp.elapsed() < Duration::from_secs(120) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(settle).await;
        let open = counts.open.load(Ordering::Relaxed);
        let (refused, failed) = (
            counts.refused.load(Ordering::Relaxed),
            counts.failed.load(Ordering::Relaxed),
        );
        let mut line = format!("idle step {step}: {open} open, {refused} refused, {failed} failed");
        if let (Some(now), Some(before)) = (rss()?, last.1) {
            let per = match open.checked_sub(last.0) {
                Some(d) if d > 0 => format!(
                    ", {:.0} B a connection since step {}",
                    (now as f64 - before as f64) / d as f64,
                    step - 1
                ),
                _ => String::new(),
            };
            line += &format!(", server RSS {:.1} MB{per}", mb(now));
            last = (open, Some(now));
        }
        println!("{line}");
    }
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
    Ok(())
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// One idle connection: open, then read until the run stops.
async fn hold(
    ws: String,
    from: Option<std::net::IpAddr>,
    counts: Arc<Counts>,
    mut stop: watch::Receiver<bool>,
) {
    let opened = match from {
        Some(ip) => Connection::connect_from(&ws, ip).await,
        None => Connection::connect(&ws).await,
    };
    let mut conn = match opened {
        Ok(c) => c,
        Err(e) => {
            let counter = match e.http_status() {
                Some(_) => &counts.refused,
                None => &counts.failed,
            };
            counter.fetch_add(1, Ordering::Relaxed);
            return;
        }
    };
    counts.open.fetch_add(1, Ordering::Relaxed);
    let ended = tokio::select! {
        _ = stop.wait_for(|s| *s) => false,
        () = async { while let Ok(Some(_)) = conn.next_message().await {} } => true,
    };
    counts.open.fetch_sub(1, Ordering::Relaxed);
    if ended {
        counts.failed.fetch_add(1, Ordering::Relaxed);
    } else {
        let _ = conn.close().await;
    }
}
