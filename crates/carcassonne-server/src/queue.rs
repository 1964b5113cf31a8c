//! A bounded queue with many senders and one receiver that holds storage only while items wait:
//! an empty queue is one small allocation, where a tokio `mpsc` channel allocates its channel and
//! a first block of 32 slots when it is made (≈ 1.5 KB for 48-byte items). A server holds many
//! idle ones: a connection's outgoing frames ([`crate::outbox`]) and a match actor's inbox
//! ([`crate::actor`]).
//!
//! Senders either queue without waiting ([`Sender::try_send`], the connections' path) or wait for
//! room ([`Sender::send`]); the receiver reads, may close the queue and still drain what waits.
//! Waiting for room costs nothing while nobody waits: the receiver wakes senders only when one
//! counted itself in, under the lock it takes anyway.

use futures_util::task::AtomicWaker;
use std::collections::VecDeque;
use std::fmt;
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use tokio::sync::Notify;

/// A queue of at most `capacity` items (at least 1).
pub fn channel<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: VecDeque::new(),
            waiting: 0,
        }),
        capacity: capacity.max(1),
        senders: AtomicUsize::new(1),
        closed: AtomicBool::new(false),
        waker: AtomicWaker::new(),
        room: Notify::new(),
    });
    (
        Sender {
            shared: Arc::clone(&shared),
        },
        Receiver { shared },
    )
}

struct Shared<T> {
    state: Mutex<State<T>>,
    capacity: usize,
    /// Strong senders: the queue ends for the receiver when the last goes. Weak ones count not.
    senders: AtomicUsize,
    /// The receiver closed the queue or is gone. Set under the state's lock, and read there by
    /// the senders, so that nothing is queued after the receiver's last look.
    closed: AtomicBool,
    /// The receiver's waker, woken by each item queued and by the last sender's drop.
    waker: AtomicWaker,
    /// Notified when room frees while a [`Sender::send`] waits, and at the close (which
    /// [`Sender::closed`] waits for).
    room: Notify,
}

struct State<T> {
    items: VecDeque<T>,
    /// [`Sender::send`]s waiting for room now.
    waiting: usize,
}

impl<T> Shared<T> {
    /// The state; a panic while it was held cannot leave it half changed (a push, a pop or a
    /// count is one call), so a poisoned lock is used as it is.
    fn state(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Closes the queue for the senders and wakes the ones that wait.
    fn close(&self) {
        {
            let _state = self.state();
            self.closed.store(true, Ordering::Release);
        }
        self.room.notify_waiters();
    }
}

/// Why an item was not queued; the item comes back.
#[derive(Debug, PartialEq, Eq)]
pub enum TrySendError<T> {
    /// The queue holds `capacity` items.
    Full(T),
    /// The receiver closed the queue or is gone.
    Closed(T),
}

/// The receiver closed the queue or is gone; the item comes back.
#[derive(Debug, PartialEq, Eq)]
pub struct SendError<T>(pub T);

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the queue is closed")
    }
}

impl<T: fmt::Debug> std::error::Error for SendError<T> {}

impl<T> fmt::Display for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TrySendError::Full(_) => "the queue is full",
            TrySendError::Closed(_) => "the queue is closed",
        })
    }
}

impl<T: fmt::Debug> std::error::Error for TrySendError<T> {}

/// A sending end; the queue ends (for the receiver) when every sender is dropped.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::Relaxed);
        Sender {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.waker.wake();
        }
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("capacity", &self.shared.capacity)
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// Counts a waiting [`Sender::send`] for as long as it waits (a dropped send included).
struct Waiting<'a, T>(&'a Shared<T>);

impl<T> Drop for Waiting<'_, T> {
    fn drop(&mut self) {
        self.0.state().waiting -= 1;
    }
}

