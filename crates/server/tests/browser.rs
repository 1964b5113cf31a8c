//! The browser client in real Chromium (issue 13), against a real server on 127.0.0.1 with a
//! SQLite store: two players in separate browser contexts play a scenario's game to the end by
//! clicking; a toll is paid and shown; a reload and a server restart both resume the exact state;
//! a spectator follows live; a refused command shows the server's words; keyboard play on a phone
//! viewport; on the France map, the map drawn, a chip taken and a wine sold by clicking, and
//! refusals off the map and against a border print in words; the admin console lists a played
//! match, steps its board to any seq (as the rules crate replays it), shows the secrets of a
//! finished match, refuses them for a running one, aborts and marks away after a confirmation,
//! and says in words that a token is wrong. The lobby: guests (and a registered account that logs
//! out and in) in separate browser contexts meet in a lobby from the list, pick colours, get ready,
//! the host starts and both play their seat by clicking; a bot seat is added and removed; a private
//! lobby and its match need the invite code; a spectator watches from the list; two players chat
//! at the table. Each test saves a screenshot under `target/browser-tests/`. Without Chromium the
//! tests are skipped with a notice (and fail with `CI=true`).

mod browser {
    pub mod cdp;
}

use browser::cdp::{Browser, Page, WAIT};
use client::Connection;
use protocol::{CreateMatch, MatchCreated, ServerMessage};
use rules::Command;
use rules::scenario::Scenario;
use serde_json::{Value, json};
use server::Config;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;
use tokio::sync::oneshot;

/// The admin token of every test server (the admin console's tests sign in with it).
const ADMIN_TOKEN: &str = "browser-admin-token";

/// A server in its own thread and runtime, on a given listener, so that a test can kill it
/// abruptly and start another on the same port and store.
struct Server {
    addr: SocketAddr,
    kill: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(addr: SocketAddr, data: &Path) -> Server {
        let listener = std::net::TcpListener::bind(addr).expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let mut config = Config::default();
        config.matches.allow_test_setups = true;
        config.store.data_dir = data.to_path_buf();
        config.conn.heartbeat_interval = Duration::from_secs(1);
        config.conn.heartbeat_timeout = Duration::from_secs(15);
        config.shutdown_grace = Duration::from_secs(2);
        config.admin.admin_token = Some(ADMIN_TOKEN.into());
        config.limits.relax(); // the limits' own tests narrow them
        let (kill, kill_rx) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                tokio::select! {
                    res = server::run(listener, config, std::future::pending()) => {
                        if let Err(e) = res { panic!("server failed: {e}"); }
                    }
                    _ = kill_rx => {}
                }
            });
            rt.shutdown_timeout(Duration::ZERO);
        });
        Server {
            addr,
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    fn http(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Like a crash: every task dropped mid-flight, sockets cut.
    fn kill(mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
    }
}

fn scenario(name: &str) -> Scenario {
    let path = format!(
        "{}/../rules/scenarios/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("scenario")).expect("parses")
}

async fn create(server: &Server, s: &Scenario) -> MatchCreated {
    let req = CreateMatch {
        players: s.setup.players.clone(),
        modules: s.setup.modules.clone(),
        meeples: None,
        draw_order: s.setup.draw_order.clone(),
        clock: None,
    };
    client::create_match(&server.http(), &req)
        .await
        .expect("create match")
}

/// The server's own public view of the match, from a fresh snapshot.
async fn server_view(server: &Server, id: uuid::Uuid) -> (u64, Value) {
    let mut c = Connection::connect(&format!("ws://{}/ws", server.addr))
        .await
        .expect("connect");
    c.subscribe(id, None).await.expect("subscribe");
    let m = tokio::time::timeout(
        WAIT,
        c.wait_for(|m| matches!(m, ServerMessage::Snapshot { .. })),
    )
    .await
    .expect("snapshot in time")
    .expect("snapshot");
    let ServerMessage::Snapshot { seq, view, .. } = m else {
        unreachable!()
    };
    (seq, serde_json::to_value(view).expect("view json"))
}

/// A page of one seat, loaded and showing the match.
async fn seat_page(b: &Browser, server: &Server, token: &str) -> Page {
    let p = b.page(1280, 720).await;
    p.goto(&format!("{}/#token={token}", server.http())).await;
    p.wait(
        "window.carcassonne && window.carcassonne.view",
        "the first view",
    )
    .await;
    p
}

async fn page_seq(p: &Page) -> Option<u64> {
    p.eval("window.carcassonne.seq").await.as_u64()
}

/// Waits until the page has applied `seq`.
async fn wait_seq(p: &Page, seq: u64) {
    p.wait(
        &format!("window.carcassonne.seq >= {seq} && document.getElementById('seq').textContent == '{seq}'"),
        &format!("seq {seq}"),
    )
    .await;
}

/// Plays one command on the page by clicking, as a player would: a legal square, the tile on
/// the board until it shows the rotation, Place; a meeple circle; a tollhouse square; Pass.
async fn click_command(p: &Page, command: &Command) {
    let cmd = serde_json::to_value(command).expect("command json");
    match cmd["type"].as_str() {
        Some("place_tile") => {
            let key = format!("{},{}", cmd["pos"]["x"], cmd["pos"]["y"]);
            let picked = format!("!!document.querySelector('[data-preview=\"{key}\"]')");
            if p.eval(&picked).await != json!(true) {
                p.click(&format!("[data-legal=\"{key}\"]")).await;
            }
            p.wait(
                &format!("document.querySelector('[data-preview=\"{key}\"]')"),
                "preview",
            )
            .await;
            for _ in 0..4 {
                let r = p
                    .eval("document.getElementById('drawn-name').dataset.rotation")
                    .await;
                if r.as_str() == Some(&cmd["rotation"].to_string()) {
                    break;
                }
                // Clicking the tile on the board turns it.
                p.click(&format!("[data-preview=\"{key}\"]")).await;
            }
            p.click("#confirm").await;
        }
        Some("place_meeple") => {
            let t = cmd["target"].as_str().expect("target");
            p.click(&format!("[data-target=\"{t}\"]")).await;
        }
        Some("place_tollhouse") => {
            let key = format!("{},{}", cmd["pos"]["x"], cmd["pos"]["y"]);
            p.click(&format!("[data-toll-target=\"{key}\"]")).await;
        }
        // A chain of dispatches (M6) is declined with its own button.
        Some("pass") => {
            let chain = "[data-key=\"chain:pass\"]";
            let sel = if p
                .eval(&format!("!!document.querySelector('{chain}')"))
                .await
                == json!(true)
            {
                chain
            } else {
                "#pass"
            };
            p.click(sel).await;
        }
        // The Messages: the buttons of the decision.
        Some("choose_pawn") => {
            let pawn = cmd["pawn"].as_str().expect("pawn");
            p.click(&format!("[data-key=\"pawn:{pawn}\"]")).await;
        }
        Some("dispatch_points") => p.click("[data-key=\"dispatch:points\"]").await,
        Some("dispatch_action") => {
            let key = match cmd.get("meeple") {
                Some(m) => format!(
                    "dispatch:{},{} {}",
                    m["pos"]["x"],
                    m["pos"]["y"],
                    m["target"].as_str().expect("target")
                ),
                None => "dispatch:action".to_string(),
            };
            p.click(&format!("[data-key=\"{key}\"]")).await;
        }
        Some("draw_dispatch") => p.click("[data-key=\"chain:draw\"]").await,
        other => panic!("no click for {other:?}"),
    }
}

/// The scenario's commands with meeple targets in the canonical names the page offers (a
/// scenario may name a segment by any side it reaches), from the rules crate's own events.
/// A step that sends the default (The Messages' scenarios) becomes the default's own command,
/// which the page offers like any other.
fn canonical_steps(s: &Scenario) -> Vec<(u8, Command)> {
    let (mut game, _) = rules::Game::start(s.setup.clone()).expect("setup");
    let mut out = Vec::new();
    for step in &s.steps {
        let default = || {
            let (id, _) = game
                .open_decisions()
                .into_iter()
                .find(|(_, d)| d.player() == step.player)?;
            game.default_command(id).map(|(_, c)| c)
        };
        let Some(command) = step
            .command
            .clone()
            .or_else(|| step.default.then(default).flatten())
        else {
            continue;
        };
        let Ok(events) = game.apply(step.player, command.clone()) else {
            continue; // a step the scenario expects to be refused
        };
        let cmd = events
            .iter()
            .find_map(|e| match e {
                rules::Event::MeeplePlaced { target, .. } => {
                    Some(Command::PlaceMeeple { target: *target })
                }
                _ => None,
            })
            .unwrap_or(command);
        out.push((step.player, cmd));
    }
    out
}

/// Plays `steps` of the scenario on the seat pages by clicking, each step awaited in every page.
async fn play_steps(
    pages: &[&Page],
    s: &Scenario,
    range: std::ops::Range<usize>,
    mut seq: u64,
) -> u64 {
    let steps = canonical_steps(s);
    for (player, command) in &steps[range] {
        let p = pages[usize::from(*player)];
        // The page must know it is its turn before it offers the move.
        p.wait(
            &format!("window.carcassonne.view.decisions.some(d => d.player === {player})"),
            "my decision",
        )
        .await;
        click_command(p, command).await;
        seq += 1;
        for q in pages {
            wait_seq(q, seq).await;
        }
    }
    seq
}

async fn page_view(p: &Page) -> Value {
    p.eval("window.carcassonne.view").await
}

async fn page_scores(p: &Page) -> Vec<u64> {
    let v = p
        .eval(
            "[...document.querySelectorAll('#players td.score')].map(td => Number(td.textContent))",
        )
        .await;
    v.as_array()
        .expect("scores")
        .iter()
        .filter_map(Value::as_u64)
        .collect()
}

fn scores(view: &Value) -> Vec<u64> {
    view["players"]
        .as_array()
        .expect("players")
        .iter()
        .filter_map(|p| p["score"].as_u64())
        .collect()
}

fn free_addr() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr")
}

/// Chromium and a server on the embedded store in a fresh data directory; `None` (after the
/// notice) when Chromium is missing outside CI.
async fn browser_and_server() -> Option<(Browser, tempfile::TempDir, Server)> {
    let b = Browser::launch().await?;
    let data = tempfile::tempdir().expect("tmp");
    let server = Server::start(free_addr(), data.path());
    Some((b, data, server))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_players_play_a_whole_game_by_clicking() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b11-scoring-order-roads-cities-monasteries");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    let steps = canonical_steps(&s);
    let n = steps.len();
    // Mid-game, with the next tile picked up over a legal square: the README's picture.
    let mid = (n / 2..n)
        .find(|&i| matches!(steps[i].1, Command::PlaceTile { .. }))
        .expect("a tile step");
    let seq = play_steps(&[&red, &blue], &s, 0..mid, 0).await;
    let (player, Command::PlaceTile { pos, .. }) = &steps[mid] else {
        unreachable!()
    };
    let page = if *player == 0 { &red } else { &blue };
    page.click(&format!("[data-legal=\"{},{}\"]", pos.x, pos.y))
        .await;
    page.screenshot("game-in-progress").await;
    play_steps(&[&red, &blue], &s, mid..n, seq).await;

    for p in [&red, &blue] {
        p.wait("document.body.dataset.finished === 'true'", "the end")
            .await;
    }
    let (seq, view) = server_view(&server, created.match_id).await;
    assert_eq!(view["finished"], json!(true));
    let expected: Vec<u64> = s
        .expect
        .scores
        .iter()
        .flatten()
        .map(|&x| u64::from(x))
        .collect();
    assert_eq!(scores(&view), expected, "the server's final scores");
    for p in [&red, &blue] {
        assert_eq!(page_scores(p).await, scores(&view), "scores in the page");
        assert_eq!(page_seq(p).await, Some(seq));
        assert_eq!(page_view(p).await, view, "the page's view is the server's");
    }
    let log = red.eval("document.getElementById('log').textContent").await;
    assert!(
        log.as_str().unwrap_or("").contains("Game over"),
        "log: {log}"
    );
    assert_eq!(
        red.eval("document.title").await,
        json!("Game over — Carcassonne")
    );
    red.screenshot("whole-game-red").await;
    blue.screenshot("whole-game-blue").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tollkeepers_toll_is_paid_and_shown() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    // The seed's worked examples (T6, T9): tolls paid, a tollhouse turned by travellers.
    let s = scenario("t-t6-t9-seed-examples");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    let steps = canonical_steps(&s);
    let mid = (steps.len() / 2..steps.len())
        .find(|&i| matches!(steps[i].1, Command::PlaceTile { .. }))
        .expect("a tile step");
    let seq = play_steps(&[&red, &blue], &s, 0..mid, 0).await;
    let (player, Command::PlaceTile { pos, .. }) = &steps[mid] else {
        unreachable!()
    };
    let page = if *player == 0 { &red } else { &blue };
    page.click(&format!("[data-legal=\"{},{}\"]", pos.x, pos.y))
        .await;
    page.screenshot("tollkeepers-in-progress").await;
    play_steps(&[&red, &blue], &s, mid..steps.len(), seq).await;

    let (_, view) = server_view(&server, created.match_id).await;
    let log = red.eval("document.getElementById('log').textContent").await;
    let log = log.as_str().unwrap_or_default().to_string();
    // T6's example: the road a player completes pays the tollhouse at its end, in words.
    assert!(
        log.contains("Green's road at 1,0 paid Red's tollhouse 7."),
        "a toll in words: {log}"
    );
    // The tollhouse is on the board and in the players' table with its value.
    let owner = view["players"]
        .as_array()
        .expect("players")
        .iter()
        .find(|p| p.get("tollhouse").is_some())
        .expect("a tollhouse in the server's view")
        .clone();
    let colour = owner["colour"].as_str().expect("colour");
    let value = owner["tollhouse"]["value"].as_u64().expect("value");
    red.wait(
        &format!("document.querySelector('[data-tollhouse=\"{colour}\"]')"),
        "tollhouse on the board",
    )
    .await;
    let cell = red
        .eval(&format!(
            "document.querySelector('tr[data-player=\"{colour}\"] td.toll').textContent"
        ))
        .await;
    assert!(
        cell.as_str().unwrap_or("").starts_with(&value.to_string()),
        "toll cell {cell}"
    );
    assert_eq!(page_scores(&red).await, scores(&view));
    red.screenshot("tollkeepers").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_mid_game_resumes_the_exact_state() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    let half = 6;
    let seq = play_steps(&[&red, &blue], &s, 0..half, 0).await;

    blue.reload().await;
    blue.wait(
        "window.carcassonne && window.carcassonne.view",
        "the view after reload",
    )
    .await;
    wait_seq(&blue, seq).await;
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, seq);
    assert_eq!(
        page_view(&blue).await,
        view,
        "the reloaded page shows the server's view"
    );
    assert_eq!(page_scores(&blue).await, scores(&view));
    // and play goes on from there
    play_steps(&[&red, &blue], &s, half..half + 2, seq).await;
    blue.screenshot("reload-resumed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_restart_shows_reconnecting_and_resumes() {
    let Some((b, data, server)) = browser_and_server().await else {
        return;
    };
    let addr = server.addr;
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    let seq = play_steps(&[&red, &blue], &s, 0..4, 0).await;

    server.kill();
    for p in [&red, &blue] {
        p.wait(
            "document.body.dataset.status === 'reconnecting'",
            "reconnecting",
        )
        .await;
        let status = p
            .eval("document.getElementById('status').textContent")
            .await;
        assert_eq!(status, json!("reconnecting…"));
    }
    red.screenshot("restart-reconnecting").await;

    let server = Server::start(addr, data.path());
    for p in [&red, &blue] {
        p.wait("document.body.dataset.status === 'live'", "live again")
            .await;
    }
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, seq, "no acknowledged move lost");
    for p in [&red, &blue] {
        assert_eq!(page_view(p).await, view, "the exact state back");
    }
    let seq = play_steps(&[&red, &blue], &s, 4..8, seq).await;
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, seq);
    assert_eq!(page_view(&red).await, view);
    red.screenshot("restart-resumed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectator_follows_a_game_live() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-coats-of-arms-complete-and-incomplete");
    let created = create(&server, &s).await;
    let watcher = b.page(1280, 720).await;
    watcher
        .goto(&format!("{}/watch/{}", server.http(), created.match_id))
        .await;
    watcher
        .wait(
            "window.carcassonne && window.carcassonne.view",
            "the spectator's view",
        )
        .await;
    assert_eq!(
        watcher
            .eval("document.getElementById('whoami').textContent")
            .await,
        json!("Watching")
    );
    // The players play over the protocol; the spectator page follows every seq.
    let ws = format!("ws://{}/ws", server.addr);
    let mut seats = Vec::new();
    for st in &created.seats {
        let mut c = Connection::connect(&ws).await.expect("connect");
        c.auth(&st.token).await.expect("auth");
        seats.push(c);
    }
    let mut seq = 0;
    for (i, step) in s.steps.iter().enumerate() {
        let out = seats[usize::from(step.player)]
            .command(&format!("s{i}"), step.command.clone().expect("a command"))
            .await
            .expect("command");
        assert!(
            matches!(out, client::CommandOutcome::Accepted { .. }),
            "{out:?}"
        );
        seq += 1;
        wait_seq(&watcher, seq).await;
        let (_, view) = server_view(&server, created.match_id).await;
        assert_eq!(page_view(&watcher).await, view, "spectator at seq {seq}");
    }
    // A spectator has no moves to offer.
    assert_eq!(
        watcher
            .eval("document.querySelectorAll('.legal:not(.theirs)').length")
            .await,
        json!(0)
    );
    watcher.screenshot("spectator").await;
}

