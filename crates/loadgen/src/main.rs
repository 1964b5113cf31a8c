//! A load generator: plays `--matches` concurrent matches against a running server, from its own
//! process, over real TCP WebSockets, for `--secs` seconds, and prints moves/s, latency
//! percentiles, errors and (with `--server-pid`, server on the same machine) the server's CPU per
//! move.
//!
//! Every seat of a match is driven by its own connection, which answers the decisions that are its
//! own (the turn's, and other players' pawn choices) with a random legal move read from its mirror
//! of the view: a closed loop, one command in flight per match. Latencies are measured from the
//! moment the sender sends: `own diff` until the sender reads the diff of its command, `others
//! diff` until each other seat reads it. A finished match is replaced by a new one.

use clap::Parser;
use client::{ClientError, Connection, Mirror};
use protocol::{CreateMatch, MatchCreated, Seq, ServerMessage};
use rules::{Colour, Decision, MapSetup, Modules};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use uuid::Uuid;

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
    /// The server's pid, when it runs on this machine: its CPU time per move is printed.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Seed of the random moves.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads of the load generator's own runtime.
    #[arg(long, default_value_t = 1)]
    threads: usize,
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
}

/// What the seats of every match measured.
#[derive(Debug, Default)]
struct Stats {
    own: Vec<Duration>,
    others: Vec<Duration>,
    /// Acks read before the end of the measurement.
    moves: u64,
    rejected: u64,
    errors: Vec<String>,
    matches_finished: u64,
}

impl Stats {
    fn merge(&mut self, o: Stats) {
        self.own.extend(o.own);
        self.others.extend(o.others);
        self.moves += o.moves;
        self.rejected += o.rejected;
        self.errors.extend(o.errors);
        self.matches_finished += o.matches_finished;
    }
}

/// The last commands sent in a match: the seq each should get and when it was sent (a few, since
/// a seat may send the next command before the others have read the previous diff).
type InFlight = Arc<Mutex<VecDeque<(Seq, Instant)>>>;

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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()?;
    runtime.block_on(run(args))
}

fn modules(names: &[ModuleName]) -> Modules {
    let has = |m| names.contains(&m);
    let chips = has(ModuleName::Chips);
    Modules {
        tollkeepers: has(ModuleName::Tollkeepers),
        messages: has(ModuleName::Messages),
        map: (chips || has(ModuleName::France)).then(|| {
            Box::new(MapSetup {
                map: "france".into(),
                starts: None,
                chips,
                chip_layout: None,
            })
        }),
    }
}

async fn run(args: Args) -> Result<(), LoadError> {
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
    let ctx = Arc::new(Ctx {
        http,
        ws,
        request: CreateMatch {
            players: COLOURS[..args.players].to_vec(),
            modules: modules(&args.modules),
            meeples: None,
            draw_order: None,
            clock: None,
        },
        seeds: AtomicU64::new(args.seed),
    });
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
    let self_before = cpu_ticks_self()?;
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(args.secs);
    let _ = go_tx.send(Some(end));
    tokio::time::sleep_until(end).await;
    let cpu_after = args.server_pid.map(cpu_ticks).transpose()?;
    let self_after = cpu_ticks_self()?;
    let elapsed = start.elapsed().as_secs_f64();
    let mut stats = Stats::default();
    for s in slots {
        match s.await {
            Ok(st) => stats.merge(st),
            Err(e) => stats.errors.push(format!("task: {e}")),
        }
    }
    report(
        &args,
        &stats,
        elapsed,
        cpu_before.zip(cpu_after),
        self_after - self_before,
    );
    Ok(())
}

