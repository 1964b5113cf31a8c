//! Carcassonne Maps (P1–P7): printed map boards read from data, and the Map Chips of France setup.
//!
//! A map is data, not code: `data/maps/<id>.toml` draws the outline as an ASCII grid and lists the
//! start squares (P2), printed large cities (P3), border prints (P4) and towns (P5). The format is
//! documented at the top of `data/maps/france.toml` and in `docs/maps.md`; [`parse`] checks a file
//! thoroughly, so another country is only another file. The engine asks a [`Map`] what a square
//! is and what lies across each of its sides ([`Map::across`]); it never reads the grid itself.
//!
//! - [`load`]: the file format and its checks ([`MapError`]).
//! - [`chips`]: P2 start choice and the P7 chip layout, pure functions of the map and a seeded RNG.
//! - [`render`]: a plain-text picture of a map (and of the chips on it) for a terminal.
//!
//! Coordinates are the engine's ([`crate::geometry`]): `x` grows east, `y` grows north. On a map
//! the south-west corner of the outline's bounding box is `(0, 0)`.

pub mod chips;
pub mod load;
pub mod render;

pub use chips::{
    CHIPS_PER_GRAPE, Chip, MapSetupError, StartChoice, chip_set, chip_squares, choose_starts,
    lay_chips,
};
pub use load::{MapError, parse};

use crate::geometry::{Pos, Side};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The map files compiled into the crate: (id, text). The id is the file name without `.toml`.
const DATA: &[(&str, &str)] = &[("france", include_str!("../data/maps/france.toml"))];

/// The ids of the maps this build knows, in a fixed order.
pub fn ids() -> impl Iterator<Item = &'static str> {
    DATA.iter().map(|(id, _)| *id)
}

/// The map named `id`: a built-in one, else one a setup gave as text ([`register`]).
pub fn map(id: &str) -> Option<&'static Map> {
    builtin(id).or_else(|| given(id))
}

/// Maps that setups gave as text (scenarios and tests), parsed once per name and kept for the
/// life of the process, so that a game names them like a built-in map and a copy of it finds
/// its map again. Only a setup that carries the text adds one, so a match stays a function of its
/// setup; the list grows with the distinct maps a process is given (a handful in a test run), up to
/// [`MAX_GIVEN`].
static GIVEN: Mutex<Vec<(&'static Map, String)>> = Mutex::new(Vec::new());

/// The most maps a process keeps from text: they are never freed, so a server that takes test
/// setups from clients cannot be made to grow without bound.
pub const MAX_GIVEN: usize = 256;

fn given(id: &str) -> Option<&'static Map> {
    let list = GIVEN.lock().unwrap_or_else(PoisonError::into_inner);
    list.iter().find(|(m, _)| m.id == id).map(|(m, _)| *m)
}

/// The map a setup gives as `text` in the map file format, named `id`: parsed and checked like a
/// built-in file, then kept (see [`GIVEN`]). The same name with the same text gives the same map;
/// a built-in map's name, or a name already given to another text, is refused.
pub fn register(id: &str, text: &str) -> Result<&'static Map, MapError> {
    if builtin(id).is_some() {
        return Err(MapError::NameTaken { id: id.to_string() });
    }
    let parsed = parse(id, text)?;
    let mut list = GIVEN.lock().unwrap_or_else(PoisonError::into_inner);
    if list.len() >= MAX_GIVEN && !list.iter().any(|(m, _)| m.id == id) {
        return Err(MapError::TooManyGiven { most: MAX_GIVEN });
    }
    if let Some((m, t)) = list.iter().find(|(m, _)| m.id == id) {
        return match t == text {
            true => Ok(m),
            false => Err(MapError::NameTaken { id: id.to_string() }),
        };
    }
    let kept: &'static Map = Box::leak(Box::new(parsed));
    list.push((kept, text.to_string()));
    Ok(kept)
}

/// The built-in map `id`, parsed and checked once. The data is part of the build and checked by
/// tests (`tests/map_france.rs`), so a broken file is a programming error.
fn builtin(id: &str) -> Option<&'static Map> {
    static MAPS: OnceLock<Vec<Map>> = OnceLock::new();
    let maps = MAPS.get_or_init(|| {
        DATA.iter()
            .map(|(id, text)| match parse(id, text) {
                Ok(m) => m,
                Err(e) => panic!("map data {id}.toml is invalid: {e}"),
            })
            .collect()
    });
    maps.iter().find(|m| m.id == id)
}

/// The grape colour a town buys (P5) and a chip shows (P7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Grape {
    Purple,
    LightBlue,
    Orange,
}

impl Grape {
    pub const ALL: [Grape; 3] = [Grape::Purple, Grape::LightBlue, Grape::Orange];

    /// One lower-case letter, for text renderings: `p`, `b` (light blue), `o`.
    pub const fn letter(self) -> char {
        match self {
            Grape::Purple => 'p',
            Grape::LightBlue => 'b',
            Grape::Orange => 'o',
        }
    }
}

