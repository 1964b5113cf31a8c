//! The RFC 6902 patch from one [`MatchView`] to the next, computed over the typed view structs.
//!
//! Before, the server serialized the whole view to a JSON tree on every move and diffed the two
//! trees: most of a move's CPU went into building, diffing and freeing trees that barely change.
//! Here the structs are compared field by field (cheap `==` on plain data), and only what changed
//! is serialized: the board, meeples and pile are maps keyed by stable strings, so a move yields an
//! `add`, `remove` or `replace` for each changed key; scalars are replaced; vectors are patched per
//! index when their length holds, else replaced whole; a field that the JSON leaves out when empty
//! (`skip_serializing_if`) is added or removed.
//!
//! The wire format is unchanged: applying the patch to the JSON of the old view gives exactly the
//! JSON of the new one (a property test over random games with every module checks it). Every
//! struct is destructured exhaustively, so a field added to a view type fails to compile here
//! until the diff covers it.

use crate::json::ValueWriter;
use crate::{MatchView, PatchOp};
use rules::view::{MapView, MessagesView, PawnsView, PlayerView};
use rules::{Pos, View};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The ops that turn `old`'s JSON into `new`'s. Fails only if a changed value cannot be serialized.
pub fn match_view_patch(
    old: &MatchView,
    new: &MatchView,
) -> Result<Vec<PatchOp>, serde_json::Error> {
    let mut d = Differ::new(Vec::new());
    d.match_view(old, new)?;
    Ok(d.sink)
}

/// The JSON text of [`match_view_patch`] (a JSON array of ops), byte for byte what
/// `serde_json::to_string` of it gives, written directly: no `serde_json::Value` is built for the
/// changed values (see [`crate::json`]). What the server stores and sends for each move.
pub fn match_view_patch_json(
    old: &MatchView,
    new: &MatchView,
) -> Result<String, serde_json::Error> {
    let mut d = Differ::new(JsonOps::default());
    d.match_view(old, new)?;
    Ok(d.sink.finish())
}

/// [`match_view_patch_json`] when the caller knows which squares of the board can differ:
/// `touched`, every square whose tile differs between `old` and `new` (a promise, not checked:
/// the other squares are not compared). For two views of one game, `Game::placed_since` of the
/// old view's tile count. The same text as without it, without walking the whole board.
pub fn match_view_patch_json_touched(
    old: &MatchView,
    new: &MatchView,
    touched: &[Pos],
) -> Result<String, serde_json::Error> {
    let mut d = Differ::new(JsonOps::default());
    d.board_touched = Some(touched);
    d.match_view(old, new)?;
    Ok(d.sink.finish())
}

/// The ops that turn `old`'s JSON into `new`'s, for the rules' view alone.
pub fn view_patch(old: &View, new: &View) -> Result<Vec<PatchOp>, serde_json::Error> {
    let mut d = Differ::new(Vec::new());
    d.view(old, new)?;
    Ok(d.sink)
}

type Res = Result<(), serde_json::Error>;

/// The kinds of op the differ emits.
#[derive(Debug, Clone, Copy)]
enum Op {
    Add,
    Remove,
    Replace,
}

/// Where the differ's ops go: typed ops, or their JSON text.
trait Sink {
    /// One op at `path`; `value` is `None` for a removal.
    fn op<T: Serialize + ?Sized>(&mut self, op: Op, path: &str, value: Option<&T>) -> Res;
}

impl Sink for Vec<PatchOp> {
    fn op<T: Serialize + ?Sized>(&mut self, op: Op, path: &str, value: Option<&T>) -> Res {
        let path = path.to_owned();
        let value = || value.map_or(Ok(serde_json::Value::Null), serde_json::to_value);
        self.push(match op {
            Op::Add => PatchOp::Add {
                path,
                value: value()?,
            },
            Op::Remove => PatchOp::Remove { path },
            Op::Replace => PatchOp::Replace {
                path,
                value: value()?,
            },
        });
        Ok(())
    }
}