/// Types a chat message on a page and sends it with the Send button.
async fn say(p: &Page, text: &str) {
    let set = format!(
        "document.getElementById('chat-text').value = {}",
        serde_json::to_string(text).expect("json")
    );
    p.eval(&set).await;
    p.click("#chat-form button").await;
}

/// Waits until a page's chat shows a line with `text`.
async fn wait_chat(p: &Page, text: &str) {
    let js = format!(
        "[...document.querySelectorAll('#chat-log li')].some((li) => li.textContent.endsWith({}))",
        serde_json::to_string(text).expect("json")
    );
    p.wait(&js, "the chat line").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_players_chat_at_the_table() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-coats-of-arms-complete-and-incomplete");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    say(&red, "good luck, <b>Blue</b>").await;
    wait_chat(&blue, "good luck, <b>Blue</b>").await;
    wait_chat(&red, "good luck, <b>Blue</b>").await;
    // The text is shown as text, with its sender's colour.
    assert_eq!(
        blue.eval("document.querySelector('#chat-log li').textContent")
            .await,
        json!("Red: good luck, <b>Blue</b>")
    );
    assert_eq!(
        blue.eval("document.querySelectorAll('#chat-log b').length")
            .await,
        json!(1)
    );
    say(&blue, "you too").await;
    wait_chat(&red, "you too").await;
    assert_eq!(
        red.eval("document.getElementById('chat-text').value").await,
        json!("")
    );
    // Chat is not a move: the match did not advance.
    assert_eq!(page_seq(&red).await, Some(0));
    blue.screenshot("chat").await;

    // Blue mutes Red from Red's line: the line goes, and Red's next one never reaches Blue
    // (Blue's own line, said after Red's was delivered, shows alone).
    assert_eq!(
        red.eval("document.querySelectorAll('#chat-log li[data-speaker] button.mute').length")
            .await,
        json!(1),
        "only the other player's line offers a mute"
    );
    blue.click("#chat-log li button.mute").await;
    blue.wait(
        "!document.getElementById('chat-muted').hidden",
        "the muted list",
    )
    .await;
    assert_eq!(
        text_of(&blue, "document.getElementById('chat-muted').textContent").await,
        "unmute Red"
    );
    say(&red, "are you there?").await;
    wait_chat(&red, "are you there?").await;
    say(&blue, "anyone?").await;
    wait_chat(&blue, "anyone?").await;
    wait_chat(&red, "anyone?").await;
    assert_eq!(
        blue.eval("[...document.querySelectorAll('#chat-log li')].map((li) => li.textContent)")
            .await,
        json!(["Blue: you too", "Blue: anyone?"]),
        "Red's lines are gone from Blue's page"
    );
    blue.screenshot("chat-muted").await;
    // Unmuted, Red is heard again.
    blue.click("#chat-muted button").await;
    say(&red, "back").await;
    wait_chat(&blue, "back").await;
    assert!(
        blue.eval("document.getElementById('chat-muted').hidden")
            .await
            == json!(true)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_command_shows_the_servers_error_in_words() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-coats-of-arms-complete-and-incomplete");
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let step = &s.steps[0];
    let cmd = serde_json::to_value(&step.command).expect("json");
    let key = format!("{},{}", cmd["pos"]["x"], cmd["pos"]["y"]);
    red.click(&format!("[data-legal=\"{key}\"]")).await;
    // Turn the tile until it does not fit there, and place it anyway: the server judges.
    for _ in 0..4 {
        if red
            .eval("document.getElementById('fit-hint').textContent")
            .await
            == json!("does not fit here")
        {
            break;
        }
        red.click("#rotate-cw").await;
    }
    assert_eq!(
        red.eval("document.getElementById('fit-hint').textContent")
            .await,
        json!("does not fit here")
    );
    red.click("#confirm").await;
    red.wait("!document.getElementById('error').hidden", "the error")
        .await;
    let text = red
        .eval("document.getElementById('error').textContent")
        .await;
    let text = text.as_str().unwrap_or_default();
    assert!(
        text.contains("does not match") && text.contains("(rule B4)"),
        "error shown: {text}"
    );
    // Nothing changed, and the move that fits still goes through.
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, 0);
    assert_eq!(page_view(&red).await, view);
    red.screenshot("refused-command").await;
    // Pass in phase 1 is refused by the rules too, in words.
    red.click("#pass").await;
    red.wait(
        "document.getElementById('error').textContent.includes('rule B4')",
        "wrong phase error",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyboard_play_on_a_phone_viewport() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-coats-of-arms-complete-and-incomplete");
    let created = create(&server, &s).await;
    let red = b.page(390, 844).await;
    red.viewport(390, 844, true).await;
    red.goto(&format!(
        "{}/#token={}",
        server.http(),
        created.seats[0].token
    ))
    .await;
    red.wait("window.carcassonne && window.carcassonne.view", "view")
        .await;
    assert_eq!(
        red.eval("document.title").await,
        json!("Your turn — Carcassonne")
    );
    let cmd = serde_json::to_value(&s.steps[0].command).expect("json");
    let key = format!("{},{}", cmd["pos"]["x"], cmd["pos"]["y"]);
    // N cycles the legal squares, R turns, Enter places.
    for _ in 0..20 {
        red.key("n").await;
        if red
            .eval(&format!(
                "!!document.querySelector('[data-preview=\"{key}\"]')"
            ))
            .await
            == json!(true)
        {
            break;
        }
    }
    for _ in 0..4 {
        if red
            .eval("document.getElementById('drawn-name').dataset.rotation")
            .await
            == json!(cmd["rotation"].to_string())
        {
            break;
        }
        red.key("r").await;
    }
    red.key("Enter").await;
    wait_seq(&red, 1).await;
    // Phase 2: N cycles the targets, Enter puts the meeple there.
    let t = serde_json::to_value(&canonical_steps(&s)[1].1).expect("json");
    if let Some(target) = t["target"].as_str() {
        for _ in 0..12 {
            red.key("n").await;
            if red
                .eval(&format!(
                    "!!document.querySelector('[data-target=\"{target}\"].focus')"
                ))
                .await
                == json!(true)
            {
                break;
            }
        }
        red.key("Enter").await;
    } else {
        red.key("s").await;
    }
    wait_seq(&red, 2).await;
    let (_, view) = server_view(&server, created.match_id).await;
    assert_eq!(page_view(&red).await, view);
    assert_eq!(
        red.eval("document.title").await,
        json!("Blue's turn — Carcassonne")
    );
    // Readable on a phone: the side panel does not overflow the viewport's width.
    let w = red.eval("document.documentElement.scrollWidth").await;
    assert!(w.as_u64().unwrap_or(9999) <= 390, "page width {w}");
    red.screenshot("phone-keyboard").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap_in_diffs_is_refilled_and_an_unanswered_command_is_resent() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let steps = canonical_steps(&s);
    let created = create(&server, &s).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    // The same seat in a second tab: both follow, either may play.
    let red2 = seat_page(&b, &server, &created.seats[0].token).await;
    let ws = format!("ws://{}/ws", server.addr);
    let mut blue = Connection::connect(&ws).await.expect("connect");
    blue.auth(&created.seats[1].token).await.expect("auth");

    // The first tab loses one diff on the way in; it must notice the gap at the next one and
    // fetch what it missed with `since`.
    red.eval(
        "(() => { const c = window.carcassonne; const orig = c.handle.bind(c); let dropped = false;
           c.handle = (m) => { if (m.type === 'diff' && !dropped) { dropped = true; return; } orig(m); }; })()",
    )
    .await;
    // Red plays steps 0 and 1 in the second tab by clicking.
    let seq = play_steps(&[&red2, &red2], &s, 0..2, 0).await;
    wait_seq(&red, seq).await;
    let (_, view) = server_view(&server, created.match_id).await;
    assert_eq!(page_view(&red).await, view, "the gap was refilled");

    // Blue's turn over the protocol.
    let mut seq = seq;
    for (i, (player, command)) in steps.iter().enumerate().skip(2).take(2) {
        assert_eq!(*player, 1);
        let out = blue
            .command(&format!("b{i}"), command.clone())
            .await
            .expect("command");
        assert!(
            matches!(out, client::CommandOutcome::Accepted { .. }),
            "{out:?}"
        );
        seq += 1;
    }
    wait_seq(&red, seq).await;

    // A command whose answer is lost: the socket drops right after sending it. On reconnect the
    // page sends it again with the same id; the server answers with the first ack and applies
    // nothing twice.
    let (_, command) = &steps[4];
    let js = format!(
        "(() => {{ const c = window.carcassonne; const id = c.command({});
            c.ws.close(); return id; }})()",
        serde_json::to_string(command).expect("json")
    );
    let id = red.eval(&js).await;
    assert!(id.is_string());
    red.wait(
        "window.carcassonne.pending.size === 0",
        "the resent command's ack",
    )
    .await;
    wait_seq(&red, seq + 1).await;
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, seq + 1, "applied exactly once");
    for p in [&red, &red2] {
        wait_seq(p, sseq).await;
        assert_eq!(page_view(p).await, view);
    }
    red2.screenshot("two-tabs").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tile_gallery_draws_every_tile_of_the_catalogue() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let p = b.page(1280, 720).await;
    p.goto(&format!("{}/#tiles", server.http())).await;
    p.wait(
        "document.querySelectorAll('#gallery figure').length > 0",
        "the gallery",
    )
    .await;
    let cat = rules::catalogue();
    let drawn = p
        .eval("document.querySelectorAll('#gallery figure .tile').length")
        .await;
    assert_eq!(drawn, json!(cat.tiles.len()));
    // Every segment has its anchor, every picture its icon, every monastery its building.
    for t in &cat.tiles {
        let sel = format!("#gallery figure[data-tile=\"{}\"]", t.id);
        let counts = p
            .eval(&format!(
                "(() => {{ const f = document.querySelector({s}); return [f.querySelectorAll('.anchor').length,
                   f.querySelectorAll('.picture').length, f.querySelectorAll('.monastery').length,
                   f.querySelectorAll('.city').length, f.querySelectorAll('.road').length]; }})()",
                s = json!(sel)
            ))
            .await;
        let of = |k: rules::FeatureKind| t.segments.iter().filter(|s| s.kind == k).count();
        assert_eq!(
            counts,
            json!([
                t.segments.len(),
                t.pictures.len(),
                of(rules::FeatureKind::Monastery),
                of(rules::FeatureKind::City),
                of(rules::FeatureKind::Road)
            ]),
            "{}",
            t.id
        );
    }
    // Meeple targets are circles of radius 9 at these anchors: none may cover another.
    let crowded = p
        .eval(
            "[...document.querySelectorAll('#gallery figure')].flatMap(f => {
               const pts = [...f.querySelectorAll('.anchor')].map(a =>
                 a.getAttribute('transform').match(/-?[0-9.]+/g).map(Number));
               const bad = [];
               pts.forEach((p, i) => pts.slice(i + 1).forEach(q => {
                 if (Math.hypot(p[0] - q[0], p[1] - q[1]) < 18) bad.push(f.dataset.tile); }));
               return bad; })",
        )
        .await;
    assert_eq!(crowded, json!([]), "tiles with overlapping targets");
    p.viewport(1280, 2400, false).await;
    p.screenshot("tile-gallery").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_page_creates_a_test_match_and_links_its_seats() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let p = b.page(1280, 720).await;
    let href = create_from_start_page(&p, &server, "#create-tollkeepers").await;
    p.screenshot("start-page").await;
    assert!(href.starts_with("/#token="), "{href}");
    // The link seats its holder in a match with The Tollkeepers on.
    let seat = b.page(1280, 720).await;
    seat.goto(&format!("{}{href}", server.http())).await;
    seat.wait("window.carcassonne && window.carcassonne.view", "the view")
        .await;
    assert_eq!(seat.eval("window.carcassonne.seat").await, json!(0));
    assert_eq!(
        seat.eval("window.carcassonne.view.modules.tollkeepers")
            .await,
        json!(true)
    );
    assert_eq!(
        seat.eval("document.title").await,
        json!("Your turn — Carcassonne")
    );
}

