//! How a server-played seat decides at its level: `random` answers at once from the view; the
//! others ask `carcassonne_bots` with what a player of the seat may see — the match's public
//! history (read from the store, kept up to date as the match goes on) and its public view —
//! on the blocking pool, so that a thinking bot never holds up a match task or a connection.

use crate::store::Store;
use carcassonne_bots::{Bot, BotInput, Level, Record};
use protocol::{BotLevel, Seq};
use rules::{Command, Decision, Event, Game, PlayerId, Setup, View};
use std::collections::HashMap;
use uuid::Uuid;

/// Why a bot could not think (it then answers at random, so the match goes on).
#[derive(Debug, thiserror::Error)]
pub(super) enum MindError {
    #[error("store: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("the match is gone")]
    Gone,
    #[error("stored {0} does not parse: {1}")]
    Corrupt(&'static str, String),
    #[error("the thinking task failed")]
    Task,
}

/// The bots of one match: a player per seat, and the public record they share.
pub(super) struct Minds {
    match_id: Uuid,
    players: HashMap<PlayerId, (BotLevel, Option<Box<dyn Bot>>)>,
    record: Option<Record>,
    /// The seq the record is at.
    seq: Seq,
}

fn level(l: BotLevel) -> Level {
    match l {
        BotLevel::Random => Level::Random,
        BotLevel::Easy => Level::Easy,
        BotLevel::Medium => Level::Medium,
        BotLevel::Hard => Level::Hard,
    }
}

impl Minds {
    pub(super) fn new(match_id: Uuid, seats: &[(u8, BotLevel)], seed: u64) -> Minds {
        let players = seats
            .iter()
            .map(|&(seat, l)| {
                let bot = (l != BotLevel::Random).then(|| level(l).bot(seed ^ u64::from(seat)));
                (seat, (l, bot))
            })
            .collect();
        Minds {
            match_id,
            players,
            record: None,
            seq: 0,
        }
    }

    pub(super) fn seats(&self) -> impl Iterator<Item = PlayerId> + '_ {
        self.players.keys().copied()
    }

    /// The seat's level (`random` for a seat that is not a bot's).
    pub(super) fn level(&self, seat: PlayerId) -> BotLevel {
        self.players.get(&seat).map_or(BotLevel::Random, |p| p.0)
    }

    /// Brings the public record up to `seq`: the setup's public part and the opening events
    /// once, then the commands stored since.
    async fn catch_up(&mut self, store: &Store, seq: Seq) -> Result<(), MindError> {
        if self.record.is_none() {
            let row = store
                .load_match(self.match_id)
                .await?
                .ok_or(MindError::Gone)?;
            let setup: Setup = serde_json::from_str(&row.setup)
                .map_err(|e| MindError::Corrupt("setup", e.to_string()))?;
            // The opening events are public (the start tiles, the first tile drawn); the record
            // keeps only the setup's public part.
            let (_, opening) = Game::start(setup.clone())
                .map_err(|e| MindError::Corrupt("setup", e.to_string()))?;
            self.record = Some(Record::new(&setup, opening));
            self.seq = 0;
        }
        if seq > self.seq {
            let rows = store.commands_between(self.match_id, self.seq, seq).await?;
            let record = self.record.as_mut().ok_or(MindError::Gone)?;
            for r in rows {
                let command: Command = serde_json::from_str(&r.command)
                    .map_err(|e| MindError::Corrupt("command", e.to_string()))?;
                let events: Vec<Event> = serde_json::from_str(&r.events)
                    .map_err(|e| MindError::Corrupt("events", e.to_string()))?;
                record.push(r.seat, command, events);
                self.seq = r.seq;
            }
        }
        Ok(())
    }

    /// The seat's answer to `decision` in `view` (at `seq`), at its level.
    pub(super) async fn answer(
        &mut self,
        store: &Store,
        seq: Seq,
        view: View,
        decision: &Decision,
        rng: &mut u64,
    ) -> Result<Option<Command>, MindError> {
        let seat = decision.player();
        let mut random = || rules::bot::random_command(decision, || rules::bot::splitmix64(rng));
        let Some((_, slot)) = self.players.get_mut(&seat) else {
            return Ok(random());
        };
        let Some(mut bot) = slot.take() else {
            return Ok(random());
        };
        if let Err(e) = self.catch_up(store, seq).await {
            self.give_back(seat, bot);
            return Err(e);
        }
        let Some(record) = self.record.take() else {
            self.give_back(seat, bot);
            return Err(MindError::Gone);
        };
        let thought = tokio::task::spawn_blocking(move || {
            let input = BotInput {
                seat,
                record: &record,
                view: &view,
            };
            let command = bot.choose(&input);
            (bot, record, command)
        })
        .await;
        match thought {
            Ok((bot, record, command)) => {
                self.give_back(seat, bot);
                self.record = Some(record);
                Ok(command.or_else(random))
            }
            // The record went with the failed task: read again next time.
            Err(_) => Err(MindError::Task),
        }
    }

    fn give_back(&mut self, seat: PlayerId, bot: Box<dyn Bot>) {
        if let Some((_, slot)) = self.players.get_mut(&seat) {
            *slot = Some(bot);
        }
    }
}
