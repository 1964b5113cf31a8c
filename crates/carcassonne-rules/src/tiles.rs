//! The tile catalogue: tile designs read from the data files in `crates/carcassonne-rules/data/`.
//!
//! The data files are the documentation of what is printed on each tile (B1, B2, T1); this module
//! only parses them, checks them for consistency (every edge letter agrees with the segments that
//! reach that side) and turns them into the compact form the engine uses. The format is described
//! at the top of `data/base.toml`.

use crate::geometry::{Half, Side};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

/// Index of a tile design in the catalogue; stable for one build of the rules crate.
pub type TileIdx = u16;

/// What is printed on one side of a tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Edge {
    /// F: a field.
    Field = 1,
    /// R: a road (with a field on each half).
    Road = 2,
    /// C: a city.
    City = 3,
}

/// The four kinds of feature a meeple can stand on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FeatureKind {
    Road,
    City,
    Field,
    Monastery,
}

/// Where a road segment that reaches only one side of its tile stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RoadEnd {
    Village,
    City,
    Monastery,
    /// A house standing on the road's end, no village (tile C of Traders & Builders, R3).
    House,
}

/// The field illustrations of B2 and the traveller groups of T1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum PictureKind {
    Farmhouse,
    Cowshed,
    Pigsty,
    DonkeyStable,
    Garden,
    Highwaymen,
    WaterTower,
    Travellers,
}

impl PictureKind {
    pub const COUNT: usize = 8;
    pub const ALL: [PictureKind; 8] = [
        PictureKind::Farmhouse,
        PictureKind::Cowshed,
        PictureKind::Pigsty,
        PictureKind::DonkeyStable,
        PictureKind::Garden,
        PictureKind::Highwaymen,
        PictureKind::WaterTower,
        PictureKind::Travellers,
    ];

    /// Cowsheds, pigsties and donkey stables are together "sheds" (B2).
    pub const fn is_shed(self) -> bool {
        matches!(
            self,
            PictureKind::Cowshed | PictureKind::Pigsty | PictureKind::DonkeyStable
        )
    }
}

/// One picture on a tile: the field it stands in and, if any, the road segment(s) it stands
/// beside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    pub kind: PictureKind,
    /// Segment index (into [`TileDesign::segments`]) of the field it stands in, if it stands in one.
    pub field: Option<u8>,
    /// Segment index of the (first) road segment it stands beside, if any (T7). Roads come first
    /// in [`TileDesign::segments`], so this is also the index into the file's `road` list.
    pub road: Option<u8>,
    /// Every road segment it stands beside (I3: a field bordered by two segments of the tile):
    /// `road` and the others, in the file's order.
    pub roads: Vec<u8>,
}

/// An inn (I7): the field it stands in and the road segments it stands beside (I3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inn {
    /// Segment index of the field it stands in.
    pub field: u8,
    /// Segment indices of the road segments it stands beside (roads come first, so these are
    /// also indices into the file's `road` list).
    pub roads: Vec<u8>,
}

/// The trade goods of Traders & Builders (R1, R5): a symbol on a city, a token in a player's hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Goods {
    Wine,
    Grain,
    Cloth,
}

impl Goods {
    /// The kinds in the order final scoring pays them (R14).
    pub const ALL: [Goods; 3] = [Goods::Wine, Goods::Grain, Goods::Cloth];
}

/// One feature segment printed on a tile (a road piece, a city piece, a field area, a monastery).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub kind: FeatureKind,
    /// Roads and cities: bit `Side::index()` set for each side the segment reaches (rotation 0).
    pub sides: u8,
    /// Fields: bit `Half::index()` set for each half-edge the field reaches (rotation 0).
    pub halves: u8,
    /// Cities: the segment shows a coat of arms.
    pub coat: bool,
    /// Roads: an inn stands beside this segment (I7).
    pub inn: bool,
    /// Cities: the segment shows a cathedral (I9).
    pub cathedral: bool,
    /// Cities: the goods symbol it shows (R2).
    pub goods: Option<Goods>,
    /// Roads reaching a single side: where the other end stops.
    pub end: Option<RoadEnd>,
    /// Fields: segment indices of the city segments this field touches (farmers, B7).
    pub touches: Vec<u8>,
    /// Roads: how many pictures of each [`PictureKind`] stand beside this segment (T7).
    pub beside: [u8; PictureKind::COUNT],
}

