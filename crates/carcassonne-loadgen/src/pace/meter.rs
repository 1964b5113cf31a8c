//! What the human-pace run measures, shared by every connection: counters, gauges and latency
//! samples of the current window (one ramp step), and the report of a window.

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// Shared by every table and connection of the run.
#[derive(Debug, Default)]
pub(crate) struct Meter {
    /// Commands acknowledged.
    pub(crate) moves: AtomicU64,
    /// Connections open now (players and spectators).
    pub(crate) connections: AtomicI64,
    /// Matches being played now.
    pub(crate) live_matches: AtomicI64,
    pub(crate) matches_finished: AtomicU64,
    pub(crate) reconnects: AtomicU64,
    /// Diffs that did not follow a connection's previous one (it then resubscribes).
    pub(crate) gaps: AtomicU64,
    samples: Mutex<Samples>,
}

#[derive(Debug, Default)]
struct Samples {
    /// Sent to ack, at the sender, in µs.
    ack: Vec<u32>,
    /// Ack to the last subscriber's diff, in µs.
    fanout: Vec<u32>,
    /// Refusals and failures by code (`busy`, `rate_limited`, `connect`, …).
    errors: BTreeMap<String, u64>,
}

/// The first words of an error, as a code for the report.
pub(crate) fn short(e: &str) -> String {
    e.split([':', '(']).next().unwrap_or(e).trim().to_owned()
}

fn micros(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

impl Meter {
    pub(crate) fn ack(&self, latency: Duration) {
        self.moves.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut s) = self.samples.lock() {
            s.ack.push(micros(latency));
        }
    }

    pub(crate) fn fanout(&self, latency: Duration) {
        if let Ok(mut s) = self.samples.lock() {
            s.fanout.push(micros(latency));
        }
    }

    pub(crate) fn error(&self, code: &str) {
        if let Ok(mut s) = self.samples.lock() {
            *s.errors.entry(code.to_owned()).or_default() += 1;
        }
    }

    pub(crate) fn gauge(g: &AtomicI64, by: i64) {
        g.fetch_add(by, Ordering::Relaxed);
    }

    /// The window so far, and a fresh one begun.
    pub(crate) fn take(&self) -> Window {
        let s = self
            .samples
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default();
        Window {
            moves: self.moves.swap(0, Ordering::Relaxed),
            reconnects: self.reconnects.swap(0, Ordering::Relaxed),
            gaps: self.gaps.swap(0, Ordering::Relaxed),
            finished: self.matches_finished.swap(0, Ordering::Relaxed),
            ack: s.ack,
            fanout: s.fanout,
            errors: s.errors,
        }
    }
}

/// What one window (a ramp step, or a progress interval) collected.
#[derive(Debug, Default)]
pub(crate) struct Window {
    pub(crate) moves: u64,
    pub(crate) reconnects: u64,
    pub(crate) gaps: u64,
    pub(crate) finished: u64,
    pub(crate) ack: Vec<u32>,
    pub(crate) fanout: Vec<u32>,
    pub(crate) errors: BTreeMap<String, u64>,
}

/// Percentiles of a latency series, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub(crate) struct Percentiles {
    pub(crate) samples: usize,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) p999_ms: f64,
    pub(crate) max_ms: f64,
}

impl Percentiles {
    /// Nearest-rank percentiles of `us` (µs).
    pub(crate) fn of(mut us: Vec<u32>) -> Percentiles {
        if us.is_empty() {
            return Percentiles::default();
        }
        us.sort_unstable();
        let at = |q: f64| {
            let rank = ((q * us.len() as f64).ceil() as usize).clamp(1, us.len());
            f64::from(us[rank - 1]) / 1000.0
        };
        Percentiles {
            samples: us.len(),
            p50_ms: at(0.50),
            p99_ms: at(0.99),
            p999_ms: at(0.999),
            max_ms: at(1.0),
        }
    }
}

/// One line of the report: a ramp step measured over `secs`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StepReport {
    pub(crate) step: usize,
    pub(crate) secs: f64,
    pub(crate) live_matches: i64,
    pub(crate) connections: i64,
    pub(crate) moves: u64,
    pub(crate) moves_per_s: f64,
    pub(crate) ack: Percentiles,
    pub(crate) fanout: Percentiles,
    pub(crate) matches_finished: u64,
    pub(crate) reconnects: u64,
    pub(crate) gaps: u64,
    pub(crate) errors: BTreeMap<String, u64>,
    /// With `--server-pid`: the server's resident memory at the step's end.
    pub(crate) server_rss_bytes: Option<u64>,
    /// With `--server-pid`: the server's CPU time per acknowledged move.
    pub(crate) server_cpu_us_per_move: Option<f64>,
    /// With `--server-metrics`: the server's own acks over the window.
    pub(crate) server_ack: Option<super::server_ack::ServerAck>,
}