/// What the map prints on a border side (P4). A tile on that square must show the same on that
/// side; a neutral border takes any edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Print {
    Neutral,
    Road,
    /// A city reaching abroad; `coat` if it shows a coat of arms (P9: only then a sale abroad).
    City {
        coat: bool,
    },
}

impl Print {
    /// P9: a tile joining this print may sell a wine abroad (a road, or a city with a coat of
    /// arms; DECISION: a city without a coat allows no sale).
    pub const fn sells_abroad(self) -> bool {
        matches!(self, Print::Road | Print::City { coat: true })
    }
}

/// A printed large city, by its index in [`Map::cities`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CityId(pub u8);

impl CityId {
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// What lies across one side of a square of the map (P1, P3, P4). The engine adds "a tile" on
/// top of this from its own board state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Across {
    /// Another placeable square.
    Square(Pos),
    /// A border side (P4): off the map or a non-placeable square that is not a large city. The
    /// print says what a tile must show on this side.
    Border(Print),
    /// An open city edge of a printed large city (P3): the tile must show city on this side and
    /// its city joins the large city. `square` is the city's square across the side.
    LargeCity { city: CityId, square: Pos },
    /// The square asked about is not a placeable square: nothing can be placed on it.
    OffMap,
}

/// A start square (P2). It is an ordinary placeable square once the game has begun; it is not a
/// town and never holds a chip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StartSquare {
    pub name: String,
    /// Its mark in the data file's outline (a digit).
    pub mark: char,
    pub pos: Pos,
}

/// A printed large city (P3). Its squares count as city tiles and its coats as coats of arms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LargeCity {
    pub name: String,
    /// Its mark in the data file's outline (an upper-case letter).
    pub mark: char,
    /// The printed squares, sorted by `(x, y)`.
    pub squares: Vec<Pos>,
    /// Printed coats of arms.
    pub coats: u8,
    /// The open city edges: a city square and its side that faces a placeable square, sorted.
    pub open: Vec<(Pos, Side)>,
}

/// A town (P5): an ordinary placeable square that buys wine of its grape colour (P9).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Town {
    pub name: String,
    /// Its mark in the data file's outline (a lower-case letter).
    pub mark: char,
    pub pos: Pos,
    /// `None` on a map played without the chips of a country that colours its towns.
    pub grape: Option<Grape>,
}

/// A printed (non-neutral) border side (P4). `country` is for people; the rules ignore it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BorderPrint {
    pub pos: Pos,
    pub side: Side,
    pub print: Print,
    pub country: Option<String>,
}

/// The inclusive bounding box of a map's outline: `min` is `(0, 0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Bounds {
    pub min: Pos,
    pub max: Pos,
}

impl Bounds {
    pub const fn contains(self, p: Pos) -> bool {
        p.x >= self.min.x && p.x <= self.max.x && p.y >= self.min.y && p.y <= self.max.y
    }
    pub const fn width(self) -> i32 {
        self.max.x - self.min.x + 1
    }
    pub const fn height(self) -> i32 {
        self.max.y - self.min.y + 1
    }
}

/// The public description of a map, everything a client needs to draw it (P6: the map is public
/// state). Static: a view should carry it once, not in every diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MapInfo {
    pub id: String,
    pub name: String,
    pub bounds: Bounds,
    /// Rows from north (`y = max`) to south (`y = 0`), one character per square from `x = 0`:
    /// `#` placeable, `.` not on the map, an upper-case letter a square of the large city with
    /// that mark.
    pub outline: Vec<String>,
    pub starts: Vec<StartSquare>,
    pub cities: Vec<LargeCity>,
    pub towns: Vec<Town>,
    /// The printed border sides; every other border side is neutral.
    pub borders: Vec<BorderPrint>,
}

/// One cell of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cell {
    Off,
    Placeable,
    City(CityId),
}

/// A checked map board. Build one with [`parse`] or take a built-in one with [`map`].
#[derive(Debug, Clone)]
pub struct Map {
    /// Stable id (the file name): matches store it.
    pub id: String,
    /// Name for people.
    pub name: String,
    pub(crate) width: i32,
    pub(crate) height: i32,
    /// Row-major from the south-west corner: index `y * width + x`.
    pub(crate) cells: Vec<Cell>,
    /// For every cell, what lies across each side (N E S W); `OffMap` rows for non-placeable cells.
    pub(crate) across: Vec<[Across; 4]>,
    pub(crate) starts: Vec<StartSquare>,
    pub(crate) cities: Vec<LargeCity>,
    pub(crate) towns: Vec<Town>,
    pub(crate) borders: Vec<BorderPrint>,
    /// [`Map::info`], built once and shared by every view of a match on this map.
    pub(crate) shared_info: OnceLock<Arc<MapInfo>>,
}

