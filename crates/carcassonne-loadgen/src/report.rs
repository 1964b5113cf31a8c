//! What the seats measured ([`Stats`]) and the report a timed run prints: moves/s, latency
//! percentiles, errors, and the server's and the load generator's CPU per move. `summary.awk`
//! parses these lines: keep their format.

use crate::config::Args;
use crate::procfs::{CLK_TCK, Switches};
use std::time::Duration;

/// Printed when the server's rate limits, not its speed, held the load back.
pub(crate) const RATE_HINT: &str = "hint: the server's rate limits refused commands; start it with \
     --command-rate-addr 1000000/1s --command-rate-conn 1000000/1s --match-rate-addr 1000000/1s \
     to measure its speed";

/// What the seats of every match measured.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) own: Vec<Duration>,
    pub(crate) others: Vec<Duration>,
    /// Acks read before the end of the measurement.
    pub(crate) moves: u64,
    pub(crate) rejected: u64,
    /// Of the rejected: refused by the server's rate limits, not by the rules.
    pub(crate) rate_limited: u64,
    pub(crate) errors: Vec<String>,
    pub(crate) matches_finished: u64,
}

impl Stats {
    pub(crate) fn merge(&mut self, o: Stats) {
        self.own.extend(o.own);
        self.others.extend(o.others);
        self.moves += o.moves;
        self.rejected += o.rejected;
        self.rate_limited += o.rate_limited;
        self.errors.extend(o.errors);
        self.matches_finished += o.matches_finished;
    }
}

/// What the server process used over the run (`--server-pid`): before and after.
pub(crate) struct ServerUse {
    /// CPU clock ticks.
    pub(crate) cpu: Option<(u64, u64)>,
    /// Context switches (voluntary, involuntary) of its threads.
    pub(crate) switches: Option<(Switches, Switches)>,
}

pub(crate) fn report(args: &Args, s: &Stats, elapsed: f64, server: &ServerUse, self_ticks: u64) {
    let p = |v: &[Duration], q: f64| client::latency::percentile(v, q).as_secs_f64() * 1000.0;
    let moves_per_s = s.moves as f64 / elapsed;
    let mods: Vec<String> = args
        .modules
        .iter()
        .map(|m| format!("{m:?}").to_lowercase())
        .collect();
    println!(
        "matches {} x {} players, modules [{}], {:.1} s",
        args.matches,
        args.players,
        mods.join(","),
        elapsed
    );
    println!(
        "moves {} ({:.0} moves/s), matches finished {}, rejected {} ({} rate limited), errors {}",
        s.moves,
        moves_per_s,
        s.matches_finished,
        s.rejected,
        s.rate_limited,
        s.errors.len()
    );
    if s.rate_limited > 0 {
        println!("{RATE_HINT}");
    }
    println!(
        "own diff    ms: p50 {:.2}  p99 {:.2}  p99.9 {:.2}  ({} samples)",
        p(&s.own, 50.0),
        p(&s.own, 99.0),
        p(&s.own, 99.9),
        s.own.len()
    );
    println!(
        "others diff ms: p50 {:.2}  p99 {:.2}  p99.9 {:.2}  ({} samples)",
        p(&s.others, 50.0),
        p(&s.others, 99.0),
        p(&s.others, 99.9),
        s.others.len()
    );
    let per_move = |ticks: u64| {
        if s.moves == 0 {
            0.0
        } else {
            ticks as f64 / CLK_TCK * 1e6 / s.moves as f64
        }
    };
    if let Some((before, after)) = server.cpu {
        let t = after.saturating_sub(before);
        println!(
            "server CPU {:.2} s = {:.0} us/move ({:.0}% of one core)",
            t as f64 / CLK_TCK,
            per_move(t),
            t as f64 / CLK_TCK / elapsed * 100.0
        );
    }
    if let Some((before, after)) = server.switches
        && s.moves > 0
    {
        let moves = s.moves as f64;
        let vol = after.voluntary.saturating_sub(before.voluntary) as f64 / moves;
        let invol = after.involuntary.saturating_sub(before.involuntary) as f64 / moves;
        println!(
            "server context switches = {:.2} /move ({vol:.2} voluntary, {invol:.2} involuntary)",
            vol + invol
        );
    }
    println!(
        "loadgen CPU {:.2} s = {:.0} us/move",
        self_ticks as f64 / CLK_TCK,
        per_move(self_ticks)
    );
    if let Ok(l) = std::fs::read_to_string("/proc/loadavg") {
        println!(
            "load average {}",
            l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
        );
    }
    for e in s.errors.iter().take(5) {
        println!("error: {e}");
    }
}
