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
/// ([`crate::MatchStream`] does that by itself.)
///
/// ```
/// use carcassonne_client::protocol::ServerMessage;
/// use carcassonne_client::rules::{Colour, Game, Setup};
/// use carcassonne_client::{Mirror, MirrorError, uuid::Uuid};
/// let (game, _) = Game::start(Setup::new(vec![Colour::Red, Colour::Blue], 1))?;
/// let match_id = Uuid::new_v4();
/// let mut mirror = Mirror::new(match_id);
/// let view = Box::new(game.view().into());
/// assert!(mirror.apply(&ServerMessage::Snapshot { match_id, seq: 0, view })?);
/// assert_eq!(mirror.view_typed()?.map(|v| v.players.len()), Some(2));
/// let skipped = ServerMessage::Diff { match_id, seq: 2, events: vec![], patch: vec![], by_server: None };
/// assert!(matches!(mirror.apply(&skipped), Err(MirrorError::Gap { have: 0, got: 2 })));
/// assert_eq!(mirror.seq(), Some(0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
        self.apply_patch_owned(seq, patch.to_vec())
    }

    /// [`Mirror::apply_patch`] for a patch the caller owns: its values move into the view instead
    /// of being copied (the load generator applies every diff of every seat it plays).
    pub fn apply_patch_owned(
        &mut self,
        seq: Seq,
        mut patch: Vec<PatchOp>,
    ) -> Result<(), MirrorError> {
        let Some((have, view)) = self.state.as_mut() else {
            return Err(MirrorError::NoSnapshot { got: seq });
        };
        if have.checked_add(1) != Some(seq) {
            return Err(MirrorError::Gap {
                have: *have,
                got: seq,
            });
        }
        if fast_patch::apply(view, &mut patch).is_err() {
            // The view and `patch` are as they were. json-patch decides, and words the error, on
            // a copy (its own undo can panic on a `move`): protocol::PatchOp has json-patch's
            // serialization, so serde converts one to the other.
            let ops: Vec<json_patch::PatchOperation> =
                serde_json::from_value(serde_json::to_value(&patch)?)?;
            let mut patched = view.clone();
            json_patch::patch_unsafe(&mut patched, &ops)
                .map_err(|source| MirrorError::Patch { seq, source })?;
            *view = patched;
        }
        *have = seq;
        Ok(())
    }
}

/// RFC 6902 applied in place with the operations' own values, undone whole when one fails. It
/// follows json-patch's semantics (a test holds them to it); on failure the caller asks json-patch
/// for the error, so the two only need to agree on what succeeds.
mod fast_patch {
    use protocol::PatchOp;
    use serde_json::Value;
    use std::borrow::Cow;

    /// Why an operation failed; json-patch says it properly.
    #[derive(Debug)]
    pub struct Failed;

    /// Which pointer of operation `op` an undo step acts on.
    #[derive(Debug, Clone, Copy)]
    enum At {
        Path,
        From,
    }

    #[derive(Debug)]
    enum Undo {
        /// Add `value` back (object member or array element).
        Add(usize, At, Value),
        /// Remove what is there (`-` pops the last element).
        Remove(usize, At),
        /// Put `value` back in place.
        Replace(usize, Value),
        /// Move what is at the path back to the `from` of the operation, and put back what it
        /// replaced there (a member, or the whole document when it moved to the root).
        MoveBack(usize, Option<Value>),
    }

    /// Applies `ops` to `doc`; on failure undoes what it did and gives every taken value back to
    /// its operation, leaving both as they were.
    pub fn apply(doc: &mut Value, ops: &mut [PatchOp]) -> Result<(), Failed> {
        let mut undo = Vec::with_capacity(ops.len());
        for i in 0..ops.len() {
            if step(doc, ops, i, &mut undo).is_err() {
                for u in undo.into_iter().rev() {
                    rollback(doc, ops, u);
                }
                return Err(Failed);
            }
        }
        Ok(())
    }

