//! A load generator: plays `--matches` concurrent matches against a running server, from its own
//! process, over real TCP WebSockets, for `--secs` seconds, and prints moves/s, latency
//! percentiles, errors and (with `--server-pid`, server on the same machine) the server's CPU per
//! move.
//!
//! Every seat of a match is driven by its own connection, which answers the decisions that are its
//! own (the turn's, and other players' pawn choices) with a random legal move read from the
//! match's mirror of the view: a closed loop, one command in flight per match. Latencies are
//! measured from the moment the sender sends: `own diff` until the sender reads the diff of its
//! command, `others diff` until each other seat reads it. A finished match is replaced by a new
//! one.
//!
//! The load generator shares the machine with the server, so its own CPU per move (printed) is
//! kept small: the seats of a match share one mirror (the public view is the same for all), the
//! first seat to read a diff applies it in place and the others check theirs against it (same
//! seq order, same bytes); a seat parses only a frame's head unless it applies the patch; only
//! the seat whose decision is first reads it; one thread (`--threads 1`, the default) runs a
//! current-thread runtime; mimalloc allocates.
//!
//! `--pace` instead plays at human pace (an open loop): many live matches whose players each
//! answer after a think time, measured in ramp steps (see [`pace`]).
//!
//! `--idle N` instead opens N connections that join nothing and prints the server's resident
//! memory per connection, in steps (see [`idle`]).
//!
//! `--fill K` instead creates `--matches` matches, plays K moves in each and hangs up, leaving
//! them unfinished: with `--server-pid` it prints the server's resident memory per match held in
//! memory, and the filled store is the starting point for timing a restart: `--seats-out FILE`
//! writes each filled match's id and first seat's token, and `--probe FILE`, started with the
//! restarted server (`--server-pid`), times from the server's process start until `/healthz`
//! answers and until a first command on one of those matches is answered.
//!
//! The binary's map:
//!
//! - [`config`]: the command line ([`Args`]) and what every task shares from it.
//! - [`run`]: the timed run, one slot per match played at a time; [`fill`]: fill mode;
//!   [`probe`]: the restart probe.
//! - [`seat`]: opening a match and playing one of its seats; [`shared`]: what the seats of a
//!   match share (the commands in flight, the fill budget, one mirror of the view);
//!   [`frame`]: a server frame read in part.
//! - [`pace`]: the human-pace (open-loop) run, `--pace`; [`idle`]: idle connections, `--idle`.
//! - [`procfs`]: CPU, context switches, memory and age of a process, from `/proc`.
//! - [`report`]: what the seats measured and the lines printed (`summary.awk` parses them).
//! - [`LoadError`] ([`error`]): why a run, a seat or a frame fails.

mod config;
mod error;
mod fill;
#[cfg(test)]
mod fixtures;
mod frame;
mod idle;
mod pace;
mod probe;
mod procfs;
mod report;
mod run;
mod seat;
mod shared;

use clap::Parser;
use config::Args;
use error::LoadError;

/// mimalloc: the seats build and drop many small JSON maps per move (the patch values), where
/// glibc's allocator takes about a third of the load generator's CPU.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), LoadError> {
    let args = Args::parse();
    if !(2..=6).contains(&args.players) {
        return Err(LoadError::Args("--players takes 2 to 6".into()));
    }
    // One thread (the default): every seat on the main thread, no wake-ups across threads.
    let runtime = if args.threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.threads)
            .enable_all()
            .build()?
    };
    if args.pace {
        return runtime.block_on(pace::pace(args));
    }
    if let Some(n) = args.idle {
        return runtime.block_on(idle::idle(args, n));
    }
    match (args.fill, args.probe.clone()) {
        (Some(moves), _) => runtime.block_on(fill::fill(args, moves)),
        (None, Some(seats)) => runtime.block_on(probe::probe(args, seats)),
        (None, None) => runtime.block_on(run::run(args)),
    }
}
