//! The connection's outgoing queue as match actors see it: a bounded queue of encoded frames
//! and a "too slow" flag. Nothing here knows the WebSocket library; the connection's writer turns
//! [`Frame`]s into socket messages.

use crate::wire::Frame;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, mpsc};
use tracing::debug;

/// The sending side of one client connection, as seen by match actors.
#[derive(Debug, Clone)]
pub struct ConnHandle {
    pub id: u64,
    tx: mpsc::Sender<Frame>,
    too_slow: Arc<TooSlow>,
    /// Notified by the connection's writer each time it has written queued frames: a catch-up
    /// waiting for room in the queue goes on.
    drained: Arc<Notify>,
}

/// Raised when a connection's queue overflows; the connection task closes the socket with
/// `close::TOO_SLOW`.
#[derive(Debug, Default)]
pub struct TooSlow {
    raised: AtomicBool,
    notify: Notify,
}

impl TooSlow {
    pub fn raise(&self) {
        self.raised.store(true, Ordering::Release);
        self.notify.notify_one();
    }
    pub async fn wait(&self) {
        self.notify.notified().await;
    }
    pub fn is_raised(&self) -> bool {
        self.raised.load(Ordering::Acquire)
    }
}

impl ConnHandle {
    pub fn new(
        id: u64,
        tx: mpsc::Sender<Frame>,
        too_slow: Arc<TooSlow>,
        drained: Arc<Notify>,
    ) -> Self {
        ConnHandle {
            id,
            tx,
            too_slow,
            drained,
        }
    }

    /// Tells the connection to close as too slow.
    pub fn push_too_slow(&self) {
        self.too_slow.raise();
    }

    /// Queues a frame without waiting. False when the connection is gone or too slow (then it is
    /// told to close): the caller drops it. Once a connection is too slow nothing more is queued
    /// for it, so that what it still receives before the close has no hole.
    pub fn push(&self, frame: Frame) -> bool {
        if self.too_slow.is_raised() {
            return false;
        }
        match self.tx.try_send(frame) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.too_slow.raise();
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    /// Free places in the queue that a catch-up leaves to live frames (replies, the diffs of
    /// other matches): a quarter of the queue.
    fn headroom(&self) -> usize {
        self.tx.max_capacity().div_ceil(4)
    }

    /// How many frames may be queued at once now without eating into the headroom.
    pub(crate) fn room(&self) -> usize {
        self.tx.capacity().saturating_sub(self.headroom())
    }

    /// Queues a catch-up frame as the queue drains: waits while the queue is fuller than its
    /// headroom allows. A client that reads nothing for `patience` is too slow (and told so).
    /// False when the frame was not queued.
    pub(crate) async fn push_paced(&self, frame: Frame, patience: Duration) -> bool {
        loop {
            if self.too_slow.is_raised() || self.tx.is_closed() {
                return false;
            }
            // Registered before the check, so that a drain between the two is not missed.
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if self.room() > 0 {
                return self.push(frame);
            }
            if tokio::time::timeout(patience, drained).await.is_err() {
                debug!("catch-up: the client read nothing in time");
                self.too_slow.raise();
                return false;
            }
        }
    }
}