/// Every diff of a whole random 3-player game with The Tollkeepers (a full pile, so every kind of
/// patch the server makes) through the page's own JSON Patch code: the spectator page ends with
/// exactly the server's view, and draws the whole board.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectator_page_follows_a_whole_random_game_exactly() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let req = CreateMatch {
        players: vec![
            rules::Colour::Red,
            rules::Colour::Blue,
            rules::Colour::Green,
        ],
        modules: rules::Modules {
            tollkeepers: true,
            ..Default::default()
        },
        meeples: None,
        draw_order: None,
        clock: None,
    };
    let created = client::create_match(&server.http(), &req)
        .await
        .expect("create");
    let id = created.match_id;
    let watcher = b.page(1280, 720).await;
    watcher.goto(&format!("{}/watch/{id}", server.http())).await;
    watcher
        .wait("window.carcassonne && window.carcassonne.view", "the view")
        .await;

    // The whole game, whoever must decide.
    let seq = play_randomly(&server, &created, u64::MAX, 7).await;
    wait_seq(&watcher, seq).await;
    let (sseq, view) = server_view(&server, id).await;
    assert_eq!(sseq, seq);
    assert_eq!(
        page_view(&watcher).await,
        view,
        "the page's patches agree with the server's"
    );
    assert_eq!(page_scores(&watcher).await, scores(&view));
    let tiles = watcher
        .eval("document.querySelectorAll('#board .placed').length")
        .await;
    assert_eq!(
        tiles,
        json!(view["board"].as_object().map(|b| b.len()).unwrap_or(0))
    );
    watcher.screenshot("random-game-spectator").await;
}

/// A France-map match (issue 10) with a forced pile and chip layout: the start tile on Nancy, a
/// light blue 2 on (15,11) beside it, two more chips face down; base/U tiles only.
async fn create_france(server: &Server) -> MatchCreated {
    let req: CreateMatch = serde_json::from_value(json!({
        "players": ["red", "blue"],
        "modules": {"map": {
            "map": "france", "chips": true, "starts": ["Nancy", "Le Mans"],
            "chip_layout": [
                {"pos": {"x": 15, "y": 11}, "grape": "light_blue", "value": 2},
                {"pos": {"x": 4, "y": 11}, "grape": "orange", "value": 1},
                {"pos": {"x": 12, "y": 8}, "grape": "purple", "value": 2}
            ]
        }},
        "draw_order": ["base/U", "base/U", "base/U", "base/U", "base/U", "base/U"]
    }))
    .expect("a create request");
    client::create_match(&server.http(), &req)
        .await
        .expect("create match")
}

/// Places the drawn tile on a legal square in the rotation the page offers first, then passes
/// the follower; returns the next seq.
async fn place_and_pass(pages: &[&Page], p: &Page, key: &str, mut seq: u64) -> u64 {
    p.click(&format!("[data-legal=\"{key}\"]")).await;
    p.wait(
        &format!("document.querySelector('[data-preview=\"{key}\"]')"),
        "preview",
    )
    .await;
    p.click("#confirm").await;
    seq += 1;
    for q in pages {
        wait_seq(q, seq).await;
    }
    p.click("#pass").await;
    seq += 1;
    for q in pages {
        wait_seq(q, seq).await;
    }
    seq
}

async fn text_of(p: &Page, js: &str) -> String {
    p.eval(js).await.as_str().unwrap_or_default().to_string()
}

/// Ticks `option` on the start page, creates the match and returns the first seat's link.
async fn create_from_start_page(p: &Page, server: &Server, option: &str) -> String {
    p.goto(&format!("{}/#test", server.http())).await;
    p.click(option).await;
    p.click("#create-form button").await;
    p.wait(
        "document.querySelectorAll('#created a').length === 3",
        "seat and watch links",
    )
    .await;
    text_of(
        p,
        "document.querySelector('#created a.seat-link').getAttribute('href')",
    )
    .await
}