    fn step(
        doc: &mut Value,
        ops: &mut [PatchOp],
        i: usize,
        undo: &mut Vec<Undo>,
    ) -> Result<(), Failed> {
        match &mut ops[i] {
            PatchOp::Add { path, value } => {
                valid(path)?;
                let v = std::mem::take(value);
                match add(doc, path, v) {
                    Ok(prev) => undo.push(match prev {
                        Some(prev) => Undo::Add(i, At::Path, prev),
                        None => Undo::Remove(i, At::Path),
                    }),
                    Err(v) => {
                        *value = v;
                        return Err(Failed);
                    }
                }
            }
            PatchOp::Remove { path } => {
                valid(path)?;
                let prev = remove(doc, path, false)?;
                undo.push(Undo::Add(i, At::Path, prev));
            }
            PatchOp::Replace { path, value } => {
                valid(path)?;
                let target = doc.pointer_mut(path).ok_or(Failed)?;
                let prev = std::mem::replace(target, std::mem::take(value));
                undo.push(Undo::Replace(i, prev));
            }
            PatchOp::Move { from, path } => {
                valid(from)?;
                valid(path)?;
                if inside(path, from) {
                    return Err(Failed);
                }
                let v = remove(doc, from, false)?;
                match add(doc, path, v) {
                    Ok(prev) => undo.push(Undo::MoveBack(i, prev)),
                    Err(v) => {
                        // Put it back where it was taken from.
                        let _ = add(doc, from, v);
                        return Err(Failed);
                    }
                }
            }
            PatchOp::Copy { from, path } => {
                valid(from)?;
                valid(path)?;
                let v = doc.pointer(from).ok_or(Failed)?.clone();
                let prev = add(doc, path, v).map_err(|_| Failed)?;
                undo.push(match prev {
                    Some(prev) => Undo::Add(i, At::Path, prev),
                    None => Undo::Remove(i, At::Path),
                });
            }
            PatchOp::Test { path, value } => {
                valid(path)?;
                if doc.pointer(path) != Some(value) {
                    return Err(Failed);
                }
            }
        }
        Ok(())
    }

    /// Undoes one step. A value that comes out of the view is the operation's own when the
    /// operation is an `add` or `replace` (it goes back into it); otherwise it is dropped.
    fn rollback(doc: &mut Value, ops: &mut [PatchOp], u: Undo) {
        let (i, out) = match u {
            Undo::Add(i, at, v) => (i, add(doc, pointer(&ops[i], at), v).ok().flatten()),
            Undo::Remove(i, at) => (i, remove(doc, pointer(&ops[i], at), true).ok()),
            Undo::Replace(i, v) => (
                i,
                doc.pointer_mut(pointer(&ops[i], At::Path))
                    .map(|t| std::mem::replace(t, v)),
            ),
            Undo::MoveBack(i, prev) => {
                let path = pointer(&ops[i], At::Path);
                let moved = match prev {
                    Some(prev) if path.is_empty() => Ok(std::mem::replace(doc, prev)),
                    Some(prev) => remove(doc, path, true).inspect(|_| {
                        let _ = add(doc, path, prev);
                    }),
                    None => remove(doc, path, true),
                };
                if let Ok(v) = moved {
                    let _ = add(doc, pointer(&ops[i], At::From), v);
                }
                (i, None)
            }
        };
        if let (Some(v), PatchOp::Add { value, .. } | PatchOp::Replace { value, .. }) =
            (out, &mut ops[i])
        {
            *value = v;
        }
    }

    fn pointer(op: &PatchOp, at: At) -> &str {
        match (op, at) {
            (PatchOp::Move { from, .. } | PatchOp::Copy { from, .. }, At::From) => from,
            (
                PatchOp::Add { path, .. }
                | PatchOp::Remove { path }
                | PatchOp::Replace { path, .. }
                | PatchOp::Move { path, .. }
                | PatchOp::Copy { path, .. }
                | PatchOp::Test { path, .. },
                _,
            ) => path,
        }
    }

    /// An RFC 6901 pointer: empty or starting with `/`, every `~` escaping `0` or `1`.
    fn valid(p: &str) -> Result<(), Failed> {
        let b = p.as_bytes();
        let escapes_ok = b
            .iter()
            .enumerate()
            .all(|(i, &c)| c != b'~' || matches!(b.get(i + 1), Some(b'0' | b'1')));
        if (p.is_empty() || p.starts_with('/')) && escapes_ok {
            Ok(())
        } else {
            Err(Failed)
        }
    }

    /// Whether `path` is strictly inside `from`, token by token.
    fn inside(path: &str, from: &str) -> bool {
        path.len() > from.len() && path.starts_with(from) && path.as_bytes()[from.len()] == b'/'
    }

    /// The parent pointer and the last token, decoded; `None` for the root.
    fn split(p: &str) -> Option<(&str, Cow<'_, str>)> {
        let at = p.rfind('/')?;
        let last = &p[at + 1..];
        let last = if last.contains('~') {
            Cow::Owned(last.replace("~1", "/").replace("~0", "~"))
        } else {
            Cow::Borrowed(last)
        };
        Some((&p[..at], last))
    }

    /// An array index as RFC 6901 spells it (`-` is `len`), within `len` (or up to it, `incl`).
    fn index(token: &str, len: usize, incl: bool) -> Option<usize> {
        let i = if token == "-" {
            len
        } else if token.is_empty()
            || (token.starts_with('0') && token != "0")
            || !token.bytes().all(|c| c.is_ascii_digit())
        {
            return None;
        } else {
            token.parse().ok()?
        };
        (i < len || (incl && i == len)).then_some(i)
    }

