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
//! `--fill K` instead creates `--matches` matches, plays K moves in each and hangs up, leaving
//! them unfinished: with `--server-pid` it prints the server's resident memory per match held in
//! memory, and the filled store is the starting point for timing a restart: `--seats-out FILE`
//! writes each filled match's id and first seat's token, and `--probe FILE`, started with the
//! restarted server (`--server-pid`), times from the server's process start until `/healthz`
//! answers and until a first command on one of those matches is answered.

use clap::Parser;
use client::{ClientError, Connection, Mirror, TextFrame};
use protocol::{ClockSettings, CreateMatch, ErrorCode, MatchCreated, PatchOp, Seq, ServerMessage};
use rules::{Colour, Decision, MapSetup, Modules};
use serde::Deserialize as _;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use uuid::Uuid;

/// mimalloc: the seats build and drop many small JSON maps per move (the patch values), where
/// glibc's allocator took about a third of the load generator's CPU.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Printed when the server's rate limits, not its speed, held the load back.
const RATE_HINT: &str = "hint: the server's rate limits refused commands; start it with \
     --command-rate-addr 1000000/1s --command-rate-conn 1000000/1s to measure its speed";

/// How long a seat waits for any frame while a command of its match is in flight.
const READ_LIMIT: Duration = Duration::from_secs(30);

