//! Fill mode (`--fill K`): matches played K moves each and left unfinished, for sizing memory
//! and for timing a restart.

use crate::config::{Args, Ctx, context};
use crate::error::LoadError;
use crate::procfs::rss_bytes;
use crate::report::{RATE_HINT, Stats};
use crate::seat::{open_match, play_seat};
use crate::shared::MatchShared;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::time::Instant;
use uuid::Uuid;

/// Fill mode: creates `args.matches` matches, `args.fill_parallel` at a time, plays `moves` moves
/// in each and disconnects, leaving them unfinished (those that end sooner are counted). Prints
/// how long it took and, with `--server-pid`, the server's resident memory before and after,
/// per match.
pub(crate) async fn fill(args: Args, moves: u64) -> Result<(), LoadError> {
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
pub(crate) async fn fill_one(ctx: &Ctx, moves: u64) -> Result<(Stats, Uuid, String), LoadError> {
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
