//! The actor's side of the deadlines (the table itself is [`super::timers`]): when the loop
//! wakes, what it applies when a decision falls due, and what it stores so that a restart
//! finds the same deadlines (the away marks, the wake time).

use super::commands::{Batch, Outcome};
use super::timers::{Why, now_millis};
use super::{Actor, ActorState};
use rules::DecisionId;
use std::time::Duration;
use tokio::time::Instant;
use tracing::{error, info};

/// Most defaults one firing applies before the loop looks at its inbox again (a match whose
/// players are all away plays on in steps, never starving its clients).
const MAX_DEFAULTS_PER_BATCH: usize = 64;

/// How long deadlines wait after the server's own commands could not be stored.
const DEADLINE_BACKOFF: Duration = Duration::from_secs(1);

impl Actor {
    /// When the loop must wake for the next deadline, if one is pending.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        let ActorState::Ready(loaded) = &self.state else {
            return None;
        };
        if self.stopping {
            return None;
        }
        let at = loaded.deadlines.next_due()?;
        let wait = u64::try_from(at.saturating_sub(now_millis())).unwrap_or(0);
        let when = Instant::now() + Duration::from_millis(wait);
        Some(self.deadline_backoff.map_or(when, |b| when.max(b)))
    }

    /// Whether an idle match may leave memory: nothing pending, or a deadline more than `idle`
    /// away, which the registry's waker then reloads it for (a near one keeps it: cheaper than
    /// a reload).
    pub(super) fn may_leave(&self, idle: Duration) -> bool {
        let ActorState::Ready(loaded) = &self.state else {
            return true;
        };
        let Some(at) = loaded.deadlines.next_due() else {
            return true;
        };
        let far = now_millis().saturating_add(i64::try_from(idle.as_millis()).unwrap_or(i64::MAX));
        at > far && self.registry.wake_later(self.id, at)
    }

    /// Applies the default of every decision that is due, as commands of the server (seat: the
    /// decision's player; id: `server:<why>:<seq>`), stored and broadcast like a client's. One
    /// at a time, asking again after each: a default opens the next decision, which for an
    /// away player is due at once (a whole turn goes in one batch). A player whose clock ran
    /// out is marked away.
    pub(super) async fn fire_deadlines(&mut self) {
        let mut batch = Batch::default();
        for _ in 0..MAX_DEFAULTS_PER_BATCH {
            let ActorState::Ready(loaded) = &mut self.state else {
                break;
            };
            let now = now_millis();
            let Some((decision, why)) = loaded.deadlines.first_due(now) else {
                break;
            };
            if why == Why::Clock
                && let Some((player, _)) = loaded.game.default_command(decision)
            {
                info!(player, "the player's clock ran out: marked away");
                loaded.deadlines.mark_away(player, now);
            }
            self.stage_default(&mut batch, decision, why);
            if batch.poisoned {
                break;
            }
        }
        let stored = self.commit(batch).await;
        self.deadline_backoff = (!stored).then(|| Instant::now() + DEADLINE_BACKOFF);
    }

    /// Stages the default of `decision`; one that cannot be applied (a bug) is logged and not
    /// tried again while the decision stays open.
    fn stage_default(&mut self, batch: &mut Batch, decision: DecisionId, why: Why) {
        let ActorState::Ready(loaded) = &mut self.state else {
            return;
        };
        let Some((player, command)) = loaded.game.default_command(decision) else {
            error!(%decision, "a due decision has no default: not fired again");
            loaded.deadlines.stall(decision);
            return;
        };
        let id = why.command_id(loaded.seq + 1);
        info!(%decision, player, %id, "due: the server applies the default");
        if self.stage_from(batch, None, player, id, command, Instant::now()) != Outcome::Accepted
            && let ActorState::Ready(loaded) = &mut self.state
        {
            error!(%decision, "a decision's default was not applied: not fired again");
            loaded.deadlines.stall(decision);
        }
    }

    /// Stores the away marks changed in memory (a clock ran out, a player came back), before
    /// the answers of the batch that changed them go out. A failed write is logged and not retried: the memory
    /// stays right, and after a restart a clock at zero marks its player again at once.
    pub(super) async fn save_away_marks(&mut self) {
        let super::ActorState::Ready(loaded) = &mut self.state else {
            return;
        };
        for (seat, since) in loaded.deadlines.take_unsaved() {
            let since = since.and_then(chrono::DateTime::from_timestamp_millis);
            if let Err(e) = self.store.set_away(self.id, seat, since).await {
                tracing::error!(seat, error = %e, "cannot store an away mark");
            }
        }
    }

    /// Keeps the stored wake time (`matches.wake_at`) equal to the next deadline when it changed
    /// without an append (on load, an admin's away mark, a stalled default); an append carries
    /// it in its own transaction. A failed write is logged and tried again after the next
    /// message: a restart loads matches by this column, so it must not stay wrong.
    pub(super) async fn sync_wake(&mut self) {
        let super::ActorState::Ready(loaded) = &mut self.state else {
            return;
        };
        let due = loaded.deadlines.next_due();
        if due == loaded.stored_wake {
            return;
        }
        let write = crate::store::Append {
            wake: Some(due),
            fence: self.fence.clone(),
            ..Default::default()
        };
        match self.store.write(self.id, write).await {
            Ok(()) => loaded.stored_wake = due,
            Err(crate::store::StoreError::Fenced { .. }) => self.moved(),
            Err(e) => tracing::error!(error = %e, "cannot store the wake time"),
        }
    }
}
