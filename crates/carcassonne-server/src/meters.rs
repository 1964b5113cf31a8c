//! Metrics in the Prometheus text format, rendered by `GET /metrics` (see `http::metrics`).
//!
//! Each server has its own [`PrometheusRecorder`] (no global recorder): servers started by the
//! tests in one process keep their counts apart, and nothing depends on who installed what
//! first. Every series is registered once, here, with static names and labels, and the parts
//! hold the handles: counting a command is one atomic add, with no key lookup, no `format!` and
//! no allocation on the hot path. Gauges that are cheap to read (connections, matches in
//! memory) are set when scraped rather than kept up to date on every change.
//!
//! The exporter's own HTTP listener and push gateway are off (`default-features = false`): the
//! route lives in our router, behind our access rule (`--metrics`).

use crate::process_metrics;
use crate::store::sqlite_sync::SyncMeters;
use metrics::{Counter, Gauge, Histogram, Key, Label, Metadata, Recorder, SharedString, Unit};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use protocol::{ErrorCode, close};

const CONNECTIONS: &str = "carcassonne_connections";
const MATCHES: &str = "carcassonne_matches_in_memory";
const COMMANDS: &str = "carcassonne_commands_total";
const ACK: &str = "carcassonne_command_ack_seconds";
const COMMIT: &str = "carcassonne_store_commit_seconds";
const BATCH: &str = "carcassonne_store_batch_commands";
const SYNC: &str = "carcassonne_store_sync_seconds";
const SYNC_APPENDS: &str = "carcassonne_store_sync_appends";
const INBOX: &str = "carcassonne_match_inbox_depth";
const OUTGOING: &str = "carcassonne_outgoing_queue_depth";
const RESUMES: &str = "carcassonne_resumes_total";
const CLOSES: &str = "carcassonne_closes_total";
const RETENTION: &str = "carcassonne_retention_deleted_total";
/// A forward's round trip to a match's owner (cluster mode; `crate::cluster::meters`).
pub(crate) const FORWARD: &str = "carcassonne_cluster_forward_seconds";

/// Latency buckets in seconds, from half a millisecond (a SQLite commit on an idle machine) to
/// seconds (a store in trouble).
const SECONDS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];
/// Counts: batch sizes (up to `--max-batch`) and queue depths (up to the queues' bounds).
const COUNTS: &[f64] = &[
    0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
];

/// Every error code a command can be refused with: one counter each, indexed by `code as usize`.
const CODES: [ErrorCode; ErrorCode::ALL.len()] = ErrorCode::ALL;

/// What served a subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumeKind {
    /// The subscriber was up to date: nothing to send.
    Current,
    /// Diffs from the match's in-memory window.
    Window,
    /// Diffs read from the store.
    Store,
    /// A snapshot of the view.
    Snapshot,
}

const RESUME_KINDS: [(ResumeKind, &str); 4] = [
    (ResumeKind::Current, "current"),
    (ResumeKind::Window, "window"),
    (ResumeKind::Store, "store"),
    (ResumeKind::Snapshot, "snapshot"),
];

/// The close codes the server sends, and `none` for a connection that ended without one (the
/// client closed, or the socket failed).
const CLOSE_CODES: [(Option<u16>, &str); 9] = [
    (None, "none"),
    (Some(1001), "1001"),
    (Some(1002), "1002"),
    (Some(1007), "1007"),
    (Some(1009), "1009"),
    (Some(close::HEARTBEAT_TIMEOUT), "4000"),
    (Some(close::TOO_SLOW), "4001"),
    (Some(close::SESSION_REVOKED), "4002"),
    (Some(close::MOVED), "4003"),
];

