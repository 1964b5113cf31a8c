//! The connection loop over in-memory channels instead of a socket: framing, limits, auth and subscription bookkeeping, with a real
//! SQLite store in a temp dir.

use super::command::MAX_COMMAND_ID;
use super::state::MAX_SUBSCRIPTIONS;
use super::*;
use crate::actor::Registry;
use crate::config::Config;
use crate::store::{MatchRow, MatchStatus, SeatRow, Store};
use crate::tokens::token_hash;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use std::pin::Pin;
use std::sync::atomic::AtomicU64;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::timeout;
use uuid::Uuid;

struct Harness {
    shared: Arc<Shared>,
    _dir: tempfile::TempDir,
    _lifecycle: watch::Sender<Lifecycle>,
}

struct Client {
    to_server: mpsc::UnboundedSender<Result<Message, WsError>>,
    from_server: mpsc::UnboundedReceiver<Message>,
    task: tokio::task::JoinHandle<()>,
}

impl Harness {
    async fn new() -> Harness {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = Arc::new(Config::default());
        let store = Store::open(None, dir.path()).await.expect("store");
        let metrics = Arc::new(crate::meters::Metrics::new(store.kind()));
        let registry = Registry::new(store.clone(), Arc::clone(&config), Arc::clone(&metrics));
        let lobbies = crate::lobby::Lobbies::start(store.clone(), Arc::clone(&registry), false, 3)
            .await
            .expect("lobbies");
        let (lifecycle, rx) = watch::channel(Lifecycle::Running);
        let (connections, _) = watch::channel(0usize);
        let shared = Arc::new(Shared {
            config,
            store,
            registry,
            lobbies,
            lifecycle: rx,
            connections,
            next_conn: AtomicU64::new(1),
            chat: Default::default(),
            limits: Arc::new(crate::limits::AddrLimits::new(&Config::default().limits)),
            metrics,
            live_sessions: Default::default(),
        });
        Harness {
            shared,
            _dir: dir,
            _lifecycle: lifecycle,
        }
    }

    /// A stored two-seat match; seat 0's token is `token`.
    async fn new_match(&self, token: &str) -> Uuid {
        let setup = rules::Setup::new(vec![rules::Colour::Red, rules::Colour::Blue], 7);
        let id = Uuid::new_v4();
        let row = MatchRow {
            id,
            setup: serde_json::to_string(&setup).expect("setup"),
            status: MatchStatus::Active,
            rules_version: rules::REPLAY_VERSION.to_string(),
            created_at: chrono::Utc::now(),
            decision_timeout_ms: None,
            clock: None,
            wake_at: None,
        };
        let seats = [SeatRow {
            seat: 0,
            colour: "red".into(),
            token_hash: token_hash(token),
        }];
        self.shared
            .store
            .create_match(&row, &seats)
            .await
            .expect("create");
        id
    }

    /// Runs the connection loop over two in-memory channels.
    fn connect(&self) -> Client {
        let (to_server, inbound) = mpsc::unbounded_channel::<Result<Message, WsError>>();
        let (outbound, from_server) = mpsc::unbounded_channel::<Message>();
        let stream = Box::pin(futures_util::stream::unfold(inbound, |mut rx| async {
            rx.recv().await.map(|m| (m, rx))
        }));
        let sink = Box::pin(futures_util::sink::unfold(
            outbound,
            |tx, msg: Message| async move {
                tx.send(msg).map_err(|_| WsError::ConnectionClosed)?;
                Ok::<_, WsError>(tx)
            },
        ));
        let id = self.shared.next_conn.fetch_add(1, Ordering::Relaxed);
        let socket = Duplex { sink, stream };
        let task = tokio::spawn(run(socket, Arc::clone(&self.shared), id, None, None));
        Client {
            to_server,
            from_server,
            task,
        }
    }
}

/// A stream and a sink as one socket, as the connection loop takes it.
struct Duplex<W, R> {
    sink: W,
    stream: R,
}

impl<W: Unpin, R: Stream + Unpin> Stream for Duplex<W, R> {
    type Item = R::Item;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<R::Item>> {
        self.stream.poll_next_unpin(cx)
    }
}

impl<W: Sink<Message> + Unpin, R: Unpin> Sink<Message> for Duplex<W, R> {
    type Error = W::Error;
    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), W::Error>> {
        self.sink.poll_ready_unpin(cx)
    }
    fn start_send(mut self: Pin<&mut Self>, item: Message) -> Result<(), W::Error> {
        self.sink.start_send_unpin(item)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), W::Error>> {
        self.sink.poll_flush_unpin(cx)
    }
    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), W::Error>> {
        self.sink.poll_close_unpin(cx)
    }
}