impl Map {
    fn index(&self, p: Pos) -> Option<usize> {
        if p.x < 0 || p.y < 0 || p.x >= self.width || p.y >= self.height {
            return None;
        }
        Some((p.y * self.width + p.x) as usize)
    }

    pub(crate) fn cell(&self, p: Pos) -> Cell {
        self.index(p).map_or(Cell::Off, |i| self.cells[i])
    }

    /// The bounding box of the outline; every placeable and large-city square lies inside.
    pub const fn bounds(&self) -> Bounds {
        Bounds {
            min: Pos::new(0, 0),
            max: Pos::new(self.width - 1, self.height - 1),
        }
    }

    /// P1: may a tile ever lie on `p`? (Large-city squares are not placeable, P3.)
    pub fn is_placeable(&self, p: Pos) -> bool {
        self.cell(p) == Cell::Placeable
    }

    /// The printed large city on `p`, if any (P3).
    pub fn city_at(&self, p: Pos) -> Option<CityId> {
        match self.cell(p) {
            Cell::City(c) => Some(c),
            _ => None,
        }
    }

    /// P1, P3, P4: what lies across `side` of square `p`. [`Across::OffMap`] when `p` itself is
    /// not placeable.
    pub fn across(&self, p: Pos, side: Side) -> Across {
        match self.index(p) {
            Some(i) => self.across[i][side.index()],
            None => Across::OffMap,
        }
    }

    /// All placeable squares, by `y` then `x` (south to north, west to east).
    pub fn placeable(&self) -> impl Iterator<Item = Pos> + '_ {
        let w = self.width;
        self.cells
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == Cell::Placeable)
            .map(move |(i, _)| Pos::new(i as i32 % w, i as i32 / w))
    }

    /// How many squares are placeable.
    pub fn placeable_count(&self) -> usize {
        self.cells.iter().filter(|c| **c == Cell::Placeable).count()
    }

    /// P2: the start squares, in the order of the data file.
    pub fn starts(&self) -> &[StartSquare] {
        &self.starts
    }

    /// The start square named `name` (exact match), by index into [`Map::starts`].
    pub fn start_named(&self, name: &str) -> Option<usize> {
        self.starts.iter().position(|s| s.name == name)
    }

    /// P3: the printed large cities; a [`CityId`] indexes this slice.
    pub fn cities(&self) -> &[LargeCity] {
        &self.cities
    }

    pub fn city(&self, id: CityId) -> &LargeCity {
        &self.cities[id.index()]
    }

    /// P5: the towns, in the order of the data file.
    pub fn towns(&self) -> &[Town] {
        &self.towns
    }

    /// P5, P9: the town on `p`, if any.
    pub fn town_at(&self, p: Pos) -> Option<&Town> {
        self.towns.iter().find(|t| t.pos == p)
    }

    /// P4: every printed (non-neutral) border side, sorted by square then side.
    pub fn border_prints(&self) -> &[BorderPrint] {
        &self.borders
    }

    /// P9: the border sides of `p` printed with a road or a city with a coat of arms. A tile on
    /// `p` must show the same there (P4), so placing any tile on `p` joins them and allows a sale
    /// abroad. Empty for most squares.
    pub fn sale_abroad_sides(&self, p: Pos) -> impl Iterator<Item = (Side, Print)> + '_ {
        Side::ALL
            .into_iter()
            .filter_map(move |s| match self.across(p, s) {
                Across::Border(print) if print.sells_abroad() => Some((s, print)),
                _ => None,
            })
    }

    /// [`Map::info`], built on first use and then shared: a view carries it whole, so that every
    /// view of every match on this map holds the same one (no copy of the printed map per view),
    /// and a differ that finds the same one on both sides need not compare it.
    pub fn shared_info(&self) -> Arc<MapInfo> {
        Arc::clone(self.shared_info.get_or_init(|| Arc::new(self.info())))
    }

    /// The public description of this map (for views and clients).
    pub fn info(&self) -> MapInfo {
        let outline = (0..self.height)
            .rev()
            .map(|y| {
                (0..self.width)
                    .map(|x| match self.cell(Pos::new(x, y)) {
                        Cell::Off => '.',
                        Cell::Placeable => '#',
                        Cell::City(id) => self.city(id).mark,
                    })
                    .collect()
            })
            .collect();
        MapInfo {
            id: self.id.clone(),
            name: self.name.clone(),
            bounds: self.bounds(),
            outline,
            starts: self.starts.clone(),
            cities: self.cities.clone(),
            towns: self.towns.clone(),
            borders: self.borders.clone(),
        }
    }

    /// P3, P7: the placeable squares across an open edge of a large city, sorted, without repeats.
    pub fn open_edge_squares(&self) -> Vec<Pos> {
        let mut v: Vec<Pos> = self
            .cities
            .iter()
            .flat_map(|c| c.open.iter().map(|&(p, s)| p.step(s)))
            .collect();
        v.sort();
        v.dedup();
        v
    }
}