/// The server's metrics: the recorder's handle (to render) and one handle per series.
pub struct Metrics {
    handle: PrometheusHandle,
    connections: Gauge,
    matches: Gauge,
    accepted: Counter,
    duplicate: Counter,
    refused: [Counter; CODES.len()],
    /// From a command's arrival on its connection to its ack, queued for the sender.
    pub ack_latency: Histogram,
    /// One append (a match's batch), as the actor waits for it: on SQLite, with the wait for
    /// the group commit.
    pub store_commit: Histogram,
    /// Commands written by one append.
    pub store_batch: Histogram,
    /// SQLite only: the syncer's fdatasyncs, and the appends each made durable (the group
    /// commit's size as the disk sees it). `None` on Postgres, which syncs its own way.
    pub store_sync: Option<SyncMeters>,
    /// Messages in a match's inbox when the actor drains it, sampled at each drain.
    pub inbox_depth: Histogram,
    /// Frames in a connection's outgoing queue when its writer wakes, sampled at each write.
    pub outgoing_depth: Histogram,
    resumes: [Counter; RESUME_KINDS.len()],
    closes: [Counter; CLOSE_CODES.len()],
    other_close: Counter,
    /// Deleted by retention: guests, chat lines, matches.
    retention: [Counter; 3],
    /// For the series another part registers later (the cluster's, which know the node id).
    recorder: metrics_exporter_prometheus::PrometheusRecorder,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

static META: Metadata<'static> = Metadata::new(module_path!(), metrics::Level::INFO, None);

impl Metrics {
    /// Registers every series once; `store` (the store's kind) labels the store's series.
    pub fn new(store: &'static str) -> Metrics {
        let mut builder = PrometheusBuilder::new();
        for (name, buckets) in [
            (ACK, SECONDS),
            (COMMIT, SECONDS),
            (BATCH, COUNTS),
            (SYNC, SECONDS),
            (SYNC_APPENDS, COUNTS),
            (INBOX, COUNTS),
            (OUTGOING, COUNTS),
            (FORWARD, SECONDS),
        ] {
            // The only error is an empty bucket list, and none of these is empty.
            builder = builder
                .set_buckets_for_metric(Matcher::Full(name.to_string()), buckets)
                .expect("bucket lists are not empty");
        }
        let r = builder.build_recorder();
        // Only SQLite has a syncer of ours; Postgres syncs its own way.
        let sqlite = store == "sqlite";
        let describe = |name: &'static str, unit: Option<Unit>, help: &'static str| {
            let help = SharedString::const_str(help);
            match name {
                CONNECTIONS | MATCHES => r.describe_gauge(name.into(), unit, help),
                COMMANDS | RESUMES | CLOSES | RETENTION => {
                    r.describe_counter(name.into(), unit, help)
                }
                _ => r.describe_histogram(name.into(), unit, help),
            }
        };
        describe(CONNECTIONS, None, "Open WebSocket connections.");
        describe(MATCHES, None, "Match actors in memory (loading or loaded).");
        describe(
            COMMANDS,
            None,
            "Commands answered, by outcome (accepted, duplicate, refused) and, when refused, by error code.",
        );
        describe(
            ACK,
            Some(Unit::Seconds),
            "From a command's arrival on its connection to its ack (after the store's commit).",
        );
        describe(
            COMMIT,
            Some(Unit::Seconds),
            "One append of a match's batch to the store, as the match waits for it.",
        );
        describe(BATCH, None, "Commands written by one append.");
        if sqlite {
            describe(
                SYNC,
                Some(Unit::Seconds),
                "One fdatasync of the SQLite WAL, which every append waits for.",
            );
            describe(
                SYNC_APPENDS,
                None,
                "Writes made durable by one fdatasync of the SQLite WAL: appends of match batches, and the other writes (a new match, an account).",
            );
        }
        describe(
            INBOX,
            None,
            "Messages in a match's inbox when its actor drains it.",
        );
        describe(
            OUTGOING,
            None,
            "Frames in a connection's outgoing queue when its writer wakes.",
        );
        describe(
            RESUMES,
            None,
            "Subscriptions, by what served them: current, window, store, snapshot.",
        );
        describe(
            CLOSES,
            None,
            "Connections ended, by the close code the server sent (none: the client closed or the socket failed).",
        );
        describe(
            RETENTION,
            None,
            "Rows deleted by the retention passes, by kind: guests (accounts), chat (lines), matches.",
        );

        let counter = |name: &'static str, labels: &[(&'static str, &'static str)]| {
            let labels: Vec<Label> = labels
                .iter()
                .map(|&(k, v)| Label::from_static_parts(k, v))
                .collect();
            r.register_counter(&Key::from_parts(name, labels), &META)
        };
        let plain = |name: &'static str| Key::from_static_name(name);
        let stored = |name: &'static str| Key::from_parts(name, vec![Label::new("store", store)]);
        Metrics {
            connections: r.register_gauge(&plain(CONNECTIONS), &META),
            matches: r.register_gauge(&plain(MATCHES), &META),
            // Every sample of a name has the same label keys: `code` is `none` unless refused.
            accepted: counter(COMMANDS, &[("outcome", "accepted"), ("code", "none")]),
            duplicate: counter(COMMANDS, &[("outcome", "duplicate"), ("code", "none")]),
            refused: CODES
                .map(|code| counter(COMMANDS, &[("outcome", "refused"), ("code", code.as_str())])),
            ack_latency: r.register_histogram(&plain(ACK), &META),
            store_commit: r.register_histogram(&stored(COMMIT), &META),
            store_batch: r.register_histogram(&stored(BATCH), &META),
            store_sync: sqlite.then(|| SyncMeters {
                seconds: r.register_histogram(&stored(SYNC), &META),
                appends: r.register_histogram(&stored(SYNC_APPENDS), &META),
            }),
            inbox_depth: r.register_histogram(&plain(INBOX), &META),
            outgoing_depth: r.register_histogram(&plain(OUTGOING), &META),
            resumes: RESUME_KINDS.map(|(_, kind)| counter(RESUMES, &[("kind", kind)])),
            closes: CLOSE_CODES.map(|(_, code)| counter(CLOSES, &[("code", code)])),
            other_close: counter(CLOSES, &[("code", "other")]),
            retention: ["guests", "chat", "matches"]
                .map(|kind| counter(RETENTION, &[("kind", kind)])),
            handle: r.handle(),
            recorder: r,
        }
    }

