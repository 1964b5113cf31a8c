//! A new match from a [`CreateMatch`] request: the setup with a fresh secret seed, the rows to
//! store and one token per seat. `POST /api/matches` and a lobby's start both go through
//! [`prepare`], so a lobby match is created exactly like any other.

use crate::store::{MatchRow, MatchStatus, SeatRow};
use crate::tokens::{new_token, token_hash};
use chrono::Utc;
use protocol::{CreateMatch, MatchCreated, SeatToken};
use rules::{Game, REPLAY_VERSION, Setup};
use uuid::Uuid;

/// Why a match cannot be created.
#[derive(Debug, thiserror::Error)]
pub enum NewMatchError {
    /// The request is not a valid setup (or asks for a test setup that is not allowed).
    #[error("{0}")]
    Invalid(String),
    #[error("no OS randomness: {0}")]
    Randomness(String),
    #[error("serialization failed: {0}")]
    Serialize(String),
}

/// What to store for a new match, and what to hand out.
#[derive(Debug)]
pub struct Prepared {
    pub row: MatchRow,
    pub seats: Vec<SeatRow>,
    pub created: MatchCreated,
}

/// Builds the match (nothing is stored yet). Test setups (`draw_order`, a chip layout) only
/// when `allow_test_setups`; `decision_timeout` is stored with the match (its deadlines keep it
/// across a change of the server's setting).
pub fn prepare(
    req: &CreateMatch,
    allow_test_setups: bool,
    decision_timeout: std::time::Duration,
) -> Result<Prepared, NewMatchError> {
    if (req.draw_order.is_some() || req.modules.forces_secrets()) && !allow_test_setups {
        return Err(NewMatchError::Invalid(
            "draw_order, chip_layout and a map's data are for tests and scenarios; this server does not allow test setups".into(),
        ));
    }
    if let Some(clock) = &req.clock {
        clock.validate().map_err(NewMatchError::Invalid)?;
    }
    let randomness = |e: getrandom::Error| NewMatchError::Randomness(e.to_string());
    // The seed decides the pile: it comes from the OS and never leaves the server.
    let seed = getrandom::u64().map_err(randomness)?;
    let mut setup = Setup::new(req.players.clone(), seed)
        .meeples(req.meeples.unwrap_or(req.modules.default_meeples()))
        .modules(req.modules.clone());
    setup.draw_order = req.draw_order.clone();
    // A pile that is empty from the start (a test setup) ends the match at once: it is stored as
    // finished, so that no restart resumes it.
    let created_at = Utc::now();
    let timeout_ms = u64::try_from(decision_timeout.as_millis()).unwrap_or(u64::MAX);
    let (status, wake_at) = match Game::start(setup.clone()) {
        Ok((game, _)) if game.is_finished() => (MatchStatus::Finished, None),
        Ok((game, _)) => (
            MatchStatus::Active,
            first_wake(&game, created_at.timestamp_millis(), timeout_ms, req.clock),
        ),
        Err(e) => return Err(NewMatchError::Invalid(e.to_string())),
    };
    let setup_json =
        serde_json::to_string(&setup).map_err(|e| NewMatchError::Serialize(e.to_string()))?;
    let id = Uuid::new_v4();
    let mut seats = Vec::new();
    let mut tokens = Vec::new();
    for (i, colour) in req.players.iter().enumerate() {
        let token = new_token().map_err(randomness)?;
        let seat = u8::try_from(i).unwrap_or(u8::MAX);
        let colour_name = serde_json::to_value(colour)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        seats.push(SeatRow {
            seat,
            colour: colour_name,
            token_hash: token_hash(&token),
        });
        tokens.push(SeatToken {
            seat,
            colour: *colour,
            token,
        });
    }
    let row = MatchRow {
        id,
        setup: setup_json,
        status,
        rules_version: REPLAY_VERSION.to_string(),
        created_at,
        decision_timeout_ms: Some(timeout_ms),
        clock: req.clock,
        wake_at,
    };
    Ok(Prepared {
        row,
        seats,
        created: MatchCreated {
            match_id: id,
            seats: tokens,
        },
    })
}

/// When a new match first needs the server (its stored `wake_at`): a non-active player's decision
/// open from the start falls due after the timeout, the active player's clock after the bank.
/// Never later than the actor's own deadline (which it writes on its first load), so a restart
/// before anyone touched the match still fires it on time.
fn first_wake(
    game: &Game,
    created_ms: i64,
    timeout_ms: u64,
    clock: Option<protocol::ClockSettings>,
) -> Option<i64> {
    let after = |ms: u64| created_ms.saturating_add(i64::try_from(ms).unwrap_or(i64::MAX));
    let active = game.active();
    let deadline = game
        .open_asks()
        .any(|(_, player)| player != active)
        .then(|| after(timeout_ms));
    let flag = clock.map(|c| after(c.bank_ms));
    deadline.into_iter().chain(flag).min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{ClockSettings, CreateMatch};
    use rules::Colour;
    use std::time::Duration;

    fn request(clock: Option<ClockSettings>) -> CreateMatch {
        CreateMatch {
            players: vec![Colour::Red, Colour::Blue],
            modules: Default::default(),
            meeples: None,
            draw_order: None,
            clock,
        }
    }

    /// A new match stores when it first needs the server: with a clock, when the first
    /// player's bank runs out; without one (only the active player decides), never.
    #[test]
    fn a_new_match_stores_its_first_wake() {
        let timeout = Duration::from_secs(30);
        let plain = prepare(&request(None), false, timeout).expect("prepare");
        assert_eq!(plain.row.wake_at, None);
        let clock = ClockSettings {
            bank_ms: 60_000,
            increment_ms: 5_000,
        };
        let timed = prepare(&request(Some(clock)), false, timeout).expect("prepare");
        assert_eq!(
            timed.row.wake_at,
            Some(timed.row.created_at.timestamp_millis() + 60_000)
        );
    }
}
