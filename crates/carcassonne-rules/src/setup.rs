//! The match setup: who plays, with which modules, from which seed.

use crate::geometry::{Pos, Rotation};
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
    // The Messages
    /// The Messages (M1–M18): a messenger per player beside the scoring pawn, and the dispatch
    /// stack. Left out of the JSON when off, so views of older matches stay byte for byte.
    #[serde(default, skip_serializing_if = "is_false")]
    pub messages: bool,
    // Traders & Builders
    /// Traders & Builders (R1–R20): its 24 tiles join the pile, each player gets a builder and a
    /// pig, completed cities give trade goods. Left out of the JSON when off, like `messages`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub traders_builders: bool,
    // Carcassonne Maps
    /// Carcassonne Maps (P1–P6): play on a printed map, optionally with the France chips (P7–P10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<Box<MapSetup>>,
    /// Inns & Cathedrals (I1–I18): its 18 tiles join the pile and each player gets a large
    /// meeple. Left out of the JSON when off, so views of older matches stay byte for byte.
    #[serde(default, skip_serializing_if = "is_false")]
    pub inns_cathedrals: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Modules {
    /// Every module at once: The Tollkeepers, The Messages, Traders & Builders, Inns & Cathedrals,
    /// and the France map with its chips (benchmarks and tests that cover everything).
    pub fn all() -> Modules {
        Modules {
            tollkeepers: true,
            messages: true,
            traders_builders: true,
            map: Some(Box::new(MapSetup::france(true))),
            inns_cathedrals: true,
        }
    }

    /// Meeples per player when the setup does not say: 7 (B3), 9 on a map (general Maps rules).
    pub fn default_meeples(&self) -> u8 {
        match self.map {
            Some(_) => 9,
            None => default_meeples(),
        }
    }

    /// Whether the setup forces what is secret (a chip layout) or brings its own map: tests and
    /// scenarios only.
    pub fn forces_secrets(&self) -> bool {
        self.map
            .as_ref()
            .is_some_and(|m| m.chip_layout.is_some() || m.data.is_some())
    }
}

// Carcassonne Maps
/// A match on a printed map (P1–P6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MapSetup {
    /// A built-in map's id (`france`).
    pub map: String,
    /// P2: the two start squares by name, the start tile's first. `None`: drawn from the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts: Option<[String; 2]>,
    /// The Map Chips of France (P7–P10).
    #[serde(default)]
    pub chips: bool,
    /// Scenarios and tests: the chips' layout, instead of laying them with the seed (P7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chip_layout: Option<Vec<ChipAt>>,
    /// Scenarios and tests: the map itself, in the map file format (`docs/maps.md`), instead of
    /// a built-in one; `map` is its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

impl MapSetup {
    /// The France map (P1–P6), its start squares drawn from the seed; `chips`: with the Map
    /// Chips of France (P7–P10).
    pub fn france(chips: bool) -> MapSetup {
        MapSetup {
            map: "france".into(),
            starts: None,
            chips,
            chip_layout: None,
            data: None,
        }
    }
}

/// A chip forced on a square (scenarios).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ChipAt {
    pub pos: Pos,
    pub grape: crate::maps::Grape,
    pub value: u8,
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
    /// The Messages, scenarios and tests: the dispatch stack (1–8, each once), top first; the
    /// seed then shuffles nothing. Refused by the server like `draw_order` (it reveals a secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_order: Option<Vec<u8>>,
    /// Start squares (B1; P2 on a map). Empty: the start tile on (0, 0), unturned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub starts: Vec<StartSquare>,
    /// The squares tiles may lie on (P1). `None`: an open table that grows as needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// Scenarios and tests: each seat's score when the match begins, in seat order (empty: 0
    /// each), so that a case about scores or dark spaces needs no tiles to build them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub start_scores: Vec<StartScore>,
}

/// A seat's score when the match begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum StartScore {
    /// Points (with The Messages: on the scoring pawn).
    Points(u32),
    /// The Messages: where each pawn stands, in points (M2); the score is their sum. Both keys
    /// are required, so a misspelt one is refused.
    Pawns { scoring: u32, messenger: u32 },
}

impl StartScore {
    /// The score: both pawns together.
    pub fn total(self) -> u32 {
        match self {
            StartScore::Points(p) => p,
            StartScore::Pawns { scoring, messenger } => scoring + messenger,
        }
    }

