//! The rules of Carcassonne (2nd/3rd edition) with The Tollkeepers, as a pure library.
//!
//! A match is a function of its [`Setup`] (with a seed) and the [`Command`]s applied to it (B10):
//! no I/O, no clock, no global randomness. [`Game::start`] begins a match; [`Game::apply`] takes one
//! player's command and returns the [`Event`]s it caused, or a [`RuleError`] and leaves the state
//! as it was. [`Game::view`] is what everyone may see; [`Game::decisions`] what is asked now.
//!
//! Rule ids (B.., T..) refer to `shared/rules/`; `docs/rules.md` lists the decisions applied.

pub mod bot;
pub mod command;
pub mod decision;
pub mod error;
pub mod event;
mod game;
pub mod geometry;
pub mod maps;
pub mod scenario;
pub mod setup;
pub mod tiles;
mod tollkeepers;
pub mod view;

pub use command::{Command, Target};
pub use decision::{Decision, Placement};
pub use error::{RuleError, SetupError};
pub use event::{Event, MeepleCount};
pub use game::Game;
pub use geometry::{Half, Pos, Rotation, Side};
pub use setup::{Colour, Modules, PlayerId, Setup};
pub use tiles::{Catalogue, Edge, FeatureKind, PictureKind, RoadEnd, TileKind, catalogue};
pub use view::View;

/// Version of the rules implementation. Stored with every match: a match replays only on the
/// rules version it was played with.
pub const RULES_VERSION: &str = concat!("carcassonne-rules/", env!("CARGO_PKG_VERSION"));
