//! One seat of a match: open a match with a connection per seat, then play a seat in a closed
//! loop (one command in flight per match), timing its own diffs and the other seats' ones.

use crate::config::Ctx;
use crate::error::LoadError;
use crate::frame::{Head, HeadOnly, parse};
use crate::report::Stats;
use crate::shared::{IN_FLIGHT_KEPT, InFlight, MatchShared, Seen, lock};
use client::{ClientError, Connection, Mirror};
use protocol::{ErrorCode, MatchCreated, Seq, ServerMessage};
use rules::Decision;
use serde::Deserialize as _;
use std::time::Duration;
use tokio::time::Instant;
use uuid::Uuid;

/// How long a seat waits for any frame while a command of its match is in flight.
pub(crate) const READ_LIMIT: Duration = Duration::from_secs(30);

/// A seat's connection, and the snapshot it read.
pub(crate) type SeatConn = (Connection, ServerMessage);

/// Creates a match, connects and authenticates one connection per seat, subscribes each, and
/// waits for every seat's snapshot: so they are all of seq 0, before any seat plays.
pub(crate) async fn open_match(ctx: &Ctx) -> Result<(MatchCreated, Vec<SeatConn>), LoadError> {
    let created = client::create_match(&ctx.http, &ctx.request).await?;
    if !ctx.play_ws.is_empty() {
        // A spectator on `--url` touches the match first: that node takes its lease.
        let mut first = Connection::connect(&ctx.ws).await?;
        first.set_read_timeout(Some(READ_LIMIT));
        first.subscribe(created.match_id, None).await?;
        first
            .wait_for(|m| matches!(m, ServerMessage::Snapshot { .. }))
            .await?;
    }
    let mut conns = Vec::with_capacity(created.seats.len());
    for (i, s) in created.seats.iter().enumerate() {
        let mut conn = Connection::connect(ctx.seat_ws(i)).await?;
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
pub(crate) struct Mine {
    pub(crate) id: String,
    pub(crate) seq: Seq,
    pub(crate) sent: Instant,
    pub(crate) acked: bool,
}

/// Plays one seat until its match ends or the measurement ends: answers its own decisions, and
/// times its own diffs and the other seats' ones.
pub(crate) async fn play_seat(
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
pub(crate) async fn seat_loop(
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
pub(crate) enum Turn {
    Finished,
    Wait,
    /// Send this command, which should become this seq.
    Play(Seq, rules::Command),
}

/// A random legal answer when the view's first decision is this seat's (only it is answered,
/// so the other seats need not parse it).
pub(crate) fn next_move(shared: &MatchShared, seat: u8, rng: &mut u64) -> Result<Turn, LoadError> {
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
pub(crate) fn decision(value: &serde_json::Value) -> Result<Decision, serde_json::Error> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::snapshot;

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
}
