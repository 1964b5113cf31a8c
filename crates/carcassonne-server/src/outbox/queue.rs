//! The bounded queue behind a connection's outbox: many senders (the actors of the matches the
//! connection follows), one receiver (its writer). It holds memory only while frames wait: an
//! empty queue is a few words, where a channel that allocates its slots up front would keep
//! ≈ 1.5 KB for each of the many idle connections of a human-paced server.

use crate::wire::Frame;
use futures_util::task::AtomicWaker;
use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

/// A queue of at most `capacity` frames (at least 1).
pub fn channel(capacity: usize) -> (Sender, Receiver) {
    let shared = Arc::new(Shared {
        frames: Mutex::new(VecDeque::new()),
        capacity: capacity.max(1),
        senders: AtomicUsize::new(1),
        receiver_gone: AtomicBool::new(false),
        waker: AtomicWaker::new(),
    });
    (
        Sender {
            shared: Arc::clone(&shared),
        },
        Receiver { shared },
    )
}

#[derive(Debug)]
struct Shared {
    frames: Mutex<VecDeque<Frame>>,
    capacity: usize,
    senders: AtomicUsize,
    receiver_gone: AtomicBool,
    /// The receiver's waker, woken by each frame queued and by the last sender's drop.
    waker: AtomicWaker,
}

impl Shared {
    /// The frames; a panic while they were held cannot leave them half changed (a push or a pop
    /// is one call), so a poisoned lock is used as it is.
    fn frames(&self) -> MutexGuard<'_, VecDeque<Frame>> {
        self.frames.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Why a frame was not queued; the frame comes back.
#[derive(Debug)]
pub enum TrySendError {
    /// The queue holds `capacity` frames.
    Full(Frame),
    /// The receiver is gone.
    Closed(Frame),
}

/// A sending end; the queue ends (for the receiver) when every sender is dropped.
#[derive(Debug)]
pub struct Sender {
    shared: Arc<Shared>,
}

impl Clone for Sender {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::Relaxed);
        Sender {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.waker.wake();
        }
    }
}

impl Sender {
    /// Queues `frame` without waiting.
    pub fn try_send(&self, frame: Frame) -> Result<(), TrySendError> {
        let shared = &*self.shared;
        if shared.receiver_gone.load(Ordering::Acquire) {
            return Err(TrySendError::Closed(frame));
        }
        {
            let mut frames = shared.frames();
            if frames.len() >= shared.capacity {
                return Err(TrySendError::Full(frame));
            }
            frames.push_back(frame);
        }
        shared.waker.wake();
        Ok(())
    }

    /// Whether the receiver is gone.
    pub fn is_closed(&self) -> bool {
        self.shared.receiver_gone.load(Ordering::Acquire)
    }

    /// The most frames the queue holds.
    pub fn max_capacity(&self) -> usize {
        self.shared.capacity
    }

    /// Free places now.
    pub fn capacity(&self) -> usize {
        self.shared
            .capacity
            .saturating_sub(self.shared.frames().len())
    }
}

/// The receiving end.
#[derive(Debug)]
pub struct Receiver {
    shared: Arc<Shared>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.shared.receiver_gone.store(true, Ordering::Release);
        // What waits is never read: its memory goes now, not with the last sender.
        *self.shared.frames() = VecDeque::new();
    }
}

impl Receiver {
    /// The next frame, if one waits; the storage goes back once the queue is empty.
    pub fn try_recv(&mut self) -> Option<Frame> {
        let mut frames = self.shared.frames();
        let f = frames.pop_front();
        if frames.is_empty() && frames.capacity() > 0 {
            *frames = VecDeque::new();
        }
        f
    }

    /// The next frame; `None` once the queue is empty and every sender is gone.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Frame>> {
        if let Some(f) = self.try_recv() {
            return Poll::Ready(Some(f));
        }
        // Registered before the second look, so a frame queued in between wakes this task.
        self.shared.waker.register(cx.waker());
        if let Some(f) = self.try_recv() {
            return Poll::Ready(Some(f));
        }
        if self.shared.senders.load(Ordering::Acquire) == 0 {
            // A frame queued by the last sender just before it went is still read.
            return Poll::Ready(self.try_recv());
        }
        Poll::Pending
    }

    /// Waits for the next frame; `None` once the queue is empty and every sender is gone.
    pub async fn recv(&mut self) -> Option<Frame> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Frames waiting now.
    pub fn len(&self) -> usize {
        self.shared.frames().len()
    }

    /// Whether no frame waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn an_empty_queue_holds_no_storage() {
        let (tx, mut rx) = channel(256);
        for _ in 0..40 {
            assert!(tx.try_send(frame("x")).is_ok());
        }
        assert!(rx.shared.frames().capacity() >= 40);
        while rx.try_recv().is_some() {}
        assert_eq!(rx.shared.frames().capacity(), 0);
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
}
