//! Fuzz targets as plain functions of bytes, with no fuzzing engine in them: the libFuzzer
//! binaries in `libfuzzer/` call them, and so does this crate's corpus test (the checked-in
//! corpus plus a fixed-seed batch of generated inputs), which is the short run CI does.
//!
//! Every target must return for any input; a panic is a defect (an invariant broken, or a panic
//! in the code under test). `docs/fuzzing.md` says how to run them.

mod bytes;
mod game;
mod loaders;
mod mirror;
pub mod seeds;

pub use bytes::Bytes;

/// `protocol::decode_client_message` on the input as text (other bytes are not a text frame).
/// Checks: no panic; a message it accepts serializes back to JSON that decodes to the same
/// message; a refusal's text is printable.
pub fn client_message(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match protocol::decode_client_message(text) {
        Ok(msg) => {
            let json = match serde_json::to_string(&msg) {
                Ok(json) => json,
                Err(e) => panic!("an accepted message does not serialize: {e} ({msg:?})"),
            };
            match protocol::decode_client_message(&json) {
                Ok(again) => assert_eq!(again, msg, "round trip through {json}"),
                Err(e) => panic!("{json}, written from an accepted message, is refused: {e:?}"),
            }
        }
        Err(malformed) => {
            let _ = format!("{malformed:?}");
        }
    }
}

/// `client::Mirror` fed the input's lines as server frames (lines that are not a server message
/// are skipped; at most 64 frames). The mirror follows the match of the first snapshot or diff.
/// Checks: no panic; a frame it refuses (gap, diff before a snapshot, patch that does not apply)
/// or ignores leaves it exactly as it was; a diff it applies gives the same view as json-patch's
/// `patch_unsafe` on the view before (the mirror's own in-place patcher must agree with it);
/// `view_typed` and `match_view_typed` do not panic.
pub fn mirror(data: &[u8]) {
    mirror::run(data);
}

/// `rules::Game::apply` on commands from a match set up by the first byte (2–6 players,
/// The Tollkeepers, The Messages, the France map with or without chips) and the seed in the next
/// eight. Then, per byte (at most 400 commands): a legal command from `rules::bot`, the same
/// sent by another seat (or one that does not exist), or an arbitrary `rules::Command` (squares
/// near the start and at the ends of `i32`). Checks: no panic; a bot's legal command is accepted;
/// a refused command leaves `game.view()` (which holds the open decisions) unchanged; after an
/// accepted one, `Game::refresh_view` of the previous view equals `game.view()`.
pub fn game(data: &[u8]) {
    game::run(data);
}

/// `rules::tiles::parse` (the tile catalogue loader) on the input as one TOML file. Checks: an
/// error or a catalogue, never a panic; every design of an accepted catalogue is found by its id
/// and its derived properties compute.
pub fn catalogue(data: &[u8]) {
    loaders::catalogue(data);
}

/// `rules::maps::parse` (the map loader) on the input as a map file. Checks: an error or a map,
/// never a panic; on an accepted map every square of the outline and around it answers
/// `across`, `city_at`, `town_at` and `sale_abroad_sides`, the placeable count matches the
/// squares, every start is found by name, and `info` and `open_edge_squares` compute.
pub fn map(data: &[u8]) {
    loaders::map(data);
}

/// A fuzz target: any bytes in, a panic only on a defect.
pub type Target = fn(&[u8]);

/// The targets by name, as the corpus directories and the libFuzzer binaries name them.
pub const TARGETS: &[(&str, Target)] = &[
    ("client_message", client_message),
    ("mirror", mirror),
    ("game", game),
    ("catalogue", catalogue),
    ("map", map),
];
