//! The example transcript of `proto/README.md` replays through a [`Mirror`].

use carcassonne_client::{Mirror, MirrorError};
use protocol::ServerMessage;

#[test]
fn the_readme_transcript_applies_in_order() -> Result<(), MirrorError> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../proto/README.md");
    let readme = std::fs::read_to_string(path).expect("proto/README.md");
    let messages: Vec<ServerMessage> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("← "))
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let Some(ServerMessage::Authenticated { match_id, .. }) = messages.get(1) else {
        panic!("the transcript's second server line is not `authenticated`");
    };
    let mut mirror = Mirror::new(*match_id);
    for m in &messages {
        mirror.apply(m)?;
    }
    assert_eq!(mirror.seq(), Some(2));
    let view = mirror
        .view_typed()?
        .ok_or(MirrorError::NoSnapshot { got: 2 })?;
    assert_eq!(view.players[0].score, 4);
    assert_eq!(view.pile.get("base/V"), Some(&8));
    assert_eq!(view.drawn.as_deref(), Some("base/V"));
    assert!(view.board.contains_key("0,1"));
    Ok(())
}
