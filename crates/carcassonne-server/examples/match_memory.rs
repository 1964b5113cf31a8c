//! Where a live match's memory goes: builds the parts a loaded match holds for `n` random games
//! of `moves` moves each, one kind of part at a time, all kept alive, and prints the growth of
//! the process's resident memory per match for each (so the allocator's own overhead counts, as
//! it does in the server): the rules' `Game` (as a replay builds it), the kept `MatchView`, the
//! diff window (the last 64 diffs within `WINDOW_BYTES`, default unbounded), the dedupe table of accepted ids, and an
//! empty actor inbox (beside an empty tokio `mpsc` channel of the same capacity, for scale). The breakdown is in `docs/performance.md` (where a match's memory goes).
//!
//! ```text
//! cargo run --release -p carcassonne-server --example match_memory -- 40 2000 [all]   # moves, matches
//! ```

use protocol::{MatchView, ServerMessage};
use rules::{Colour, Command, Game, Setup, bot};
use server::actor::ActorMsg;
use std::collections::{HashMap, VecDeque};
use uuid::Uuid;

/// The resident memory of this process, in bytes.
fn rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn setup(seed: u64, all: bool) -> Setup {
    let s = Setup::new(Colour::ALL[..2].to_vec(), seed);
    if all {
        s.tollkeepers(true).messages(true).map("france").chips(true)
    } else {
        s
    }
}

fn match_view(g: &Game) -> MatchView {
    MatchView::from(g.view())
}

/// A random game's first `moves` commands.
fn commands(
    seed: u64,
    all: bool,
    moves: usize,
) -> Result<Vec<(u8, Command)>, Box<dyn std::error::Error>> {
    let (mut game, _) = Game::start(setup(seed, all))?;
    let mut rng = seed;
    let mut out = Vec::new();
    while out.len() < moves {
        let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) else {
            break;
        };
        game.apply(player, cmd.clone())?;
        out.push((player, cmd));
    }
    Ok(out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let moves: usize = args.next().map(|m| m.parse()).transpose()?.unwrap_or(40);
    let n: u64 = args.next().map(|m| m.parse()).transpose()?.unwrap_or(2000);
    let all = args.next().is_some_and(|a| a == "all");
    let window_len = 64;
    let window_bytes: usize = std::env::var("WINDOW_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX);
    let logs: Vec<_> = (0..n)
        .map(|seed| commands(seed, all, moves))
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::new();
    let mut measure = |name: &str, rss0: usize| {
        rows.push((name.to_string(), (rss().saturating_sub(rss0)) / n as usize));
    };

    let r = rss();
    let mut games = Vec::new();
    for (seed, log) in logs.iter().enumerate() {
        let (mut game, _) = Game::start(setup(seed as u64, all))?;
        for (p, c) in log {
            game.apply(*p, c.clone())?;
        }
        // As a replay leaves it in the server.
        game.shrink_to_fit();
        games.push(game);
    }
    measure("game (replayed)", r);

    let r = rss();
    let views: Vec<MatchView> = games.iter().map(match_view).collect();
    measure("view (MatchView)", r);

    let r = rss();
    let mut windows = Vec::new();
    for (seed, log) in logs.iter().enumerate() {
        let (mut game, _) = Game::start(setup(seed as u64, all))?;
        let mut before = match_view(&game);
        let mut window: VecDeque<(u64, server::wire::Frame)> = VecDeque::new();
        let mut bytes = 0;
        for (seq, (p, c)) in (1..).zip(log) {
            let events = game.apply(*p, c.clone())?;
            let after = match_view(&game);
            let patch = protocol::diff::match_view_patch(&before, &after)?;
            before = after;
            let frame = server::wire::Frame::from(serde_json::to_string(&ServerMessage::Diff {
                match_id: Uuid::nil(),
                seq,
                by_server: None,
                events,
                patch,
            })?);
            bytes += frame.len();
            window.push_back((seq, frame));
            while window.len() > window_len || bytes > window_bytes {
                bytes -= window.pop_front().map_or(0, |(_, f)| f.len());
            }
        }
        windows.push(window);
    }
    measure("window (diff frames)", r);

    let r = rss();
    let dedupe: Vec<HashMap<(u8, String), u64>> = logs
        .iter()
        .map(|log| {
            (0..log.len())
                .map(|i| (((i % 2) as u8), format!("s{}c{}", i % 2, i / 2)))
                .zip(1..)
                .collect()
        })
        .collect();
    measure("dedupe (HashMap of ids)", r);

    let r = rss();
    let compact: Vec<Vec<[u8; 16]>> = logs
        .iter()
        .map(|log| (1..=log.len()).map(|q| [q as u8; 16]).collect())
        .collect();
    measure("dedupe (16-byte keys)", r);

    let r = rss();
    let inboxes: Vec<_> = (0..n)
        .map(|_| server::queue::channel::<ActorMsg>(256))
        .collect();
    measure("inbox (queue, 256)", r);

    let r = rss();
    let channels: Vec<_> = (0..n)
        .map(|_| tokio::sync::mpsc::channel::<ActorMsg>(256))
        .collect();
    measure("(a tokio mpsc, 256)", r);

    println!(
        "{n} matches of {} moves{}: resident bytes per match",
        moves,
        if all { ", all modules" } else { "" }
    );
    let mut total = 0;
    for (name, b) in &rows {
        println!("{name:>24}: {b:>7}");
        // Rows in brackets are for comparison: no match holds them.
        if !name.starts_with('(') {
            total += b;
        }
    }
    println!("{:>24}: {total:>7}", "total");
    println!(
        "{:>24}: {:>7}",
        "(inline) Game, MatchView",
        format!(
            "{} {}",
            std::mem::size_of::<Game>(),
            std::mem::size_of::<MatchView>()
        )
    );
    drop((games, views, windows, dedupe, compact, inboxes, channels));
    Ok(())
}