impl<T> Sender<T> {
    /// Queues `item` without waiting.
    pub fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
        let shared = &*self.shared;
        {
            let mut state = shared.state();
            if shared.closed.load(Ordering::Relaxed) {
                return Err(TrySendError::Closed(item));
            }
            if state.items.len() >= shared.capacity {
                return Err(TrySendError::Full(item));
            }
            state.items.push_back(item);
        }
        shared.waker.wake();
        Ok(())
    }

    /// Queues `item`, waiting for room; fails once the receiver closed the queue or is gone.
    pub async fn send(&self, item: T) -> Result<(), SendError<T>> {
        let shared = &*self.shared;
        loop {
            // Made before the look at the queue: a room notice given after the look reaches it.
            let room = shared.room.notified();
            {
                let mut state = shared.state();
                if shared.closed.load(Ordering::Relaxed) {
                    return Err(SendError(item));
                }
                if state.items.len() < shared.capacity {
                    state.items.push_back(item);
                    drop(state);
                    shared.waker.wake();
                    return Ok(());
                }
                state.waiting += 1;
            }
            let _waiting = Waiting(shared);
            room.await;
        }
    }

    /// Whether the receiver closed the queue or is gone.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }

    /// Waits until the receiver closes the queue or is gone.
    pub async fn closed(&self) {
        loop {
            let notice = self.shared.room.notified();
            if self.is_closed() {
                return;
            }
            notice.await;
        }
    }

    /// A sender that does not keep the queue open ([`WeakSender::upgrade`]).
    pub fn downgrade(&self) -> WeakSender<T> {
        WeakSender {
            shared: Arc::clone(&self.shared),
        }
    }

    /// The most items the queue holds.
    pub fn max_capacity(&self) -> usize {
        self.shared.capacity
    }

    /// Free places now.
    pub fn capacity(&self) -> usize {
        self.shared
            .capacity
            .saturating_sub(self.shared.state().items.len())
    }
}

/// A sender that does not count: the receiver sees the end when the strong ones are gone.
pub struct WeakSender<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for WeakSender<T> {
    fn clone(&self) -> Self {
        WeakSender {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> fmt::Debug for WeakSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakSender").finish_non_exhaustive()
    }
}

impl<T> WeakSender<T> {
    /// A strong sender, while another strong one lives (the queue has not ended).
    pub fn upgrade(&self) -> Option<Sender<T>> {
        self.shared
            .senders
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n > 0).then_some(n + 1)
            })
            .ok()
            .map(|_| Sender {
                shared: Arc::clone(&self.shared),
            })
    }
}

/// The receiving end.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        // What waits is never read: its memory goes now, not with the last sender, and outside
        // the lock (dropping an item may drop much).
        let items = {
            let mut state = self.shared.state();
            self.shared.closed.store(true, Ordering::Release);
            std::mem::take(&mut state.items)
        };
        self.shared.room.notify_waiters();
        drop(items);
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("capacity", &self.shared.capacity)
            .field("len", &self.len())
            .finish()
    }
}

impl<T> Receiver<T> {
    /// The next item, if one waits; the storage goes back once the queue is empty.
    pub fn try_recv(&mut self) -> Option<T> {
        let mut state = self.shared.state();
        let item = state.items.pop_front();
        if state.items.is_empty() && state.items.capacity() > 0 {
            state.items = VecDeque::new();
        }
        let wake = item.is_some() && state.waiting > 0;
        drop(state);
        if wake {
            self.shared.room.notify_waiters();
        }
        item
    }

