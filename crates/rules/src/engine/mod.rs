//! The engine: the data of a match, split by ownership. It knows nothing of modules (nothing
//! here names `crate::modules`); the game orchestrates both.
//!
//! - [`board`]: the grid, the frontier and placement lookups (what is across a side).
//! - [`features`]: the union-find over segments, feature records with the base game's fields.
//! - [`scoring`]: pure functions that value features and find who scores.
//! - [`agenda`]: the steps of a turn and the open decisions.
//! - [`ids`]: the ids they share.

pub mod agenda;
pub mod board;
pub mod features;
pub mod ids;
pub mod scoring;