/// The France map in the page: the outline, large cities, towns, border prints and face-down
/// chips are drawn; Red takes a chip by placing a tile, sees it in the hand as a wine and the
/// event in words; then sells it to the town Colmar by clicking; the points in the page are the
/// server's (P8: +2, P9: +9).
/// Red (the first page) clicks the offered sale; every page reaches `seq`, the other page's log
/// tells the sale in `words`, and Red's score, every page's scores and view are the server's.
async fn sell_by_clicking(
    server: &Server,
    match_id: uuid::Uuid,
    pages: &[&Page; 2],
    seq: u64,
    words: &str,
    red_score: u64,
) {
    pages[0].click("button.sale").await;
    for p in pages {
        wait_seq(p, seq).await;
    }
    let log = text_of(pages[1], "document.getElementById('log').textContent").await;
    assert!(log.contains(words), "log: {log}");
    let (sseq, view) = server_view(server, match_id).await;
    assert_eq!(sseq, seq);
    assert_eq!(scores(&view)[0], red_score);
    for p in pages {
        assert_eq!(page_scores(p).await, scores(&view), "scores in the page");
        assert_eq!(page_view(p).await, view, "the page's view is the server's");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn france_map_chip_taken_and_wine_sold_by_clicking() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let created = create_france(&server).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    let pages = [&red, &blue];

    // The map as the server describes it, square by square.
    let v = page_view(&red).await;
    let outline = v["map"]["info"]["outline"].as_array().expect("outline");
    let on_map: usize = outline
        .iter()
        .map(|r| {
            r.as_str()
                .unwrap_or("")
                .chars()
                .filter(|&c| c != '.')
                .count()
        })
        .sum();
    let count = |sel: &str| format!("document.querySelectorAll('{sel}').length");
    assert_eq!(red.eval(&count("[data-map-square]")).await, json!(on_map));
    assert!(red.eval(&count("[data-offmap]")).await.as_u64() > Some(0));
    assert_eq!(
        red.eval(&count("[data-city=\"Paris\"] .coat")).await,
        json!(2)
    );
    assert_eq!(red.eval(&count("[data-town]")).await, json!(15));
    assert_eq!(
        text_of(
            &red,
            "document.querySelector('[data-town=\"Colmar\"]').textContent"
        )
        .await,
        "BColmarColmar: a town buying light blue wine"
    );
    assert_eq!(red.eval(&count("[data-print]")).await, json!(13));
    assert_eq!(
        red.eval(&count("[data-print=\"16,11 E\"].print-city-coat"))
            .await,
        json!(1)
    );
    assert_eq!(red.eval(&count("[data-chip]")).await, json!(3));
    // Face-down chips say only that a chip lies there.
    let chips = text_of(
        &red,
        "document.querySelector('[data-chip=\"15,11\"]').textContent",
    )
    .await;
    assert!(
        !chips.contains("light") && chips.contains("face down"),
        "{chips}"
    );
    red.screenshot("france-map").await;

    // P8: the chip on (15,11) is taken by the tile placed there.
    let seq = place_and_pass(&pages, &red, "15,11", 0).await;
    red.wait(
        "document.querySelectorAll('[data-chip]').length === 2",
        "the chip gone from the map",
    )
    .await;
    let hand = text_of(
        &red,
        "document.querySelector('#players tr[data-player=red] td.chips').textContent",
    )
    .await;
    assert_eq!(hand, "B2 light blue wine");
    let log = text_of(&blue, "document.getElementById('log').textContent").await;
    assert!(
        log.contains("Red takes a light blue chip worth 2 at 15,11: +2."),
        "log: {log}"
    );
    assert_eq!(page_scores(&blue).await, vec![2, 0]);

    // Blue plays beside Nancy; Red places on Colmar and is offered the sale to the town.
    let seq = place_and_pass(&pages, &blue, "13,11", seq).await;
    red.click("[data-legal=\"15,10\"]").await;
    red.wait(
        "document.querySelector('[data-preview=\"15,10\"]')",
        "preview",
    )
    .await;
    red.click("#confirm").await;
    wait_seq(&red, seq + 1).await;
    red.click("#pass").await;
    wait_seq(&red, seq + 2).await;
    red.wait(
        "window.carcassonne.view.decisions.some(d => d.type === 'sell_wine')",
        "the wine decision",
    )
    .await;
    let offer = text_of(&red, "document.querySelector('button.sale').textContent").await;
    assert_eq!(
        offer,
        "Sell the light blue wine (light blue 2) to Colmar: +9"
    );
    // The keyboard reaches the sale too (N focuses it, Enter would sell); the mouse sells.
    red.key("n").await;
    red.wait(
        "document.querySelector('button.sale.focus')",
        "the sale focused",
    )
    .await;
    red.screenshot("france-sell-wine").await;
    sell_by_clicking(
        &server,
        created.match_id,
        &pages,
        seq + 3,
        "Red sells a light blue wine (light blue 2) to Colmar at 15,10: +9.",
        11, // 2 for the chip, 9 for the wine
    )
    .await;
    let hand = text_of(
        &red,
        "document.querySelector('#players tr[data-player=red] td.chips').textContent",
    )
    .await;
    assert_eq!(hand, "–", "the sold chips leave the hand");
    red.screenshot("france-wine-sold").await;
}

/// Squares off the map or against a border print may be tried on the France map; the server
/// refuses and the page says why in words (P1, P4), and nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn france_map_refused_placements_show_the_reason_in_words() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let created = create_france(&server).await;
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;

    // Off the map: the sea north of (15,11).
    red.click("[data-offmap=\"15,12\"]").await;
    red.wait(
        "document.querySelector('[data-preview=\"15,12\"]')",
        "preview",
    )
    .await;
    assert_eq!(
        text_of(&red, "document.getElementById('fit-hint').textContent").await,
        "off the map"
    );
    red.click("#confirm").await;
    red.wait("!document.getElementById('error').hidden", "the error")
        .await;
    let text = text_of(&red, "document.getElementById('error').textContent").await;
    assert!(
        text.contains("That square is not on the map.") && text.contains("(rule P1)"),
        "error shown: {text}"
    );
    red.screenshot("france-refused-off-map").await;
    assert_eq!(server_view(&server, created.match_id).await.0, 0);

    // Against a border print: base/U on (16,11) shows a road where the map prints a city with a
    // coat of arms (to Germany).
    let seq = place_and_pass(&[&red, &blue], &red, "15,11", 0).await;
    blue.wait(
        "window.carcassonne.view.decisions.some(d => d.player === 1 && d.type === 'place_tile')",
        "blue's turn",
    )
    .await;
    blue.click("[data-map-square=\"16,11\"]").await;
    blue.wait(
        "document.querySelector('[data-preview=\"16,11\"]')",
        "preview",
    )
    .await;
    assert_eq!(
        text_of(&blue, "document.getElementById('fit-hint').textContent").await,
        "does not fit here"
    );
    blue.click("#confirm").await;
    blue.wait("!document.getElementById('error').hidden", "the error")
        .await;
    let text = text_of(&blue, "document.getElementById('error').textContent").await;
    assert!(
        text.contains("The tile must show what the map prints on that border.")
            && text.contains("(rule P4)"),
        "error shown: {text}"
    );
    blue.screenshot("france-refused-border-print").await;
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, seq);
    assert_eq!(page_view(&blue).await, view);
}

/// The start page offers a test match on the France map with its chips; its seat shows the map.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_page_creates_a_match_on_the_france_map() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let p = b.page(1280, 720).await;
    let href = create_from_start_page(&p, &server, "#create-map").await;
    let seat = b.page(1280, 720).await;
    seat.goto(&format!("{}{href}", server.http())).await;
    seat.wait(
        "document.querySelector('[data-map=\"france\"]') && document.querySelectorAll('[data-chip]').length === 30",
        "the France map with 30 chips face down (P7)",
    )
    .await;
    assert_eq!(
        seat.eval("window.carcassonne.view.map.info.id").await,
        json!("france")
    );
}

/// A scenario's match written straight into the store of `data` (the server must not run yet; it
/// resumes the match when it starts): the whole setup, so the forced dispatch stack
/// (`Setup::dispatch_order`, which `POST /api/matches` does not take) and the open squares hold.
/// Returns the match id and one seat token per player.
async fn store_scenario(data: &Path, s: &Scenario) -> (uuid::Uuid, Vec<String>) {
    use server::store::{MatchRow, MatchStatus, SeatRow, Store};
    let store = Store::open(None, data).await.expect("open the store");
    let id = uuid::Uuid::new_v4();
    let row = MatchRow {
        id,
        setup: serde_json::to_string(&s.setup).expect("setup json"),
        status: MatchStatus::Active,
        rules_version: rules::REPLAY_VERSION.to_string(),
        created_at: chrono::Utc::now(),
        // The server's own setting applies.
        decision_timeout_ms: None,
        clock: None,
        wake_at: None,
    };
    let tokens: Vec<String> = (0..s.setup.players.len())
        .map(|i| format!("seat-{i}-{}", uuid::Uuid::new_v4().simple()))
        .collect();
    let seats: Vec<SeatRow> = s
        .setup
        .players
        .iter()
        .zip(&tokens)
        .enumerate()
        .map(|(i, (c, t))| SeatRow {
            seat: u8::try_from(i).expect("seat"),
            colour: serde_json::to_value(c)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            token_hash: server::token_hash(t),
        })
        .collect();
    store.create_match(&row, &seats).await.expect("store match");
    store.close().await;
    (id, tokens)
}

/// The pawns the page shows in its players' table, per seat: `[scoring, messenger]`.
async fn page_pawns(p: &Page) -> Value {
    p.eval(
        "[...document.querySelectorAll('#players td.pawns')].map(td =>
           [Number(td.dataset.scoring), Number(td.dataset.messenger)])",
    )
    .await
}

/// The pawns of the server's view, per seat: `[scoring, messenger]`.
fn view_pawns(view: &Value) -> Value {
    let pawns = view["messages"]["players"].as_array().expect("pawns");
    Value::Array(
        pawns
            .iter()
            .map(|p| json!([p["scoring"], p["messenger"]]))
            .collect(),
    )
}

/// The pawns drawn on the track, per seat: `[scoring, messenger]` from the pawn glyphs.
async fn track_pawns(p: &Page, colours: &[&str]) -> Value {
    let mut out = Vec::new();
    for c in colours {
        let at = |pawn: &str| {
            format!(
                "Number(document.querySelector('#track [data-pawn=\"{c} {pawn}\"]').dataset.at)"
            )
        };
        out.push(
            p.eval(&format!("[{}, {}]", at("scoring"), at("messenger")))
                .await,
        );
    }
    Value::Array(out)
}

/// The Messages (issue 9) in the page: one placement scores for both players, and both pawn
/// choices are open at once; each player answers by clicking in their own page (Blue, not the
/// active player, first). Red's pawn lands on a dark space and draws dispatch 6, which has
/// nothing to act on: Red takes the 2 points by clicking. A deadline in the view's agreed shape
/// shows as a countdown; the standing preference is set from the page. The pawns in the table
/// and on the track equal the server's view throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_pawn_choices_and_a_dispatch_by_clicking() {
    let Some(b) = Browser::launch().await else {
        return;
    };
    let data = tempfile::tempdir().expect("tmp");
    let s = scenario("m-m2-m3-m4-two-players-scoring-from-one-placement");
    let (id, tokens) = store_scenario(data.path(), &s).await;
    let server = Server::start(free_addr(), data.path());
    let red = seat_page(&b, &server, &tokens[0]).await;
    let blue = seat_page(&b, &server, &tokens[1]).await;
    let pages = [&red, &blue];
    let steps = canonical_steps(&s);
    // Up to the placement that scores the road for both players.
    let both = steps
        .iter()
        .position(|(_, c)| matches!(c, Command::ChoosePawn { .. }))
        .expect("a pawn choice");
    let seq = play_steps(&pages, &s, 0..both, 0).await;
    for p in pages {
        p.wait(
            "document.querySelectorAll('[data-key^=\"pawn:\"]').length === 2",
            "the pawn choice buttons",
        )
        .await;
    }
    let offer = text_of(&blue, "document.getElementById('targets').textContent").await;
    assert!(
        offer.contains("◆ Messenger 0 → 5 (dark space)") && offer.contains("● Scoring pawn 0 → 5"),
        "blue's offer: {offer}"
    );
    assert_eq!(
        text_of(&blue, "document.title").await,
        "Your choice — Carcassonne"
    );
    // The keyboard reaches the choice: the first button has the focus, N moves it.
    blue.key("n").await;
    assert_eq!(
        blue.eval("document.activeElement.dataset.key").await,
        json!("pawn:messenger")
    );
    // Blue, not the active player, has a deadline (M3 and the server's decision timeout, 30 s by
    // default): both pages show it as a countdown, Blue's beside its own buttons.
    for p in pages {
        p.wait(
            "document.querySelector('#deadlines [data-deadline=\"1\"]')",
            "Blue's deadline",
        )
        .await;
    }
    let at = red.eval("window.carcassonne.view.deadlines[0].at").await;
    let (_, server_now) = server_view(&server, id).await;
    assert_eq!(
        server_now["deadlines"][0]["at"], at,
        "the server's deadline"
    );
    let line = text_of(
        &red,
        "document.querySelector('#deadlines [data-deadline=\"1\"]').textContent",
    )
    .await;
    let left: u64 = line
        .strip_prefix("Blue has ")
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a countdown in seconds: {line}"));
    assert!((1..=30).contains(&left), "{line}");
    let mine = text_of(
        &blue,
        "document.querySelector('#targets .my-deadline').textContent",
    )
    .await;
    assert!(
        mine.contains(" s, or the server moves your scoring pawn."),
        "{mine}"
    );
    blue.screenshot("messages-pawn-choice").await;

    // Both choices, the dispatch's 2 points, Red's pawn for them: all by clicking.
    let dispatch = steps
        .iter()
        .position(|(_, c)| matches!(c, Command::DispatchPoints {}))
        .expect("the dispatch");
    let seq = play_steps(&pages, &s, both..dispatch, seq).await;
    red.wait(
        "document.querySelector('[data-key=\"dispatch:points\"]')",
        "the dispatch decision",
    )
    .await;
    assert_eq!(
        red.eval("document.querySelectorAll('[data-key^=\"dispatch:\"]').length")
            .await,
        json!(1),
        "dispatch 6 without a knight offers only the 2 points (M7)"
    );
    let hint = text_of(&red, "document.getElementById('hint').textContent").await;
    assert!(
        hint.starts_with("Dispatch 6: 2 points per knight."),
        "{hint}"
    );
    assert_eq!(
        text_of(&red, "document.getElementById('stack').textContent").await,
        "7"
    );
    red.screenshot("messages-dispatch").await;
    let seq = play_steps(&pages, &s, dispatch..steps.len(), seq).await;

    let (sseq, view) = server_view(&server, id).await;
    assert_eq!(sseq, seq);
    assert_eq!(scores(&view), vec![7, 5]);
    assert_eq!(view_pawns(&view), json!([[7, 0], [0, 5]]));
    for p in pages {
        wait_seq(p, seq).await;
        assert_eq!(page_view(p).await, view, "the page's view is the server's");
        assert_eq!(page_pawns(p).await, view_pawns(&view), "pawns in the table");
        // Every choice answered: no deadline left, and no countdown.
        assert!(view.get("deadlines").is_none(), "{view}");
        assert_eq!(
            p.eval("document.querySelectorAll('.countdown').length")
                .await,
            json!(0)
        );
        assert_eq!(
            track_pawns(p, &["red", "blue"]).await,
            view_pawns(&view),
            "pawns on the track"
        );
        assert_eq!(page_scores(p).await, scores(&view));
        assert_eq!(
            text_of(p, "document.getElementById('stack').textContent").await,
            "8"
        );
    }
    let log = text_of(&blue, "document.getElementById('log').textContent").await;
    for line in [
        "Blue's messenger moves from 0 to 5 for a feature, a dark space.",
        "Red's scoring pawn moves from 0 to 5 for a feature, a dark space.",
        "Red draws dispatch 6: 2 points per knight.",
        "Red takes 2 points instead of dispatch 6.",
        "Red's scoring pawn moves from 5 to 7 for a dispatch.",
    ] {
        assert!(log.contains(line), "{line} in the log: {log}");
    }
    // The dark spaces are marked on the track: every fifth of the 50.
    assert_eq!(
        red.eval(
            "[...document.querySelectorAll('#track .space.dark')].map(g => Number(g.dataset.space))"
        )
        .await,
        json!([0, 5, 10, 15, 20, 25, 30, 35, 40, 45])
    );

    // M3: a standing preference from the page's control reaches the server.
    blue.eval(
        "(() => { const s = document.getElementById('pref'); s.scrollIntoView(); s.focus();
           s.value = 'messenger'; s.dispatchEvent(new Event('change')); })()",
    )
    .await;
    wait_seq(&blue, seq + 1).await;
    let (_, view) = server_view(&server, id).await;
    assert_eq!(
        view["messages"]["players"][1]["preference"],
        json!("messenger")
    );
    let log = text_of(&red, "document.getElementById('log').textContent").await;
    assert!(
        log.contains("Blue will not be asked which pawn: always the messenger."),
        "{log}"
    );
    blue.screenshot("messages-after-dispatch").await;
    // Readable on a phone: nothing overflows the viewport's width.
    blue.viewport(390, 844, true).await;
    let w = blue.eval("document.documentElement.scrollWidth").await;
    assert!(w.as_u64().unwrap_or(9999) <= 390, "page width {w}");
    blue.eval("document.getElementById('messages').scrollIntoView()")
        .await;
    blue.screenshot("messages-phone").await;
}

