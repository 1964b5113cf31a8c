//! Board geometry: squares, sides, half-edges and rotations.
//!
//! Conventions (also in `docs/scenarios.md`): `x` grows to the east, `y` grows to the north; the
//! start tile lies on `(0, 0)`. A rotation is a number of degrees clockwise (0, 90, 180, 270). A
//! tile side is `N E S W`. A field touches a side on one of its two halves: `Nw Ne` (north side,
//! west and east half), `En Es`, `Se Sw`, `Ws Wn`: the eight half-edges in clockwise order.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A square of the board.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Pos {
    /// Grows to the east.
    pub x: i32,
    /// Grows to the north.
    pub y: i32,
}

impl Pos {
    pub const fn new(x: i32, y: i32) -> Self {
        Pos { x, y }
    }

    /// The square across `side`.
    pub const fn step(self, side: Side) -> Pos {
        match side {
            Side::N => Pos::new(self.x, self.y + 1),
            Side::E => Pos::new(self.x + 1, self.y),
            Side::S => Pos::new(self.x, self.y - 1),
            Side::W => Pos::new(self.x - 1, self.y),
        }
    }

    /// The 8 squares around this one.
    pub fn ring(self) -> impl Iterator<Item = Pos> {
        (-1..=1)
            .flat_map(move |dy| (-1..=1).map(move |dx| (dx, dy)))
            .filter(|&(dx, dy)| dx != 0 || dy != 0)
            .map(move |(dx, dy)| Pos::new(self.x + dx, self.y + dy))
    }

    /// The key used for this square in the maps of the public view: `"x,y"` (at most 23 bytes,
    /// so always inline in a [`crate::ids::Key`]: no allocation).
    pub fn key(self) -> crate::ids::Key {
        let mut buf = [0u8; KEY_MAX];
        crate::ids::Key::from(self.key_str(&mut buf))
    }

    /// [`Pos::key`] written into `buf`, without the formatting machinery (a view keys each new
    /// square, and a differ each touched one, on every move).
    pub fn key_str(self, buf: &mut [u8; KEY_MAX]) -> &str {
        let mut n = push_i32(buf, 0, self.x);
        buf[n] = b',';
        n = push_i32(buf, n + 1, self.y);
        // Only ASCII digits, '-' and ',' were written.
        std::str::from_utf8(&buf[..n]).unwrap_or_default()
    }
}

/// The longest [`Pos::key`]: `"-2147483648,-2147483648"`.
pub const KEY_MAX: usize = 23;

/// Writes `n` in decimal, as `Display` writes it, into `out` from `at`; returns the end.
fn push_i32(out: &mut [u8; KEY_MAX], at: usize, n: i32) -> usize {
    let mut buf = itoa::Buffer::new();
    let d = buf.format(n).as_bytes();
    out[at..at + d.len()].copy_from_slice(d);
    at + d.len()
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.x, self.y)
    }
}

/// A side of a square (and of a tile in board orientation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Side {
    N,
    E,
    S,
    W,
}

impl Side {
    pub const ALL: [Side; 4] = [Side::N, Side::E, Side::S, Side::W];

    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn from_index(i: usize) -> Side {
        Side::ALL[i % 4]
    }

    pub const fn opposite(self) -> Side {
        Side::from_index(self.index() + 2)
    }

    /// This side after turning the tile clockwise by `r`.
    pub const fn rotate(self, r: Rotation) -> Side {
        Side::from_index(self.index() + r.quarters() as usize)
    }

    /// The two half-edges of this side, in clockwise order.
    pub const fn halves(self) -> [Half; 2] {
        [Half::ALL[self.index() * 2], Half::ALL[self.index() * 2 + 1]]
    }
}

