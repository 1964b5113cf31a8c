//! The match state machine. (Implementation in progress.)

use crate::command::Command;
use crate::decision::{Decision, Placement};
use crate::error::{RuleError, SetupError};
use crate::event::Event;
use crate::setup::{PlayerId, Setup};
use crate::view::View;

/// One match: the whole state, secret parts included. Owned by one match actor on the server.
#[derive(Debug, Clone)]
pub struct Game {
    setup: Setup,
}

impl Game {
    /// Starts a match: places the start tile, shuffles the pile with the seed, draws the first
    /// tile. Returns the opening events.
    pub fn start(setup: Setup) -> Result<(Game, Vec<Event>), SetupError> {
        let _ = setup;
        todo!()
    }

    /// Applies one player's command. On error nothing changed.
    pub fn apply(&mut self, player: PlayerId, command: Command) -> Result<Vec<Event>, RuleError> {
        let _ = (player, command);
        todo!()
    }

    /// The decisions open now (empty when the game is over).
    pub fn decisions(&self) -> Vec<Decision> {
        todo!()
    }

    /// Where the drawn tile may go (empty outside phase 1).
    pub fn legal_placements(&self) -> Vec<Placement> {
        todo!()
    }

    /// The public view (B9).
    pub fn view(&self) -> View {
        todo!()
    }

    pub fn is_finished(&self) -> bool {
        todo!()
    }

    /// Scores in seat order.
    pub fn scores(&self) -> Vec<u32> {
        todo!()
    }

    pub fn setup(&self) -> &Setup {
        &self.setup
    }
}
