use protocol::ErrorBody;
use std::time::Duration;
use tokio_tungstenite::tungstenite;

/// Everything a client call can fail with.
///
/// A refusal by the server carries its stable code ([`ClientError::code`]); the network's
/// failures are [`ClientError::Connect`] and [`ClientError::WebSocket`].
///
/// ```no_run
/// # async fn f(client: carcassonne_client::Client, id: uuid::Uuid) {
/// use carcassonne_client::{ClientError, protocol::ErrorCode};
/// match client.start(id).await {
///     Ok(started) => println!("match {}", started.match_id),
///     Err(e) if e.code() == Some(ErrorCode::NotReady) => println!("waiting for the players"),
///     Err(ClientError::Connect(e)) => println!("no server: {e}"),
///     Err(e) => println!("{e}"),
/// }
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("bad URL `{url}`: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("HTTP request failed: {0}")]
    Http(#[source] hyper::Error),
    #[error("reading the HTTP response failed: {0}")]
    HttpBody(#[source] hyper::Error),
    /// A refusal whose body is not the server's error (a proxy's page, say).
    #[error("HTTP status {status}: {body}")]
    HttpStatus { status: u16, body: String },
    /// The server refused a REST call with its typed error (`error.code`, for example
    /// `name_taken` or `not_ready`). Boxed, like the other large and rare errors.
    #[error("HTTP status {status}: {} ({})", .error.message, .error.code.as_str())]
    Api { status: u16, error: Box<ErrorBody> },
    /// A TLS setting that cannot be used: a CA that does not parse, a host that is no DNS name.
    #[error("TLS: {0}")]
    TlsSetup(String),
    /// Boxed: tungstenite's error carries a whole HTTP response and would bloat every `Result`.
    #[error("WebSocket: {0}")]
    WebSocket(#[source] Box<tungstenite::Error>),
    #[error("cannot decode `{text}`: {source}")]
    Decode {
        text: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot encode a message: {0}")]
    Encode(#[source] serde_json::Error),
    /// The protocol has text frames only.
    #[error("the server sent a binary frame of {0} bytes")]
    UnexpectedBinary(usize),
    /// The server sent something else than the protocol promises here (for example a first frame
    /// that is not `welcome`).
    #[error("expected {expected}, got {got}")]
    Unexpected { expected: &'static str, got: String },
    /// The server refused a request that this call waits for (for example `auth`).
    #[error("refused: {} ({:?})", .0.message, .0.code)]
    Refused(ErrorBody),
    /// The connection ended while a call was waiting for an answer.
    #[error("connection closed{}", .0.as_ref().map(|c| format!(" with {} {}", c.code, c.reason)).unwrap_or_default())]
    Closed(Option<crate::Close>),
    #[error("no message within {0:?}")]
    Timeout(Duration),
    /// Opening the TCP connection failed (the server's address, or the local one to bind).
    #[error("connecting: {0}")]
    Connect(#[source] std::io::Error),
    #[error(transparent)]
    Mirror(#[from] crate::MirrorError),
    /// A [`crate::MatchStream`] lost its connection and every attempt to open a new one failed.
    #[error("no reconnection after {attempts} attempts; the last failed with: {last}")]
    ReconnectFailed {
        attempts: u32,
        #[source]
        last: Box<ClientError>,
    },
}

impl ClientError {
    /// The server's error code, when the server refused something with one (a REST call, or a
    /// WebSocket request this call waited for).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), carcassonne_client::ClientError> {
    /// use carcassonne_client::{Client, protocol::ErrorCode};
    /// let mut client = Client::new("http://127.0.0.1:8080")?;
    /// match client.register("ann", "correct horse").await {
    ///     Err(e) if e.code() == Some(ErrorCode::NameTaken) => {
    ///         client.login("ann", "correct horse").await?;
    ///     }
    ///     other => drop(other?),
    /// }
    /// # Ok(()) }
    /// ```
    pub fn code(&self) -> Option<protocol::ErrorCode> {
        match self {
            ClientError::Api { error, .. } => Some(error.code),
            ClientError::Refused(error) => Some(error.code),
            ClientError::ReconnectFailed { last, .. } => last.code(),
            _ => None,
        }
    }

    /// The HTTP status of a refused request or WebSocket upgrade (for example 503 when the
    /// server is at its connection limit), if that is what failed.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            ClientError::HttpStatus { status, .. } | ClientError::Api { status, .. } => {
                Some(*status)
            }
            ClientError::WebSocket(e) => match &**e {
                tungstenite::Error::Http(response) => Some(response.status().as_u16()),
                _ => None,
            },
            _ => None,
        }
    }
}

impl From<tungstenite::Error> for ClientError {
    fn from(e: tungstenite::Error) -> Self {
        ClientError::WebSocket(Box::new(e))
    }
}
