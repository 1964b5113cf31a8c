//! WebSocket close codes the server uses besides the standard ones (1000 normal, 1001 going away
//! on shutdown, 1009 message too big).

/// No pong within the heartbeat timeout.
pub const HEARTBEAT_TIMEOUT: u16 = 4000;
/// The client did not read its messages fast enough; reconnect and subscribe with `since`.
pub const TOO_SLOW: u16 = 4001;
/// The account session the connection was opened with was revoked (log out, "log out
/// everywhere", or revoked from another device): log in again and reconnect.
pub const SESSION_REVOKED: u16 = 4002;
/// The match moved to another node of a cluster (the one serving this connection lost it, or
/// cannot reach its owner): what was queued is written first; reconnect and subscribe with
/// `since`.
pub const MOVED: u16 = 4003;
