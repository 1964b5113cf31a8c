//! Setup + command log → game, checked against the stored events. A plain function, so that
//! loading a match and an admin's "state at seq N" share it.

use super::dedupe::IdKey;
use super::guard::guarded;
use super::timers::{Deadlines, Origin};
use crate::store::{CommandRow, MatchStatus, Store, StoreError};
use chrono::{DateTime, Utc};
use protocol::{ClockSettings, Seq};
use rules::{Command, Event, Game, REPLAY_VERSION, Setup};
use uuid::Uuid;

/// Why a replay could not resume a match.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("no such match")]
    Unknown,
    #[error("store: {0}")]
    Store(#[from] StoreError),
    #[error(
        "the match was stored with replay version {stored}, this server replays {REPLAY_VERSION}"
    )]
    RulesVersion { stored: String },
    #[error("the match is marked broken")]
    Broken,
    #[error("an admin aborted the match")]
    Aborted,
    #[error("corrupt record: {0}")]
    Corrupt(String),
    #[error("replay diverged at seq {seq}: {detail}")]
    Diverged { seq: Seq, detail: String },
}

/// A match replayed up to some seq.
#[derive(Debug)]
pub struct Replayed {
    pub game: Game,
    pub seq: Seq,
    /// Every replayed command, in seq order (the first is seq 1): the key of its (seat, client
    /// id).
    pub accepted: Vec<IdKey>,
    /// When each open decision opened (the stored time of the command after which it first
    /// showed) and the game clocks; the timeout is not set yet, and the away marks only by
    /// [`load`] (they are stored with the seats, not in the log).
    pub deadlines: Deadlines,
    /// The match's own decision timeout, if it stored one.
    pub decision_timeout_ms: Option<u64>,
    /// The match's stored wake time (`matches.wake_at`), set by [`load`].
    pub stored_wake: Option<i64>,
    /// The seats' names (a lobby's match), set by [`load`].
    pub names: Vec<protocol::SeatName>,
}

/// Reads a match and replays its commands up to `upto` (all of them when `None`). A broken
/// match is refused.
pub async fn load(store: &Store, id: Uuid, upto: Option<Seq>) -> Result<Replayed, LoadError> {
    let row = store.load_match(id).await?.ok_or(LoadError::Unknown)?;
    match row.status {
        MatchStatus::Broken => return Err(LoadError::Broken),
        MatchStatus::Aborted => return Err(LoadError::Aborted),
        MatchStatus::Active | MatchStatus::Finished => {}
    }
    let records = store
        .commands_between(id, 0, upto.unwrap_or(Seq::MAX))
        .await?;
    let mut r = replay(
        &row.rules_version,
        &row.setup,
        row.created_at,
        row.clock,
        records,
    )?;
    r.decision_timeout_ms = row.decision_timeout_ms;
    r.stored_wake = row.wake_at;
    for seat in store.seats_of(&[id]).await? {
        r.deadlines.set_away(seat.seat, seat.away_since.is_some());
    }
    // The names only label the seats: a lobby row that no longer parses costs them, not the match.
    // Boxed: its query's state would otherwise sit in every match task's run loop future.
    r.names = match Box::pin(store.match_names(id)).await {
        Ok(names) => names,
        Err(StoreError::Corrupt(e)) => {
            tracing::warn!(match_id = %id, error = %e, "the seats' names cannot be read");
            Vec::new()
        }
        Err(e) => return Err(e.into()),
    };
    Ok(r)
}

/// Setup + log → game: starts the game from its stored setup, as its replay version played it
/// ([`Game::start_as`]), and applies each record, checking
/// that the rules give the stored events. A match whose history the rules no longer reproduce is
/// not resumed. `created_at`: when the match was created (the opening's decisions opened then);
/// `clock`: the match's game clock, rebuilt from the stored command times.
pub fn replay(
    rules_version: &str,
    setup: &str,
    created_at: DateTime<Utc>,
    clock: Option<ClockSettings>,
    records: impl IntoIterator<Item = CommandRow>,
) -> Result<Replayed, LoadError> {
    if !rules::replays(rules_version) {
        return Err(LoadError::RulesVersion {
            stored: rules_version.to_string(),
        });
    }
    let setup: Setup =
        serde_json::from_str(setup).map_err(|e| LoadError::Corrupt(format!("setup: {e}")))?;
    let (mut game, _) = Game::start_as(setup, rules_version)
        .map_err(|e| LoadError::Corrupt(format!("setup: {e}")))?;
    let mut accepted = Vec::new();
    let mut deadlines = Deadlines::default();
    deadlines.set_clock(clock, game.setup().players.len());
    deadlines.sync_game(&game, created_at.timestamp_millis(), Origin::Start);
    let mut seq: Seq = 0;
    for rec in records {
        if rec.seq != seq + 1 {
            return Err(LoadError::Corrupt(format!("seq {} follows {seq}", rec.seq)));
        }
        let command: Command = serde_json::from_str(&rec.command)
            .map_err(|e| LoadError::Corrupt(format!("command {}: {e}", rec.seq)))?;
        let stored: Vec<Event> = serde_json::from_str(&rec.events)
            .map_err(|e| LoadError::Corrupt(format!("events {}: {e}", rec.seq)))?;
        let events = guarded(|| game.apply(rec.seat, command))
            .map_err(|p| LoadError::Diverged {
                seq: rec.seq,
                detail: format!("the rules panicked: {p}"),
            })?
            .map_err(|e| LoadError::Diverged {
                seq: rec.seq,
                detail: format!("the rules now refuse it: {e}"),
            })?;
        if events != stored {
            return Err(LoadError::Diverged {
                seq: rec.seq,
                detail: "the events differ from the stored ones".into(),
            });
        }
        deadlines.sync_game(
            &game,
            rec.created_at.timestamp_millis(),
            Origin::of(rec.seat, &rec.command_id),
        );
        seq = rec.seq;
        accepted.push(super::dedupe::id_key(rec.seat, &rec.command_id));
    }
    Ok(Replayed {
        game,
        seq,
        accepted,
        deadlines,
        decision_timeout_ms: None,
        stored_wake: None,
        names: Vec::new(),
    })
}
