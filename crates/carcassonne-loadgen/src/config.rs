//! The command line ([`Args`]) and what every task shares from it ([`Ctx`]): where the server
//! is, the match to create, the seeds.

use clap::Parser;
use protocol::{ClockSettings, CreateMatch};
use rules::{Colour, MapSetup, Modules};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

#[derive(Debug, Parser)]
#[command(about = "Plays concurrent matches against a running server and measures it")]
pub(crate) struct Args {
    /// The server's base URL; the WebSocket is `<url>/ws`.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub(crate) url: String,
    /// Cluster mode: the nodes the seats connect to, in turn (comma-separated base URLs). Each
    /// match is first touched by a spectator on `--url`, whose node then owns it, so that
    /// seats on other nodes go through a hop: `--url A --play-url B,C` measures the hop's cost
    /// against `--url A` alone.
    #[arg(long, value_delimiter = ',')]
    pub(crate) play_url: Vec<String>,
    /// Matches played at once (each replaced by a new one when it ends).
    #[arg(long, default_value_t = 20)]
    pub(crate) matches: usize,
    /// Seconds of measurement, after every first match is created and connected.
    #[arg(long, default_value_t = 10.0)]
    pub(crate) secs: f64,
    /// Players per match (2 to 6), each with its own connection.
    #[arg(long, default_value_t = 2)]
    pub(crate) players: usize,
    /// Modules, comma-separated: tollkeepers, messages, france, chips (chips implies france),
    /// inns-cathedrals, traders-builders.
    #[arg(long, value_delimiter = ',')]
    pub(crate) modules: Vec<ModuleName>,
    /// The server's pid, when it runs on this machine: its CPU time and context switches per
    /// move are printed.
    #[arg(long)]
    pub(crate) server_pid: Option<u32>,
    /// Seed of the random moves.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Threads of the load generator's own runtime (1: everything on the main thread).
    #[arg(long, default_value_t = 1)]
    pub(crate) threads: usize,
    /// Fill mode instead of a timed run: create `--matches` matches, play this many moves in
    /// each (fewer if it ends first), leave them unfinished and disconnect. With
    /// `--server-pid`, prints the server's resident memory per match held in memory. For
    /// sizing memory and for timing a restart with many unfinished matches.
    #[arg(long)]
    pub(crate) fill: Option<u64>,
    /// Fill mode: matches filled at once.
    #[arg(long, default_value_t = 64)]
    pub(crate) fill_parallel: usize,
    /// A game clock for every match: each player's bank, in seconds (no increment). Every
    /// unfinished match then has a deadline (a restart schedules those not due within a few
    /// seconds rather than loading them): for timing recovery, and for measuring the clocks'
    /// cost per move.
    #[arg(long)]
    pub(crate) clock_secs: Option<u64>,
    /// Fill mode: write one line per filled match to this file, its id and its first seat's
    /// token (the matches a restart probe plays).
    #[arg(long)]
    pub(crate) seats_out: Option<std::path::PathBuf>,
    /// Restart probe instead of a load, started with the server: waits until `/healthz`
    /// answers, then sends a first command (a pass, answered or refused by the rules) in the
    /// first, middle and last match of this `--seats-out` file, in turn, and prints each time
    /// since the server's process started (`--server-pid`) or else since the probe started.
    #[arg(long)]
    pub(crate) probe: Option<std::path::PathBuf>,
    /// Human-pace (open-loop) run instead of the closed loop: `--matches` live matches whose
    /// players move after a think time (see the `pace` module); `--players` and `--modules` are
    /// replaced by `--mix` and `--all-modules`.
    #[arg(long)]
    pub(crate) pace: bool,
    /// Idle connections instead of a load: open this many WebSockets that join nothing, in
    /// `--steps` steps (each held `--secs` before it is measured), and print the server's
    /// resident memory per connection (`--server-pid`). `--sources` spreads them.
    #[arg(long)]
    pub(crate) idle: Option<usize>,
    /// Pace: table sizes and their weights, `players:weight,...`.
    #[arg(long, default_value = "2:40,3:30,4:20,5:10")]
    pub(crate) mix: String,
    /// Pace: the mean think time before each answer, in seconds.
    #[arg(long, default_value_t = 20.0)]
    pub(crate) think: f64,
    /// Pace: every think time is exactly `--think` (default: exponentially distributed).
    #[arg(long)]
    pub(crate) think_fixed: bool,
    /// Pace: the share of matches with every module on (the others: the base game).
    #[arg(long, default_value_t = 0.25)]
    pub(crate) all_modules: f64,
    /// Pace: a spectator on every N-th match (0: none).
    #[arg(long, default_value_t = 10)]
    pub(crate) spectator_every: usize,
    /// Pace: mean seconds between a connection's reconnects with `since` (0: never).
    #[arg(long, default_value_t = 600.0)]
    pub(crate) reconnect_mean: f64,
    /// Pace and idle: loopback source addresses to spread connections over (127.0.0.2 and up;
    /// 1: the system's choice), so that no address runs out of ephemeral ports.
    #[arg(long, default_value_t = 1)]
    pub(crate) sources: usize,
    /// Pace and idle: the matches (connections) open in this many equal steps, each measured
    /// for `--secs`.
    #[arg(long, default_value_t = 1)]
    pub(crate) steps: usize,
    /// Pace: seconds to wait once a step's matches are live before measuring it: with several
    /// load processes, the others' ramps (a burst of new matches and connections) end first.
    #[arg(long, default_value_t = 0.0)]
    pub(crate) settle: f64,
    /// Pace: seconds the matches go on playing after the last step's window before they are
    /// closed: with several load processes, one's teardown (all its connections closing at
    /// once) would otherwise land in the windows of the others still measuring.
    #[arg(long, default_value_t = 0.0)]
    pub(crate) drain: f64,
    /// Pace: read the server's `/metrics` at the start and end of each step's window and report
    /// its own arrival-to-ack histogram over the window beside the latency measured here (the
    /// server must serve them to this caller: `--metrics-access open`).
    #[arg(long)]
    pub(crate) server_metrics: bool,
    /// Pace: seconds between two progress lines.
    #[arg(long, default_value_t = 5.0)]
    pub(crate) progress: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ModuleName {
    Tollkeepers,
    Messages,
    France,
    Chips,
    InnsCathedrals,
    TradersBuilders,
}

/// Shared by every task: where the server is, what to play, when to stop.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub(crate) http: String,
    pub(crate) ws: String,
    /// The WebSockets the seats use in turn (`--play-url`); empty: `ws`.
    pub(crate) play_ws: Vec<String>,
    pub(crate) request: CreateMatch,
    pub(crate) seeds: AtomicU64,
}

