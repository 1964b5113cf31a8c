//! One WebSocket connection to the server.

use crate::{ClientError, Tls};
use futures_util::{SinkExt, StreamExt};
use protocol::{ClientMessage, ErrorBody, Seq, ServerMessage};
use rules::Command;
use std::collections::VecDeque;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::{self, Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use uuid::Uuid;

/// The socket layer's read buffer: room for a few diffs per read; a larger message (a snapshot)
/// grows it for itself.
const READ_BUFFER: usize = 16 * 1024;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A small read buffer: tungstenite zero-fills the free part of it (128 KiB by default) before
/// every read from the socket, which cost more than the rest of reading a diff.
fn config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
}

/// What the server said about itself in its first frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Welcome {
    pub protocol_version: u32,
    pub rules_version: String,
    pub server_version: String,
}

/// The seat a token gave this connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seat {
    pub match_id: Uuid,
    pub seat: u8,
}

/// The close frame the server sent, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Close {
    pub code: u16,
    pub reason: String,
}

/// The server's answer to one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandOutcome {
    /// Stored and applied as `seq`.
    Accepted { match_id: Uuid, seq: Seq },
    /// Refused; the match goes on.
    Rejected(ErrorBody),
}

/// A WebSocket connection that speaks the protocol.
///
/// Pings from the server are answered by tungstenite while the connection is being read (any of
/// [`Connection::next_message`], [`Connection::command`], [`Connection::auth`],
/// [`Connection::wait_for`]): a connection that is not read does not answer pings and is closed
/// by the server with 4000 after its heartbeat timeout.
///
/// Calls that wait for one answer ([`Connection::auth`], [`Connection::command`]) keep the other
/// messages that arrive meanwhile; [`Connection::next_message`] returns those first, in arrival
/// order.
///
/// The protocol's lowest layer: a bot plays more simply through [`crate::MatchStream`], which
/// keeps the view and reconnects.
///
/// ```no_run
/// # async fn f(match_id: uuid::Uuid, token: &str) -> Result<(), carcassonne_client::ClientError> {
/// use carcassonne_client::{CommandOutcome, Connection, protocol::ServerMessage, rules::Command};
/// let mut conn = Connection::connect("ws://127.0.0.1:8080/ws").await?;
/// let seat = conn.auth(token).await?;
/// conn.subscribe(match_id, None).await?;
/// while let Some(message) = conn.next_message().await? {
///     if let ServerMessage::Snapshot { seq, .. } = message {
///         println!("seat {} sees seq {seq}", seat.seat);
///         break;
///     }
/// }
/// match conn.command("c1", Command::Pass {}).await? {
///     CommandOutcome::Accepted { seq, .. } => println!("stored as {seq}"),
///     CommandOutcome::Rejected(error) => println!("refused: {}", error.message),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Connection {
    ws: Ws,
    welcome: Welcome,
    pending: VecDeque<ServerMessage>,
    read_timeout: Option<Duration>,
    close: Option<Close>,
    /// Every text frame received, as sent, when recording (tests scan what reached a client,
    /// including fields the protocol types would drop when parsing).
    frames: Option<Vec<String>>,
}

impl Connection {
    /// Connects to `ws_url` (for example `ws://127.0.0.1:8080/ws`) and reads the `welcome`.
    pub async fn connect(ws_url: &str) -> Result<Connection, ClientError> {
        Connection::open(ws_url, false, None).await
    }

    /// Like [`Connection::connect`], from the local address `local` (port chosen by the system):
    /// a load test spreads its connections over several loopback addresses (`127.0.0.2`, …) so
    /// that one address's ephemeral ports do not run out. Plain `ws://` only.
    pub async fn connect_from(
        ws_url: &str,
        local: std::net::IpAddr,
    ) -> Result<Connection, ClientError> {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let bad = |reason: &str| ClientError::BadUrl {
            url: ws_url.to_owned(),
            reason: reason.to_owned(),
        };
        let request = ws_url.into_client_request()?;
        let uri = request.uri();
        if uri.scheme_str() != Some("ws") {
            return Err(bad("a local address is for ws:// only"));
        }
        let host = uri.host().ok_or_else(|| bad("no host"))?;
        let port = uri.port_u16().unwrap_or(80);
        let server = tokio::net::lookup_host((host, port))
            .await
            .map_err(ClientError::Connect)?
            .find(|a| a.is_ipv4() == local.is_ipv4())
            .ok_or_else(|| bad("no address of the local address's family"))?;
        let socket = match local {
            std::net::IpAddr::V4(_) => tokio::net::TcpSocket::new_v4(),
            std::net::IpAddr::V6(_) => tokio::net::TcpSocket::new_v6(),
        }
        .map_err(ClientError::Connect)?;
        socket
            .bind(std::net::SocketAddr::new(local, 0))
            .map_err(ClientError::Connect)?;
        let stream = socket.connect(server).await.map_err(ClientError::Connect)?;
        stream.set_nodelay(true).map_err(ClientError::Connect)?;
        let (ws, _response) = tokio_tungstenite::client_async_with_config(
            request,
            MaybeTlsStream::Plain(stream),
            Some(config()),
        )
        .await?;
        Connection::welcomed(ws, false).await
    }

