//! Encoding server messages into frames, once for any number of receivers.

use bytes::Bytes;
use protocol::{ErrorBody, ErrorCode, ServerMessage};
use tracing::error;

/// One encoded server message: UTF-8 JSON text, cheap to clone (shared bytes). The connection's
/// writer turns it into a WebSocket text message; match actors never see the socket's types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame(Bytes);

impl Frame {
    pub fn from_static(s: &'static str) -> Self {
        Frame(Bytes::from_static(s.as_bytes()))
    }

    /// The frame's text.
    pub fn as_str(&self) -> &str {
        // Built only from `String`s and `&str`s, so always UTF-8.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The frame's length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

impl From<String> for Frame {
    /// Gives back the string's spare capacity first (a serializer's buffer grows by doubling):
    /// a frame kept in a match's window holds its length, not up to twice that.
    fn from(mut s: String) -> Self {
        s.shrink_to_fit();
        Frame(Bytes::from(s))
    }
}

/// Serializes a server message once, for any number of receivers.
pub fn frame(msg: &ServerMessage) -> Frame {
    match serde_json::to_string(msg) {
        Ok(s) => Frame::from(s),
        Err(e) => {
            // Not reachable with the protocol's types (no non-string map keys); say so loudly.
            error!(error = %e, "cannot serialize a server message");
            Frame::from_static(
                r#"{"type":"error","code":"internal","message":"serialization failed"}"#,
            )
        }
    }
}

pub fn error_frame(code: ErrorCode, id: Option<String>, message: impl Into<String>) -> Frame {
    let mut body = ErrorBody::new(code, message);
    body.id = id;
    frame(&ServerMessage::Error(body))
}
