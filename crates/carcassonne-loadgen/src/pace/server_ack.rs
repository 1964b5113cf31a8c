//! The server's own ack latency over a step's window, read from its `/metrics` at the window's
//! start and end (`--server-metrics`). Beside the latency the load process measures, it tells
//! the server's part (a command's arrival to its ack, queued for the sender) from the rest: the
//! network, the server's socket writes and the load process's own scheduling. A tail that one
//! load process sees and the server does not is the load process's.

use crate::error::LoadError;
use serde::Serialize;

/// The server's histogram of arrival-to-ack times (`crate::meters` in the server).
const ACK_BUCKET: &str = "carcassonne_command_ack_seconds_bucket";

/// A histogram as scraped: cumulative counts by upper bound in seconds, ascending, summed over
/// every label set (a cluster node's `node` label, say).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Buckets(Vec<(f64, f64)>);

impl Buckets {
    /// The ack histogram's buckets in a Prometheus text exposition; empty if it has none.
    pub(crate) fn parse(text: &str) -> Buckets {
        let mut out: Vec<(f64, f64)> = Vec::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix(ACK_BUCKET) else {
                continue;
            };
            let Some((labels, value)) = rest.rsplit_once(' ') else {
                continue;
            };
            let le = labels
                .split("le=\"")
                .nth(1)
                .and_then(|v| v.split('"').next());
            let bound = match le {
                Some("+Inf") => f64::INFINITY,
                Some(v) => match v.parse::<f64>() {
                    Ok(b) => b,
                    Err(_) => continue,
                },
                None => continue,
            };
            let Ok(count) = value.trim().parse::<f64>() else {
                continue;
            };
            match out.iter_mut().find(|(b, _)| *b == bound) {
                Some((_, c)) => *c += count,
                None => out.push((bound, count)),
            }
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        Buckets(out)
    }

    /// What was counted between `self` (the window's start) and `later` (its end).
    pub(crate) fn window(&self, later: &Buckets) -> ServerAck {
        let counts: Vec<(f64, f64)> = later
            .0
            .iter()
            .map(|&(bound, c)| {
                let before = self
                    .0
                    .iter()
                    .find(|(b, _)| *b == bound)
                    .map_or(0.0, |&(_, c)| c);
                (bound, (c - before).max(0.0))
            })
            .collect();
        let samples = counts.last().map_or(0.0, |&(_, c)| c);
        let over = |ms: f64| -> f64 {
            if samples <= 0.0 {
                return 0.0;
            }
            let within = counts
                .iter()
                .find(|(b, _)| (*b - ms / 1000.0).abs() < 1e-9)
                .map_or(samples, |&(_, c)| c);
            100.0 * (samples - within) / samples
        };
        let p99_le_ms = counts
            .iter()
            .find(|&&(_, c)| samples > 0.0 && c >= 0.99 * samples)
            .map(|&(b, _)| b * 1000.0)
            .filter(|b| b.is_finite());
        ServerAck {
            samples: samples as u64,
            over_25ms_pct: over(25.0),
            over_50ms_pct: over(50.0),
            over_100ms_pct: over(100.0),
            p99_le_ms,
        }
    }
}

/// The server's acks over a window: how many, the share over 25, 50 and 100 ms (bucket bounds
/// of the server's histogram), and the bound its p99 falls under (none: over the last bound).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct ServerAck {
    pub(crate) samples: u64,
    pub(crate) over_25ms_pct: f64,
    pub(crate) over_50ms_pct: f64,
    pub(crate) over_100ms_pct: f64,
    pub(crate) p99_le_ms: Option<f64>,
}

/// Reads the server's ack histogram now.
pub(crate) async fn scrape(url: &str) -> Result<Buckets, LoadError> {
    let (status, body) =
        client::http_get(&format!("{}/metrics", url.trim_end_matches('/'))).await?;
    if status != 200 {
        return Err(LoadError::Args(format!(
            "--server-metrics: GET /metrics answered {status}; start the server with \
             --metrics-access open"
        )));
    }
    Ok(Buckets::parse(&body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(counts: [u64; 5]) -> String {
        let [a, b, c, d, e] = counts;
        format!(
            "# TYPE carcassonne_command_ack_seconds histogram\n\
             carcassonne_command_ack_seconds_bucket{{le=\"0.01\"}} {a}\n\
             carcassonne_command_ack_seconds_bucket{{le=\"0.025\"}} {b}\n\
             carcassonne_command_ack_seconds_bucket{{le=\"0.05\"}} {c}\n\
             carcassonne_command_ack_seconds_bucket{{le=\"0.1\"}} {d}\n\
             carcassonne_command_ack_seconds_bucket{{le=\"+Inf\"}} {e}\n\
             carcassonne_command_ack_seconds_sum 1.5\n\
             carcassonne_store_commit_seconds_bucket{{le=\"0.01\"}} 999\n"
        )
    }

    #[test]
    fn a_window_counts_only_what_the_server_acked_within_it() {
        let start = Buckets::parse(&text([100, 100, 100, 100, 100]));
        let end = Buckets::parse(&text([1090, 1180, 1190, 1195, 1200]));
        let w = start.window(&end);
        assert_eq!(w.samples, 1100);
        assert!(
            (w.over_25ms_pct - 100.0 * 20.0 / 1100.0).abs() < 1e-9,
            "{w:?}"
        );
        assert!(
            (w.over_50ms_pct - 100.0 * 10.0 / 1100.0).abs() < 1e-9,
            "{w:?}"
        );
        assert!(
            (w.over_100ms_pct - 100.0 * 5.0 / 1100.0).abs() < 1e-9,
            "{w:?}"
        );
        // 99 % of 1,100 is 1,089: the 25 ms bucket holds 1,080 of them, the 50 ms one 1,090.
        assert_eq!(w.p99_le_ms, Some(50.0));
    }

    #[test]
    fn label_sets_are_summed_and_other_series_ignored() {
        let two_nodes = "carcassonne_command_ack_seconds_bucket{node=\"a\",le=\"0.05\"} 3\n\
                         carcassonne_command_ack_seconds_bucket{node=\"b\",le=\"0.05\"} 4\n\
                         carcassonne_command_ack_seconds_bucket{node=\"a\",le=\"+Inf\"} 5\n\
                         carcassonne_command_ack_seconds_bucket{node=\"b\",le=\"+Inf\"} 6\n";
        let b = Buckets::parse(two_nodes);
        assert_eq!(b, Buckets(vec![(0.05, 7.0), (f64::INFINITY, 11.0)]));
        assert_eq!(
            Buckets::parse("carcassonne_store_commit_seconds_bucket{le=\"1\"} 9\n"),
            Buckets::default()
        );
        // A tail past the last finite bound has no p99 bound to name.
        let w = Buckets::default().window(&b);
        assert_eq!((w.samples, w.p99_le_ms), (11, None));
        assert!((w.over_50ms_pct - 100.0 * 4.0 / 11.0).abs() < 1e-9);
        assert_eq!(
            Buckets::default().window(&Buckets::default()),
            ServerAck::default()
        );
    }
}
