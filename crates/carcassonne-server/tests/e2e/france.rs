//! Carcassonne Maps and the Map Chips of France over the wire: a whole random match on
//! the France map with The Tollkeepers and the chips, played through real sockets to its end,
//! with every patch matching the server's view; and a raw spectator socket whose every frame is
//! scanned: a chip's face (grape and value) appears only once the chip is taken (P7, P8, B9).
//! Then whole matches with all three seed modules (The Tollkeepers, The Messages, the chips),
//! every frame of every client scanned against what came out later: no chip's face, no pile
//! order, no dispatch stack order before its time. On SQLite and on Postgres.

use crate::common::*;
use futures_util::{SinkExt, StreamExt};
use protocol::CreateMatch;
use rules::{Colour, Command, Decision, Event, MapSetup, Modules};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

type RawSocket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// What one scan found: chip faces in places where a taken chip may show, and faces elsewhere.
#[derive(Default, Debug)]
struct Scan {
    shown: usize,
    leaks: Vec<String>,
}

/// Walks a frame: every object with a `grape` and a `value` is a chip's face. It may appear only
/// inside a `chip_taken` or `wine_sold` event, a `sell_wine` decision or one of its sales (the
/// seller's open chips), or a player's open chips (`map.hands`, also as a JSON Patch path). Towns
/// show a grape but no value.
fn scan(v: &Value, allowed: bool, path: &str, out: &mut Scan) {
    match v {
        Value::Object(o) => {
            let kind = o.get("type").and_then(Value::as_str);
            let allowed = allowed
                || matches!(kind, Some("chip_taken" | "wine_sold" | "sell_wine"))
                // One sale a `sell_wine` decision offers (also patched in alone).
                || o.contains_key("sale")
                || o
                    .get("path")
                    .and_then(Value::as_str)
                    .is_some_and(|p| p.starts_with("/map/hands"));
            if o.contains_key("grape") && o.contains_key("value") {
                if allowed {
                    out.shown += 1;
                } else {
                    out.leaks.push(format!("{path}: {v}"));
                }
            }
            for (k, child) in o {
                scan(child, allowed || k == "hands", &format!("{path}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                scan(child, allowed, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

async fn raw_spectator(server: &TestServer, match_id: uuid::Uuid) -> RawSocket {
    let stream = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let (mut ws, _) = tokio_tungstenite::client_async(server.ws(), stream)
        .await
        .expect("handshake");
    let subscribe = serde_json::to_string(&protocol::ClientMessage::Subscribe {
        match_id,
        since: None,
    })
    .expect("json");
    ws.send(Message::text(subscribe)).await.expect("subscribe");
    ws
}

/// Reads raw frames until one carries `seq` or later; scans each.
async fn read_raw_to(ws: &mut RawSocket, seq: u64, found: &mut Scan, frames: &mut Vec<Value>) {
    loop {
        let msg = tokio::time::timeout(READ_TIMEOUT, ws.next())
            .await
            .expect("a frame in time")
            .expect("the connection stays open")
            .expect("a frame");
        let Message::Text(text) = msg else { continue };
        let v: Value = serde_json::from_str(&text).expect("frames are JSON");
        scan(&v, false, "", found);
        let at = v.get("seq").and_then(Value::as_u64);
        frames.push(v);
        if at.is_some_and(|s| s >= seq) {
            return;
        }
    }
}

async fn a_whole_match_on_the_france_map(db: &TestDb) {
    let server = TestServer::start(db.config());
    let req = CreateMatch {
        players: vec![Colour::Red, Colour::Blue, Colour::Green],
        modules: Modules {
            tollkeepers: true,
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
    let created = client::create_match(&server.http(), &req)
        .await
        .expect("create match");
    let id = created.match_id;
    let mut seats = join_seats(&server, &created).await;
    let mut raw = raw_spectator(&server, id).await;
    let mut found = Scan::default();
    let mut frames = Vec::new();
    read_raw_to(&mut raw, 0, &mut found, &mut frames).await;
    for s in &mut seats {
        s.sync_first().await;
    }

    // The snapshot carries the map once, 30 chips as squares only, 9 meeples a player.
    let first = seats[0].view();
    let map = first.map.as_ref().expect("view.map on a map match");
    assert_eq!(map.info.id, "france");
    assert_eq!(map.chips.len(), 30, "P7: 30 chips lie face down");
    assert!(first.players.iter().all(|p| p.meeples == 9));
    assert!(found.leaks.is_empty(), "{:?}", found.leaks);

    let mut rng = Rng::new(0xF4A9CE);
    let mut moves = 0;
    while !seats[0].view().finished {
        let view = seats[0].view();
        let (player, cmd) = pick_move(&view, &mut rng).expect("an open decision");
        let p = &mut seats[usize::from(player)];
        let cid = p.new_id();
        let seq = match p.command(&cid, cmd).await {
            client::CommandOutcome::Accepted { seq, .. } => seq,
            client::CommandOutcome::Rejected(e) => panic!("a legal move was refused: {e:?}"),
        };
        for f in seats.iter_mut() {
            f.sync_to(seq).await;
        }
        read_raw_to(&mut raw, seq, &mut found, &mut frames).await;
        moves += 1;
        assert!(moves < 2000, "the match ends");
    }

    // No frame showed a chip's face before it was taken; taken chips did show.
    assert!(
        found.leaks.is_empty(),
        "chip faces leaked: {:?}",
        found.leaks
    );
    let taken = seats[0]
        .events
        .iter()
        .filter(|e| matches!(e, rules::Event::ChipTaken { .. }))
        .count();
    assert!(taken > 0, "chips were taken ({taken})");
    assert!(found.shown >= taken, "taken chips were shown ({found:?})");
    // The map went out once: in the first snapshot, never in a diff.
    let maps_sent = frames
        .iter()
        .filter(|f| f.to_string().contains("\"outline\""))
        .count();
    assert_eq!(maps_sent, 1, "the map is sent once");
    // Every tile lies on the map, and the mirrors agree with the server.
    let view = seats[0].view();
    let france = rules::maps::map("france").expect("built in");
    for key in view.board.keys() {
        let (x, y) = key.split_once(',').expect("x,y");
        let pos = rules::Pos::new(x.parse().expect("x"), y.parse().expect("y"));
        assert!(france.is_placeable(pos), "a tile off the map at {pos}");
    }
    let (_, server_view) = server_view(&server, id).await;
    assert_eq!(seats[0].mirror.view(), Some(&server_view));
    // Chip and wine points reached every client like any other points.
    let scores: Vec<u32> = view.players.iter().map(|p| p.score).collect();
    let mut sums = vec![0u32; scores.len()];
    for e in &seats[0].events {
        for (p, pts) in e.awards() {
            sums[usize::from(p)] += pts;
        }
    }
    assert_eq!(sums, scores);
}

/// What was secret at some seq and came out later: read back from the events once the match is
/// over, so that every frame sent before can be checked against it (invariant 4, B9, P7, M1).
#[derive(Default, Debug)]
struct Hindsight {
    /// The tiles in the order they were drawn (the pile's order), with the seq of each draw.
    tiles: Vec<(u64, String)>,
    /// The dispatches in the order they were drawn (the stack's order).
    dispatches: Vec<(u64, u64)>,
    /// Every chip taken: the seq it was turned over, its square, its face.
    chips: Vec<(u64, rules::Pos, rules::maps::Chip)>,
}

impl Hindsight {
    /// From the diffs one client received (`seq` and events of each).
    fn from_diffs(frames: &[Value]) -> Hindsight {
        let mut h = Hindsight::default();
        for f in frames {
            let Ok(protocol::ServerMessage::Diff { seq, events, .. }) =
                serde_json::from_value::<protocol::ServerMessage>(f.clone())
            else {
                continue;
            };
            for e in events {
                match e {
                    rules::Event::TileDrawn { tile, .. } => h.tiles.push((seq, tile)),
                    rules::Event::DispatchDrawn { dispatch, .. } => {
                        h.dispatches.push((seq, u64::from(dispatch)));
                    }
                    rules::Event::ChipTaken { pos, chip, .. } => h.chips.push((seq, pos, chip)),
                    _ => {}
                }
            }
        }
        h
    }

    /// Fails if `frame`, received when the client stood at `seq`, shows anything drawn or
    /// turned over after `seq`: the next three tiles or dispatches in order (either way round)
    /// in one list, or a chip's face at the square of a chip still lying there.
    fn check(&self, frame: &Value, seq: u64, at: &str) {
        let next_tiles: Vec<Value> = self
            .tiles
            .iter()
            .filter(|(s, _)| *s > seq)
            .take(3)
            .map(|(_, t)| Value::from(t.as_str()))
            .collect();
        let next_dispatches: Vec<Value> = self
            .dispatches
            .iter()
            .filter(|(s, _)| *s > seq)
            .take(3)
            .map(|&(_, d)| Value::from(d))
            .collect();
        let lying: Vec<(rules::Pos, rules::maps::Chip)> = self
            .chips
            .iter()
            .filter(|(s, ..)| *s > seq)
            .map(|&(_, p, c)| (p, c))
            .collect();
        let runs = [(&next_tiles, "pile"), (&next_dispatches, "dispatch stack")];
        walk(frame, &mut |v| match v {
            Value::Array(a) => {
                for (run, what) in runs {
                    if run.len() < 3 {
                        continue;
                    }
                    let rev: Vec<Value> = run.iter().rev().cloned().collect();
                    assert!(
                        !a.windows(3)
                            .any(|w| w == run.as_slice() || w == rev.as_slice()),
                        "{at}: the {what} order came out at seq {seq}: {v}"
                    );
                }
            }
            Value::Object(o) if o.contains_key("grape") => {
                let here = |p: &Value| {
                    let (Some(x), Some(y)) = (p.get("x"), p.get("y")) else {
                        return None;
                    };
                    Some((x.as_i64()?, y.as_i64()?))
                };
                let pos = here(v).or_else(|| o.get("pos").and_then(here));
                for (p, chip) in &lying {
                    assert_ne!(
                        pos,
                        Some((i64::from(p.x), i64::from(p.y))),
                        "{at}: the face of the chip on {p} ({chip:?}) came out at seq {seq}: {v}"
                    );
                }
            }
            _ => {}
        });
    }
}

/// Calls `f` on `v` and everything inside it.
fn walk(v: &Value, f: &mut impl FnMut(&Value)) {
    f(v);
    match v {
        Value::Object(o) => o.values().for_each(|x| walk(x, f)),
        Value::Array(a) => a.iter().for_each(|x| walk(x, f)),
        _ => {}
    }
}

/// Fails unless the pile is only counts (`pile`: tile id → count, `pile_size`) and face-down
/// chips only squares (`map.chips`: `{x, y}`), in a view or in a JSON Patch operation.
fn assert_counts_and_squares(frame: &Value, at: &str) {
    let square = |c: &Value| {
        c.as_object()
            .is_some_and(|o| o.len() == 2 && o["x"].is_i64() && o["y"].is_i64())
    };
    let counts = |p: &Value| p.as_object().is_some_and(|o| o.values().all(Value::is_u64));
    walk(frame, &mut |v| {
        let Value::Object(o) = v else { return };
        for k in ["draw_order", "pile_order", "order", "lying", "rng", "seed"] {
            assert!(!o.contains_key(k), "{at}: `{k}` was sent: {v}");
        }
        if let Some(p) = o.get("pile") {
            assert!(counts(p), "{at}: `pile` must be counts: {p}");
        }
        // The view's map (`modules.map` is the setup, where `chips` is a switch).
        let view_map = o.get("map").filter(|m| m.get("info").is_some());
        if let Some(m) = view_map.and_then(|m| m.get("chips")) {
            let all = m.as_array().is_some_and(|a| a.iter().all(square));
            assert!(all, "{at}: face-down chips must be squares only: {m}");
        }
        // A JSON Patch operation on the pile or the face-down chips.
        if let (Some(path), Some(value)) = (o.get("path").and_then(Value::as_str), o.get("value")) {
            if path == "/pile" {
                assert!(counts(value), "{at}: {v}");
            } else if path.starts_with("/pile/") {
                assert!(value.is_u64(), "{at}: {v}");
            } else if path == "/map/chips" {
                let all = value.as_array().is_some_and(|a| a.iter().all(square));
                assert!(all, "{at}: {v}");
            } else if let Some(rest) = path.strip_prefix("/map/chips/") {
                // One square, or one coordinate of it.
                let ok = match rest.split_once('/') {
                    None => square(value),
                    Some((_, "x" | "y")) => value.is_i64(),
                    Some(_) => false,
                };
                assert!(ok, "{at}: {v}");
            } else if path == "/map" {
                let chips = value
                    .get("chips")
                    .is_none_or(|c| c.as_array().is_some_and(|a| a.iter().all(square)));
                assert!(chips, "{at}: {v}");
            }
        }
    });
}

/// Scans every frame one client received: chip faces only where a taken chip may show (see
/// [`scan`]), face-down chips only as squares and the pile only as counts, nothing of the
/// dispatch stack, and nothing drawn or turned over later (`hindsight`). Returns the faces shown.
fn scan_client(frames: &[Value], hindsight: &Hindsight, who: &str) -> usize {
    let mut found = Scan::default();
    let mut seq = 0;
    for (i, f) in frames.iter().enumerate() {
        // Snapshots, diffs and acks carry the seq the client now stands at.
        if let Some(s) = f.get("seq").and_then(Value::as_u64) {
            seq = s;
        }
        let at = format!("{who} frame {i} (seq {seq})");
        scan(f, false, &at, &mut found);
        assert_no_stack(f, &at);
        assert_counts_and_squares(f, &at);
        hindsight.check(f, seq, &at);
    }
    assert!(
        found.leaks.is_empty(),
        "{who}: chip faces leaked: {:?}",
        found.leaks
    );
    found.shown
}

/// What the clients did over several matches (each run must have done each at least once).
#[derive(Default, Debug)]
struct Tally {
    chips_taken: usize,
    wines_sold: usize,
    pawn_choices_out_of_turn: usize,
    dispatches_drawn: usize,
    dispatches_answered: usize,
    tollhouses: usize,
    frames: usize,
}

/// Whole matches on the France map over the wire, with all three seed modules (The
/// Tollkeepers, The Messages, the France chips), three matches of 3, 2 and 4 players (each with
/// the server's own random seed; the 2-player one with Inns & Cathedrals and Traders & Builders
/// too), played to the end by seat clients that answer every decision of their own from their
/// own mirror: tiles, meeples, large meeples, builders, pigs and tollhouses, double turns, pawn
/// choices in other players' turns, dispatches and chains, wine sales. Every frame every client received (seats
/// and a spectator, the `welcome` on) is scanned against what came out later; the mirrors agree
/// with the server; the last view's scores are the sum of the points the events report.
async fn all_three_modules_on_the_france_map(db: &TestDb) {
    let server = TestServer::start(db.config());
    let mut tally = Tally::default();
    for (round, players) in [3usize, 2, 4].into_iter().enumerate() {
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
                // The 2-player match adds both expansions: all five modules over the wire.
                inns_cathedrals: round == 1,
                traders_builders: round == 1,
            },
            meeples: None,
            draw_order: None,
            clock: None,
        };
        let created = client::create_match(&server.http(), &req)
            .await
            .expect("create match");
        let id = created.match_id;
        let mut seats = Vec::new();
        for s in &created.seats {
            seats.push(Follower::join_recording(&server, id, Some(&s.token)).await);
        }
        let mut watchers = vec![Follower::join_recording(&server, id, None).await];
        for f in seats.iter_mut().chain(watchers.iter_mut()) {
            f.sync_first().await;
        }
        let first = watchers[0].view();
        assert_eq!(first.map.as_ref().map(|m| m.chips.len()), Some(30), "P7");
        assert!(first.messages.is_some() && first.modules.tollkeepers);

        let mut rng = Rng::new(0x0A11_0000 + round as u64);
        let mut moves = 0;
        while let Some(a) = answer_one(&mut seats, &mut watchers, &mut rng).await {
            if a.out_of_turn {
                assert!(
                    matches!(a.decision, Decision::ChoosePawn { .. }),
                    "only pawn choices fall to others: {:?}",
                    a.decision
                );
                tally.pawn_choices_out_of_turn += 1;
            }
            match a.command {
                Command::DispatchAction { .. } | Command::DispatchPoints {} => {
                    tally.dispatches_answered += 1;
                }
                Command::PlaceTollhouse { .. } => tally.tollhouses += 1,
                _ => {}
            }
            moves += 1;
            assert!(moves < 4_000, "the match must end");
        }

        let watcher = &watchers[0];
        for s in &seats {
            assert_eq!(s.events, watcher.events, "every client saw the same events");
        }
        let count = |f: fn(&Event) -> bool| watcher.events.iter().filter(|e| f(e)).count();
        let taken = count(|e| matches!(e, Event::ChipTaken { .. }));
        tally.chips_taken += taken;
        tally.wines_sold += count(|e| matches!(e, Event::WineSold { .. }));
        tally.dispatches_drawn += count(|e| matches!(e, Event::DispatchDrawn { .. }));

        // Every frame of every client, against what the events revealed by the end.
        let mut all: Vec<(String, Vec<Value>)> = Vec::new();
        for (i, f) in seats.iter_mut().enumerate() {
            all.push((format!("seat {i}"), parse_frames(f.frames())));
        }
        all.push(("spectator".into(), parse_frames(watchers[0].frames())));
        let hindsight = Hindsight::from_diffs(&all[all.len() - 1].1);
        assert!(hindsight.tiles.len() > 30 && hindsight.chips.len() == taken);
        for (who, frames) in &all {
            assert!(frames.first().is_some_and(|f| f["type"] == "welcome"));
            let shown = scan_client(frames, &hindsight, who);
            assert!(
                shown >= taken,
                "{who}: the taken chips were shown ({shown} < {taken})"
            );
            tally.frames += frames.len();
        }

        // The mirrors agree with the server; the scores are the sum of the events' points (the
        // chips' and wines' too, M17), and the final scores' event says the same.
        let view = watchers[0].view();
        assert!(view.finished);
        let (_, server_view) = server_view(&server, id).await;
        assert_eq!(watchers[0].mirror.view(), Some(&server_view));
        let scores: Vec<u32> = view.players.iter().map(|p| p.score).collect();
        let mut sums = vec![0u32; players];
        for e in &watchers[0].events {
            for (p, pts) in e.awards() {
                sums[usize::from(p)] += pts;
            }
        }
        assert_eq!(
            sums, scores,
            "the last view's scores are the events' points"
        );
        let ended = watchers[0].events.iter().find_map(|e| match e {
            Event::GameEnded { scores } => Some(scores.clone()),
            _ => None,
        });
        assert_eq!(ended, Some(scores));
        let france = rules::maps::map("france").expect("built in");
        for key in view.board.keys() {
            let (x, y) = key.split_once(',').expect("x,y");
            let pos = rules::Pos::new(x.parse().expect("x"), y.parse().expect("y"));
            assert!(france.is_placeable(pos), "P1: a tile off the map at {pos}");
        }
        eprintln!(
            "{} match {round} ({players} players): {moves} answers",
            db.kind()
        );
    }
    eprintln!("{}: {tally:?}", db.kind());
    assert!(tally.chips_taken > 0, "{tally:?}");
    assert!(
        tally.wines_sold > 0,
        "a wine was sold over the wire: {tally:?}"
    );
    assert!(tally.pawn_choices_out_of_turn > 0, "{tally:?}");
    assert!(
        tally.dispatches_drawn > 0 && tally.dispatches_answered > 0,
        "{tally:?}"
    );
}

fn parse_frames(frames: Vec<String>) -> Vec<Value> {
    frames
        .iter()
        .map(|t| serde_json::from_str(t).expect("frames are JSON"))
        .collect()
}

on_both_stores!(
    a_whole_match_on_the_france_map,
    all_three_modules_on_the_france_map
);

/// The hindsight check finds the pile's next tiles listed, and a face at a chip's square.
#[test]
#[should_panic(expected = "the pile order came out")]
fn hindsight_finds_the_next_tiles() {
    let h = Hindsight {
        tiles: ["base/A", "base/B", "base/C"]
            .iter()
            .map(|t| (5, t.to_string()))
            .collect(),
        ..Default::default()
    };
    h.check(
        &serde_json::json!({"x": ["base/C", "base/B", "base/A"]}),
        4,
        "test",
    );
}

#[test]
#[should_panic(expected = "the face of the chip")]
fn hindsight_finds_a_face_at_a_lying_chips_square() {
    let chip = rules::maps::Chip {
        grape: rules::maps::Grape::Orange,
        value: 1,
    };
    let h = Hindsight {
        chips: vec![(9, rules::Pos::new(3, 4), chip)],
        ..Default::default()
    };
    h.check(
        &serde_json::json!({"hint": {"pos": {"x": 3, "y": 4}, "grape": "orange"}}),
        8,
        "test",
    );
}

/// The scan itself: a face outside the allowed places is found.
#[test]
fn the_scan_finds_a_face_outside_the_allowed_places() {
    let mut s = Scan::default();
    let leak: Value = serde_json::json!({"type": "snapshot", "view": {"map": {
        "chips": [{"x": 1, "y": 2, "grape": "purple", "value": 2}],
        "hands": [[{"grape": "orange", "value": 1}]]}}});
    scan(&leak, false, "", &mut s);
    assert_eq!((s.shown, s.leaks.len()), (1, 1), "{s:?}");
}