impl Client {
    fn send(&self, msg: Message) {
        self.to_server.send(Ok(msg)).expect("the connection reads");
    }
    fn text(&self, json: Value) {
        self.send(Message::Text(json.to_string().into()));
    }
    /// The next text frame, as JSON (pings skipped).
    async fn next(&mut self) -> Value {
        loop {
            let msg = timeout(Duration::from_secs(5), self.from_server.recv())
                .await
                .expect("a frame in time")
                .expect("the connection is open");
            match msg {
                Message::Text(t) => return serde_json::from_str(t.as_str()).expect("JSON"),
                Message::Ping(_) => {}
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    async fn next_type(&mut self) -> (String, Value) {
        let v = self.next().await;
        let t = v["type"].as_str().unwrap_or_default().to_string();
        (t, v)
    }
}

fn code(v: &Value) -> &str {
    v["code"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn framing_and_limits_get_typed_errors_and_the_connection_goes_on() {
    let h = Harness::new().await;
    let mut c = h.connect();
    let (t, welcome) = c.next_type().await;
    assert_eq!(t, "welcome");
    assert_eq!(welcome["protocol_version"], PROTOCOL_VERSION);
    c.send(Message::Binary(vec![1, 2, 3].into()));
    assert_eq!(code(&c.next().await), "binary");
    c.send(Message::Text("x".repeat(MAX_FRAME_BYTES + 1).into()));
    assert_eq!(code(&c.next().await), "too_large");
    c.send(Message::Text("{not json".into()));
    assert_eq!(code(&c.next().await), "malformed");
    c.text(serde_json::json!({"type": "command", "id": "c1", "command": {"type": "nope"}}));
    let v = c.next().await;
    assert_eq!((code(&v), v["id"].as_str()), ("malformed", Some("c1")));
    // Still open: a well-formed message is answered.
    c.text(serde_json::json!({"type": "auth", "token": "wrong"}));
    assert_eq!(code(&c.next().await), "bad_token");
    // The client goes away: the loop ends.
    drop(c.to_server);
    timeout(Duration::from_secs(5), c.task)
        .await
        .expect("the loop ends")
        .expect("no panic");
}

#[tokio::test]
async fn auth_takes_one_seat_and_commands_need_it() {
    let h = Harness::new().await;
    let match_id = h.new_match("seat-zero").await;
    let mut other = h.connect();
    other.next().await;
    other.text(serde_json::json!({"type": "command", "id": "c1", "command": {"type": "pass"}}));
    let v = other.next().await;
    assert_eq!(
        (code(&v), v["id"].as_str()),
        ("unauthenticated", Some("c1"))
    );
    let mut c = h.connect();
    c.next().await;
    c.text(serde_json::json!({"type": "auth", "token": ""}));
    assert_eq!(code(&c.next().await), "bad_token");
    c.text(serde_json::json!({"type": "auth", "token": "seat-zero"}));
    let (t, v) = c.next_type().await;
    assert_eq!(t, "authenticated");
    assert_eq!(v["match_id"], match_id.to_string());
    assert_eq!(v["seat"], 0);
    c.text(serde_json::json!({"type": "auth", "token": "seat-zero"}));
    assert_eq!(code(&c.next().await), "already_authenticated");
    let bad_id = "x".repeat(MAX_COMMAND_ID + 1);
    c.text(serde_json::json!({"type": "command", "id": bad_id, "command": {"type": "pass"}}));
    assert_eq!(code(&c.next().await), "malformed");
}

#[tokio::test]
async fn subscriptions_are_bounded_and_unknown_matches_take_no_slot() {
    let h = Harness::new().await;
    let mut c = h.connect();
    c.next().await;
    for _ in 0..MAX_SUBSCRIPTIONS + 2 {
        c.text(serde_json::json!({"type": "subscribe", "match_id": Uuid::new_v4()}));
        assert_eq!(code(&c.next().await), "unknown_match");
    }
    let mut ids = Vec::new();
    for i in 0..=MAX_SUBSCRIPTIONS {
        ids.push(h.new_match(&format!("t{i}")).await);
    }
    for id in &ids[..MAX_SUBSCRIPTIONS] {
        c.text(serde_json::json!({"type": "subscribe", "match_id": id}));
        let (t, v) = c.next_type().await;
        assert_eq!(
            (t.as_str(), v["seq"].as_u64()),
            ("snapshot", Some(0)),
            "{v}"
        );
    }
    let last = ids[MAX_SUBSCRIPTIONS];
    c.text(serde_json::json!({"type": "subscribe", "match_id": last}));
    assert_eq!(code(&c.next().await), "unavailable");
    // Subscribing again to a followed match takes no new slot; leaving one frees a slot.
    c.text(serde_json::json!({"type": "subscribe", "match_id": ids[0], "since": 0}));
    c.text(serde_json::json!({"type": "unsubscribe", "match_id": ids[1]}));
    c.text(serde_json::json!({"type": "subscribe", "match_id": last}));
    let (t, v) = c.next_type().await;
    assert_eq!(t, "snapshot", "{v}");
    assert_eq!(v["match_id"], last.to_string());
}