    /// Like [`Connection::connect`], and keeps every text frame received from the first (the
    /// `welcome`) on, as sent; [`Connection::take_frames`] hands them over.
    pub async fn connect_recording(ws_url: &str) -> Result<Connection, ClientError> {
        Connection::open(ws_url, true, None).await
    }

    /// The text frames recorded since the last call (empty when not recording).
    pub fn take_frames(&mut self) -> Vec<String> {
        self.frames.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Like [`Connection::connect`], with extra headers on the upgrade request: an account
    /// session as `("Authorization", "Bearer <token>")` or `("Cookie", "session=<token>")`. With
    /// a valid session the server sends `identified` right after the `welcome`.
    pub async fn connect_with_headers(
        ws_url: &str,
        headers: &[(&str, &str)],
    ) -> Result<Connection, ClientError> {
        Connection::connect_tls(ws_url, Tls::shared_default(), headers).await
    }

    /// Like [`Connection::connect_with_headers`], trusting the servers `tls` trusts for a
    /// `wss://` URL (a plain `ws://` one ignores it).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), carcassonne_client::ClientError> {
    /// use carcassonne_client::{Connection, Tls};
    /// let ca = std::fs::read("ca.pem").unwrap_or_default();
    /// let tls = Tls::with_ca_pem(&ca)?;
    /// let conn = Connection::connect_tls("wss://127.0.0.1:8443/ws", &tls, &[]).await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect_tls(
        ws_url: &str,
        tls: &Tls,
        headers: &[(&str, &str)],
    ) -> Result<Connection, ClientError> {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
        let mut request = ws_url.into_client_request()?;
        for (k, v) in headers {
            let name = HeaderName::from_bytes(k.as_bytes()).map_err(|e| ClientError::BadUrl {
                url: ws_url.to_owned(),
                reason: e.to_string(),
            })?;
            let value = HeaderValue::from_str(v).map_err(|e| ClientError::BadUrl {
                url: ws_url.to_owned(),
                reason: e.to_string(),
            })?;
            request.headers_mut().insert(name, value);
        }
        Connection::open(request, false, Some(tls)).await
    }

    async fn open(
        request: impl tokio_tungstenite::tungstenite::client::IntoClientRequest + Unpin,
        record: bool,
        tls: Option<&Tls>,
    ) -> Result<Connection, ClientError> {
        let connector = tls.unwrap_or(Tls::shared_default()).connector();
        // Nagle off, like the server: every command is a small write that the sender waits on.
        let (ws, _response) = tokio_tungstenite::connect_async_tls_with_config(
            request,
            Some(config()),
            true,
            Some(connector),
        )
        .await?;
        Connection::welcomed(ws, record).await
    }

    /// Reads the `welcome` of a connection just opened.
    async fn welcomed(ws: Ws, record: bool) -> Result<Connection, ClientError> {
        let mut conn = Connection {
            ws,
            welcome: Welcome {
                protocol_version: 0,
                rules_version: String::new(),
                server_version: String::new(),
            },
            pending: VecDeque::new(),
            read_timeout: None,
            close: None,
            frames: record.then(Vec::new),
        };
        match conn.read_message().await? {
            Some(ServerMessage::Welcome {
                protocol_version,
                rules_version,
                server_version,
            }) => {
                conn.welcome = Welcome {
                    protocol_version,
                    rules_version,
                    server_version,
                };
                Ok(conn)
            }
            Some(other) => Err(ClientError::Unexpected {
                expected: "welcome",
                got: format!("{other:?}"),
            }),
            None => Err(ClientError::Closed(conn.close)),
        }
    }

    pub fn welcome(&self) -> &Welcome {
        &self.welcome
    }

