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
//! The connection is a pipeline, as the files say:
//! - this file: the loop, from the socket's events to the handlers and back to a close;
//! - [`io`]: the socket's side (writes, reads, heartbeat, linger), which knows no protocol
//!   message; [`close`]: every close code and why;
//! - [`dispatch`]: one `match` over the client's message; one file per family of messages:
//!   [`seat`], [`watch`], [`command`], [`chat`], [`lobby`];
//! - [`state`]: the connection's state in parts, each handler taking only what it changes.
//!
//! Handlers never touch the socket (they push into the connection's queue) and never call the
//! store: they ask the part that owns the question ([`crate::access`], [`crate::accounts`],
//! [`crate::chat`]).

mod chat;
mod close;
mod command;
mod dispatch;
mod io;
mod lobby;
mod seat;
mod state;
mod watch;

pub use chat::MAX_MUTES;

use crate::accounts::WsSession;
use crate::outbox::{self, ConnHandle, Signals};
use crate::state::{Lifecycle, Shared};
use crate::wire::{error_frame, frame};
use close::Close;
use futures_util::{Sink, Stream};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use io::{Ending, Event, Gate, Io, Rare};
use protocol::{ErrorCode, MAX_FRAME_BYTES, PROTOCOL_VERSION, ServerMessage};
use state::{Connection, Ctx, Follows, Seat};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tracing::{Instrument, debug, info_span};

/// Largest message the socket layer reads at all; between `MAX_FRAME_BYTES` and this, the client
/// gets a `too_large` error instead of losing its connection.
pub const HARD_LIMIT: usize = 16 * MAX_FRAME_BYTES;

/// The socket layer's read buffer per connection, and the most one read from the socket takes.
/// tungstenite holds this buffer for the connection's whole life, idle or not, and zero-fills its
/// free part, up to this size, before every read: at the default 128 KiB that was half of the
/// server's instructions per move and 128 KiB a connection. A client's command is 100–250 bytes
/// and fits one read; a larger message grows the buffer for itself and is read in several reads.
/// Idle connections are what a human-paced server holds most of, so this is kept small.
pub const READ_BUFFER: usize = 256;

/// A place among the open connections, held from the upgrade's answer to the connection's end:
/// the count is what `--max-connections` bounds and what shutdown waits to see at zero.
#[derive(Debug)]
pub struct Slot(Arc<Shared>);

impl Slot {
    /// A place, unless the server holds its limit of connections (open or being opened).
    pub fn take(shared: &Arc<Shared>) -> Option<Slot> {
        let limit = shared.config.conn.connection_limit();
        shared
            .connections
            .send_if_modified(|n| {
                let free = *n < limit;
                if free {
                    *n += 1;
                }
                free
            })
            .then(|| Slot(Arc::clone(shared)))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.connections.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// The socket layer's settings: messages up to [`HARD_LIMIT`], a small read buffer.
fn socket_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(HARD_LIMIT))
        .max_frame_size(Some(HARD_LIMIT))
        .read_buffer_size(READ_BUFFER)
}

/// What a connection is given at its upgrade, boxed while the upgrade completes (a pointer in
/// the connection's task, freed once the loop has taken it).
struct Upgrade {
    slot: Slot,
    peer: SocketAddr,
    client: IpAddr,
    session: Option<WsSession>,
}

/// The task of a WebSocket connection, from its upgrade (once the 101 is sent) to its end, in its
/// `slot`; `peer`: the TCP peer (a proxy, maybe), `client`: the client's address
/// ([`crate::client_addr`]), which the per-address limits use; `session`: the account session
/// the upgrade carried, if any.
///
/// The loop's future is held inline: this task is all that a connection keeps of its upgrade.
/// Not an `async fn`: one would keep room for its arguments for the task's whole life beside
/// the loop they go into; here the task holds the upgrade's future and a pointer until the
/// upgrade completes, then the loop's future and the slot.
pub fn serve(
    upgrade: OnUpgrade,
    slot: Slot,
    peer: SocketAddr,
    client: IpAddr,
    session: Option<WsSession>,
) -> impl Future<Output = ()> + Send + 'static {
    let given = Box::new(Upgrade {
        slot,
        peer,
        client,
        session,
    });
    async move {
        let upgraded = match upgrade.await {
            Ok(u) => u,
            Err(e) => return debug!(error = %e, "the upgrade failed"),
        };
        let socket = WebSocketStream::from_raw_socket(
            TokioIo::new(upgraded),
            Role::Server,
            Some(socket_config()),
        )
        .await;
        let (connection, slot) = start(socket, *given);
        connection.await;
        drop(slot);
    }
}

/// The connection's loop in its span, and the slot to give back after it.
fn start<S>(socket: S, given: Upgrade) -> (impl Future<Output = ()> + Send, Slot)
where
    S: Stream<Item = Result<Message, WsError>> + Sink<Message, Error = WsError> + Unpin + Send,
{
    let Upgrade {
        slot,
        peer,
        client,
        session,
    } = given;
    let shared = Arc::clone(&slot.0);
    let id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
    // A root span: a child would keep the upgrade request's span (and its record in the
    // subscriber) alive for the connection's whole life; this one names the client itself.
    let span = info_span!(
        parent: None,
        "conn",
        conn_id = id,
        %client,
        %peer,
        match_id = tracing::field::Empty,
        seat = tracing::field::Empty
    );
    let connection = run(socket, shared, id, session, Some(client)).instrument(span);
    (connection, slot)
}

