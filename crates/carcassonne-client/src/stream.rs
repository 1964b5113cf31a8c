//! [`MatchStream`]: one seat (or one spectator) of one match as a stream of typed events, over a
//! connection that reconnects by itself and resumes with `since`.

use crate::bot::Rng;
use crate::reconnect::transient;
use crate::{ClientError, Close, Connection, Mirror, Reconnect, Tls, Welcome, reconnects_after};
use protocol::{ChatLine, ClientMessage, ErrorBody, ErrorCode, Seq, ServerMessage};
use rules::{Command, Decision, View};
use std::collections::VecDeque;
use std::time::Duration;
use tokio::time::Instant;
use tracing::{debug, info_span, warn};
use uuid::Uuid;

/// How long a command turned away without a `retry_after_ms` (`busy`: a full match inbox;
/// `unavailable`: the server shutting down; `internal`: a store failure) waits before it goes
/// again (a reconnection sends it at once).
const RETRY_MS: u64 = 100;

/// What a [`MatchStream`] hands out, in order.
///
/// ```no_run
/// # async fn f(mut game: carcassonne_client::MatchStream) -> Result<(), carcassonne_client::ClientError> {
/// use carcassonne_client::MatchEvent;
/// while let Some(event) = game.next().await? {
///     match event {
///         MatchEvent::Connected { attempts, .. } if attempts > 0 => println!("back after {attempts} attempts"),
///         MatchEvent::Diff { seq, events } => println!("seq {seq}: {} events", events.len()),
///         MatchEvent::Refused(error) => println!("refused: {}", error.message),
///         MatchEvent::Finished => break,
///         _ => {}
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MatchEvent {
    /// A connection is open and set up: the server's `welcome`, the seat held (`None`: a
    /// spectator), and how many attempts it took after a drop (0 on the first connection).
    Connected {
        welcome: Welcome,
        seat: Option<u8>,
        attempts: u32,
        /// How the previous connection ended (`None` on the first one, or when it dropped
        /// without a close frame).
        after: Option<Close>,
    },
    /// The view was replaced by the server's whole view at `seq` (the first subscription, or a
    /// resume the server answered with a snapshot).
    Snapshot { seq: Seq },
    /// The view moved to `seq` (always the previous seq + 1) through `events`.
    Diff { seq: Seq, events: Vec<rules::Event> },
    /// This seat has open decisions (oldest first) and no command waiting for an answer: answer
    /// one with [`MatchStream::send`]. Comes once per seq of the view (after the snapshot or
    /// diff, or after the answer to this seat's last command), and again after a refusal while
    /// they stay open.
    YourTurn { decisions: Vec<Decision> },
    /// The command sent as `id` was stored as `seq`.
    Ack { id: String, seq: Seq },
    /// The server refused something this stream sent: a command (`error.id` is its id; the
    /// match goes on), or a subscription. A command turned away for a while (`rate_limited`,
    /// `busy`, `unavailable` before the end, `internal`: nothing was done) is not refused: the
    /// stream sends it again under the same id, and its answer comes later.
    Refused(ErrorBody),
    /// A chat message in this match.
    Chat(ChatLine),
    /// The match is over; [`MatchStream::view`] holds the final scores. Comes once.
    Finished,
}

/// How a stream claims its place in the match on every connection.
#[derive(Clone)]
pub(crate) enum SeatClaim {
    /// `auth` with a seat token.
    Token(String),
    /// `take_seat` with an account session (sent as a bearer on the upgrade).
    Account(String),
    /// No seat: an account session if any (for the spectators' chat), and a private lobby
    /// match's invite code if any.
    Watch {
        session: Option<String>,
        invite_code: Option<String>,
    },
}

/// Names the kind of claim, never its secret.
impl std::fmt::Debug for SeatClaim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SeatClaim::Token(_) => "Token(..)",
            SeatClaim::Account(_) => "Account(..)",
            SeatClaim::Watch { .. } => "Watch(..)",
        })
    }
}

/// Where a stream connects, and as whom.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub ws_url: String,
    pub tls: Tls,
    pub match_id: Uuid,
    pub claim: SeatClaim,
    pub reconnect: Reconnect,
}

