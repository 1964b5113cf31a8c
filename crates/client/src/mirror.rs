//! A client-side copy of one match's public view, kept up to date from snapshots and diffs.

use protocol::{PatchOp, Seq, ServerMessage};
use serde::Deserialize as _;
use serde_json::Value;
use uuid::Uuid;

/// Why a snapshot or diff could not be applied. The mirror is unchanged after any of them.
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    /// A diff that does not follow the mirror's seq: one was missed (or repeated). Resubscribe
    /// with `since` = [`Mirror::seq`].
    #[error("diff {got} does not follow seq {have}: expected {}", have + 1)]
    Gap { have: Seq, got: Seq },
    /// A diff arrived before any snapshot.
    #[error("diff {got} arrived before any snapshot")]
    NoSnapshot { got: Seq },
    #[error("patch of diff {seq} does not apply: {source}")]
    Patch {
        seq: Seq,
        #[source]
        source: json_patch::PatchError,
    },
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// One match's public view as JSON, with the seq it is at.
///
/// Diffs must come strictly in order (`seq` = current + 1); anything else is a [`MirrorError::Gap`]
/// and leaves the mirror as it was, so a client can resubscribe with `since` and carry on.
#[derive(Debug, Clone, PartialEq)]
pub struct Mirror {
    match_id: Uuid,
    state: Option<(Seq, Value)>,
}

impl Mirror {
    /// An empty mirror of `match_id`; it fills on the first snapshot.
    pub fn new(match_id: Uuid) -> Self {
        Mirror {
            match_id,
            state: None,
        }
    }

    pub fn match_id(&self) -> Uuid {
        self.match_id
    }

    /// The seq of the view held, once a snapshot has arrived.
    pub fn seq(&self) -> Option<Seq> {
        self.state.as_ref().map(|(seq, _)| *seq)
    }

    pub fn view(&self) -> Option<&Value> {
        self.state.as_ref().map(|(_, view)| view)
    }

    /// The view as the rules crate's type (`Ok(None)` before the first snapshot).
    pub fn view_typed(&self) -> Result<Option<rules::View>, MirrorError> {
        match self.view() {
            Some(v) => Ok(Some(rules::View::deserialize(v)?)),
            None => Ok(None),
        }
    }

    /// The view with the server's deadlines (`Ok(None)` before the first snapshot).
    pub fn match_view_typed(&self) -> Result<Option<protocol::MatchView>, MirrorError> {
        match self.view() {
            Some(v) => Ok(Some(protocol::MatchView::deserialize(v)?)),
            None => Ok(None),
        }
    }

