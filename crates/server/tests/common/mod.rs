//! Test harness: real servers on 127.0.0.1 ephemeral ports, each in its own thread and tokio
//! runtime (so that a test can kill one abruptly by dropping its runtime), on a real store: a
//! SQLite file in a temp dir, or a fresh Postgres database created for the test and dropped after.

#![allow(dead_code)]

/// Runs each async scenario `fn name(db: &TestDb)` on both stores, as the tests
/// `sqlite::name` and `postgres::name` (the Postgres one skips with a notice outside CI when no
/// Postgres is reachable). Needs `#[macro_use] mod common;` and `use common::*;`.
#[allow(unused_macros)]
macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let db = super::TestDb::sqlite();
                    super::$name(&db).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(db) = super::TestDb::postgres().await else { return };
                    super::$name(&db).await;
                }
            )*
        }
    };
}

use client::{CommandOutcome, Connection, Mirror};
use protocol::{CreateMatch, MatchCreated, Seq, ServerMessage};
use rules::{Colour, Command, Decision, Placement, PlayerId, View};
use server::Config;
use sqlx::Connection as _;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::oneshot;

pub const ADMIN_TOKEN: &str = "admin-secret-for-tests";
/// Any single wait in a test; a hang fails the test instead of blocking the suite.
pub const READ_TIMEOUT: Duration = Duration::from_secs(20);
/// Longest a graceful stop of a test server may take (see [`TestServer::stop`]).
const STOP_BOUND: Duration = Duration::from_secs(30);

/// A store for one test. Dropping it removes it.
pub enum TestDb {
    Sqlite(tempfile::TempDir),
    Postgres {
        admin_url: String,
        name: String,
        url: String,
    },
}

impl TestDb {
    pub fn sqlite() -> TestDb {
        TestDb::Sqlite(tempfile::tempdir().expect("temp dir"))
    }

    /// A fresh database on the test Postgres (`TEST_DATABASE_URL`, default the local `test`
    /// database). With `CI=true` an unreachable Postgres fails the test; elsewhere it is skipped
    /// with a notice.
    pub async fn postgres() -> Option<TestDb> {
        let admin_url = std::env::var("TEST_DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
        let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        let mut conn = match sqlx::PgConnection::connect(&admin_url).await {
            Ok(c) => c,
            Err(e) => {
                if ci {
                    panic!("CI=true but Postgres at {admin_url} is unreachable: {e}");
                }
                eprintln!(
                    "NOTICE: Postgres at {admin_url} unreachable ({e}); skipping this Postgres suite"
                );
                return None;
            }
        };
        let name = format!("server_test_{}", uuid::Uuid::new_v4().simple());
        sqlx::query(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut conn)
            .await
            .expect("create database");
        let _ = conn.close().await;
        let base = admin_url.split('?').next().unwrap_or(&admin_url);
        let prefix = base.rsplit_once('/').map(|(p, _)| p).unwrap_or(base);
        let url = format!("{prefix}/{name}");
        Some(TestDb::Postgres {
            admin_url,
            name,
            url,
        })
    }

    /// Runs one SQL statement on the store directly (to tamper with it in tests).
    pub async fn execute(&self, sql: &str) -> u64 {
        match self {
            TestDb::Sqlite(dir) => {
                let path = dir.path().join("data").join("server.db");
                let mut conn =
                    sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
                        .await
                        .expect("sqlite");
                let n = sqlx::query(sql)
                    .execute(&mut conn)
                    .await
                    .expect("sql")
                    .rows_affected();
                let _ = conn.close().await;
                n
            }
            TestDb::Postgres { url, .. } => {
                let mut conn = sqlx::PgConnection::connect(url).await.expect("postgres");
                let n = sqlx::query(sql)
                    .execute(&mut conn)
                    .await
                    .expect("sql")
                    .rows_affected();
                let _ = conn.close().await;
                n
            }
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            TestDb::Sqlite(_) => "sqlite",
            TestDb::Postgres { .. } => "postgres",
        }
    }

    /// A server configuration on this store, with test setups and the admin API on.
    pub fn config(&self) -> Config {
        let mut c = Config::default();
        c.matches.allow_test_setups = true;
        c.admin.admin_token = Some(ADMIN_TOKEN.into());
        c.limits.relax(); // the limits' own tests narrow them
        c.conn.heartbeat_interval = Duration::from_secs(1);
        c.conn.heartbeat_timeout = Duration::from_secs(15);
        c.shutdown_grace = Duration::from_secs(5);
        match self {
            TestDb::Sqlite(dir) => c.store.data_dir = dir.path().join("data"),
            TestDb::Postgres { url, .. } => c.store.database_url = Some(url.as_str().into()),
        }
        c
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let TestDb::Postgres {
            admin_url, name, ..
        } = self
        {
            let admin_url = admin_url.clone();
            let name = name.clone();
            // Our own thread and runtime: Drop may run inside or outside a tokio runtime.
            let _ = std::thread::spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                rt.block_on(async {
                    if let Ok(mut conn) = sqlx::PgConnection::connect(&admin_url).await {
                        let _ = sqlx::query(&format!(
                            "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
                        ))
                        .execute(&mut conn)
                        .await;
                        let _ = conn.close().await;
                    }
                });
            })
            .join();
        }
    }
}

