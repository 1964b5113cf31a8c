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
            return Err(MirrorError::Gap { have: *have, got: seq });
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
