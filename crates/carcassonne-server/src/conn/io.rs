//! The socket's side of a connection: moving queued frames into the socket, reading its
//! messages, the heartbeat, and what ends a connection from outside. It knows WebSocket
//! messages and frames, never a protocol message: what a text message means is
//! [`super::dispatch`]'s business.
//!
//! Why one task polls everything: with a reader task and a writer task each move woke both, and
//! the two halves of the socket shared a lock (`BiLock`) that each side took for every poll. Here
//! the task polls, on each wake, the queue (writing what it finds, the ack and the diff of a
//! command in one write), the socket's read side, and, only when one of them woke it, the rare
//! futures (heartbeat, overflow, revoked session, shutdown): those take a lock per poll
//! (`Notify`), one of them on the lifecycle that every connection shares.

use super::close::Close;
use crate::outbox::{self, ConnHandle};
use crate::wire::Frame;
use futures_util::task::AtomicWaker;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;
use tokio::time::{Sleep, timeout};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};
use tracing::{debug, error, warn};

/// Most queued frames written in one flush (bounds the time one write may take).
const MAX_FRAMES_PER_FLUSH: usize = 64;

/// Flushes one poll of the connection may do before it lets the read side and the other tasks
/// have a turn.
const WRITES_PER_POLL: usize = 4;

/// How long a closing connection waits for the client's close frame.
const LINGER: Duration = Duration::from_secs(2);

/// What the connection's loop woke for.
pub enum Event {
    /// The socket's next message (`None`: the client is gone).
    Read(Option<Result<Message, WsError>>),
    /// Time for a heartbeat ping.
    Tick,
    Ending(Ending),
    /// A write failed or timed out: the socket is given up, without a close frame.
    WriteFailed,
}

/// What ends a connection from outside it.
#[derive(Debug, Clone, Copy)]
pub enum Ending {
    /// Its queue overflowed (`TooSlow` is raised).
    TooSlow,
    /// Its account session was revoked.
    Revoked,
    /// The server is shutting down.
    Closing,
}

/// What woke the connection's task, besides its queue: the socket's read side, or one of the
/// rare futures. Each is polled only when it woke (or right after it was ready: it may be again).
/// A read attempt zero-fills tungstenite's read buffer, and a waiting `Notify` takes a lock at
/// each poll (the lifecycle's is shared by every connection), while most wakes of the task are
/// for queued frames.
#[derive(Debug)]
pub struct Gate {
    /// [`READ`] and [`RARE`] bits.
    woken: AtomicU8,
    task: AtomicWaker,
}

const READ: u8 = 1;
const RARE: u8 = 2;

/// The waker that the socket's read side (or the rare futures) get: it sets its bit in the gate,
/// then wakes the task.
#[derive(Debug)]
struct GateWaker {
    gate: Arc<Gate>,
    bit: u8,
}

impl Wake for GateWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.gate.woken.fetch_or(self.bit, Ordering::AcqRel);
        self.gate.task.wake();
    }
}

impl Gate {
    /// A gate that lets the first poll through both ways (which registers every waker), and its
    /// read and rare wakers.
    pub fn new() -> (Arc<Gate>, Waker, Waker) {
        let gate = Arc::new(Gate {
            woken: AtomicU8::new(READ | RARE),
            task: AtomicWaker::new(),
        });
        let waker = |bit| {
            Waker::from(Arc::new(GateWaker {
                gate: Arc::clone(&gate),
                bit,
            }))
        };
        let (read, rare) = (waker(READ), waker(RARE));
        (gate, read, rare)
    }

    /// What woke since the last poll; registers the task to be woken when anything does.
    fn open(&self, cx: &Context<'_>) -> u8 {
        self.task.register(cx.waker());
        self.woken.swap(0, Ordering::AcqRel)
    }

    /// Lets these through on the next poll.
    fn again(&self, bits: u8) {
        self.woken.fetch_or(bits, Ordering::AcqRel);
    }