impl StepReport {
    pub(crate) fn new(step: usize, secs: f64, w: Window, live: (i64, i64)) -> StepReport {
        StepReport {
            step,
            secs,
            live_matches: live.0,
            connections: live.1,
            moves: w.moves,
            moves_per_s: if secs > 0.0 {
                w.moves as f64 / secs
            } else {
                0.0
            },
            ack: Percentiles::of(w.ack),
            fanout: Percentiles::of(w.fanout),
            matches_finished: w.finished,
            reconnects: w.reconnects,
            gaps: w.gaps,
            errors: w.errors,
            server_rss_bytes: None,
            server_cpu_us_per_move: None,
            server_ack: None,
        }
    }

    /// The human-readable line (stderr while running, stdout per step).
    pub(crate) fn line(&self) -> String {
        let mut out = format!(
            "step {}: {} matches, {} connections, {:.1} moves/s, ack p50/p99/p999 {:.1}/{:.1}/{:.1} ms, \
             fan-out p50/p99 {:.1}/{:.1} ms, {} finished, {} reconnects",
            self.step,
            self.live_matches,
            self.connections,
            self.moves_per_s,
            self.ack.p50_ms,
            self.ack.p99_ms,
            self.ack.p999_ms,
            self.fanout.p50_ms,
            self.fanout.p99_ms,
            self.matches_finished,
            self.reconnects
        );
        if let Some(rss) = self.server_rss_bytes {
            out.push_str(&format!(", server RSS {:.1} MB", rss as f64 / 1e6));
        }
        if let Some(cpu) = self.server_cpu_us_per_move {
            out.push_str(&format!(", server CPU {cpu:.0} µs/move"));
        }
        if let Some(a) = &self.server_ack {
            out.push_str(&format!(
                ", server ack over 25/50/100 ms {:.2}/{:.2}/{:.2} %",
                a.over_25ms_pct, a.over_50ms_pct, a.over_100ms_pct
            ));
        }
        if self.gaps > 0 {
            out.push_str(&format!(", {} gaps", self.gaps));
        }
        if !self.errors.is_empty() {
            out.push_str(&format!(", errors {:?}", self.errors));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank_in_milliseconds() {
        let us: Vec<u32> = (1..=1000).map(|i| i * 1000).collect();
        let p = Percentiles::of(us);
        assert_eq!(p.samples, 1000);
        assert_eq!(
            (p.p50_ms, p.p99_ms, p.p999_ms, p.max_ms),
            (500.0, 990.0, 999.0, 1000.0)
        );
        assert_eq!(Percentiles::of(Vec::new()), Percentiles::default());
        assert_eq!(Percentiles::of(vec![1500]).p999_ms, 1.5);
    }

    #[test]
    fn a_window_reports_what_was_counted_and_starts_afresh() {
        let m = Meter::default();
        m.ack(Duration::from_millis(2));
        m.ack(Duration::from_millis(4));
        m.fanout(Duration::from_millis(3));
        m.error("busy");
        m.error("busy");
        m.reconnects.fetch_add(1, Ordering::Relaxed);
        Meter::gauge(&m.connections, 5);
        let r = StepReport::new(1, 2.0, m.take(), (2, 5));
        assert_eq!((r.moves, r.reconnects, r.connections), (2, 1, 5));
        assert_eq!(r.moves_per_s, 1.0);
        assert_eq!((r.ack.samples, r.ack.max_ms), (2, 4.0));
        assert_eq!(r.fanout.p50_ms, 3.0);
        assert_eq!(r.errors.get("busy"), Some(&2));
        let json = serde_json::to_value(&r).expect("serializes");
        assert_eq!(json["ack"]["p99_ms"], 4.0);
        assert!(r.line().contains("2 matches, 5 connections, 1.0 moves/s"));
        // The next window starts from nothing; gauges are not windowed.
        let next = m.take();
        assert_eq!((next.moves, next.ack.len(), next.errors.len()), (0, 0, 0));
        assert_eq!(m.connections.load(Ordering::Relaxed), 5);
    }
}
