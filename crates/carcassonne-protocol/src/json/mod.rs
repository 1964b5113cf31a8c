//! Writes a value's JSON exactly as `serde_json::to_string(&serde_json::to_value(v)?)` does,
//! without building the `Value` tree: the patch of a diff carries `serde_json::Value`s (their
//! objects keep serde_json's `Map` order: sorted keys, unless its `preserve_order` feature is on),
//! and building, writing and freeing those trees would be most of a move's serialization cost.
//!
//! Fields and map entries are written in the order they come; when an object ends, its entries
//! are put in key order in place (most already are), so nested objects cost no allocation. A
//! test over random games checks the bytes against the `Value` route.
//!
//! - this file: [`ValueWriter`], the entry point and its reusable buffers;
//! - `decision`: the decisions every turn opens, written field by field;
//! - `writer`: the generic serializer behind [`ValueWriter::write`];
//! - `key`: map keys, converted or refused as `Value`'s map does.

mod decision;
mod key;
#[cfg(test)]
mod tests;
mod writer;

use serde::Serialize;
use serde_json::{Error, Value};
use std::sync::LazyLock;
use writer::{Entry, Writer};

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
}
