//! What the connections of one match share in the human-pace run: one mirror of the public
//! view, how many are subscribed, whether the match is over, and the fan-out bookkeeping.

use super::meter::Meter;
use client::Mirror;
use protocol::Seq;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::time::Instant;
use uuid::Uuid;

/// Diffs whose fan-out is still being timed, per match (older ones are dropped).
const FANOUT_KEPT: usize = 64;

/// What the connections of one match share.
#[derive(Debug)]
pub(crate) struct Table {
    pub(crate) match_id: Uuid,
    /// The public view, the same for every connection: whoever reads a diff first applies it.
    pub(crate) view: Mutex<Option<Mirror>>,
    /// Connections subscribed now: a diff's fan-out ends when this many have read it.
    pub(crate) subscribers: AtomicUsize,
    pub(crate) finished: AtomicBool,
    fans: Mutex<BTreeMap<Seq, Fan>>,
}

/// One diff's way to its subscribers: when the sender read its ack, when the last reader read
/// the diff, and how many have.
#[derive(Debug, Default)]
struct Fan {
    acked: Option<Instant>,
    last: Option<Instant>,
    read: usize,
}

impl Table {
    pub(crate) fn new(match_id: Uuid) -> Table {
        Table {
            match_id,
            view: Mutex::new(None),
            subscribers: AtomicUsize::new(0),
            finished: AtomicBool::new(false),
            fans: Mutex::new(BTreeMap::new()),
        }
    }

    /// The sender read the ack of the command that became `seq`.
    pub(crate) fn acked(&self, seq: Seq, at: Instant, meter: &Meter) {
        self.fan(seq, meter, |f| f.acked = Some(at));
    }

    /// A subscriber read diff `seq`.
    pub(crate) fn read(&self, seq: Seq, at: Instant, meter: &Meter) {
        self.fan(seq, meter, |f| {
            f.read += 1;
            f.last = Some(f.last.map_or(at, |l| l.max(at)));
        });
    }

    /// Records the fan-out (ack to the last subscriber's diff; 0 when every subscriber had it
    /// before the sender had its ack) once the diff is acked and read by every subscriber.
    fn fan(&self, seq: Seq, meter: &Meter, update: impl FnOnce(&mut Fan)) {
        let Ok(mut fans) = self.fans.lock() else {
            return;
        };
        let f = fans.entry(seq).or_default();
        update(f);
        let everyone = self.subscribers.load(Ordering::Relaxed).max(1);
        if let (Some(acked), Some(last)) = (f.acked, f.last)
            && f.read >= everyone
        {
            meter.fanout(last.saturating_duration_since(acked));
            fans.remove(&seq);
        }
        while fans.len() > FANOUT_KEPT {
            fans.pop_first();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn fan_out_is_timed_once_every_subscriber_read_the_diff() {
        let meter = Meter::default();
        let table = Table::new(Uuid::nil());
        table.subscribers.store(3, Ordering::Relaxed);
        let t0 = Instant::now();
        table.read(5, t0, &meter);
        table.acked(5, t0 + Duration::from_millis(1), &meter);
        table.read(5, t0 + Duration::from_millis(2), &meter);
        assert_eq!(meter.take().fanout.len(), 0, "two of three have read it");
        table.read(5, t0 + Duration::from_millis(7), &meter);
        assert_eq!(meter.take().fanout, vec![6000]);
        // Everyone before the ack: a fan-out of 0.
        table.subscribers.store(1, Ordering::Relaxed);
        table.read(6, t0, &meter);
        table.acked(6, t0 + Duration::from_millis(3), &meter);
        assert_eq!(meter.take().fanout, vec![0]);
    }
}
