//! The authoritative Carcassonne server. The crate's map, from the top down (each layer uses
//! only the ones below it):
//!
//! - [`server`]: [`run`] opens the store, recovers unfinished matches, serves, shuts down.
//! - [`http`]: the routes: `POST /api/matches`, `GET /healthz`, the admin API, the `/ws`
//!   upgrade; [`web`] serves the browser client.
//! - [`conn`]: one task per WebSocket connection: parse, validate, route to match actors.
//! - [`state`]: what handlers and connections share ([`Shared`]), the server's [`Lifecycle`].
//! - [`actor`]: one task per match owning its `rules::Game`; persist, then broadcast.
//! - [`lobby`]: the lobby actor (every open lobby, bots of lobby matches); [`accounts`]:
//!   names, argon2id passwords, sessions; [`newmatch`]: a new match's rows and seat tokens.
//! - [`outbox`]: a connection's bounded outgoing queue, as actors see it.
//! - [`telemetry`]: logging setup; [`meters`]: the Prometheus metrics behind `GET /metrics`.
//! - [`config`], [`store`] (the durable command log, on SQLite or Postgres), [`tokens`]
//!   (seat tokens and their hashes), [`wire`] (server messages encoded as frames).
//!
//! [`run`] takes a bound listener, a [`Config`] and a shutdown future, so that tests run real
//! servers on ephemeral ports and stop them at will.

pub mod accounts;
pub mod actor;
pub mod config;
pub mod conn;
pub mod http;
pub mod lobby;
pub mod meters;
pub mod newmatch;
pub mod outbox;
pub mod server;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod tokens;
pub mod web;
pub mod wire;

pub use config::{Config, LogFormat};
pub use meters::Metrics;
pub use server::{ServerError, run};
pub use state::{Lifecycle, Shared};
pub use store::{Store, StoreError};
pub use telemetry::init_tracing;
pub use tokens::token_hash;