/// The connection's loop over any socket of messages: a WebSocket in production, in-memory
/// channels in the unit tests.
///
/// The state is built before the loop's future, which takes it as it is: an `async fn` would
/// keep its arguments (the socket, the session) beside the state built from them, for the
/// connection's whole life.
pub(crate) fn run<S>(
    socket: S,
    shared: Arc<Shared>,
    id: u64,
    session: Option<WsSession>,
    client: Option<IpAddr>,
) -> impl Future<Output = ()> + Send
where
    S: Stream<Item = Result<Message, WsError>> + Sink<Message, Error = WsError> + Unpin + Send,
{
    let config = Arc::clone(&shared.config);
    let (out_tx, out_rx) = outbox::channel(config.conn.outgoing_queue);
    let signals = Arc::new(Signals::default());
    let handle = ConnHandle::new(id, out_tx, Arc::clone(&signals));
    let (gate, read_waker, rare_waker) = Gate::new();
    let mut io = Io::new(
        socket,
        out_rx,
        handle.clone(),
        config.conn.write_timeout,
        shared.metrics.outgoing_depth.clone(),
        read_waker,
    );
    let mut conn = Connection {
        ctx: Ctx {
            shared: Arc::clone(&shared),
            handle,
            session,
            client,
            mutes: Default::default(),
            limits: Default::default(),
        },
        seat: Seat::default(),
        follows: Follows::default(),
    };
    let ctx = &conn.ctx;
    ctx.reply(frame(&ServerMessage::Welcome {
        protocol_version: PROTOCOL_VERSION,
        rules_version: rules::RULES_VERSION.to_string(),
        server_version: env!("CARGO_PKG_VERSION").to_string(),
    }));
    if let Some(s) = &ctx.session {
        ctx.reply(frame(&ServerMessage::Identified {
            account: s.account.clone(),
        }));
    }
    async move {
        debug!("connected");
        let ctx = &conn.ctx;
        // Revoking the session closes the connection (4002); registered until the loop ends.
        let _live_session = ctx
            .session
            .as_ref()
            .map(|s| shared.live_sessions.open(s, id, &signals));
        // The flag starts from the value this receiver has seen, so that no change is missed.
        let mut lifecycle = shared.lifecycle.clone();
        let accepting = &signals.accepting;
        accepting.store(
            *lifecycle.borrow_and_update() == Lifecycle::Running,
            Ordering::Release,
        );
        let ending = async {
            let signalled = async {
                signals.wait().await;
                if signals.is_revoked() {
                    Ending::Revoked
                } else {
                    Ending::TooSlow
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
                e = signalled => e,
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

        let close: Option<Close> = loop {
            match gate.next(&mut rare, &mut io).await {
                Event::Read(msg) => match msg {
                    None | Some(Ok(Message::Close(_))) => break None,
                    Some(Err(e)) => {
                        debug!(error = %e, "read failed");
                        break Close::for_read_error(e);
                    }
                    Some(Ok(Message::Text(text))) => {
                        // Boxed: a handler's future (a store query's, say) takes its memory while it
                        // runs, not for the connection's whole life as part of this task's.
                        let handling = Box::pin(dispatch::on_text(&mut conn, text.as_str()));
                        if !io.writing_while(handling).await {
                            break None;
                        }
                    }
                    Some(Ok(Message::Binary(_))) => conn.ctx.reply(error_frame(
                        ErrorCode::Binary,
                        None,
                        "binary frames are not part of the protocol: send JSON text",
                    )),
                    Some(Ok(Message::Pong(_))) => last_pong = Instant::now(),
                    // Pings are answered by the socket layer; it never hands a raw frame out.
                    Some(Ok(Message::Ping(_) | Message::Frame(_))) => {}
                },
                Event::Tick => {
                    if last_pong.elapsed() > config.conn.heartbeat_timeout {
                        break Some(Close::HeartbeatTimeout);
                    }
                    io.ping = true;
                }
                Event::Ending(Ending::TooSlow) => {} // raised: closed just below
                Event::Ending(Ending::Revoked) => break Some(Close::SessionRevoked),
                Event::Ending(Ending::Closing) => break Some(Close::GoingAway),
                Event::WriteFailed => break None,
            }
            if signals.is_raised() {
                break Some(if signals.is_moved() {
                    Close::Moved
                } else {
                    Close::TooSlow
                });
            }
        };

        shared.metrics.closed(close.map(Close::code));
        if let Some(close) = close {
            debug!(code = close.code(), reason = close.reason(), "closing");
            Box::pin(io.close(close)).await;
        }
        conn.follows.leave_all(&conn.ctx);
        drop(conn);
        drop(rare);
        Box::pin(io.finish()).await;
        debug!("disconnected");
    }
}

#[cfg(test)]
mod tests;