impl Target {
    /// Opens a connection and claims the seat: the connection and the seat it holds.
    async fn open(&self) -> Result<(Connection, Option<u8>), ClientError> {
        let session = match &self.claim {
            SeatClaim::Account(s)
            | SeatClaim::Watch {
                session: Some(s), ..
            } => Some(format!("Bearer {s}")),
            SeatClaim::Token(_) | SeatClaim::Watch { session: None, .. } => None,
        };
        let headers: Vec<(&str, &str)> = session
            .as_deref()
            .map(|b| ("Authorization", b))
            .into_iter()
            .collect();
        let mut conn = Connection::connect_tls(&self.ws_url, &self.tls, &headers).await?;
        let seat = match &self.claim {
            SeatClaim::Token(t) => Some(conn.auth(t).await?.seat),
            SeatClaim::Account(_) => Some(conn.take_seat(self.match_id).await?.seat),
            SeatClaim::Watch { .. } => None,
        };
        Ok((conn, seat))
    }

    /// Follows the match on `conn` from `since`: `watch` with the invite code if there is one,
    /// else `subscribe`.
    async fn follow(&self, conn: &mut Connection, since: Option<Seq>) -> Result<(), ClientError> {
        match &self.claim {
            SeatClaim::Watch {
                invite_code: Some(code),
                ..
            } => conn.watch(self.match_id, code, since).await,
            _ => conn.subscribe(self.match_id, since).await,
        }
    }
}

/// One match as seen by one seat (or a spectator): a stream of [`MatchEvent`]s, the current view
/// (a [`Mirror`] kept from the snapshot and diffs), and a way to send commands.
///
/// When the connection drops (or the server closes it with a code that
/// [`reconnects_after`] accepts), the next call to [`MatchStream::next`] reconnects as the
/// [`Reconnect`] policy says, claims the seat again, subscribes with `since` = the last seq
/// applied, and sends again every command not answered yet, under its first id (the server
/// answers a repeated id with its first answer and applies nothing twice). So the diffs it
/// hands out follow each other without a gap or a repeat across reconnections.
///
/// A command the server turns away for a while (its rate limit, `rate_limited`; a full match
/// inbox, `busy`; a shutdown, `unavailable`; a store failure, `internal`: the answers it does not
/// remember, nothing was done) goes again by itself under the same id once the wait the server
/// names is over, or on the next connection: a bot that answers at once is paced by the
/// server's limits, and rides out a restart, without seeing refusals.
///
/// A stream sees what the server sends to its connection: the public view and its own answers.
/// Secrets (the pile's order, the seed, other seats' tokens) are never sent to anyone.
///
/// ```no_run
/// # async fn f() -> Result<(), carcassonne_client::ClientError> {
/// use carcassonne_client::{Client, MatchEvent};
/// # let (client, match_id): (Client, uuid::Uuid) = todo!();
/// let mut game = client.play(match_id).await?;
/// let mut rng = carcassonne_client::bot::Rng::new(7);
/// while let Some(event) = game.next().await? {
///     match event {
///         MatchEvent::YourTurn { decisions } => {
///             let command = carcassonne_client::rules::bot::random_command(&decisions[0], || rng.next_u64());
///             if let Some(command) = command {
///                 game.send(command).await?;
///             }
///         }
///         MatchEvent::Finished => break,
///         _ => {}
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct MatchStream {
    target: Target,
    conn: Option<Connection>,
    /// How the last connection ended, until the next one is reported.
    ended: Option<Close>,
    mirror: Mirror,
    view: Option<View>,
    seat: Option<u8>,
    out: VecDeque<MatchEvent>,
    /// Commands sent and not answered yet, in order: sent again after a reconnection.
    unanswered: Vec<(String, Command)>,
    /// Commands the server turned away for a while (`rate_limited`, `busy`: nothing was done),
    /// to send again under the same id at the time given.
    resend: Vec<(Instant, String)>,
    id_prefix: String,
    next_id: u64,
    finished: bool,
    /// The server closed the connection normally (1000): no more events.
    closed: bool,
    /// The seq at which the last [`MatchEvent::YourTurn`] came.
    turn_at: Option<Seq>,
    jitter: Rng,
}

impl MatchStream {
    /// Connects once (no retry: a first failure is the caller's to see), claims the seat and
    /// subscribes for a snapshot.
    pub(crate) async fn open(target: Target) -> Result<MatchStream, ClientError> {
        let random = Uuid::new_v4().as_u128();
        let mut stream = MatchStream {
            mirror: Mirror::new(target.match_id),
            target,
            conn: None,
            ended: None,
            view: None,
            seat: None,
            out: VecDeque::new(),
            unanswered: Vec::new(),
            resend: Vec::new(),
            id_prefix: format!("k{:08x}", random as u32),
            next_id: 0,
            finished: false,
            closed: false,
            turn_at: None,
            jitter: Rng::new((random >> 64) as u64),
        };
        let (conn, seat) = stream.target.open().await?;
        stream.attach(conn, seat, 0).await?;
        Ok(stream)
    }

