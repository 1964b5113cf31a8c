//! The timed run: `--matches` slots, each playing one match at a time until the measurement
//! ends, then the report.

use crate::config::{Args, Ctx, context};
use crate::error::LoadError;
use crate::procfs::{context_switches, cpu_ticks, cpu_ticks_self};
use crate::report::{ServerUse, Stats, report};
use crate::seat::{open_match, play_seat};
use crate::shared::{InFlight, MatchShared};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

pub(crate) async fn run(args: Args) -> Result<(), LoadError> {
    let ctx = context(&args);
    let (ready_tx, mut ready_rx) = mpsc::channel::<()>(args.matches.max(1));
    let (go_tx, go_rx) = watch::channel::<Option<Instant>>(None);
    let setup_started = Instant::now();
    let slots: Vec<_> = (0..args.matches)
        .map(|_| tokio::spawn(slot(ctx.clone(), ready_tx.clone(), go_rx.clone())))
        .collect();
    drop(ready_tx);
    for _ in 0..args.matches {
        if ready_rx.recv().await.is_none() {
            break;
        }
    }
    eprintln!(
        "{} matches created and connected in {:.1} s; measuring for {} s",
        args.matches,
        setup_started.elapsed().as_secs_f64(),
        args.secs
    );
    let cpu_before = args.server_pid.map(cpu_ticks).transpose()?;
    let switches_before = args.server_pid.map(context_switches);
    let self_before = cpu_ticks_self()?;
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(args.secs);
    let _ = go_tx.send(Some(end));
    tokio::time::sleep_until(end).await;
    let cpu_after = args.server_pid.map(cpu_ticks).transpose()?;
    let switches_after = args.server_pid.map(context_switches);
    let self_after = cpu_ticks_self()?;
    let elapsed = start.elapsed().as_secs_f64();
    let mut stats = Stats::default();
    for s in slots {
        match s.await {
            Ok(st) => stats.merge(st),
            Err(e) => stats.errors.push(format!("task: {e}")),
        }
    }
    let server = ServerUse {
        cpu: cpu_before.zip(cpu_after),
        switches: switches_before.zip(switches_after),
    };
    report(&args, &stats, elapsed, &server, self_after - self_before);
    Ok(())
}

/// One match at a time, replaced when it ends, until the measurement ends.
pub(crate) async fn slot(
    ctx: Arc<Ctx>,
    ready: mpsc::Sender<()>,
    mut go: watch::Receiver<Option<Instant>>,
) -> Stats {
    let mut stats = Stats::default();
    let first = open_match(&ctx).await;
    let _ = ready.send(()).await;
    drop(ready);
    let end = match go.wait_for(Option::is_some).await {
        Ok(v) => v.unwrap_or_else(Instant::now),
        Err(_) => return stats,
    };
    let mut next = Some(first);
    while Instant::now() < end {
        let opened = match next.take() {
            Some(o) => o,
            None => open_match(&ctx).await,
        };
        let (created, conns) = match opened {
            Ok(o) => o,
            Err(e) => {
                stats.errors.push(format!("opening a match: {e}"));
                // Do not spin on a server that refuses.
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let in_flight: InFlight = Arc::new(MatchShared::new(conns.len(), None));
        let seats: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, conn)| {
                let seed = ctx.seeds.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(play_seat(
                    conn,
                    created.match_id,
                    i as u8,
                    in_flight.clone(),
                    end,
                    seed,
                ))
            })
            .collect();
        let mut finished = false;
        for s in seats {
            match s.await {
                Ok(st) => {
                    finished |= st.matches_finished > 0;
                    stats.merge(Stats {
                        matches_finished: 0,
                        ..st
                    });
                }
                Err(e) => stats.errors.push(format!("seat task: {e}")),
            }
        }
        stats.matches_finished += u64::from(finished);
    }
    stats
}
