//! The connection's outgoing queue as match actors see it: a bounded queue of encoded frames
//! and the connection's [`Signals`] (a "too slow" flag among them). Nothing here knows the WebSocket library; the connection's writer turns
//! [`Frame`]s into socket messages.

use crate::wire::Frame;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};
use std::time::Duration;
use tokio::sync::Notify;
use tracing::debug;

use crate::queue;

mod publisher;
pub use publisher::{Publication, Publisher};

/// The sending end of a connection's outgoing queue (the match actors' side).
pub type Sender = queue::Sender<Frame>;
/// The receiving end of a connection's outgoing queue (its writer's side).
pub type Receiver = queue::Receiver<Frame>;
/// Why a frame was not queued; the frame comes back.
pub type TrySendError = queue::TrySendError<Frame>;

/// A connection's outgoing queue of at most `capacity` frames: it holds memory only while
/// frames wait, as a server holds many idle connections.
pub fn channel(capacity: usize) -> (Sender, Receiver) {
    queue::channel(capacity)
}

/// Where each kind of connection takes its ids, apart, because an actor knows its subscribers
/// by id: the node's own sockets count up from 1, the stand-ins of other nodes' connections
/// (cluster) from here, ...
pub const REMOTE_IDS_FROM: u64 = u64::MAX / 2;
/// ... and the lobbies' bots from here.
pub const BOT_IDS_FROM: u64 = u64::MAX / 4 * 3;

/// Whether `id` is a stand-in's: a connection of another node, whose diffs that node takes from
/// the match's publications.
pub fn is_stand_in(id: u64) -> bool {
    (REMOTE_IDS_FROM..BOT_IDS_FROM).contains(&id)
}

/// The sending side of one client connection, as seen by match actors. Cloned for every
/// command a connection hands to its match, so it is one shared allocation (one reference count
/// to touch per clone and per drop).
#[derive(Debug, Clone)]
pub struct ConnHandle {
    pub id: u64,
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    tx: Sender,
    signals: Arc<Signals>,
    /// Catch-ups waiting on `drained` now. The writer notifies only when there is one:
    /// `Notify::notify_waiters` takes a lock every time, and a write per frame batch is the
    /// connection's hot path.
    paced: AtomicUsize,
}

/// What a connection's queue and the task that empties it tell each other, in one allocation
/// (a server holds many idle connections): what closes the connection (an overflow, a moved
/// match, a revoked session), the writes that make room for a paced catch-up, and whether the
/// server takes commands.
#[derive(Debug, Default)]
pub struct Signals {
    /// Raised when the queue overflows; the connection's task closes the socket with
    /// `close::TOO_SLOW`.
    raised: AtomicBool,
    /// Raised because the match moved to another node, not because the client was slow.
    moved: AtomicBool,
    /// Raised when the connection's account session was revoked: it closes with
    /// `close::SESSION_REVOKED`.
    revoked: AtomicBool,
    /// Notified (with a stored permit) when one of the flags above is raised.
    notify: Notify,
    /// Notified by the connection's writer each time it has written queued frames: a catch-up
    /// waiting for room in the queue goes on.
    drained: Notify,
    /// Whether the server takes commands (`Lifecycle::Running`), as the connection's loop last
    /// saw the lifecycle change: a command reads this flag instead of the lifecycle, whose lock
    /// every connection shares. Unused by the stand-ins and bots.
    pub accepting: AtomicBool,
}

impl Signals {
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
    /// Raised by [`ConnHandle::close_moved`].
    pub fn is_moved(&self) -> bool {
        self.moved.load(Ordering::Acquire)
    }
    /// Tells the connection that its session was revoked.
    pub fn revoke(&self) {
        self.revoked.store(true, Ordering::Release);
        self.notify.notify_one();
    }
    pub fn is_revoked(&self) -> bool {
        self.revoked.load(Ordering::Acquire)
    }
    /// Wakes the catch-ups waiting for room in the queue (after a write).
    pub fn drained(&self) {
        self.drained.notify_waiters();
    }
}

/// Counts a waiting catch-up for as long as it lives.
struct Pacing<'a>(&'a AtomicUsize);

impl Drop for Pacing<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ConnHandle {
    pub fn new(id: u64, tx: Sender, signals: Arc<Signals>) -> Self {
        ConnHandle {
            id,
            inner: Arc::new(Inner {
                tx,
                signals,
                paced: AtomicUsize::new(0),
            }),
        }
    }

    /// The connection's signals.
    pub fn signals(&self) -> &Signals {
        &self.inner.signals
    }

    /// Whether nothing queued here will be read any more: told to close, or its reader gone.
    pub fn is_gone(&self) -> bool {
        self.inner.signals.is_raised() || self.inner.tx.is_closed()
    }

    /// Tells the connection to close because its match moved to another node (4003): what is
    /// queued is written first, nothing more is queued.
    pub fn close_moved(&self) {
        self.inner.signals.moved.store(true, Ordering::Release);
        self.inner.signals.raise();
    }

    /// Tells the connection to close as too slow.
    pub fn close_too_slow(&self) {
        self.inner.signals.raise();
    }

    /// Queues a frame without waiting. False when the connection is gone or too slow (then it is
    /// told to close): the caller drops it. Once a connection is too slow nothing more is queued
    /// for it, so that what it still receives before the close has no hole.
    pub fn push(&self, frame: Frame) -> bool {
        let inner = &*self.inner;
        if inner.signals.is_raised() {
            return false;
        }
        match inner.tx.try_send(frame) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                inner.signals.raise();
                false
            }
            Err(TrySendError::Closed(_)) => false,
        }
    }

    /// Called by the connection's writer after each write: wakes the catch-ups waiting for room,
    /// if any. The writer took the frames out of the queue before writing them, so a catch-up
    /// that counted itself in after this check sees that room when it looks.
    pub(crate) fn wrote(&self) {
        // Orders the queue's freed places (taken before the write) before the count's load,
        // against the catch-up's count before its look at the queue.
        fence(Ordering::SeqCst);
        if self.inner.paced.load(Ordering::Relaxed) > 0 {
            self.inner.signals.drained();
        }
    }

    /// Free places in the queue that a catch-up leaves to live frames (replies, the diffs of
    /// other matches): a quarter of the queue.
    fn headroom(&self) -> usize {
        self.inner.tx.max_capacity().div_ceil(4)
    }

    /// How many frames may be queued at once now without eating into the headroom.
    pub(crate) fn room(&self) -> usize {
        self.inner.tx.capacity().saturating_sub(self.headroom())
    }

    /// Queues a catch-up frame as the queue drains: waits while the queue is fuller than its
    /// headroom allows. A client that reads nothing for `patience` is too slow (and told so).
    /// False when the frame was not queued.
    pub(crate) async fn push_paced(&self, frame: Frame, patience: Duration) -> bool {
        let inner = &*self.inner;
        loop {
            if inner.signals.is_raised() || inner.tx.is_closed() {
                return false;
            }
            // Counted, then registered, then the check: a drain between any two is not missed.
            inner.paced.fetch_add(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            let _pacing = Pacing(&inner.paced);
            let drained = inner.signals.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if self.room() > 0 {
                return self.push(frame);
            }
            if tokio::time::timeout(patience, drained).await.is_err() {
                debug!("catch-up: the client read nothing in time");
                inner.signals.raise();
                return false;
            }
        }
    }
}