impl Segment {
    /// Ends of this segment that lie on the tile's border (sides for roads and cities).
    pub fn side_count(&self) -> u32 {
        self.sides.count_ones()
    }
}

/// One tile design, as printed.
#[derive(Debug, Clone)]
pub struct TileDesign {
    /// Stable id, `set/letter` with `+picture` for the copies that show one: `base/U+garden`.
    pub id: crate::ids::Key,
    /// The community letter (B1), shared by the copies of a kind that differ only in pictures.
    pub letter: String,
    /// The set it belongs to: `base`, `tollkeepers`.
    pub set: String,
    /// How many copies the set has.
    pub count: u32,
    /// N E S W at rotation 0.
    pub edges: [Edge; 4],
    /// Roads first, then cities, then fields, then the monastery.
    pub segments: Vec<Segment>,
    /// The tile shows a village where its roads end.
    pub village: bool,
    pub pictures: Vec<Picture>,
    /// Inns & Cathedrals: the inns on the tile (I2, I3).
    pub inns: Vec<Inn>,
    /// Edges packed two bits a side, N in the low bits, for fast matching.
    pub(crate) edge_code: u8,
    /// Cached [`TileDesign::village_roads`] >= 2.
    crossroads: bool,
    /// Cached index of the monastery segment, if the tile shows one (phase 3 looks around every
    /// placed tile for monasteries).
    pub(crate) monastery: Option<u8>,
    /// Cached: a road segment has a picture beside it (T7).
    pub(crate) pictured_roads: bool,
    /// For every requirement a square can pose (an edge code with 0 for an unconstrained side),
    /// the rotations that meet it, as bits 0–3: legal placements become one lookup per square.
    pub(crate) fits: [u8; 256],
}

impl TileDesign {
    /// Number of road segments that end at this tile's village.
    pub fn village_roads(&self) -> usize {
        if !self.village {
            return 0;
        }
        self.segments
            .iter()
            .filter(|s| s.kind == FeatureKind::Road && s.end == Some(RoadEnd::Village))
            .count()
    }

    /// A village where 2, 3 or 4 roads end is a crossroads (T3).
    pub fn is_crossroads(&self) -> bool {
        self.crossroads
    }

    pub fn has_monastery(&self) -> bool {
        self.segments
            .iter()
            .any(|s| s.kind == FeatureKind::Monastery)
    }

    /// Edge code turned clockwise by `quarters`.
    pub(crate) fn edge_code_rotated(&self, quarters: u8) -> u8 {
        let q = u32::from(quarters % 4) * 2;
        self.edge_code.rotate_left(q)
    }
}

/// All tile designs known to this build.
#[derive(Debug)]
pub struct Catalogue {
    pub tiles: Vec<TileDesign>,
    by_id: HashMap<String, TileIdx>,
    /// Every design, in the order of their ids (a view's pile is a map keyed by id: brought up
    /// to date by walking both in that order, not by a search per tile).
    by_id_order: Vec<TileIdx>,
    /// The design whose copy starts the game face up on (0, 0).
    pub start: TileIdx,
}

impl Catalogue {
    pub fn get(&self, idx: TileIdx) -> &TileDesign {
        &self.tiles[idx as usize]
    }

    pub fn find(&self, id: &str) -> Option<TileIdx> {
        self.by_id.get(id).copied()
    }

    /// Every design, in the order of their ids.
    pub fn in_id_order(&self) -> &[TileIdx] {
        &self.by_id_order
    }

