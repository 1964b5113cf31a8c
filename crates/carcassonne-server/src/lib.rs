//! The authoritative Carcassonne server. The crate's map, from the top down (each layer uses
//! only the ones below it):
//!
//! - [`server`]: [`run`] opens the store, recovers unfinished matches, serves, shuts down;
//!   [`retention`]: the background task that deletes what the retention settings let go.
//! - [`http`]: the routes (matches and their history, accounts and sessions, lobbies, the admin API, metrics, the
//!   OpenAPI document, the `/ws` upgrade, checked by [`origin`]); [`web`] serves the browser
//!   client and the admin console, with the pages' security headers ([`web_encoding`]: each
//!   file's ETag and compressed bodies).
//! - [`conn`]: one task per WebSocket connection: the socket's side, one dispatcher, one
//!   handler file per family of client messages.
//! - [`state`]: what handlers and connections share ([`Shared`]), the server's [`Lifecycle`].
//! - [`access`]: who may sit at or watch a match; [`lobby`]: the lobby actor (every open lobby,
//!   bots of lobby matches).
//! - [`actor`]: one task per match owning its `rules::Game`; persist, then broadcast.
//!   [`cluster`]: several nodes on one Postgres and one NATS server (leases, forwarding).
//! - [`chat`]: chat rooms and their fan-out, apart from the actors; [`limits`]: the rate limits
//!   per connection and per address; [`accounts`]: names, argon2id passwords, sessions;
//!   [`newmatch`]: a new match's rows and seat tokens; [`ratings`]: the rating task and its
//!   arithmetic; [`webhooks`]: your-turn notices posted to the accounts' webhooks.
//! - [`outbox`]: a connection's bounded outgoing queue, as actors see it ([`queue`]: the bounded
//!   queue behind it and behind every match's inbox); [`meters`]: the
//!   Prometheus metrics behind `GET /metrics` (with [`process_metrics`]: the `process_*` and
//!   build-info series); [`telemetry`]: logging setup.
//! - [`config`] (with [`config_file`], the TOML file's loader), [`client_addr`] (the client's
//!   address behind trusted reverse proxies, which the limits and the logs use), [`store`] (the
//!   durable command log, accounts, lobbies and chat, on SQLite or
//!   Postgres), [`tokens`] (seat tokens and their hashes), [`wire`] (server messages encoded as
//!   frames, once for any number of receivers), [`origin`] (which pages may open the WebSocket
//!   with the session cookie).
//!
//! [`run`] takes a bound listener, a [`Config`] and a shutdown future, so that tests run real
//! servers on ephemeral ports and stop them at will.

pub mod access;
pub mod accounts;
pub mod actor;
pub mod chat;
pub mod client_addr;
pub mod cluster;
pub mod config;
pub mod config_file;
pub mod conn;
pub mod http;
pub mod limits;
pub mod lobby;
pub mod meters;
pub mod newmatch;
pub mod origin;
pub mod outbox;
pub mod process_metrics;
pub mod queue;
pub mod ratings;
pub mod retention;
pub mod server;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod tokens;
pub mod web;
pub mod web_encoding;
pub mod webhooks;
pub mod wire;

pub use config::{Config, LogFormat};
pub use meters::Metrics;
pub use server::{ServerError, run};
pub use state::{Lifecycle, Shared};
pub use store::{Store, StoreError};
pub use telemetry::init_tracing;
pub use tokens::token_hash;
