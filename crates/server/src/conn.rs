//! One task per WebSocket connection (plus a writer task that owns the socket's sending half).
//!
//! Everything the client is sent goes through one bounded queue: match actors and this task
//! `try_send` into it, and when it is full the client is closed with `close::TOO_SLOW` (it
//! reconnects and subscribes with `since`). A client that does not read therefore costs its own
//! connection, never its match. Socket writes have a timeout for the same reason.
//!
//! Frame size: the socket accepts messages up to [`HARD_LIMIT`] bytes; a text message above
//! [`protocol::MAX_FRAME_BYTES`] but within that gets an `Error { code: too_large }` and the
//! connection goes on. Only a message above the hard limit, which tungstenite refuses while
//! reading, closes the connection with 1009 (message too big).

use crate::actor::{ActorMsg, ConnHandle, MatchHandle, TooSlow, error_frame, frame};
use crate::{Phase, Shared, token_hash};
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use protocol::{ClientMessage, ErrorCode, MAX_FRAME_BYTES, PROTOCOL_VERSION, ServerMessage, close};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::{Notify, mpsc};
use tokio::time::{Instant, timeout};
use tracing::{Instrument, debug, info_span, warn};
use uuid::Uuid;

/// Largest message the socket layer reads at all; between `MAX_FRAME_BYTES` and this, the client
/// gets a `too_large` error instead of losing its connection.
pub const HARD_LIMIT: usize = 16 * MAX_FRAME_BYTES;

/// Subscriptions one connection may hold.
const MAX_SUBSCRIPTIONS: usize = 16;

/// Longest client command id.
const MAX_COMMAND_ID: usize = 128;

const GOING_AWAY: u16 = 1001;
const PROTOCOL_ERROR: u16 = 1002;
const INVALID_PAYLOAD: u16 = 1007;

/// Most queued frames written in one flush (bounds the time one write may take).
const MAX_FRAMES_PER_FLUSH: usize = 64;

/// How long a closing connection waits for the client's close frame.
const LINGER: Duration = Duration::from_secs(2);
const TOO_BIG: u16 = 1009;

enum Ctrl {
    Ping,
    /// Close the socket; with `flush`, first send what is queued (graceful shutdown).
    Close {
        code: u16,
        reason: &'static str,
        flush: bool,
    },
}

/// Counts live connections so that shutdown can wait for them.
struct LiveGuard(Arc<Shared>);

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.connections.send_modify(|n| *n = n.saturating_sub(1));
    }
}

pub async fn serve(socket: WebSocket, shared: Arc<Shared>, peer: SocketAddr) {
    let id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
    shared.connections.send_modify(|n| *n += 1);
    let guard = LiveGuard(Arc::clone(&shared));
    let span = info_span!("conn", id, %peer, seat = tracing::field::Empty);
    run(socket, shared, id).instrument(span).await;
    drop(guard);
}

