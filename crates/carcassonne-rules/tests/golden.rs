//! Golden match logs (B10, replay compatibility): whole games recorded from the engine, stored as
//! fixtures in `tests/golden/*.jsonl`, replayed here to the same events, refusals and views byte
//! for byte. A change that breaks one of these strands the unfinished matches of a running server:
//! it must come with a new `carcassonne_rules::REPLAY_VERSION`, not with new fixtures.
//!
//! Format, one JSON object per line, each written exactly as the engine serializes it:
//! - line 1: `{"setup": Setup, "events": [opening events]}`;
//! - then one line per command: `{"player": p, "command": c, "events": [...]}` when accepted, or
//!   `{"player": p, "command": c, "error": "code"}` when refused (refusals change nothing);
//! - now and then, and last: `{"view": View}`.
//!
//! Record anew (only with a new replay version): `RULES_RECORD_GOLDEN=1 cargo test -p carcassonne-rules
//! --test golden`.

use carcassonne_rules::{Colour, Command, Event, Game, PlayerId, Pos, Rotation, Setup, View, bot};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Serialize, Deserialize)]
struct Opening {
    setup: Setup,
    events: Vec<Event>,
}

#[derive(Serialize, Deserialize)]
struct Accepted {
    player: PlayerId,
    command: Command,
    events: Vec<Event>,
}

#[derive(Serialize, Deserialize)]
struct Refused {
    player: PlayerId,
    command: Command,
    error: String,
}

#[derive(Serialize, Deserialize)]
struct Snapshot {
    view: View,
}

/// A line of a log, as read back: which kind it is decides how it is replayed.
#[derive(Deserialize)]
#[serde(untagged)]
enum Line {
    Accepted(Accepted),
    Refused(Refused),
    /// Compared as text, with a fresh view serialized.
    #[allow(dead_code)]
    Snapshot(Snapshot),
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("serializes")
}

/// The recorded games: name, players, seed, The Tollkeepers, a forced draw order.
fn games() -> Vec<(String, Setup)> {
    let setup = |players: usize, seed: u64, tollkeepers: bool| {
        Setup::new(Colour::ALL[..players].to_vec(), seed).tollkeepers(tollkeepers)
    };
    let mut out = vec![
        ("base-2p-seed1".to_string(), setup(2, 1, false)),
        ("base-3p-seed2".to_string(), setup(3, 2, false)),
        ("base-5p-seed3".to_string(), setup(5, 3, false)),
        ("toll-2p-seed4".to_string(), setup(2, 4, true)),
        ("toll-4p-seed5".to_string(), setup(4, 5, true)),
        ("toll-5p-seed6".to_string(), setup(5, 6, true)),
    ];
    // A forced draw order: crossroads and monasteries first, then 40 tiles of the pile
    // by id.
    let mut order: Vec<String> = Vec::new();
    for id in [
        "base/X",
        "base/W",
        "tollkeepers/A",
        "base/B",
        "base/A",
        "tollkeepers/B",
        "base/W",
        "tollkeepers/C",
        "base/X",
    ] {
        if carcassonne_rules::catalogue().find(id).is_some() {
            order.push(id.into());
        }
    }
    let (g, _) = Game::start(setup(3, 7, true)).expect("valid setup");
    let mut rest: Vec<String> = g
        .view()
        .pile
        .into_iter()
        .flat_map(|(id, n)| std::iter::repeat_n(id.to_string(), n as usize))
        .collect();
    rest.truncate(40);
    order.extend(rest);
    out.push((
        "toll-3p-forced".to_string(),
        Setup {
            draw_order: Some(order),
            ..setup(3, 7, true)
        },
    ));
    out
}

