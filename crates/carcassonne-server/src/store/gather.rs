//! How a group writer (SQLite's, and each of Postgres's) lets the appends already on their way
//! join the group whose first append it holds, without a timer and without lengthening a stall.

use super::WriteReq;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Times a group writer (SQLite's, and each of Postgres's) yields to the runtime at most before
/// it takes a group. A yielded task runs again once its worker has run every task ready and
/// polled the I/O driver, so each yield lets the moves already on their way reach the queue: at
/// human pace a group then holds a few appends rather than one or two, and the hand-offs each
/// group pays (SQLite's thread, the syncer and its fsync; Postgres's round trip and commit) are
/// shared. On an idle server a yield costs a poll of the driver, microseconds. At 4,600 moves/s
/// over 5,790 matches, on 2 cores shared with the load: p99 17–19 ms with three yields against
/// 22–30 ms with none on SQLite, 25–77 ms against 33–191 ms on Postgres, for the same CPU a move
/// (`docs/performance.md`).
pub(crate) const GATHER_YIELDS: u32 = 3;

/// Appends waiting (the group's first among them) from which a writer takes its group without
/// yielding: behind a backlog, when a stall's appends are answered all at once and their actors
/// and connections all wake, a yield waits for every one of those tasks (118 ms measured for
/// three yields), which only lengthens the stall it follows, and the group is large already.
pub(crate) const GATHERED: usize = 8;

/// A yield that took this long found the runtime busy: the tasks it waited for have queued their
/// appends meanwhile, and a further yield would wait for a queue as long again.
pub(crate) const GATHER_BUSY: Duration = Duration::from_millis(2);

/// Lets the appends already on their way join the group whose first append the writer holds
/// (see [`GATHER_YIELDS`], [`GATHERED`] and [`GATHER_BUSY`]).
pub(crate) async fn gather(queue: &mpsc::Receiver<WriteReq>) {
    for _ in 0..GATHER_YIELDS {
        if queue.len() + 1 >= GATHERED {
            break;
        }
        let started = Instant::now();
        tokio::task::yield_now().await;
        if started.elapsed() >= GATHER_BUSY {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn append() -> (
        WriteReq,
        tokio::sync::oneshot::Receiver<Result<(), super::super::StoreError>>,
    ) {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let req = WriteReq {
            id: uuid::Uuid::nil(),
            records: Vec::new(),
            status: None,
            wake: None,
            fence: None,
            reply,
        };
        (req, answer)
    }

    /// How many times another task on this (one-thread) runtime ran while `gather` waited.
    async fn others_ran_during_gather(queued: usize) -> usize {
        let (tx, rx) = mpsc::channel(64);
        let mut answers = Vec::new();
        for _ in 0..queued {
            let (req, answer) = append();
            answers.push(answer);
            assert!(tx.try_send(req).is_ok());
        }
        let ran = Arc::new(AtomicUsize::new(0));
        let other = tokio::spawn({
            let ran = ran.clone();
            async move {
                loop {
                    ran.fetch_add(1, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                }
            }
        });
        gather(&rx).await;
        other.abort();
        ran.load(Ordering::SeqCst)
    }

    /// A short queue: the writer yields, so that the tasks already woken run (and queue their
    /// appends) before it takes the group.
    #[tokio::test(flavor = "current_thread")]
    async fn a_short_queue_lets_the_woken_tasks_run_first() {
        assert!(others_ran_during_gather(0).await >= 1);
    }

    /// A backlog (the group's first append, which the writer holds, and `GATHERED - 1` queued):
    /// the writer takes its group at once; no other task runs in between.
    #[tokio::test(flavor = "current_thread")]
    async fn a_backlog_is_taken_at_once() {
        assert_eq!(others_ran_during_gather(GATHERED - 1).await, 0);
        assert!(others_ran_during_gather(GATHERED - 2).await >= 1);
    }
}
