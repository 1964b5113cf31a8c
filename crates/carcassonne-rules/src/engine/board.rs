//! The board: where tiles lie, which empty squares may take one, and what is across a side (B4;
//! P1–P4 for maps).
//!
//! A dense grid of two-byte cells, so legal placements are a few bit operations per candidate
//! square. Each square that may take a tile (the frontier) caches the edges its neighbours demand;
//! a per-design fit table then gives the rotations that meet that demand in one lookup.

use super::ids::{SegRef, TileRef};
use crate::error::RuleError;
use crate::geometry::{Pos, Rotation, Side};
use crate::setup::Bounds;
use crate::tiles::{Catalogue, Edge, TileDesign, TileIdx, catalogue};
use serde::{Deserialize, Serialize};

/// One tile on the board.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Placed {
    pub tile: TileIdx,
    pub pos: Pos,
    pub rot: Rotation,
    /// Its edge code turned to board orientation.
    pub edges: u8,
    /// Its segments are `first_seg .. first_seg + segments.len()`.
    pub first_seg: SegRef,
}

/// A square that may take a tile, with the edges a tile must show there.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Frontier {
    pos: Pos,
    /// Edge codes the neighbours demand (two bits a side, as in [`TileDesign`]; 0 = any edge).
    code: u8,
}

/// What lies on a square, or across a side of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Square {
    /// A placed tile.
    Tile(TileRef),
    /// An empty square that may take a tile now (B4: next to a tile; or opened by a map, P1).
    Placeable,
    /// An empty square that may not take a tile yet.
    Empty,
    /// Off the map (P4): a road or city end facing it is closed. Maps add border prints and
    /// printed large cities here (P3, P4).
    OffMap,
}

/// The largest pile a setup may ask for: the grid is sized for a line of every tile.
pub const MAX_PILE: usize = 500;

/// A grid cell holds 0 (empty), a placed index + 1, or `FRONTIER | slot in frontier`.
const FRONTIER: u16 = 0x8000;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Board {
    /// The catalogue is static data of this build, not state.
    #[serde(skip, default = "catalogue")]
    pub cat: &'static Catalogue,
    /// Grid side length and offset of (0, 0).
    dim: i32,
    off: i32,
    /// Per square: 0 empty, a placed index + 1, or `FRONTIER | index in frontier` (two bytes a
    /// square keeps the grid of a whole game small enough to clear cheaply).
    cells: Vec<u16>,
    /// Squares that may take a tile, in the order they appeared.
    frontier: Vec<Frontier>,
    pub placed: Vec<Placed>,
    /// A map's outline (P1): squares outside are off the map. `None`: an open table that grows.
    bounds: Option<Bounds>,
    /// A printed map (P1–P4): which squares are placeable and what their printed sides demand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    map: Option<Box<MapLayer>>,
}

// Carcassonne Maps (P1–P4)
/// A printed map as the board sees it: one cell per square of the map's bounding box.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct MapLayer {
    /// The built-in map's id ([`crate::maps::map`]); its static data answers the rare questions.
    id: String,
    min: Pos,
    width: i32,
    height: i32,
    /// Per square: bit 8 placeable (P1), bits 9–12 the sides facing an open edge of a large city
    /// (P3), low byte the edge code the printed sides demand (P3, P4; as in [`TileDesign`]).
    cells: Vec<u16>,
    /// Per large city: a tile lies beside it, so its open edges are part of the frontier (P3).
    connected: Vec<bool>,
}

const PLACEABLE: u16 = 0x100;

impl MapLayer {
    fn new(map: &crate::maps::Map) -> MapLayer {
        use crate::maps::{Across, Print};
        let b = map.bounds();
        let (width, height) = (b.width(), b.height());
        let mut cells = vec![0u16; (width * height) as usize];
        for p in map.placeable() {
            let mut v = PLACEABLE;
            for side in Side::ALL {
                let code: u16 = match map.across(p, side) {
                    Across::Border(Print::Road) => 2,
                    Across::Border(Print::City { .. }) => 3,
                    Across::LargeCity { .. } => {
                        v |= 1 << (9 + side.index());
                        3
                    }
                    _ => 0,
                };
                v |= code << (2 * side.index());
            }
            cells[((p.y - b.min.y) * width + (p.x - b.min.x)) as usize] = v;
        }
        MapLayer {
            id: map.id.clone(),
            min: b.min,
            width,
            height,
            cells,
            connected: vec![false; map.cities().len()],
        }
    }

