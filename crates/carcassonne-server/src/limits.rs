//! Abuse limits: token-bucket rate limits (the `governor` crate) per connection
//! and per client address on commands, chat, lobby actions, account creation and history reads. A refusal is
//! `rate_limited` with the time until the next one passes (`retry_after_ms`); the bucket refills
//! by itself and the connection stays open.
//!
//! Per-address limiters are keyed (governor's sharded map, lock-free reads of one atomic per
//! key): one address's flood costs nobody else anything, and no global lock is taken on the hot
//! path. Per-connection limiters live in the connection's own task. A background task forgets
//! addresses whose buckets are full again, so the maps stay small.

use crate::config::{LimitsConfig, Rate};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

/// What a limit guards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Command,
    Chat,
    Lobby,
    Account,
    Match,
    /// Reads of a match's history (`GET /api/matches/{id}/log`, `/chat`).
    History,
}

impl Kind {
    fn what(self) -> &'static str {
        match self {
            Kind::Command => "commands",
            Kind::Chat => "chat messages",
            Kind::Lobby => "lobby actions",
            Kind::Account => "new accounts",
            Kind::Match => "new matches",
            Kind::History => "history reads",
        }
    }
}

/// A refusal: how long until the limit lets the next one through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limited {
    pub kind: Kind,
    pub retry_after: Duration,
}

impl Limited {
    /// The wait in whole milliseconds, rounded up: a client that waits exactly this long
    /// gets through (truncating 1999.6 ms to 1999 ms would refuse it once more), and never 0.
    pub fn retry_after_ms(&self) -> u64 {
        u64::try_from(self.retry_after.as_nanos().div_ceil(1_000_000))
            .unwrap_or(u64::MAX)
            .max(1)
    }

    pub fn message(&self) -> String {
        format!(
            "too many {}: try again in {} ms",
            self.kind.what(),
            self.retry_after_ms()
        )
    }
}

pub fn quota(r: Rate) -> Quota {
    let burst = NonZeroU32::new(r.burst).unwrap_or(NonZeroU32::MIN);
    // One token comes back every period / burst: the whole burst refills in `period`.
    let per = (r.period / r.burst.max(1)).max(Duration::from_nanos(1));
    Quota::with_period(per)
        .unwrap_or_else(|| Quota::per_second(burst))
        .allow_burst(burst)
}

fn check_keyed(
    l: &DefaultKeyedRateLimiter<IpAddr>,
    key: &IpAddr,
    kind: Kind,
    clock: &DefaultClock,
) -> Result<(), Limited> {
    l.check_key(key).map_err(|n| Limited {
        kind,
        retry_after: n.wait_time_from(clock.now()),
    })
}

/// The per-address limiters, shared by every connection and handler.
#[derive(Debug)]
pub struct AddrLimits {
    command: DefaultKeyedRateLimiter<IpAddr>,
    chat: DefaultKeyedRateLimiter<IpAddr>,
    lobby: DefaultKeyedRateLimiter<IpAddr>,
    account: DefaultKeyedRateLimiter<IpAddr>,
    matches: DefaultKeyedRateLimiter<IpAddr>,
    history: DefaultKeyedRateLimiter<IpAddr>,
    /// The clock every connection's limiters share: making one reads the CPU's features
    /// (`cpuid`, a trap to the hypervisor in a VM), which cost every new connection 4 of them.
    clock: DefaultClock,
}

impl AddrLimits {
    pub fn new(c: &LimitsConfig) -> AddrLimits {
        AddrLimits {
            clock: DefaultClock::default(),
            command: RateLimiter::keyed(quota(c.command_rate_addr)),
            chat: RateLimiter::keyed(quota(c.chat_rate_addr)),
            lobby: RateLimiter::keyed(quota(c.lobby_rate_addr)),
            account: RateLimiter::keyed(quota(c.account_rate_addr)),
            matches: RateLimiter::keyed(quota(c.match_rate_addr)),
            history: RateLimiter::keyed(quota(c.history_rate_addr)),
        }
    }

    pub fn check(&self, kind: Kind, addr: IpAddr) -> Result<(), Limited> {
        let l = match kind {
            Kind::Command => &self.command,
            Kind::Chat => &self.chat,
            Kind::Lobby => &self.lobby,
            Kind::Account => &self.account,
            Kind::Match => &self.matches,
            Kind::History => &self.history,
        };
        check_keyed(l, &addr, kind, &self.clock)
    }

    /// Forgets addresses whose buckets are full again (every minute, until the server stops).
    pub fn spawn_cleanup(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            loop {
                tick.tick().await;
                let Some(l) = weak.upgrade() else { return };
                for k in [
                    &l.command, &l.chat, &l.lobby, &l.account, &l.matches, &l.history,
                ] {
                    k.retain_recent();
                    k.shrink_to_fit();
                }
            }
        });
    }
}

/// One connection's own limiters.
#[derive(Debug)]
pub struct ConnLimits {
    command: DefaultDirectRateLimiter,
    chat: DefaultDirectRateLimiter,
    lobby: DefaultDirectRateLimiter,
}

impl ConnLimits {
    /// `shared`: the address limiters, whose clock these share.
    pub fn new(c: &LimitsConfig, shared: &AddrLimits) -> ConnLimits {
        let limiter = |r| RateLimiter::direct_with_clock(quota(r), shared.clock.clone());
        ConnLimits {
            command: limiter(c.command_rate_conn),
            chat: limiter(c.chat_rate_conn),
            lobby: limiter(c.lobby_rate_conn),
        }
    }

    /// The connection's limit, then its address's.
    pub fn check(
        &self,
        kind: Kind,
        addr: Option<IpAddr>,
        shared: &AddrLimits,
    ) -> Result<(), Limited> {
        let own = match kind {
            Kind::Command => &self.command,
            Kind::Chat => &self.chat,
            Kind::Lobby | Kind::Account | Kind::Match | Kind::History => &self.lobby,
        };
        own.check().map_err(|n| Limited {
            kind,
            retry_after: n.wait_time_from(shared.clock.now()),
        })?;
        match addr {
            Some(a) => shared.check(kind, a),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(wait: Duration) -> u64 {
        Limited {
            kind: Kind::Command,
            retry_after: wait,
        }
        .retry_after_ms()
    }

    #[test]
    fn the_wait_is_rounded_up_to_whole_milliseconds() {
        assert_eq!(ms(Duration::from_micros(1_999_600)), 2_000);
        assert_eq!(ms(Duration::from_millis(2_000)), 2_000);
        assert_eq!(ms(Duration::from_nanos(2_000_000_001)), 2_001);
        assert_eq!(ms(Duration::from_nanos(1)), 1);
        assert_eq!(ms(Duration::ZERO), 1);
    }
}
