//! What a bot decides from: the public part of the setup, the public history (every command and
//! the events it produced) and the public view. Architecture invariant: none of these types can
//! hold a secret (seed, pile order, dispatch stack, face-down chips): [`PublicSetup`] drops them
//! when it is made, and commands, events and the view are public by construction (B9).
//! These rules give a seat nothing private of its own (chips in hand lie face up, P8), so the
//! public view is all a seat sees.

use rules::{Bounds, Colour, Command, Event, Modules, PlayerId, Setup, StartSquare, View};

/// The public part of a [`Setup`]: who plays, with how many meeples, which modules, the start
/// squares and the outline. The seed, a forced draw order, a forced dispatch order and a forced
/// chip layout are left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicSetup {
    players: Vec<Colour>,
    meeples: u8,
    modules: Modules,
    starts: Vec<StartSquare>,
    bounds: Option<Bounds>,
}

impl PublicSetup {
    /// The public part of `setup`.
    pub fn of(setup: &Setup) -> PublicSetup {
        let mut modules = setup.modules.clone();
        if let Some(map) = &mut modules.map {
            map.chip_layout = None;
        }
        PublicSetup {
            players: setup.players.clone(),
            meeples: setup.meeples,
            modules,
            starts: setup.starts.clone(),
            bounds: setup.bounds,
        }
    }

    /// A setup with these public parts and nothing forced: the determinization fills in the rest.
    pub(crate) fn to_setup(&self, seed: u64) -> Setup {
        let mut s = Setup::new(self.players.clone(), seed)
            .meeples(self.meeples)
            .modules(self.modules.clone())
            .starts(self.starts.clone());
        s.bounds = self.bounds;
        s
    }

    pub fn players(&self) -> usize {
        self.players.len()
    }

    pub fn modules(&self) -> &Modules {
        &self.modules
    }

    pub(crate) fn starts(&self) -> &[StartSquare] {
        &self.starts
    }
}

/// One applied command and the events it produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub player: PlayerId,
    pub command: Command,
    pub events: Vec<Event>,
}

/// A match's public history: its public setup, the opening events and every applied command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    setup: PublicSetup,
    opening: Vec<Event>,
    moves: Vec<Move>,
}

impl Record {
    /// The record of a match started from `setup` with the opening events `opening`.
    pub fn new(setup: &Setup, opening: Vec<Event>) -> Record {
        Record {
            setup: PublicSetup::of(setup),
            opening,
            moves: Vec::new(),
        }
    }

    /// Notes a command that was applied and the events it produced.
    pub fn push(&mut self, player: PlayerId, command: Command, events: Vec<Event>) {
        self.moves.push(Move {
            player,
            command,
            events,
        });
    }

    pub fn setup(&self) -> &PublicSetup {
        &self.setup
    }

    pub fn opening(&self) -> &[Event] {
        &self.opening
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Every event so far, the opening's first.
    pub fn events(&self) -> impl Iterator<Item = &Event> + '_ {
        self.opening
            .iter()
            .chain(self.moves.iter().flat_map(|m| m.events.iter()))
    }
}

/// What a bot sees when it is asked: its seat, the public history, and the public view now.
#[derive(Debug, Clone, Copy)]
pub struct BotInput<'a> {
    pub seat: PlayerId,
    pub record: &'a Record,
    pub view: &'a View,
}

impl BotInput<'_> {
    /// The bot's first open decision, if it has one.
    pub fn decision(&self) -> Option<&rules::Decision> {
        self.view.decisions.iter().find(|d| d.player() == self.seat)
    }
}