    #[inline]
    fn get(&self, p: Pos) -> u16 {
        let (x, y) = (
            i64::from(p.x) - i64::from(self.min.x),
            i64::from(p.y) - i64::from(self.min.y),
        );
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return 0;
        }
        self.cells[(y * i64::from(self.width) + x) as usize]
    }
}

impl Board {
    /// An empty board for a match of about `tiles` tiles.
    pub fn new(cat: &'static Catalogue, tiles: usize, bounds: Option<Bounds>) -> Board {
        // Most games stay within a dozen squares of the start; the grid grows when one does not.
        let mut off = (tiles as i32).clamp(2, 12) + 1;
        if let Some(b) = bounds {
            // A bounded grid never grows: cover the map (and a ring off it) at once.
            off = [b.min.x, b.min.y, b.max.x, b.max.y]
                .iter()
                .map(|v| v.unsigned_abs().min(MAX_PILE as u32) as i32)
                .max()
                .unwrap_or(0)
                + 2;
        }
        let dim = 2 * off + 1;
        Board {
            cat,
            dim,
            off,
            cells: vec![0; (dim * dim) as usize],
            frontier: Vec::new(),
            placed: Vec::new(),
            bounds,
            map: None,
        }
    }

    /// Gives back what the vectors reserved beyond their length, and fits an open table's grid
    /// to the squares in use (a match held in memory keeps the grid of what it played, not one
    /// sized for a whole game: 27 × 27 cells are 1.4 KB).
    pub fn shrink_to_fit(&mut self) {
        self.frontier.shrink_to_fit();
        self.placed.shrink_to_fit();
        if self.bounds.is_none() {
            let off = self.reach() + 2;
            if off < self.off {
                self.regrid(off);
            }
        }
    }

    /// The largest distance (on either axis) from (0, 0) of a tile or a frontier square.
    fn reach(&self) -> i32 {
        let far = |p: Pos| p.x.unsigned_abs().max(p.y.unsigned_abs());
        let tiles = self.placed.iter().map(|p| far(p.pos));
        let frontier = self.frontier.iter().map(|f| far(f.pos));
        tiles
            .chain(frontier)
            .max()
            .map_or(0, |r| r.min(i32::MAX as u32 / 4) as i32)
    }

    /// Lays a printed map under the board (P1–P4): only its placeable squares take tiles, and
    /// their printed sides demand edges. Call before any tile is put.
    pub fn set_map(&mut self, map: &crate::maps::Map) {
        self.map = Some(Box::new(MapLayer::new(map)));
    }