    /// Tiles of one set, with their counts.
    pub fn set(&self, set: &str) -> impl Iterator<Item = (TileIdx, &TileDesign)> {
        self.tiles
            .iter()
            .enumerate()
            .filter(move |(_, t)| t.set == set)
            .map(|(i, t)| (i as TileIdx, t))
    }
}

/// The data files compiled into the crate.
const DATA: &[(&str, &str)] = &[
    ("base.toml", include_str!("../data/base.toml")),
    ("tollkeepers.toml", include_str!("../data/tollkeepers.toml")),
    (
        "inns-cathedrals.toml",
        include_str!("../data/inns-cathedrals.toml"),
    ),
    (
        "traders-builders.toml",
        include_str!("../data/traders-builders.toml"),
    ),
];

/// The catalogue, parsed once. The data is part of the build and checked by tests, so a broken
/// file is a programming error.
pub fn catalogue() -> &'static Catalogue {
    static CAT: OnceLock<Catalogue> = OnceLock::new();
    CAT.get_or_init(|| match parse(DATA) {
        Ok(c) => c,
        Err(e) => panic!("tile data is invalid: {e}"),
    })
}

/// What is wrong with a tile data file.
#[derive(Debug, thiserror::Error)]
pub struct DataError(pub String);

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDef {
    /// Only in the base file: the id of the start tile.
    start: Option<String>,
    #[serde(default)]
    tile: Vec<TileDef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TileDef {
    id: String,
    letter: String,
    count: u32,
    edges: String,
    #[serde(default)]
    road: Vec<RoadDef>,
    #[serde(default)]
    city: Vec<CityDef>,
    #[serde(default)]
    field: Vec<FieldDef>,
    #[serde(default)]
    monastery: bool,
    #[serde(default)]
    village: bool,
    #[serde(default)]
    pictures: Vec<PictureDef>,
    #[serde(default)]
    inns: Vec<InnDef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoadDef {
    sides: String,
    end: Option<RoadEnd>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CityDef {
    sides: String,
    #[serde(default)]
    coat: bool,
    #[serde(default)]
    cathedral: bool,
    #[serde(default)]
    goods: Option<Goods>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FieldDef {
    halves: String,
    #[serde(default)]
    cities: Vec<u8>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PictureDef {
    kind: PictureKind,
    field: Option<u8>,
    road: Option<Roads>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InnDef {
    field: u8,
    road: Roads,
}

/// `road = 0`, or `road = [0, 2]` for something beside two segments (I3).
#[derive(Deserialize)]
#[serde(untagged)]
enum Roads {
    One(u8),
    Many(Vec<u8>),
}

impl Roads {
    fn list(&self) -> &[u8] {
        match self {
            Roads::One(r) => std::slice::from_ref(r),
            Roads::Many(v) => v,
        }
    }
}

/// The bit mask of the sides (`N E`) or halves (`Nw Ne`) a data file names, one bit per
/// `index` of each.
fn mask<T>(s: &str, ctx: &str, index: impl Fn(&T) -> usize) -> Result<u8, DataError>
where
    T: FromStr,
    T::Err: fmt::Display,
{
    let mut m = 0u8;
    for w in s.split_whitespace() {
        let item: T = w.parse().map_err(|e| DataError(format!("{ctx}: {e}")))?;
        m |= 1 << index(&item);
    }
    Ok(m)
}

fn side_mask(s: &str, ctx: &str) -> Result<u8, DataError> {
    mask(s, ctx, |side: &Side| side.index())
}

fn half_mask(s: &str, ctx: &str) -> Result<u8, DataError> {
    mask(s, ctx, |h: &Half| h.index())
}

/// Parses and checks the given data files (name, text).
pub fn parse(files: &[(&str, &str)]) -> Result<Catalogue, DataError> {
    let mut tiles = Vec::new();
    let mut start = None;
    for (name, text) in files {
        let file: FileDef = toml::from_str(text).map_err(|e| DataError(format!("{name}: {e}")))?;
        if let Some(s) = file.start {
            start = Some(s);
        }
        for def in file.tile {
            let ctx = format!("{name}: {}", def.id);
            tiles.push(compile(def, &ctx)?);
        }
    }
    let mut by_id = HashMap::new();
    for (i, t) in tiles.iter().enumerate() {
        if by_id.insert(t.id.to_string(), i as TileIdx).is_some() {
            return Err(DataError(format!("tile id {} is defined twice", t.id)));
        }
    }
    let start = start.ok_or_else(|| DataError("no start tile is named".into()))?;
    let start = *by_id
        .get(&start)
        .ok_or_else(|| DataError(format!("start tile {start} is not defined")))?;
    let mut by_id_order: Vec<TileIdx> = (0..tiles.len() as TileIdx).collect();
    by_id_order.sort_by(|&a, &b| tiles[a as usize].id.cmp(&tiles[b as usize].id));
    Ok(Catalogue {
        tiles,
        by_id,
        by_id_order,
        start,
    })
}

/// One tile definition checked and turned into a design: its edges and id, its segments (roads,
/// cities, fields, monastery), the sides checked against the segments that reach them, its
/// pictures, then the caches for placement.
fn compile(def: TileDef, ctx: &str) -> Result<TileDesign, DataError> {
    let edges = parse_edges(&def.edges, ctx)?;
    let set = check_id(&def, ctx)?;
    let (mut segments, first_field) = segments_of(&def, ctx)?;
    check_sides(&edges, &segments, ctx)?;
    let pictures = pictures_of(&def, first_field, &mut segments, ctx)?;
    let inns = inns_of(&def, first_field, &mut segments, ctx)?;

    let edge_code = edges
        .iter()
        .enumerate()
        .fold(0u8, |acc, (i, e)| acc | ((*e as u8) << (2 * i)));
    let crossroads = def.village
        && segments
            .iter()
            .filter(|s| s.kind == FeatureKind::Road && s.end == Some(RoadEnd::Village))
            .count()
            >= 2;
    let monastery = segments
        .iter()
        .position(|s| s.kind == FeatureKind::Monastery)
        .map(|i| i as u8);
    let pictured_roads = segments
        .iter()
        .any(|s| s.kind == FeatureKind::Road && s.beside.iter().any(|&n| n > 0));
    Ok(TileDesign {
        fits: fits_of(edge_code),
        crossroads,
        monastery,
        pictured_roads,
        id: def.id.into(),
        letter: def.letter,
        set,
        count: def.count,
        edges,
        segments,
        village: def.village,
        pictures,
        inns,
        edge_code,
    })
}

/// The four edges, N E S W: "C R F R" or "CRFR" (four one-letter words, or one four-letter word).
fn parse_edges(text: &str, ctx: &str) -> Result<[Edge; 4], DataError> {
    let err = |m: String| DataError(format!("{ctx}: {m}"));
    let letters: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let words = text.split_whitespace().count();
    if letters.len() != 4 || (words != 1 && words != 4) {
        return Err(err(format!("edges `{text}` must name 4 sides")));
    }
    let mut edges = [Edge::Field; 4];
    for (i, c) in letters.iter().enumerate() {
        edges[i] = match c {
            'F' => Edge::Field,
            'R' => Edge::Road,
            'C' => Edge::City,
            _ => return Err(err(format!("edge letter `{c}` is not C, R or F"))),
        };
    }
    Ok(edges)
}

/// The id is `set/LETTER` or `set/LETTER+picture` and agrees with the letter; the count is at
/// least 1. Returns the set.
fn check_id(def: &TileDef, ctx: &str) -> Result<String, DataError> {
    let err = |m: String| DataError(format!("{ctx}: {m}"));
    let (set, rest) = def
        .id
        .split_once('/')
        .ok_or_else(|| err("id must be `set/LETTER` or `set/LETTER+picture`".into()))?;
    if rest.split('+').next() != Some(def.letter.as_str()) {
        return Err(err(format!(
            "letter `{}` does not match the id",
            def.letter
        )));
    }
    if def.count == 0 {
        return Err(err("count must be at least 1".into()));
    }
    Ok(set.to_string())
}

/// The segments in their fixed order: roads, cities, fields, then the monastery. Returns them
/// with the index of the first field.
fn segments_of(def: &TileDef, ctx: &str) -> Result<(Vec<Segment>, usize), DataError> {
    let err = |m: String| DataError(format!("{ctx}: {m}"));
    let segment = |kind, sides, halves| Segment {
        kind,
        sides,
        halves,
        coat: false,
        inn: false,
        cathedral: false,
        goods: None,
        end: None,
        touches: Vec::new(),
        beside: [0; PictureKind::COUNT],
    };
    let mut segments = Vec::new();
    for r in &def.road {
        let sides = side_mask(&r.sides, ctx)?;
        match (sides.count_ones(), r.end) {
            (2, None) | (1, Some(_)) => {}
            _ => {
                return Err(err(format!(
                    "road `{}` must join two sides, or reach one side and name its end",
                    r.sides
                )));
            }
        }
        let missing = match r.end {
            Some(RoadEnd::Village) => !def.village,
            Some(RoadEnd::Monastery) => !def.monastery,
            Some(RoadEnd::City) => def.city.is_empty(),
            Some(RoadEnd::House) | None => false,
        };
        if missing {
            return Err(err(format!(
                "road `{}` ends at a {:?} the tile does not show",
                r.sides,
                r.end.unwrap_or(RoadEnd::Village)
            )));
        }
        segments.push(Segment {
            end: r.end,
            ..segment(FeatureKind::Road, sides, 0)
        });
    }
    let first_city = segments.len();
    for c in &def.city {
        segments.push(Segment {
            coat: c.coat,
            cathedral: c.cathedral,
            goods: c.goods,
            ..segment(FeatureKind::City, side_mask(&c.sides, ctx)?, 0)
        });
    }
    let first_field = segments.len();
    let enclosed = def
        .field
        .iter()
        .filter(|f| f.halves.trim().is_empty())
        .count();
    for f in &def.field {
        let mut touches = Vec::new();
        for &c in &f.cities {
            if c as usize >= def.city.len() {
                return Err(err(format!("field touches city {c}, which is not defined")));
            }
            touches.push((first_city + c as usize) as u8);
        }
        let halves = half_mask(&f.halves, ctx)?;
        // I2, R3: a field that reaches no side (enclosed by cities) is named `field:inner`: so
        // one a tile at most, and it lies between cities.
        if halves == 0 && (touches.is_empty() || enclosed > 1) {
            return Err(err(
                "an enclosed field (no halves) must touch a city, one a tile".into(),
            ));
        }
        segments.push(Segment {
            touches,
            ..segment(FeatureKind::Field, 0, halves)
        });
    }
    if def.monastery {
        segments.push(segment(FeatureKind::Monastery, 0, 0));
    }
    Ok((segments, first_field))
}

/// Every side: its letter agrees with what reaches it (a city side one city segment; a road or
/// field side a field on each half, and a road segment on a road side).
fn check_sides(edges: &[Edge; 4], segments: &[Segment], ctx: &str) -> Result<(), DataError> {
    for side in Side::ALL {
        let bit = 1u8 << side.index();
        let roads = segments
            .iter()
            .filter(|s| s.kind == FeatureKind::Road && s.sides & bit != 0)
            .count();
        let cities = segments
            .iter()
            .filter(|s| s.kind == FeatureKind::City && s.sides & bit != 0)
            .count();
        let [h0, h1] = side.halves();
        let fields_on = |h: Half| {
            segments
                .iter()
                .filter(|s| s.kind == FeatureKind::Field && s.halves & (1 << h.index()) != 0)
                .count()
        };
        let (f0, f1) = (fields_on(h0), fields_on(h1));
        let ok = match edges[side.index()] {
            Edge::City => cities == 1 && roads == 0 && f0 == 0 && f1 == 0,
            Edge::Road => cities == 0 && roads == 1 && f0 == 1 && f1 == 1,
            Edge::Field => cities == 0 && roads == 0 && f0 == 1 && f1 == 1,
        };
        if !ok {
            return Err(DataError(format!(
                "{ctx}: side {side} is {:?} but {roads} road(s), {cities} city segment(s) and {f0}+{f1} field(s) reach it",
                edges[side.index()]
            )));
        }
    }
    Ok(())
}

/// The road segments a picture or an inn names: each defined, none twice.
fn roads_of(def: &TileDef, roads: &[u8], ctx: &str) -> Result<Vec<u8>, DataError> {
    let err = |m: String| DataError(format!("{ctx}: {m}"));
    for (i, &r) in roads.iter().enumerate() {
        if r as usize >= def.road.len() {
            return Err(err(format!("beside road {r}, which is not defined")));
        }
        if roads[..i].contains(&r) {
            return Err(err(format!("beside road {r} twice")));
        }
    }
    Ok(roads.to_vec())
}

/// The segment index of field `f` of the file, if it is defined.
fn field_seg(def: &TileDef, first_field: usize, f: u8, ctx: &str) -> Result<u8, DataError> {
    match (f as usize) < def.field.len() {
        true => Ok((first_field + f as usize) as u8),
        false => Err(DataError(format!(
            "{ctx}: in field {f}, which is not defined"
        ))),
    }
}

/// The pictures, each in a defined field or beside defined roads (travellers beside a road,
/// T1); a road counts the pictures beside it.
fn pictures_of(
    def: &TileDef,
    first_field: usize,
    segments: &mut [Segment],
    ctx: &str,
) -> Result<Vec<Picture>, DataError> {
    let err = |m: String| DataError(format!("{ctx}: {m}"));
    let mut pictures = Vec::new();
    for p in &def.pictures {
        let field = match p.field {
            Some(f) => Some(field_seg(def, first_field, f, ctx)?),
            None => None,
        };
        let roads = roads_of(def, p.road.as_ref().map_or(&[], Roads::list), ctx)?;
        if field.is_none() && roads.is_empty() {
            return Err(err(
                "a picture must stand in a field or beside a road".into()
            ));
        }
        if p.kind == PictureKind::Travellers && roads.is_empty() {
            return Err(err("a traveller group stands beside a road (T1)".into()));
        }
        for &r in &roads {
            segments[r as usize].beside[p.kind as usize] += 1;
        }
        pictures.push(Picture {
            kind: p.kind,
            field,
            road: roads.first().copied(),
            roads,
        });
    }
    Ok(pictures)
}

/// The inns (I7), each in a defined field beside at least one defined road (I3); the roads it
/// stands beside are marked.
fn inns_of(
    def: &TileDef,
    first_field: usize,
    segments: &mut [Segment],
    ctx: &str,
) -> Result<Vec<Inn>, DataError> {
    let mut inns = Vec::new();
    for inn in &def.inns {
        let field = field_seg(def, first_field, inn.field, ctx)?;
        let roads = roads_of(def, inn.road.list(), ctx)?;
        if roads.is_empty() {
            return Err(DataError(format!(
                "{ctx}: an inn stands beside a road (I3)"
            )));
        }
        for &r in &roads {
            segments[r as usize].inn = true;
        }
        inns.push(Inn { field, roads });
    }
    Ok(inns)
}

/// For every requirement a square can pose (an edge code, 0 for an unconstrained side), the
/// rotations of a design with `edge_code` that meet it, as bits 0–3.
fn fits_of(edge_code: u8) -> [u8; 256] {
    let mut fits = [0u8; 256];
    for (code, fit) in fits.iter_mut().enumerate() {
        let code = code as u8;
        let mask = (0..4).fold(0u8, |m, side| {
            if (code >> (2 * side)) & 3 != 0 {
                m | (3 << (2 * side))
            } else {
                m
            }
        });
        for q in 0..4u32 {
            let rotated = edge_code.rotate_left(2 * q);
            if (rotated ^ code) & mask == 0 {
                *fit |= 1 << q;
            }
        }
    }
    fits
}