/// Plays a random game and writes its log, with a refused command now and then.
fn record(name: &str, setup: Setup) {
    let mut lines = Vec::new();
    let (mut game, events) = Game::start(setup.clone()).expect("valid setup");
    lines.push(json(&Opening { setup, events }));
    let mut rng = 0x5EED ^ name.len() as u64;
    let mut n = 0u32;
    while let Some((player, command)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
        n += 1;
        if n.is_multiple_of(7) {
            // Out of turn, or a square that touches nothing, or the wrong phase.
            let other = ((player as usize + 1) % game.setup().players.len()) as PlayerId;
            let wrong = match n % 3 {
                0 => (other, command.clone()),
                1 => (
                    player,
                    Command::PlaceTile {
                        pos: Pos::new(40, 40),
                        rotation: Rotation::default(),
                    },
                ),
                _ if matches!(command, Command::PlaceTile { .. }) => (player, Command::Pass {}),
                _ => (
                    player,
                    Command::PlaceTile {
                        pos: Pos::new(1, 0),
                        rotation: Rotation::default(),
                    },
                ),
            };
            if let Err(e) = game.apply(wrong.0, wrong.1.clone()) {
                lines.push(json(&Refused {
                    player: wrong.0,
                    command: wrong.1,
                    error: e.code().into(),
                }));
            } else {
                panic!("{name}: {wrong:?} was meant to be refused");
            }
        }
        let events = game
            .apply(player, command.clone())
            .expect("bot moves are legal");
        lines.push(json(&Accepted {
            player,
            command,
            events,
        }));
        if n.is_multiple_of(40) {
            lines.push(json(&Snapshot { view: game.view() }));
        }
    }
    lines.push(json(&Snapshot { view: game.view() }));
    std::fs::create_dir_all(dir()).expect("golden folder");
    std::fs::write(dir().join(format!("{name}.jsonl")), lines.join("\n") + "\n").expect("write");
}

/// Replays one log and returns the first difference.
fn replay(name: &str, text: &str) -> Result<usize, String> {
    let mut lines = text.lines();
    let first = lines.next().ok_or("empty log")?;
    let opening: Opening = serde_json::from_str(first).map_err(|e| format!("line 1: {e}"))?;
    let (mut game, events) = Game::start(opening.setup.clone()).map_err(|e| e.to_string())?;
    let got = json(&Opening {
        setup: opening.setup,
        events,
    });
    if got != first {
        return Err(format!(
            "{name}:1: opening differs\n got: {got}\nwant: {first}"
        ));
    }
    let mut count = 1;
    for (i, want) in lines.enumerate() {
        let line: Line =
            serde_json::from_str(want).map_err(|e| format!("{name}:{}: {e}", i + 2))?;
        let got = match line {
            Line::Accepted(a) => match game.apply(a.player, a.command.clone()) {
                Ok(events) => json(&Accepted {
                    player: a.player,
                    command: a.command,
                    events,
                }),
                Err(e) => format!("refused: {e}"),
            },
            Line::Refused(r) => match game.apply(r.player, r.command.clone()) {
                Ok(events) => format!("accepted: {}", json(&events)),
                Err(e) => json(&Refused {
                    player: r.player,
                    command: r.command,
                    error: e.code().into(),
                }),
            },
            Line::Snapshot(_) => json(&Snapshot { view: game.view() }),
        };
        if got != want {
            return Err(format!(
                "{name}:{}: differs\n got: {got}\nwant: {want}",
                i + 2
            ));
        }
        count += 1;
    }
    if !game.is_finished() {
        return Err(format!("{name}: the log ends before the game"));
    }
    Ok(count)
}

#[test]
fn golden_logs_replay_byte_for_byte_b10() {
    if std::env::var_os("RULES_RECORD_GOLDEN").is_some() {
        for (name, setup) in games() {
            record(&name, setup);
        }
    }
    let mut checked = 0;
    for (name, _) in games() {
        let path = dir().join(format!("{name}.jsonl"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        match replay(&name, &text) {
            Ok(lines) => assert!(lines > 50, "{name}: only {lines} lines"),
            Err(m) => panic!("{m}"),
        }
        checked += 1;
    }
    assert_eq!(checked, 7);
}

#[test]
fn the_replay_version_accepts_the_versions_the_golden_logs_were_recorded_with() {
    assert!(carcassonne_rules::replays(
        carcassonne_rules::REPLAY_VERSION
    ));
    assert!(carcassonne_rules::replays("carcassonne-rules/0.1.0"));
    assert!(!carcassonne_rules::replays("carcassonne-rules/0.0.9"));
    assert!(!carcassonne_rules::replays(""));
}
