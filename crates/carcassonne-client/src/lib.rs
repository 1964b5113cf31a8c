//! A native async client for the Carcassonne server, used by the server's tests, bots and the load
//! generator.
//!
//! - [`create_match`] calls `POST /api/matches` and returns the match id and seat tokens;
//! - [`Connection`] is one WebSocket connection: it reads the `welcome`, authenticates, subscribes,
//!   sends commands and hands out server messages in arrival order;
//! - [`Mirror`] keeps one match's public view as JSON by applying snapshots and diffs in sequence;
//! - [`Follower`] follows one match over a connection with a mirror and records what it applied;
//! - [`bot`] plays a match through one follower per seat (random legal moves, seeded);
//! - [`latency`] plays games and times each command's `ack` and own `diff` (benchmarks).
//!
//! The protocol itself is described in `proto/README.md`.

pub mod bot;
mod connection;
mod error;
mod follower;
mod http;
pub mod latency;
mod mirror;

pub use connection::{Close, CommandOutcome, Connection, Seat, TextFrame, Welcome};
pub use error::ClientError;
pub use follower::{FollowError, Follower};
pub use http::{create_match, http_get};
pub use mirror::{Mirror, MirrorError};
pub use protocol;
