//! Your-turn webhooks over real sockets, on both stores, against an HTTP receiver in the test:
//! the routes (set with the secret shown once, read without it, removed; `http://` only where
//! the server allows it), a notice signed with HMAC-SHA256 of its body and retried under one
//! delivery id after a 500, a reminder before the game clock runs out, and a receiver that
//! never answers slowing no move of the match.

use crate::common::*;
use crate::lobby::{call, lobby_of, ready, ws_as};
use crate::ratings::registered;
use client::{CommandOutcome, Follower};
use hmac::{Hmac, Mac};
use protocol::{NoticeKind, TurnNotice, WebhookCreated};
use serde_json::{Value, json};
use sha2::Sha256;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use uuid::Uuid;

on_both_stores!(
    webhook_routes_keep_the_secret_and_the_url_policy,
    notices_are_signed_retried_and_remind_before_the_clock_runs_out,
    a_receiver_that_never_answers_slows_no_move,
);

/// One post the receiver got: its headers (lower-cased names) and body.
#[derive(Debug, Clone)]
struct Post {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Post {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// How the receiver answers: the statuses of the first posts in order, then 204; or never.
#[derive(Debug, Clone)]
enum Script {
    Answers(Vec<u16>),
    Stall,
}

/// An HTTP receiver on 127.0.0.1: records every post and answers by its script.
struct Receiver {
    url: String,
    posts: Arc<Mutex<Vec<Post>>>,
}

impl Receiver {
    async fn start(script: Script) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        let posts = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&posts);
        tokio::spawn(async move {
            loop {
                let Ok((mut s, _)) = listener.accept().await else {
                    return;
                };
                let seen = Arc::clone(&seen);
                let script = script.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    let (head_end, length) = loop {
                        let Ok(n) = s.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..i]).to_lowercase();
                            let length = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|v| v.trim().parse::<usize>().ok())
                                .unwrap_or(0);
                            break (i + 4, length);
                        }
                    };
                    while buf.len() < head_end + length {
                        let Ok(n) = s.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                    let headers = head
                        .lines()
                        .skip(1)
                        .filter_map(|l| l.split_once(':'))
                        .map(|(n, v)| (n.trim().to_lowercase(), v.trim().to_string()))
                        .collect();
                    let body = buf[head_end..head_end + length].to_vec();
                    let n = {
                        let mut p = seen.lock().expect("posts");
                        p.push(Post { headers, body });
                        p.len()
                    };
                    let status = match &script {
                        Script::Stall => {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            return;
                        }
                        Script::Answers(a) => a.get(n - 1).copied().unwrap_or(204),
                    };
                    let _ = s
                        .write_all(
                            format!("HTTP/1.1 {status} X\r\nContent-Length: 0\r\n\r\n").as_bytes(),
                        )
                        .await;
                });
            }
        });
        Receiver { url, posts }
    }

    fn posts(&self) -> Vec<Post> {
        self.posts.lock().expect("posts").clone()
    }

    async fn wait_posts(&self, n: usize) -> Vec<Post> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let p = self.posts();
            if p.len() >= n {
                return p;
            }
            assert!(
                Instant::now() < deadline,
                "{} posts of {n} in time",
                p.len()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn config(db: &TestDb) -> server::Config {
    let mut c = db.config();
    c.webhooks.webhook_allow_http = true;
    c.webhooks.webhook_retry = Duration::from_millis(100);
    c.webhooks.webhook_timeout = Duration::from_secs(10);
    c
}

#[track_caller]
fn refused(got: (u16, Value), status: u16, code: &str) {
    assert_eq!(
        (got.0, got.1["code"].as_str()),
        (status, Some(code)),
        "{}",
        got.1
    );
}

async fn set_hook(server: &TestServer, token: &str, url: &str) -> WebhookCreated {
    let (s, v) = call(
        server,
        "PUT",
        "/api/me/webhook",
        Some(token),
        Some(json!({"url": url})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    serde_json::from_value(v).expect("created")
}

async fn webhook_routes_keep_the_secret_and_the_url_policy(db: &TestDb) {
    // A server with the default policy: https only.
    let strict = TestServer::start(db.config());
    let (_, ann) = registered(&strict, "Ann").await;
    refused(
        call(
            &strict,
            "PUT",
            "/api/me/webhook",
            None,
            Some(json!({"url": "https://relay.example/h"})),
        )
        .await,
        401,
        "unauthenticated",
    );
    refused(
        call(
            &strict,
            "PUT",
            "/api/me/webhook",
            Some(&ann),
            Some(json!({"url": "http://127.0.0.1:9/h"})),
        )
        .await,
        400,
        "bad_option",
    );
    refused(
        call(
            &strict,
            "PUT",
            "/api/me/webhook",
            Some(&ann),
            Some(json!({"url": "https://u:p@relay.example/"})),
        )
        .await,
        400,
        "bad_option",
    );
    refused(
        call(&strict, "GET", "/api/me/webhook", Some(&ann), None).await,
        404,
        "bad_option",
    );
    let created = set_hook(&strict, &ann, "https://relay.example/h").await;
    assert_eq!(created.secret.len(), 64);
    assert!(created.secret.chars().all(|c| c.is_ascii_hexdigit()));
    let (s, v) = call(&strict, "GET", "/api/me/webhook", Some(&ann), None).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["url"], "https://relay.example/h");
    assert!(
        !v.to_string().contains(&created.secret),
        "the secret is shown once: {v}"
    );
    // Setting it again gives a new secret.
    let again = set_hook(&strict, &ann, "https://relay.example/h2").await;
    assert_ne!(again.secret, created.secret);
    let (s, _) = call(&strict, "DELETE", "/api/me/webhook", Some(&ann), None).await;
    assert_eq!(s, 204);
    refused(
        call(&strict, "DELETE", "/api/me/webhook", Some(&ann), None).await,
        404,
        "bad_option",
    );
    strict.stop().await;
}

/// A two-seat lobby of Ann (seat 0) and Bo (seat 1), with a clock, started: its followers.
async fn lobby_match(
    server: &TestServer,
    ann: &str,
    bo: &str,
    bank_ms: u64,
) -> (Uuid, Vec<Follower>) {
    let (s, v) = call(
        server,
        "POST",
        "/api/lobbies",
        Some(ann),
        Some(
            json!({"name": "Turns", "seats": 2, "clock": {"bank_ms": bank_ms, "increment_ms": 0}}),
        ),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let id = lobby_of(v).id;
    let (s, v) = call(
        server,
        "POST",
        &format!("/api/lobbies/{id}/join"),
        Some(bo),
        Some(json!({})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    ready(server, id, ann).await;
    ready(server, id, bo).await;
    let (s, v) = call(
        server,
        "POST",
        &format!("/api/lobbies/{id}/start"),
        Some(ann),
        None,
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let match_id: Uuid = serde_json::from_value(v["match_id"].clone()).expect("match id");
    let mut seats = Vec::new();
    for t in [ann, bo] {
        let mut conn = ws_as(server, t).await;
        let seat = conn.take_seat(match_id).await.expect("seat");
        conn.subscribe(match_id, None).await.expect("subscribe");
        let mut f = Follower::from_conn(conn, match_id, Some(seat.seat));
        f.sync_first().await.expect("snapshot");
        seats.push(f);
    }
    (match_id, seats)
}

/// Plays the open decisions of `seat` until a decision waits for the other seat; the
/// commands' ack times.
async fn play_turn(
    seats: &mut [Follower],
    seat: usize,
    rng: &mut client::bot::Rng,
) -> Vec<Duration> {
    let mut acks = Vec::new();
    loop {
        let view = seats[seat].view().expect("view");
        if view.finished {
            return acks;
        }
        let Some(d) = view
            .decisions
            .iter()
            .find(|d| usize::from(d.player()) == seat)
        else {
            return acks;
        };
        let command = rules::bot::random_command(d, || rng.next_u64()).expect("a move");
        let id = seats[seat].new_id();
        let sent = Instant::now();
        let seq = match seats[seat].command(&id, command).await.expect("command") {
            CommandOutcome::Accepted { seq, .. } => seq,
            CommandOutcome::Rejected(e) => panic!("refused: {e:?}"),
        };
        acks.push(sent.elapsed());
        for f in seats.iter_mut() {
            f.sync_to(seq).await.expect("sync");
        }
    }
}

async fn notices_are_signed_retried_and_remind_before_the_clock_runs_out(db: &TestDb) {
    let mut c = config(db);
    // The bank is 60 s: a reminder 58.5 s before it runs out comes 1.5 s into the turn.
    c.webhooks.webhook_reminder = Duration::from_millis(58_500);
    let server = TestServer::start(c);
    let (_, ann) = registered(&server, "Ann").await;
    let (_, bo) = registered(&server, "Bo").await;
    let receiver = Receiver::start(Script::Answers(vec![500])).await;
    let hook = set_hook(&server, &bo, &receiver.url).await;
    let ann_receiver = Receiver::start(Script::Answers(vec![])).await;
    set_hook(&server, &ann, &ann_receiver.url).await;
    let (match_id, mut seats) = lobby_match(&server, &ann, &bo, 60_000).await;
    // The match opens with Ann's turn: her notice at seq 0.
    let first: TurnNotice =
        serde_json::from_slice(&ann_receiver.wait_posts(1).await[0].body).expect("a notice");
    assert_eq!(
        (first.kind, first.match_id, first.seat, first.seq),
        (NoticeKind::YourTurn, match_id, 0, 0)
    );
    let mut rng = client::bot::Rng::new(3);
    // Ann's turn ends: a decision waits for Bo.
    play_turn(&mut seats, 0, &mut rng).await;
    let seq = seats[1].seq().expect("seq");
    let posts = receiver.wait_posts(2).await;
    // The first post got a 500; the retry carries the same notice under the same delivery id.
    assert_eq!(posts[0].body, posts[1].body);
    assert_eq!(
        posts[0].header("x-carcassonne-delivery"),
        posts[1].header("x-carcassonne-delivery")
    );
    for p in &posts[..2] {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(hook.secret.as_bytes()).expect("key");
        mac.update(&p.body);
        let hex: String = mac
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            p.header("x-carcassonne-signature"),
            Some(format!("sha256={hex}").as_str())
        );
        assert_eq!(p.header("content-type"), Some("application/json"));
    }
    let notice: TurnNotice = serde_json::from_slice(&posts[0].body).expect("a notice");
    assert_eq!(
        (notice.kind, notice.match_id, notice.seat, notice.seq),
        (NoticeKind::YourTurn, match_id, 1, seq)
    );
    let due = notice.due_at.expect("Bo's clock runs");
    // Bo waits: the reminder comes before the clock runs out, once.
    let posts = receiver.wait_posts(3).await;
    let reminder: TurnNotice = serde_json::from_slice(&posts[2].body).expect("a reminder");
    assert_eq!(
        (reminder.kind, reminder.seat, reminder.seq),
        (NoticeKind::Reminder, 1, seq)
    );
    assert!(reminder.sent_at < due, "{reminder:?} before {due}");
    assert_ne!(
        posts[2].header("x-carcassonne-delivery"),
        posts[0].header("x-carcassonne-delivery")
    );
    // Bo's turn ends: Ann's second notice; Bo got no second reminder.
    play_turn(&mut seats, 1, &mut rng).await;
    let again: TurnNotice =
        serde_json::from_slice(&ann_receiver.wait_posts(2).await[1].body).expect("a notice");
    assert_eq!(
        (again.kind, again.seat, again.seq),
        (NoticeKind::YourTurn, 0, seats[0].seq().expect("seq"))
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        receiver.posts().len(),
        3,
        "one notice, its retry and one reminder for Bo"
    );
    assert_eq!(
        ann_receiver.posts().len(),
        2,
        "a notice per turn, not per decision of it"
    );
    server.stop().await;
}

async fn a_receiver_that_never_answers_slows_no_move(db: &TestDb) {
    let server = TestServer::start(config(db));
    let (_, ann) = registered(&server, "Ann").await;
    let (_, bo) = registered(&server, "Bo").await;
    let stall = Receiver::start(Script::Stall).await;
    set_hook(&server, &ann, &stall.url).await;
    set_hook(&server, &bo, &stall.url).await;
    let (_, mut seats) = lobby_match(&server, &ann, &bo, 3_600_000).await;
    let mut rng = client::bot::Rng::new(9);
    let mut acks = Vec::new();
    for turn in 0..30 {
        acks.extend(play_turn(&mut seats, turn % 2, &mut rng).await);
    }
    // Every turn's notice went out and hangs (the receiver holds each post for an hour).
    let posts = stall.wait_posts(20).await;
    assert!(posts.len() >= 20, "{}", posts.len());
    acks.sort();
    let p50 = acks[acks.len() / 2];
    let max = acks[acks.len() - 1];
    eprintln!(
        "acks while the receiver stalls: {} moves, p50 {p50:?}, max {max:?}",
        acks.len()
    );
    // A notice that waited for the receiver would hold a move for the post's 10 s timeout.
    assert!(
        max < Duration::from_secs(2),
        "a move waited for the webhook: max {max:?}"
    );
    server.stop().await;
}