pub(crate) fn modules(names: &[ModuleName]) -> Modules {
    let has = |m| names.contains(&m);
    let chips = has(ModuleName::Chips);
    Modules {
        tollkeepers: has(ModuleName::Tollkeepers),
        messages: has(ModuleName::Messages),
        traders_builders: has(ModuleName::TradersBuilders),
        map: (chips || has(ModuleName::France)).then(|| Box::new(MapSetup::france(chips))),
        inns_cathedrals: has(ModuleName::InnsCathedrals),
    }
}

/// The WebSocket URL of a server's base URL.
fn ws_of(base: &str) -> String {
    format!(
        "{}/ws",
        base.trim_end_matches('/')
            .replacen("https://", "wss://", 1)
            .replacen("http://", "ws://", 1)
    )
}

impl Ctx {
    /// The WebSocket seat `i` connects to.
    pub(crate) fn seat_ws(&self, i: usize) -> &str {
        match self.play_ws.len() {
            0 => &self.ws,
            n => &self.play_ws[i % n],
        }
    }
}

pub(crate) fn context(args: &Args) -> Arc<Ctx> {
    let http = args.url.trim_end_matches('/').to_owned();
    Arc::new(Ctx {
        ws: ws_of(&http),
        http,
        play_ws: args.play_url.iter().map(|u| ws_of(u)).collect(),
        request: CreateMatch {
            players: Colour::ALL[..args.players].to_vec(),
            modules: modules(&args.modules),
            meeples: None,
            draw_order: None,
            clock: args.clock_secs.map(|secs| ClockSettings {
                bank_ms: secs * 1000,
                increment_ms: 0,
            }),
        },
        seeds: AtomicU64::new(args.seed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chips_imply_the_map() {
        let m = modules(&[ModuleName::Chips, ModuleName::Messages]);
        assert!(m.messages && !m.tollkeepers);
        assert!(m.map.is_some_and(|s| s.chips && s.map == "france"));
        assert!(modules(&[]).map.is_none());
    }
}
