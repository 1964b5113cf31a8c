//! The client crate's [`client::Follower`] and bots, bound to a [`TestServer`]: every call waits
//! at most [`READ_TIMEOUT`] per frame and fails the test on any error.

use super::{READ_TIMEOUT, TestServer};
use client::{CommandOutcome, Connection};
use protocol::{MatchCreated, Seq, ServerMessage};
use rules::{Command, View};
use std::borrow::{Borrow, BorrowMut};
use std::ops::{Deref, DerefMut};

pub use client::bot::{Answered, Rng, compact_move, pick_move};

/// A [`client::Follower`] whose calls panic on error, which fails the test with the error.
pub struct Follower(client::Follower);

impl Deref for Follower {
    type Target = client::Follower;
    fn deref(&self) -> &client::Follower {
        &self.0
    }
}

impl DerefMut for Follower {
    fn deref_mut(&mut self) -> &mut client::Follower {
        &mut self.0
    }
}

impl Borrow<client::Follower> for Follower {
    fn borrow(&self) -> &client::Follower {
        &self.0
    }
}

impl BorrowMut<client::Follower> for Follower {
    fn borrow_mut(&mut self) -> &mut client::Follower {
        &mut self.0
    }
}

impl From<client::Follower> for Follower {
    fn from(f: client::Follower) -> Follower {
        Follower(f)
    }
}

/// A connection to `server` with the tests' read timeout.
async fn connect(server: &TestServer, record: bool) -> Connection {
    let mut conn = if record {
        Connection::connect_recording(&server.ws()).await
    } else {
        Connection::connect(&server.ws()).await
    }
    .expect("connect");
    conn.set_read_timeout(Some(READ_TIMEOUT));
    conn
}

impl Follower {
    /// Connects, takes the seat of `token` if any, and subscribes from `since`.
    pub async fn join(
        server: &TestServer,
        match_id: uuid::Uuid,
        token: Option<&str>,
        since: Option<Seq>,
    ) -> Follower {
        let conn = connect(server, false).await;
        Follower(
            client::Follower::join(conn, match_id, token, since)
                .await
                .expect("join"),
        )
    }

    /// Like [`Follower::join`], keeping every frame the connection receives as sent (see
    /// [`client::Follower::frames`]).
    pub async fn join_recording(
        server: &TestServer,
        match_id: uuid::Uuid,
        token: Option<&str>,
    ) -> Follower {
        let conn = connect(server, true).await;
        Follower(
            client::Follower::join(conn, match_id, token, None)
                .await
                .expect("join"),
        )
    }

    /// A follower over a connection opened elsewhere (for example with an account session),
    /// holding `seat` if any; the caller has subscribed it (or does so through `conn`).
    pub fn from_conn(conn: Connection, match_id: uuid::Uuid, seat: Option<u8>) -> Follower {
        Follower(client::Follower::from_conn(conn, match_id, seat))
    }

    /// Drops the connection without a closing handshake and connects again, taking the seat of
    /// `token` again if any. Not subscribed until [`Follower::resubscribe`].
    pub async fn drop_and_connect(&mut self, server: &TestServer, token: Option<&str>) {
        let conn = connect(server, false).await;
        self.0.replace_conn(conn, token).await.expect("auth");
    }

    /// Subscribes from the last seq applied.
    pub async fn resubscribe(&mut self) {
        self.0.resubscribe().await.expect("subscribe");
    }

    /// `drop_and_connect` then `resubscribe`.
    pub async fn reconnect(&mut self, server: &TestServer, token: Option<&str>) {
        self.drop_and_connect(server, token).await;
        self.resubscribe().await;
    }

    /// Reads until the server closes the connection; returns its close code.
    pub async fn read_to_close(&mut self) -> Option<u16> {
        self.0.read_to_close().await.expect("diff applies in order")
    }

    pub fn view(&self) -> View {
        self.0.view().expect("mirror has a snapshot")
    }

    /// Applies one message to the mirror; diffs must follow without gap or repeat.
    pub fn absorb(&mut self, msg: &ServerMessage) {
        self.0.absorb(msg).expect("diff applies in order");
    }

    /// Reads until the mirror reaches `seq`.
    pub async fn sync_to(&mut self, seq: Seq) {
        self.0.sync_to(seq).await.expect("sync");
    }

    /// Reads until the first snapshot or diff arrives.
    pub async fn sync_first(&mut self) {
        self.0.sync_first().await.expect("first view");
    }

    /// Sends a command and waits for its answer; records acks.
    pub async fn command(&mut self, id: &str, command: Command) -> CommandOutcome {
        self.0.command(id, command).await.expect("command answer")
    }
}

/// One follower per seat of a created match, each holding its seat, in seat order.
pub async fn join_seats(server: &TestServer, created: &MatchCreated) -> Vec<Follower> {
    let mut seats = Vec::new();
    for s in &created.seats {
        seats.push(Follower::join(server, created.match_id, Some(&s.token), None).await);
    }
    seats
}

/// [`client::bot::play`]: random moves until the match is finished or `max_moves` were made.
pub async fn play(
    seats: &mut [Follower],
    watchers: &mut [Follower],
    rng: &mut Rng,
    max_moves: usize,
) -> usize {
    client::bot::play(seats, watchers, rng, max_moves)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// [`client::bot::answer_one`]: one open decision of some seat answered; `None` once finished.
pub async fn answer_one(
    seats: &mut [Follower],
    watchers: &mut [Follower],
    rng: &mut Rng,
) -> Option<Answered> {
    client::bot::answer_one(seats, watchers, rng)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The server's own view now: a fresh snapshot on a new spectator connection.
pub async fn server_view(server: &TestServer, match_id: uuid::Uuid) -> (Seq, serde_json::Value) {
    let mut f = Follower::join(server, match_id, None, None).await;
    f.sync_first().await;
    let seq = f.seq().expect("seq");
    let view = f.mirror.view().cloned().expect("view");
    let _ = f.conn.close().await;
    (seq, view)
}

/// Waits for the next error on `conn` and checks that it says `unknown_match`.
pub async fn expect_unknown_match(conn: &mut Connection) {
    let msg = conn
        .wait_for(|m| matches!(m, ServerMessage::Error(_)))
        .await
        .expect("error");
    assert!(
        matches!(msg, ServerMessage::Error(ref b) if b.code == protocol::ErrorCode::UnknownMatch),
        "{msg:?}"
    );
}