    /// `add`: the value it replaced (an object member, or the whole document at the root). On
    /// failure the value comes back.
    fn add(doc: &mut Value, path: &str, value: Value) -> Result<Option<Value>, Value> {
        let Some((parent, last)) = split(path) else {
            return Ok(Some(std::mem::replace(doc, value)));
        };
        match doc.pointer_mut(parent) {
            Some(Value::Object(obj)) => Ok(obj.insert(last.into_owned(), value)),
            Some(Value::Array(arr)) => match index(&last, arr.len(), true) {
                Some(i) => {
                    arr.insert(i, value);
                    Ok(None)
                }
                None => Err(value),
            },
            _ => Err(value),
        }
    }

    /// `remove`; `-` pops the last element when `allow_last` (undoing an `add` at `-`).
    fn remove(doc: &mut Value, path: &str, allow_last: bool) -> Result<Value, Failed> {
        let (parent, last) = split(path).ok_or(Failed)?;
        match doc.pointer_mut(parent) {
            Some(Value::Object(obj)) => obj.remove(last.as_ref()).ok_or(Failed),
            Some(Value::Array(arr)) if allow_last && last == "-" => arr.pop().ok_or(Failed),
            Some(Value::Array(arr)) => {
                let i = index(&last, arr.len(), false).ok_or(Failed)?;
                Ok(arr.remove(i))
            }
            _ => Err(Failed),
        }
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
            large_meeples: None,
            tollhouse: None,
            scored: Default::default(),
            builder: None,
            pig: None,
            goods: None,
            double_turn: None,
        };
        View {
            modules: Modules::default(),
            players: vec![player(Colour::Red), player(Colour::Blue)],
            board: BTreeMap::from([(
                "0,0".into(),
                TileView {
                    tile: "D".into(),
                    rotation: Rotation::default(),
                },
            )]),
            meeples: BTreeMap::new(),
            pile: BTreeMap::from([("D".into(), 3)]),
            pile_size: 3,
            discarded: Vec::new(),
            turn: 1,
            active: 0,
            drawn: Some("D".into()),
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
            view: Box::new(protocol::MatchView::from(view())),
        }
    }

    fn diff(match_id: Uuid, seq: Seq, patch: Vec<PatchOp>) -> ServerMessage {
        ServerMessage::Diff {
            match_id,
            seq,
            by_server: None,
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

    /// The in-place patch agrees with json-patch on what applies and to what, and leaves the
    /// document and the operations as they were when it fails: hand-written edge cases, then
    /// random patches over a random document.
    #[test]
    fn the_fast_patch_agrees_with_json_patch() {
        let doc = json!({
            "a": {"b": [1, 2, {"c": null}], "x/y": 1, "t~s": 2, "": 3},
            "arr": [0, 1, 2],
            "n": 7
        });
        let cases: Vec<Vec<serde_json::Value>> = vec![
            vec![json!({"op": "add", "path": "/arr/-", "value": 9})],
            vec![json!({"op": "add", "path": "/arr/3", "value": 9})],
            vec![json!({"op": "add", "path": "/arr/4", "value": 9})],
            vec![json!({"op": "add", "path": "/arr/01", "value": 9})],
            vec![json!({"op": "add", "path": "/arr/+1", "value": 9})],
            vec![json!({"op": "add", "path": "/a/x~1y", "value": 9})],
            vec![json!({"op": "add", "path": "/a/t~0s", "value": 9})],
            vec![json!({"op": "add", "path": "/a/", "value": 9})],
            vec![json!({"op": "add", "path": "", "value": [1]})],
            vec![json!({"op": "add", "path": "/n/k", "value": 1})],
            vec![json!({"op": "add", "path": "/missing/k", "value": 1})],
            vec![json!({"op": "remove", "path": "/arr/-"})],
            vec![json!({"op": "remove", "path": ""})],
            vec![json!({"op": "remove", "path": "/a/b/2/c"})],
            vec![json!({"op": "replace", "path": "", "value": 1})],
            vec![json!({"op": "replace", "path": "/arr/3", "value": 1})],
            vec![json!({"op": "replace", "path": "/a/b/0", "value": {"z": 1}})],
            vec![json!({"op": "move", "from": "/a", "path": "/a/b"})],
            vec![json!({"op": "move", "from": "/a", "path": "/ab"})],
            vec![json!({"op": "move", "from": "/arr/0", "path": "/arr/-"})],
            vec![json!({"op": "move", "from": "/arr/0", "path": "/n/x"})],
            vec![json!({"op": "move", "from": "/n", "path": "/a/b/1"})],
            vec![json!({"op": "copy", "from": "/a", "path": "/arr/1"})],
            vec![json!({"op": "copy", "from": "/a", "path": "/a/b/-"})],
            vec![json!({"op": "test", "path": "/a/b/2", "value": {"c": null}})],
            vec![json!({"op": "test", "path": "/n", "value": 7.0})],
            vec![
                json!({"op": "add", "path": "/k", "value": [1, 2]}),
                json!({"op": "add", "path": "/k/-", "value": 3}),
                json!({"op": "replace", "path": "/n", "value": "x"}),
                json!({"op": "move", "from": "/a/b", "path": "/n"}),
                json!({"op": "copy", "from": "/k", "path": "/a/x~1y"}),
                json!({"op": "remove", "path": "/arr/0"}),
                json!({"op": "test", "path": "/k/2", "value": 4}),
            ],
        ];
        for ops in cases {
            check_against_json_patch(&doc, ops);
        }
        let mut rng = 7u64;
        for _ in 0..5000 {
            let doc = random_value(&mut rng, 3);
            let n = 1 + (rules::bot::splitmix64(&mut rng) % 4) as usize;
            let ops = (0..n).map(|_| random_op(&mut rng, &doc)).collect();
            check_against_json_patch(&doc, ops);
        }
    }

    fn check_against_json_patch(doc: &serde_json::Value, ops: Vec<serde_json::Value>) {
        let Ok(ours) = serde_json::from_value::<Vec<PatchOp>>(serde_json::Value::from(ops.clone()))
        else {
            return;
        };
        let Ok(theirs) =
            serde_json::from_value::<Vec<json_patch::PatchOperation>>(serde_json::Value::from(ops))
        else {
            return;
        };
        // Without json-patch's undo, which can panic on a `move`.
        let mut expected = doc.clone();
        let their_result = json_patch::patch_unsafe(&mut expected, &theirs);
        let mut got = doc.clone();
        let mut taken = ours.clone();
        let our_result = fast_patch::apply(&mut got, &mut taken);
        assert_eq!(
            our_result.is_ok(),
            their_result.is_ok(),
            "{doc} {ours:?}: {their_result:?}"
        );
        if our_result.is_ok() {
            assert_eq!(got, expected, "{doc} {ours:?}");
        } else {
            assert_eq!(&got, doc, "{ours:?}");
            assert_eq!(taken, ours);
        }
    }

    fn pick(rng: &mut u64, n: usize) -> usize {
        (rules::bot::splitmix64(rng) % n as u64) as usize
    }

    fn random_value(rng: &mut u64, depth: u32) -> serde_json::Value {
        const KEYS: [&str; 5] = ["a", "b", "x/y", "t~s", ""];
        match pick(rng, if depth == 0 { 2 } else { 4 }) {
            0 => json!(pick(rng, 3)),
            1 => serde_json::Value::Null,
            2 => (0..pick(rng, 4))
                .map(|_| random_value(rng, depth - 1))
                .collect(),
            _ => (0..pick(rng, 4))
                .map(|_| (KEYS[pick(rng, 5)].to_owned(), random_value(rng, depth - 1)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }

    /// A pointer into `doc` (any node, or a new member or index below one), sometimes broken.
    fn random_pointer(rng: &mut u64, doc: &serde_json::Value) -> String {
        let mut p = String::new();
        let mut at = doc;
        loop {
            let stop = pick(rng, 3) == 0;
            match at {
                serde_json::Value::Object(m) if !stop && !m.is_empty() => {
                    let (k, v) = m.iter().nth(pick(rng, m.len())).expect("a member");
                    p.push('/');
                    p.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    at = v;
                }
                serde_json::Value::Array(a) if !stop && !a.is_empty() => {
                    let i = pick(rng, a.len());
                    p.push_str(&format!("/{i}"));
                    at = &a[i];
                }
                _ => break,
            }
        }
        match pick(rng, 8) {
            0 => p.push_str("/-"),
            1 => p.push_str(&format!("/{}", pick(rng, 4))),
            2 => p.push_str("/new"),
            3 => p.push_str("/01"),
            _ => {}
        }
        p
    }

    fn random_op(rng: &mut u64, doc: &serde_json::Value) -> serde_json::Value {
        let path = random_pointer(rng, doc);
        let from = random_pointer(rng, doc);
        let value = random_value(rng, 1);
        match pick(rng, 6) {
            0 => json!({"op": "add", "path": path, "value": value}),
            1 => json!({"op": "remove", "path": path}),
            2 => json!({"op": "replace", "path": path, "value": value}),
            3 => json!({"op": "move", "from": from, "path": path}),
            4 => json!({"op": "copy", "from": from, "path": path}),
            _ => {
                json!({"op": "test", "path": path, "value": doc.pointer(&path).cloned().unwrap_or(value)})
            }
        }
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
