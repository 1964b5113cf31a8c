//! A connection that follows one match with a [`Mirror`] and keeps a record of what it got: the
//! seat a bot plays through, or a spectator that checks what reached it.

use crate::{ClientError, CommandOutcome, Connection, Mirror, MirrorError};
use protocol::{Seq, ServerMessage};
use rules::{Command, View};
use uuid::Uuid;

/// Everything a [`Follower`] (and the bots in [`crate::bot`]) can fail with.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A snapshot or diff did not apply: a gap, a repeat, or a patch that does not fit.
    #[error("diff does not apply in order: {0}")]
    Mirror(#[from] MirrorError),
    /// The view was asked for before the first snapshot arrived.
    #[error("no snapshot yet")]
    NoSnapshot,
    /// The connection ended while the follower waited for the match to move on.
    #[error("the connection closed")]
    Closed,
    /// The server refused a command the bot took for legal.
    /// Boxed: the command and the server's error are large and rare, and would bloat every
    /// `Result`.
    #[error("a legal move was refused: {:?} ({:?})", .0.1, .0.0)]
    Refused(Box<(Command, protocol::ErrorBody)>),
    /// A running match with no open decision the bot could answer.
    #[error("a running match has no open decision to answer")]
    NoDecision,
}

/// A connection that follows one match with a mirror, and records every message it applied.
///
/// Invariant: `mirror` holds every snapshot and diff the connection delivered, in order (a gap
/// or repeat is a [`FollowError::Mirror`]); `diff_seqs` and `events` list what those diffs
/// carried.
#[derive(Debug)]
pub struct Follower {
    pub conn: Connection,
    pub mirror: Mirror,
    /// The seat this connection holds, if any.
    pub seat: Option<u8>,
    /// The seqs of all diffs applied, in order (to check for gaps and repeats).
    pub diff_seqs: Vec<Seq>,
    /// How many snapshots were applied.
    pub snapshots: usize,
    /// The events of every diff applied, in order.
    pub events: Vec<rules::Event>,
    next_id: u64,
    /// Acknowledged commands: (id, seq).
    pub acks: Vec<(String, Seq)>,
}

impl Follower {
    /// Takes the seat of `token` on `conn` if any, and subscribes to `match_id` from `since`
    /// (`None`: a snapshot first).
    pub async fn join(
        mut conn: Connection,
        match_id: Uuid,
        token: Option<&str>,
        since: Option<Seq>,
    ) -> Result<Follower, FollowError> {
        let seat = match token {
            Some(t) => Some(conn.auth(t).await?.seat),
            None => None,
        };
        conn.subscribe(match_id, since).await?;
        Ok(Follower::from_conn(conn, match_id, seat))
    }

    /// A follower over a connection opened elsewhere (for example with an account session),
    /// holding `seat` if any; the caller has subscribed it (or does so through `conn`).
    pub fn from_conn(conn: Connection, match_id: Uuid, seat: Option<u8>) -> Follower {
        Follower {
            conn,
            mirror: Mirror::new(match_id),
            seat,
            diff_seqs: Vec::new(),
            snapshots: 0,
            events: Vec::new(),
            next_id: 0,
            acks: Vec::new(),
        }
    }

    /// Replaces the connection by `conn` (the old one is dropped without a closing handshake),
    /// taking the seat of `token` on it if any. Not subscribed until [`Follower::resubscribe`].
    pub async fn replace_conn(
        &mut self,
        mut conn: Connection,
        token: Option<&str>,
    ) -> Result<(), FollowError> {
        if let Some(t) = token {
            conn.auth(t).await?;
        }
        self.conn = conn;
        Ok(())
    }

    /// Subscribes from the last seq applied.
    pub async fn resubscribe(&mut self) -> Result<(), FollowError> {
        self.conn
            .subscribe(self.mirror.match_id(), self.seq())
            .await?;
        Ok(())
    }

    /// Reads until the server closes the connection, applying snapshots and diffs on the way;
    /// returns the close code. A read that fails ends the wait like a close.
    pub async fn read_to_close(&mut self) -> Result<Option<u16>, FollowError> {
        while let Ok(Some(msg)) = self.conn.next_message().await {
            if matches!(
                msg,
                ServerMessage::Snapshot { .. } | ServerMessage::Diff { .. }
            ) {
                self.absorb(&msg)?;
            }
        }
        Ok(self.conn.close_frame().map(|c| c.code))
    }

    /// The seq of the view held, once a snapshot has arrived.
    pub fn seq(&self) -> Option<Seq> {
        self.mirror.seq()
    }

    /// The mirrored view, as the rules crate's type.
    pub fn view(&self) -> Result<View, FollowError> {
        self.mirror.view_typed()?.ok_or(FollowError::NoSnapshot)
    }

    /// Applies one message to the mirror; diffs must follow without gap or repeat. A message
    /// that does not apply is not recorded either.
    pub fn absorb(&mut self, msg: &ServerMessage) -> Result<(), FollowError> {
        self.mirror.apply(msg)?;
        match msg {
            ServerMessage::Snapshot { .. } => self.snapshots += 1,
            ServerMessage::Diff { seq, events, .. } => {
                self.diff_seqs.push(*seq);
                self.events.extend(events.iter().cloned());
            }
            _ => {}
        }
        Ok(())
    }

    /// Reads until the mirror reaches `seq`.
    pub async fn sync_to(&mut self, seq: Seq) -> Result<(), FollowError> {
        while self.seq().is_none_or(|s| s < seq) {
            self.read_one().await?;
        }
        Ok(())
    }

    /// Reads until the first snapshot or diff arrives.
    pub async fn sync_first(&mut self) -> Result<(), FollowError> {
        while self.seq().is_none() {
            self.read_one().await?;
        }
        Ok(())
    }

    /// Reads one message and absorbs it; the connection must stay open.
    async fn read_one(&mut self) -> Result<(), FollowError> {
        let msg = self.conn.next_message().await?.ok_or(FollowError::Closed)?;
        self.absorb(&msg)
    }

    /// The frames received since the last call, as sent (empty unless the connection records).
    pub fn frames(&mut self) -> Vec<String> {
        self.conn.take_frames()
    }

    /// A command id not used before on this follower (`s<seat>-c<n>`, seat 255 for none).
    pub fn new_id(&mut self) -> String {
        self.next_id += 1;
        format!("s{}-c{}", self.seat.unwrap_or(255), self.next_id)
    }

    /// Sends a command and waits for its answer; records acks.
    pub async fn command(
        &mut self,
        id: &str,
        command: Command,
    ) -> Result<CommandOutcome, FollowError> {
        let out = self.conn.command(id, command).await?;
        if let CommandOutcome::Accepted { seq, .. } = out
            && !self.acks.iter().any(|(i, _)| i == id)
        {
            self.acks.push((id.to_string(), seq));
        }
        Ok(out)
    }
}
