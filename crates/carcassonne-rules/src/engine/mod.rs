//! The engine: the data of a match, split by ownership. It knows nothing of modules (no file
//! here imports them; `src/game/` orchestrates both), so there is no import circle.
//!
//! - [`board`]: the grid, the frontier and placement lookups (what is across a side).
//! - [`features`]: the union-find over segments, feature records with the base game's fields.
//! - [`scoring`]: pure functions that value features and find who scores.
//! - [`pile`]: the face-down pile: its order (secret) and the copies left (public).
//! - [`agenda`]: the steps of a turn and the open decisions.
//! - [`rng`]: the match's random generator at rest.
//! - [`ids`]: the ids they share.

pub mod agenda;
pub mod board;
pub mod features;
pub mod ids;
pub mod pile;
pub mod rng;
pub mod scoring;