    /// Registers a counter of another part, with its help text.
    pub(crate) fn counter(
        &self,
        name: &'static str,
        labels: Vec<Label>,
        help: &'static str,
    ) -> Counter {
        self.recorder
            .describe_counter(name.into(), None, SharedString::const_str(help));
        self.recorder
            .register_counter(&Key::from_parts(name, labels), &META)
    }

    /// Registers a gauge of another part, with its help text.
    pub(crate) fn gauge(
        &self,
        name: &'static str,
        labels: Vec<Label>,
        help: &'static str,
    ) -> Gauge {
        self.recorder
            .describe_gauge(name.into(), None, SharedString::const_str(help));
        self.recorder
            .register_gauge(&Key::from_parts(name, labels), &META)
    }

    /// Registers a histogram of another part, with its help text (its buckets are set above).
    pub(crate) fn histogram(
        &self,
        name: &'static str,
        labels: Vec<Label>,
        help: &'static str,
    ) -> Histogram {
        self.recorder.describe_histogram(
            name.into(),
            Some(Unit::Seconds),
            SharedString::const_str(help),
        );
        self.recorder
            .register_histogram(&Key::from_parts(name, labels), &META)
    }

    /// A command acknowledged (stored).
    pub fn accepted(&self) {
        self.accepted.increment(1);
    }

    /// A repeated command id, answered with its first answer.
    pub fn duplicate(&self) {
        self.duplicate.increment(1);
    }

    /// A command refused with `code`.
    pub fn refused(&self, code: ErrorCode) {
        self.refused[code as usize].increment(1);
    }

