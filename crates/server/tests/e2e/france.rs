//! Carcassonne Maps and the Map Chips of France over the wire (issue 10): a whole random match on
//! the France map with The Tollkeepers and the chips, played through real sockets to its end,
//! with every patch matching the server's view; and a raw spectator socket whose every frame is
//! scanned: a chip's face (grape and value) appears only once the chip is taken (P7, P8, B9).
//! On SQLite and on Postgres.

use crate::common::*;
use futures_util::{SinkExt, StreamExt};
use protocol::CreateMatch;
use rules::{Colour, MapSetup, Modules};
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
            })),
            ..Default::default()
        },
        meeples: None,
        draw_order: None,
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

on_both_stores!(a_whole_match_on_the_france_map);

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
