//! One connection of the human-pace run: a player's (answers its own decisions after a think
//! time) or a spectator's. It reconnects with `since` now and then, as players on phones do, and
//! checks that its diffs follow each other without a gap.

use super::PaceCtx;
use super::meter::{Meter, short};
use super::plan::{next_reconnect, source};
use super::table::Table;
use crate::frame::{Head, HeadOnly, PatchOnly, parse};
use client::{Connection, Mirror};
use protocol::{ErrorCode, PatchOp, Seq, ServerMessage};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// A connection that reads nothing for this long (the server pings every 15 s) is dropped and
/// opened again.
const SILENCE: Duration = Duration::from_secs(120);

#[derive(Debug, Clone)]
pub(crate) enum Role {
    Player { seat: u8, token: String },
    Spectator,
}

/// Why a connection's session ended.
enum End {
    /// The match is over: the connection is done.
    Finished,
    Stop,
    /// Time for a planned reconnect, or a gap to close.
    Reconnect,
    /// Counted under this code; reconnect after a pause.
    Failed(String),
}

/// Opens, plays and reopens one connection until its match ends or the run stops.
pub(crate) async fn run(
    ctx: Arc<PaceCtx>,
    table: Arc<Table>,
    role: Role,
    mut rng: u64,
    mut stop: watch::Receiver<bool>,
) {
    // Where the connection last was in the match's stream: a reconnect resumes from there.
    let mut last: Option<Seq> = None;
    while !*stop.borrow() && !table.finished.load(Ordering::Relaxed) {
        let index = ctx.connections_opened.fetch_add(1, Ordering::Relaxed);
        let opened = match source(index, ctx.sources) {
            Some(ip) => Connection::connect_from(&ctx.ws, ip).await,
            None => Connection::connect(&ctx.ws).await,
        };
        let mut conn = match opened {
            Ok(c) => c,
            Err(e) => {
                ctx.meter
                    .error(&format!("connect: {}", short(&e.to_string())));
                if pause(&mut stop).await {
                    return;
                }
                continue;
            }
        };
        Meter::gauge(&ctx.meter.connections, 1);
        table.subscribers.fetch_add(1, Ordering::Relaxed);
        let reconnect_at = next_reconnect(ctx.reconnect_mean, &mut rng).map(|d| Instant::now() + d);
        let end = session(
            &ctx,
            &table,
            &role,
            &mut conn,
            &mut last,
            &mut rng,
            reconnect_at,
            &mut stop,
        )
        .await;
        table.subscribers.fetch_sub(1, Ordering::Relaxed);
        Meter::gauge(&ctx.meter.connections, -1);
        drop(conn);
        match end {
            End::Finished | End::Stop => return,
            End::Reconnect => {
                ctx.meter.reconnects.fetch_add(1, Ordering::Relaxed);
            }
            End::Failed(code) => {
                ctx.meter.error(&code);
                if pause(&mut stop).await {
                    return;
                }
            }
        }
    }
}

/// A second's pause before trying again; true when the run stops meanwhile.
async fn pause(stop: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        _ = stop.changed() => true,
        () = tokio::time::sleep(Duration::from_secs(1)) => *stop.borrow(),
    }
}