    pub fn resumed(&self, kind: ResumeKind) {
        if let Some(i) = RESUME_KINDS.iter().position(|(k, _)| *k == kind) {
            self.resumes[i].increment(1);
        }
    }

    /// A connection ended; `code` is the close code the server sent, if any.
    pub fn closed(&self, code: Option<u16>) {
        match CLOSE_CODES.iter().position(|(c, _)| *c == code) {
            Some(i) => self.closes[i].increment(1),
            None => self.other_close.increment(1),
        }
    }

    /// What a retention pass deleted.
    pub fn retention_deleted(&self, d: &crate::store::Deleted) {
        for (counter, n) in self.retention.iter().zip([d.guests, d.chat, d.matches]) {
            counter.increment(n);
        }
    }

    /// The text exposition, with the gauges read now, then the process and build-info series.
    pub fn render(&self, connections: usize, matches: usize) -> String {
        self.connections.set(connections as f64);
        self.matches.set(matches as f64);
        let mut text = self.handle.render();
        process_metrics::write_process(&mut text);
        process_metrics::write_build_info(&mut text);
        text
    }

    /// Moves recorded histogram samples into their buckets; called periodically so that memory
    /// stays bounded between scrapes (or without any).
    pub fn upkeep(&self) {
        self.handle.run_upkeep();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code and close code has its own series; the text names them as the README says.
    #[test]
    fn every_series_renders_with_its_labels() {
        let m = Metrics::new("sqlite");
        for code in CODES {
            m.refused(code);
        }
        m.accepted();
        m.resumed(ResumeKind::Store);
        m.closed(Some(close::TOO_SLOW));
        m.closed(Some(4999));
        m.retention_deleted(&crate::store::Deleted {
            guests: 2,
            chat: 0,
            matches: 1,
        });
        m.ack_latency.record(0.002);
        m.store_batch.record(3.0);
        if let Some(sync) = &m.store_sync {
            sync.seconds.record(0.0003);
            sync.appends.record(5.0);
        }
        let text = m.render(2, 1);
        for code in CODES {
            let line = format!(
                "{COMMANDS}{{outcome=\"refused\",code=\"{}\"}} 1",
                code.as_str()
            );
            assert!(text.contains(&line), "{line} in\n{text}");
        }
        for line in [
            "carcassonne_commands_total{outcome=\"accepted\",code=\"none\"} 1",
            "carcassonne_resumes_total{kind=\"store\"} 1",
            "carcassonne_closes_total{code=\"4001\"} 1",
            "carcassonne_closes_total{code=\"other\"} 1",
            "carcassonne_retention_deleted_total{kind=\"guests\"} 2",
            "carcassonne_retention_deleted_total{kind=\"chat\"} 0",
            "carcassonne_retention_deleted_total{kind=\"matches\"} 1",
            "carcassonne_connections 2",
            "carcassonne_matches_in_memory 1",
            "carcassonne_command_ack_seconds_bucket{le=\"0.0025\"} 1",
            "carcassonne_store_batch_commands_bucket{store=\"sqlite\",le=\"4\"} 1",
            "carcassonne_store_sync_seconds_bucket{store=\"sqlite\",le=\"0.0005\"} 1",
            "carcassonne_store_sync_appends_bucket{store=\"sqlite\",le=\"8\"} 1",
            "# TYPE carcassonne_command_ack_seconds histogram",
        ] {
            assert!(text.contains(line), "{line} in\n{text}");
        }
    }

    /// Postgres has no syncer of ours: no sync series.
    #[test]
    fn sync_series_are_sqlite_only() {
        let m = Metrics::new("postgres");
        assert!(m.store_sync.is_none());
        m.store_batch.record(1.0);
        let text = m.render(0, 0);
        assert!(text.contains("carcassonne_store_batch_commands"), "{text}");
        assert!(!text.contains("carcassonne_store_sync"), "{text}");
    }
}
