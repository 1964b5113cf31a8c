//! The retention task: every `--retention-interval` it deletes what the retention settings let
//! go ([`crate::store::Store::purge`] has what goes and what stays), logs each pass with its
//! counts, and counts the deletions in the metrics. The first pass waits a minute, so that a
//! start does its recovery first.

use crate::config::RetentionConfig;
use crate::meters::Metrics;
use crate::store::{Cutoffs, Store};
use std::sync::Arc;
use std::time::Duration;
use tracing::{error, info};

/// The wait before the first pass.
const FIRST_PASS: Duration = Duration::from_secs(60);

/// Starts the task, or nothing when every kind is kept.
pub fn spawn(
    store: Store,
    config: &RetentionConfig,
    metrics: Arc<Metrics>,
) -> Option<tokio::task::JoinHandle<()>> {
    let days = config.days();
    if days.iter().all(Option::is_none) {
        return None;
    }
    let interval = config.retention_interval;
    Some(tokio::spawn(async move {
        let start = tokio::time::Instant::now() + FIRST_PASS.min(interval);
        let mut every = tokio::time::interval_at(start, interval);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            pass(&store, days, &metrics).await;
        }
    }))
}

/// One pass as of the clock's now.
async fn pass(store: &Store, days: [Option<u32>; 3], metrics: &Metrics) {
    let cutoffs = Cutoffs::before(chrono::Utc::now(), days);
    match store.purge(&cutoffs).await {
        Ok(d) => {
            metrics.retention_deleted(&d);
            info!(
                guests = d.guests,
                chat = d.chat,
                matches = d.matches,
                "retention pass"
            );
        }
        Err(e) => error!(error = %e, "retention pass failed"),
    }
}