/// Dispatches carried out by clicking (M7): dispatch 1 with two equally short roads offered as
/// buttons, one picked; dispatch 4's extra tile placed by clicking on the board, leading to a
/// second dispatch (M11); a chain (M6) drawn by clicking. Each match ends equal to the server's
/// view, with the scenario's scores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_dispatches_resolved_by_clicking() {
    let Some(b) = Browser::launch().await else {
        return;
    };
    let data = tempfile::tempdir().expect("tmp");
    let names = [
        "m-m8-dispatch-1-tie-offers-both-roads",
        "m-m11-dispatch-4-extra-tile-draws-a-second-dispatch",
        "m-m6-chain-of-two-dispatches",
    ];
    let mut stored = Vec::new();
    for n in names {
        let s = scenario(n);
        let (id, tokens) = store_scenario(data.path(), &s).await;
        stored.push((n, s, id, tokens));
    }
    let server = Server::start(free_addr(), data.path());
    for (name, s, id, tokens) in &stored {
        let red = seat_page(&b, &server, &tokens[0]).await;
        let blue = seat_page(&b, &server, &tokens[1]).await;
        let pages = [&red, &blue];
        let steps = canonical_steps(s);
        let first = steps
            .iter()
            .position(|(_, c)| {
                matches!(
                    c,
                    Command::DispatchAction { .. } | Command::DispatchPoints {}
                )
            })
            .expect("a dispatch");
        let seq = play_steps(&pages, s, 0..first, 0).await;
        red.wait(
            "document.querySelector('[data-key=\"dispatch:points\"]')",
            "the dispatch decision",
        )
        .await;
        let offered = red
            .eval("[...document.querySelectorAll('[data-key^=\"dispatch:\"]')].map(b => b.dataset.key)")
            .await;
        match *name {
            "m-m8-dispatch-1-tie-offers-both-roads" => assert_eq!(
                offered,
                json!([
                    "dispatch:-1,0 road:W",
                    "dispatch:3,0 road:E",
                    "dispatch:points"
                ])
            ),
            "m-m11-dispatch-4-extra-tile-draws-a-second-dispatch" => {
                assert_eq!(offered, json!(["dispatch:action", "dispatch:points"]));
            }
            _ => assert_eq!(offered, json!(["dispatch:points"])),
        }
        red.screenshot(&format!("{name}-offer")).await;
        let mut seq = seq;
        for (i, (_, command)) in steps.iter().enumerate().skip(first) {
            if let Command::DispatchAction { meeple: Some(m) } = command {
                // Dispatch 1's roads are ringed on the board too: pick the road there.
                assert_eq!(
                    red.eval("document.querySelectorAll('#board .meeple.pick').length")
                        .await,
                    json!(2)
                );
                let key = format!("{},{} {}", m.pos.x, m.pos.y, m.target);
                red.click(&format!("#board [data-meeple=\"{key}\"].pick"))
                    .await;
                seq += 1;
                for p in pages {
                    wait_seq(p, seq).await;
                }
                continue;
            }
            seq = play_steps(&pages, s, i..i + 1, seq).await;
            // The extra tile of dispatch 4 is an ordinary placement, named as such.
            if matches!(command, Command::DispatchAction { .. }) && name.contains("dispatch-4") {
                let hint = text_of(&red, "document.getElementById('hint').textContent").await;
                assert!(hint.starts_with("Dispatch 4, the extra tile:"), "{hint}");
                red.screenshot(&format!("{name}-extra-tile")).await;
            }
            if name.contains("chain")
                && red
                    .eval("!!document.querySelector('[data-key=\"chain:draw\"]')")
                    .await
                    == json!(true)
            {
                red.screenshot(&format!("{name}-chain")).await;
            }
        }
        let (sseq, view) = server_view(&server, *id).await;
        assert_eq!(sseq, seq);
        let expected: Vec<u64> = s
            .expect
            .scores
            .iter()
            .flatten()
            .map(|&x| u64::from(x))
            .collect();
        assert_eq!(scores(&view), expected, "{name}: the scenario's scores");
        for p in pages {
            wait_seq(p, seq).await;
            assert_eq!(page_view(p).await, view, "{name}: the page's view");
            assert_eq!(page_pawns(p).await, view_pawns(&view), "{name}: pawns");
            assert_eq!(page_scores(p).await, scores(&view));
        }
        let log = text_of(&red, "document.getElementById('log').textContent").await;
        assert!(
            log.contains("Red carries out dispatch") || name.contains("chain"),
            "{log}"
        );
        red.screenshot(&format!("{name}-done")).await;
    }
}

/// A wine sold abroad on the France map by clicking (P9, issue 10): Red takes a light blue chip
/// next to Nancy, then lays a city tile against the printed Strasbourg–Kehl border city (a coat
/// of arms) and sells the wine abroad for 5; the page's scores are the server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn france_map_wine_sold_abroad_by_clicking() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    // The random start tile on Le Mans is drawn first; then Red's base/U, Blue's, Red's base/J.
    let req: CreateMatch = serde_json::from_value(json!({
        "players": ["red", "blue"],
        "modules": {"map": {
            "map": "france", "chips": true, "starts": ["Nancy", "Le Mans"],
            "chip_layout": [
                {"pos": {"x": 15, "y": 11}, "grape": "light_blue", "value": 2},
                {"pos": {"x": 4, "y": 11}, "grape": "orange", "value": 1}
            ]
        }},
        "draw_order": ["base/U", "base/U", "base/U", "base/J", "base/U", "base/U"]
    }))
    .expect("a create request");
    let created = client::create_match(&server.http(), &req)
        .await
        .expect("create match");
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    let blue = seat_page(&b, &server, &created.seats[1].token).await;
    let pages = [&red, &blue];
    let seq = place_and_pass(&pages, &red, "15,11", 0).await;
    let seq = place_and_pass(&pages, &blue, "13,11", seq).await;
    // base/J turned 90: its city faces the border print to the east, its road Red's tile.
    red.wait(
        "window.carcassonne.view.decisions.some(d => d.player === 0 && d.type === 'place_tile')",
        "red's turn",
    )
    .await;
    click_command(
        &red,
        &Command::PlaceTile {
            pos: rules::Pos { x: 16, y: 11 },
            rotation: rules::Rotation::from_quarters(1),
        },
    )
    .await;
    wait_seq(&red, seq + 1).await;
    red.click("#pass").await;
    wait_seq(&red, seq + 2).await;
    red.wait(
        "window.carcassonne.view.decisions.some(d => d.type === 'sell_wine')",
        "the wine decision",
    )
    .await;
    let offer = text_of(&red, "document.querySelector('button.sale').textContent").await;
    assert_eq!(offer, "Sell the light blue wine (light blue 2) abroad: +5");
    red.screenshot("france-sell-abroad").await;
    sell_by_clicking(
        &server,
        created.match_id,
        &pages,
        seq + 3,
        "Red sells a light blue wine (light blue 2) abroad at 16,11: +5.",
        7, // 2 for the chip, 5 for the wine abroad
    )
    .await;
    red.screenshot("france-sold-abroad").await;
}

/// The start page offers a test match with The Messages; its seat shows the track with both
/// pawns of both players on space 0 and a full stack.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_page_creates_a_messages_match() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let p = b.page(1280, 720).await;
    let href = create_from_start_page(&p, &server, "#create-messages").await;
    let seat = b.page(1280, 720).await;
    seat.goto(&format!("{}{href}", server.http())).await;
    seat.wait(
        "document.querySelectorAll('#track [data-pawn][data-at=\"0\"]').length === 4",
        "four pawns on space 0",
    )
    .await;
    assert_eq!(
        seat.eval("window.carcassonne.view.modules.messages").await,
        json!(true)
    );
    assert_eq!(
        text_of(&seat, "document.getElementById('stack').textContent").await,
        "8"
    );
}

// The admin console (/admin).

/// Plays `steps` over the wire with the native client, one connection per seat: the admin tests
/// need a played match, not the clicks that played it.
async fn play_natively(server: &Server, created: &MatchCreated, steps: &[(u8, Command)]) -> u64 {
    let ws = format!("ws://{}/ws", server.addr);
    let mut seats = Vec::new();
    for st in &created.seats {
        let mut c = Connection::connect(&ws).await.expect("connect");
        c.auth(&st.token).await.expect("auth");
        seats.push(c);
    }
    for (i, (player, command)) in steps.iter().enumerate() {
        let out = seats[usize::from(*player)]
            .command(&format!("c{i}"), command.clone())
            .await
            .expect("command");
        assert!(
            matches!(out, client::CommandOutcome::Accepted { .. }),
            "step {i}: {out:?}"
        );
    }
    steps.len() as u64
}

/// The console at 1280×720, signed in with `token` (typed into the prompt, as a person would).
async fn admin_page(b: &Browser, server: &Server, token: &str, hash: &str) -> Page {
    let p = b.page(1280, 720).await;
    p.goto(&format!("{}/admin{hash}", server.http())).await;
    p.wait(
        "document.getElementById('login') && !document.getElementById('login').hidden",
        "the token prompt",
    )
    .await;
    p.click("#token").await;
    for c in token.chars() {
        p.key(&c.to_string()).await;
    }
    p.key("Enter").await;
    p
}

/// What the console's board draws: the placed tiles (square, tile, rotation), the meeples (key,
/// player) and the tollhouses (colour, square), from the drawing's data attributes, sorted, and
/// the scores beside it.
async fn drawn_board(p: &Page) -> Value {
    p.eval(
        "({tiles: [...document.querySelectorAll('#board [data-square]')]
             .map(g => [g.dataset.square, g.dataset.tile, Number(g.dataset.rotation)]).sort(),
           meeples: [...document.querySelectorAll('#board [data-meeple]')]
             .map(g => [g.dataset.meeple, Number(g.dataset.player)]).sort(),
           tollhouses: [...document.querySelectorAll('#board [data-tollhouse]')]
             .map(g => [g.dataset.tollhouse, g.dataset.pos]).sort(),
           scores: [...document.querySelectorAll('#at-players td.score')].map(td => Number(td.textContent))})",
    )
    .await
}

