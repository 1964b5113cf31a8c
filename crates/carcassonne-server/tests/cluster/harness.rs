//! The cluster suite's harness: three server processes on one database and one NATS server
//! ([`Cluster`]), a NATS server of the test's own ([`OwnNats`]), the clients of a match and the
//! game they play through failures ([`Player`], [`play_through`]), and what is checked after
//! ([`check_nothing_lost`]).

use crate::common::{READ_TIMEOUT, ServerProcess, TestDb};
use client::bot::{Rng, answer_one};
use client::{Connection, Follower};
use protocol::{CreateMatch, MatchCreated};
use rules::{Colour, MapSetup, Modules};
use sqlx::Connection as _;
use std::process::Command;
use std::time::Duration;
use tokio::time::Instant;
use uuid::Uuid;

/// How long a lease lasts in these tests, and how often it is renewed.
pub(crate) const TTL: &str = "2s";
pub(crate) const RENEW: &str = "500ms";

/// Three nodes on one database, on one subject prefix of their own.
pub(crate) struct Cluster {
    /// The test database, dropped with the cluster; `None` on a private Postgres.
    pub(crate) _db: Option<TestDb>,
    pub(crate) url: String,
    pub(crate) nats: String,
    pub(crate) prefix: String,
    pub(crate) nodes: Vec<Option<ServerProcess>>,
    pub(crate) addrs: Vec<std::net::SocketAddr>,
    /// A node stopped by `SIGSTOP`: clients do not move to it.
    pub(crate) paused: Option<usize>,
    /// What the clients met on the way (closes, refusals), in order.
    pub(crate) errors: Vec<String>,
}

