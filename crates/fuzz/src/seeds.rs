//! Real inputs to start a corpus from: client messages as the protocol documents them and as a
//! bot plays them, server frames of real matches, the game's setups, and the data files.
//! `tests/corpus.rs` writes them into `corpus/` when asked to and runs them every time.

use protocol::{ClientMessage, MatchView, ServerMessage};
use rules::bot::{random_move, splitmix64};
use rules::{Colour, Game, Modules, Setup};
use uuid::Uuid;

const BASE: &str = include_str!("../../carcassonne-rules/data/base.toml");
const TOLLKEEPERS: &str = include_str!("../../carcassonne-rules/data/tollkeepers.toml");
const FRANCE: &str = include_str!("../../carcassonne-rules/data/maps/france.toml");

const MATCH: &str = "6f1c2a3e-8a4b-4c1d-9e2f-0123456789ab";

/// The client messages of the protocol's documentation, and some it refuses.
const MESSAGES: &[&str] = &[
    r#"{"type":"auth","token":"r3d-s3cret"}"#,
    r#"{"type":"subscribe","match_id":"6f1c2a3e-8a4b-4c1d-9e2f-0123456789ab"}"#,
    r#"{"type":"subscribe","match_id":"6f1c2a3e-8a4b-4c1d-9e2f-0123456789ab","since":12}"#,
    r#"{"type":"unsubscribe","match_id":"6f1c2a3e-8a4b-4c1d-9e2f-0123456789ab"}"#,
    r#"{"type":"command","id":"c1","command":{"type":"place_tile","pos":{"x":0,"y":1},"rotation":90}}"#,
    r#"{"type":"command","id":"c2","command":{"type":"place_meeple","target":"road:E"}}"#,
    r#"{"type":"command","id":"c3","command":{"type":"place_tollhouse","pos":{"x":2,"y":-1}}}"#,
    r#"{"type":"command","id":"c4","command":{"type":"pass"}}"#,
    r#"{"type":"command","id":"c5","command":{"type":"choose_pawn","pawn":"messenger"}}"#,
    r#"{"type":"command","id":"c6","command":{"type":"set_pawn_preference","preference":"dark_in_my_turn"}}"#,
    r#"{"type":"command","id":"c7","command":{"type":"dispatch_action","meeple":{"pos":{"x":3,"y":0},"target":"road:E"}}}"#,
    r#"{"type":"command","id":"c8","command":{"type":"sell_wine","sale":"abroad","chips":[{"grape":"orange","value":2}]}}"#,
    r#"{"type":"command","id":"c9","command":{"type":"place_tile","pos":[1,2],"rotation":90}}"#,
    r#"{"type":"command","id":"c10","command":{"type":"place_tile","pos":{"x":1e400,"y":0},"rotation":90}}"#,
    r#"{"type":"take_seat","match_id":"6f1c2a3e-8a4b-4c1d-9e2f-0123456789ab"}"#,
    r#"{"type":"watch","match_id":"6f1c2a3e-8a4b-4c1d-9e2f-0123456789ab","invite_code":"k3y","since":3}"#,
    r#"{"type":"subscribe_lobby","lobby_id":"6f1c2a3e-8a4b-4c1d-9e2f-0123456789ab"}"#,
    r#"{"type":"chat","match_id":"6f1c2a3e-8a4b-4c1d-9e2f-0123456789ab","text":"gg"}"#,
    r#"{"type":"mute","match_id":"6f1c2a3e-8a4b-4c1d-9e2f-0123456789ab","seat":1}"#,
    r#"{"type":"unmute","account_id":"6f1c2a3e-8a4b-4c1d-9e2f-0123456789ab"}"#,
];

/// The seed inputs of target `name` (empty for an unknown name).
pub fn seeds(name: &str) -> Vec<Vec<u8>> {
    match name {
        "client_message" => client_messages(),
        "mirror" => mirror_frames(),
        "game" => game_inputs(),
        "catalogue" => vec![BASE.into(), TOLLKEEPERS.into()],
        "map" => vec![FRANCE.into()],
        _ => Vec::new(),
    }
}

