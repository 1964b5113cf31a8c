//! Writes a value's JSON exactly as `serde_json::to_string(&serde_json::to_value(v)?)` does,
//! without building the `Value` tree: the patch of a diff carries `serde_json::Value`s (their
//! objects keep serde_json's `Map` order: sorted keys, unless its `preserve_order` feature is on),
//! and building, writing and freeing those trees would be most of a move's serialization cost.
//!
//! Fields and map entries are written in the order they come; when an object ends, its entries
//! are put in key order in place (most already are), so nested objects cost no allocation. A
//! test over random games checks the bytes against the `Value` route.

use rules::{Decision, Placement, Pos};
use serde::ser::{self, Error as _, Impossible, Serialize};
use serde_json::{Error, Value};
use std::fmt::{self, Write as _};
use std::sync::LazyLock;

/// Whether `serde_json::Map` iterates in key order (a `BTreeMap`) rather than insertion order
/// (an `IndexMap`, with serde_json's `preserve_order` feature, which another crate may enable).
static SORTED: LazyLock<bool> = LazyLock::new(|| {
    let mut m = serde_json::Map::new();
    m.insert("b".to_owned(), Value::Null);
    m.insert("a".to_owned(), Value::Null);
    m.keys().next().is_some_and(|k| k == "a")
});

/// Appends `value`'s JSON to `out`, as the `serde_json::Value` of it would be written.
#[cfg(test)]
pub(crate) fn write_value<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), Error> {
    ValueWriter::default().write(out, value)
}

/// Reusable buffers for [`ValueWriter::write`], so that a patch of many values allocates once.
#[derive(Debug, Default)]
pub(crate) struct ValueWriter {
    entries: Vec<Entry>,
    keys: String,
    scratch: Vec<u8>,
    /// A `Display` value's text (`collect_str`), before it is escaped.
    text: String,
}

impl ValueWriter {
    /// Appends `value`'s JSON to `out`, as the `serde_json::Value` of it would be written.
    pub(crate) fn write<T: Serialize + ?Sized>(
        &mut self,
        out: &mut Vec<u8>,
        value: &T,
    ) -> Result<(), Error> {
        let mut w = Writer {
            out,
            sorted: *SORTED,
            entries: std::mem::take(&mut self.entries),
            keys: std::mem::take(&mut self.keys),
            scratch: std::mem::take(&mut self.scratch),
            text: std::mem::take(&mut self.text),
        };
        let r = value.serialize(&mut w);
        // After an error the stacks may hold a broken object's entries.
        w.entries.clear();
        w.keys.clear();
        self.entries = w.entries;
        self.keys = w.keys;
        self.scratch = w.scratch;
        self.text = w.text;
        r
    }

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
                tollhouse_targets,
            } => {
                out.extend_from_slice(br#"{"meeple_targets":["#);
                for (i, t) in meeple_targets.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    self.text.clear();
                    write!(self.text, "{t}").map_err(Error::custom)?;
                    serde_json::to_writer(&mut *out, self.text.as_str())?;
                }
                out.extend_from_slice(br#"],"player":"#);
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
fn push_integer(out: &mut Vec<u8>, v: impl Into<i64>) -> Result<(), Error> {
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

/// One entry of an object being written: its key and its bytes in the output (`"key":value`,
/// without the comma).
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Key,
    start: usize,
    end: usize,
}

/// An entry's key, unescaped: a struct's field name, or a map key kept in `Writer::keys`.
#[derive(Debug, Clone, Copy)]
enum Key {
    Field(&'static str),
    Kept(usize, usize),
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
    sorted: bool,
    /// The entries of every object being written, innermost last.
    entries: Vec<Entry>,
    /// The keys of `entries`, unescaped (the order of `Value`'s map is the keys' own).
    keys: String,
    scratch: Vec<u8>,
    text: String,
}

impl Writer<'_> {
    /// A scalar, written as its `Value` (numbers, booleans and null allocate nothing).
    fn scalar(&mut self, v: Value) -> Result<(), Error> {
        serde_json::to_writer(&mut *self.out, &v)
    }

    /// An integer: as its `Value` writes it, without making one.
    fn integer(&mut self, v: impl Serialize) -> Result<(), Error> {
        v.serialize(&mut serde_json::Serializer::new(&mut *self.out))
    }

    fn string(&mut self, s: &str) -> Result<(), Error> {
        serde_json::to_writer(&mut *self.out, s)
    }

    fn begin_object(&mut self) -> Object {
        self.out.push(b'{');
        Object {
            entries: self.entries.len(),
            keys: self.keys.len(),
            start: self.out.len(),
        }
    }

    /// Writes `"key":` for the next entry of `obj`.
    fn entry_key(&mut self, obj: &Object, key: Key) -> Result<(), Error> {
        if self.entries.len() > obj.entries {
            self.out.push(b',');
        }
        let start = self.out.len();
        let text = match key {
            Key::Field(k) => k,
            Key::Kept(a, b) => &self.keys[a..b],
        };
        // Field names need no escape: quoted as they are, without the escaper's machinery.
        if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
            self.out.push(b'"');
            self.out.extend_from_slice(text.as_bytes());
            self.out.extend_from_slice(b"\":");
        } else {
            serde_json::to_writer(&mut *self.out, text)?;
            self.out.push(b':');
        }
        self.entries.push(Entry {
            key,
            start,
            end: start,
        });
        Ok(())
    }

    fn entry_done(&mut self) {
        let end = self.out.len();
        if let Some(e) = self.entries.last_mut() {
            e.end = end;
        }
    }

    /// Closes `obj`: its entries in key order (a repeated key keeps its last value, as a map
    /// does), then `}`.
    fn end_object(&mut self, obj: Object) {
        let entries = &mut self.entries[obj.entries..];
        let keys = &self.keys;
        let key = |e: &Entry| match e.key {
            Key::Field(k) => k,
            Key::Kept(a, b) => &keys[a..b],
        };
        let in_order = entries.windows(2).all(|w| key(&w[0]) < key(&w[1]));
        if self.sorted && !in_order {
            entries.sort_by(|a, b| key(a).cmp(key(b)));
            self.scratch.clear();
            self.scratch.extend_from_slice(&self.out[obj.start..]);
            self.out.truncate(obj.start);
            let mut first = true;
            for (i, e) in entries.iter().enumerate() {
                if entries.get(i + 1).is_some_and(|n| key(n) == key(e)) {
                    continue;
                }
                if !first {
                    self.out.push(b',');
                }
                first = false;
                let (s, t) = (e.start - obj.start, e.end - obj.start);
                self.out.extend_from_slice(&self.scratch[s..t]);
            }
        }
        self.out.push(b'}');
        self.entries.truncate(obj.entries);
        self.keys.truncate(obj.keys);
    }

    /// `{"variant":` … `}` of an externally tagged variant.
    fn begin_variant(&mut self, variant: &str) -> Result<(), Error> {
        self.out.push(b'{');
        self.string(variant)?;
        self.out.push(b':');
        Ok(())
    }
}

/// An object being written: where its entries start in the stacks and its bytes in the output.
struct Object {
    entries: usize,
    keys: usize,
    start: usize,
}

/// An array being written.
struct Array {
    first: bool,
}

impl Writer<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, a: &mut Array, v: &T) -> Result<(), Error> {
        if !a.first {
            self.out.push(b',');
        }
        a.first = false;
        v.serialize(&mut *self)
    }
}

