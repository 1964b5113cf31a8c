//! A native async client for the Carcassonne server: the kit for bot and client authors, also
//! used by the server's tests and the load generator.
//!
//! # Quick start: a bot
//!
//! Log in (a guest account needs only a name), open a lobby with a bot of the server's on the
//! other seat, start it, and answer every decision of your seat until the match ends:
//!
//! ```no_run
//! use carcassonne_client::{Client, MatchEvent, bot::Rng, protocol::{BotLevel, CreateLobby}};
//!
//! # async fn run() -> Result<(), carcassonne_client::ClientError> {
//! let mut client = Client::new("http://127.0.0.1:8080")?;
//! client.guest("my-bot").await?;
//! let lobby = client
//!     .create_lobby(&CreateLobby {
//!         name: "bot test".into(),
//!         seats: 2,
//!         modules: Default::default(),
//!         meeples: None,
//!         clock: None,
//!         public: false,
//!         rated: false,
//!     })
//!     .await?;
//! client.add_bot(lobby.id, 1, BotLevel::Easy).await?;
//! client.set_ready(lobby.id, true).await?;
//! let started = client.start(lobby.id).await?;
//!
//! let mut game = client.play(started.match_id).await?;
//! let mut rng = Rng::new(1);
//! while let Some(event) = game.next().await? {
//!     match event {
//!         MatchEvent::YourTurn { decisions } => {
//!             // Any legal answer: the decisions list them all.
//!             let pick = carcassonne_client::rules::bot::random_command(&decisions[0], || rng.next_u64());
//!             if let Some(command) = pick {
//!                 game.send(command).await?;
//!             }
//!         }
//!         MatchEvent::Finished => break,
//!         _ => {}
//!     }
//! }
//! let scores: Vec<u32> = game.view().map(|v| v.players.iter().map(|p| p.score).collect()).unwrap_or_default();
//! println!("final scores {scores:?}");
//! # Ok(()) }
//! ```
//!
//! `examples/bot.rs` is a whole bot in under 100 lines, and `docs/write-a-bot.md` the guide.
//!
//! # What is here
//!
//! - [`Client`]: one account on one server: sign up, log in and out, lobbies, matches, and
//!   [`MatchStream`]s to play or watch; `http://`/`ws://` or `https://`/`wss://` ([`Tls`],
//!   rustls);
//! - [`MatchStream`]: one seat of one match as typed [`MatchEvent`]s (snapshot, diffs with their
//!   seq, acks and refusals, the decisions waiting for the seat, the end), with the current view,
//!   reconnecting by itself ([`Reconnect`]) without a gap or a repeat;
//! - [`Connection`] is one WebSocket connection: it reads the `welcome`, authenticates, subscribes,
//!   sends commands and hands out server messages in arrival order;
//! - [`Mirror`] keeps one match's public view as JSON by applying snapshots and diffs in sequence;
//! - [`Follower`] follows one match over a connection with a mirror and records what it applied;
//! - [`create_match`] calls `POST /api/matches` and returns the match id and seat tokens;
//! - [`bot`] plays a match through one follower per seat (random legal moves, seeded);
//! - [`latency`] plays games and times each command's `ack` and own `diff` (benchmarks).
//!
//! Every refusal by the server carries its stable [`protocol::ErrorCode`]
//! ([`ClientError::code`]). The protocol itself is described in `proto/README.md`.

mod api;
pub mod bot;
mod connection;
mod error;
mod follower;
mod http;
pub mod latency;
mod mirror;
mod reconnect;
mod stream;
mod tls;

pub use api::Client;
pub use connection::{Close, CommandOutcome, Connection, Seat, TextFrame, Welcome};
pub use error::ClientError;
pub use follower::{FollowError, Follower};
pub use http::{create_match, http_get};
pub use mirror::{Mirror, MirrorError};
pub use protocol;
pub use reconnect::{Reconnect, reconnects_after};
pub use rules;
pub use stream::{MatchEvent, MatchStream};
pub(crate) use stream::{SeatClaim, Target};
pub use tls::Tls;
pub use uuid;

/// The README's example, compiled with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;
