//! One task per WebSocket connection: it reads the client's messages and writes what is queued
//! for the client, over the one socket (no split halves, no writer task).
//!
//! Everything the client is sent goes through one bounded queue: match actors and this task
//! `try_send` into it, and when it is full the client is closed with `close::TOO_SLOW` (it
//! reconnects and subscribes with `since`). A client that does not read therefore costs its own
//! connection, never its match. A write the socket does not take within the write timeout drops
//! the connection, for the same reason.
//!
//! Frame size: the socket accepts messages up to [`HARD_LIMIT`] bytes; a text message above
//! [`protocol::MAX_FRAME_BYTES`] but within that gets an `Error { code: too_large }` and the
//! connection goes on. Only a message above the hard limit, which tungstenite refuses while
//! reading, closes the connection with 1009 (message too big).
//!
//! Why one task: with a reader task and a writer task each move woke both, and the two halves of
//! the socket shared a lock (`BiLock`) that each side took for every poll. Here the task polls, on
//! each wake, the queue (writing what it finds, the ack and the diff of a command in one write),
//! the socket's read side, and, only when one of them woke it, the rare futures (heartbeat,
//! overflow, revoked session, shutdown): those take a lock per poll (`Notify`), one of them on the
//! lifecycle that every connection shares.

use crate::accounts::{WsSession, still_valid};
use crate::actor::{ActorMsg, CommandMsg, MatchHandle};
use crate::chat::{Muted, Mutes, Room};
use crate::limits::{ConnLimits, Kind, Limited};
use crate::outbox::{ConnHandle, TooSlow};
use crate::state::{Lifecycle, Shared};
use crate::tokens::token_hash;
use crate::wire::{Frame, error_frame, frame};
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::task::AtomicWaker;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use protocol::{
    ChatChannel, ChatFrom, ChatLine, ClientMessage, ErrorCode, MAX_FRAME_BYTES, MuteTarget,
    Occupant, PROTOCOL_VERSION, SERVER_COMMAND_PREFIX, ServerMessage, close,
};
use std::collections::{HashMap, HashSet};
use std::future::{Future, poll_fn};
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;
use tokio::sync::{Notify, mpsc};
use tokio::time::{Instant, Sleep, timeout};
use tracing::{Instrument, debug, info_span, warn};
use uuid::Uuid;

/// Largest message the socket layer reads at all; between `MAX_FRAME_BYTES` and this, the client
/// gets a `too_large` error instead of losing its connection.
pub const HARD_LIMIT: usize = 16 * MAX_FRAME_BYTES;

/// The socket layer's read buffer per connection. tungstenite zero-fills the free part of its
/// buffer, up to this size, before every read from the socket: at the default 128 KiB that was
/// half of the server's instructions per move (and 128 KiB of memory per connection). Clients'
/// messages are small; a larger one grows the buffer for itself.
pub const READ_BUFFER: usize = 8 * 1024;

/// Subscriptions one connection may hold.
const MAX_SUBSCRIPTIONS: usize = 16;

/// Longest client command id.
const MAX_COMMAND_ID: usize = 128;

const GOING_AWAY: u16 = 1001;
const PROTOCOL_ERROR: u16 = 1002;
const INVALID_PAYLOAD: u16 = 1007;

/// Most queued frames written in one flush (bounds the time one write may take).
const MAX_FRAMES_PER_FLUSH: usize = 64;

/// Flushes one poll of the connection may do before it lets the read side and the other tasks
/// have a turn.
const WRITES_PER_POLL: usize = 4;

/// How long a closing connection waits for the client's close frame.
const LINGER: Duration = Duration::from_secs(2);
const TOO_BIG: u16 = 1009;

/// Counts live connections so that shutdown can wait for them.
/// Most mutes one connection keeps (more would let a client grow the server's memory).
pub const MAX_MUTES: usize = 256;

struct LiveGuard(Arc<Shared>);

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.connections.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// `session`: the account session the upgrade carried, if any (issue 12).
pub async fn serve(
    socket: WebSocket,
    shared: Arc<Shared>,
    peer: SocketAddr,
    session: Option<WsSession>,
) {
    let id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
    shared.connections.send_modify(|n| *n += 1);
    let guard = LiveGuard(Arc::clone(&shared));
    let span = info_span!(
        "conn",
        conn_id = id,
        %peer,
        match_id = tracing::field::Empty,
        seat = tracing::field::Empty
    );
    run(socket, shared, id, session, Some(peer.ip()))
        .instrument(span)
        .await;
    drop(guard);
}

/// What the connection's loop woke for.
enum Event {
    /// The socket's next message (`None`: the client is gone).
    Read(Option<Result<Message, axum::Error>>),
    /// Time for a heartbeat ping.
    Tick,
    Ending(Ending),
    /// A write failed or timed out: the socket is given up, without a close frame.
    WriteFailed,
}