/// A running server in its own thread and runtime.
/// With `TEST_LOG` set (`1`, or a filter such as `server=debug`), the servers' logs go to the
/// test's captured output: shown when a test fails (or with `--nocapture`).
pub fn test_log() {
    let Some(filter) = std::env::var("TEST_LOG").ok().filter(|v| !v.is_empty()) else {
        return;
    };
    let filter = if filter == "1" {
        "info".to_string()
    } else {
        filter
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_test_writer()
        .try_init();
}

pub struct TestServer {
    pub addr: SocketAddr,
    graceful: Option<oneshot::Sender<()>>,
    kill: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    pub fn start(config: Config) -> TestServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let (graceful, graceful_rx) = oneshot::channel::<()>();
        let (kill, kill_rx) = oneshot::channel::<()>();
        test_log();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let shutdown = async move {
                    let _ = graceful_rx.await;
                };
                tokio::select! {
                    res = server::run(listener, config, shutdown) => {
                        if let Err(e) = res {
                            panic!("server failed: {e}");
                        }
                    }
                    _ = kill_rx => {} // abrupt: drop everything, no graceful path
                }
            });
            rt.shutdown_timeout(Duration::ZERO);
        });
        TestServer {
            addr,
            graceful: Some(graceful),
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    /// A handle on a server started elsewhere (it does not own or stop it).
    pub fn attach(addr: SocketAddr) -> TestServer {
        TestServer {
            addr,
            graceful: None,
            kill: None,
            thread: None,
        }
    }

    pub fn http(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn ws(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// SIGTERM-like: the graceful path.
    /// A graceful stop, bounded: the server's three grace periods (5 s each in tests) and the
    /// store's close, with room to spare. A stop that hangs (a store whose close waits for a
    /// connection nobody gives back, say) fails the test instead of stalling the suite; the
    /// drop then kills the server.
    pub async fn stop(mut self) {
        if let Some(tx) = self.graceful.take() {
            let _ = tx.send(());
        }
        tokio::time::timeout(STOP_BOUND, self.join())
            .await
            .expect("the server stopped gracefully in time");
    }

    /// Like a crash: the runtime is dropped with every task in it, mid-flight.
    pub async fn kill(mut self) {
        if let Some(tx) = self.kill.take() {
            let _ = tx.send(());
        }
        self.join().await;
    }

    async fn join(&mut self) {
        if let Some(t) = self.thread.take() {
            tokio::task::spawn_blocking(move || t.join())
                .await
                .expect("join task")
                .expect("server thread panicked");
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.kill.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub async fn create(server: &TestServer, players: usize) -> MatchCreated {
    let colours = [Colour::Red, Colour::Blue, Colour::Green, Colour::Yellow];
    let req = CreateMatch {
        players: colours[..players].to_vec(),
        modules: Default::default(),
        meeples: None,
        draw_order: None,
        clock: None,
    };
    client::create_match(&server.http(), &req)
        .await
        .expect("create match")
}

/// The seat tokens of a created match, in seat order.
pub fn seat_tokens(created: &MatchCreated) -> Vec<String> {
    created.seats.iter().map(|s| s.token.clone()).collect()
}

/// One follower per seat of a created match, each holding its seat, in seat order.
pub async fn join_seats(server: &TestServer, created: &MatchCreated) -> Vec<Follower> {
    let mut seats = Vec::new();
    for s in &created.seats {
        seats.push(Follower::join(server, created.match_id, Some(&s.token), None).await);
    }
    seats
}

/// A deterministic random source for the test bots.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        rules::bot::splitmix64(&mut self.0)
    }
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// A random legal move from the decisions of a mirrored view (`rules::bot` on what a client
/// sees).
pub fn pick_move(view: &View, rng: &mut Rng) -> Option<(PlayerId, Command)> {
    rules::bot::random_move_from(&view.decisions, || rng.next_u64())
}

/// A move from the view; tiles go where they touch the most tiles (random boards sprawl and
/// complete little, so they would rarely reach a dark space and a dispatch).
pub fn compact_move(view: &View, rng: &mut Rng) -> Option<(PlayerId, Command)> {
    let Some(Decision::PlaceTile {
        player, placements, ..
    }) = view.decisions.first()
    else {
        return pick_move(view, rng);
    };
    Some((*player, compact_placement(view, placements, rng)?))
}

/// One of `placements` touching the most placed tiles.
fn compact_placement(view: &View, placements: &[Placement], rng: &mut Rng) -> Option<Command> {
    let touching = |p: rules::Pos| {
        rules::Side::ALL
            .iter()
            .filter(|&&s| view.board.contains_key(&p.step(s).key()))
            .count()
    };
    let best = placements.iter().map(|pl| touching(pl.pos)).max()?;
    let top: Vec<_> = placements
        .iter()
        .filter(|pl| touching(pl.pos) == best)
        .flat_map(|pl| pl.rotations.iter().map(move |&r| (pl.pos, r)))
        .collect();
    let (pos, rotation) = top[rng.below(top.len())];
    Some(Command::PlaceTile { pos, rotation })
}

/// What [`answer_one`] did.
#[derive(Debug, Clone)]
pub struct Answered {
    pub seat: PlayerId,
    /// The decision answered, as the seat saw it.
    pub decision: Decision,
    pub command: Command,
    /// The seat was not the active player.
    pub out_of_turn: bool,
    pub seq: Seq,
}

/// One step of a match played by clients that each answer their own decisions from their own
/// mirror, as a real client would: among the seats with an open decision of their own (several
/// may be open at once, M3), one chosen at random answers its oldest. Tiles go where they touch
/// the most tiles or anywhere (half and half), a wine sale is always made (one of the offered
/// sales), everything else is a uniform legal answer. Then every follower syncs to the new seq.
/// `None` once the match is finished.
pub async fn answer_one(
    seats: &mut [Follower],
    watchers: &mut [Follower],
    rng: &mut Rng,
) -> Option<Answered> {
    if seats[0].view().finished {
        return None;
    }
    let own: Vec<(usize, PlayerId, View, Decision)> = seats
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let view = f.view();
            let seat: PlayerId = f.seat?;
            let d = view.decisions.iter().find(|d| d.player() == seat)?.clone();
            Some((i, seat, view, d))
        })
        .collect();
    assert!(
        !own.is_empty(),
        "a running match has a decision for some seat"
    );
    let (i, seat, view, decision) = own[rng.below(own.len())].clone();
    let command = match &decision {
        Decision::PlaceTile { placements, .. } if rng.below(2) == 0 => {
            compact_placement(&view, placements, rng)
        }
        Decision::SellWine { sales, .. } if !sales.is_empty() => {
            let s = &sales[rng.below(sales.len())];
            Some(Command::SellWine {
                sale: s.sale,
                chips: s.chips.clone(),
            })
        }
        d => rules::bot::random_command(d, || rng.next_u64()),
    }
    .expect("every open decision has an answer");
    let f = &mut seats[i];
    let id = f.new_id();
    let seq = match f.command(&id, command.clone()).await {
        CommandOutcome::Accepted { seq, .. } => seq,
        CommandOutcome::Rejected(e) => panic!("a legal answer was refused: {e:?} ({command:?})"),
    };
    for f in seats.iter_mut().chain(watchers.iter_mut()) {
        f.sync_to(seq).await;
    }
    Some(Answered {
        seat,
        out_of_turn: seat != view.active,
        decision,
        command,
        seq,
    })
}

/// Fails if `v` holds anything that could reveal The Messages' dispatch stack (invariant 4, M1):
/// a `dispatch_order`, a `stack` that is not a bare count, a list of the dispatches 1–8 in some
/// order, or the match's `seed`.
pub fn assert_no_stack(v: &serde_json::Value, at: &str) {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                assert_ne!(k, "dispatch_order", "{at}: the stack order was sent");
                assert_ne!(k, "seed", "{at}: the seed was sent");
                if k == "stack" {
                    assert!(x.is_u64(), "{at}: `stack` must be a count, is {x}");
                }
                assert_no_stack(x, at);
            }
        }
        Value::Array(a) => {
            let mut nums: Vec<u64> = a.iter().filter_map(Value::as_u64).collect();
            nums.sort_unstable();
            assert!(
                !(a.len() == 8 && nums == (1..=8).collect::<Vec<_>>()),
                "{at}: a list of the eight dispatches was sent: {v}"
            );
            for x in a {
                assert_no_stack(x, at);
            }
        }
        _ => {}
    }
}

