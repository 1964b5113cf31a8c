//! Game clocks: the settings a match is created with and each player's clock as the view shows it.

use rules::PlayerId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A player's game clock as of the view's seq. A client counts it down itself: while
/// `running_since` is set, the time left now is `remaining_ms - (now - running_since)`; the
/// server sends no diff per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClockView {
    pub player: PlayerId,
    /// Milliseconds left in the bank at `running_since` (or now, when stopped).
    pub remaining_ms: u64,
    /// Unix time in milliseconds since which the clock runs (the player must decide in their
    /// turn); absent while it is stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_since: Option<u64>,
}

/// A match's game clock: every player starts with `bank_ms` and gets `increment_ms` added when
/// each of their turns ends. Realtime play (`5 min + 20 s`: `{"bank_ms": 300000,
/// "increment_ms": 20000}`) and turn-based play (`3 days + 1 day`: `{"bank_ms": 259200000,
/// "increment_ms": 86400000}`) are the same clock at different scales: both run on the wall
/// clock, also while the server is down (the stored command times are the truth).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockSettings {
    /// Each player's starting time, in milliseconds: 10 s to 30 days.
    pub bank_ms: u64,
    /// Added to a player's bank when each of their turns ends, in milliseconds: 0 to 7 days.
    pub increment_ms: u64,
}

const DAY_MS: u64 = 24 * 60 * 60 * 1000;

impl ClockSettings {
    pub const MIN_BANK_MS: u64 = 10_000;
    pub const MAX_BANK_MS: u64 = 30 * DAY_MS;
    pub const MAX_INCREMENT_MS: u64 = 7 * DAY_MS;

    /// Checks the bounds; the error says which value is out of which range.
    pub fn validate(&self) -> Result<(), String> {
        if !(Self::MIN_BANK_MS..=Self::MAX_BANK_MS).contains(&self.bank_ms) {
            return Err(format!(
                "clock.bank_ms must be from {} (10 s) to {} (30 days), not {}",
                Self::MIN_BANK_MS,
                Self::MAX_BANK_MS,
                self.bank_ms
            ));
        }
        if self.increment_ms > Self::MAX_INCREMENT_MS {
            return Err(format!(
                "clock.increment_ms must be from 0 to {} (7 days), not {}",
                Self::MAX_INCREMENT_MS,
                self.increment_ms
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bounds: a bank of 10 s to 30 days, an increment of 0 to 7 days; the error names
    /// the field.
    #[test]
    fn clock_settings_bounds() {
        let day = 86_400_000;
        let c = |bank_ms, increment_ms| ClockSettings {
            bank_ms,
            increment_ms,
        };
        for ok in [c(10_000, 0), c(30 * day, 7 * day), c(3 * day, day)] {
            assert_eq!(ok.validate(), Ok(()), "{ok:?}");
        }
        for (bad, field) in [
            (c(9_999, 0), "clock.bank_ms"),
            (c(0, 0), "clock.bank_ms"),
            (c(30 * day + 1, 0), "clock.bank_ms"),
            (c(10_000, 7 * day + 1), "clock.increment_ms"),
        ] {
            let e = bad.validate().expect_err("out of bounds");
            assert!(e.contains(field), "{e}");
        }
    }
}