/// What ends a connection from outside it.
#[derive(Debug, Clone, Copy)]
enum Ending {
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
struct Gate {
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
    fn new() -> (Arc<Gate>, Waker, Waker) {
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
}

/// The heartbeat and what ends the connection, polled with the gate's rare waker.
struct Rare<'a, F> {
    waker: Waker,
    ping: tokio::time::Interval,
    ending: Pin<&'a mut F>,
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
struct Io<S> {
    ws: S,
    out: mpsc::Receiver<Frame>,
    /// This connection's own handle: tells waiting catch-ups that frames left the queue.
    handle: ConnHandle,
    /// A heartbeat ping to send before the next queued frame.
    ping: bool,
    /// Messages given to the socket layer and not flushed yet.
    unflushed: bool,
    /// The socket did not take a write: since when `deadline` runs.
    blocked: bool,
    /// When a blocked write gives up. Armed only when a write blocks: one timer for the
    /// connection, not one per write.
    deadline: Pin<Box<Sleep>>,
    write_timeout: Duration,
    depth: metrics::Histogram,
    /// The gate's read waker.
    read_waker: Waker,
}

impl<S> Io<S>
where
    S: Sink<Message, Error = axum::Error> + Unpin,
{
    /// Writes what is queued (up to [`MAX_FRAMES_PER_FLUSH`] frames in one flush: the ack and
    /// the diff of a command leave together, in one TCP segment when they fit). Pending when
    /// there is nothing more to write now; ready when a write failed or timed out.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        for _ in 0..WRITES_PER_POLL {
            if self.unflushed {
                match self.ws.poll_flush_unpin(cx) {
                    Poll::Ready(Ok(())) => {
                        self.unflushed = false;
                        self.blocked = false;
                        self.handle.wrote();
                    }
                    Poll::Ready(Err(e)) => return failed(e),
                    Poll::Pending => return self.poll_blocked(cx),
                }
            }
            for fed in 0..MAX_FRAMES_PER_FLUSH {
                match self.ws.poll_ready_unpin(cx) {
                    Poll::Ready(Ok(())) => self.blocked = false,
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
                        Ok(f) => text(f),
                        Err(_) => break,
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
    fn poll_read(&mut self) -> Poll<Option<Result<Message, axum::Error>>>
    where
        S: Stream<Item = Result<Message, axum::Error>>,
    {
        self.ws
            .poll_next_unpin(&mut Context::from_waker(&self.read_waker))
    }

    /// A write the socket did not take: pending until the deadline, then ready (too slow).
    fn poll_blocked(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.blocked {
            self.blocked = true;
            self.deadline
                .as_mut()
                .reset(Instant::now() + self.write_timeout);
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            warn!("write timed out: client too slow");
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// Sends the close frame; first, with `flush`, what is still queued (graceful shutdown).
    async fn close(&mut self, code: u16, reason: &'static str, flush: bool) {
        let t = self.write_timeout;
        if flush {
            while let Ok(f) = self.out.try_recv() {
                if timed(t, self.ws.feed(text(f))).await.is_err() {
                    break;
                }
            }
        }
        let frame = CloseFrame {
            code,
            reason: Utf8Bytes::from_static(reason),
        };
        let _ = timed(t, self.ws.send(Message::Close(Some(frame)))).await;
    }
}

fn failed(e: axum::Error) -> Poll<()> {
    debug!(error = %e, "write failed");
    Poll::Ready(())
}

/// A write with the write timeout; a failure is logged.
async fn timed(
    t: Duration,
    write: impl Future<Output = Result<(), axum::Error>>,
) -> Result<(), ()> {
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

/// The connection's loop over any socket of messages: a WebSocket in production, in-memory
/// channels in the unit tests below.
pub(crate) async fn run<S>(
    socket: S,
    shared: Arc<Shared>,
    id: u64,
    session: Option<WsSession>,
    peer: Option<IpAddr>,
) where
    S: Stream<Item = Result<Message, axum::Error>>
        + Sink<Message, Error = axum::Error>
        + Unpin
        + Send,
{
    debug!("connected");
    let config = Arc::clone(&shared.config);
    let (out_tx, out_rx) = mpsc::channel::<Frame>(config.conn.outgoing_queue);
    let too_slow = Arc::new(TooSlow::default());
    let handle = ConnHandle::new(id, out_tx, Arc::clone(&too_slow), Arc::new(Notify::new()));
    let (gate, read_waker, rare_waker) = Gate::new();
    let mut io = Io {
        ws: socket,
        out: out_rx,
        handle: handle.clone(),
        ping: false,
        unflushed: false,
        blocked: false,
        deadline: Box::pin(tokio::time::sleep(config.conn.write_timeout)),
        write_timeout: config.conn.write_timeout,
        depth: shared.metrics.outgoing_depth.clone(),
        read_waker,
    };
    let mut conn = Connection {
        shared: Arc::clone(&shared),
        handle,
        seat: None,
        seat_handle: None,
        subscriptions: HashMap::new(),
        session,
        lobbies: HashSet::new(),
        mutes: Mutes::default(),
        limits: ConnLimits::new(&config.limits, &shared.limits),
        peer,
        accepting: Arc::new(AtomicBool::new(false)),
    };
    conn.reply(frame(&ServerMessage::Welcome {
        protocol_version: PROTOCOL_VERSION,
        rules_version: rules::RULES_VERSION.to_string(),
        server_version: env!("CARGO_PKG_VERSION").to_string(),
    }));
    if let Some(s) = &conn.session {
        conn.reply(frame(&ServerMessage::Identified {
            account: s.account.clone(),
        }));
    }

    // Revoking the session closes the connection (4002).
    let live_session = conn
        .session
        .as_ref()
        .map(|s| shared.live_sessions.open(s, id));
    // The flag starts from the value this receiver has seen, so that no change is missed.
    let mut lifecycle = shared.lifecycle.clone();
    let accepting = Arc::clone(&conn.accepting);
    accepting.store(
        *lifecycle.borrow_and_update() == Lifecycle::Running,
        Ordering::Release,
    );
    let ending = async {
        let revoked = async {
            match &live_session {
                Some(l) => l.revoked.notified().await,
                None => std::future::pending().await,
            }
        };
        let closing = async {
            loop {
                if lifecycle.changed().await.is_err() {
                    accepting.store(false, Ordering::Release);
                    return;
                }
                let now = *lifecycle.borrow_and_update();
                accepting.store(now == Lifecycle::Running, Ordering::Release);
                if now == Lifecycle::Closing {
                    return;
                }
            }
        };
        tokio::select! {
            () = too_slow.wait() => Ending::TooSlow,
            () = revoked => Ending::Revoked,
            () = closing => Ending::Closing,
        }
    };
    tokio::pin!(ending);
    let mut ping = tokio::time::interval_at(
        Instant::now() + config.conn.heartbeat_interval,
        config.conn.heartbeat_interval,
    );
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut rare = Rare {
        waker: rare_waker,
        ping,
        ending,
    };
    let mut last_pong = Instant::now();

    let close: Option<(u16, &'static str, bool)> = loop {
        let event = poll_fn(|cx| {
            let woken = gate.open(cx);
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
            gate.again(woken);
            Poll::Ready(event)
        })
        .await;
        match event {
            Event::Read(msg) => match msg {
                None | Some(Ok(Message::Close(_))) => break None,
                Some(Err(e)) => {
                    debug!(error = %e, "read failed");
                    break violation_close(e).map(|(code, reason)| (code, reason, false));
                }
                Some(Ok(Message::Text(text))) => {
                    // A command is handled in its first poll; the other messages may wait for
                    // the store, and meanwhile what is queued for the client still leaves.
                    let handled = conn.on_text(text);
                    tokio::pin!(handled);
                    let mut write_failed = false;
                    poll_fn(|cx| {
                        if handled.as_mut().poll(cx).is_ready() {
                            return Poll::Ready(());
                        }
                        if !write_failed && io.poll_write(cx).is_ready() {
                            write_failed = true;
                        }
                        Poll::Pending
                    })
                    .await;
                    if write_failed {
                        break None;
                    }
                }
                Some(Ok(Message::Binary(_))) => conn.reply(error_frame(
                    ErrorCode::Binary,
                    None,
                    "binary frames are not part of the protocol: send JSON text",
                )),
                Some(Ok(Message::Pong(_))) => last_pong = Instant::now(),
                Some(Ok(Message::Ping(_))) => {} // answered by the socket layer
            },
            Event::Tick => {
                if last_pong.elapsed() > config.conn.heartbeat_timeout {
                    break Some((
                        close::HEARTBEAT_TIMEOUT,
                        "no pong within the heartbeat timeout",
                        false,
                    ));
                }
                io.ping = true;
            }
            Event::Ending(Ending::TooSlow) => {} // raised: closed just below
            Event::Ending(Ending::Revoked) => {
                break Some((
                    close::SESSION_REVOKED,
                    "the session was revoked: log in again",
                    false,
                ));
            }
            Event::Ending(Ending::Closing) => {
                break Some((GOING_AWAY, "server shutting down", true));
            }
            Event::WriteFailed => break None,
        }
        if too_slow.is_raised() {
            break Some((
                close::TOO_SLOW,
                "too slow: reconnect and subscribe with since",
                false,
            ));
        }
    };

    shared.metrics.closed(close.map(|(code, _, _)| code));
    if let Some((code, reason, flush)) = close {
        debug!(code, reason, "closing");
        io.close(code, reason, flush).await;
        // Closing handshake: wait a little for the client's close (reading what it still
        // sends). Dropping the socket at once would make the client's kernel answer its next
        // write with a reset, which discards our close frame before the client reads it.
        let _ = timeout(LINGER, async {
            while let Some(Ok(msg)) = io.ws.next().await {
                if let Message::Close(_) = msg {
                    break;
                }
            }
        })
        .await;
    }
    conn.leave();
    drop(conn);
    drop(rare);
    // Sends the answer to the client's close, if it sent one.
    let _ = timeout(Duration::from_secs(1), io.ws.close()).await;
    debug!("disconnected");
}

/// The RFC 6455 close code for a read error that is the client's fault: 1009 for a message
/// above the hard limit, 1002 for a protocol violation (an unmasked frame, reserved bits set, a
/// bad opcode…), 1007 for a text frame that is not UTF-8. Other errors (the socket failed, the
/// peer vanished) close without a frame.
fn violation_close(e: axum::Error) -> Option<(u16, &'static str)> {
    use tungstenite::error::{Error, ProtocolError};
    match e.into_inner().downcast_ref::<Error>()? {
        Error::Capacity(_) => Some((TOO_BIG, "message too big")),
        Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => None,
        Error::Protocol(_) => Some((PROTOCOL_ERROR, "WebSocket protocol violation")),
        Error::Utf8(_) => Some((INVALID_PAYLOAD, "a text frame that is not UTF-8")),
        _ => None,
    }
}

/// A frame as a WebSocket text message: its shared bytes, already known to be UTF-8.
fn text(frame: Frame) -> Message {
    Message::Text(frame.into_text())
}

struct Connection {
    shared: Arc<Shared>,
    handle: ConnHandle,
    /// The seat this connection holds: (match, seat).
    seat: Option<(Uuid, u8)>,
    seat_handle: Option<MatchHandle>,
    subscriptions: HashMap<Uuid, MatchHandle>,
    /// The account session of the upgrade, if any.
    session: Option<WsSession>,
    /// The lobbies this connection follows.
    lobbies: HashSet<Uuid>,
    /// Whose chat this connection does not want (shared with the chat rooms it is in).
    mutes: Mutes,
    /// This connection's rate limits; its address's are in `Shared`.
    limits: ConnLimits,
    peer: Option<IpAddr>,
    /// Whether the server takes commands (`Lifecycle::Running`), as this connection's loop last
    /// saw the lifecycle change: a command reads this flag instead of the lifecycle, whose lock
    /// every connection shares.
    accepting: Arc<AtomicBool>,
}

impl Connection {
    /// Queues a frame for this client; an overflow raises `too_slow`, which closes the socket.
    fn reply(&self, frame: Frame) {
        self.handle.push(frame);
    }

    async fn on_text(&mut self, text: Utf8Bytes) {
        let arrived = Instant::now();
        if text.len() > MAX_FRAME_BYTES {
            self.reply(error_frame(
                ErrorCode::TooLarge,
                None,
                format!(
                    "message of {} bytes; the limit is {MAX_FRAME_BYTES}",
                    text.len()
                ),
            ));
            return;
        }
        let msg = match protocol::decode_client_message(text.as_str()) {
            Ok(m) => m,
            // Names the command id when there is one, so the client knows what failed.
            Err(m) => {
                self.reply(error_frame(ErrorCode::Malformed, m.id, m.message));
                return;
            }
        };
        match msg {
            ClientMessage::Auth { token } => self.auth(token).await,
            ClientMessage::Subscribe { match_id, since } => {
                self.subscribe(match_id, since, None).await
            }
            ClientMessage::Watch {
                match_id,
                invite_code,
                since,
            } => self.subscribe(match_id, since, Some(invite_code)).await,
            ClientMessage::TakeSeat { match_id } => self.take_seat(match_id).await,
            ClientMessage::SubscribeLobby { lobby_id } => self.subscribe_lobby(lobby_id),
            ClientMessage::UnsubscribeLobby { lobby_id } => {
                if self.lobbies.remove(&lobby_id) {
                    self.shared.lobbies.unsubscribe(lobby_id, self.handle.id);
                    self.shared
                        .chat
                        .leave(Room::Lobby(lobby_id), self.handle.id);
                }
            }
            ClientMessage::Chat {
                match_id,
                lobby_id,
                text,
            } => self.chat(match_id, lobby_id, text).await,
            ClientMessage::Mute(target) => self.mute(target, true),
            ClientMessage::Unmute(target) => self.mute(target, false),
            ClientMessage::Unsubscribe { match_id } => {
                self.shared
                    .chat
                    .leave(Room::Match(match_id), self.handle.id);
                if let Some(h) = self.subscriptions.remove(&match_id) {
                    let _ = h.tx.try_send(ActorMsg::Unsubscribe {
                        conn_id: self.handle.id,
                    });
                }
            }
            ClientMessage::Command { id, command } => self.command(id, command, arrived),
        }
    }

    async fn auth(&mut self, token: String) {
        if self.seat.is_some() {
            self.reply(error_frame(
                ErrorCode::AlreadyAuthenticated,
                None,
                "this connection already holds a seat",
            ));
            return;
        }
        if token.is_empty() || token.len() > 256 {
            self.reply(error_frame(
                ErrorCode::BadToken,
                None,
                "no seat has this token",
            ));
            return;
        }
        match self.shared.store.seat_for_token(&token_hash(&token)).await {
            Ok(Some((match_id, seat))) => {
                self.seat = Some((match_id, seat));
                tracing::Span::current()
                    .record("match_id", tracing::field::display(match_id))
                    .record("seat", seat);
                debug!(%match_id, seat, "authenticated");
                self.join_match_chat(match_id);
                self.reply(frame(&ServerMessage::Authenticated { match_id, seat }));
            }
            Ok(None) => self.reply(error_frame(
                ErrorCode::BadToken,
                None,
                "no seat has this token",
            )),
            Err(e) => {
                warn!(error = %e, "token lookup failed");
                self.reply(error_frame(ErrorCode::Internal, None, "the store failed"));
            }
        }
    }

    /// Plays the seat this connection's account holds in a match (a lobby match).
    async fn take_seat(&mut self, match_id: Uuid) {
        if self.seat.is_some() {
            self.reply(error_frame(
                ErrorCode::AlreadyAuthenticated,
                None,
                "this connection already holds a seat",
            ));
            return;
        }
        let Some(session) = &self.session else {
            self.reply(error_frame(
                ErrorCode::Unauthenticated,
                None,
                "take_seat needs an account session on the WebSocket upgrade (cookie or bearer)",
            ));
            return;
        };
        let account = &session.account;
        // A session revoked since the upgrade takes no seat.
        match still_valid(&self.shared.store, &session.token_hash).await {
            Ok(true) => {}
            Ok(false) => {
                self.reply(error_frame(
                    ErrorCode::UnknownSession,
                    None,
                    "this connection's session was revoked",
                ));
                return;
            }
            Err(e) => {
                warn!(error = %e, "session lookup failed");
                self.reply(error_frame(ErrorCode::Internal, None, "the store failed"));
                return;
            }
        }
        match self
            .shared
            .store
            .seat_of_account(match_id, account.id)
            .await
        {
            Ok(Some(seat)) => {
                self.seat = Some((match_id, seat));
                tracing::Span::current().record("seat", seat);
                debug!(%match_id, seat, "seat taken by its account");
                self.join_match_chat(match_id);
                self.reply(frame(&ServerMessage::Authenticated { match_id, seat }));
            }
            Ok(None) => self.reply(error_frame(
                ErrorCode::NotYourSeat,
                None,
                "this account holds no seat in that match",
            )),
            Err(e) => {
                warn!(error = %e, "seat lookup failed");
                self.reply(error_frame(ErrorCode::Internal, None, "the store failed"));
            }
        }
    }

    fn subscribe_lobby(&mut self, lobby_id: Uuid) {
        if let Err(l) = self.limit(Kind::Lobby) {
            self.reply(limited_frame(None, &l));
            return;
        }
        if !self.lobbies.contains(&lobby_id) && self.lobbies.len() >= MAX_SUBSCRIPTIONS {
            self.reply(error_frame(
                ErrorCode::Unavailable,
                None,
                format!("at most {MAX_SUBSCRIPTIONS} lobbies per connection"),
            ));
            return;
        }
        let viewer = self.session.as_ref().map(|s| s.account.id);
        match self
            .shared
            .lobbies
            .subscribe(viewer, lobby_id, self.handle.clone())
        {
            Ok(()) => {
                self.lobbies.insert(lobby_id);
                self.shared.chat.join(
                    Room::Lobby(lobby_id),
                    &self.handle,
                    None,
                    viewer,
                    &self.mutes,
                );
            }
            Err(e) => self.reply(error_frame(e.code, None, e.message)),
        }
    }

    /// Whether this connection may watch a match: any match that no private lobby started;
    /// a private one with its invite code, or for its own players. Answers the client when not.
    async fn may_watch(&self, match_id: Uuid, code: Option<&str>) -> bool {
        let access = match self.shared.store.match_access(match_id).await {
            Ok(a) => a,
            Err(e) => {
                warn!(error = %e, "access lookup failed");
                self.reply(error_frame(ErrorCode::Internal, None, "the store failed"));
                return false;
            }
        };
        let Some(access) = access.filter(|a| !a.public) else {
            return true;
        };
        let code_ok = matches!(
            (&access.invite_code, code),
            (Some(c), Some(g)) if c.eq_ignore_ascii_case(g.trim())
        );
        if code_ok || self.seat.is_some_and(|(m, _)| m == match_id) {
            return true;
        }
        if let Some(account) = self.session.as_ref().map(|s| &s.account)
            && let Ok(Some(_)) = self
                .shared
                .store
                .seat_of_account(match_id, account.id)
                .await
        {
            return true;
        }
        self.reply(error_frame(
            ErrorCode::InviteRequired,
            None,
            "a private match is watched with its invite code (`watch`)",
        ));
        false
    }

    async fn subscribe(&mut self, match_id: Uuid, since: Option<u64>, code: Option<String>) {
        // An actor that stopped (a match that failed to load) holds no subscriber any more: its
        // entry must not count against the limit.
        self.subscriptions.retain(|_, h| !h.tx.is_closed());
        let new = !self.subscriptions.contains_key(&match_id);
        if new && self.subscriptions.len() >= MAX_SUBSCRIPTIONS {
            self.reply(error_frame(
                ErrorCode::Unavailable,
                None,
                format!("at most {MAX_SUBSCRIPTIONS} subscriptions per connection"),
            ));
            return;
        }
        if new && !self.match_exists(match_id).await {
            return;
        }
        if new && !self.may_watch(match_id, code.as_deref()).await {
            return;
        }
        let cached = self.subscriptions.remove(&match_id);
        let msg = ActorMsg::Subscribe {
            conn: self.handle.clone(),
            since,
        };
        match self.send_to(match_id, cached.clone(), msg) {
            Ok(h) => {
                self.subscriptions.insert(match_id, h);
                self.join_match_chat(match_id);
            }
            Err(code) => {
                // Busy: the actor still holds the earlier subscription, if there was one.
                if code == ErrorCode::Busy
                    && let Some(h) = cached
                {
                    self.subscriptions.insert(match_id, h);
                }
                self.reply(error_frame(code, None, busy_message(code)));
            }
        }
    }

    /// Whether a match exists, looked up before a subscription takes a slot, so that a match
    /// that does not exist never counts against the limit (not even while an actor would be
    /// loading it). Answers the client when it does not.
    async fn match_exists(&self, match_id: Uuid) -> bool {
        if self.shared.registry.is_running(match_id) {
            return true;
        }
        match self.shared.store.load_match(match_id).await {
            Ok(Some(_)) => true,
            Ok(None) => {
                self.reply(error_frame(ErrorCode::UnknownMatch, None, "no such match"));
                false
            }
            Err(e) => {
                warn!(error = %e, "match lookup failed");
                self.reply(error_frame(ErrorCode::Internal, None, "the store failed"));
                false
            }
        }
    }

    fn command(&mut self, id: String, command: rules::Command, arrived: Instant) {
        let Some((match_id, seat)) = self.seat else {
            // A connection that watches gets its own code: it is a spectator, not a stranger.
            let (code, message) = if self.subscriptions.is_empty() {
                (
                    ErrorCode::Unauthenticated,
                    "authenticate with a seat token (or take_seat) first",
                )
            } else {
                (
                    ErrorCode::Spectator,
                    "spectators cannot command: this connection holds no seat",
                )
            };
            self.refuse(id, code, message);
            return;
        };
        // Control characters are refused: Postgres cannot store a NUL in text, and a write
        // that fails takes down the whole batch (other seats' commands with it).
        if id.is_empty() || id.len() > MAX_COMMAND_ID || id.chars().any(char::is_control) {
            self.refuse(
                id,
                ErrorCode::Malformed,
                format!("a command id has 1 to {MAX_COMMAND_ID} bytes and no control characters"),
            );
            return;
        }
        if id.starts_with(SERVER_COMMAND_PREFIX) {
            self.reply(error_frame(
                ErrorCode::Malformed,
                Some(id),
                format!("command ids starting with `{SERVER_COMMAND_PREFIX}` are the server's"),
            ));
            return;
        }
        if !self.accepting.load(Ordering::Acquire) {
            self.refuse(id, ErrorCode::Unavailable, "the server is shutting down");
            return;
        }
        if let Err(l) = self.limit(Kind::Command) {
            self.shared.metrics.refused(ErrorCode::RateLimited);
            self.reply(limited_frame(Some(id), &l));
            return;
        }
        let cached = self.seat_handle.take();
        let msg = ActorMsg::Command(Box::new(CommandMsg {
            conn: self.handle.clone(),
            seat,
            id,
            command,
            arrived,
        }));
        match self.send_to_actor(match_id, cached, msg) {
            Ok(h) => self.seat_handle = Some(h),
            // The refused command gives its id back for the answer (no copy of it per command).
            Err((code, msg)) => {
                let id = match msg {
                    ActorMsg::Command(c) => c.id,
                    _ => String::new(),
                };
                self.refuse(id, code, busy_message(code));
            }
        }
    }

    /// This connection's rate limit of `kind`, then its address's.
    fn limit(&self, kind: Kind) -> Result<(), Limited> {
        self.limits.check(kind, self.peer, &self.shared.limits)
    }

    /// Refuses a command before it reaches its match (counted with the match's refusals).
    fn refuse(&self, id: String, code: ErrorCode, message: impl Into<String>) {
        self.shared.metrics.refused(code);
        self.reply(error_frame(code, Some(id), message));
    }

    /// Queues a message for a match actor without waiting: a full inbox is `busy`. A retired
    /// actor (closed inbox) is replaced once through the registry.
    fn send_to(
        &self,
        match_id: Uuid,
        cached: Option<MatchHandle>,
        msg: ActorMsg,
    ) -> Result<MatchHandle, ErrorCode> {
        self.send_to_actor(match_id, cached, msg)
            .map_err(|(code, _)| code)
    }

    /// [`Self::send_to`], giving the message back when it was not queued.
    fn send_to_actor(
        &self,
        match_id: Uuid,
        cached: Option<MatchHandle>,
        mut msg: ActorMsg,
    ) -> Result<MatchHandle, (ErrorCode, ActorMsg)> {
        let mut handle = cached;
        for _ in 0..2 {
            let h = match handle.take() {
                Some(h) if !h.tx.is_closed() => h,
                _ => match self.shared.registry.get_or_load(match_id) {
                    Ok(h) => h,
                    Err(_) => return Err((ErrorCode::Unavailable, msg)),
                },
            };
            match h.tx.try_send(msg) {
                Ok(()) => return Ok(h),
                Err(mpsc::error::TrySendError::Full(m)) => return Err((ErrorCode::Busy, m)),
                Err(mpsc::error::TrySendError::Closed(m)) => msg = m,
            }
        }
        Err((ErrorCode::Unavailable, msg))
    }

    /// Enters (or updates its place in) a followed match's chat room: as a player when this
    /// connection holds a seat there, else as a spectator.
    fn join_match_chat(&self, match_id: Uuid) {
        if !self.subscriptions.contains_key(&match_id) {
            return;
        }
        let seat = self.seat.filter(|(m, _)| *m == match_id).map(|(_, s)| s);
        let account = self.session.as_ref().map(|s| s.account.id);
        self.shared.chat.join(
            Room::Match(match_id),
            &self.handle,
            seat,
            account,
            &self.mutes,
        );
    }

    /// A chat message: checked, stored, then delivered (see [`crate::chat`]). Never reaches a
    /// match actor.
    async fn chat(&mut self, match_id: Option<Uuid>, lobby_id: Option<Uuid>, text: String) {
        if let Err(l) = self.limit(Kind::Chat) {
            self.reply(limited_frame(None, &l));
            return;
        }
        if let Err(m) = protocol::check_chat_text(&text) {
            self.reply(error_frame(ErrorCode::BadChat, None, m));
            return;
        }
        let account = self.session.as_ref().map(|s| s.account.clone());
        let mut lobby_members = None;
        let (room, channel, seat) = match (match_id, lobby_id) {
            (Some(m), None) => match self.seat {
                Some((sm, seat)) if sm == m => (Room::Match(m), ChatChannel::Table, Some(seat)),
                _ if account.is_some() && self.subscriptions.contains_key(&m) => {
                    (Room::Match(m), ChatChannel::Spectators, None)
                }
                _ => {
                    self.reply(error_frame(
                        ErrorCode::NotInChat,
                        None,
                        "chat at a match needs its seat, or watching it with an account session",
                    ));
                    return;
                }
            },
            (None, Some(l)) => {
                let Some(a) = &account else {
                    self.reply(error_frame(
                        ErrorCode::NotInChat,
                        None,
                        "lobby chat needs an account session",
                    ));
                    return;
                };
                let lobby = match self.shared.lobbies.get(Some(a.id), l, None).await {
                    Ok(lobby) => lobby,
                    Err(e) => {
                        self.reply(error_frame(e.code, None, e.message));
                        return;
                    }
                };
                let members: HashSet<Uuid> = lobby
                    .seats
                    .iter()
                    .filter_map(|s| match &s.occupant {
                        Some(Occupant::Player { account_id, .. }) => Some(*account_id),
                        _ => None,
                    })
                    .collect();
                if !members.contains(&a.id) {
                    self.reply(error_frame(
                        ErrorCode::NotInChat,
                        None,
                        "lobby chat is for the accounts seated in the lobby",
                    ));
                    return;
                }
                lobby_members = Some(members);
                (Room::Lobby(l), ChatChannel::Lobby, None)
            }
            _ => {
                self.reply(error_frame(
                    ErrorCode::BadChat,
                    None,
                    "a chat message names exactly one of match_id and lobby_id",
                ));
                return;
            }
        };
        let now = chrono::Utc::now();
        let line = ChatLine {
            match_id,
            lobby_id,
            channel,
            from: ChatFrom {
                seat,
                account_id: account.as_ref().map(|a| a.id),
                name: account.map(|a| a.name),
            },
            text,
            at: u64::try_from(now.timestamp_millis()).unwrap_or(0),
        };
        // Persist, then broadcast: the admin log has every message anyone received.
        if let Err(e) = self.shared.store.insert_chat(&line, now).await {
            warn!(error = %e, "chat store failed");
            self.reply(error_frame(ErrorCode::Internal, None, "the store failed"));
            return;
        }
        self.shared
            .chat
            .deliver(room, &line, lobby_members.as_ref(), &self.handle);
    }

    /// Mutes (or unmutes) an account or a seat for this connection.
    fn mute(&mut self, t: MuteTarget, on: bool) {
        let key = match (t.account_id, t.match_id, t.seat) {
            (Some(a), None, None) => Muted::Account(a),
            (None, Some(m), Some(s)) => Muted::Seat(m, s),
            _ => {
                self.reply(error_frame(
                    ErrorCode::BadChat,
                    None,
                    "mute names an account_id, or a match_id and a seat",
                ));
                return;
            }
        };
        if let Ok(mut mutes) = self.mutes.write() {
            if !on {
                mutes.remove(&key);
            } else if mutes.len() < MAX_MUTES || mutes.contains(&key) {
                mutes.insert(key);
            } else {
                // Bounded: a client cannot grow the connection's memory with mutes.
                drop(mutes);
                self.reply(error_frame(
                    ErrorCode::BadChat,
                    None,
                    format!("at most {MAX_MUTES} mutes per connection: unmute someone first"),
                ));
            }
        }
    }

    /// Tells the actors this connection followed that it is gone.
    fn leave(&mut self) {
        for lobby_id in self.lobbies.drain() {
            self.shared.lobbies.unsubscribe(lobby_id, self.handle.id);
            self.shared
                .chat
                .leave(Room::Lobby(lobby_id), self.handle.id);
        }
        for (match_id, h) in self.subscriptions.drain() {
            self.shared
                .chat
                .leave(Room::Match(match_id), self.handle.id);
            let _ = h.tx.try_send(ActorMsg::Unsubscribe {
                conn_id: self.handle.id,
            });
        }
    }
}

/// `rate_limited`, with the wait in `retry_after_ms`.
fn limited_frame(id: Option<String>, l: &Limited) -> Frame {
    let mut body = protocol::ErrorBody::new(ErrorCode::RateLimited, l.message());
    body.id = id;
    body.retry_after_ms = Some(l.retry_after_ms());
    frame(&ServerMessage::Error(body))
}

fn busy_message(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::Busy => "the match is busy; try again",
        _ => "the match is not available now",
    }
}

/// The connection loop over in-memory channels instead of a socket (as in axum's
/// testing-websockets example): framing, limits, auth and subscription bookkeeping, with a real
/// SQLite store in a temp dir.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::actor::Registry;
    use crate::config::Config;
    use crate::store::{MatchRow, MatchStatus, SeatRow, Store};
    use serde_json::Value;
    use std::sync::atomic::AtomicU64;
    use tokio::sync::watch;

    struct Harness {
        shared: Arc<Shared>,
        _dir: tempfile::TempDir,
        _lifecycle: watch::Sender<Lifecycle>,
    }

    struct Client {
        to_server: mpsc::UnboundedSender<Result<Message, axum::Error>>,
        from_server: mpsc::UnboundedReceiver<Message>,
        task: tokio::task::JoinHandle<()>,
    }

    impl Harness {
        async fn new() -> Harness {
            let dir = tempfile::tempdir().expect("temp dir");
            let config = Arc::new(Config::default());
            let store = Store::open(None, dir.path()).await.expect("store");
            let metrics = Arc::new(crate::meters::Metrics::new(store.kind()));
            let registry = Registry::new(store.clone(), Arc::clone(&config), Arc::clone(&metrics));
            let lobbies =
                crate::lobby::Lobbies::start(store.clone(), Arc::clone(&registry), false, 3)
                    .await
                    .expect("lobbies");
            let (lifecycle, rx) = watch::channel(Lifecycle::Running);
            let (connections, _) = watch::channel(0usize);
            let shared = Arc::new(Shared {
                config,
                store,
                registry,
                lobbies,
                lifecycle: rx,
                connections,
                next_conn: AtomicU64::new(1),
                chat: Default::default(),
                limits: Arc::new(crate::limits::AddrLimits::new(&Config::default().limits)),
                metrics,
                live_sessions: Default::default(),
            });
            Harness {
                shared,
                _dir: dir,
                _lifecycle: lifecycle,
            }
        }

        /// A stored two-seat match; seat 0's token is `token`.
        async fn new_match(&self, token: &str) -> Uuid {
            let setup = rules::Setup::new(vec![rules::Colour::Red, rules::Colour::Blue], 7);
            let id = Uuid::new_v4();
            let row = MatchRow {
                id,
                setup: serde_json::to_string(&setup).expect("setup"),
                status: MatchStatus::Active,
                rules_version: rules::REPLAY_VERSION.to_string(),
                created_at: chrono::Utc::now(),
                decision_timeout_ms: None,
                clock: None,
                wake_at: None,
            };
            let seats = [SeatRow {
                seat: 0,
                colour: "red".into(),
                token_hash: token_hash(token),
            }];
            self.shared
                .store
                .create_match(&row, &seats)
                .await
                .expect("create");
            id
        }

        /// Runs the connection loop over two in-memory channels.
        fn connect(&self) -> Client {
            let (to_server, inbound) = mpsc::unbounded_channel::<Result<Message, axum::Error>>();
            let (outbound, from_server) = mpsc::unbounded_channel::<Message>();
            let stream = Box::pin(futures_util::stream::unfold(inbound, |mut rx| async {
                rx.recv().await.map(|m| (m, rx))
            }));
            let sink = Box::pin(futures_util::sink::unfold(
                outbound,
                |tx, msg: Message| async move {
                    tx.send(msg).map_err(axum::Error::new)?;
                    Ok::<_, axum::Error>(tx)
                },
            ));
            let id = self.shared.next_conn.fetch_add(1, Ordering::Relaxed);
            let socket = Duplex { sink, stream };
            let task = tokio::spawn(run(socket, Arc::clone(&self.shared), id, None, None));
            Client {
                to_server,
                from_server,
                task,
            }
        }
    }

    /// A stream and a sink as one socket, as the connection loop takes it.
    struct Duplex<W, R> {
        sink: W,
        stream: R,
    }

    impl<W: Unpin, R: Stream + Unpin> Stream for Duplex<W, R> {
        type Item = R::Item;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<R::Item>> {
            self.stream.poll_next_unpin(cx)
        }
    }

    impl<W: Sink<Message> + Unpin, R: Unpin> Sink<Message> for Duplex<W, R> {
        type Error = W::Error;
        fn poll_ready(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Result<(), W::Error>> {
            self.sink.poll_ready_unpin(cx)
        }
        fn start_send(mut self: Pin<&mut Self>, item: Message) -> Result<(), W::Error> {
            self.sink.start_send_unpin(item)
        }
        fn poll_flush(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Result<(), W::Error>> {
            self.sink.poll_flush_unpin(cx)
        }
        fn poll_close(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Result<(), W::Error>> {
            self.sink.poll_close_unpin(cx)
        }
    }

    impl Client {
        fn send(&self, msg: Message) {
            self.to_server.send(Ok(msg)).expect("the connection reads");
        }
        fn text(&self, json: Value) {
            self.send(Message::Text(json.to_string().into()));
        }
        /// The next text frame, as JSON (pings skipped).
        async fn next(&mut self) -> Value {
            loop {
                let msg = timeout(Duration::from_secs(5), self.from_server.recv())
                    .await
                    .expect("a frame in time")
                    .expect("the connection is open");
                match msg {
                    Message::Text(t) => return serde_json::from_str(t.as_str()).expect("JSON"),
                    Message::Ping(_) => {}
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        async fn next_type(&mut self) -> (String, Value) {
            let v = self.next().await;
            let t = v["type"].as_str().unwrap_or_default().to_string();
            (t, v)
        }
    }

    fn code(v: &Value) -> &str {
        v["code"].as_str().unwrap_or_default()
    }

    #[tokio::test]
    async fn framing_and_limits_get_typed_errors_and_the_connection_goes_on() {
        let h = Harness::new().await;
        let mut c = h.connect();
        let (t, welcome) = c.next_type().await;
        assert_eq!(t, "welcome");
        assert_eq!(welcome["protocol_version"], PROTOCOL_VERSION);
        c.send(Message::Binary(vec![1, 2, 3].into()));
        assert_eq!(code(&c.next().await), "binary");
        c.send(Message::Text("x".repeat(MAX_FRAME_BYTES + 1).into()));
        assert_eq!(code(&c.next().await), "too_large");
        c.send(Message::Text("{not json".into()));
        assert_eq!(code(&c.next().await), "malformed");
        c.text(serde_json::json!({"type": "command", "id": "c1", "command": {"type": "nope"}}));
        let v = c.next().await;
        assert_eq!((code(&v), v["id"].as_str()), ("malformed", Some("c1")));
        // Still open: a well-formed message is answered.
        c.text(serde_json::json!({"type": "auth", "token": "wrong"}));
        assert_eq!(code(&c.next().await), "bad_token");
        // The client goes away: the loop ends.
        drop(c.to_server);
        timeout(Duration::from_secs(5), c.task)
            .await
            .expect("the loop ends")
            .expect("no panic");
    }

    #[tokio::test]
    async fn auth_takes_one_seat_and_commands_need_it() {
        let h = Harness::new().await;
        let match_id = h.new_match("seat-zero").await;
        let mut other = h.connect();
        other.next().await;
        other.text(serde_json::json!({"type": "command", "id": "c1", "command": {"type": "pass"}}));
        let v = other.next().await;
        assert_eq!(
            (code(&v), v["id"].as_str()),
            ("unauthenticated", Some("c1"))
        );
        let mut c = h.connect();
        c.next().await;
        c.text(serde_json::json!({"type": "auth", "token": ""}));
        assert_eq!(code(&c.next().await), "bad_token");
        c.text(serde_json::json!({"type": "auth", "token": "seat-zero"}));
        let (t, v) = c.next_type().await;
        assert_eq!(t, "authenticated");
        assert_eq!(v["match_id"], match_id.to_string());
        assert_eq!(v["seat"], 0);
        c.text(serde_json::json!({"type": "auth", "token": "seat-zero"}));
        assert_eq!(code(&c.next().await), "already_authenticated");
        let bad_id = "x".repeat(MAX_COMMAND_ID + 1);
        c.text(serde_json::json!({"type": "command", "id": bad_id, "command": {"type": "pass"}}));
        assert_eq!(code(&c.next().await), "malformed");
    }

    #[tokio::test]
    async fn subscriptions_are_bounded_and_unknown_matches_take_no_slot() {
        let h = Harness::new().await;
        let mut c = h.connect();
        c.next().await;
        for _ in 0..MAX_SUBSCRIPTIONS + 2 {
            c.text(serde_json::json!({"type": "subscribe", "match_id": Uuid::new_v4()}));
            assert_eq!(code(&c.next().await), "unknown_match");
        }
        let mut ids = Vec::new();
        for i in 0..=MAX_SUBSCRIPTIONS {
            ids.push(h.new_match(&format!("t{i}")).await);
        }
        for id in &ids[..MAX_SUBSCRIPTIONS] {
            c.text(serde_json::json!({"type": "subscribe", "match_id": id}));
            let (t, v) = c.next_type().await;
            assert_eq!(
                (t.as_str(), v["seq"].as_u64()),
                ("snapshot", Some(0)),
                "{v}"
            );
        }
        let last = ids[MAX_SUBSCRIPTIONS];
        c.text(serde_json::json!({"type": "subscribe", "match_id": last}));
        assert_eq!(code(&c.next().await), "unavailable");
        // Subscribing again to a followed match takes no new slot; leaving one frees a slot.
        c.text(serde_json::json!({"type": "subscribe", "match_id": ids[0], "since": 0}));
        c.text(serde_json::json!({"type": "unsubscribe", "match_id": ids[1]}));
        c.text(serde_json::json!({"type": "subscribe", "match_id": last}));
        let (t, v) = c.next_type().await;
        assert_eq!(t, "snapshot", "{v}");
        assert_eq!(v["match_id"], last.to_string());
    }
}