    /// The scoring pawn's and the messenger's points.
    pub fn pawns(self) -> [u32; 2] {
        match self {
            StartScore::Points(p) => [p, 0],
            StartScore::Pawns { scoring, messenger } => [scoring, messenger],
        }
    }
}

/// A start square and what lies on it when the match begins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "SetupStartSquare"))]
#[serde(deny_unknown_fields)]
pub struct StartSquare {
    pub pos: Pos,
    #[serde(default)]
    pub rotation: Rotation,
    #[serde(default)]
    pub tile: StartTile,
}

/// What a start square holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StartTile {
    /// The catalogue's start tile (B1), turned by the square's rotation.
    #[default]
    Start,
    /// The top tile of the shuffled pile, turned at random from the seed (P2).
    Drawn,
    /// Nothing, but a tile may be placed here with no neighbour (a square opened by the map, P1).
    Open,
}

/// A rectangle of squares, both corners included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
// Named apart from the map's `Bounds` in the schemas, which put every type in one namespace.
#[cfg_attr(feature = "schema", schemars(rename = "SetupBounds"))]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    pub min: Pos,
    pub max: Pos,
}

impl Bounds {
    pub fn contains(&self, p: Pos) -> bool {
        p.x >= self.min.x && p.x <= self.max.x && p.y >= self.min.y && p.y <= self.max.y
    }
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
            dispatch_order: None,
            starts: Vec::new(),
            bounds: None,
            start_scores: Vec::new(),
        }
    }

    /// Builder: switches The Tollkeepers on or off. (Builder methods keep call sites working
    /// when a setup gains fields.)
    pub fn tollkeepers(mut self, on: bool) -> Self {
        self.modules.tollkeepers = on;
        self
    }

    /// Builder: switches The Messages on or off.
    pub fn messages(mut self, on: bool) -> Self {
        self.modules.messages = on;
        self
    }

    /// Builder: switches Inns & Cathedrals on or off.
    pub fn inns_cathedrals(mut self, on: bool) -> Self {
        self.modules.inns_cathedrals = on;
        self
    }

    /// Builder: switches Traders & Builders on or off.
    pub fn traders_builders(mut self, on: bool) -> Self {
        self.modules.traders_builders = on;
        self
    }

    /// Builder: the dispatch stack, top first (tests and scenarios).
    pub fn dispatch_order(mut self, order: Vec<u8>) -> Self {
        self.dispatch_order = Some(order);
        self
    }

    /// Builder: meeples per player.
    pub fn meeples(mut self, meeples: u8) -> Self {
        self.meeples = meeples;
        self
    }

    /// Builder: each seat's score when the match begins (tests and scenarios).
    pub fn start_scores(mut self, scores: Vec<StartScore>) -> Self {
        self.start_scores = scores;
        self
    }

    /// Builder: the exact pile, top first, by tile id.
    pub fn draw_order(mut self, order: Vec<String>) -> Self {
        self.draw_order = Some(order);
        self
    }

    /// Builder: the modules, as a whole.
    pub fn modules(mut self, modules: Modules) -> Self {
        self.modules = modules;
        self
    }

    /// Builder: play on the built-in map `id` (P1–P6), its start squares drawn from the seed,
    /// with 9 meeples a player (general Maps rules; [`Setup::meeples`] after this changes it).
    pub fn map(mut self, id: &str) -> Self {
        self.modules.map = Some(Box::new(MapSetup {
            map: id.to_string(),
            starts: None,
            chips: false,
            chip_layout: None,
            data: None,
        }));
        self.meeples = 9;
        self
    }

    /// Builder: the France chips on the map (P7–P10); call after [`Setup::map`].
    pub fn chips(mut self, on: bool) -> Self {
        if let Some(m) = &mut self.modules.map {
            m.chips = on;
        }
        self
    }

    /// Builder: the map's two start squares by name, the start tile's first (P2); call after
    /// [`Setup::map`].
    pub fn map_starts(mut self, start_tile: &str, random_tile: &str) -> Self {
        if let Some(m) = &mut self.modules.map {
            m.starts = Some([start_tile.to_string(), random_tile.to_string()]);
        }
        self
    }

    /// Builder: start squares (P2).
    pub fn starts(mut self, starts: Vec<StartSquare>) -> Self {
        self.starts = starts;
        self
    }

    /// Builder: a bounded board (P1).
    pub fn bounds(mut self, bounds: Bounds) -> Self {
        self.bounds = Some(bounds);
        self
    }
}