    /// The built-in map under the board, if any.
    pub fn map(&self) -> Option<&'static crate::maps::Map> {
        crate::maps::map(&self.map.as_ref()?.id)
    }

    /// The edge code the map prints around `pos` (P3, P4): 0 off a map.
    #[inline]
    fn printed(&self, pos: Pos) -> u8 {
        self.map.as_ref().map_or(0, |m| (m.get(pos) & 0xFF) as u8)
    }

    /// The large city across `side` of `pos` (P3), if an open edge of one is there.
    pub fn large_city_across(&self, pos: Pos, side: Side) -> Option<crate::maps::CityId> {
        let layer = self.map.as_ref()?;
        if layer.get(pos) & (1 << (9 + side.index())) == 0 {
            return None;
        }
        match self.map()?.across(pos, side) {
            crate::maps::Across::LargeCity { city, .. } => Some(city),
            _ => None,
        }
    }

    /// The board has an outline (a map, P1).
    #[inline]
    pub fn bounded(&self) -> bool {
        self.bounds.is_some()
    }

    #[inline]
    fn on_map(&self, pos: Pos) -> bool {
        match self.bounds {
            None => true,
            Some(b) => {
                b.contains(pos)
                    && self
                        .map
                        .as_ref()
                        .is_none_or(|m| m.get(pos) & PLACEABLE != 0)
            }
        }
    }

    /// Doubles the grid around (0, 0) when `pos` or a square next to it falls outside it.
    fn make_room(&mut self, pos: Pos) {
        let lo = -self.off;
        let hi = self.dim - self.off - 1;
        if pos.x > lo && pos.x < hi && pos.y > lo && pos.y < hi {
            return;
        }
        let off = (self.off * 2).max(pos.x.abs().max(pos.y.abs()) + 2);
        self.regrid(off);
    }

    /// A grid of side `2 * off + 1` around (0, 0), holding every tile and frontier square (`off`
    /// covers them all).
    fn regrid(&mut self, off: i32) {
        self.off = off;
        self.dim = 2 * off + 1;
        self.cells = vec![0; (self.dim * self.dim) as usize];
        for t in 0..self.placed.len() {
            if let Some(c) = self.cell(self.placed[t].pos) {
                self.cells[c] = (t + 1) as u16;
            }
        }
        for slot in 0..self.frontier.len() {
            if let Some(c) = self.cell(self.frontier[slot].pos) {
                self.cells[c] = FRONTIER | slot as u16;
            }
        }
    }

    /// The grid index of `pos`, or `None` outside the grid. Any `Pos` a client sends may come
    /// here (`i32::MAX` included), so the arithmetic is done in `i64` and cannot overflow.
    #[inline]
    fn cell(&self, pos: Pos) -> Option<usize> {
        let (off, dim) = (i64::from(self.off), i64::from(self.dim));
        let (x, y) = (i64::from(pos.x) + off, i64::from(pos.y) + off);
        (x >= 0 && y >= 0 && x < dim && y < dim).then(|| (y * dim + x) as usize)
    }

    /// The design of placed tile `t`.
    #[inline]
    pub fn design(&self, t: TileRef) -> &'static TileDesign {
        self.cat.get(self.placed[t as usize].tile)
    }

    #[inline]
    pub fn pos(&self, t: TileRef) -> Pos {
        self.placed[t as usize].pos
    }

    #[inline]
    pub fn tile_at(&self, pos: Pos) -> Option<TileRef> {
        match self.cell(pos).map(|c| self.cells[c]) {
            Some(v) if v != 0 && v & FRONTIER == 0 => Some(TileRef::from(v) - 1),
            _ => None,
        }
    }

    /// What lies on `pos`.
    #[inline]
    pub fn square(&self, pos: Pos) -> Square {
        if !self.on_map(pos) {
            return Square::OffMap;
        }
        match self.cell(pos).map(|c| self.cells[c]) {
            Some(v) if v & FRONTIER != 0 => Square::Placeable,
            Some(v) if v != 0 => Square::Tile(TileRef::from(v) - 1),
            _ => Square::Empty,
        }
    }

    /// What is across `side` of `pos`.
    #[inline]
    pub fn across(&self, pos: Pos, side: Side) -> Square {
        self.square(pos.step(side))
    }

    /// Calls `f` with every tile on the 3×3 block centred on `pos` (a placed tile's square: the
    /// grid always holds its neighbours), row by row. Direct cell arithmetic: phase 3 looks for
    /// monasteries around every placed tile.
    #[inline]
    pub fn around(&self, pos: Pos, mut f: impl FnMut(Pos, TileRef)) {
        let lo = -self.off;
        let hi = self.dim - self.off - 1;
        if !(pos.x > lo && pos.x < hi && pos.y > lo && pos.y < hi) {
            // Not a placed tile's square (its neighbours are always on the grid).
            return self.around_slow(pos, f);
        }
        let Some(c) = self.cell(pos) else { return };
        let dim = self.dim as usize;
        for dy in 0..3 {
            for dx in 0..3 {
                let v = self.cells[c + dy * dim + dx - dim - 1];
                if v != 0 && v & FRONTIER == 0 {
                    f(
                        Pos::new(pos.x + dx as i32 - 1, pos.y + dy as i32 - 1),
                        TileRef::from(v) - 1,
                    );
                }
            }
        }
    }

    /// [`Board::around`] one square at a time, for a square at the grid's edge.
    #[cold]
    #[inline(never)]
    fn around_slow(&self, pos: Pos, mut f: impl FnMut(Pos, TileRef)) {
        for dy in -1..=1 {
            for dx in -1..=1 {
                let q = Pos::new(pos.x.saturating_add(dx), pos.y.saturating_add(dy));
                if let Some(t) = self.tile_at(q) {
                    f(q, t);
                }
            }
        }
    }

    /// Whether `pos` counts as filled around a monastery: a tile, or off the map (P4 DECISION;
    /// on a printed map every square that takes no tile, a large city's included).
    #[inline]
    pub fn filled(&self, pos: Pos) -> bool {
        self.tile_at(pos).is_some() || !self.on_map(pos)
    }

    /// The frontier slot of `pos`, if a tile may go there.
    #[inline]
    fn slot(&self, pos: Pos) -> Option<usize> {
        match self.cell(pos).map(|c| self.cells[c]) {
            Some(v) if v & FRONTIER != 0 => Some(usize::from(v & !FRONTIER)),
            _ => None,
        }
    }

    /// Makes an empty square on the map placeable though no tile lies next to it (P1, P2: a
    /// map's start squares; later, open edges of large cities with their demand in `code`).
    pub fn open_square(&mut self, pos: Pos, code: u8) {
        if !self.on_map(pos) || self.tile_at(pos).is_some() {
            return;
        }
        self.make_room(pos);
        match self.slot(pos) {
            Some(s) => self.frontier[s].code |= code,
            None => self.frontier_add(pos, code),
        }
    }

    fn frontier_add(&mut self, pos: Pos, code: u8) {
        if let Some(c) = self.cell(pos) {
            self.cells[c] = FRONTIER | self.frontier.len() as u16;
            // P3, P4: the map's printed sides join the neighbours' demand.
            let code = code | self.printed(pos);
            self.frontier.push(Frontier { pos, code });
        }
    }

    /// Takes the square at cell `c` out of the frontier, if it is there.
    fn frontier_remove(&mut self, c: usize) {
        let v = self.cells[c];
        if v & FRONTIER == 0 {
            return;
        }
        self.cells[c] = 0;
        let slot = v & !FRONTIER;
        self.frontier.swap_remove(usize::from(slot));
        if let Some(moved) = self.frontier.get(usize::from(slot)).map(|f| f.pos)
            && let Some(mc) = self.cell(moved)
        {
            self.cells[mc] = FRONTIER | slot;
        }
    }

    /// B4: may a tile of `kind` lie on `pos` turned by `rot`?
    pub fn check_placement(
        &self,
        kind: &TileDesign,
        pos: Pos,
        rot: Rotation,
    ) -> Result<(), RuleError> {
        if self.tile_at(pos).is_some() {
            return Err(RuleError::Occupied(pos));
        }
        if self.map.is_some() && !self.on_map(pos) {
            return Err(RuleError::OffMap(pos));
        }
        let Some(slot) = self.slot(pos).filter(|_| self.on_map(pos)) else {
            return Err(RuleError::NotAdjacent(pos));
        };
        let code = self.frontier[slot].code;
        let edges = kind.edge_code_rotated(rot.quarters());
        let printed = self.printed(pos);
        for side in Side::ALL {
            let m = 3u8 << (2 * side.index());
            if code & m != 0 && (edges ^ code) & m != 0 {
                // P3, P4: a side the map prints on (no tile can lie across it).
                if printed & m != 0 {
                    return Err(RuleError::PrintMismatch { pos, side });
                }
                return Err(RuleError::EdgeMismatch { pos, side });
            }
        }
        Ok(())
    }

    /// Puts a tile on the board (legality has been checked) and updates the demands of the empty
    /// squares around it. Returns its index; the caller joins its features to its neighbours'.
    pub fn put(
        &mut self,
        tile: TileIdx,
        kind: &TileDesign,
        pos: Pos,
        rot: Rotation,
        first_seg: SegRef,
    ) -> TileRef {
        self.make_room(pos);
        let t = self.placed.len() as TileRef;
        let edges = kind.edge_code_rotated(rot.quarters());
        self.placed.push(Placed {
            tile,
            pos,
            rot,
            edges,
            first_seg,
        });
        let c = self.cell(pos).unwrap_or(0);
        self.frontier_remove(c);
        self.cells[c] = (t + 1) as u16;
        for side in Side::ALL {
            let npos = pos.step(side);
            let Some(nc) = self.cell(npos) else { continue };
            let v = self.cells[nc];
            if v != 0 && v & FRONTIER == 0 {
                continue;
            }
            if !self.on_map(npos) {
                continue;
            }
            // The empty square across this side must now match this side.
            let e = (edges >> (2 * side.index())) & 3;
            let need = e << (side.opposite().index() * 2);
            if v & FRONTIER != 0 {
                self.frontier[usize::from(v & !FRONTIER)].code |= need;
            } else {
                self.frontier_add(npos, need);
            }
        }
        self.connect_cities(pos);
        t
    }

    /// P3: a tile beside a large city connects it; every square across its open edges may take
    /// a tile from now on (each demanding a city edge towards it).
    fn connect_cities(&mut self, pos: Pos) {
        let Some(layer) = &self.map else { return };
        if layer.get(pos) & 0x1E00 == 0 {
            return;
        }
        let Some(map) = self.map() else { return };
        for side in Side::ALL {
            let Some(c) = self.large_city_across(pos, side) else {
                continue;
            };
            let Some(layer) = self.map.as_mut() else {
                return;
            };
            if std::mem::replace(&mut layer.connected[c.index()], true) {
                continue;
            }
            for &(sq, s) in &map.city(c).open {
                self.open_square(sq.step(s), 0);
            }
        }
    }

    /// The edge the tile `t` shows on board side `side`.
    #[inline]
    pub fn edge_of(&self, t: TileRef, side: Side) -> Edge {
        match (self.placed[t as usize].edges >> (2 * side.index())) & 3 {
            1 => Edge::Field,
            2 => Edge::Road,
            _ => Edge::City,
        }
    }

    /// How many legal (square, rotation) pairs a design with fit table `fits` has.
    #[inline]
    pub fn placement_count(&self, fits: &[u8; 256]) -> usize {
        self.frontier
            .iter()
            .map(|f| fits[usize::from(f.code)].count_ones() as usize)
            .sum()
    }

    /// The `k`-th legal (square, rotation) pair, in the order of [`Board::placements`].
    #[inline]
    pub fn placement(&self, fits: &[u8; 256], mut k: usize) -> Option<(Pos, Rotation)> {
        for f in &self.frontier {
            let mut m = fits[usize::from(f.code)];
            let n = m.count_ones() as usize;
            if k >= n {
                k -= n;
                continue;
            }
            for _ in 0..k {
                m &= m - 1;
            }
            return Some((f.pos, Rotation::from_quarters(m.trailing_zeros() as u8)));
        }
        None
    }

    /// Whether a design fits anywhere (B4): one pass without branches per square.
    #[inline]
    pub fn fits_anywhere(&self, fits: &[u8; 256]) -> bool {
        self.frontier
            .iter()
            .fold(0u8, |acc, f| acc | fits[usize::from(f.code)])
            != 0
    }

    /// Every legal (square, rotation) pair, frontier order, into `out`.
    pub fn placements(&self, fits: &[u8; 256], out: &mut Vec<(Pos, Rotation)>) {
        out.clear();
        for f in &self.frontier {
            let m = fits[usize::from(f.code)];
            if m != 0 {
                for r in Rotation::ALL {
                    if m & (1 << r.quarters()) != 0 {
                        out.push((f.pos, r));
                    }
                }
            }
        }
    }

    /// Squares that may take a tile, each with the rotations of a design that fit there.
    pub fn fitting<'a>(&'a self, fits: &'a [u8; 256]) -> impl Iterator<Item = (Pos, u8)> + 'a {
        self.frontier
            .iter()
            .map(|f| (f.pos, fits[usize::from(f.code)]))
            .filter(|&(_, m)| m != 0)
    }
}
