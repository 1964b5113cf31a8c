//! When and how often a [`crate::MatchStream`] reconnects: exponential backoff with jitter,
//! bounded, and which ends of a connection are worth a new one.

use crate::ClientError;
use protocol::ErrorCode;
use std::time::Duration;

/// How a [`crate::MatchStream`] reconnects after its connection drops.
///
/// Before attempt `n` (from 1) it waits a random time between half and all of
/// `first_delay × 2^(n-1)`, capped at `max_delay` (the jitter spreads the clients of a
/// restarted server over time). After `max_attempts` failed attempts in a row it gives up with
/// [`ClientError::ReconnectFailed`]; a successful one starts the count again.
///
/// ```
/// use carcassonne_client::Reconnect;
/// use std::time::Duration;
/// let policy = Reconnect::default();
/// let third = policy.delay(3, 0.5);
/// assert!(third >= policy.first_delay * 2 && third <= policy.first_delay * 4);
/// assert_eq!(Reconnect::never().max_attempts, 0);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconnect {
    /// The longest wait before the first attempt (100 ms by default).
    pub first_delay: Duration,
    /// The cap of any wait (5 s by default).
    pub max_delay: Duration,
    /// Attempts in a row before giving up (10 by default; 0: never reconnect).
    pub max_attempts: u32,
}

impl Default for Reconnect {
    fn default() -> Self {
        Reconnect {
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(5),
            max_attempts: 10,
        }
    }
}

impl Reconnect {
    /// No reconnection: a dropped connection ends the stream with its error.
    pub fn never() -> Reconnect {
        Reconnect {
            max_attempts: 0,
            ..Reconnect::default()
        }
    }

    /// The wait before attempt `attempt` (from 1), for `random` in `[0, 1]` (the jitter): between
    /// half and all of `first_delay × 2^(attempt-1)`, capped at `max_delay`.
    pub fn delay(&self, attempt: u32, random: f64) -> Duration {
        let doublings = attempt.saturating_sub(1).min(30);
        let cap = self
            .first_delay
            .saturating_mul(1 << doublings)
            .min(self.max_delay);
        cap.mul_f64(0.5 + 0.5 * random.clamp(0.0, 1.0))
    }
}

/// Whether a connection that ended with close `code` (`None`: dropped without a close frame)
/// should be opened again: a drop, the server going away (1001), an internal error (1011), a
/// restart (1012, 1013), a heartbeat timeout (4000), "too slow" (4001) and "moved" (4003) are;
/// a normal closure,
/// a protocol error and a revoked session (4002) are not.
///
/// ```
/// use carcassonne_client::reconnects_after;
/// assert!(reconnects_after(None));
/// assert!(reconnects_after(Some(4001)));
/// assert!(!reconnects_after(Some(4002)));
/// ```
pub fn reconnects_after(code: Option<u16>) -> bool {
    match code {
        None => true,
        Some(c) => matches!(
            c,
            1001 | 1006
                | 1011
                | 1012
                | 1013
                | protocol::close::HEARTBEAT_TIMEOUT
                | protocol::close::TOO_SLOW
                | protocol::close::MOVED
        ),
    }
}

/// Whether a failed attempt to connect (or to take the seat) may succeed later: the network,
/// an overloaded or restarting server; not a refused session, token or seat.
pub(crate) fn transient(e: &ClientError) -> bool {
    match e {
        ClientError::Connect(_) | ClientError::Timeout(_) => true,
        ClientError::Closed(close) => reconnects_after(close.as_ref().map(|c| c.code)),
        ClientError::WebSocket(_) => e
            .http_status()
            .is_none_or(|s| s == 429 || (500..600).contains(&s)),
        ClientError::Refused(body) => matches!(
            body.code,
            ErrorCode::Busy | ErrorCode::Unavailable | ErrorCode::Internal | ErrorCode::RateLimited
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_within_their_jitter_up_to_the_cap() {
        let policy = Reconnect {
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            max_attempts: 5,
        };
        for attempt in 1..=8u32 {
            let cap = Duration::from_millis(100 * (1 << (attempt - 1))).min(policy.max_delay);
            assert_eq!(policy.delay(attempt, 1.0), cap, "attempt {attempt}");
            assert_eq!(policy.delay(attempt, 0.0), cap / 2, "attempt {attempt}");
            let mid = policy.delay(attempt, 0.5);
            assert!(mid > cap / 2 && mid < cap, "attempt {attempt}: {mid:?}");
        }
        assert_eq!(policy.delay(u32::MAX, 2.0), policy.max_delay);
    }

    #[test]
    fn a_refused_session_is_not_worth_another_attempt() {
        let refused = |code| ClientError::Refused(protocol::ErrorBody::new(code, "no"));
        assert!(!transient(&refused(ErrorCode::UnknownSession)));
        assert!(!transient(&refused(ErrorCode::NotYourSeat)));
        assert!(transient(&refused(ErrorCode::Busy)));
        let refused_conn = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(transient(&ClientError::Connect(refused_conn)));
        assert!(!transient(&ClientError::Closed(Some(crate::Close {
            code: protocol::close::SESSION_REVOKED,
            reason: String::new(),
        }))));
    }
}