/// The same from the rules crate's own view after the first `seq` steps.
fn rules_board(s: &Scenario, steps: &[(u8, Command)], seq: usize) -> (Value, Value) {
    let (mut game, _) = rules::Game::start(s.setup.clone()).expect("setup");
    for (player, command) in &steps[..seq] {
        game.apply(*player, command.clone()).expect("a legal step");
    }
    let view = serde_json::to_value(game.view()).expect("view json");
    let mut tiles: Vec<Value> = view["board"]
        .as_object()
        .expect("board")
        .iter()
        .map(|(k, t)| json!([k, t["tile"], t["rotation"]]))
        .collect();
    let mut meeples: Vec<Value> = view["meeples"]
        .as_object()
        .expect("meeples")
        .iter()
        .map(|(k, m)| json!([k, m["player"]]))
        .collect();
    let tollhouses: Vec<Value> = view["players"]
        .as_array()
        .expect("players")
        .iter()
        .filter(|p| p.get("tollhouse").is_some())
        .map(|p| {
            let pos = &p["tollhouse"]["pos"];
            json!([p["colour"], format!("{},{}", pos["x"], pos["y"])])
        })
        .collect();
    let key = |v: &Value| v.to_string();
    tiles.sort_by_key(key);
    meeples.sort_by_key(key);
    let drawn = json!({
        "tiles": tiles, "meeples": meeples, "tollhouses": tollhouses, "scores": scores(&view),
    });
    (drawn, view)
}

/// Waits for the console's board at `seq`, then checks it: the tiles and meeples it drew and the
/// scores beside it are the rules crate's view after the first `seq` steps, and the view the page
/// drew from is exactly that view. Returns whether that seq has meeples on the board.
async fn board_is_the_rules_view(
    p: &Page,
    s: &Scenario,
    steps: &[(u8, Command)],
    seq: u64,
) -> bool {
    wait_admin_seq(p, seq).await;
    let (expected, view) = rules_board(s, steps, usize::try_from(seq).expect("seq"));
    assert_eq!(drawn_board(p).await, expected, "the board at seq {seq}");
    assert_eq!(
        p.eval("window.carcassonneAdmin.view").await,
        view,
        "the view at seq {seq}"
    );
    assert_eq!(
        p.eval("document.querySelector('#timeline li[aria-current=\"step\"]').dataset.seq")
            .await,
        json!(seq.to_string()),
        "the timeline marks seq {seq}"
    );
    !expected["meeples"].as_array().is_some_and(Vec::is_empty)
}

/// Waits until the console's board shows `seq`.
async fn wait_admin_seq(p: &Page, seq: u64) {
    p.wait(
        &format!("document.getElementById('board').dataset.seq === '{seq}'"),
        &format!("the board at seq {seq}"),
    )
    .await;
}

async fn text(p: &Page, selector: &str) -> String {
    p.eval(&format!(
        "(e => e ? e.textContent : '')(document.querySelector({}))",
        json!(selector)
    ))
    .await
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// Clicks a timeline entry, scrolled into its pane first as a person would.
async fn click_timeline(p: &Page, seq: u64) {
    let sel = format!("#timeline li[data-seq=\"{seq}\"] button");
    p.eval(&format!(
        "document.querySelector({}).scrollIntoView({{block: 'center'}})",
        json!(sel)
    ))
    .await;
    p.click(&sel).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_console_lists_steps_and_reveals_a_played_match() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    // A finished match (The Tollkeepers: tolls paid, a tollhouse turned), and one still being
    // played.
    let s = scenario("t-t6-t9-seed-examples");
    let steps = canonical_steps(&s);
    let done = create(&server, &s).await;
    let n = play_natively(&server, &done, &steps).await;
    let t = scenario("b-b11-scoring-order-roads-cities-monasteries");
    let t_steps = canonical_steps(&t);
    let running = create(&server, &t).await;
    let half = play_natively(&server, &running, &t_steps[..t_steps.len() / 2]).await;

    let p = admin_page(&b, &server, ADMIN_TOKEN, "").await;
    // The list: both matches, with their status and seq.
    for (id, status, seq) in [
        (done.match_id, "finished", n),
        (running.match_id, "active", half),
    ] {
        let row = format!("#matches tr[data-match=\"{id}\"]");
        p.wait(
            &format!("document.querySelector('{row}')"),
            "the match listed",
        )
        .await;
        assert_eq!(text(&p, &format!("{row} .status")).await, status);
        assert_eq!(text(&p, &format!("{row} td.seq")).await, seq.to_string());
    }
    // The status filter keeps the finished one only.
    p.eval("document.getElementById('f-status').value = 'finished'")
        .await;
    p.click("#filters button").await;
    p.wait(
        &format!(
            "!document.querySelector('tr[data-match=\"{}\"]') && document.querySelector('tr[data-match=\"{}\"]')",
            running.match_id, done.match_id
        ),
        "the filtered list",
    )
    .await;
    p.screenshot("admin-list").await;

    // One match: opened from the list, at its last seq.
    p.click(&format!("tr[data-match=\"{}\"] a", done.match_id))
        .await;
    wait_admin_seq(&p, n).await;
    let items = p
        .eval("document.querySelectorAll('#timeline li[data-seq]').length")
        .await;
    assert_eq!(items, json!(n + 1), "the opening and every command");
    let timeline = text(&p, "#timeline").await;
    assert!(
        timeline.contains("Game over")
            && timeline.contains("Green's road at 1,0 paid Red's tollhouse 7."),
        "events in words: {timeline}"
    );
    assert!(
        timeline.contains("places the tile at"),
        "commands in words: {timeline}"
    );

    // Step the board: a timeline click, the stepper's buttons, the slider, the keyboard. At each
    // seq the board drawn is the rules crate's own view after that many commands, and the view
    // the page drew from is exactly that view.
    let mid = n / 2;
    let mut seen_meeples = false;
    click_timeline(&p, mid).await;
    seen_meeples |= board_is_the_rules_view(&p, &s, &steps, mid).await;
    p.click("#seq-prev").await;
    seen_meeples |= board_is_the_rules_view(&p, &s, &steps, mid - 1).await;
    p.click("#seq-first").await;
    seen_meeples |= board_is_the_rules_view(&p, &s, &steps, 0).await;
    p.click("#seq-next").await;
    seen_meeples |= board_is_the_rules_view(&p, &s, &steps, 1).await;
    p.click("#seq-last").await;
    seen_meeples |= board_is_the_rules_view(&p, &s, &steps, n).await;
    // The slider, as dragging it sets it.
    for seq in [3, mid + 1, n - 2] {
        p.eval(&format!(
            "(r => {{ r.value = '{seq}'; r.dispatchEvent(new Event('input')); }})(document.getElementById('seq'))"
        ))
        .await;
        seen_meeples |= board_is_the_rules_view(&p, &s, &steps, seq).await;
    }
    assert!(seen_meeples, "some seq shows meeples");
    assert!(
        p.eval("document.querySelectorAll('#board [data-tollhouse]').length")
            .await
            .as_u64()
            > Some(0),
        "a tollhouse drawn"
    );
    // The keyboard (from n - 2): ←, → and End step when the focus is not in a field.
    p.eval("document.activeElement.blur()").await;
    for (key, code, seq) in [
        ("ArrowLeft", 37, n - 3),
        ("ArrowRight", 39, n - 2),
        ("End", 35, n),
    ] {
        for kind in ["keyDown", "keyUp"] {
            p.call(
                "Input.dispatchKeyEvent",
                json!({"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code}),
            )
            .await;
        }
        wait_admin_seq(&p, seq).await;
    }

    // The secrets of a finished match: the pile after the first draw is the scenario's own.
    p.click("#reveal").await;
    p.wait(
        "document.querySelector('#secrets [data-pile=\"start\"]')",
        "the secrets",
    )
    .await;
    let pile = p
        .eval("[...document.querySelectorAll('#secrets [data-pile=\"start\"] li')].map(li => li.textContent)")
        .await;
    let order = s.setup.draw_order.clone().expect("a forced pile");
    assert_eq!(pile, json!(order[1..]), "the start pile, in order");
    assert!(!text(&p, "#seed").await.is_empty(), "the seed");
    p.wait(
        "document.querySelector('#m-trail li[data-action=\"secrets\"][data-outcome=\"ok\"]')",
        "the reveal in the audit trail",
    )
    .await;
    // The export: downloaded with the token, and audited.
    p.click("#download").await;
    p.wait(
        "Number(document.getElementById('download').dataset.downloaded) > 0",
        "the scenario downloaded",
    )
    .await;
    p.wait(
        "document.querySelector('#m-trail li[data-action=\"scenario\"]')",
        "the export in the audit trail",
    )
    .await;
    // The README's picture: the command after which a road paid a tollhouse.
    click_timeline(&p, mid + 1).await;
    wait_admin_seq(&p, mid + 1).await;
    let shot = p.screenshot("admin-console").await;
    if std::env::var("UPDATE_DOCS_SCREENSHOTS").is_ok() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/admin-console.png");
        std::fs::copy(&shot, docs).expect("copy the screenshot to docs/");
    }

    // A running match: its secrets are refused, in words.
    p.eval(&format!("location.hash = '#match={}'", running.match_id))
        .await;
    wait_admin_seq(&p, half).await;
    p.click("#reveal").await;
    p.wait("document.querySelector('#secrets .refused')", "the refusal")
        .await;
    let refused = text(&p, "#secrets .refused").await;
    assert!(
        refused.contains("The match is not over yet.") && refused.contains("not_finished"),
        "{refused}"
    );
    assert_eq!(
        p.eval("document.querySelectorAll('#secrets [data-pile]').length")
            .await,
        json!(0),
        "no secret of a running match"
    );
    p.screenshot("admin-secrets-refused").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_console_says_a_wrong_token_in_words() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    // Eleven matches: two pages of ten.
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let mut ids = Vec::new();
    for _ in 0..11 {
        ids.push(create(&server, &s).await.match_id.to_string());
    }
    let p = admin_page(&b, &server, "not-the-token", "").await;
    p.wait(
        "!document.getElementById('error').hidden && !document.getElementById('login').hidden",
        "the refusal",
    )
    .await;
    let error = text(&p, "#error").await;
    assert!(
        error.contains("The admin token was refused.") && error.contains("bad_token"),
        "{error}"
    );
    // The token is in no URL, and a wrong one is not kept.
    let url = p.eval("location.href").await;
    assert!(!url.as_str().unwrap_or("").contains("not-the-token"));
    assert_eq!(
        p.eval("sessionStorage.getItem('carcassonne.admin-token')")
            .await,
        Value::Null
    );
    p.screenshot("admin-wrong-token").await;
    // The right one opens the console, and is kept for this tab only.
    p.click("#token").await;
    for c in ADMIN_TOKEN.chars() {
        p.key(&c.to_string()).await;
    }
    p.key("Enter").await;
    p.wait(
        "!document.getElementById('list').hidden && document.getElementById('matches').dataset.page === '0'",
        "the list",
    )
    .await;
    assert_eq!(
        p.eval("document.getElementById('error').hidden").await,
        json!(true)
    );

    // Paging: ten per page, newest first, then the one left; and back to the first page.
    let listed =
        "[...document.querySelectorAll('#matches tr[data-match]')].map(tr => tr.dataset.match)";
    p.eval("document.getElementById('f-limit').value = '10'")
        .await;
    p.click("#filters button").await;
    p.wait(
        "document.querySelectorAll('#matches tr[data-match]').length === 10",
        "a page of ten",
    )
    .await;
    let first = p.eval(listed).await;
    p.click("#next-page").await;
    p.wait(
        "document.getElementById('matches').dataset.page === '1'",
        "page 2",
    )
    .await;
    let second = p.eval(listed).await;
    let mut all: Vec<String> = [&first, &second]
        .iter()
        .flat_map(|v| v.as_array().cloned().unwrap_or_default())
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    assert_eq!(second.as_array().map(Vec::len), Some(1));
    assert_eq!(
        first[0].as_str(),
        ids.last().map(String::as_str),
        "newest first"
    );
    all.sort();
    ids.sort();
    assert_eq!(all, ids, "every match once across the pages");
    assert_eq!(
        p.eval("document.getElementById('next-page').disabled")
            .await,
        json!(true)
    );
    p.click("#first-page").await;
    p.wait(
        "document.getElementById('matches').dataset.page === '0'",
        "page 1 again",
    )
    .await;
    assert_eq!(p.eval(listed).await, first);
    p.screenshot("admin-paging").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_console_aborts_and_marks_away_after_confirmation() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let s = scenario("b-b6-b7-monastery-complete-9-and-incomplete");
    let steps = canonical_steps(&s);
    let created = create(&server, &s).await;
    let seq = play_natively(&server, &created, &steps[..4]).await;
    let p = admin_page(
        &b,
        &server,
        ADMIN_TOKEN,
        &format!("#match={}", created.match_id),
    )
    .await;
    wait_admin_seq(&p, seq).await;

    // Away, confirmed.
    p.click("[data-away-seat=\"1\"]").await;
    p.wait(
        "document.getElementById('confirm-dialog').open",
        "the question",
    )
    .await;
    p.click("#confirm-ok").await;
    p.wait(
        "document.querySelector('li[data-seat=\"1\"]').textContent.includes('away since')",
        "seat 1 away",
    )
    .await;
    // Abort: cancelled first (nothing changes), then confirmed.
    p.click("#abort").await;
    p.wait(
        "document.getElementById('confirm-dialog').open",
        "the question",
    )
    .await;
    let question = text(&p, "#confirm-text").await;
    assert!(question.contains("for good"), "{question}");
    p.click("#confirm-cancel").await;
    p.wait("!document.getElementById('confirm-dialog').open", "closed")
        .await;
    assert_eq!(text(&p, "#m-status").await, "active");
    p.click("#abort").await;
    p.wait(
        "document.getElementById('confirm-dialog').open",
        "the question",
    )
    .await;
    p.click("#confirm-ok").await;
    p.wait(
        "document.getElementById('m-status') && document.getElementById('m-status').textContent === 'aborted'",
        "aborted",
    )
    .await;
    p.wait(
        "document.querySelector('#m-trail li[data-action=\"abort\"][data-outcome=\"ok\"]') && document.querySelector('#m-trail li[data-action=\"away\"]')",
        "both in the audit trail",
    )
    .await;
    assert_eq!(
        p.eval("document.getElementById('abort').disabled").await,
        json!(true)
    );
    // The match refuses play now: a player's command is refused with `aborted`.
    let mut c = Connection::connect(&format!("ws://{}/ws", server.addr))
        .await
        .expect("connect");
    let refused = c.auth(&created.seats[0].token).await;
    let out = match refused {
        Ok(_) => format!(
            "{:?}",
            c.command("late", Command::Pass {})
                .await
                .expect("an answer")
        ),
        Err(e) => e.to_string(),
    };
    assert!(out.to_lowercase().contains("abort"), "{out}");
    p.screenshot("admin-aborted").await;
}

/// Plays `moves` random legal commands (the rules crate's bot, any seat's open decision) over the
/// wire; returns the seq reached (fewer when the game ends first).
async fn play_randomly(server: &Server, created: &MatchCreated, moves: u64, mut rng: u64) -> u64 {
    let id = created.match_id;
    let ws = format!("ws://{}/ws", server.addr);
    let mut seats = Vec::new();
    for st in &created.seats {
        let mut c = Connection::connect(&ws).await.expect("connect");
        c.auth(&st.token).await.expect("auth");
        seats.push(c);
    }
    let mut follower = Connection::connect(&ws).await.expect("connect");
    follower.subscribe(id, None).await.expect("subscribe");
    let mut mirror = client::Mirror::new(id);
    let mut seq = 0;
    while seq < moves {
        while mirror.seq() != Some(seq) {
            let m = tokio::time::timeout(WAIT, follower.next_message())
                .await
                .expect("a message in time")
                .expect("read")
                .expect("open");
            mirror.apply(&m).expect("mirror");
        }
        let view = mirror.view_typed().expect("view").expect("some");
        if view.finished {
            break;
        }
        let (player, command) =
            rules::bot::random_move_from(&view.decisions, || rules::bot::splitmix64(&mut rng))
                .expect("a move");
        let out = seats[usize::from(player)]
            .command(&format!("r{seq}"), command)
            .await
            .expect("command");
        assert!(
            matches!(out, client::CommandOutcome::Accepted { .. }),
            "{out:?}"
        );
        seq += 1;
    }
    seq
}

/// A match with every module the page draws (The Messages, the France map and its chips): at
/// each seq the console's view is `GET /state`'s, and its board draws that view's tiles,
/// meeples and face-down chips.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_console_steps_a_messages_match_on_the_france_map() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let req: CreateMatch = serde_json::from_value(json!({
        "players": ["red", "blue"],
        "modules": { "messages": true, "map": { "map": "france", "chips": true } },
    }))
    .expect("request");
    let created = client::create_match(&server.http(), &req)
        .await
        .expect("create");
    let n = play_randomly(&server, &created, 40, 11).await;
    let id = created.match_id;
    let p = admin_page(&b, &server, ADMIN_TOKEN, &format!("#match={id}")).await;
    wait_admin_seq(&p, n).await;
    for seq in [0, 1, n / 3, n / 2, n - 1, n] {
        p.eval(&format!(
            "(r => {{ r.value = '{seq}'; r.dispatchEvent(new Event('input')); }})(document.getElementById('seq'))"
        ))
        .await;
        wait_admin_seq(&p, seq).await;
        // The server's answer, asked from the page with the token it keeps.
        let state = p
            .eval(&format!(
                "fetch('/api/admin/matches/{id}/state?seq={seq}', {{headers: {{authorization:
                   'Bearer ' + sessionStorage.getItem('carcassonne.admin-token')}}}}).then(r => r.json())"
            ))
            .await;
        let view = &state["view"];
        assert_eq!(state["seq"], json!(seq));
        assert_eq!(
            &p.eval("window.carcassonneAdmin.view").await,
            view,
            "the view at seq {seq}"
        );
        let drawn = drawn_board(&p).await;
        let tiles = view["board"].as_object().map_or(0, |b| b.len());
        let meeples = view["meeples"].as_object().map_or(0, |m| m.len());
        assert_eq!(drawn["tiles"].as_array().map(Vec::len), Some(tiles));
        assert_eq!(drawn["meeples"].as_array().map(Vec::len), Some(meeples));
        assert_eq!(drawn["scores"], json!(scores(view)));
        let chips = view["map"]["chips"].as_array().map_or(0, Vec::len);
        assert_eq!(
            p.eval("document.querySelectorAll('#board [data-chip]').length")
                .await,
            json!(chips),
            "face-down chips at seq {seq}"
        );
        let pawns = text(&p, "#at-players").await;
        assert!(pawns.contains('●') && pawns.contains('◆'), "{pawns}");
    }
    p.screenshot("admin-france-messages").await;
}