    /// The connection's next event: what is queued is written on every wake; the rare futures
    /// and the read side are polled only when they woke the task.
    pub async fn next<S, F>(&self, rare: &mut Rare<'_, F>, io: &mut Io<S>) -> Event
    where
        S: Stream<Item = Result<Message, WsError>> + Sink<Message, Error = WsError> + Unpin,
        F: Future<Output = Ending>,
    {
        poll_fn(|cx| {
            let woken = self.open(cx);
            let event = if woken & RARE != 0
                && let Poll::Ready(e) = rare.poll()
            {
                e
            } else if io.poll_write(cx).is_ready() {
                Event::WriteFailed
            } else if woken & READ != 0
                && let Poll::Ready(m) = io.poll_read()
            {
                Event::Read(m)
            } else {
                return Poll::Pending;
            };
            // What was ready may be again, and what woke but was not polled is polled next.
            self.again(woken);
            Poll::Ready(event)
        })
        .await
    }
}

/// The heartbeat and what ends the connection, polled with the gate's rare waker.
pub struct Rare<'a, F> {
    pub waker: Waker,
    pub ping: tokio::time::Interval,
    pub ending: Pin<&'a mut F>,
}

impl<F: Future<Output = Ending>> Rare<'_, F> {
    /// Ready once `ending` is: it is not polled again after that (the connection closes).
    fn poll(&mut self) -> Poll<Event> {
        let mut cx = Context::from_waker(&self.waker);
        if let Poll::Ready(e) = self.ending.as_mut().poll(&mut cx) {
            Poll::Ready(Event::Ending(e))
        } else if self.ping.poll_tick(&mut cx).is_ready() {
            Poll::Ready(Event::Tick)
        } else {
            Poll::Pending
        }
    }
}

/// The socket and the connection's queue: moves queued frames into the socket.
pub struct Io<S> {
    ws: S,
    out: outbox::Receiver,
    /// This connection's own handle: tells waiting catch-ups that frames left the queue.
    handle: ConnHandle,
    /// A heartbeat ping to send before the next queued frame.
    pub ping: bool,
    /// Messages given to the socket layer and not flushed yet.
    unflushed: bool,
    /// When a blocked write gives up: there only while the socket does not take a write (one
    /// timer for the connection, not one per write, and no memory while writes go through).
    deadline: Option<Pin<Box<Sleep>>>,
    write_timeout: Duration,
    depth: metrics::Histogram,
    /// The gate's read waker.
    read_waker: Waker,
}