fn report(args: &Args, s: &Stats, elapsed: f64, server_cpu: Option<(u64, u64)>, self_ticks: u64) {
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
        "moves {} ({:.0} moves/s), matches finished {}, rejected {}, errors {}",
        s.moves,
        moves_per_s,
        s.matches_finished,
        s.rejected,
        s.errors.len()
    );
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
    if let Some((before, after)) = server_cpu {
        let t = after.saturating_sub(before);
        println!(
            "server CPU {:.2} s = {:.0} us/move ({:.0}% of one core)",
            t as f64 / CLK_TCK,
            per_move(t),
            t as f64 / CLK_TCK / elapsed * 100.0
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
        let in_flight: InFlight = Arc::new(Mutex::new(VecDeque::new()));
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

/// Creates a match, connects and authenticates one connection per seat, and subscribes each.
async fn open_match(ctx: &Ctx) -> Result<(MatchCreated, Vec<Connection>), LoadError> {
    let created = client::create_match(&ctx.http, &ctx.request).await?;
    let mut conns = Vec::with_capacity(created.seats.len());
    for s in &created.seats {
        let mut conn = Connection::connect(&ctx.ws).await?;
        conn.set_read_timeout(Some(READ_LIMIT));
        conn.auth(&s.token).await?;
        conn.subscribe(created.match_id, None).await?;
        conns.push(conn);
    }
    Ok((created, conns))
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
    mut conn: Connection,
    match_id: Uuid,
    seat: u8,
    in_flight: InFlight,
    end: Instant,
    seed: u64,
) -> Stats {
    let mut stats = Stats::default();
    if let Err(e) = seat_loop(&mut conn, match_id, seat, &in_flight, end, seed, &mut stats).await {
        stats.errors.push(format!("seat {seat} of {match_id}: {e}"));
    }
    drop(conn);
    stats
}

async fn seat_loop(
    conn: &mut Connection,
    match_id: Uuid,
    seat: u8,
    in_flight: &InFlight,
    end: Instant,
    mut rng: u64,
    stats: &mut Stats,
) -> Result<(), LoadError> {
    let mut mirror = Mirror::new(match_id);
    let mut mine: Option<Mine> = None;
    let mut n = 0u64;
    // The decisions of the view held, when they may call for this seat's answer.
    let mut fresh = false;
    loop {
        let now = Instant::now();
        if mine.is_none() && fresh && now < end {
            fresh = false;
            if let Some(view) = mirror.view() {
                if view.get("finished").and_then(|f| f.as_bool()) == Some(true) {
                    stats.matches_finished = 1;
                    return Ok(());
                }
                let decisions: Vec<Decision> = match view.get("decisions") {
                    Some(d) => serde_json::from_value(d.clone())
                        .map_err(|e| LoadError::Client(ClientError::Encode(e)))?,
                    None => Vec::new(),
                };
                if decisions.first().map(Decision::player) == Some(seat)
                    && let Some((_, command)) = rules::bot::random_move_from(&decisions, || {
                        rules::bot::splitmix64(&mut rng)
                    })
                {
                    n += 1;
                    let id = format!("s{seat}c{n}");
                    let seq = mirror.seq().unwrap_or(0) + 1;
                    let sent = Instant::now();
                    if let Ok(mut f) = in_flight.lock() {
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
        let msg = match tokio::time::timeout_at(limit, conn.next_message()).await {
            Ok(m) => m?.ok_or(LoadError::Closed)?,
            Err(_) if Instant::now() >= end && mine.is_none() => return Ok(()),
            Err(_) => return Err(LoadError::Stalled(READ_LIMIT)),
        };
        let at = Instant::now();
        match &msg {
            ServerMessage::Ack { id, seq, .. } => {
                if let Some(m) = &mut mine
                    && *id == m.id
                {
                    m.acked = true;
                    m.seq = *seq;
                    if m.sent < end && at <= end {
                        stats.moves += 1;
                    }
                }
            }
            ServerMessage::Error(body) => {
                if let Some(m) = &mine
                    && body.id.as_deref() == Some(m.id.as_str())
                {
                    stats.rejected += 1;
                    mine = None;
                    fresh = true;
                } else {
                    stats.errors.push(format!("server: {:?}", body));
                }
            }
            ServerMessage::Diff { seq, .. } => {
                if let Some(m) = &mine
                    && m.acked
                    && *seq == m.seq
                {
                    if m.sent < end {
                        stats.own.push(at - m.sent);
                    }
                    mine = None;
                } else if let Ok(f) = in_flight.lock()
                    && let Some(&(_, sent)) = f.iter().rev().find(|(s, _)| s == seq)
                    && sent < end
                {
                    stats.others.push(at - sent);
                }
                fresh = true;
            }
            ServerMessage::Snapshot { .. } => fresh = true,
            _ => {}
        }
        mirror.apply(&msg)?;
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
    fn chips_imply_the_map() {
        let m = modules(&[ModuleName::Chips, ModuleName::Messages]);
        assert!(m.messages && !m.tollkeepers);
        assert!(m.map.is_some_and(|s| s.chips && s.map == "france"));
        assert!(modules(&[]).map.is_none());
    }
}
