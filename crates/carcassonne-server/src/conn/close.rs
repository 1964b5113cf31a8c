//! Every way the server ends a connection, with its close code and why, in one place.
//!
//! RFC 6455 codes answer what the client did to the socket itself (1002, 1007, 1009) or say the
//! server is going away (1001); the 4000s (`protocol::close`, documented for client authors in
//! `proto/README.md`) say what the client should do next. A connection the client closed, or
//! whose socket failed, ends without a close frame (the metrics count it as `none`).

use protocol::close as app;
use tokio_tungstenite::tungstenite::Error as WsError;

/// Why the server closes a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Close {
    /// The server is shutting down: what is queued is flushed first (1001).
    GoingAway,
    /// An unmasked frame, reserved bits, a bad opcode… (1002).
    ProtocolError,
    /// A text frame that is not UTF-8 (1007).
    InvalidPayload,
    /// A message above the socket layer's hard limit (1009); smaller oversized messages get a
    /// `too_large` error and the connection goes on.
    TooBig,
    /// No pong within the heartbeat timeout (4000).
    HeartbeatTimeout,
    /// The outgoing queue overflowed or a write timed out: reconnect with `since` (4001).
    TooSlow,
    /// The account session of the upgrade was revoked (4002).
    SessionRevoked,
    /// The match moved to another node of the cluster: what is queued is flushed first (4003).
    Moved,
}

impl Close {
    pub fn code(self) -> u16 {
        match self {
            Close::GoingAway => 1001,
            Close::ProtocolError => 1002,
            Close::InvalidPayload => 1007,
            Close::TooBig => 1009,
            Close::HeartbeatTimeout => app::HEARTBEAT_TIMEOUT,
            Close::TooSlow => app::TOO_SLOW,
            Close::SessionRevoked => app::SESSION_REVOKED,
            Close::Moved => app::MOVED,
        }
    }

    /// The close frame's reason, for a person reading the client's log.
    pub fn reason(self) -> &'static str {
        match self {
            Close::GoingAway => "server shutting down",
            Close::ProtocolError => "WebSocket protocol violation",
            Close::InvalidPayload => "a text frame that is not UTF-8",
            Close::TooBig => "message too big",
            Close::HeartbeatTimeout => "no pong within the heartbeat timeout",
            Close::TooSlow => "too slow: reconnect and subscribe with since",
            Close::SessionRevoked => "the session was revoked: log in again",
            Close::Moved => "the match moved to another node: reconnect and subscribe with since",
        }
    }

    /// Whether what is still queued for the client is written before the close frame: on
    /// shutdown and when a match moved, where the client did nothing wrong and the frames are
    /// its latest answers.
    pub fn flushes(self) -> bool {
        matches!(self, Close::GoingAway | Close::Moved)
    }

    /// The close for a read error that is the client's fault: 1009 for a message above the
    /// hard limit, 1002 for a protocol violation, 1007 for a text frame that is not UTF-8.
    /// Other errors (the socket failed, the peer vanished) close without a frame.
    pub fn for_read_error(e: WsError) -> Option<Close> {
        use tokio_tungstenite::tungstenite::error::{Error, ProtocolError};
        match e {
            Error::Capacity(_) => Some(Close::TooBig),
            Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => None,
            Error::Protocol(_) => Some(Close::ProtocolError),
            Error::Utf8(_) => Some(Close::InvalidPayload),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_close_has_its_own_code_and_a_reason() {
        let all = [
            Close::GoingAway,
            Close::ProtocolError,
            Close::InvalidPayload,
            Close::TooBig,
            Close::HeartbeatTimeout,
            Close::TooSlow,
            Close::SessionRevoked,
            Close::Moved,
        ];
        let codes: std::collections::HashSet<u16> = all.iter().map(|c| c.code()).collect();
        assert_eq!(codes.len(), all.len());
        assert!(all.iter().all(|c| !c.reason().is_empty()));
        assert_eq!(
            all.iter().filter(|c| c.flushes()).count(),
            2,
            "only a shutdown and a move flush"
        );
    }
}