impl<S> Io<S>
where
    S: Stream<Item = Result<Message, WsError>> + Sink<Message, Error = WsError> + Unpin,
{
    pub fn new(
        ws: S,
        out: outbox::Receiver,
        handle: ConnHandle,
        write_timeout: Duration,
        depth: metrics::Histogram,
        read_waker: Waker,
    ) -> Self {
        Io {
            ws,
            out,
            handle,
            ping: false,
            unflushed: false,
            deadline: None,
            write_timeout,
            depth,
            read_waker,
        }
    }

    /// Writes what is queued (up to [`MAX_FRAMES_PER_FLUSH`] frames in one flush: the ack and
    /// the diff of a command leave together, in one TCP segment when they fit). Pending when
    /// there is nothing more to write now; ready when a write failed or timed out.
    pub fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        for _ in 0..WRITES_PER_POLL {
            if self.unflushed {
                match self.ws.poll_flush_unpin(cx) {
                    Poll::Ready(Ok(())) => {
                        self.unflushed = false;
                        self.deadline = None;
                        self.handle.wrote();
                    }
                    Poll::Ready(Err(e)) => return failed(e),
                    Poll::Pending => return self.poll_blocked(cx),
                }
            }
            for fed in 0..MAX_FRAMES_PER_FLUSH {
                match self.ws.poll_ready_unpin(cx) {
                    Poll::Ready(Ok(())) => self.deadline = None,
                    Poll::Ready(Err(e)) => return failed(e),
                    Poll::Pending => return self.poll_blocked(cx),
                }
                let msg = if self.ping {
                    self.ping = false;
                    Message::Ping(Default::default())
                } else if fed == 0 {
                    match self.out.poll_recv(cx) {
                        Poll::Ready(Some(f)) => {
                            self.depth.record((self.out.len() + 1) as f64);
                            text(f)
                        }
                        _ => break,
                    }
                } else {
                    match self.out.try_recv() {
                        Some(f) => text(f),
                        None => break,
                    }
                };
                if let Err(e) = self.ws.start_send_unpin(msg) {
                    return failed(e);
                }
                self.unflushed = true;
            }
            if !self.unflushed {
                return Poll::Pending;
            }
        }
        // More to write: the read side and the other tasks have a turn first.
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// The socket's next message, polled with the gate's read waker.
    fn poll_read(&mut self) -> Poll<Option<Result<Message, WsError>>> {
        self.ws
            .poll_next_unpin(&mut Context::from_waker(&self.read_waker))
    }

    /// A write the socket did not take: pending until the deadline, then ready (too slow).
    fn poll_blocked(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let t = self.write_timeout;
        let deadline = self
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(t)));
        if deadline.as_mut().poll(cx).is_ready() {
            warn!("write timed out: client too slow");
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// Runs `work` (a handler that may wait for the store) while what is queued for the client
    /// still leaves. False when a write failed meanwhile: the socket is given up.
    pub async fn writing_while<W: Future<Output = ()>>(&mut self, work: W) -> bool {
        tokio::pin!(work);
        let mut write_failed = false;
        poll_fn(|cx| {
            if work.as_mut().poll(cx).is_ready() {
                return Poll::Ready(());
            }
            if !write_failed && self.poll_write(cx).is_ready() {
                write_failed = true;
            }
            Poll::Pending
        })
        .await;
        !write_failed
    }

    /// Sends the close frame (first, on shutdown, what is still queued), then waits a little
    /// for the client's close, reading what it still sends: dropping the socket at once would
    /// make the client's kernel answer its next write with a reset, which discards our close
    /// frame before the client reads it.
    pub async fn close(&mut self, close: Close) {
        let t = self.write_timeout;
        if close.flushes() {
            while let Some(f) = self.out.try_recv() {
                if timed(t, self.ws.feed(text(f))).await.is_err() {
                    break;
                }
            }
        }
        let frame = CloseFrame {
            code: close.code().into(),
            reason: Utf8Bytes::from_static(close.reason()),
        };
        let _ = timed(t, self.ws.send(Message::Close(Some(frame)))).await;
        let _ = timeout(LINGER, async {
            while let Some(Ok(msg)) = self.ws.next().await {
                if let Message::Close(_) = msg {
                    break;
                }
            }
        })
        .await;
    }

    /// Sends the answer to the client's close, if it sent one.
    pub async fn finish(&mut self) {
        let _ = timeout(Duration::from_secs(1), self.ws.close()).await;
    }
}

fn failed(e: WsError) -> Poll<()> {
    debug!(error = %e, "write failed");
    Poll::Ready(())
}

/// A write with the write timeout; a failure is logged.
async fn timed(t: Duration, write: impl Future<Output = Result<(), WsError>>) -> Result<(), ()> {
    match timeout(t, write).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => {
            debug!(error = %e, "write failed");
            Err(())
        }
        Err(_) => {
            warn!("write timed out: client too slow");
            Err(())
        }
    }
}

/// A frame as a WebSocket text message: its shared bytes, not copied. Checking that they are
/// UTF-8 costs a pass over the frame per receiver (tens of nanoseconds for a diff); it keeps the
/// frames, the outbox and the actors free of the socket library's types.
fn text(frame: Frame) -> Message {
    match Utf8Bytes::try_from(frame.into_bytes()) {
        Ok(t) => Message::Text(t),
        Err(e) => {
            // Frames are built from `String`s (see `wire`): not reachable.
            error!(error = %e, "a frame that is not UTF-8");
            Message::Text(Utf8Bytes::from_static(
                r#"{"type":"error","code":"internal","message":"a frame that is not UTF-8"}"#,
            ))
        }
    }
}