pub(crate) fn nats_url() -> Option<String> {
    let url = std::env::var("TEST_NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into());
    let hostport = url
        .trim_start_matches("nats://")
        .rsplit('@')
        .next()?
        .to_owned();
    match std::net::TcpStream::connect(&hostport) {
        Ok(_) => Some(url),
        Err(e) => {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
            assert!(!ci, "CI=true but NATS at {hostport} is unreachable: {e}");
            eprintln!("NOTICE: NATS at {hostport} unreachable ({e}); skipping the cluster suite");
            None
        }
    }
}

/// A NATS server of the test's own on a free port (`nats-server` on the PATH), stopped and
/// started again at will; `None` (with a notice, or failing with `CI=true`) without one.
pub(crate) struct OwnNats {
    pub(crate) port: u16,
    pub(crate) child: Option<std::process::Child>,
}

impl OwnNats {
    pub(crate) fn start() -> Option<OwnNats> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let mut nats = OwnNats { port, child: None };
        if let Err(e) = nats.up() {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
            assert!(!ci, "CI=true but nats-server cannot be started: {e}");
            eprintln!("NOTICE: nats-server cannot be started ({e}); skipping");
            return None;
        }
        Some(nats)
    }

    pub(crate) fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    pub(crate) fn up(&mut self) -> std::io::Result<()> {
        let child = Command::new("nats-server")
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        self.child = Some(child);
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if started.elapsed() > Duration::from_secs(10) {
                return Err(std::io::Error::other("nats-server did not listen"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    pub(crate) fn down(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for OwnNats {
    fn drop(&mut self) {
        self.down();
    }
}

impl Cluster {
    pub(crate) async fn start(n: usize) -> Option<Cluster> {
        let nats = nats_url()?;
        Cluster::start_on(n, nats).await
    }

    pub(crate) async fn start_on(n: usize, nats: String) -> Option<Cluster> {
        let db = TestDb::postgres().await?;
        let TestDb::Postgres { url, .. } = &db else {
            unreachable!("a Postgres test database")
        };
        let url = url.clone();
        Some(Cluster::start_with(n, nats, url, Some(db)).await)
    }

    pub(crate) async fn start_with(
        n: usize,
        nats: String,
        url: String,
        db: Option<TestDb>,
    ) -> Cluster {
        // The schema is made once, before the nodes race for it.
        server::Store::open(Some(&url), std::path::Path::new("."))
            .await
            .expect("migrate the test database")
            .close()
            .await;
        let mut c = Cluster {
            _db: db,
            url,
            nats,
            prefix: format!("t{}", Uuid::new_v4().simple()),
            nodes: Vec::new(),
            addrs: Vec::new(),
            paused: None,
            errors: Vec::new(),
        };
        for i in 0..n {
            let p = c.spawn(i);
            c.addrs.push(p.addr);
            c.nodes.push(Some(p));
        }
        c
    }

    pub(crate) fn node_id(&self, i: usize) -> String {
        format!("{}-n{i}", &self.prefix[..9])
    }

    pub(crate) fn spawn(&self, i: usize) -> ServerProcess {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_carcassonne-server"));
        let port = self.addrs.get(i).map_or(0, |a| a.port());
        cmd.args([
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--log-format",
            "json",
        ])
        .args(["--allow-test-setups", "--command-rate-addr", "1000000/1s"])
        .args(["--command-rate-conn", "1000000/1s"])
        .args(["--database-url", &self.url, "--nats-url", &self.nats])
        .args(["--nats-prefix", &self.prefix, "--node-id", &self.node_id(i)])
        .args([
            "--lease-ttl",
            TTL,
            "--lease-renew",
            RENEW,
            "--metrics-access",
            "open",
        ])
        .args(["--admin-token", crate::common::ADMIN_TOKEN]);
        ServerProcess::spawn(cmd)
    }

    pub(crate) fn ws(&self, i: usize) -> String {
        format!("ws://{}/ws", self.addrs[i])
    }

    pub(crate) fn http(&self, i: usize) -> String {
        format!("http://{}", self.addrs[i])
    }

    pub(crate) fn alive(&self, i: usize) -> bool {
        self.nodes[i].is_some() && self.paused != Some(i)
    }

    pub(crate) fn kill(&mut self, i: usize) {
        if let Some(mut p) = self.nodes[i].take() {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }

    pub(crate) fn signal(&mut self, i: usize, sig: &str) {
        self.paused = (sig == "-STOP").then_some(i);
        let p = self.nodes[i].as_ref().expect("a running node");
        let ok = Command::new("kill")
            .args([sig, &p.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(ok.success(), "kill {sig}");
    }

    /// The sample of node `i`'s series `name` whose labels include `labels` (0 when absent).
    pub(crate) async fn metric(&self, i: usize, name: &str, labels: &[(&str, &str)]) -> f64 {
        let (status, text) = client::http_get(&format!("{}/metrics", self.http(i)))
            .await
            .expect("metrics");
        assert_eq!(status, 200, "{text}");
        text.lines()
            .filter(|l| l.starts_with(&format!("{name}{{")))
            .filter(|l| {
                labels
                    .iter()
                    .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
            })
            .find_map(|l| l.rsplit(' ').next()?.parse().ok())
            .unwrap_or(0.0)
    }

    /// The node holding the match's lease now, by index.
    pub(crate) async fn owner(&self, match_id: Uuid) -> Option<usize> {
        let mut conn = sqlx::PgConnection::connect(&self.url)
            .await
            .expect("postgres");
        let node: Option<String> = sqlx::query_scalar(
            "SELECT node_id FROM leases WHERE kind = 'match' AND id = $1 AND expires_at > now()",
        )
        .bind(match_id)
        .fetch_optional(&mut conn)
        .await
        .expect("leases");
        let _ = conn.close().await;
        let node = node?;
        (0..self.nodes.len()).find(|&i| self.node_id(i) == node)
    }

    /// The node holding the lobby's lease now, by index, and the lease's epoch.
    pub(crate) async fn lobby_owner(&self, lobby_id: Uuid) -> Option<(usize, i64)> {
        let mut conn = sqlx::PgConnection::connect(&self.url)
            .await
            .expect("postgres");
        let lease: Option<(String, i64)> = sqlx::query_as(
            "SELECT node_id, epoch FROM leases \
             WHERE kind = 'lobby' AND id = $1 AND expires_at > now()",
        )
        .bind(lobby_id)
        .fetch_optional(&mut conn)
        .await
        .expect("leases");
        let _ = conn.close().await;
        let (node, epoch) = lease?;
        let i = (0..self.nodes.len()).find(|&i| self.node_id(i) == node)?;
        Some((i, epoch))
    }

    /// Every stored command of the match: (seq, seat, command id).
    pub(crate) async fn stored(&self, match_id: Uuid) -> Vec<(i64, i16, String)> {
        let mut conn = sqlx::PgConnection::connect(&self.url)
            .await
            .expect("postgres");
        let rows = sqlx::query_as(
            "SELECT seq, seat, command_id FROM commands WHERE match_id = $1 ORDER BY seq",
        )
        .bind(match_id)
        .fetch_all(&mut conn)
        .await
        .expect("commands");
        let _ = conn.close().await;
        rows
    }
}

/// A match with every module the France map allows, created on node 0.
pub(crate) async fn create(cluster: &Cluster, players: usize) -> MatchCreated {
    let req = CreateMatch {
        players: Colour::ALL[..players].to_vec(),
        modules: Modules {
            tollkeepers: true,
            messages: true,
            map: Some(Box::new(MapSetup {
                map: "france".into(),
                starts: None,
                chips: true,
                chip_layout: None,
                data: None,
            })),
            ..Default::default()
        },
        meeples: None,
        draw_order: None,
        clock: None,
    };
    client::create_match(&cluster.http(0), &req)
        .await
        .expect("create match")
}

/// A seat's (or a spectator's) client: its follower, the node it is on, its token.
pub(crate) struct Player {
    pub(crate) follower: Follower,
    pub(crate) node: usize,
    pub(crate) token: Option<String>,
}

/// A connection to a node; `None` when it does not answer in time (a paused node accepts
/// TCP connections but never upgrades them).
pub(crate) async fn connect(cluster: &Cluster, node: usize) -> Option<Connection> {
    let url = cluster.ws(node);
    let connecting = Connection::connect(&url);
    let mut conn = tokio::time::timeout(Duration::from_secs(3), connecting)
        .await
        .ok()?
        .ok()?;
    conn.set_read_timeout(Some(Duration::from_secs(3)));
    Some(conn)
}

impl Player {
    pub(crate) async fn join(
        cluster: &Cluster,
        id: Uuid,
        node: usize,
        token: Option<String>,
    ) -> Player {
        let conn = connect(cluster, node).await.expect("connect");
        let follower = Follower::join(conn, id, token.as_deref(), None)
            .await
            .expect("join");
        Player {
            follower,
            node,
            token,
        }
    }

    /// Connects again to the next live node and resumes after the last seq it applied.
    pub(crate) async fn move_on(&mut self, cluster: &Cluster) -> bool {
        let n = cluster.nodes.len();
        let next = (1..=n)
            .map(|k| (self.node + k) % n)
            .find(|&i| cluster.alive(i));
        let Some(node) = next else { return false };
        self.node = node;
        let Some(conn) = connect(cluster, node).await else {
            return false;
        };
        if self
            .follower
            .replace_conn(conn, self.token.as_deref())
            .await
            .is_err()
        {
            return false;
        }
        self.follower.resubscribe().await.is_ok() && self.follower.sync_first().await.is_ok()
    }
}

/// One client per seat of `created`, seat `i` on node `node_of(i)`, each holding its seat and
/// at the match's first view.
pub(crate) async fn seat_players(
    cluster: &Cluster,
    created: &MatchCreated,
    node_of: impl Fn(usize) -> usize,
) -> Vec<Player> {
    let mut players = Vec::new();
    for (i, s) in created.seats.iter().enumerate() {
        let node = node_of(i);
        players.push(Player::join(cluster, created.match_id, node, Some(s.token.clone())).await);
    }
    for p in &mut players {
        p.follower.sync_first().await.expect("first view");
    }
    players
}

/// Plays random moves until the match ends. After any failure (a node killed, a match moving)
/// every client moves on to another live node and resumes, until it works again. `between`
/// runs after each accepted move, with the number of moves so far. Returns the moves played.
pub(crate) async fn play_through<F>(
    cluster: &mut Cluster,
    id: Uuid,
    players: &mut [Player],
    mut between: F,
) -> usize
where
    F: AsyncFnMut(&mut Cluster, usize),
{
    let mut rng = Rng::new(7);
    let mut moves = 0;
    let mut failing_since: Option<Instant> = None;
    loop {
        let mut followers: Vec<&mut Follower> =
            players.iter_mut().map(|p| &mut p.follower).collect();
        match answer_one(&mut followers, &mut [], &mut rng).await {
            Ok(None) => return moves,
            Ok(Some(_)) => {
                moves += 1;
                failing_since = None;
                between(cluster, moves).await;
            }
            Err(e) => {
                let since = *failing_since.get_or_insert_with(Instant::now);
                assert!(
                    since.elapsed() < READ_TIMEOUT,
                    "no move for {:?}; last error: {e}",
                    since.elapsed()
                );
                eprintln!("moving on after: {e}");
                cluster.errors.push(e.to_string());
                tokio::time::sleep(Duration::from_millis(100)).await;
                for p in players.iter_mut() {
                    let _ = p.move_on(cluster).await;
                }
                // Up to the last stored move (whose ack may have been lost with a node).
                if let Some(last) = cluster.stored(id).await.last().map(|r| r.0 as u64) {
                    for p in players.iter_mut() {
                        let _ = p.follower.sync_to(last).await;
                    }
                }
            }
        }
        assert!(moves < 2_000, "the match does not end");
    }
}

/// Every move any client saw acknowledged is stored at its seq, once; the stored log has no
/// command twice; and a fresh snapshot equals every client's mirror.
pub(crate) async fn check_nothing_lost(cluster: &Cluster, id: Uuid, players: &[Player]) {
    let stored = cluster.stored(id).await;
    let mut ids: Vec<(i16, &str)> = stored.iter().map(|(_, s, c)| (*s, c.as_str())).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), stored.len(), "a command stored twice");
    for (i, w) in stored.windows(2).enumerate() {
        assert_eq!(w[0].0 + 1, w[1].0, "a gap in the stored seqs at {i}");
    }
    let mut acked = 0;
    for p in players {
        for (cid, seq) in &p.follower.acks {
            let at = stored.iter().find(|(q, _, _)| *q == *seq as i64);
            assert!(
                at.is_some_and(|(_, _, c)| c == cid),
                "acknowledged {cid} at {seq}, stored {at:?}"
            );
            acked += 1;
        }
    }
    assert!(acked > 0, "no acknowledged move");
    let last = stored
        .last()
        .map(|(q, _, _)| *q as u64)
        .expect("stored moves");
    let live = (0..cluster.nodes.len())
        .find(|&i| cluster.alive(i))
        .expect("a live node");
    let fresh = Player::join(cluster, id, live, None).await;
    let mut fresh = fresh.follower;
    fresh.sync_to(last).await.expect("sync the fresh snapshot");
    let truth = fresh.view().expect("view");
    for p in players {
        let f_view = p.follower.view().expect("view");
        assert_eq!(p.follower.seq(), Some(last), "a client behind the end");
        assert_eq!(
            serde_json::to_value(&f_view).expect("json"),
            serde_json::to_value(&truth).expect("json"),
            "a mirror differs from a fresh snapshot"
        );
    }
}

/// One HTTP/1.1 request to a node, the connection closed after it: (status, body).
pub(crate) async fn call(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &str,
) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{auth}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(req.as_bytes()).await.expect("write");
    let mut text = String::new();
    tcp.read_to_string(&mut text).await.expect("read");
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// A guest account made on node `i`: (account id, session token).
pub(crate) async fn guest(cluster: &Cluster, i: usize, name: &str) -> (Uuid, String) {
    let body = serde_json::json!({ "name": name }).to_string();
    let (status, text) = call(cluster.addrs[i], "POST", "/api/accounts/guest", None, &body).await;
    assert_eq!(status, 201, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let id = v["account"]["id"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("account id");
    (id, v["token"].as_str().expect("token").to_owned())
}

/// A WebSocket on node `i` with a session as bearer.
pub(crate) async fn ws_as(cluster: &Cluster, i: usize, token: &str) -> Connection {
    let auth = format!("Bearer {token}");
    let mut conn = Connection::connect_with_headers(&cluster.ws(i), &[("Authorization", &auth)])
        .await
        .expect("connect with a session");
    conn.set_read_timeout(Some(READ_TIMEOUT));
    conn
}

/// Reads lobby pushes until one has at least `version`.
pub(crate) async fn lobby_at(conn: &mut Connection, version: u64) -> protocol::LobbyState {
    loop {
        let msg = conn
            .wait_for(|m| matches!(m, protocol::ServerMessage::Lobby { .. }))
            .await
            .expect("a lobby push");
        if let protocol::ServerMessage::Lobby { lobby } = msg
            && lobby.version >= version
        {
            return lobby;
        }
    }
}

/// Reads every message under the cluster's prefix, from now on (subscribed and flushed before
/// it returns), and hands each to `seen`: what crosses NATS, as a test counts it.
pub(crate) async fn every_message(
    cluster: &Cluster,
    mut seen: impl FnMut(&async_nats::Message) + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    use futures_util::StreamExt;
    let nats = async_nats::connect(&cluster.nats).await.expect("NATS");
    let mut every = nats
        .subscribe(format!("{}.>", cluster.prefix))
        .await
        .expect("subscribe");
    nats.flush().await.expect("flush");
    tokio::spawn(async move {
        let _client = nats;
        while let Some(m) = every.next().await {
            seen(&m);
        }
    })
}

/// The match's seats, seat `i` on node `1 + i`, each subscribed and at its first view (and so
/// in the match's chat room on its node).
pub(crate) async fn seats_from_node_1(
    cluster: &Cluster,
    created: &MatchCreated,
) -> Vec<Connection> {
    let mut seats = Vec::new();
    for (i, s) in created.seats.iter().enumerate() {
        let mut conn = connect(cluster, 1 + i).await.expect("connect");
        conn.auth(&s.token).await.expect("auth");
        conn.subscribe(created.match_id, None)
            .await
            .expect("subscribe");
        conn.wait_for(|m| matches!(m, protocol::ServerMessage::Snapshot { .. }))
            .await
            .expect("the first view");
        seats.push(conn);
    }
    seats
}
