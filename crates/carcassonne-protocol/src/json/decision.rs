//! The decisions every turn opens (`place_tile`, `place_follower` with every module's target
//! lists), written field by field in the bytes the generic route would write.

use super::{SORTED, ValueWriter};
use rules::{Decision, Placement, Pos, Target};
use serde::ser::Error as _;
use serde_json::Error;
use std::fmt::Write as _;

impl ValueWriter {
    /// Appends a decision's JSON, the bytes of [`ValueWriter::write`] of it. The two kinds every
    /// turn opens are written field by field in the `Value`'s key order (a placement list is
    /// most of a move's patch, and the generic route pays per field for ordering the keys); the
    /// others, and every kind when `serde_json::Map` keeps insertion order, go through `write`.
    /// A test over random games checks the bytes against `write`.
    pub(crate) fn write_decision(&mut self, out: &mut Vec<u8>, d: &Decision) -> Result<(), Error> {
        if !*SORTED {
            return self.write(out, d);
        }
        match d {
            Decision::PlaceTile {
                player,
                tile,
                placements,
            } => {
                out.extend_from_slice(br#"{"placements":["#);
                for (i, Placement { pos, rotations }) in placements.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(br#"{"pos":"#);
                    push_pos(out, *pos)?;
                    out.extend_from_slice(br#","rotations":["#);
                    for (j, r) in rotations.iter().enumerate() {
                        if j > 0 {
                            out.push(b',');
                        }
                        push_integer(out, r.degrees())?;
                    }
                    out.extend_from_slice(b"]}");
                }
                out.extend_from_slice(br#"],"player":"#);
                push_integer(out, *player)?;
                out.extend_from_slice(br#","tile":"#);
                serde_json::to_writer(&mut *out, tile)?;
                out.extend_from_slice(br#","type":"place_tile"}"#);
                Ok(())
            }
            Decision::PlaceFollower {
                player,
                pos,
                meeple_targets,
                large_meeple_targets,
                tollhouse_targets,
                builder_targets,
                pig_targets,
            } => {
                // Keys in sorted order; the optional lists are left out when empty.
                out.push(b'{');
                if !builder_targets.is_empty() {
                    out.extend_from_slice(br#""builder_targets":"#);
                    self.push_targets(out, builder_targets)?;
                    out.push(b',');
                }
                if !large_meeple_targets.is_empty() {
                    out.extend_from_slice(br#""large_meeple_targets":"#);
                    self.push_targets(out, large_meeple_targets)?;
                    out.push(b',');
                }
                out.extend_from_slice(br#""meeple_targets":"#);
                self.push_targets(out, meeple_targets)?;
                if !pig_targets.is_empty() {
                    out.extend_from_slice(br#","pig_targets":"#);
                    self.push_targets(out, pig_targets)?;
                }
                out.extend_from_slice(br#","player":"#);
                push_integer(out, *player)?;
                out.extend_from_slice(br#","pos":"#);
                push_pos(out, *pos)?;
                if !tollhouse_targets.is_empty() {
                    out.extend_from_slice(br#","tollhouse_targets":["#);
                    for (i, p) in tollhouse_targets.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        push_pos(out, *p)?;
                    }
                    out.push(b']');
                }
                out.extend_from_slice(br#","type":"place_follower"}"#);
                Ok(())
            }
            _ => self.write(out, d),
        }
    }

    /// Appends a JSON array of targets (`["road:E","city:N"]`).
    fn push_targets(&mut self, out: &mut Vec<u8>, targets: &[Target]) -> Result<(), Error> {
        out.push(b'[');
        for (i, t) in targets.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            self.text.clear();
            write!(self.text, "{t}").map_err(Error::custom)?;
            serde_json::to_writer(&mut *out, self.text.as_str())?;
        }
        out.push(b']');
        Ok(())
    }

    /// Appends the JSON array of `decisions`, each as [`ValueWriter::write_decision`] writes it.
    pub(crate) fn write_decisions(
        &mut self,
        out: &mut Vec<u8>,
        decisions: &[Decision],
    ) -> Result<(), Error> {
        out.push(b'[');
        for (i, d) in decisions.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            self.write_decision(out, d)?;
        }
        out.push(b']');
        Ok(())
    }
}

/// An integer as serde_json writes it (plain decimal, `-` before a negative one), without a
/// serializer per number.
pub(super) fn push_integer(out: &mut Vec<u8>, v: impl Into<i64>) -> Result<(), Error> {
    let v: i64 = v.into();
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    Ok(())
}

/// A square as its `Value` is written (`x` before `y`, in key order as in the struct).
fn push_pos(out: &mut Vec<u8>, Pos { x, y }: Pos) -> Result<(), Error> {
    out.extend_from_slice(br#"{"x":"#);
    push_integer(out, x)?;
    out.extend_from_slice(br#","y":"#);
    push_integer(out, y)?;
    out.push(b'}');
    Ok(())
}