async fn run(socket: WebSocket, shared: Arc<Shared>, id: u64) {
    debug!("connected");
    let config = Arc::clone(&shared.config);
    let (sink, mut stream) = socket.split();
    let (out_tx, out_rx) = mpsc::channel::<Utf8Bytes>(config.outgoing_queue.max(4));
    let (ctrl_tx, ctrl_rx) = mpsc::channel::<Ctrl>(4);
    let drained = Arc::new(Notify::new());
    let mut writer = tokio::spawn(
        writer(
            sink,
            out_rx,
            ctrl_rx,
            Arc::clone(&drained),
            config.write_timeout(),
        )
        .instrument(tracing::Span::current()),
    );
    let too_slow = Arc::new(TooSlow::default());
    let mut conn = Connection {
        shared: Arc::clone(&shared),
        handle: ConnHandle::new(id, out_tx, Arc::clone(&too_slow), drained),
        seat: None,
        seat_handle: None,
        subscriptions: HashMap::new(),
    };
    conn.reply(frame(&ServerMessage::Welcome {
        protocol_version: PROTOCOL_VERSION,
        rules_version: rules::RULES_VERSION.to_string(),
        server_version: env!("CARGO_PKG_VERSION").to_string(),
    }));

    let mut phase = shared.phase.clone();
    let mut ping = tokio::time::interval_at(
        Instant::now() + config.heartbeat_interval(),
        config.heartbeat_interval(),
    );
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_pong = Instant::now();

    let close: Option<(u16, &'static str, bool)> = loop {
        tokio::select! {
            msg = stream.next() => match msg {
                None | Some(Ok(Message::Close(_))) => break None,
                Some(Err(e)) => {
                    debug!(error = %e, "read failed");
                    break violation_close(e).map(|(code, reason)| (code, reason, false));
                }
                Some(Ok(Message::Text(text))) => conn.on_text(text).await,
                Some(Ok(Message::Binary(_))) => conn.reply(error_frame(
                    ErrorCode::Binary,
                    None,
                    "binary frames are not part of the protocol: send JSON text",
                )),
                Some(Ok(Message::Pong(_))) => last_pong = Instant::now(),
                Some(Ok(Message::Ping(_))) => {} // answered by the socket layer
            },
            _ = ping.tick() => {
                if last_pong.elapsed() > config.heartbeat_timeout() {
                    break Some((close::HEARTBEAT_TIMEOUT, "no pong within the heartbeat timeout", false));
                }
                let _ = ctrl_tx.try_send(Ctrl::Ping);
            }
            () = too_slow.wait() => {}
            res = phase.changed() => {
                let closing = res.is_err() || *phase.borrow_and_update() == Phase::Closing;
                if closing {
                    break Some((GOING_AWAY, "server shutting down", true));
                }
            }
            _ = &mut writer => break None,
        }
        if too_slow.is_raised() {
            break Some((
                close::TOO_SLOW,
                "too slow: reconnect and subscribe with since",
                false,
            ));
        }
    };

    if let Some((code, reason, flush)) = close {
        debug!(code, reason, "closing");
        let _ = timeout(
            Duration::from_secs(1),
            ctrl_tx.send(Ctrl::Close {
                code,
                reason,
                flush,
            }),
        )
        .await;
        // Closing handshake: wait a little for the client's close (reading what it still
        // sends). Dropping the socket at once would make the client's kernel answer its next
        // write with a reset, which discards our close frame before the client reads it.
        let _ = timeout(LINGER, async {
            while let Some(Ok(msg)) = stream.next().await {
                if let Message::Close(_) = msg {
                    break;
                }
            }
        })
        .await;
    }
    conn.leave();
    drop(conn);
    drop(ctrl_tx);
    if !writer.is_finished() && timeout(config.write_timeout(), &mut writer).await.is_err() {
        writer.abort();
    }
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

/// Owns the sending half: drains control messages first, then the outgoing queue. `drained` is
/// notified after each write, for catch-ups that wait for room in the queue.
async fn writer(
    mut sink: SplitSink<WebSocket, Message>,
    mut out: mpsc::Receiver<Utf8Bytes>,
    mut ctrl: mpsc::Receiver<Ctrl>,
    drained: Arc<Notify>,
    write_timeout: Duration,
) {
    async fn send(
        sink: &mut SplitSink<WebSocket, Message>,
        msg: Message,
        t: Duration,
    ) -> Result<(), ()> {
        match timeout(t, sink.send(msg)).await {
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
    /// Writes `first` and whatever else is queued (up to a bound) in one flush: the ack and
    /// the diff of a command leave together, in one TCP segment when they fit.
    async fn write_queued(
        sink: &mut SplitSink<WebSocket, Message>,
        first: Utf8Bytes,
        out: &mut mpsc::Receiver<Utf8Bytes>,
        t: Duration,
    ) -> Result<(), ()> {
        let write = async {
            sink.feed(Message::Text(first)).await?;
            for _ in 1..MAX_FRAMES_PER_FLUSH {
                match out.try_recv() {
                    Ok(f) => sink.feed(Message::Text(f)).await?,
                    Err(_) => break,
                }
            }
            sink.flush().await
        };
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
    loop {
        tokio::select! {
            biased;
            c = ctrl.recv() => match c {
                Some(Ctrl::Ping) => {
                    if send(&mut sink, Message::Ping(Default::default()), write_timeout).await.is_err() {
                        break;
                    }
                }
                Some(Ctrl::Close { code, reason, flush }) => {
                    if flush {
                        while let Ok(f) = out.try_recv() {
                            if send(&mut sink, Message::Text(f), write_timeout).await.is_err() {
                                break;
                            }
                        }
                    }
                    let frame = CloseFrame { code, reason: Utf8Bytes::from_static(reason) };
                    let _ = send(&mut sink, Message::Close(Some(frame)), write_timeout).await;
                    break;
                }
                None => break,
            },
            f = out.recv() => match f {
                Some(f) => {
                    if write_queued(&mut sink, f, &mut out, write_timeout).await.is_err() {
                        break;
                    }
                    drained.notify_waiters();
                }
                None => break,
            },
        }
    }
    let _ = timeout(Duration::from_secs(1), sink.close()).await;
}

struct Connection {
    shared: Arc<Shared>,
    handle: ConnHandle,
    /// The seat this connection holds: (match, seat).
    seat: Option<(Uuid, u8)>,
    seat_handle: Option<MatchHandle>,
    subscriptions: HashMap<Uuid, MatchHandle>,
}

impl Connection {
    /// Queues a frame for this client; an overflow raises `too_slow`, which closes the socket.
    fn reply(&self, frame: Utf8Bytes) {
        self.handle.push(frame);
    }

    async fn on_text(&mut self, text: Utf8Bytes) {
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
            ClientMessage::Subscribe { match_id, since } => self.subscribe(match_id, since).await,
            ClientMessage::Unsubscribe { match_id } => {
                if let Some(h) = self.subscriptions.remove(&match_id) {
                    let _ = h.tx.try_send(ActorMsg::Unsubscribe {
                        conn_id: self.handle.id,
                    });
                }
            }
            ClientMessage::Command { id, command } => self.command(id, command),
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
                tracing::Span::current().record("seat", seat);
                debug!(%match_id, seat, "authenticated");
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

    async fn subscribe(&mut self, match_id: Uuid, since: Option<u64>) {
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
        let cached = self.subscriptions.remove(&match_id);
        let msg = ActorMsg::Subscribe {
            conn: self.handle.clone(),
            since,
        };
        match self.send_to(match_id, cached.clone(), msg) {
            Ok(h) => {
                self.subscriptions.insert(match_id, h);
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

    fn command(&mut self, id: String, command: rules::Command) {
        let Some((match_id, seat)) = self.seat else {
            self.reply(error_frame(
                ErrorCode::Unauthenticated,
                Some(id),
                "authenticate with a seat token first",
            ));
            return;
        };
        // Control characters are refused: Postgres cannot store a NUL in text, and a write
        // that fails takes down the whole batch (other seats' commands with it).
        if id.is_empty() || id.len() > MAX_COMMAND_ID || id.chars().any(char::is_control) {
            self.reply(error_frame(
                ErrorCode::Malformed,
                Some(id),
                format!("a command id has 1 to {MAX_COMMAND_ID} bytes and no control characters"),
            ));
            return;
        }
        if *self.shared.phase.borrow() != Phase::Running {
            self.reply(error_frame(
                ErrorCode::Unavailable,
                Some(id),
                "the server is shutting down",
            ));
            return;
        }
        let cached = self.seat_handle.take();
        let msg = ActorMsg::Command {
            conn: self.handle.clone(),
            seat,
            id: id.clone(),
            command,
        };
        match self.send_to(match_id, cached, msg) {
            Ok(h) => self.seat_handle = Some(h),
            Err(code) => self.reply(error_frame(code, Some(id), busy_message(code))),
        }
    }

    /// Queues a message for a match actor without waiting: a full inbox is `busy`. A retired
    /// actor (closed inbox) is replaced once through the registry.
    fn send_to(
        &self,
        match_id: Uuid,
        cached: Option<MatchHandle>,
        mut msg: ActorMsg,
    ) -> Result<MatchHandle, ErrorCode> {
        let mut handle = cached;
        for _ in 0..2 {
            let h = match handle.take() {
                Some(h) if !h.tx.is_closed() => h,
                _ => self
                    .shared
                    .registry
                    .get_or_load(match_id)
                    .map_err(|_| ErrorCode::Unavailable)?,
            };
            match h.tx.try_send(msg) {
                Ok(()) => return Ok(h),
                Err(mpsc::error::TrySendError::Full(_)) => return Err(ErrorCode::Busy),
                Err(mpsc::error::TrySendError::Closed(m)) => msg = m,
            }
        }
        Err(ErrorCode::Unavailable)
    }

    /// Tells the actors this connection followed that it is gone.
    fn leave(&mut self) {
        for (_, h) in self.subscriptions.drain() {
            let _ = h.tx.try_send(ActorMsg::Unsubscribe {
                conn_id: self.handle.id,
            });
        }
    }
}

fn busy_message(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::Busy => "the match is busy; try again",
        _ => "the match is not available now",
    }
}
