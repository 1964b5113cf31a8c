//! The end-to-end tests, in one binary (one link of the shared harness): real servers, real
//! sockets on 127.0.0.1, real stores. Every scenario runs on a SQLite file and on a fresh
//! Postgres database (see `common::TestDb`).
//!
//! `TEST_LOG=1` (or a filter such as `TEST_LOG=server=debug`) shows the servers' logs in a
//! failing test's output.

#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod admin;
mod backup;
mod bodies;
mod chat;
mod clocks;
mod community;
mod config_file;
mod creation;
mod deadlines;
mod defences;
mod deploy_doc;
mod france;
mod history;
mod hostile;
mod leases;
mod limits;
mod lobby;
mod lobby_versions;
mod messages;
mod metrics;
mod migrations;
mod moderation;
mod openapi;
mod outside;
mod proxies;
mod ratings;
mod readiness;
mod resources;
mod retention;
mod schemathesis;
mod session_cap;
mod suites;
mod tls;
mod tollkeepers;
mod visibility;
mod web_encoding;
mod webhooks;
