//! The human-pace (open-loop) run: `--matches` live matches of a mix of table sizes, every
//! player on a WebSocket of its own answering its decisions after a think time (exponential,
//! mean `--think`), every module on in a share of the matches, a spectator on every
//! `--spectator-every`-th match, and connections dropping and resuming with `since` now and then.
//! Moves come when players are ready, not when the server answers: what is measured is what a
//! player feels while the server carries many matches.
//!
//! The matches open in `--steps` equal steps; each step is measured for `--secs` once its matches
//! are live, and reports live matches, connections, moves/s, ack latency (sent to ack, at the
//! sender), fan-out latency (ack to the last subscriber's diff), the server's resident memory and
//! CPU per move (with `--server-pid`), the server's own acks over the window (with
//! `--server-metrics`), and errors by code. A progress line goes to stderr while it runs; the last
//! line on stdout is the JSON summary.
//!
//! - [`plan`]: the mix, think times, reconnect times and source addresses, as pure functions.
//! - [`matches`]: one table's matches, one after another; [`table`]: what the connections of a
//!   match share; [`conn`]: one connection.
//! - [`meter`]: the counters, samples and the step report.
//! - [`server_ack`]: the server's ack histogram over a window, from its `/metrics`.

pub(crate) mod conn;
pub(crate) mod matches;
pub(crate) mod meter;
pub(crate) mod plan;
pub(crate) mod server_ack;
pub(crate) mod table;

use crate::config::Args;
use crate::error::LoadError;
use crate::procfs::{CLK_TCK, cpu_ticks, rss_bytes};
use meter::{Meter, StepReport};
use plan::{Mix, Think};
use protocol::ClockSettings;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// Everything the tables and connections share.
#[derive(Debug)]
pub(crate) struct PaceCtx {
    pub(crate) http: String,
    pub(crate) ws: String,
    pub(crate) mix: Mix,
    pub(crate) think: Think,
    pub(crate) all_modules: f64,
    pub(crate) spectator_every: usize,
    pub(crate) reconnect_mean: Option<Duration>,
    pub(crate) sources: usize,
    pub(crate) clock: Option<ClockSettings>,
    pub(crate) seed: u64,
    pub(crate) meter: Meter,
    /// Connections opened so far: the next one's source address.
    pub(crate) connections_opened: AtomicUsize,
}

fn secs(s: f64, what: &str) -> Result<Duration, LoadError> {
    Duration::try_from_secs_f64(s).map_err(|e| LoadError::Args(format!("{what}: {e}")))
}

impl PaceCtx {
    pub(crate) fn new(args: &Args) -> Result<PaceCtx, LoadError> {
        let base = crate::config::context(args);
        let think = secs(args.think, "--think")?;
        Ok(PaceCtx {
            http: base.http.clone(),
            ws: base.ws.clone(),
            mix: Mix::parse(&args.mix).map_err(LoadError::Args)?,
            think: match args.think_fixed {
                true => Think::Fixed(think),
                false => Think::Exponential(think),
            },
            all_modules: args.all_modules.clamp(0.0, 1.0),
            spectator_every: args.spectator_every,
            reconnect_mean: match args.reconnect_mean {
                m if m > 0.0 => Some(secs(m, "--reconnect-mean")?),
                _ => None,
            },
            sources: args.sources,
            clock: base.request.clock,
            seed: args.seed,
            meter: Meter::default(),
            connections_opened: AtomicUsize::new(0),
        })
    }
}

pub(crate) async fn pace(args: Args) -> Result<(), LoadError> {
    let ctx = Arc::new(PaceCtx::new(&args)?);
    let steps = args.steps.max(1);
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tables = Vec::new();
    let mut reports: Vec<StepReport> = Vec::new();
    for step in 1..=steps {
        let target = args.matches * step / steps;
        let ramp = Instant::now();
        while tables.len() < target {
            let i = tables.len();
            tables.push(tokio::spawn(matches::run(ctx.clone(), i, stop_rx.clone())));
            // Opening hundreds of matches at once would measure the burst, not the pace.
            if i % 50 == 49 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        // Wait until the step's matches are live and connected (or a minute has passed).
        while Instant::now() < ramp + Duration::from_secs(60)
            && (ctx.meter.live_matches.load(Ordering::Relaxed) < target as i64
                || ctx.meter.connections.load(Ordering::Relaxed) < 2 * target as i64)
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        eprintln!(
            "step {step}: {} matches live, {} connections, in {:.1} s; measuring {} s",
            ctx.meter.live_matches.load(Ordering::Relaxed),
            ctx.meter.connections.load(Ordering::Relaxed),
            ramp.elapsed().as_secs_f64(),
            args.secs
        );
        if args.settle > 0.0 {
            tokio::time::sleep(secs(args.settle, "--settle")?).await;
        }
        let _ramp_window = ctx.meter.take();
        let cpu_before = args.server_pid.map(cpu_ticks).transpose()?;
        let acks_before = match args.server_metrics {
            true => Some(server_ack::scrape(&args.url).await?),
            false => None,
        };
        let start = Instant::now();
        let end = start + secs(args.secs, "--secs")?;
        let progress = secs(args.progress.max(0.1), "--progress")?;
        loop {
            let now = Instant::now();
            if now >= end {
                break;
            }
            tokio::time::sleep((end - now).min(progress)).await;
            eprintln!(
                "  {:.0} s: {} matches, {} connections, {} moves",
                start.elapsed().as_secs_f64(),
                ctx.meter.live_matches.load(Ordering::Relaxed),
                ctx.meter.connections.load(Ordering::Relaxed),
                ctx.meter.moves.load(Ordering::Relaxed)
            );
        }
        let elapsed = start.elapsed().as_secs_f64();
        let live = (
            ctx.meter.live_matches.load(Ordering::Relaxed),
            ctx.meter.connections.load(Ordering::Relaxed),
        );
        let mut r = StepReport::new(step, elapsed, ctx.meter.take(), live);
        if let Some(before) = &acks_before {
            r.server_ack = Some(before.window(&server_ack::scrape(&args.url).await?));
        }
        if let Some(pid) = args.server_pid {
            r.server_rss_bytes = rss_bytes(pid).ok();
            if let (Some(before), Ok(after)) = (cpu_before, cpu_ticks(pid))
                && r.moves > 0
            {
                let cpu_us = (after - before) as f64 * 1e6 / CLK_TCK;
                r.server_cpu_us_per_move = Some(cpu_us / r.moves as f64);
            }
        }
        println!("{}", r.line());
        reports.push(r);
    }
    if args.drain > 0.0 {
        tokio::time::sleep(secs(args.drain, "--drain")?).await;
    }
    let _ = stop_tx.send(true);
    for t in tables {
        let _ = tokio::time::timeout(Duration::from_secs(10), t).await;
    }
    let summary = serde_json::json!({
        "mode": "pace",
        "matches": args.matches,
        "mix": args.mix,
        "think_s": args.think,
        "think": if args.think_fixed { "fixed" } else { "exponential" },
        "all_modules": args.all_modules,
        "spectator_every": args.spectator_every,
        "reconnect_mean_s": args.reconnect_mean,
        "drain_s": args.drain,
        "sources": args.sources,
        "steps": reports,
    });
    println!("{summary}");
    Ok(())
}