    /// The match followed.
    ///
    /// ```no_run
    /// # fn f(game: &carcassonne_client::MatchStream) {
    /// println!("playing seat {:?} of {} at seq {:?}", game.seat(), game.match_id(), game.seq());
    /// # }
    /// ```
    pub fn match_id(&self) -> Uuid {
        self.target.match_id
    }

    /// The seat this stream plays (`None`: a spectator).
    pub fn seat(&self) -> Option<u8> {
        self.seat
    }

    /// The seq of the view held (`None` before the first snapshot).
    pub fn seq(&self) -> Option<Seq> {
        self.mirror.seq()
    }

    /// The current view: the snapshot and every diff received since, applied (after a read
    /// that queued several events, it is already the view after the last of them).
    ///
    /// ```no_run
    /// # fn f(game: &carcassonne_client::MatchStream) {
    /// if let Some(view) = game.view() {
    ///     let scores: Vec<u32> = view.players.iter().map(|p| p.score).collect();
    ///     println!("turn {}, scores {scores:?}", view.turn);
    /// }
    /// # }
    /// ```
    pub fn view(&self) -> Option<&View> {
        self.view.as_ref()
    }

    /// The mirror behind [`MatchStream::view`]: the view as JSON, with the server's deadlines
    /// and clocks ([`Mirror::match_view_typed`]).
    pub fn mirror(&self) -> &Mirror {
        &self.mirror
    }

    /// Whether the match is over (the view says so).
    ///
    /// ```no_run
    /// # async fn f(mut game: carcassonne_client::MatchStream) -> Result<(), carcassonne_client::ClientError> {
    /// // Read on until the end and every answer to this seat's commands.
    /// while !(game.finished() && game.waiting() == 0) {
    ///     if game.next().await?.is_none() {
    ///         break;
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// How many commands sent by this stream wait for their answer.
    pub fn waiting(&self) -> usize {
        self.unanswered.len()
    }