/// Game clocks in the page: one per player, the running one counting down with no diff from the
/// server; when Red's bank runs out the server plays Red's turn and the page offers "I'm back";
/// after the click (a command the rules refuse, no error shown) Red's next turn waits for Red,
/// who has the increment of the turn played for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clocks_count_down_and_an_away_player_comes_back() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let req = CreateMatch {
        players: vec![rules::Colour::Red, rules::Colour::Blue],
        modules: Default::default(),
        meeples: None,
        draw_order: None,
        clock: Some(protocol::ClockSettings {
            bank_ms: 10_000,
            increment_ms: 5_000,
        }),
    };
    let created = client::create_match(&server.http(), &req)
        .await
        .expect("create");
    let red = seat_page(&b, &server, &created.seats[0].token).await;
    red.wait(
        "!document.getElementById('clock-head').hidden && document.querySelectorAll('.clock').length === 2",
        "two clocks",
    )
    .await;
    let first = text_of(&red, "document.querySelector('.clock.running').textContent").await;
    assert!(first.starts_with("0:"), "{first}");
    red.wait(
        &format!("document.querySelector('.clock.running').textContent !== '{first}'"),
        "the countdown",
    )
    .await;
    assert_eq!(
        page_seq(&red).await,
        Some(0),
        "counted in the page, no diff"
    );
    red.screenshot("clocks").await;

    // Red does nothing: the server plays Red's turn, and the page says so.
    red.wait(
        "!document.getElementById('away-row').hidden",
        "the away row",
    )
    .await;
    let red_clock = text_of(&red, "document.querySelectorAll('.clock')[0].textContent").await;
    assert!(red_clock.ends_with("(away)"), "{red_clock}");
    red.click("#back").await;
    red.wait("document.getElementById('away-row').hidden", "back")
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        red.eval("document.getElementById('error').hidden").await,
        json!(true),
        "the expected refusal is not shown"
    );

    // Blue plays its turn from a native client; Red's next turn is Red's again.
    let mut blue = Connection::connect(&format!("ws://{}/ws", server.addr))
        .await
        .expect("connect");
    blue.auth(&created.seats[1].token).await.expect("auth");
    let mut n = 0;
    loop {
        let view = page_view(&red).await;
        if view["active"] != 1 {
            break;
        }
        let decisions: Vec<rules::Decision> =
            serde_json::from_value(view["decisions"].clone()).expect("decisions");
        let (_, cmd) = rules::bot::random_move_from(&decisions, || 7).expect("a move");
        n += 1;
        match blue.command(&format!("b{n}"), cmd).await.expect("answer") {
            client::CommandOutcome::Accepted { seq, .. } => wait_seq(&red, seq).await,
            other => panic!("refused: {other:?}"),
        }
    }
    let seq = page_seq(&red).await.expect("seq");
    tokio::time::sleep(Duration::from_millis(700)).await;
    let (sseq, view) = server_view(&server, created.match_id).await;
    assert_eq!(sseq, seq, "nothing played for Red");
    assert_eq!(view["active"], 0);
    assert!(view["clocks"][0]["running_since"].is_u64(), "{view}");
    assert_eq!(page_view(&red).await, view);
}

/// Enters the lobby page as a guest called `name` (the session cookie lands in the page's own
/// browser context) and waits for the lobby list.
async fn guest_page(b: &Browser, server: &Server, name: &str, width: u32, height: u32) -> Page {
    let p = b.page(width, height).await;
    if width < 600 {
        p.viewport(width, height, true).await;
    }
    p.goto(&format!("{}/", server.http())).await;
    p.click("#guest-name").await;
    p.screenshot("lobby-entry").await;
    p.eval(&format!(
        "document.getElementById('guest-name').value = {}",
        json!(name)
    ))
    .await;
    p.click("#guest-form button").await;
    p.wait(
        &format!("document.body.dataset.account === {}", json!(name)),
        "signed in",
    )
    .await;
    p.wait(
        "document.getElementById('browse').dataset.loaded === 'true'",
        "the lobby list",
    )
    .await;
    p
}

/// Fills the create form and creates a lobby; returns its id once the page shows the room.
async fn create_lobby(p: &Page, name: &str, private: bool) -> String {
    p.eval(&format!(
        "document.getElementById('new-name').value = {}",
        json!(name)
    ))
    .await;
    p.click("#new-tollkeepers").await;
    p.eval("document.getElementById('new-clock').value = '300000+20000'")
        .await;
    if private {
        p.click("#new-private").await;
    }
    p.click("#create-lobby").await;
    p.wait(
        &format!(
            "document.getElementById('room-name').textContent === {} && document.querySelectorAll('#seats tr').length === 2",
            json!(name)
        ),
        "the new lobby's room",
    )
    .await;
    text_of(
        p,
        "new URLSearchParams(location.hash.slice(1)).get('lobby')",
    )
    .await
}