fn client_messages() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = MESSAGES.iter().map(|m| m.as_bytes().to_vec()).collect();
    // Commands as a bot plays them, every module on.
    for (i, command) in played(Modules::all(), 7).into_iter().take(24).enumerate() {
        let msg = ClientMessage::Command {
            id: format!("c{i}"),
            command,
        };
        if let Ok(json) = serde_json::to_string(&msg) {
            out.push(json.into_bytes());
        }
    }
    out
}

/// The commands of one bot-played match (at most 300).
fn played(modules: Modules, seed: u64) -> Vec<rules::Command> {
    let setup = Setup::new(vec![Colour::Red, Colour::Blue], seed).modules(modules);
    let Ok((mut game, _)) = Game::start(setup) else {
        return Vec::new();
    };
    let mut rng = seed;
    let mut out = Vec::new();
    while let Some((player, command)) = random_move(&game, || splitmix64(&mut rng)) {
        if out.len() >= 300 || game.apply(player, command.clone()).is_err() {
            break;
        }
        out.push(command);
    }
    out
}

/// A snapshot and the diffs after it, one frame a line, as the server sends them: for a base
/// game, one with every module, and one with a gap and a frame of another match in it.
fn mirror_frames() -> Vec<Vec<u8>> {
    let match_id = Uuid::parse_str(MATCH).unwrap_or_default();
    let mut out = Vec::new();
    for (modules, seed, skip) in [
        (Modules::default(), 1, None),
        (Modules::all(), 2, None),
        (Modules::default(), 3, Some(5)),
    ] {
        let mut lines = frames(match_id, modules, seed, 24);
        if let Some(k) = skip {
            lines.remove(k);
            if let Some(other) = frames(Uuid::nil(), Modules::default(), 4, 2).pop() {
                lines.insert(k, other);
            }
        }
        out.push(lines.join("\n").into_bytes());
    }
    out
}

/// The snapshot at seq 0 and `diffs` diffs of a bot-played match, as JSON lines.
fn frames(match_id: Uuid, modules: Modules, seed: u64, diffs: u64) -> Vec<String> {
    let setup = Setup::new(vec![Colour::Red, Colour::Blue, Colour::Green], seed).modules(modules);
    let Ok((mut game, _)) = Game::start(setup) else {
        return Vec::new();
    };
    let mut old = MatchView::from(game.view());
    let mut frames = vec![ServerMessage::Snapshot {
        match_id,
        seq: 0,
        view: Box::new(old.clone()),
    }];
    let mut rng = seed;
    for seq in 1..=diffs {
        let Some((player, command)) = random_move(&game, || splitmix64(&mut rng)) else {
            break;
        };
        let Ok(events) = game.apply(player, command) else {
            break;
        };
        let new = MatchView::from(game.view());
        let Ok(patch) = protocol::diff::match_view_patch(&old, &new) else {
            break;
        };
        frames.push(ServerMessage::Diff {
            match_id,
            seq,
            by_server: None,
            events,
            patch,
        });
        old = new;
    }
    frames
        .iter()
        .filter_map(|f| serde_json::to_string(f).ok())
        .collect()
}

/// Setups with every module combination, each followed by a run of legal moves, some wrong-seat
/// and arbitrary commands.
fn game_inputs() -> Vec<Vec<u8>> {
    [0x00u8, 0x01, 0x08, 0x10, 0x20, 0x60, 0x7B, 0x04]
        .iter()
        .enumerate()
        .map(|(i, &flags)| {
            let mut input = vec![flags];
            input.extend_from_slice(&(i as u64 + 1).to_le_bytes());
            input.extend_from_slice(&(i as u64 * 77).to_le_bytes());
            for step in 0..200u8 {
                input.push(match step % 16 {
                    5 => 2,
                    11 => 3,
                    _ => 0,
                });
                if step % 16 == 11 {
                    input.extend_from_slice(&[step, step.wrapping_mul(7), 1, 2, 3]);
                }
            }
            input
        })
        .collect()
}