    /// Applies a snapshot (replaces the view) or a diff of this match. Returns whether `message`
    /// was one; other messages, and those of other matches, are ignored.
    pub fn apply(&mut self, message: &ServerMessage) -> Result<bool, MirrorError> {
        match message {
            ServerMessage::Snapshot {
                match_id,
                seq,
                view,
            } if *match_id == self.match_id => {
                self.state = Some((*seq, serde_json::to_value(view)?));
                Ok(true)
            }
            ServerMessage::Diff {
                match_id,
                seq,
                patch,
                ..
            } if *match_id == self.match_id => {
                self.apply_patch(*seq, patch)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Applies the patch of diff `seq`, which must be the next one.
    pub fn apply_patch(&mut self, seq: Seq, patch: &[PatchOp]) -> Result<(), MirrorError> {
        let Some((have, view)) = self.state.as_mut() else {
            return Err(MirrorError::NoSnapshot { got: seq });
        };
        if have.checked_add(1) != Some(seq) {
            return Err(MirrorError::Gap {
                have: *have,
                got: seq,
            });
        }
        // protocol::PatchOp has json-patch's serialization, so serde converts one to the other.
        let ops: Vec<json_patch::PatchOperation> =
            serde_json::from_value(serde_json::to_value(patch)?)?;
        // json_patch::patch undoes the operations already applied when a later one fails.
        json_patch::patch(view, &ops).map_err(|source| MirrorError::Patch { seq, source })?;
        *have = seq;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::PatchOp;
    use rules::view::{PlayerView, TileView};
    use rules::{Colour, Modules, Rotation, View};
    use serde_json::json;
    use std::collections::BTreeMap;

    fn view() -> View {
        let player = |colour| PlayerView {
            colour,
            score: 0,
            meeples: 7,
            tollhouse: None,
        };
        View {
            modules: Modules::default(),
            players: vec![player(Colour::Red), player(Colour::Blue)],
            board: BTreeMap::from([(
                "0,0".to_owned(),
                TileView {
                    tile: "D".to_owned(),
                    rotation: Rotation::default(),
                },
            )]),
            meeples: BTreeMap::new(),
            pile: BTreeMap::from([("D".to_owned(), 3)]),
            pile_size: 3,
            discarded: Vec::new(),
            turn: 1,
            active: 0,
            drawn: Some("D".to_owned()),
            decisions: Vec::new(),
            finished: false,
            messages: None,
            map: None,
        }
    }

    fn snapshot(match_id: Uuid, seq: Seq) -> ServerMessage {
        ServerMessage::Snapshot {
            match_id,
            seq,
            view: Box::new(protocol::MatchView {
                view: view(),
                deadlines: Vec::new(),
                clocks: Vec::new(),
                away: Vec::new(),
            }),
        }
    }

    fn diff(match_id: Uuid, seq: Seq, patch: Vec<PatchOp>) -> ServerMessage {
        ServerMessage::Diff {
            match_id,
            seq,
            events: Vec::new(),
            patch,
        }
    }

    fn place_tile_patch() -> Vec<PatchOp> {
        vec![
            PatchOp::Add {
                path: "/board/1,0".to_owned(),
                value: json!({"tile": "D", "rotation": 90}),
            },
            PatchOp::Replace {
                path: "/active".to_owned(),
                value: json!(1),
            },
            PatchOp::Replace {
                path: "/pile/D".to_owned(),
                value: json!(2),
            },
        ]
    }

    #[test]
    fn a_diff_needs_a_snapshot_first() {
        let id = Uuid::new_v4();
        let mut m = Mirror::new(id);
        let err = m.apply(&diff(id, 1, Vec::new())).err();
        assert!(
            matches!(err, Some(MirrorError::NoSnapshot { got: 1 })),
            "{err:?}"
        );
        assert_eq!(m.seq(), None);
    }

    #[test]
    fn the_next_diff_patches_the_view() -> Result<(), MirrorError> {
        let id = Uuid::new_v4();
        let mut m = Mirror::new(id);
        assert!(m.apply(&snapshot(id, 4))?);
        assert!(m.apply(&diff(id, 5, place_tile_patch()))?);
        assert_eq!(m.seq(), Some(5));
        let typed = m.view_typed()?.ok_or(MirrorError::NoSnapshot { got: 5 })?;
        assert_eq!(typed.active, 1);
        let with = m
            .match_view_typed()?
            .ok_or(MirrorError::NoSnapshot { got: 5 })?;
        assert!(with.deadlines.is_empty());
        assert_eq!(with.view, typed);
        let add = vec![PatchOp::Add {
            path: "/deadlines".to_owned(),
            value: json!([{"player": 1, "at": 1_764_527_400_123_u64}]),
        }];
        assert!(m.apply(&diff(id, 6, add))?);
        let with = m
            .match_view_typed()?
            .ok_or(MirrorError::NoSnapshot { got: 6 })?;
        assert_eq!(
            with.deadlines,
            [protocol::Deadline {
                player: 1,
                at: 1_764_527_400_123
            }]
        );
        assert_eq!(typed.pile.get("D"), Some(&2));
        assert_eq!(
            typed.board.get("1,0").map(|t| t.rotation),
            Some(Rotation::from_quarters(1))
        );
        Ok(())
    }

    #[test]
    fn a_skipped_or_repeated_diff_is_a_gap_and_changes_nothing() -> Result<(), MirrorError> {
        let id = Uuid::new_v4();
        let mut m = Mirror::new(id);
        m.apply(&snapshot(id, 4))?;
        let before = m.clone();
        for seq in [6, 4, 3] {
            let err = m.apply(&diff(id, seq, place_tile_patch())).err();
            assert!(
                matches!(err, Some(MirrorError::Gap { have: 4, got }) if got == seq),
                "{err:?}"
            );
            assert_eq!(m, before);
        }
        Ok(())
    }

    #[test]
    fn a_failing_patch_is_undone_whole() -> Result<(), MirrorError> {
        let id = Uuid::new_v4();
        let mut m = Mirror::new(id);
        m.apply(&snapshot(id, 0))?;
        let before = m.clone();
        let mut patch = place_tile_patch();
        patch.push(PatchOp::Remove {
            path: "/meeples/0,0 road:E".to_owned(),
        });
        let err = m.apply(&diff(id, 1, patch)).err();
        assert!(
            matches!(err, Some(MirrorError::Patch { seq: 1, .. })),
            "{err:?}"
        );
        assert_eq!(m, before);
        Ok(())
    }

    #[test]
    fn a_new_snapshot_replaces_the_view() -> Result<(), MirrorError> {
        let id = Uuid::new_v4();
        let mut m = Mirror::new(id);
        m.apply(&snapshot(id, 0))?;
        m.apply(&diff(id, 1, place_tile_patch()))?;
        m.apply(&snapshot(id, 9))?;
        assert_eq!(m.seq(), Some(9));
        assert_eq!(m.view_typed()?, Some(view()));
        Ok(())
    }

    #[test]
    fn other_matches_and_messages_are_ignored() -> Result<(), MirrorError> {
        let id = Uuid::new_v4();
        let mut m = Mirror::new(id);
        assert!(!m.apply(&snapshot(Uuid::new_v4(), 3))?);
        let ack = ServerMessage::Ack {
            id: "c1".to_owned(),
            match_id: id,
            seq: 1,
        };
        assert!(!m.apply(&ack)?);
        assert_eq!(m.seq(), None);
        Ok(())
    }
}