/// A connection that follows one match with a mirror, and records every message it got.
pub struct Follower {
    pub conn: Connection,
    pub mirror: Mirror,
    pub seat: Option<u8>,
    /// The seqs of all diffs applied, in order (to check for gaps and repeats).
    pub diff_seqs: Vec<Seq>,
    pub snapshots: usize,
    /// The events of every diff applied, in order.
    pub events: Vec<rules::Event>,
    next_id: u64,
    /// Acknowledged commands: (id, seq).
    pub acks: Vec<(String, Seq)>,
}

impl Follower {
    /// Connects, takes the seat of `token` if any, and subscribes from `since`.
    pub async fn join(
        server: &TestServer,
        match_id: uuid::Uuid,
        token: Option<&str>,
        since: Option<Seq>,
    ) -> Follower {
        Follower::join_with(server, match_id, token, since, false).await
    }

    /// Like [`Follower::join`], keeping every frame the connection receives as sent (see
    /// [`Follower::frames`]).
    pub async fn join_recording(
        server: &TestServer,
        match_id: uuid::Uuid,
        token: Option<&str>,
    ) -> Follower {
        Follower::join_with(server, match_id, token, None, true).await
    }

    async fn join_with(
        server: &TestServer,
        match_id: uuid::Uuid,
        token: Option<&str>,
        since: Option<Seq>,
        record: bool,
    ) -> Follower {
        let mut conn = if record {
            Connection::connect_recording(&server.ws()).await
        } else {
            Connection::connect(&server.ws()).await
        }
        .expect("connect");
        conn.set_read_timeout(Some(READ_TIMEOUT));
        let seat = match token {
            Some(t) => Some(conn.auth(t).await.expect("auth").seat),
            None => None,
        };
        conn.subscribe(match_id, since).await.expect("subscribe");
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

    /// Drops the connection without a closing handshake and connects again, taking the seat of
    /// `token` again if any. Not subscribed until [`Follower::resubscribe`].
    pub async fn drop_and_connect(&mut self, server: &TestServer, token: Option<&str>) {
        let mut conn = Connection::connect(&server.ws()).await.expect("connect");
        conn.set_read_timeout(Some(READ_TIMEOUT));
        if let Some(t) = token {
            conn.auth(t).await.expect("auth");
        }
        self.conn = conn;
    }

    /// Subscribes from the last seq applied.
    pub async fn resubscribe(&mut self) {
        self.conn
            .subscribe(self.mirror.match_id(), self.seq())
            .await
            .expect("subscribe");
    }

    /// `drop_and_connect` then `resubscribe`.
    pub async fn reconnect(&mut self, server: &TestServer, token: Option<&str>) {
        self.drop_and_connect(server, token).await;
        self.resubscribe().await;
    }

    /// Reads until the server closes the connection; returns its close code.
    pub async fn read_to_close(&mut self) -> Option<u16> {
        while let Ok(Some(msg)) = self.conn.next_message().await {
            if matches!(
                msg,
                ServerMessage::Snapshot { .. } | ServerMessage::Diff { .. }
            ) {
                self.absorb(&msg);
            }
        }
        self.conn.close_frame().map(|c| c.code)
    }

    pub fn seq(&self) -> Option<Seq> {
        self.mirror.seq()
    }

    pub fn view(&self) -> View {
        self.mirror
            .view_typed()
            .expect("mirror decodes")
            .expect("mirror has a snapshot")
    }

    /// Applies one message to the mirror; diffs must follow without gap or repeat.
    pub fn absorb(&mut self, msg: &ServerMessage) {
        match msg {
            ServerMessage::Snapshot { .. } => self.snapshots += 1,
            ServerMessage::Diff { seq, events, .. } => {
                self.diff_seqs.push(*seq);
                self.events.extend(events.iter().cloned());
            }
            _ => {}
        }
        self.mirror.apply(msg).expect("diff applies in order");
    }

    /// Reads until the mirror reaches `seq`.
    pub async fn sync_to(&mut self, seq: Seq) {
        while self.seq().is_none_or(|s| s < seq) {
            self.read_one().await;
        }
    }

    /// Reads until the first snapshot or diff arrives.
    pub async fn sync_first(&mut self) {
        while self.seq().is_none() {
            self.read_one().await;
        }
    }

    /// Reads one message and absorbs it; the connection must stay open.
    async fn read_one(&mut self) {
        let msg = self
            .conn
            .next_message()
            .await
            .expect("read")
            .expect("connection open");
        self.absorb(&msg);
    }

    /// The frames received since the last call, as sent (empty unless joined recording).
    pub fn frames(&mut self) -> Vec<String> {
        self.conn.take_frames()
    }

    pub fn new_id(&mut self) -> String {
        self.next_id += 1;
        format!("s{}-c{}", self.seat.unwrap_or(255), self.next_id)
    }

    /// Sends a command and waits for its answer; records acks.
    pub async fn command(&mut self, id: &str, command: Command) -> CommandOutcome {
        let out = self
            .conn
            .command(id, command)
            .await
            .expect("command answer");
        if let CommandOutcome::Accepted { seq, .. } = out
            && !self.acks.iter().any(|(i, _)| i == id)
        {
            self.acks.push((id.to_string(), seq));
        }
        out
    }
}

/// Plays random moves until the match is finished or `max_moves` were made. `seats` holds one
/// follower per seat (index = seat); every follower in `seats` and `watchers` is synced after
/// each move. `check` runs after each move with the new seq.
pub async fn play(
    seats: &mut [Follower],
    watchers: &mut [Follower],
    rng: &mut Rng,
    max_moves: usize,
) -> usize {
    let mut moves = 0;
    for f in seats.iter_mut().chain(watchers.iter_mut()) {
        f.sync_first().await;
    }
    while moves < max_moves {
        let view = seats[0].view();
        if view.finished {
            break;
        }
        let (player, cmd) = pick_move(&view, rng).expect("an open decision in a running game");
        let p = &mut seats[usize::from(player)];
        let id = p.new_id();
        let seq = match p.command(&id, cmd).await {
            CommandOutcome::Accepted { seq, .. } => seq,
            CommandOutcome::Rejected(e) => panic!("a legal move was refused: {e:?}"),
        };
        for f in seats.iter_mut().chain(watchers.iter_mut()) {
            f.sync_to(seq).await;
        }
        moves += 1;
    }
    moves
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

/// A request with the test servers' admin token: the status and the body.
pub async fn admin_http(
    server: &TestServer,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, String) {
    let auth = format!("Bearer {ADMIN_TOKEN}");
    http(server, method, path, &[("Authorization", &auth)], body).await
}

/// An admin `GET` that must answer 200, read as JSON.
pub async fn admin_json(server: &TestServer, path: &str) -> serde_json::Value {
    let (status, body) = admin_http(server, "GET", path, "").await;
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
}

/// A minimal HTTP/1.1 request on a fresh socket (for headers the client crate does not send).
pub async fn http(
    server: &TestServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
        server.addr,
        body.len()
    );
    if !body.is_empty() {
        req.push_str("Content-Type: application/json\r\n");
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(READ_TIMEOUT, s.read_to_end(&mut raw))
        .await
        .expect("response in time")
        .expect("read");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    (status, body)
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

impl Follower {
    /// A follower over a connection opened elsewhere (for example with an account session),
    /// holding `seat` if any; the caller has subscribed it (or does so through `conn`).
    pub fn from_conn(conn: Connection, match_id: uuid::Uuid, seat: Option<u8>) -> Follower {
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
}