/// The ops as JSON text, as `serde_json::to_string(&Vec<PatchOp>)` writes them.
#[derive(Debug, Default)]
struct JsonOps {
    out: Vec<u8>,
    values: ValueWriter,
}

impl JsonOps {
    fn finish(mut self) -> String {
        if self.out.is_empty() {
            self.out.push(b'[');
        }
        self.out.push(b']');
        // Only `&str`s and serde_json's output went in.
        String::from_utf8(self.out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

impl Sink for JsonOps {
    fn op<T: Serialize + ?Sized>(&mut self, op: Op, path: &str, value: Option<&T>) -> Res {
        let out = &mut self.out;
        if out.is_empty() {
            out.reserve(1024);
            out.push(b'[');
        } else {
            out.push(b',');
        }
        out.extend_from_slice(match op {
            Op::Add => br#"{"op":"add","path":"#,
            Op::Remove => br#"{"op":"remove","path":"#,
            Op::Replace => br#"{"op":"replace","path":"#,
        });
        serde_json::to_writer(&mut *out, path)?;
        if let (Op::Add | Op::Replace, Some(v)) = (op, value) {
            out.extend_from_slice(br#","value":"#);
            self.values.write(out, v)?;
        } else if !matches!(op, Op::Remove) {
            out.extend_from_slice(br#","value":null"#);
        }
        self.out.push(b'}');
        Ok(())
    }
}

/// Collects ops; `path` is the JSON pointer of the value being compared.
#[derive(Debug)]
struct Differ<'t, S> {
    sink: S,
    path: String,
    /// The only squares of the board that may differ, when the caller knows them.
    board_touched: Option<&'t [Pos]>,
}

/// Appends `/segment` to a JSON pointer, escaped (RFC 6901: `~` → `~0`, `/` → `~1`).
fn push_segment(path: &mut String, segment: &str) {
    path.push('/');
    if segment.contains(['~', '/']) {
        path.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    } else {
        path.push_str(segment);
    }
}

impl<S: Sink> Differ<'_, S> {
    fn new(sink: S) -> Self {
        Differ {
            sink,
            path: String::new(),
            board_touched: None,
        }
    }

    fn match_view(&mut self, old: &MatchView, new: &MatchView) -> Res {
        let MatchView {
            view,
            deadlines,
            clocks,
            away,
        } = new;
        self.view(&old.view, view)?;
        self.omissible("deadlines", &old.deadlines, deadlines, Vec::is_empty)?;
        // The running clock's bank changes at every turn's end: per index when both have clocks.
        self.omissible_vec("clocks", &old.clocks, clocks)?;
        self.omissible("away", &old.away, away, Vec::is_empty)
    }

    /// Runs `f` with `key` appended to the path.
    fn at(&mut self, key: &str, f: impl FnOnce(&mut Self) -> Res) -> Res {
        let len = self.path.len();
        push_segment(&mut self.path, key);
        let r = f(self);
        self.path.truncate(len);
        r
    }

    fn at_index(&mut self, i: usize, f: impl FnOnce(&mut Self) -> Res) -> Res {
        let len = self.path.len();
        let _ = write!(self.path, "/{i}");
        let r = f(self);
        self.path.truncate(len);
        r
    }

    fn replace<T: Serialize + ?Sized>(&mut self, value: &T) -> Res {
        self.sink.op(Op::Replace, &self.path, Some(value))
    }

    fn add<T: Serialize + ?Sized>(&mut self, value: &T) -> Res {
        self.sink.op(Op::Add, &self.path, Some(value))
    }

    fn remove(&mut self) -> Res {
        self.sink.op::<()>(Op::Remove, &self.path, None)
    }

    /// A field always present in the JSON: replaced whole when it differs.
    fn scalar<T: PartialEq + Serialize + ?Sized>(&mut self, key: &str, old: &T, new: &T) -> Res {
        if old == new {
            return Ok(());
        }
        self.at(key, |d| d.replace(new))
    }

    /// A field the JSON leaves out when `absent` holds: added, removed or replaced whole.
    fn omissible<T: PartialEq + Serialize>(
        &mut self,
        key: &str,
        old: &T,
        new: &T,
        absent: impl Fn(&T) -> bool,
    ) -> Res {
        if old == new {
            return Ok(());
        }
        match (absent(old), absent(new)) {
            (true, true) => Ok(()),
            (true, false) => self.at(key, |d| d.add(new)),
            (false, true) => self.at(key, |d| d.remove()),
            (false, false) => self.at(key, |d| d.replace(new)),
        }
    }

    /// A vector the JSON leaves out when empty: patched per index while both have entries and
    /// the same length, else added, removed or replaced whole.
    fn omissible_vec<T: PartialEq + Serialize>(&mut self, key: &str, old: &[T], new: &[T]) -> Res {
        if old.is_empty() || new.is_empty() {
            return self.omissible(key, &old, &new, |v| v.is_empty());
        }
        self.vec_with(key, old, new, |d, _, b| d.replace(b))
    }

    /// An `Option` the JSON leaves out when `None`; two `Some`s are compared by `inner`.
    fn option_with<T: PartialEq + Serialize>(
        &mut self,
        key: &str,
        old: &Option<T>,
        new: &Option<T>,
        inner: impl FnOnce(&mut Self, &T, &T) -> Res,
    ) -> Res {
        match (old, new) {
            (Some(a), Some(b)) if a != b => self.at(key, |d| inner(d, a, b)),
            _ => self.omissible(key, old, new, Option::is_none),
        }
    }

    /// A vector always present: patched per index while its length holds, else replaced whole.
    fn vec_with<T: PartialEq + Serialize>(
        &mut self,
        key: &str,
        old: &[T],
        new: &[T],
        mut inner: impl FnMut(&mut Self, &T, &T) -> Res,
    ) -> Res {
        if old == new {
            return Ok(());
        }
        self.at(key, |d| {
            if old.len() != new.len() {
                return d.replace(new);
            }
            for (i, (a, b)) in old.iter().zip(new).enumerate() {
                if a != b {
                    d.at_index(i, |d| inner(d, a, b))?;
                }
            }
            Ok(())
        })
    }

    /// A map keyed by stable strings: one op per added, removed or changed key. Walked once (no
    /// whole-map `==` first: that walk is the same comparison).
    fn map<V: PartialEq + Serialize>(
        &mut self,
        key: &str,
        old: &BTreeMap<String, V>,
        new: &BTreeMap<String, V>,
    ) -> Res {
        self.at(key, |d| {
            let (mut a, mut b) = (old.iter().peekable(), new.iter().peekable());
            loop {
                match (a.peek(), b.peek()) {
                    (None, None) => return Ok(()),
                    (Some((ka, _)), Some((kb, _))) if ka == kb => {
                        if let (Some((k, va)), Some((_, vb))) = (a.next(), b.next())
                            && va != vb
                        {
                            d.at(k, |d| d.replace(vb))?;
                        }
                    }
                    (Some((ka, _)), Some((kb, _))) if ka < kb => {
                        if let Some((k, _)) = a.next() {
                            d.at(k, |d| d.remove())?;
                        }
                    }
                    (Some(_), None) => {
                        if let Some((k, _)) = a.next() {
                            d.at(k, |d| d.remove())?;
                        }
                    }
                    (_, Some(_)) => {
                        if let Some((k, v)) = b.next() {
                            d.at(k, |d| d.add(v))?;
                        }
                    }
                }
            }
        })
    }

    /// [`Differ::map`] of a board of which only the `touched` squares may differ: their ops
    /// alone, in key order as the walk gives them.
    fn map_touched<V: PartialEq + Serialize>(
        &mut self,
        key: &str,
        old: &BTreeMap<String, V>,
        new: &BTreeMap<String, V>,
        touched: &[Pos],
    ) -> Res {
        let mut keys: Vec<String> = touched.iter().map(|p| p.key()).collect();
        keys.sort_unstable();
        keys.dedup();
        self.at(key, |d| {
            for k in &keys {
                match (old.get(k), new.get(k)) {
                    (None, Some(v)) => d.at(k, |d| d.add(v))?,
                    (Some(a), Some(b)) if a != b => d.at(k, |d| d.replace(b))?,
                    (Some(_), None) => d.at(k, |d| d.remove())?,
                    _ => {}
                }
            }
            Ok(())
        })
    }

    fn view(&mut self, old: &View, new: &View) -> Res {
        let View {
            modules,
            players,
            board,
            meeples,
            pile,
            pile_size,
            discarded,
            turn,
            active,
            drawn,
            decisions,
            finished,
            messages,
            map,
        } = new;
        self.scalar("modules", &old.modules, modules)?;
        self.vec_with("players", &old.players, players, Differ::player)?;
        match self.board_touched {
            Some(touched) => self.map_touched("board", &old.board, board, touched)?,
            None => self.map("board", &old.board, board)?,
        }
        self.map("meeples", &old.meeples, meeples)?;
        self.map("pile", &old.pile, pile)?;
        self.scalar("pile_size", &old.pile_size, pile_size)?;
        self.scalar("discarded", &old.discarded, discarded)?;
        self.scalar("turn", &old.turn, turn)?;
        self.scalar("active", &old.active, active)?;
        self.scalar("drawn", &old.drawn, drawn)?;
        self.vec_with("decisions", &old.decisions, decisions, |d, _, b| {
            d.replace(b)
        })?;
        self.scalar("finished", &old.finished, finished)?;
        self.option_with("messages", &old.messages, messages, Differ::messages)?;
        self.option_with("map", &old.map, map, |d, a, b| d.map_view(a, b))
    }

    fn player(&mut self, old: &PlayerView, new: &PlayerView) -> Res {
        let PlayerView {
            colour,
            score,
            meeples,
            tollhouse,
        } = new;
        self.scalar("colour", &old.colour, colour)?;
        self.scalar("score", &old.score, score)?;
        self.scalar("meeples", &old.meeples, meeples)?;
        self.omissible("tollhouse", &old.tollhouse, tollhouse, Option::is_none)
    }

    fn messages(&mut self, old: &MessagesView, new: &MessagesView) -> Res {
        let MessagesView { players, stack } = new;
        self.vec_with("players", &old.players, players, Differ::pawns)?;
        self.scalar("stack", &old.stack, stack)
    }

    fn pawns(&mut self, old: &PawnsView, new: &PawnsView) -> Res {
        let PawnsView {
            scoring,
            messenger,
            preference,
        } = new;
        self.scalar("scoring", &old.scoring, scoring)?;
        self.scalar("messenger", &old.messenger, messenger)?;
        self.omissible("preference", &old.preference, preference, Option::is_none)
    }

    fn map_view(&mut self, old: &MapView, new: &MapView) -> Res {
        let MapView { info, chips, hands } = new;
        self.scalar("info", &old.info, info)?;
        self.omissible("chips", &old.chips, chips, Vec::is_empty)?;
        self.omissible("hands", &old.hands, hands, Vec::is_empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_segments_are_escaped() {
        let mut p = String::new();
        push_segment(&mut p, "a/b~c");
        push_segment(&mut p, "1,0");
        assert_eq!(p, "/a~1b~0c/1,0");
    }

    #[test]
    fn maps_yield_one_op_per_changed_key() -> Res {
        let old = BTreeMap::from([
            ("a".to_owned(), 1),
            ("b".to_owned(), 2),
            ("c".to_owned(), 3),
        ]);
        let new = BTreeMap::from([
            ("b".to_owned(), 5),
            ("c".to_owned(), 3),
            ("d".to_owned(), 4),
        ]);
        let mut d = Differ::new(Vec::new());
        d.map("pile", &old, &new)?;
        let text = serde_json::to_string(&d.sink)?;
        assert_eq!(
            text,
            r#"[{"op":"remove","path":"/pile/a"},{"op":"replace","path":"/pile/b","value":5},{"op":"add","path":"/pile/d","value":4}]"#
        );
        Ok(())
    }
}
