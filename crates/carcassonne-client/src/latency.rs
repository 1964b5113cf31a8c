//! Latency as a player feels it: plays whole games against a running server and times, for every
//! command, how long the sender waits for its `ack` and for its own `diff` (the one its command
//! made). Used by `examples/latency.rs`, the server's load smoke test and its Nagle regression
//! test, always from the client side over real TCP.

use crate::{ClientError, Connection, Mirror, create_match};
use protocol::{CreateMatch, ServerMessage};
use rules::Colour;
use std::time::{Duration, Instant};

/// Per-command waits of the sender, in the order the commands were sent.
#[derive(Debug, Clone, Default)]
pub struct Latencies {
    /// From sending a command to reading its `ack`.
    pub ack: Vec<Duration>,
    /// From sending a command to reading the `diff` of its seq on the same connection.
    pub own_diff: Vec<Duration>,
}

impl Latencies {
    pub fn extend(&mut self, other: Latencies) {
        self.ack.extend(other.ack);
        self.own_diff.extend(other.own_diff);
    }

    /// `ack p50 … p99 … | own diff p50 … p99 … max …`, in milliseconds.
    pub fn summary(&self) -> String {
        format!(
            "{} commands: ack p50 {:.2} ms, p99 {:.2} ms | own diff p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            self.own_diff.len(),
            ms(percentile(&self.ack, 50.0)),
            ms(percentile(&self.ack, 99.0)),
            ms(percentile(&self.own_diff, 50.0)),
            ms(percentile(&self.own_diff, 99.0)),
            ms(percentile(&self.own_diff, 100.0)),
        )
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The nearest-rank percentile `p` (0 to 100) of `samples`; zero when there are none.
pub fn percentile(samples: &[Duration], p: f64) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One seat: its connection and the view it mirrors.
struct Seat {
    conn: Connection,
    mirror: Mirror,
}

impl Seat {
    /// Reads until the mirror holds `seq` (or, with `None`, any snapshot).
    async fn sync_to(&mut self, seq: Option<u64>) -> Result<(), ClientError> {
        while self.mirror.seq().is_none() || self.mirror.seq() < seq {
            match self.conn.next_message().await? {
                Some(m) => {
                    self.mirror.apply(&m)?;
                }
                None => return Err(ClientError::Closed(self.conn.close_frame().cloned())),
            }
        }
        Ok(())
    }
}

/// Creates a two-player match on the server at `http_url` (`ws_url` is its `/ws`), and plays it
/// with random legal moves (chosen from `seed`) until it ends or `max_moves` were made, one command
/// at a time. Each seat has its own connection and is subscribed to the match.
pub async fn play_game(
    http_url: &str,
    ws_url: &str,
    seed: u64,
    max_moves: usize,
) -> Result<Latencies, ClientError> {
    let created = create_match(
        http_url,
        &CreateMatch {
            players: vec![Colour::Red, Colour::Blue],
            modules: Default::default(),
            meeples: None,
            draw_order: None,
            clock: None,
        },
    )
    .await?;
    let mut seats = Vec::new();
    for s in &created.seats {
        let mut conn = Connection::connect(ws_url).await?;
        conn.set_read_timeout(Some(Duration::from_secs(30)));
        conn.auth(&s.token).await?;
        conn.subscribe(created.match_id, None).await?;
        let mut seat = Seat {
            conn,
            mirror: Mirror::new(created.match_id),
        };
        seat.sync_to(None).await?;
        seats.push(seat);
    }
    let mut state = seed;
    let mut out = Latencies::default();
    for n in 0..max_moves {
        let Some(view) = seats[0].mirror.view_typed()? else {
            break;
        };
        if view.finished {
            break;
        }
        let Some((player, command)) =
            rules::bot::random_move_from(&view.decisions, || rules::bot::splitmix64(&mut state))
        else {
            break;
        };
        let seat = seats
            .get_mut(usize::from(player))
            .ok_or_else(|| ClientError::Unexpected {
                expected: "a decision for a seat of the match",
                got: format!("player {player}"),
            })?;
        let id = format!("m{n}");
        let next = seat.mirror.seq().unwrap_or(0) + 1;
        let sent = Instant::now();
        seat.conn.send_command(&id, command).await?;
        let (mut ack, mut diff) = (None, None);
        while ack.is_none() || diff.is_none() {
            let msg = seat
                .conn
                .next_message()
                .await?
                .ok_or_else(|| ClientError::Closed(seat.conn.close_frame().cloned()))?;
            let at = sent.elapsed();
            match &msg {
                ServerMessage::Ack { id: got, .. } if *got == id => ack = Some(at),
                ServerMessage::Diff { seq, .. } if *seq == next => diff = Some(at),
                ServerMessage::Error(body) if body.id.as_deref() == Some(id.as_str()) => {
                    return Err(ClientError::Refused(body.clone()));
                }
                _ => {}
            }
            seat.mirror.apply(&msg)?;
        }
        out.ack.extend(ack);
        out.own_diff.extend(diff);
        for s in &mut seats {
            s.sync_to(Some(next)).await?;
        }
    }
    for s in &mut seats {
        let _ = s.conn.close().await;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let s: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&s, 50.0), Duration::from_millis(50));
        assert_eq!(percentile(&s, 99.0), Duration::from_millis(99));
        assert_eq!(percentile(&s, 100.0), Duration::from_millis(100));
        assert_eq!(percentile(&s[..1], 50.0), Duration::from_millis(1));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
    }
}