    /// The open decisions of this seat in the current view, oldest first.
    ///
    /// ```no_run
    /// # fn f(game: &carcassonne_client::MatchStream) {
    /// use carcassonne_client::rules::Decision;
    /// for decision in game.my_decisions() {
    ///     if let Decision::PlaceTile { tile, placements, .. } = decision {
    ///         println!("{tile} fits on {} squares", placements.len());
    ///     }
    /// }
    /// # }
    /// ```
    pub fn my_decisions(&self) -> Vec<Decision> {
        match (&self.view, self.seat) {
            (Some(view), Some(seat)) => view
                .decisions
                .iter()
                .filter(|d| d.player() == seat)
                .cloned()
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Sends `command` for this seat and returns its id; the answer comes as
    /// [`MatchEvent::Ack`] or [`MatchEvent::Refused`]. A command sent while the connection is
    /// down goes out once it is back.
    ///
    /// ```no_run
    /// # async fn f(game: &mut carcassonne_client::MatchStream) -> Result<(), carcassonne_client::ClientError> {
    /// use carcassonne_client::rules::Command;
    /// let id = game.send(Command::Pass {}).await?;
    /// # Ok(()) }
    /// ```
    pub async fn send(&mut self, command: Command) -> Result<String, ClientError> {
        self.next_id += 1;
        let id = format!("{}-{}", self.id_prefix, self.next_id);
        self.unanswered.push((id.clone(), command.clone()));
        if let Some(conn) = &mut self.conn
            && let Err(e) = conn.send_command(&id, command).await
        {
            debug!(error = %e, "a command could not be sent; it goes again after reconnecting");
            self.conn = None;
        }
        Ok(id)
    }

    /// Says `text` at the table (players) or to the other spectators; it comes back to every
    /// reader, this one too, as [`MatchEvent::Chat`].
    ///
    /// ```no_run
    /// # async fn f(game: &mut carcassonne_client::MatchStream) -> Result<(), carcassonne_client::ClientError> {
    /// game.chat("good luck").await?;
    /// # Ok(()) }
    /// ```
    pub async fn chat(&mut self, text: &str) -> Result<(), ClientError> {
        let message = ClientMessage::Chat {
            match_id: Some(self.target.match_id),
            lobby_id: None,
            text: text.to_owned(),
        };
        match &mut self.conn {
            Some(conn) => conn.send(&message).await,
            None => Err(ClientError::Closed(self.ended.clone())),
        }
    }

    /// The next event. Reconnects first when the connection is down. `Ok(None)` once the
    /// server closed the connection normally (1000); an end that is no reason to reconnect (a
    /// revoked session, 4002) or too many failed attempts is an error.
    ///
    /// ```no_run
    /// # async fn f(mut game: carcassonne_client::MatchStream) -> Result<(), carcassonne_client::ClientError> {
    /// while let Some(event) = game.next().await? {
    ///     println!("{event:?}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn next(&mut self) -> Result<Option<MatchEvent>, ClientError> {
        loop {
            if let Some(event) = self.out.pop_front() {
                return Ok(Some(event));
            }
            if self.closed {
                return Ok(None);
            }
            let Some(conn) = &mut self.conn else {
                self.reconnect().await?;
                continue;
            };
            let read = match self.resend.iter().map(|(at, _)| *at).min() {
                // `next_message` is cancel-safe: a frame is never half-read at the deadline.
                Some(at) => match tokio::time::timeout_at(at, conn.next_message()).await {
                    Ok(read) => read,
                    Err(_) => {
                        self.send_again().await;
                        continue;
                    }
                },
                None => conn.next_message().await,
            };
            match read {
                Ok(Some(message)) => self.absorb(message).await?,
                Ok(None) => {
                    let close = conn.close_frame().cloned();
                    self.conn = None;
                    let code = close.as_ref().map(|c| c.code);
                    if code == Some(1000) {
                        self.closed = true;
                        return Ok(None);
                    }
                    if !reconnects_after(code) || self.target.reconnect.max_attempts == 0 {
                        return Err(ClientError::Closed(close));
                    }
                    self.ended = close;
                }
                Err(e) if transient(&e) && self.target.reconnect.max_attempts > 0 => {
                    debug!(error = %e, "the connection failed");
                    self.conn = None;
                    self.ended = None;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends again, under their first ids, the commands whose wait is over.
    async fn send_again(&mut self) {
        let now = Instant::now();
        let (due, later): (Vec<_>, Vec<_>) = self.resend.drain(..).partition(|(at, _)| *at <= now);
        self.resend = later;
        for (_, id) in due {
            let Some((_, command)) = self.unanswered.iter().find(|(i, _)| *i == id) else {
                continue;
            };
            if let Some(conn) = &mut self.conn
                && let Err(e) = conn.send_command(&id, command.clone()).await
            {
                debug!(error = %e, "a command could not be sent; it goes again after reconnecting");
                self.conn = None;
            }
        }
    }

    /// Opens a new connection as the policy says, then resumes.
    async fn reconnect(&mut self) -> Result<(), ClientError> {
        let span = info_span!("reconnect", match_id = %self.target.match_id);
        let _enter = span.enter();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let random = self.jitter.next_u64() as f64 / u64::MAX as f64;
            tokio::time::sleep(self.target.reconnect.delay(attempt, random)).await;
            let tried = match self.target.open().await {
                Ok((conn, seat)) => self.attach(conn, seat, attempt).await,
                Err(e) => Err(e),
            };
            match tried {
                Ok(()) => return Ok(()),
                Err(e) if transient(&e) && attempt < self.target.reconnect.max_attempts => {
                    warn!(attempt, error = %e, "reconnecting failed; trying again");
                }
                Err(e) => {
                    return Err(ClientError::ReconnectFailed {
                        attempts: attempt,
                        last: Box::new(e),
                    });
                }
            }
        }
    }

    /// Takes `conn` as the connection: subscribes from the last seq applied and sends the
    /// unanswered commands again.
    async fn attach(
        &mut self,
        mut conn: Connection,
        seat: Option<u8>,
        attempts: u32,
    ) -> Result<(), ClientError> {
        self.target.follow(&mut conn, self.mirror.seq()).await?;
        for (id, command) in &self.unanswered {
            conn.send_command(id, command.clone()).await?;
        }
        self.resend.clear();
        self.out.push_back(MatchEvent::Connected {
            welcome: conn.welcome().clone(),
            seat,
            attempts,
            after: self.ended.take(),
        });
        self.seat = seat;
        self.conn = Some(conn);
        Ok(())
    }

    /// Turns one server message into events.
    async fn absorb(&mut self, message: ServerMessage) -> Result<(), ClientError> {
        let match_id = self.target.match_id;
        match message {
            ServerMessage::Snapshot {
                match_id: m, seq, ..
            } if m == match_id => {
                self.mirror.apply(&message)?;
                self.out.push_back(MatchEvent::Snapshot { seq });
                self.viewed()?;
            }
            ServerMessage::Diff {
                match_id: m, seq, ..
            } if m == match_id => {
                let have = self.mirror.seq();
                if have.is_some_and(|h| seq <= h) {
                    // Already applied (a resume overlapping what arrived): nothing new.
                    return Ok(());
                }
                if have.is_none_or(|h| seq != h + 1) {
                    // A hole: ask again from what is held.
                    warn!(?have, seq, "a diff out of order; subscribing again");
                    if let Some(conn) = &mut self.conn {
                        self.target.follow(conn, have).await?;
                    }
                    return Ok(());
                }
                self.mirror.apply(&message)?;
                if let ServerMessage::Diff { events, .. } = message {
                    self.out.push_back(MatchEvent::Diff { seq, events });
                }
                self.viewed()?;
            }
            ServerMessage::Ack { id, seq, .. } => {
                self.unanswered.retain(|(i, _)| *i != id);
                self.out.push_back(MatchEvent::Ack { id, seq });
                self.offer_turn(false);
            }
            ServerMessage::Error(error) if self.turned_away(&error) => {
                // Nothing was done: the same id goes again once the server takes it.
                let wait = Duration::from_millis(error.retry_after_ms.unwrap_or(RETRY_MS));
                debug!(id = ?error.id, ?wait, code = error.code.as_str(), "a command goes again");
                if let Some(id) = error.id {
                    self.resend.push((Instant::now() + wait, id));
                }
            }
            ServerMessage::Error(error) => {
                let mine = error.id.is_some();
                self.unanswered
                    .retain(|(i, _)| Some(i.as_str()) != error.id.as_deref());
                self.out.push_back(MatchEvent::Refused(error));
                if mine {
                    self.offer_turn(true);
                }
            }
            ServerMessage::Chat(line) if line.match_id == Some(match_id) => {
                self.out.push_back(MatchEvent::Chat(line));
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether `error` turns one of this stream's unanswered commands away for a while: the
    /// codes the server does not remember, to send again under the same id (`unavailable` only
    /// while the match is not over: over, it is final).
    fn turned_away(&self, error: &ErrorBody) -> bool {
        let again = match error.code {
            ErrorCode::RateLimited | ErrorCode::Busy | ErrorCode::Internal => true,
            ErrorCode::Unavailable => !self.finished,
            _ => false,
        };
        again
            && error
                .id
                .as_ref()
                .is_some_and(|id| self.unanswered.iter().any(|(i, _)| i == id))
    }

    /// After a snapshot or diff: the typed view, and the events it opens.
    fn viewed(&mut self) -> Result<(), ClientError> {
        self.view = self.mirror.view_typed()?;
        let finished = self.view.as_ref().is_some_and(|v| v.finished);
        if finished && !self.finished {
            self.finished = true;
            self.out.push_back(MatchEvent::Finished);
        }
        self.offer_turn(false);
        Ok(())
    }

    /// Hands out [`MatchEvent::YourTurn`] when this seat has open decisions and no command in
    /// flight, once per seq (`again`: after a refusal, for the same seq too).
    fn offer_turn(&mut self, again: bool) {
        let seq = self.mirror.seq();
        if self.finished || !self.unanswered.is_empty() || (!again && self.turn_at == seq) {
            return;
        }
        let decisions = self.my_decisions();
        if !decisions.is_empty() {
            self.turn_at = seq;
            self.out.push_back(MatchEvent::YourTurn { decisions });
        }
    }

    /// Closes the connection (1000), waiting for the server's close.
    ///
    /// ```no_run
    /// # async fn f(game: carcassonne_client::MatchStream) -> Result<(), carcassonne_client::ClientError> {
    /// game.close().await?;
    /// # Ok(()) }
    /// ```
    pub async fn close(mut self) -> Result<(), ClientError> {
        match self.conn.take() {
            Some(mut conn) => conn.close().await,
            None => Ok(()),
        }
    }

    /// The reconnection policy.
    pub fn reconnect_policy(&self) -> &Reconnect {
        &self.target.reconnect
    }
}