/// Both seats ready, the host starts, both pages land in the match on their own seat.
async fn ready_and_start(host: &Page, guest: &Page) {
    for p in [host, guest] {
        p.click("#ready").await;
        p.wait(
            "document.getElementById('ready').textContent === 'Not ready'",
            "marked ready",
        )
        .await;
    }
    host.wait("!document.getElementById('start').disabled", "all ready")
        .await;
    host.click("#start").await;
    for (seat, p) in [host, guest].into_iter().enumerate() {
        p.wait(
            &format!("window.carcassonne && window.carcassonne.view && window.carcassonne.seat === {seat}"),
            "the match, seated",
        )
        .await;
    }
}

/// The player to move places the first legal placement by clicking, then passes the meeple.
async fn click_first_legal(p: &Page) {
    let d = p
        .eval("window.carcassonne.view.decisions.find(d => d.type === 'place_tile')")
        .await;
    let placement = &d["placements"][0];
    let cmd: Command = serde_json::from_value(json!({
        "type": "place_tile",
        "pos": placement["pos"],
        "rotation": placement["rotations"][0],
    }))
    .expect("a place_tile command");
    let seq = page_seq(p).await.expect("seq");
    click_command(p, &cmd).await;
    wait_seq(p, seq + 1).await;
    p.wait(
        "window.carcassonne.view.decisions.some(d => d.type === 'place_follower') || window.carcassonne.view.turn > 1",
        "the follower decision",
    )
    .await;
    if p.eval("window.carcassonne.view.decisions.some(d => d.type === 'place_follower')")
        .await
        == json!(true)
    {
        click_command(p, &Command::Pass {}).await;
        wait_seq(p, seq + 2).await;
    }
}

/// Issue 13 with issue 12's lobbies: two guests in separate browser contexts (separate cookie
/// jars) meet in a lobby from the list, get ready, the host starts, and both pages play their
/// seat (taken with the session cookie) by clicking; a spectator then watches the running public
/// match from the list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lobby_guests_meet_start_and_play_and_a_spectator_watches() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let ann = guest_page(&b, &server, "Ann", 1280, 720).await;
    let lobby = create_lobby(&ann, "Friday game", false).await;
    // The host puts a bot on the free seat and takes it off again.
    ann.click("#bot-1").await;
    let seat1 = "document.querySelector('#seats tr[data-seat=\"1\"]').textContent";
    ann.wait(&format!("{seat1}.includes('Bot')"), "the bot seated")
        .await;
    ann.click("#kick-1").await;
    ann.wait(&format!("{seat1}.includes('free')"), "the bot removed")
        .await;
    // Bob, on a phone, finds the lobby in the list (filtered by module and free seats) and joins.
    let bob = guest_page(&b, &server, "Bob", 390, 844).await;
    bob.eval("document.getElementById('filter-module').value = 'tollkeepers'; document.getElementById('filter-module').dispatchEvent(new Event('change'))").await;
    bob.wait(
        &format!("document.querySelector('button[data-lobby=\"{lobby}\"]')"),
        "the lobby listed",
    )
    .await;
    bob.screenshot("lobby-list-phone").await;
    bob.click(&format!("button[data-lobby=\"{lobby}\"]")).await;
    for p in [&ann, &bob] {
        p.wait(
            "(rows => rows.length === 2 && rows.every(r => !r.textContent.includes('free')))([...document.querySelectorAll('#seats tr')])",
            "both seats taken",
        )
        .await;
    }
    assert!(
        text_of(&bob, "document.getElementById('seats').textContent")
            .await
            .contains("Ann (host)")
    );
    // Bob picks pink; Ann's page shows it (pushed over her WebSocket).
    bob.eval("(s => { s.value = 'pink'; s.dispatchEvent(new Event('change')); })(document.getElementById('my-colour'))").await;
    ann.wait(
        "document.querySelector('#seats tr[data-seat=\"1\"] .swatch').title === 'Pink'",
        "Bob's colour pushed",
    )
    .await;
    ann.screenshot("lobby-room").await;
    ready_and_start(&ann, &bob).await;
    assert_eq!(
        bob.eval("window.carcassonne.view.players[1].colour").await,
        json!("pink")
    );
    assert_eq!(
        ann.eval("window.carcassonne.view.modules.tollkeepers")
            .await,
        json!(true)
    );
    // One move each, by clicking.
    click_first_legal(&ann).await;
    let seq = page_seq(&ann).await.expect("seq");
    wait_seq(&bob, seq).await;
    click_first_legal(&bob).await;
    let seq = page_seq(&bob).await.expect("seq");
    wait_seq(&ann, seq).await;
    assert_eq!(page_view(&ann).await, page_view(&bob).await);
    bob.screenshot("lobby-match-phone").await;

    // A spectator (another guest) sees the running match in the list and watches it.
    let eve = guest_page(&b, &server, "Eve", 1280, 720).await;
    eve.wait(
        "document.querySelector('#running a')",
        "the running match listed",
    )
    .await;
    eve.screenshot("lobby-list").await;
    eve.click("#running a").await;
    eve.wait(
        "window.carcassonne && window.carcassonne.view",
        "the watched match",
    )
    .await;
    wait_seq(&eve, seq).await;
    assert_eq!(eve.eval("window.carcassonne.seat").await, json!(null));
    assert_eq!(page_view(&eve).await, page_view(&ann).await);
    eve.screenshot("lobby-spectator").await;

    // Bob logs out everywhere (as from another tab): the server closes his table's connection
    // (4002), and the page says so instead of reconnecting to a seat it no longer holds.
    assert_eq!(
        bob.eval("document.body.dataset.status").await,
        json!("live")
    );
    bob.eval("fetch('/api/sessions', { method: 'DELETE' }).then((r) => r.status)")
        .await;
    bob.wait(
        "document.body.dataset.status === 'signed_out'",
        "the page signed out",
    )
    .await;
    assert!(
        text_of(&bob, "document.getElementById('status').textContent")
            .await
            .contains("signed out")
    );
    // Ann's table goes on.
    click_first_legal(&ann).await;
    let next = page_seq(&ann).await.expect("seq");
    assert!(next > seq);
    wait_seq(&eve, next).await;

    // The admin console names the accounts that hold the seats, in the list and the match.
    let match_id = ann.eval("window.carcassonne.matchId").await;
    let match_id = match_id.as_str().expect("the match id");
    let admin = admin_page(&b, &server, ADMIN_TOKEN, "").await;
    let row = format!("document.querySelector('#matches tr[data-match=\"{match_id}\"]')");
    admin.wait(&row, "the match listed").await;
    let listed = text_of(&admin, &format!("{row}.textContent")).await;
    assert!(listed.contains("Ann") && listed.contains("Bob"), "{listed}");
    admin
        .goto(&format!("{}/admin#match={match_id}", server.http()))
        .await;
    admin
        .wait(
            "document.querySelectorAll('#seats li').length === 2",
            "the seats",
        )
        .await;
    assert_eq!(
        admin.eval("[...document.querySelectorAll('#seats li')].map((li) => li.textContent.split(')')[1].split('away')[0].split('present')[0].trim())").await,
        json!([": Ann", ": Bob"])
    );
}

/// A session revoked while its lobby room is open (logged out in another tab): the server closes
/// the room's connection (4002) and the page starts again at the entry form, signed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lobby_room_signs_out_when_its_session_is_revoked() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let ann = guest_page(&b, &server, "Ann", 1280, 720).await;
    create_lobby(&ann, "Short night", false).await;
    assert!(ann.eval("document.getElementById('entry').hidden").await == json!(true));
    ann.eval("fetch('/api/sessions', { method: 'DELETE' }).then((r) => r.status)")
        .await;
    ann.wait(
        "document.getElementById('entry') && !document.getElementById('entry').hidden",
        "the entry form again",
    )
    .await;
    assert_eq!(
        ann.eval("document.body.dataset.account").await,
        json!(""),
        "signed out"
    );
}

/// A private lobby is not listed; its invite link seats a guest; a wrong code is refused in words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lobby_private_needs_its_invite_code() {
    let Some((b, _data, server)) = browser_and_server().await else {
        return;
    };
    let ann = guest_page(&b, &server, "Ann", 1280, 720).await;
    let lobby = create_lobby(&ann, "Club night", true).await;
    let link = text_of(&ann, "document.getElementById('room-link').value").await;
    assert!(link.contains(&format!("#lobby={lobby}&code=")), "{link}");
    let shot = ann.screenshot("lobby").await;
    if std::env::var("UPDATE_DOCS_SCREENSHOTS").is_ok() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/lobby.png");
        std::fs::copy(&shot, docs).expect("copy the screenshot to docs/");
    }

    let bob = registered_page(&b, &server, "Bob", "a long enough secret").await;
    assert_eq!(
        bob.eval(&format!(
            "!!document.querySelector('[data-lobby=\"{lobby}\"]')"
        ))
        .await,
        json!(false),
        "a private lobby is not listed"
    );
    // A wrong code: refused, in words.
    bob.goto(&format!("{}/#lobby={lobby}&code=WRONG", server.http()))
        .await;
    bob.wait(
        "!document.getElementById('lobby-error').hidden",
        "the refusal",
    )
    .await;
    let refused = text_of(&bob, "document.getElementById('lobby-error').textContent").await;
    assert!(refused.contains("invite code"), "{refused}");
    // The invite link, pasted in the list's form, opens the room; Bob sits down.
    bob.goto(&format!("{}/", server.http())).await;
    bob.wait(
        "document.getElementById('browse').dataset.loaded === 'true'",
        "the list",
    )
    .await;
    bob.eval(&format!(
        "document.getElementById('invite-link').value = {}",
        json!(link)
    ))
    .await;
    bob.click("#invite-form button").await;
    bob.click("#sit-1").await;
    ann.wait(
        "document.querySelector('#seats tr[data-seat=\"1\"]').textContent.includes('Bob')",
        "Bob seated, pushed to Ann",
    )
    .await;
    // The host kicks Bob: his page says so and shows the seat free; he sits down again.
    ann.click("#kick-1").await;
    bob.wait(
        "document.getElementById('lobby-error').textContent.includes('removed you') && document.querySelector('#seats tr[data-seat=\"1\"]').textContent.includes('free')",
        "Bob told he was removed",
    )
    .await;
    bob.click("#sit-1").await;
    ann.wait(
        "document.querySelector('#seats tr[data-seat=\"1\"]').textContent.includes('Bob')",
        "Bob seated again",
    )
    .await;
    bob.wait("document.getElementById('ready')", "Bob's controls back")
        .await;
    ready_and_start(&ann, &bob).await;
    bob.screenshot("lobby-private-match").await;

    // Its match is watched only with the code.
    let id = text_of(&ann, "window.carcassonne.matchId").await;
    let code = link.rsplit("code=").next().unwrap_or_default().to_string();
    let eve = b.page(1280, 720).await;
    eve.goto(&format!("{}/watch/{id}", server.http())).await;
    eve.wait("!document.getElementById('error').hidden", "the refusal")
        .await;
    let refused = text_of(&eve, "document.getElementById('error').textContent").await;
    assert!(refused.contains("invite"), "{refused}");
    assert_eq!(eve.eval("window.carcassonne.view").await, json!(null));
    eve.goto(&format!("{}/watch/{id}#code={code}", server.http()))
        .await;
    eve.wait(
        "window.carcassonne && window.carcassonne.view",
        "the watched match",
    )
    .await;
    assert_eq!(page_view(&eve).await, page_view(&ann).await);
}

/// Registers `name` on the lobby page, logs out and logs in again with the password.
async fn registered_page(b: &Browser, server: &Server, name: &str, password: &str) -> Page {
    let p = b.page(1280, 720).await;
    p.goto(&format!("{}/", server.http())).await;
    let fill = format!(
        "document.getElementById('login-name').value = {}; document.getElementById('login-password').value = {}",
        json!(name),
        json!(password)
    );
    p.click("#login-name").await;
    p.eval(&fill).await;
    p.click("#register").await;
    let signed_in = format!("document.body.dataset.account === {}", json!(name));
    p.wait(&signed_in, "registered").await;
    p.click("#logout").await;
    p.wait("!document.getElementById('entry').hidden", "logged out")
        .await;
    p.eval(&fill).await;
    p.click("#login-form button").await;
    p.wait(&signed_in, "logged in again").await;
    p.wait(
        "document.getElementById('browse').dataset.loaded === 'true'",
        "the lobby list",
    )
    .await;
    p
}
