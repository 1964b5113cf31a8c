//! The client's [`Mirror`] fed server frames, one JSON frame a line, with json-patch as the
//! reference for every diff it applies.

use client::{Mirror, MirrorError};
use protocol::ServerMessage;
use serde_json::Value;
use uuid::Uuid;

/// Frames read per input.
const MAX_FRAMES: usize = 64;

/// Plays one input; see [`crate::mirror`].
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut mirror: Option<Mirror> = None;
    for line in text.lines().take(MAX_FRAMES) {
        let Ok(frame) = serde_json::from_str::<ServerMessage>(line) else {
            continue;
        };
        // The mirror follows the match of the first snapshot or diff; frames of other matches
        // must leave it alone.
        let m = mirror.get_or_insert_with(|| Mirror::new(match_of(&frame).unwrap_or(Uuid::nil())));
        let before = m.clone();
        match m.apply(&frame) {
            Ok(false) => assert_eq!(*m, before, "an ignored frame changed the mirror"),
            Ok(true) => {
                if let ServerMessage::Diff { patch, .. } = &frame {
                    agrees_with_json_patch(&before, m, patch);
                }
            }
            Err(e) => {
                assert_eq!(*m, before, "a refused frame changed the mirror ({e})");
                let _ = e.to_string();
            }
        }
        let _ = m.view_typed();
        let _ = m.match_view_typed();
    }
}

fn match_of(frame: &ServerMessage) -> Option<Uuid> {
    match frame {
        ServerMessage::Snapshot { match_id, .. } | ServerMessage::Diff { match_id, .. } => {
            Some(*match_id)
        }
        _ => None,
    }
}

/// A diff the mirror applied gives what json-patch gives on the view before it.
fn agrees_with_json_patch(before: &Mirror, after: &Mirror, patch: &[protocol::PatchOp]) {
    let (Some(old), Some(new)) = (before.view(), after.view()) else {
        panic!("a diff was applied without a view");
    };
    let ops: Vec<json_patch::PatchOperation> = match serde_json::to_value(patch)
        .map_err(MirrorError::from)
        .and_then(|v| serde_json::from_value(v).map_err(MirrorError::from))
    {
        Ok(ops) => ops,
        Err(e) => panic!("an applied patch does not convert to json-patch's ops: {e}"),
    };
    let mut reference: Value = old.clone();
    if let Err(e) = json_patch::patch_unsafe(&mut reference, &ops) {
        panic!("the mirror applied a patch json-patch refuses: {e}\n{patch:?}");
    }
    assert_eq!(
        &reference, new,
        "the mirror and json-patch disagree on {patch:?}"
    );
}