    /// The next item; `None` once the queue is empty and every sender is gone or the queue is
    /// closed.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if let Some(item) = self.try_recv() {
            return Poll::Ready(Some(item));
        }
        // Registered before the second look, so an item queued in between wakes this task.
        self.shared.waker.register(cx.waker());
        if let Some(item) = self.try_recv() {
            return Poll::Ready(Some(item));
        }
        if self.shared.senders.load(Ordering::Acquire) == 0
            || self.shared.closed.load(Ordering::Acquire)
        {
            // An item queued by the last sender just before it went is still read.
            return Poll::Ready(self.try_recv());
        }
        Poll::Pending
    }

    /// Waits for the next item; `None` once the queue is empty and every sender is gone or the
    /// queue is closed.
    pub async fn recv(&mut self) -> Option<T> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Refuses every item from now on (senders see the queue closed); what waits is still read.
    pub fn close(&mut self) {
        self.shared.close();
    }

    /// Items waiting now.
    pub fn len(&self) -> usize {
        self.shared.state().items.len()
    }

    /// Whether no item waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The strong senders alive now.
    pub fn sender_strong_count(&self) -> usize {
        self.shared.senders.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Frame;
    use std::time::Duration;

    fn frame(s: &'static str) -> Frame {
        Frame::from_static(s)
    }

    #[tokio::test]
    async fn frames_arrive_in_order_and_the_end_is_seen() {
        let (tx, mut rx) = channel(4);
        let tx2 = tx.clone();
        assert!(tx.try_send(frame("a")).is_ok());
        assert!(tx2.try_send(frame("b")).is_ok());
        assert_eq!(rx.len(), 2);
        drop(tx);
        drop(tx2);
        assert_eq!(rx.recv().await.map(|f| f.len()), Some(1));
        assert!(rx.recv().await.is_some());
        assert!(rx.recv().await.is_none());
    }

    #[test]
    fn a_full_queue_refuses_and_gives_the_frame_back() {
        let (tx, mut rx) = channel(2);
        assert!(tx.try_send(frame("1")).is_ok());
        assert!(tx.try_send(frame("2")).is_ok());
        assert_eq!(tx.capacity(), 0);
        assert!(matches!(
            tx.try_send(frame("3")),
            Err(TrySendError::Full(_))
        ));
        assert!(rx.try_recv().is_some());
        assert_eq!(tx.capacity(), 1);
        assert!(tx.try_send(frame("3")).is_ok());
    }

    #[test]
    fn a_gone_receiver_closes_the_queue() {
        let (tx, rx) = channel(2);
        assert!(tx.try_send(frame("1")).is_ok());
        drop(rx);
        assert!(tx.is_closed());
        assert!(matches!(
            tx.try_send(frame("2")),
            Err(TrySendError::Closed(_))
        ));
    }

    /// An empty queue is one allocation of its shared state, whatever its capacity and its
    /// items' size (a tokio `mpsc` of 256 48-byte items takes ≈ 1.9 KB).
    #[test]
    fn an_empty_queue_is_one_small_allocation() {
        let size = size_of::<Shared<[u8; 48]>>();
        assert!(size <= 160, "{size} bytes");
        assert_eq!(size, size_of::<Shared<Frame>>());
    }

    #[test]
    fn an_empty_queue_holds_no_storage() {
        let (tx, mut rx) = channel(256);
        for _ in 0..40 {
            assert!(tx.try_send(frame("x")).is_ok());
        }
        assert!(rx.shared.state().items.capacity() >= 40);
        while rx.try_recv().is_some() {}
        assert_eq!(rx.shared.state().items.capacity(), 0);
    }

    #[tokio::test]
    async fn a_waiting_receiver_is_woken_by_another_task() {
        let (tx, mut rx) = channel(8);
        let send = tokio::spawn(async move {
            tokio::task::yield_now().await;
            tx.try_send(frame("late")).is_ok()
        });
        assert_eq!(rx.recv().await.map(|f| f.len()), Some(4));
        assert!(matches!(send.await, Ok(true)));
        assert!(rx.recv().await.is_none());
    }

    /// A sender waiting on a full queue goes on as soon as the receiver takes an item, and its
    /// item comes after the ones before it.
    #[tokio::test]
    async fn a_waiting_sender_is_woken_when_room_frees() {
        let (tx, mut rx) = channel::<u32>(2);
        assert_eq!(tx.try_send(1), Ok(()));
        assert_eq!(tx.try_send(2), Ok(()));
        let tx2 = tx.clone();
        let send = tokio::spawn(async move { tx2.send(3).await });
        // It counts itself in and waits: the queue stays full.
        while rx.shared.state().waiting == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(rx.len(), 2);
        assert!(!send.is_finished());
        assert_eq!(rx.recv().await, Some(1));
        let sent = tokio::time::timeout(Duration::from_secs(10), send).await;
        assert!(matches!(sent, Ok(Ok(Ok(())))), "the sender was not woken");
        assert_eq!(rx.shared.state().waiting, 0);
        assert_eq!(rx.try_recv(), Some(2));
        assert_eq!(rx.try_recv(), Some(3));
    }

    /// A waiting send that is dropped leaves the count it added.
    #[tokio::test]
    async fn a_dropped_send_stops_counting() {
        let (tx, rx) = channel::<u32>(1);
        assert_eq!(tx.try_send(1), Ok(()));
        let waited = tokio::time::timeout(Duration::from_millis(20), tx.send(2)).await;
        assert!(waited.is_err(), "the queue is full");
        assert_eq!(rx.shared.state().waiting, 0);
    }

    /// A closed queue refuses senders (the waiting one too) and wakes `closed`, but what was
    /// queued before is still read; then the end, though senders live.
    #[tokio::test]
    async fn a_closed_queue_refuses_but_is_drained() {
        let (tx, mut rx) = channel::<u32>(1);
        assert_eq!(tx.try_send(1), Ok(()));
        let (waiter, watcher) = (tx.clone(), tx.clone());
        let send = tokio::spawn(async move { waiter.send(2).await });
        let watch = tokio::spawn(async move { watcher.closed().await });
        while rx.shared.state().waiting == 0 {
            tokio::task::yield_now().await;
        }
        assert!(!tx.is_closed());
        rx.close();
        assert!(tx.is_closed());
        let (sent, watched) =
            tokio::time::timeout(Duration::from_secs(10), async { (send.await, watch.await) })
                .await
                .expect("the waiting sender and `closed` are woken");
        assert!(matches!(sent, Ok(Err(SendError(2)))));
        assert!(watched.is_ok());
        assert_eq!(tx.try_send(3), Err(TrySendError::Closed(3)));
        assert_eq!(tx.send(4).await, Err(SendError(4)));
        assert_eq!(rx.recv().await, Some(1));
        assert_eq!(rx.recv().await, None);
        assert_eq!(rx.sender_strong_count(), 1);
    }

    /// `closed` returns when the receiver goes without closing first.
    #[tokio::test]
    async fn closed_returns_when_the_receiver_is_dropped() {
        let (tx, rx) = channel::<u32>(4);
        let watch = tokio::spawn(async move { tx.closed().await });
        tokio::task::yield_now().await;
        drop(rx);
        assert!(
            tokio::time::timeout(Duration::from_secs(10), watch)
                .await
                .is_ok()
        );
    }

    /// A weak sender keeps the queue open for nobody: it upgrades while a strong one lives, and
    /// not after the last is gone (then the receiver has seen the end).
    #[tokio::test]
    async fn a_weak_sender_upgrades_only_while_a_strong_one_lives() {
        let (tx, mut rx) = channel::<u32>(4);
        let weak = tx.downgrade();
        assert_eq!(rx.sender_strong_count(), 1);
        let strong = weak.upgrade().expect("a strong sender lives");
        assert_eq!(rx.sender_strong_count(), 2);
        assert_eq!(strong.try_send(7), Ok(()));
        drop(strong);
        drop(tx);
        assert_eq!(rx.sender_strong_count(), 0);
        assert!(weak.upgrade().is_none());
        assert_eq!(rx.recv().await, Some(7));
        assert_eq!(
            rx.recv().await,
            None,
            "a weak sender does not keep the queue open"
        );
    }
}
