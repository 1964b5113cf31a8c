//! Ids shared by the API types: a tile design's id and the keys of the view's maps. A leaf module
//! (it names nothing else of the crate), so that the tiles, the decisions and the view can all
//! use it without depending on one another.

/// A key or a tile id in the view: a string kept inline up to 24 bytes (every square's `"x,y"`,
/// meeple's `"x,y target"` and tile id is), so that a view kept per live match holds no heap
/// block per key, and refreshing and diffing views clone and compare them without allocating or
/// chasing pointers. Serialized, ordered and hashed exactly as the `String` it stands for (a
/// `BTreeMap` of them is in the strings' byte order); its JSON Schema is a plain string.
pub type Key = compact_str::CompactString;
