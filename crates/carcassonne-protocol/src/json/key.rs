//! Map keys: a string as is; anything else converted or refused as `Value`'s map does.

use serde::ser::{self, Error as _, Impossible, Serialize};
use serde_json::{Error, Value};

/// Appends a map key to `keys` as `Value`'s map would hold it: a string as is; anything else
/// (a number, a unit variant…) through `serde_json::to_value` of a one-entry map, so that it is
/// converted or refused exactly as there.
pub(super) struct KeyWriter<'k> {
    pub(super) keys: &'k mut String,
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
