//! The match setup: who plays, with which modules, from which seed.

use serde::{Deserialize, Serialize};

/// A seat at the table, 0-based in turn order.
pub type PlayerId = u8;

/// Player colours (B3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Colour {
    Red,
    Green,
    Blue,
    Yellow,
    Black,
    Pink,
}

impl Colour {
    /// The six colours, in the order of B3.
    pub const ALL: [Colour; 6] = [
        Colour::Red,
        Colour::Green,
        Colour::Blue,
        Colour::Yellow,
        Colour::Black,
        Colour::Pink,
    ];
}

/// The expansions switched on for a match. Each is a module of the rules crate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Modules {
    /// The Tollkeepers (T1–T10): its 10 tiles join the pile and each player gets a tollhouse.
    #[serde(default)]
    pub tollkeepers: bool,
}

/// Everything a match is a function of, together with the commands applied to it (B10).
///
/// The `seed` is secret (B9): it decides the pile order and never leaves the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// Colours in turn order; 2 to 6 players (B3).
    pub players: Vec<Colour>,
    /// Meeples per player (B3: 7; 9 is recommended on a map).
    #[serde(default = "default_meeples")]
    pub meeples: u8,
    /// Seeds the random generator that shuffles the pile.
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub modules: Modules,
    /// Scenarios and tests: the exact pile, top first, by tile id; the seed then shuffles nothing.
    /// The start tile is placed as usual and is not part of this list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw_order: Option<Vec<String>>,
}

pub const fn default_meeples() -> u8 {
    7
}

impl Setup {
    /// A plain base game for the given colours.
    pub fn new(players: Vec<Colour>, seed: u64) -> Self {
        Setup {
            players,
            meeples: default_meeples(),
            seed,
            modules: Modules::default(),
            draw_order: None,
        }
    }
}