#[derive(Debug, Parser)]
#[command(about = "Plays concurrent matches against a running server and measures it")]
struct Args {
    /// The server's base URL; the WebSocket is `<url>/ws`.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    url: String,
    /// Matches played at once (each replaced by a new one when it ends).
    #[arg(long, default_value_t = 20)]
    matches: usize,
    /// Seconds of measurement, after every first match is created and connected.
    #[arg(long, default_value_t = 10.0)]
    secs: f64,
    /// Players per match (2 to 6), each with its own connection.
    #[arg(long, default_value_t = 2)]
    players: usize,
    /// Modules, comma-separated: tollkeepers, messages, france, chips (chips implies france).
    #[arg(long, value_delimiter = ',')]
    modules: Vec<ModuleName>,
    /// The server's pid, when it runs on this machine: its CPU time and context switches per
    /// move are printed.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Seed of the random moves.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads of the load generator's own runtime (1: everything on the main thread).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Fill mode instead of a timed run: create `--matches` matches, play this many moves in
    /// each (fewer if it ends first), leave them unfinished and disconnect. With
    /// `--server-pid`, prints the server's resident memory per match held in memory. For
    /// sizing memory and for timing a restart with many unfinished matches.
    #[arg(long)]
    fill: Option<u64>,
    /// Fill mode: matches filled at once.
    #[arg(long, default_value_t = 64)]
    fill_parallel: usize,
    /// A game clock for every match: each player's bank, in seconds (no increment). Every
    /// unfinished match then has a deadline (a restart schedules those not due within a few
    /// seconds rather than loading them): for timing recovery, and for measuring the clocks'
    /// cost per move.
    #[arg(long)]
    clock_secs: Option<u64>,
    /// Fill mode: write one line per filled match to this file, its id and its first seat's
    /// token (the matches a restart probe plays).
    #[arg(long)]
    seats_out: Option<std::path::PathBuf>,
    /// Restart probe instead of a load, started with the server: waits until `/healthz`
    /// answers, then sends a first command (a pass, answered or refused by the rules) in the
    /// first, middle and last match of this `--seats-out` file, in turn, and prints each time
    /// since the server's process started (`--server-pid`) or else since the probe started.
    #[arg(long)]
    probe: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ModuleName {
    Tollkeepers,
    Messages,
    France,
    Chips,
}

#[derive(Debug, thiserror::Error)]
enum LoadError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Mirror(#[from] client::MirrorError),
    #[error("no frame for {0:?}")]
    Stalled(Duration),
    #[error("the connection closed")]
    Closed,
    #[error("bad arguments: {0}")]
    Args(String),
    #[error("runtime: {0}")]
    Io(#[from] std::io::Error),
    #[error("bad frame: {0}")]
    Frame(String),
}

/// What the seats of every match measured.
#[derive(Debug, Default)]
struct Stats {
    own: Vec<Duration>,
    others: Vec<Duration>,
    /// Acks read before the end of the measurement.
    moves: u64,
    rejected: u64,
    /// Of the rejected: refused by the server's rate limits, not by the rules.
    rate_limited: u64,
    errors: Vec<String>,
    matches_finished: u64,
}

impl Stats {
    fn merge(&mut self, o: Stats) {
        self.own.extend(o.own);
        self.others.extend(o.others);
        self.moves += o.moves;
        self.rejected += o.rejected;
        self.rate_limited += o.rate_limited;
        self.errors.extend(o.errors);
        self.matches_finished += o.matches_finished;
    }
}

/// The last commands sent in a match: the seq each should get and when it was sent (a few, since
/// a seat may send the next command before the others have read the previous diff).
type InFlight = Arc<MatchShared>;

/// What the seats of one match share.
#[derive(Debug, Default)]
struct MatchShared {
    /// The match's recently sent commands: (the seq they will get, when they were sent).
    sent: Mutex<VecDeque<(Seq, Instant)>>,
    /// Fill mode: moves the match may still be sent; the seat that finds none left says so.
    budget: Option<AtomicU64>,
    /// Woken when the budget is spent.
    spent: tokio::sync::Notify,
    /// The match's public view, which is the same for every seat.
    view: Mutex<SharedView>,
}

/// One mirror of the view for all the seats of a match: the first seat to read a diff applies
/// it; every other seat, reading the same diff on its own connection later, checks that it
/// follows its previous one and that it is the diff applied, byte for byte (or, if the bytes
/// differ, the same patch). So each diff is parsed and applied once per match, not per seat.
#[derive(Debug, Default)]
struct SharedView {
    mirror: Option<Mirror>,
    /// Seats of the match.
    seats: usize,
    /// Diffs applied that some seat has not read yet: seq, frame, seats still to read it.
    unread: VecDeque<(Seq, TextFrame, usize)>,
}

/// The seq of the last snapshot or diff a seat's connection delivered (its own stream).
type Seen = Option<Seq>;

impl SharedView {
    /// A snapshot read by a seat: the first one fills the mirror; another seat's must be at the
    /// same seq and hold the same view.
    fn snapshot(&mut self, seen: &mut Seen, msg: &ServerMessage) -> Result<(), LoadError> {
        let ServerMessage::Snapshot { match_id, seq, .. } = msg else {
            return Ok(());
        };
        let mut own = Mirror::new(*match_id);
        own.apply(msg)?;
        match &self.mirror {
            None => self.mirror = Some(own),
            Some(m) if m.seq() == Some(*seq) && m.view() == own.view() => {}
            Some(m) => {
                return Err(LoadError::Frame(format!(
                    "snapshot at seq {seq} differs from the match's view at {:?}",
                    m.seq()
                )));
            }
        }
        *seen = Some(*seq);
        Ok(())
    }

    /// Diff `seq` read by a seat: applied if it is the match's next one, else checked against
    /// the one applied. Either way it must follow the seat's previous diff.
    fn diff(
        &mut self,
        seen: &mut Seen,
        seq: Seq,
        text: TextFrame,
        patch: Option<Vec<FrameOp>>,
    ) -> Result<(), LoadError> {
        let have = seen.ok_or(client::MirrorError::NoSnapshot { got: seq })?;
        if have.checked_add(1) != Some(seq) {
            return Err(client::MirrorError::Gap { have, got: seq }.into());
        }
        let mirror = self
            .mirror
            .as_mut()
            .ok_or(client::MirrorError::NoSnapshot { got: seq })?;
        if mirror.seq() == Some(have) {
            let patch = match patch {
                Some(p) => p,
                None => parse::<PatchOnly>(text.as_str())?.patch,
            };
            let patch = patch
                .into_iter()
                .map(PatchOp::try_from)
                .collect::<Result<Vec<_>, _>>()?;
            mirror.apply_patch_owned(seq, patch)?;
            if self.seats > 1 {
                self.unread.push_back((seq, text, self.seats - 1));
            }
        } else {
            let Some((_, applied, readers)) = self.unread.iter_mut().find(|(s, ..)| *s == seq)
            else {
                return Err(LoadError::Frame(format!(
                    "diff {seq}: the match's view is at {:?}",
                    mirror.seq()
                )));
            };
            if applied.as_str() != text.as_str()
                && parse::<PatchOnly>(applied.as_str())?.patch
                    != parse::<PatchOnly>(text.as_str())?.patch
            {
                return Err(LoadError::Frame(format!(
                    "seats read different diffs {seq}: {} and {}",
                    applied.as_str(),
                    text.as_str()
                )));
            }
            *readers -= 1;
            while self.unread.front().is_some_and(|(.., r)| *r == 0) {
                self.unread.pop_front();
            }
        }
        *seen = Some(seq);
        Ok(())
    }
}

impl MatchShared {
    fn new(seats: usize, budget: Option<u64>) -> MatchShared {
        MatchShared {
            budget: budget.map(AtomicU64::new),
            view: Mutex::new(SharedView {
                seats,
                ..SharedView::default()
            }),
            ..MatchShared::default()
        }
    }

    /// Whether one more move may be sent (and takes it from the budget).
    fn take_move(&self) -> bool {
        let Some(b) = &self.budget else { return true };
        let took = b
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok();
        if !took {
            self.spent.notify_one();
        }
        took
    }

    /// Gives back a move the server refused before playing it (rate limited).
    fn refund_move(&self) {
        if let Some(b) = &self.budget {
            b.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// How many sent commands of a match [`InFlight`] remembers.
const IN_FLIGHT_KEPT: usize = 8;

/// Shared by every task: where the server is, what to play, when to stop.
#[derive(Debug)]
struct Ctx {
    http: String,
    ws: String,
    request: CreateMatch,
    seeds: AtomicU64,
}

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
    match (args.fill, args.probe.clone()) {
        (Some(moves), _) => runtime.block_on(fill(args, moves)),
        (None, Some(seats)) => runtime.block_on(probe(args, seats)),
        (None, None) => runtime.block_on(run(args)),
    }
}

fn modules(names: &[ModuleName]) -> Modules {
    let has = |m| names.contains(&m);
    let chips = has(ModuleName::Chips);
    Modules {
        tollkeepers: has(ModuleName::Tollkeepers),
        messages: has(ModuleName::Messages),
        map: (chips || has(ModuleName::France)).then(|| Box::new(MapSetup::france(chips))),
    }
}

fn context(args: &Args) -> Arc<Ctx> {
    const COLOURS: [Colour; 6] = [
        Colour::Red,
        Colour::Blue,
        Colour::Green,
        Colour::Yellow,
        Colour::Black,
        Colour::Pink,
    ];
    let http = args.url.trim_end_matches('/').to_owned();
    let ws = format!(
        "{}/ws",
        http.replacen("https://", "wss://", 1)
            .replacen("http://", "ws://", 1)
    );
    Arc::new(Ctx {
        http,
        ws,
        request: CreateMatch {
            players: COLOURS[..args.players].to_vec(),
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

async fn run(args: Args) -> Result<(), LoadError> {
    let ctx = context(&args);
    let (ready_tx, mut ready_rx) = mpsc::channel::<()>(args.matches.max(1));
    let (go_tx, go_rx) = watch::channel::<Option<Instant>>(None);
    let setup_started = Instant::now();
    let slots: Vec<_> = (0..args.matches)
        .map(|_| tokio::spawn(slot(ctx.clone(), ready_tx.clone(), go_rx.clone())))
        .collect();
    drop(ready_tx);
    for _ in 0..args.matches {
        if ready_rx.recv().await.is_none() {
            break;
        }
    }
    eprintln!(
        "{} matches created and connected in {:.1} s; measuring for {} s",
        args.matches,
        setup_started.elapsed().as_secs_f64(),
        args.secs
    );
    let cpu_before = args.server_pid.map(cpu_ticks).transpose()?;
    let switches_before = args.server_pid.map(context_switches);
    let self_before = cpu_ticks_self()?;
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(args.secs);
    let _ = go_tx.send(Some(end));
    tokio::time::sleep_until(end).await;
    let cpu_after = args.server_pid.map(cpu_ticks).transpose()?;
    let switches_after = args.server_pid.map(context_switches);
    let self_after = cpu_ticks_self()?;
    let elapsed = start.elapsed().as_secs_f64();
    let mut stats = Stats::default();
    for s in slots {
        match s.await {
            Ok(st) => stats.merge(st),
            Err(e) => stats.errors.push(format!("task: {e}")),
        }
    }
    let server = ServerUse {
        cpu: cpu_before.zip(cpu_after),
        switches: switches_before.zip(switches_after),
    };
    report(&args, &stats, elapsed, &server, self_after - self_before);
    Ok(())
}

/// What the server process used over the run (`--server-pid`): before and after.
struct ServerUse {
    /// CPU clock ticks.
    cpu: Option<(u64, u64)>,
    /// Context switches (voluntary, involuntary) of its threads.
    switches: Option<(Switches, Switches)>,
}

fn report(args: &Args, s: &Stats, elapsed: f64, server: &ServerUse, self_ticks: u64) {
    let p = |v: &[Duration], q: f64| client::latency::percentile(v, q).as_secs_f64() * 1000.0;
    let moves_per_s = s.moves as f64 / elapsed;
    let mods: Vec<String> = args
        .modules
        .iter()
        .map(|m| format!("{m:?}").to_lowercase())
        .collect();
    println!(
        "matches {} x {} players, modules [{}], {:.1} s",
        args.matches,
        args.players,
        mods.join(","),
        elapsed
    );
    println!(
        "moves {} ({:.0} moves/s), matches finished {}, rejected {} ({} rate limited), errors {}",
        s.moves,
        moves_per_s,
        s.matches_finished,
        s.rejected,
        s.rate_limited,
        s.errors.len()
    );
    if s.rate_limited > 0 {
        println!("{RATE_HINT}");
    }
    println!(
        "own diff    ms: p50 {:.2}  p99 {:.2}  p99.9 {:.2}  ({} samples)",
        p(&s.own, 50.0),
        p(&s.own, 99.0),
        p(&s.own, 99.9),
        s.own.len()
    );
    println!(
        "others diff ms: p50 {:.2}  p99 {:.2}  p99.9 {:.2}  ({} samples)",
        p(&s.others, 50.0),
        p(&s.others, 99.0),
        p(&s.others, 99.9),
        s.others.len()
    );
    let per_move = |ticks: u64| {
        if s.moves == 0 {
            0.0
        } else {
            ticks as f64 / CLK_TCK * 1e6 / s.moves as f64
        }
    };
    if let Some((before, after)) = server.cpu {
        let t = after.saturating_sub(before);
        println!(
            "server CPU {:.2} s = {:.0} us/move ({:.0}% of one core)",
            t as f64 / CLK_TCK,
            per_move(t),
            t as f64 / CLK_TCK / elapsed * 100.0
        );
    }
    if let Some((before, after)) = server.switches
        && s.moves > 0
    {
        let moves = s.moves as f64;
        let vol = after.voluntary.saturating_sub(before.voluntary) as f64 / moves;
        let invol = after.involuntary.saturating_sub(before.involuntary) as f64 / moves;
        println!(
            "server context switches = {:.2} /move ({vol:.2} voluntary, {invol:.2} involuntary)",
            vol + invol
        );
    }
    println!(
        "loadgen CPU {:.2} s = {:.0} us/move",
        self_ticks as f64 / CLK_TCK,
        per_move(self_ticks)
    );
    if let Ok(l) = std::fs::read_to_string("/proc/loadavg") {
        println!(
            "load average {}",
            l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
        );
    }
    for e in s.errors.iter().take(5) {
        println!("error: {e}");
    }
}

/// Clock ticks per second of `/proc/<pid>/stat` (USER_HZ, 100 on Linux).
const CLK_TCK: f64 = 100.0;

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> Result<u64, LoadError> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat"))?)
}

fn cpu_ticks_self() -> Result<u64, LoadError> {
    parse_stat(&std::fs::read_to_string("/proc/self/stat")?)
}

/// Fields 14 and 15 (utime, stime) of a `stat` line; the command name (field 2) may hold spaces,
/// so fields are counted after its closing parenthesis.
fn parse_stat(stat: &str) -> Result<u64, LoadError> {
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .ok_or_else(|| LoadError::Args("unreadable /proc stat".into()))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state): utime is field 14, index 11.
    let num = |i: usize| -> Result<u64, LoadError> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| LoadError::Args("unreadable /proc stat".into()))
    };
    Ok(num(11)? + num(12)?)
}

/// One match at a time, replaced when it ends, until the measurement ends.
async fn slot(
    ctx: Arc<Ctx>,
    ready: mpsc::Sender<()>,
    mut go: watch::Receiver<Option<Instant>>,
) -> Stats {
    let mut stats = Stats::default();
    let first = open_match(&ctx).await;
    let _ = ready.send(()).await;
    drop(ready);
    let end = match go.wait_for(Option::is_some).await {
        Ok(v) => v.unwrap_or_else(Instant::now),
        Err(_) => return stats,
    };
    let mut next = Some(first);
    while Instant::now() < end {
        let opened = match next.take() {
            Some(o) => o,
            None => open_match(&ctx).await,
        };
        let (created, conns) = match opened {
            Ok(o) => o,
            Err(e) => {
                stats.errors.push(format!("opening a match: {e}"));
                // Do not spin on a server that refuses.
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let in_flight: InFlight = Arc::new(MatchShared::new(conns.len(), None));
        let seats: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, conn)| {
                let seed = ctx.seeds.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(play_seat(
                    conn,
                    created.match_id,
                    i as u8,
                    in_flight.clone(),
                    end,
                    seed,
                ))
            })
            .collect();
        let mut finished = false;
        for s in seats {
            match s.await {
                Ok(st) => {
                    finished |= st.matches_finished > 0;
                    stats.merge(Stats {
                        matches_finished: 0,
                        ..st
                    });
                }
                Err(e) => stats.errors.push(format!("seat task: {e}")),
            }
        }
        stats.matches_finished += u64::from(finished);
    }
    stats
}

/// Fill mode: creates `args.matches` matches, `args.fill_parallel` at a time, plays `moves` moves
/// in each and disconnects, leaving them unfinished (those that end sooner are counted). Prints
/// how long it took and, with `--server-pid`, the server's resident memory before and after,
/// per match.
async fn fill(args: Args, moves: u64) -> Result<(), LoadError> {
    let ctx = context(&args);
    let rss_before = args.server_pid.map(rss_bytes).transpose()?;
    let started = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let total = args.matches as u64;
    let workers: Vec<_> = (0..args.fill_parallel.max(1))
        .map(|_| {
            let (ctx, next) = (ctx.clone(), next.clone());
            tokio::spawn(async move {
                let mut stats = Stats::default();
                let mut seats = String::new();
                while next.fetch_add(1, Ordering::Relaxed) < total {
                    match fill_one(&ctx, moves).await {
                        Ok((s, id, token)) => {
                            stats.merge(s);
                            seats.push_str(&format!("{id} {token}\n"));
                        }
                        Err(e) => stats.errors.push(format!("filling a match: {e}")),
                    }
                }
                (stats, seats)
            })
        })
        .collect();
    let mut stats = Stats::default();
    let mut seats = String::new();
    for w in workers {
        match w.await {
            Ok((s, lines)) => {
                stats.merge(s);
                seats.push_str(&lines);
            }
            Err(e) => stats.errors.push(format!("task: {e}")),
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    if let Some(path) = &args.seats_out {
        std::fs::write(path, seats)?;
    }
    println!(
        "filled {} matches ({} moves each, {} finished first; {} refused, {} of them rate limited) in {:.1} s, errors {}",
        total,
        moves,
        stats.matches_finished,
        stats.rejected,
        stats.rate_limited,
        elapsed,
        stats.errors.len()
    );
    if stats.rate_limited > 0 {
        println!("{RATE_HINT}");
    }
    if let (Some(before), Some(pid)) = (rss_before, args.server_pid) {
        // The connections are closed: what stays is the matches (until `--match-idle`).
        tokio::time::sleep(Duration::from_secs(1)).await;
        let after = rss_bytes(pid)?;
        println!(
            "server resident memory {:.1} MB -> {:.1} MB: {:.1} KB per match",
            before as f64 / 1e6,
            after as f64 / 1e6,
            after.saturating_sub(before) as f64 / 1e3 / total.max(1) as f64
        );
    }
    for e in stats.errors.iter().take(5) {
        println!("error: {e}");
    }
    Ok(())
}

/// Plays `moves` moves in a new match; what its seats counted, its id and its first seat's
/// token.
async fn fill_one(ctx: &Ctx, moves: u64) -> Result<(Stats, Uuid, String), LoadError> {
    let (created, conns) = open_match(ctx).await?;
    let shared = Arc::new(MatchShared::new(conns.len(), Some(moves)));
    let far = Instant::now() + Duration::from_secs(24 * 3600);
    let mut set = tokio::task::JoinSet::new();
    for (i, conn) in conns.into_iter().enumerate() {
        let seed = ctx.seeds.fetch_add(1, Ordering::Relaxed);
        set.spawn(play_seat(
            conn,
            created.match_id,
            i as u8,
            shared.clone(),
            far,
            seed,
        ));
    }
    let spent = shared.spent.notified();
    tokio::pin!(spent);
    let mut stats = Stats::default();
    let mut hung_up = false;
    loop {
        tokio::select! {
            () = &mut spent, if !hung_up => {
                // Let the last move's ack and diffs arrive, then hang up on every seat.
                tokio::time::sleep(Duration::from_millis(50)).await;
                set.abort_all();
                hung_up = true;
            }
            done = set.join_next() => match done {
                None => break,
                Some(Ok(st)) => stats.merge(st),
                Some(Err(e)) if e.is_cancelled() => {}
                Some(Err(e)) => stats.errors.push(format!("seat task: {e}")),
            }
        }
    }
    if let Some(e) = stats.errors.first() {
        return Err(LoadError::Args(e.clone()));
    }
    stats.matches_finished = u64::from(stats.matches_finished > 0);
    let token = created
        .seats
        .first()
        .map(|s| s.token.clone())
        .unwrap_or_default();
    Ok((stats, created.match_id, token))
}

/// Restart probe: the times from the server's start until `/healthz` answers, then until a
/// first command is answered in the first, middle and last match of `seats` (each a fresh
/// connection: auth, then a pass, which the match's actor answers once it has loaded).
async fn probe(args: Args, seats: std::path::PathBuf) -> Result<(), LoadError> {
    let ctx = context(&args);
    let lines = std::fs::read_to_string(&seats)?;
    let matches: Vec<(Uuid, &str)> = lines
        .lines()
        .filter_map(|l| {
            let (id, token) = l.split_once(' ')?;
            Some((id.parse().ok()?, token))
        })
        .collect();
    if matches.is_empty() {
        return Err(LoadError::Args(format!("no match in {}", seats.display())));
    }
    let picks = [0, matches.len() / 2, matches.len() - 1];
    // Since the server's process start when known, else since ours.
    let probe_start = Instant::now();
    let offset = match args.server_pid {
        Some(pid) => process_age(pid)?,
        None => Duration::ZERO,
    };
    let since = || (offset + probe_start.elapsed()).as_secs_f64() * 1e3;
    let healthz = format!("{}/healthz", ctx.http);
    loop {
        if let Ok((200, _)) = client::http_get(&healthz).await {
            break;
        }
        if probe_start.elapsed() > Duration::from_secs(600) {
            return Err(LoadError::Args("/healthz did not answer in 600 s".into()));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    println!(
        "healthz answered {:.0} ms after the server started",
        since()
    );
    for (n, i) in picks.into_iter().enumerate() {
        let (id, token) = matches[i];
        let asked = Instant::now();
        let mut conn = Connection::connect(&ctx.ws).await?;
        conn.set_read_timeout(Some(Duration::from_secs(600)));
        conn.auth(token).await?;
        let out = conn
            .command(&format!("probe-{n}"), rules::Command::Pass {})
            .await?;
        let answer = match out {
            client::CommandOutcome::Accepted { seq, .. } => format!("accepted at seq {seq}"),
            client::CommandOutcome::Rejected(e) => format!("refused ({:?})", e.code),
        };
        println!(
            "match {id} (line {}): first command {answer} {:.0} ms after the server started, {:.1} ms after asking",
            i + 1,
            since(),
            asked.elapsed().as_secs_f64() * 1e3
        );
        let _ = conn.close().await;
    }
    Ok(())
}

/// How long a process has been running (`/proc/<pid>/stat`'s start time against
/// `/proc/uptime`, at the kernel's 100 ticks per second).
fn process_age(pid: u32) -> Result<Duration, LoadError> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let uptime = std::fs::read_to_string("/proc/uptime")?;
    let bad = || LoadError::Args(format!("cannot read the start time of pid {pid}"));
    // Fields after the command's closing parenthesis; the start time is field 22 overall.
    let after = stat.rsplit_once(')').ok_or_else(bad)?.1;
    let ticks: f64 = after
        .split_whitespace()
        .nth(19)
        .and_then(|t| t.parse().ok())
        .ok_or_else(bad)?;
    let up: f64 = uptime
        .split_whitespace()
        .next()
        .and_then(|t| t.parse().ok())
        .ok_or_else(bad)?;
    Ok(Duration::from_secs_f64((up - ticks / 100.0).max(0.0)))
}

/// Context switches of a process's threads, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Switches {
    /// The thread blocked (waiting for a lock, a socket, a futex, the disk).
    voluntary: u64,
    /// The scheduler took the core away (another thread's turn).
    involuntary: u64,
}

/// The context switches of every thread of a process now, from each thread's
/// `/proc/<pid>/task/<tid>/status` (the process's own `status` counts its first thread only). A
/// thread that ended during the run takes its count with it: the figure is a floor. Best effort:
/// an unreadable thread counts nothing.
fn context_switches(pid: u32) -> Switches {
    let mut sum = Switches::default();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return sum;
    };
    for task in tasks.flatten() {
        if let Ok(status) = std::fs::read_to_string(task.path().join("status")) {
            let t = parse_switches(&status);
            sum.voluntary += t.voluntary;
            sum.involuntary += t.involuntary;
        }
    }
    sum
}

/// `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches` of a `status` text (0 if absent).
fn parse_switches(status: &str) -> Switches {
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim_start_matches(':').trim().parse().ok())
            .unwrap_or(0)
    };
    Switches {
        voluntary: field("voluntary_ctxt_switches"),
        involuntary: field("nonvoluntary_ctxt_switches"),
    }
}

/// Resident set size of a process (`VmRSS` of `/proc/<pid>/status`), in bytes.
fn rss_bytes(pid: u32) -> Result<u64, LoadError> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    parse_rss(&status).ok_or_else(|| LoadError::Args(format!("no VmRSS for pid {pid}")))
}

/// `VmRSS` of a `/proc/<pid>/status` text, in bytes.
fn parse_rss(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// A seat's connection, and the snapshot it read.
type SeatConn = (Connection, ServerMessage);

/// Creates a match, connects and authenticates one connection per seat, subscribes each, and
/// waits for every seat's snapshot: so they are all of seq 0, before any seat plays.
async fn open_match(ctx: &Ctx) -> Result<(MatchCreated, Vec<SeatConn>), LoadError> {
    let created = client::create_match(&ctx.http, &ctx.request).await?;
    let mut conns = Vec::with_capacity(created.seats.len());
    for s in &created.seats {
        let mut conn = Connection::connect(&ctx.ws).await?;
        conn.set_read_timeout(Some(READ_LIMIT));
        conn.auth(&s.token).await?;
        conn.subscribe(created.match_id, None).await?;
        conns.push(conn);
    }
    let mut seats = Vec::with_capacity(conns.len());
    for mut conn in conns {
        let snapshot = conn
            .wait_for(|m| matches!(m, ServerMessage::Snapshot { .. }))
            .await?;
        seats.push((conn, snapshot));
    }
    Ok((created, seats))
}

/// The command this seat has in flight.
struct Mine {
    id: String,
    seq: Seq,
    sent: Instant,
    acked: bool,
}

/// Plays one seat until its match ends or the measurement ends: answers its own decisions, and
/// times its own diffs and the other seats' ones.
async fn play_seat(
    (mut conn, snapshot): SeatConn,
    match_id: Uuid,
    seat: u8,
    in_flight: InFlight,
    end: Instant,
    seed: u64,
) -> Stats {
    let mut stats = Stats::default();
    let played = seat_loop(
        &mut conn, &snapshot, match_id, seat, &in_flight, end, seed, &mut stats,
    );
    if let Err(e) = played.await {
        stats.errors.push(format!("seat {seat} of {match_id}: {e}"));
    }
    drop(conn);
    stats
}

#[allow(clippy::too_many_arguments)]
async fn seat_loop(
    conn: &mut Connection,
    snapshot: &ServerMessage,
    match_id: Uuid,
    seat: u8,
    shared: &InFlight,
    end: Instant,
    mut rng: u64,
    stats: &mut Stats,
) -> Result<(), LoadError> {
    // The loop bounds each wait itself: no second timer per read in the connection.
    conn.set_read_timeout(None);
    let mut seen: Seen = None;
    if !matches!(snapshot, ServerMessage::Snapshot { match_id: m, .. } if *m == match_id) {
        return Err(LoadError::Frame(format!("not a snapshot of {match_id}")));
    }
    lock(&shared.view)?.snapshot(&mut seen, snapshot)?;
    let mut mine: Option<Mine> = None;
    let mut n = 0u64;
    // The decisions of the view held, when they may call for this seat's answer.
    let mut fresh = true;
    loop {
        let now = Instant::now();
        if mine.is_none() && fresh && now < end {
            fresh = false;
            match next_move(shared, seat, &mut rng)? {
                Turn::Finished => {
                    stats.matches_finished = 1;
                    return Ok(());
                }
                Turn::Wait => {}
                Turn::Play(seq, command) => {
                    if !shared.take_move() {
                        return Ok(());
                    }
                    n += 1;
                    let id = format!("s{seat}c{n}");
                    let sent = Instant::now();
                    if let Ok(mut f) = shared.sent.lock() {
                        if f.len() >= IN_FLIGHT_KEPT {
                            f.pop_front();
                        }
                        f.push_back((seq, sent));
                    }
                    conn.send_command(&id, command).await?;
                    mine = Some(Mine {
                        id,
                        seq,
                        sent,
                        acked: false,
                    });
                }
            }
        }
        if Instant::now() >= end && mine.is_none() {
            return Ok(());
        }
        let limit = if mine.is_some() {
            Instant::now() + READ_LIMIT
        } else {
            (Instant::now() + READ_LIMIT).min(end)
        };
        let text = match tokio::time::timeout_at(limit, conn.next_text()).await {
            Ok(m) => m?.ok_or(LoadError::Closed)?,
            Err(_) if Instant::now() >= end && mine.is_none() => return Ok(()),
            Err(_) => return Err(LoadError::Stalled(READ_LIMIT)),
        };
        let at = Instant::now();
        // A seat whose stream is where the match's view is will apply the diff it reads: it
        // parses the patch in the same pass; any other seat only checks it.
        let in_sync = lock(&shared.view)?.mirror.as_ref().and_then(Mirror::seq) == seen;
        let head: Head = if in_sync {
            parse(text.as_str())?
        } else {
            parse::<HeadOnly>(text.as_str())?.without_patch()
        };
        match (head.kind.as_ref(), head.seq) {
            ("ack", Some(seq)) => {
                if let Some(m) = &mut mine
                    && head.id.as_deref() == Some(m.id.as_str())
                {
                    m.acked = true;
                    m.seq = seq;
                    if m.sent < end && at <= end {
                        stats.moves += 1;
                    }
                }
            }
            ("diff", Some(seq)) if head.match_id == Some(match_id) => {
                if let Some(m) = &mine
                    && m.acked
                    && seq == m.seq
                {
                    if m.sent < end {
                        stats.own.push(at - m.sent);
                    }
                    mine = None;
                } else if let Ok(f) = shared.sent.lock()
                    && let Some(&(_, sent)) = f.iter().rev().find(|(s, _)| *s == seq)
                    && sent < end
                {
                    stats.others.push(at - sent);
                }
                // A clone of the frame shares its bytes.
                lock(&shared.view)?.diff(&mut seen, seq, text.clone(), head.patch)?;
                fresh = true;
            }
            // Anything else (a snapshot, an error, ...) is rare: parsed whole.
            _ => match parse::<ServerMessage>(text.as_str())? {
                ServerMessage::Error(body) => {
                    if let Some(m) = &mine
                        && body.id.as_deref() == Some(m.id.as_str())
                    {
                        stats.rejected += 1;
                        if body.code == ErrorCode::RateLimited {
                            // Not a move: the server's limits (raise `--command-rate-*` on it).
                            stats.rate_limited += 1;
                            shared.refund_move();
                            let wait = body.retry_after_ms.unwrap_or(10);
                            tokio::time::sleep(Duration::from_millis(wait)).await;
                        }
                        mine = None;
                        fresh = true;
                    } else {
                        stats.errors.push(format!("server: {:?}", body));
                    }
                }
                msg @ ServerMessage::Snapshot { match_id: of, .. } if of == match_id => {
                    lock(&shared.view)?.snapshot(&mut seen, &msg)?;
                    fresh = true;
                }
                _ => {}
            },
        }
    }
}

/// What the view asks of a seat.
enum Turn {
    Finished,
    Wait,
    /// Send this command, which should become this seq.
    Play(Seq, rules::Command),
}

/// A random legal answer when the view's first decision is this seat's (only it is answered,
/// so the other seats need not parse it).
fn next_move(shared: &MatchShared, seat: u8, rng: &mut u64) -> Result<Turn, LoadError> {
    let view = lock(&shared.view)?;
    let Some((seq, view)) = view.mirror.as_ref().and_then(|m| m.seq().zip(m.view())) else {
        return Ok(Turn::Wait);
    };
    if view.get("finished").and_then(|f| f.as_bool()) == Some(true) {
        return Ok(Turn::Finished);
    }
    let first = view.get("decisions").and_then(|d| d.get(0));
    let player = first.and_then(|d| d.get("player")).and_then(|p| p.as_u64());
    let (Some(first), true) = (first, player == Some(u64::from(seat))) else {
        return Ok(Turn::Wait);
    };
    let decision = decision(first).map_err(|e| LoadError::Client(ClientError::Encode(e)))?;
    Ok(
        match rules::bot::random_move_from(&[decision], || rules::bot::splitmix64(rng)) {
            Some((_, command)) => Turn::Play(seq + 1, command),
            None => Turn::Wait,
        },
    )
}

/// A decision of the view. `place_tile`, the most common and the largest, is read straight into
/// its fields: [`Decision`]'s derive (tagged by `type`) buffers the whole value first.
fn decision(value: &serde_json::Value) -> Result<Decision, serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct PlaceTile {
        player: rules::PlayerId,
        tile: rules::Key,
        placements: Vec<rules::Placement>,
    }
    if value.get("type").and_then(|t| t.as_str()) == Some("place_tile") {
        let p = PlaceTile::deserialize(value)?;
        return Ok(Decision::PlaceTile {
            player: p.player,
            tile: p.tile,
            placements: p.placements,
        });
    }
    Decision::deserialize(value)
}

fn lock<T>(m: &Mutex<T>) -> Result<std::sync::MutexGuard<'_, T>, LoadError> {
    m.lock()
        .map_err(|_| LoadError::Frame("a seat panicked holding its match's view".into()))
}

fn parse<'a, T: serde::Deserialize<'a>>(text: &'a str) -> Result<T, LoadError> {
    serde_json::from_str(text).map_err(|source| {
        LoadError::Client(ClientError::Decode {
            text: text.to_owned(),
            source,
        })
    })
}

/// What a seat reads of a server frame: the kind, an ack's or a diff's fields, and the patch
/// (`P`): parsed when the seat will apply it, skipped unparsed (`IgnoredAny`) when it only checks
/// (see [`Head::without_patch`]); the events are always skipped. Other kinds are parsed whole as
/// [`ServerMessage`].
#[derive(Debug, serde::Deserialize)]
struct Head<'a, P = Vec<FrameOp>> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    match_id: Option<Uuid>,
    #[serde(default)]
    seq: Option<Seq>,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default)]
    patch: Option<P>,
}

