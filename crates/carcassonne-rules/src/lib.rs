//! The rules of Carcassonne (2nd/3rd edition) with The Tollkeepers, The Messages, Carcassonne
//! Maps with the Map Chips of France, Inns & Cathedrals, and Traders & Builders, as a pure library.
//!
//! A match is a function of its [`Setup`] (with a seed) and the [`Command`]s applied to it (B10):
//! no I/O, no clock, no global randomness. [`Game::start`] begins a match; [`Game::apply`] takes one
//! player's command and returns the [`Event`]s it caused, or a [`RuleError`] and leaves the state
//! as it was. [`Game::view`] is what everyone may see; [`Game::decisions`] what is asked now.
//!
//! The crate's map, from the bottom up (each layer uses only the ones below it):
//!
//! - the API types: [`ids`] (a leaf), [`geometry`], [`tiles`] (the catalogue from `data/*.toml`),
//!   [`command`], [`event`], [`decision`], [`view`], [`setup`], [`error`], [`secrets`]; [`maps`]
//!   (map boards from `data/maps/*.toml`);
//! - `engine`: the data of a match split by ownership (board, features, scoring, the agenda of
//!   steps, the pile); it names no module;
//! - `modules`: the expansions, each with its own state, reached only through the hook table;
//! - `game`: [`Game`], which owns all of the above and runs the agenda;
//! - on top: [`bot`] (a random legal mover), [`scenario`] (scenario files and their runner),
//!   [`text`] (a position as plain text).
//!
//! Rule ids (B.., T.., M.., P.., I.., R..) refer to `docs/reference/`; `docs/rules.md` lists the
//! decisions applied.

pub mod bot;
pub mod command;
pub mod decision;
mod engine;
pub mod error;
pub mod event;
mod game;
pub mod geometry;
pub mod ids;
pub mod maps;
mod modules;
pub mod scenario;
pub mod secrets;
pub mod setup;
pub mod text;
pub mod tiles;
pub mod view;

pub use command::{
    Command, DoubleTurnPreference, Figure, MeepleRef, Pawn, PawnPreference, Sale, Target, WineSale,
};
pub use decision::{Decision, Options, Placement};
pub use engine::board::MAX_PILE;
pub use engine::ids::DecisionId;
pub use error::{RuleError, SetupError};
pub use event::{Event, GoodsTokens, MeepleCount, ScoreReason};
pub use game::{AskOptions, Game, Standing};
pub use geometry::{Half, Pos, Rotation, Side};
pub use ids::Key;
pub use secrets::Secrets;
pub use setup::{
    Bounds, ChipAt, Colour, MapSetup, Modules, PlayerId, Setup, StartScore, StartSquare, StartTile,
};
pub use tiles::{
    Catalogue, Edge, FeatureKind, Goods, Inn, PictureKind, RoadEnd, TileDesign, catalogue,
};
pub use view::{MessagesView, PawnsView, View};

/// Version of the rules implementation (the crate's version): what clients are told. It does not
/// decide whether a stored match can be replayed; [`REPLAY_VERSION`] does.
pub const RULES_VERSION: &str = concat!("carcassonne-rules/", env!("CARGO_PKG_VERSION"));

/// The replay-compatibility version, stored with every match: a match replays on any build whose
/// [`replays`] accepts it. It changes only when the same setup and commands would give other
/// events (a rule change, a new event in an old situation), never for a release that only adds
/// modules, events of new situations or fields. The golden match logs (`tests/golden/`) pin it.
pub const REPLAY_VERSION: &str = "carcassonne-replay/2";

/// Versions stored by earlier builds whose matches this build replays to the same events (the
/// golden logs were recorded with them); [`Game::start_as`] replays each as it was played.
const REPLAYS_ALSO: &[&str] = &["carcassonne-replay/1", "carcassonne-rules/0.1.0"];

/// Whether a match stored with replay version `version` is replayed with every open decision
/// holding the turn: those versions stopped the active player's turn while another player chose
/// a pawn (M3), so their commands give the stored events only that way. [`Game::start_as`].
pub(crate) fn stalls_for_others(version: &str) -> bool {
    version != REPLAY_VERSION
}

/// Whether a match stored with version `stored` replays on this build.
pub fn replays(stored: &str) -> bool {
    stored == REPLAY_VERSION || REPLAYS_ALSO.contains(&stored)
}