impl FromStr for Side {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "N" => Ok(Side::N),
            "E" => Ok(Side::E),
            "S" => Ok(Side::S),
            "W" => Ok(Side::W),
            _ => Err(format!("`{s}` is not a side (N, E, S, W)")),
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A half of a tile side, where fields meet: `Nw` is the west half of the north side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Half {
    Nw,
    Ne,
    En,
    Es,
    Se,
    Sw,
    Ws,
    Wn,
}

impl Half {
    /// Clockwise from the north-west corner.
    pub const ALL: [Half; 8] = [
        Half::Nw,
        Half::Ne,
        Half::En,
        Half::Es,
        Half::Se,
        Half::Sw,
        Half::Ws,
        Half::Wn,
    ];

    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn side(self) -> Side {
        Side::from_index(self.index() / 2)
    }

    /// This half after turning the tile clockwise by `r`.
    pub const fn rotate(self, r: Rotation) -> Half {
        Half::ALL[(self.index() + 2 * r.quarters() as usize) % 8]
    }

    /// The half of the neighbouring square that touches this one: `Nw` faces the neighbour's `Sw`.
    pub const fn facing(self) -> Half {
        match self {
            Half::Nw => Half::Sw,
            Half::Ne => Half::Se,
            Half::En => Half::Wn,
            Half::Es => Half::Ws,
            Half::Se => Half::Ne,
            Half::Sw => Half::Nw,
            Half::Ws => Half::Es,
            Half::Wn => Half::En,
        }
    }
}

impl FromStr for Half {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Half::ALL
            .iter()
            .copied()
            .find(|h| format!("{h:?}") == s)
            .ok_or_else(|| format!("`{s}` is not a half-edge (Nw Ne En Es Se Sw Ws Wn)"))
    }
}

impl fmt::Display for Half {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A clockwise rotation of a tile, written on the wire in degrees: 0, 90, 180 or 270.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Rotation(u8);

impl Rotation {
    pub const ALL: [Rotation; 4] = [Rotation(0), Rotation(1), Rotation(2), Rotation(3)];

    /// `q` quarter turns clockwise (taken modulo 4).
    pub const fn from_quarters(q: u8) -> Self {
        Rotation(q % 4)
    }

    pub const fn quarters(self) -> u8 {
        self.0
    }

    pub const fn degrees(self) -> u16 {
        self.0 as u16 * 90
    }

    pub fn from_degrees(d: u16) -> Option<Self> {
        match d {
            0 | 90 | 180 | 270 => Some(Rotation((d / 90) as u8)),
            _ => None,
        }
    }
}

impl fmt::Display for Rotation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.degrees())
    }
}

impl Serialize for Rotation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u16(self.degrees())
    }
}

impl<'de> Deserialize<'de> for Rotation {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let deg = u16::deserialize(d)?;
        Rotation::from_degrees(deg).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "rotation must be 0, 90, 180 or 270 degrees, not {deg}"
            ))
        })
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Rotation {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Rotation".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Clockwise rotation of a tile in degrees.",
            "type": "integer",
            "enum": [0, 90, 180, 270]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_display_text() {
        let values = [0, 1, -1, 9, -10, 72, -72, 12_345, i32::MAX, i32::MIN];
        for x in values {
            for y in values {
                let p = Pos::new(x, y);
                assert_eq!(p.key(), format!("{x},{y}"));
                assert_eq!(p.key(), p.to_string());
                assert!(!p.key().is_heap_allocated(), "{p}");
            }
        }
    }

    #[test]
    fn halves_rotate_with_their_side() {
        for h in Half::ALL {
            for r in Rotation::ALL {
                assert_eq!(h.rotate(r).side(), h.side().rotate(r));
            }
            assert_eq!(h.facing().facing(), h);
            assert_eq!(h.facing().side(), h.side().opposite());
        }
        assert_eq!(Half::Nw.rotate(Rotation::from_quarters(1)), Half::En);
    }

    #[test]
    fn rotation_round_trips_in_degrees() {
        let json = serde_json::to_string(&Rotation::from_quarters(3)).unwrap_or_default();
        assert_eq!(json, "270");
        assert!(serde_json::from_str::<Rotation>("45").is_err());
    }
}