/// [`Head`] with its patch skipped unparsed.
type HeadOnly<'a> = Head<'a, serde::de::IgnoredAny>;

impl<'a> HeadOnly<'a> {
    fn without_patch(self) -> Head<'a> {
        Head {
            kind: self.kind,
            match_id: self.match_id,
            seq: self.seq,
            id: self.id,
            patch: None,
        }
    }
}

/// A diff's patch, parsed by the seat that applies it.
#[derive(Debug, serde::Deserialize)]
struct PatchOnly {
    patch: Vec<FrameOp>,
}

/// One patch operation read straight into its fields ([`PatchOp`]'s own derive, tagged by `op`,
/// buffers every value before building it).
#[derive(Debug, PartialEq, serde::Deserialize)]
struct FrameOp {
    op: OpKind,
    path: String,
    #[serde(default)]
    from: Option<String>,
    /// `Some(Null)` for `"value": null`, `None` when absent.
    #[serde(default, deserialize_with = "present")]
    value: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum OpKind {
    Add,
    Remove,
    Replace,
    Move,
    Copy,
    Test,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

impl TryFrom<FrameOp> for PatchOp {
    type Error = LoadError;

    fn try_from(o: FrameOp) -> Result<PatchOp, LoadError> {
        let missing = |field: &str| LoadError::Frame(format!("{:?} without {field}", o.op));
        Ok(match (o.op, o.value, o.from) {
            (OpKind::Add, Some(value), _) => PatchOp::Add {
                path: o.path,
                value,
            },
            (OpKind::Replace, Some(value), _) => PatchOp::Replace {
                path: o.path,
                value,
            },
            (OpKind::Test, Some(value), _) => PatchOp::Test {
                path: o.path,
                value,
            },
            (OpKind::Remove, _, _) => PatchOp::Remove { path: o.path },
            (OpKind::Move, _, Some(from)) => PatchOp::Move { from, path: o.path },
            (OpKind::Copy, _, Some(from)) => PatchOp::Copy { from, path: o.path },
            (OpKind::Add | OpKind::Replace | OpKind::Test, None, _) => {
                return Err(missing("value"));
            }
            (OpKind::Move | OpKind::Copy, _, None) => return Err(missing("from")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_name() -> Result<(), LoadError> {
        let line = "4242 (my server) S 1 2 3 4 5 6 7 8 9 10 250 31 0 0 20 0";
        assert_eq!(parse_stat(line)?, 281);
        Ok(())
    }

    #[test]
    fn resident_memory_is_read_in_bytes() {
        let status = "Name:\tserver\nVmPeak:\t  9000 kB\nVmRSS:\t  1234 kB\nThreads:\t3\n";
        assert_eq!(parse_rss(status), Some(1234 * 1024));
        assert_eq!(parse_rss("Name:\tserver\n"), None);
    }

    #[test]
    fn context_switches_are_read_from_a_thread_status() {
        let status = "Name:\tserver\nThreads:\t3\nvoluntary_ctxt_switches:\t120\n\
                      nonvoluntary_ctxt_switches:\t7\n";
        let want = Switches {
            voluntary: 120,
            involuntary: 7,
        };
        assert_eq!(parse_switches(status), want);
        assert_eq!(parse_switches("Name:\tserver\n"), Switches::default());
        // This test's own process has at least one thread with a status to read.
        let own = context_switches(std::process::id());
        assert!(own.voluntary + own.involuntary > 0, "{own:?}");
    }

    /// A fill budget runs out after its moves; a refused move is given back; without a budget
    /// (a timed run) moves never run out.
    #[test]
    fn the_fill_budget_counts_moves_and_refunds() {
        let m = MatchShared::new(2, Some(2));
        assert!(m.take_move() && m.take_move());
        assert!(!m.take_move());
        m.refund_move();
        assert!(m.take_move() && !m.take_move());
        let timed = MatchShared::new(2, None);
        assert!((0..1000).all(|_| timed.take_move()));
    }

    const MATCH: &str = "a1d55016-11f7-4018-8588-a0978823d7ed";

    /// A real server's snapshot of a new base game and its first two diffs.
    fn snapshot() -> ServerMessage {
        let text = r#"{"type":"snapshot","match_id":"MATCH","seq":0,"view":{"modules":{"tollkeepers":false},"players":[{"colour":"red","score":0,"meeples":7},{"colour":"blue","score":0,"meeples":7}],"board":{"0,0":{"tile":"base/D","rotation":0}},"meeples":{},"pile":{"base/U":3,"base/W":2},"pile_size":70,"discarded":[],"turn":1,"active":0,"drawn":"base/W+highwaymen","decisions":[{"type":"place_tile","player":0,"tile":"base/W+highwaymen","placements":[{"pos":{"x":-1,"y":0},"rotations":[0,180,270]},{"pos":{"x":0,"y":-1},"rotations":[0]}]}],"finished":false}}"#;
        serde_json::from_str(&text.replace("MATCH", MATCH)).expect("a snapshot")
    }

    fn diff_1() -> String {
        r#"{"type":"diff","match_id":"MATCH","seq":1,"events":[{"type":"tile_placed","player":0,"tile":"base/W+highwaymen","pos":{"x":-1,"y":0},"rotation":0}],"patch":[{"op":"add","path":"/board/-1,0","value":{"rotation":0,"tile":"base/W+highwaymen"}},{"op":"replace","path":"/drawn","value":null},{"op":"replace","path":"/decisions/0","value":{"meeple_targets":["road:E","field:Nw"],"player":0,"pos":{"x":-1,"y":0},"type":"place_follower"}}]}"#.replace("MATCH", MATCH)
    }

    fn diff_2() -> String {
        r#"{"type":"diff","match_id":"MATCH","seq":2,"events":[],"patch":[{"op":"replace","path":"/pile/base~1U","value":2},{"op":"replace","path":"/active","value":1}]}"#.replace("MATCH", MATCH)
    }

    /// Two seats over one view: the first reader applies each diff, the second checks it (the
    /// same bytes, or the same patch in other bytes) and a different one or a gap is an error.
    #[test]
    fn the_seats_share_one_view_and_check_each_diff() -> Result<(), LoadError> {
        let mut v = SharedView {
            seats: 2,
            ..SharedView::default()
        };
        let (mut a, mut b): (Seen, Seen) = (None, None);
        v.snapshot(&mut a, &snapshot())?;
        v.snapshot(&mut b, &snapshot())?;
        v.diff(&mut a, 1, diff_1().into(), None)?;
        v.diff(&mut a, 2, diff_2().into(), None)?;
        let view = v.mirror.as_ref().and_then(Mirror::view).cloned();
        let view = view.ok_or(LoadError::Closed)?;
        assert_eq!(
            view.pointer("/board/-1,0/tile"),
            Some(&"base/W+highwaymen".into())
        );
        assert_eq!(view.pointer("/pile/base~1U"), Some(&2.into()));
        assert_eq!(
            view.pointer("/decisions/0/type"),
            Some(&"place_follower".into())
        );
        assert_eq!(v.unread.len(), 2);
        // The same diff in other bytes (keys reordered) is the same diff.
        let reordered = diff_1().replace(
            r#""value":{"rotation":0,"tile":"base/W+highwaymen"}"#,
            r#""value":{"tile":"base/W+highwaymen","rotation":0}"#,
        );
        assert_ne!(reordered, diff_1());
        v.diff(&mut b, 1, reordered.into(), None)?;
        assert_eq!(v.unread.len(), 1);
        let other = diff_2().replace(r#""value":1}"#, r#""value":0}"#);
        let err = v.diff(&mut b.clone(), 2, other.into(), None);
        assert!(matches!(err, Err(LoadError::Frame(_))), "{err:?}");
        v.diff(&mut b, 2, diff_2().into(), None)?;
        assert!(v.unread.is_empty());
        assert_eq!(v.mirror.as_ref().and_then(Mirror::view), Some(&view));
        // A gap on a seat's own stream.
        let err = v.diff(
            &mut a,
            4,
            diff_2().replace(r#""seq":2"#, r#""seq":4"#).into(),
            None,
        );
        assert!(
            matches!(
                err,
                Err(LoadError::Mirror(client::MirrorError::Gap {
                    have: 2,
                    got: 4
                }))
            ),
            "{err:?}"
        );
        Ok(())
    }

    /// A snapshot of another seq, or of another view, than the match's is an error.
    #[test]
    fn a_second_snapshot_must_match_the_view() -> Result<(), LoadError> {
        let mut v = SharedView {
            seats: 2,
            ..SharedView::default()
        };
        v.snapshot(&mut None, &snapshot())?;
        let mut later = snapshot();
        if let ServerMessage::Snapshot { seq, .. } = &mut later {
            *seq = 1;
        }
        assert!(v.snapshot(&mut None, &later).is_err());
        let mut other = snapshot();
        if let ServerMessage::Snapshot { view, .. } = &mut other {
            view.view.turn = 2;
        }
        assert!(v.snapshot(&mut None, &other).is_err());
        Ok(())
    }

    /// The head skips the patch unless asked for it; a `null` value is a value, a missing one an
    /// error.
    #[test]
    fn frames_are_read_in_part() -> Result<(), LoadError> {
        let text = diff_1();
        let head: Head = parse(&text)?;
        let ops = head.patch.ok_or(LoadError::Closed)?;
        assert_eq!((head.kind.as_ref(), head.seq), ("diff", Some(1)));
        let ops: Vec<PatchOp> = ops
            .into_iter()
            .map(PatchOp::try_from)
            .collect::<Result<_, _>>()?;
        let typed: ServerMessage = parse(&text)?;
        let ServerMessage::Diff { patch, .. } = typed else {
            panic!("a diff");
        };
        assert_eq!(ops, patch);
        let only = parse::<HeadOnly>(&text)?.without_patch();
        assert!(only.patch.is_none() && only.seq == Some(1));
        let ack_text = format!(r#"{{"type":"ack","id":"s0c1","match_id":"{MATCH}","seq":1}}"#);
        let ack = parse::<HeadOnly>(&ack_text)?.without_patch();
        assert_eq!(
            (ack.kind.as_ref(), ack.id.as_deref()),
            ("ack", Some("s0c1"))
        );
        let missing: FrameOp = parse(r#"{"op":"add","path":"/x"}"#)?;
        assert!(PatchOp::try_from(missing).is_err());
        let null: FrameOp = parse(r#"{"op":"add","path":"/x","value":null}"#)?;
        assert!(matches!(
            PatchOp::try_from(null)?,
            PatchOp::Add {
                value: serde_json::Value::Null,
                ..
            }
        ));
        Ok(())
    }

    /// The `place_tile` shortcut reads what the derive reads; other kinds take the derive.
    #[test]
    fn decisions_read_as_the_rules_crate_reads_them() -> Result<(), serde_json::Error> {
        let ServerMessage::Snapshot { view, .. } = snapshot() else {
            panic!("a snapshot");
        };
        let value = serde_json::to_value(&view.view.decisions[0])?;
        assert_eq!(decision(&value)?, Decision::deserialize(&value)?);
        assert_eq!(decision(&value)?, view.view.decisions[0]);
        let follower = serde_json::json!({"type": "place_follower", "player": 1,
            "pos": {"x": 0, "y": 1}, "meeple_targets": ["road:E"]});
        assert_eq!(decision(&follower)?, Decision::deserialize(&follower)?);
        Ok(())
    }

    #[test]
    fn chips_imply_the_map() {
        let m = modules(&[ModuleName::Chips, ModuleName::Messages]);
        assert!(m.messages && !m.tollkeepers);
        assert!(m.map.is_some_and(|s| s.chips && s.map == "france"));
        assert!(modules(&[]).map.is_none());
    }
}
