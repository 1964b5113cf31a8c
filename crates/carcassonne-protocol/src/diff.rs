//! The RFC 6902 patch from one [`MatchView`] to the next, computed over the typed view structs.
//!
//! Serializing the whole view to a JSON tree on every move and diffing two trees would spend most
//! of a move's CPU on building, diffing and freeing trees that barely change. Instead the structs
//! are compared field by field (cheap `==` on plain data), and only what changed is serialized:
//! the board, meeples and pile are maps keyed by stable strings, so a move yields an `add`,
//! `remove` or `replace` for each changed key; scalars are replaced; vectors are patched per index
//! when their length holds, else replaced whole; a field that the JSON leaves out when empty
//! (`skip_serializing_if`) is added or removed.
//!
//! Applying the patch to the JSON of the old view gives exactly the JSON of the new one (a
//! property test over random games with every module checks it). Every struct is destructured exhaustively, so a field added to a view type
//! fails to compile here until the diff covers it.

use crate::json::ValueWriter;
use crate::{MatchView, PatchOp};
use rules::view::{MapView, MessagesView, PawnsView, PlayerView};
use rules::{Decision, Pos, View};
use serde::Serialize;
use std::collections::BTreeMap;

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
/// changed values (see the private `json` module). What the server stores and sends for each move.
pub fn match_view_patch_json(
    old: &MatchView,
    new: &MatchView,
) -> Result<String, serde_json::Error> {
    let mut d = Differ::new(JsonOps::default());
    d.match_view(old, new)?;
    Ok(JsonOps::finish(d.sink.out))
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
    PatchWriter::default().match_view_patch_json_touched(old, new, touched)
}

/// [`match_view_patch_json_touched`] with its working buffers kept from one patch to the next
/// (the JSON pointer, the value writer's stacks, the board keys): a match actor's thread keeps
/// one, so that a move's patch allocates only its own text.
#[derive(Debug, Default)]
pub struct PatchWriter {
    path: String,
    values: ValueWriter,
    keys: Vec<rules::Key>,
}

impl PatchWriter {
    /// The text [`match_view_patch_json_touched`] gives.
    pub fn match_view_patch_json_touched(
        &mut self,
        old: &MatchView,
        new: &MatchView,
        touched: &[Pos],
    ) -> Result<String, serde_json::Error> {
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        let mut d = Differ {
            sink: JsonOps {
                out: Vec::new(),
                values: std::mem::take(&mut self.values),
            },
            path,
            board_touched: Some(touched),
            keys: std::mem::take(&mut self.keys),
        };
        let r = d.match_view(old, new);
        self.path = d.path;
        self.keys = d.keys;
        self.values = d.sink.values;
        r?;
        Ok(JsonOps::finish(d.sink.out))
    }
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

    /// One op at `path` whose value is one decision or a list of them (most of a move's patch:
    /// the placement list), for a sink that writes those faster.
    fn decisions(&mut self, op: Op, path: &str, value: Decisions<'_>) -> Res {
        match value {
            Decisions::One(d) => self.op(op, path, Some(d)),
            Decisions::All(ds) => self.op(op, path, Some(ds)),
        }
    }
}