struct SeqState<'w, 'a> {
    w: &'w mut Writer<'a>,
    a: Array,
    /// Closes an externally tagged tuple variant's object too.
    variant: bool,
}

struct MapState<'w, 'a> {
    w: &'w mut Writer<'a>,
    obj: Object,
    variant: bool,
}

impl<'w, 'a> ser::Serializer for &'w mut Writer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = SeqState<'w, 'a>;
    type SerializeTuple = SeqState<'w, 'a>;
    type SerializeTupleStruct = SeqState<'w, 'a>;
    type SerializeTupleVariant = SeqState<'w, 'a>;
    type SerializeMap = MapState<'w, 'a>;
    type SerializeStruct = MapState<'w, 'a>;
    type SerializeStructVariant = MapState<'w, 'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.integer(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.integer(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.integer(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.integer(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        let v = serde_json::to_value(v)?;
        self.scalar(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.integer(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.integer(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.integer(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.integer(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        let v = serde_json::to_value(v)?;
        self.scalar(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.scalar(Value::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.scalar(Value::from(v))
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.string(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.string(v)
    }
    /// Formatted into a kept buffer: serde's default allocates a `String` per value.
    fn collect_str<T: fmt::Display + ?Sized>(self, v: &T) -> Result<(), Error> {
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        let r = write!(text, "{v}")
            .map_err(Error::custom)
            .and_then(|()| self.string(&text));
        self.text = text;
        r
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        let mut s = ser::Serializer::serialize_seq(self, Some(v.len()))?;
        for b in v {
            ser::SerializeSeq::serialize_element(&mut s, b)?;
        }
        ser::SerializeSeq::end(s)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.scalar(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.scalar(Value::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.scalar(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.string(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.begin_variant(variant)?;
        v.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<SeqState<'w, 'a>, Error> {
        self.out.push(b'[');
        Ok(SeqState {
            w: self,
            a: Array { first: true },
            variant: false,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqState<'w, 'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        len: usize,
    ) -> Result<SeqState<'w, 'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<SeqState<'w, 'a>, Error> {
        self.begin_variant(variant)?;
        let mut s = self.serialize_seq(Some(len))?;
        s.variant = true;
        Ok(s)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<MapState<'w, 'a>, Error> {
        let obj = self.begin_object();
        Ok(MapState {
            w: self,
            obj,
            variant: false,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<MapState<'w, 'a>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<MapState<'w, 'a>, Error> {
        self.begin_variant(variant)?;
        let mut m = self.serialize_map(Some(len))?;
        m.variant = true;
        Ok(m)
    }
}

impl SeqState<'_, '_> {
    fn close(self) -> Result<(), Error> {
        self.w.out.push(b']');
        if self.variant {
            self.w.out.push(b'}');
        }
        Ok(())
    }
}

/// serde's four sequence traits, one body: every element is written the same way.
macro_rules! seq_impl {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for SeqState<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
                self.w.element(&mut self.a, v)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        }
    )*};
}
seq_impl!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl MapState<'_, '_> {
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), Error> {
        self.w.entry_key(&self.obj, Key::Field(key))?;
        v.serialize(&mut *self.w)?;
        self.w.entry_done();
        Ok(())
    }

    fn close(self) -> Result<(), Error> {
        self.w.end_object(self.obj);
        if self.variant {
            self.w.out.push(b'}');
        }
        Ok(())
    }
}

impl ser::SerializeMap for MapState<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        let key_start = self.w.keys.len();
        key.serialize(KeyWriter {
            keys: &mut self.w.keys,
        })?;
        let key = Key::Kept(key_start, self.w.keys.len());
        self.w.entry_key(&self.obj, key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        v.serialize(&mut *self.w)?;
        self.w.entry_done();
        Ok(())
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

/// serde's two struct traits, one body: a field is an entry keyed by its name.
macro_rules! struct_impl {
    ($($trait:ident),*) => {$(
        impl ser::$trait for MapState<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                v: &T,
            ) -> Result<(), Error> {
                self.field(key, v)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        }
    )*};
}
struct_impl!(SerializeStruct, SerializeStructVariant);

/// Appends a map key to `keys` as `Value`'s map would hold it: a string as is; anything else
/// (a number, a unit variant…) through `serde_json::to_value` of a one-entry map, so that it is
/// converted or refused exactly as there.
struct KeyWriter<'k> {
    keys: &'k mut String,
}

impl KeyWriter<'_> {
    fn via_value<T: Serialize + ?Sized>(self, key: &T) -> Result<(), Error> {
        struct One<'t, T: ?Sized>(&'t T);
        impl<T: Serialize + ?Sized> Serialize for One<'_, T> {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use ser::SerializeMap as _;
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry(self.0, &())?;
                m.end()
            }
        }
        match serde_json::to_value(One(key))? {
            Value::Object(m) => match m.keys().next() {
                Some(k) => {
                    self.keys.push_str(k);
                    Ok(())
                }
                None => Err(Error::custom("key must be a string")),
            },
            _ => Err(Error::custom("key must be a string")),
        }
    }
}

macro_rules! via_value {
    ($($f:ident: $t:ty),*) => {
        $(fn $f(self, v: $t) -> Result<(), Error> {
            self.via_value(&v)
        })*
    };
}

impl ser::Serializer for KeyWriter<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.keys.push_str(v);
        Ok(())
    }
    via_value!(
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
        serialize_u32: u32, serialize_u64: u64, serialize_u128: u128, serialize_f32: f32,
        serialize_f64: f64, serialize_char: char
    );
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        struct Bytes<'b>(&'b [u8]);
        impl Serialize for Bytes<'_> {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(self.0)
            }
        }
        self.via_value(&Bytes(v))
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.via_value(&None::<()>)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        self.via_value(&Some(v))
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.via_value(&())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.via_value(&())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.keys.push_str(variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(Error::custom("key must be a string"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(Error::custom("key must be a string"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(Error::custom("key must be a string"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(Error::custom("key must be a string"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(Error::custom("key must be a string"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(Error::custom("key must be a string"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(Error::custom("key must be a string"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(Error::custom("key must be a string"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::collections::{BTreeMap, HashMap};

    fn same<T: Serialize>(v: &T) {
        let via_value =
            serde_json::to_string(&serde_json::to_value(v).expect("to_value")).expect("to_string");
        let mut out = Vec::new();
        write_value(&mut out, v).expect("write_value");
        assert_eq!(String::from_utf8(out).expect("UTF-8"), via_value);
    }

    #[derive(Serialize)]
    struct Unsorted {
        zeta: u8,
        alpha: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
        mid: Vec<Inner>,
        #[serde(flatten)]
        flat: Inner,
    }

    #[derive(Serialize)]
    struct Inner {
        y: i64,
        x: f32,
        b: bool,
    }

    #[derive(Serialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Tagged {
        Place { player: u8, at: (i32, i32) },
        Other { zz: char, aa: () },
    }

    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
    enum Key {
        Beta,
        Alpha,
    }

    #[derive(Serialize)]
    enum External {
        Unit,
        New(Inner),
        Tuple(u8, String),
        Struct { q: u8, p: u8 },
    }

    /// A map that repeats a key: a `Value` keeps the last value.
    struct Repeats;
    impl Serialize for Repeats {
        fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use ser::SerializeMap as _;
            let mut m = s.serialize_map(None)?;
            m.serialize_entry("b", &1)?;
            m.serialize_entry("a", &2)?;
            m.serialize_entry("b", &3)?;
            m.end()
        }
    }

    #[test]
    fn objects_come_out_as_their_values_do() {
        let inner = |y| Inner {
            y,
            x: 0.1,
            b: y > 0,
        };
        same(&Unsorted {
            zeta: 1,
            alpha: Some("a\"b\\c\n\u{1}é😀".into()),
            skipped: None,
            mid: vec![inner(-3), inner(4)],
            flat: inner(7),
        });
        same(&vec![
            Tagged::Place {
                player: 2,
                at: (-1, 0),
            },
            Tagged::Other { zz: 'é', aa: () },
        ]);
        same(&vec![
            External::Unit,
            External::New(inner(1)),
            External::Tuple(3, "t".into()),
            External::Struct { q: 1, p: 2 },
        ]);
        // Keys that sort differently as numbers and as strings, and non-string keys.
        same(&BTreeMap::from([
            (9u32, "nine"),
            (10, "ten"),
            (100, "hundred"),
        ]));
        same(&BTreeMap::from([(-1i8, 1), (2, 2)]));
        same(&HashMap::from([(Key::Beta, 1), (Key::Alpha, 2)]));
        same(&BTreeMap::from([('b', 1), ('a', 2)]));
        same(&BTreeMap::from([
            ("~/\"".to_owned(), 1),
            ("\u{7f}".to_owned(), 2),
        ]));
        same(&Repeats);
        same(&(
            f64::NAN,
            f32::INFINITY,
            1e300,
            -0.0f64,
            1.5f32,
            u64::MAX,
            i64::MIN,
        ));
        same(&(u128::from(u64::MAX), i128::from(i64::MIN)));
        same(&serde_json::json!({"z": [1, {"b": null, "a": "x"}], "a": {}}));
        same(&Vec::<u8>::new());
        same(&());
    }

    /// The decisions written field by field are the bytes of the generic route, over random
    /// games with and without every module (every kind of decision, tollhouse targets or none).
    #[test]
    fn decisions_come_out_as_their_values_do() -> Result<(), Box<dyn std::error::Error>> {
        use rules::{Colour, Game, Modules, Setup, bot};
        let mut kinds = std::collections::BTreeSet::new();
        for seed in 0..8u64 {
            let modules = if seed % 2 == 1 {
                Modules::all()
            } else {
                Modules::default()
            };
            let setup =
                Setup::new(Colour::ALL[..2 + seed as usize % 3].to_vec(), seed).modules(modules);
            let (mut game, _) = Game::start(setup)?;
            let mut rng = seed;
            let mut w = ValueWriter::default();
            loop {
                let decisions = game.decisions();
                let (mut fast, mut all) = (Vec::new(), Vec::new());
                w.write_decisions(&mut fast, &decisions)?;
                write_value(&mut all, &decisions)?;
                assert_eq!(String::from_utf8(fast)?, String::from_utf8(all)?);
                for d in &decisions {
                    let (mut one, mut generic) = (Vec::new(), Vec::new());
                    w.write_decision(&mut one, d)?;
                    write_value(&mut generic, d)?;
                    assert_eq!(one, generic);
                    kinds.insert(serde_json::to_value(d)?["type"].to_string());
                }
                let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng))
                else {
                    break;
                };
                game.apply(player, cmd)?;
            }
        }
        assert!(kinds.len() >= 4, "{kinds:?}");
        Ok(())
    }

    #[test]
    fn integers_are_serde_jsons() -> Result<(), Error> {
        for v in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            270,
            12_345,
            i64::from(i32::MIN),
            i64::MAX,
            i64::MIN,
        ] {
            let mut out = Vec::new();
            push_integer(&mut out, v)?;
            assert_eq!(out, serde_json::to_vec(&v)?);
        }
        Ok(())
    }

    #[test]
    fn refusals_are_the_values_refusals() {
        let mut out = Vec::new();
        assert!(write_value(&mut out, &u128::MAX).is_err());
        assert!(serde_json::to_value(u128::MAX).is_err());
        let vec_key = BTreeMap::from([(vec![1u8], 1)]);
        assert!(write_value(&mut out, &vec_key).is_err());
        assert!(serde_json::to_value(&vec_key).is_err());
    }
}