#[allow(clippy::too_many_arguments)]
async fn session(
    ctx: &PaceCtx,
    table: &Table,
    role: &Role,
    conn: &mut Connection,
    last: &mut Option<Seq>,
    rng: &mut u64,
    reconnect_at: Option<Instant>,
    stop: &mut watch::Receiver<bool>,
) -> End {
    let seat = match role {
        Role::Player { seat, token } => {
            if let Err(e) = conn.auth(token).await {
                return End::Failed(format!("auth: {}", short(&e.to_string())));
            }
            Some(*seat)
        }
        Role::Spectator => None,
    };
    if let Err(e) = conn.subscribe(table.match_id, *last).await {
        return End::Failed(format!("subscribe: {}", short(&e.to_string())));
    }
    // A move is due at `move_at`; `mine` is the command in flight: its id and when it was sent.
    // A resumed connection may owe an answer already: nothing new may come until it is given.
    let mut move_at: Option<Instant> = seat
        .filter(|&s| has_decision(table, s))
        .map(|_| Instant::now() + ctx.think.sample(rng));
    let mut mine: Option<(String, Instant)> = None;
    let mut sent = 0u64;
    loop {
        // A planned reconnect waits for the command in flight.
        let reconnect = reconnect_at.filter(|_| mine.is_none());
        let wake = [move_at, reconnect].into_iter().flatten().min();
        let text = tokio::select! {
            _ = stop.changed() => return End::Stop,
            () = sleep_until(wake) => {
                if reconnect.is_some_and(|r| Instant::now() >= r) {
                    return End::Reconnect;
                }
                if move_at.is_some_and(|m| Instant::now() >= m) {
                    move_at = None;
                    if let (Some(seat), None) = (seat, &mine)
                        && let Some(command) = decide(table, seat, rng)
                    {
                        sent += 1;
                        let id = format!("p{seat}m{sent}");
                        let at = Instant::now();
                        if let Err(e) = conn.send_command(&id, command).await {
                            return End::Failed(format!("send: {}", short(&e.to_string())));
                        }
                        mine = Some((id, at));
                    }
                }
                continue;
            }
            read = tokio::time::timeout(SILENCE, conn.next_text()) => match read {
                Ok(Ok(Some(text))) => text,
                Ok(Ok(None)) => return End::Failed("closed".into()),
                Ok(Err(e)) => return End::Failed(format!("read: {}", short(&e.to_string()))),
                Err(_) => return End::Failed("silent".into()),
            },
        };
        let at = Instant::now();
        let head: Head = match parse::<HeadOnly>(text.as_str()) {
            Ok(h) => h.without_patch(),
            Err(_) => return End::Failed("frame".into()),
        };
        match (head.kind.as_ref(), head.seq) {
            ("ack", Some(seq)) => {
                if let Some((id, sent_at)) = &mine
                    && head.id.as_deref() == Some(id.as_str())
                {
                    ctx.meter.ack(at - *sent_at);
                    table.acked(seq, at, &ctx.meter);
                    mine = None;
                }
            }
            ("diff", Some(seq)) if head.match_id == Some(table.match_id) => {
                if last.is_some_and(|l| l.checked_add(1) != Some(seq)) {
                    // A gap: resume from the last diff read, as a client must.
                    ctx.meter.gaps.fetch_add(1, Ordering::Relaxed);
                    return End::Reconnect;
                }
                if apply_diff(table, seq, text.as_str()).is_err() {
                    return End::Failed("patch".into());
                }
                table.read(seq, at, &ctx.meter);
                *last = Some(seq);
            }
            ("snapshot", _) => match parse::<ServerMessage>(text.as_str()) {
                Ok(msg @ ServerMessage::Snapshot { .. }) => {
                    let ServerMessage::Snapshot { seq, .. } = &msg else {
                        continue;
                    };
                    *last = Some(*seq);
                    if apply_snapshot(table, &msg).is_err() {
                        return End::Failed("snapshot".into());
                    }
                }
                _ => return End::Failed("frame".into()),
            },
            ("error", _) => match parse::<ServerMessage>(text.as_str()) {
                Ok(ServerMessage::Error(body)) => {
                    let code = serde_json::to_value(body.code)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_else(|| format!("{:?}", body.code));
                    ctx.meter.error(&code);
                    if let Some((id, _)) = &mine
                        && body.id.as_deref() == Some(id.as_str())
                    {
                        mine = None;
                        // Busy or over a limit: try again after the wait the server asks for.
                        if matches!(body.code, ErrorCode::RateLimited | ErrorCode::Busy) {
                            let wait = body.retry_after_ms.unwrap_or(100);
                            move_at = Some(Instant::now() + Duration::from_millis(wait));
                        }
                    }
                }
                _ => return End::Failed("frame".into()),
            },
            _ => {}
        }
        if over(table) {
            table.finished.store(true, Ordering::Relaxed);
            return End::Finished;
        }
        if let Some(seat) = seat
            && mine.is_none()
            && move_at.is_none()
            && has_decision(table, seat)
        {
            move_at = Some(Instant::now() + ctx.think.sample(rng));
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Applies diff `seq` to the table's mirror when it is the next one (a connection that reads it
/// later finds it applied).
fn apply_diff(table: &Table, seq: Seq, text: &str) -> Result<(), ()> {
    let mut view = table.view.lock().map_err(|_| ())?;
    let Some(mirror) = view.as_mut() else {
        return Ok(()); // no snapshot yet: the one coming brings this diff's state
    };
    match mirror.seq() {
        Some(s) if s.checked_add(1) == Some(seq) => {
            let patch = parse::<PatchOnly>(text).map_err(|_| ())?.patch;
            let patch = patch
                .into_iter()
                .map(PatchOp::try_from)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| ())?;
            mirror.apply_patch_owned(seq, patch).map_err(|_| ())
        }
        _ => Ok(()),
    }
}

/// A snapshot replaces the table's mirror when it is newer.
fn apply_snapshot(table: &Table, msg: &ServerMessage) -> Result<(), ()> {
    let ServerMessage::Snapshot { seq, .. } = msg else {
        return Ok(());
    };
    let mut view = table.view.lock().map_err(|_| ())?;
    if view
        .as_ref()
        .and_then(Mirror::seq)
        .is_some_and(|s| s >= *seq)
    {
        return Ok(());
    }
    let mut fresh = Mirror::new(table.match_id);
    fresh.apply(msg).map_err(|_| ())?;
    *view = Some(fresh);
    Ok(())
}

fn over(table: &Table) -> bool {
    let view = table.view.lock();
    view.ok()
        .and_then(|v| {
            v.as_ref()
                .and_then(Mirror::view)
                .and_then(|v| v.get("finished")?.as_bool())
        })
        .unwrap_or(false)
}

/// The decisions of `seat` open in the table's view.
fn own_decisions(view: &serde_json::Value, seat: u8) -> impl Iterator<Item = &serde_json::Value> {
    view.get("decisions")
        .and_then(|d| d.as_array())
        .into_iter()
        .flatten()
        .filter(move |d| d.get("player").and_then(|p| p.as_u64()) == Some(u64::from(seat)))
}

fn has_decision(table: &Table, seat: u8) -> bool {
    let Ok(view) = table.view.lock() else {
        return false;
    };
    view.as_ref()
        .and_then(Mirror::view)
        .is_some_and(|v| own_decisions(v, seat).next().is_some())
}

/// A random legal answer to the seat's first open decision, from the table's view now.
fn decide(table: &Table, seat: u8, rng: &mut u64) -> Option<rules::Command> {
    let view = table.view.lock().ok()?;
    let first = own_decisions(view.as_ref()?.view()?, seat).next()?;
    let decision = crate::seat::decision(first).ok()?;
    rules::bot::random_move_from(&[decision], || rules::bot::splitmix64(rng)).map(|(_, c)| c)
}