    /// Bounds every wait for a frame (`None`: wait for ever, the default). A wait that runs out
    /// fails with [`ClientError::Timeout`] and leaves the connection usable.
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) {
        self.read_timeout = timeout;
    }

    /// The close frame the server sent, once the connection has ended.
    pub fn close_frame(&self) -> Option<&Close> {
        self.close.as_ref()
    }

    /// Sends one message without waiting for anything.
    pub async fn send(&mut self, message: &ClientMessage) -> Result<(), ClientError> {
        let text = serde_json::to_string(message).map_err(ClientError::Encode)?;
        self.ws.send(Message::text(text)).await?;
        Ok(())
    }

    /// Claims the seat of `token` and waits for the answer: the seat, or
    /// [`ClientError::Refused`] with the server's error.
    pub async fn auth(&mut self, token: &str) -> Result<Seat, ClientError> {
        self.send(&ClientMessage::Auth {
            token: token.to_owned(),
        })
        .await?;
        self.await_seat().await
    }

    /// Plays the seat that this connection's account (its session on the upgrade) holds in
    /// `match_id`, and waits for the answer, as [`Connection::auth`].
    pub async fn take_seat(&mut self, match_id: Uuid) -> Result<Seat, ClientError> {
        self.send(&ClientMessage::TakeSeat { match_id }).await?;
        self.await_seat().await
    }

    /// The answer to `auth` or `take_seat`: `authenticated`, or an error, which carries no
    /// command id (so any id-less error answers it).
    async fn await_seat(&mut self) -> Result<Seat, ClientError> {
        let reply = self
            .await_reply(|m| {
                matches!(
                    m,
                    ServerMessage::Authenticated { .. }
                        | ServerMessage::Error(ErrorBody { id: None, .. })
                )
            })
            .await?;
        match reply {
            ServerMessage::Authenticated { match_id, seat } => Ok(Seat { match_id, seat }),
            ServerMessage::Error(body) => Err(ClientError::Refused(body)),
            other => Err(ClientError::Unexpected {
                expected: "the answer",
                got: format!("{other:?}"),
            }),
        }
    }

    /// Like [`Connection::subscribe`], with the invite code a private lobby's match needs.
    pub async fn watch(
        &mut self,
        match_id: Uuid,
        invite_code: &str,
        since: Option<Seq>,
    ) -> Result<(), ClientError> {
        self.send(&ClientMessage::Watch {
            match_id,
            invite_code: invite_code.to_owned(),
            since,
        })
        .await
    }

    /// Follows a lobby: its state comes as `lobby` messages through
    /// [`Connection::next_message`].
    pub async fn subscribe_lobby(&mut self, lobby_id: Uuid) -> Result<(), ClientError> {
        self.send(&ClientMessage::SubscribeLobby { lobby_id }).await
    }

    /// Asks for `match_id`'s messages. `since`: the last seq already applied; `None` asks for a
    /// snapshot. Does not wait: the snapshot or diffs come through [`Connection::next_message`]
    /// (and nothing comes when `since` is already the latest seq).
    pub async fn subscribe(
        &mut self,
        match_id: Uuid,
        since: Option<Seq>,
    ) -> Result<(), ClientError> {
        self.send(&ClientMessage::Subscribe { match_id, since })
            .await
    }

    pub async fn unsubscribe(&mut self, match_id: Uuid) -> Result<(), ClientError> {
        self.send(&ClientMessage::Unsubscribe { match_id }).await
    }

    /// Sends a command without waiting for its answer.
    pub async fn send_command(&mut self, id: &str, command: Command) -> Result<(), ClientError> {
        self.send(&ClientMessage::Command {
            id: id.to_owned(),
            command,
        })
        .await
    }

    /// Sends a command and waits for the `ack` or `error` that carries `id`. Other messages that
    /// arrive first (diffs, answers to other ids) stay queued for [`Connection::next_message`].
    pub async fn command(
        &mut self,
        id: &str,
        command: Command,
    ) -> Result<CommandOutcome, ClientError> {
        self.send_command(id, command).await?;
        let reply = self
            .await_reply(|m| match m {
                ServerMessage::Ack { id: got, .. } => got == id,
                ServerMessage::Error(body) => body.id.as_deref() == Some(id),
                _ => false,
            })
            .await?;
        match reply {
            ServerMessage::Ack { match_id, seq, .. } => {
                Ok(CommandOutcome::Accepted { match_id, seq })
            }
            ServerMessage::Error(body) => Ok(CommandOutcome::Rejected(body)),
            other => Err(ClientError::Unexpected {
                expected: "the answer",
                got: format!("{other:?}"),
            }),
        }
    }

    /// The next server message: queued ones first, then from the socket. `Ok(None)` once the
    /// connection has ended; [`Connection::close_frame`] then tells how.
    pub async fn next_message(&mut self) -> Result<Option<ServerMessage>, ClientError> {
        if let Some(m) = self.pending.pop_front() {
            return Ok(Some(m));
        }
        self.read_message().await
    }

    /// Like [`Connection::next_message`], as the text the server sent, for a caller that parses
    /// only what it needs (the load generator). A message already queued (read while
    /// [`Connection::auth`] or [`Connection::command`] waited) comes first, serialized again.
    pub async fn next_text(&mut self) -> Result<Option<TextFrame>, ClientError> {
        if let Some(m) = self.pending.pop_front() {
            let text = serde_json::to_string(&m).map_err(ClientError::Encode)?;
            return Ok(Some(text.into()));
        }
        Ok(self.read_text().await?.map(TextFrame))
    }

    /// The first message (queued or new) for which `wanted` holds; the others stay queued in
    /// order. Fails with [`ClientError::Closed`] if the connection ends first.
    pub async fn wait_for(
        &mut self,
        mut wanted: impl FnMut(&ServerMessage) -> bool,
    ) -> Result<ServerMessage, ClientError> {
        if let Some(i) = self.pending.iter().position(&mut wanted)
            && let Some(m) = self.pending.remove(i)
        {
            return Ok(m);
        }
        self.await_reply(wanted).await
    }

    /// Sends a text frame as is (malformed or oversized messages, in tests).
    pub async fn send_raw_text(&mut self, text: String) -> Result<(), ClientError> {
        self.ws.send(Message::text(text)).await?;
        Ok(())
    }

    /// Sends a binary frame, which the protocol does not allow (in tests).
    pub async fn send_raw_binary(&mut self, bytes: Vec<u8>) -> Result<(), ClientError> {
        self.ws.send(Message::binary(bytes)).await?;
        Ok(())
    }

    /// Closes with 1000 and reads until the server completes the closing handshake (messages still
    /// in flight are dropped).
    pub async fn close(&mut self) -> Result<(), ClientError> {
        match self.ws.close(None).await {
            Ok(())
            | Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {}
            Err(e) => return Err(e.into()),
        }
        while self.read_message().await?.is_some() {}
        Ok(())
    }

    /// Reads from the socket only, until `wanted` holds; queues the rest.
    async fn await_reply(
        &mut self,
        mut wanted: impl FnMut(&ServerMessage) -> bool,
    ) -> Result<ServerMessage, ClientError> {
        loop {
            match self.read_message().await? {
                Some(m) if wanted(&m) => return Ok(m),
                Some(m) => self.pending.push_back(m),
                None => return Err(ClientError::Closed(self.close.clone())),
            }
        }
    }

    /// The next protocol message from the socket.
    async fn read_message(&mut self) -> Result<Option<ServerMessage>, ClientError> {
        let Some(text) = self.read_text().await? else {
            return Ok(None);
        };
        serde_json::from_str(text.as_str())
            .map(Some)
            .map_err(|source| ClientError::Decode {
                text: text.as_str().to_owned(),
                source,
            })
    }

    /// The next text frame from the socket; control frames are handled here.
    async fn read_text(&mut self) -> Result<Option<Utf8Bytes>, ClientError> {
        // One deadline for the whole wait: pings (every second in tests) must not re-arm it.
        let deadline = self
            .read_timeout
            .map(|limit| (tokio::time::Instant::now() + limit, limit));
        loop {
            let frame = match deadline {
                // `next` is cancel-safe: a frame is never half-read when the timeout fires.
                Some((at, limit)) => tokio::time::timeout_at(at, self.ws.next())
                    .await
                    .map_err(|_| ClientError::Timeout(limit))?,
                None => self.ws.next().await,
            };
            let text = match frame {
                None
                | Some(Err(
                    tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed,
                )) => return Ok(None),
                Some(Err(e)) => return Err(e.into()),
                Some(Ok(Message::Text(text))) => {
                    if let Some(frames) = &mut self.frames {
                        frames.push(text.as_str().to_owned());
                    }
                    text
                }
                Some(Ok(Message::Binary(bytes))) => {
                    return Err(ClientError::UnexpectedBinary(bytes.len()));
                }
                Some(Ok(Message::Close(frame))) => {
                    self.close = frame.map(|f| Close {
                        code: u16::from(f.code),
                        reason: f.reason.as_str().to_owned(),
                    });
                    continue;
                }
                // tungstenite queues the pong itself and sends it on the next read or write.
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
            };
            return Ok(Some(text));
        }
    }
}

/// One text frame from the server, as sent ([`Connection::next_text`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFrame(Utf8Bytes);

impl TextFrame {
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl From<String> for TextFrame {
    fn from(text: String) -> Self {
        TextFrame(text.into())
    }
}
