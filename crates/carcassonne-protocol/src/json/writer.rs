//! The generic serializer: any `Serialize` value written as its `serde_json::Value` would be,
//! objects put in key order in place when they end.

use super::key::KeyWriter;
use serde::ser::{self, Error as _, Serialize};
use serde_json::{Error, Value};
use std::fmt::{self, Write as _};

/// One entry of an object being written: its key and its bytes in the output (`"key":value`,
/// without the comma).
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
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

pub(super) struct Writer<'a> {
    pub(super) out: &'a mut Vec<u8>,
    pub(super) sorted: bool,
    /// The entries of every object being written, innermost last.
    pub(super) entries: Vec<Entry>,
    /// The keys of `entries`, unescaped (the order of `Value`'s map is the keys' own).
    pub(super) keys: String,
    pub(super) scratch: Vec<u8>,
    pub(super) text: String,
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

pub(super) struct SeqState<'w, 'a> {
    w: &'w mut Writer<'a>,
    a: Array,
    /// Closes an externally tagged tuple variant's object too.
    variant: bool,
}

pub(super) struct MapState<'w, 'a> {
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