/// The value of an op on the view's decisions.
#[derive(Debug, Clone, Copy)]
enum Decisions<'a> {
    One(&'a Decision),
    All(&'a [Decision]),
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
    /// The text of the ops written into `out`.
    fn finish(mut out: Vec<u8>) -> String {
        if out.is_empty() {
            out.push(b'[');
        }
        out.push(b']');
        // Only `&str`s and serde_json's output went in.
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// Writes an op up to its value: `{"op":…,"path":…`.
    fn head(&mut self, op: Op, path: &str) -> Res {
        let out = &mut self.out;
        if out.is_empty() {
            // Most patches fit (a placement list is the largest part of most).
            out.reserve(2048);
            out.push(b'[');
        } else {
            out.push(b',');
        }
        out.extend_from_slice(match op {
            Op::Add => br#"{"op":"add","path":"#,
            Op::Remove => br#"{"op":"remove","path":"#,
            Op::Replace => br#"{"op":"replace","path":"#,
        });
        // A pointer needs no escape unless it holds a quote, a backslash or a control character
        // (the view's keys never do): written as it is, else through serde_json's escaper.
        if path.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
            out.push(b'"');
            out.extend_from_slice(path.as_bytes());
            out.push(b'"');
            Ok(())
        } else {
            serde_json::to_writer(&mut *out, path)
        }
    }
}

impl Sink for JsonOps {
    fn op<T: Serialize + ?Sized>(&mut self, op: Op, path: &str, value: Option<&T>) -> Res {
        self.head(op, path)?;
        let out = &mut self.out;
        if let (Op::Add | Op::Replace, Some(v)) = (op, value) {
            out.extend_from_slice(br#","value":"#);
            self.values.write(out, v)?;
        } else if !matches!(op, Op::Remove) {
            out.extend_from_slice(br#","value":null"#);
        }
        self.out.push(b'}');
        Ok(())
    }

    fn decisions(&mut self, op: Op, path: &str, value: Decisions<'_>) -> Res {
        if matches!(op, Op::Remove) {
            return self.op::<()>(op, path, None);
        }
        self.head(op, path)?;
        let out = &mut self.out;
        out.extend_from_slice(br#","value":"#);
        match value {
            Decisions::One(d) => self.values.write_decision(out, d)?,
            Decisions::All(ds) => self.values.write_decisions(out, ds)?,
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
    /// The touched squares' keys (kept by a [`PatchWriter`]).
    keys: Vec<rules::Key>,
}

/// Appends `/segment` to a JSON pointer, escaped (RFC 6901: `~` → `~0`, `/` → `~1`).
fn push_segment(path: &mut String, segment: &str) {
    path.push('/');
    if segment.bytes().any(|b| b == b'~' || b == b'/') {
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
            keys: Vec::new(),
        }
    }

    fn match_view(&mut self, old: &MatchView, new: &MatchView) -> Res {
        let MatchView {
            view,
            deadlines,
            clocks,
            away,
            names,
        } = new;
        self.view(&old.view, view)?;
        self.omissible("deadlines", &old.deadlines, deadlines, Vec::is_empty)?;
        // The running clock's bank changes at every turn's end: per index when both have clocks.
        self.omissible_vec("clocks", &old.clocks, clocks)?;
        self.omissible("away", &old.away, away, Vec::is_empty)?;
        self.omissible("names", &old.names, names, Vec::is_empty)
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
        self.path.push('/');
        push_decimal(&mut self.path, i);
        let r = f(self);
        self.path.truncate(len);
        r
    }

    /// The view's decisions: as [`Differ::vec_with`] with each changed one replaced whole, their
    /// values written by the sink's [`Sink::decisions`].
    fn decisions(&mut self, old: &[Decision], new: &[Decision]) -> Res {
        if old == new {
            return Ok(());
        }
        self.at("decisions", |d| {
            if old.len() != new.len() {
                return d.sink.decisions(Op::Replace, &d.path, Decisions::All(new));
            }
            for (i, (a, b)) in old.iter().zip(new).enumerate() {
                if a != b {
                    d.at_index(i, |d| {
                        d.sink.decisions(Op::Replace, &d.path, Decisions::One(b))
                    })?;
                }
            }
            Ok(())
        })
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
        old: &BTreeMap<rules::Key, V>,
        new: &BTreeMap<rules::Key, V>,
    ) -> Res {
        self.at(key, |d| {
            // One key comparison per step (most steps: the same key on both sides).
            let (mut a, mut b) = (old.iter(), new.iter());
            let (mut x, mut y) = (a.next(), b.next());
            loop {
                match (x, y) {
                    (None, None) => return Ok(()),
                    (Some((ka, va)), Some((kb, vb))) => match ka.as_str().cmp(kb.as_str()) {
                        std::cmp::Ordering::Equal => {
                            if va != vb {
                                d.at(kb, |d| d.replace(vb))?;
                            }
                            (x, y) = (a.next(), b.next());
                        }
                        std::cmp::Ordering::Less => {
                            d.at(ka, |d| d.remove())?;
                            x = a.next();
                        }
                        std::cmp::Ordering::Greater => {
                            d.at(kb, |d| d.add(vb))?;
                            y = b.next();
                        }
                    },
                    (Some((ka, _)), None) => {
                        d.at(ka, |d| d.remove())?;
                        x = a.next();
                    }
                    (None, Some((kb, vb))) => {
                        d.at(kb, |d| d.add(vb))?;
                        y = b.next();
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
        old: &BTreeMap<rules::Key, V>,
        new: &BTreeMap<rules::Key, V>,
        touched: &[Pos],
    ) -> Res {
        // The keys' vector is kept from one patch to the next (a key is inline: no allocation).
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        keys.extend(touched.iter().map(|p| p.key()));
        let live = &mut keys[..touched.len()];
        live.sort_unstable();
        let r = self.at(key, |d| {
            for (i, k) in live.iter().enumerate() {
                if i > 0 && live[i - 1] == *k {
                    continue;
                }
                match (old.get(k), new.get(k)) {
                    (None, Some(v)) => d.at(k, |d| d.add(v))?,
                    (Some(a), Some(b)) if a != b => d.at(k, |d| d.replace(b))?,
                    (Some(_), None) => d.at(k, |d| d.remove())?,
                    _ => {}
                }
            }
            Ok(())
        });
        self.keys = keys;
        r
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
        self.decisions(&old.decisions, decisions)?;
        self.scalar("finished", &old.finished, finished)?;
        self.option_with("messages", &old.messages, messages, Differ::messages)?;
        self.option_with("map", &old.map, map, |d, a, b| d.map_view(a, b))
    }

    fn player(&mut self, old: &PlayerView, new: &PlayerView) -> Res {
        let PlayerView {
            colour,
            score,
            meeples,
            large_meeples,
            tollhouse,
            scored,
            builder,
            pig,
            goods,
            double_turn,
        } = new;
        self.scalar("colour", &old.colour, colour)?;
        self.scalar("score", &old.score, score)?;
        self.scalar("meeples", &old.meeples, meeples)?;
        let large = &old.large_meeples;
        self.omissible("large_meeples", large, large_meeples, Option::is_none)?;
        self.omissible("tollhouse", &old.tollhouse, tollhouse, Option::is_none)?;
        self.omissible("scored", &old.scored, scored, rules::view::Scored::is_empty)?;
        self.omissible("builder", &old.builder, builder, Option::is_none)?;
        self.omissible("pig", &old.pig, pig, Option::is_none)?;
        self.omissible("goods", &old.goods, goods, Option::is_none)?;
        self.omissible(
            "double_turn",
            &old.double_turn,
            double_turn,
            Option::is_none,
        )
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
        // The printed map never changes: the same shared one on both sides is not compared.
        if !std::sync::Arc::ptr_eq(&old.info, info) {
            self.scalar("info", &old.info, info)?;
        }
        self.omissible("chips", &old.chips, chips, Vec::is_empty)?;
        self.omissible("hands", &old.hands, hands, Vec::is_empty)
    }
}

/// Appends `n` in decimal (a JSON pointer's index), without the formatting machinery.
fn push_decimal(path: &mut String, n: usize) {
    path.push_str(itoa::Buffer::new().format(n));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_decimal() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, usize::MAX] {
            let mut p = String::from("/a");
            push_decimal(&mut p, n);
            assert_eq!(p, format!("/a{n}"));
        }
    }

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
            (rules::Key::from("a"), 1),
            (rules::Key::from("b"), 2),
            (rules::Key::from("c"), 3),
        ]);
        let new = BTreeMap::from([
            (rules::Key::from("b"), 5),
            (rules::Key::from("c"), 3),
            (rules::Key::from("d"), 4),
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
