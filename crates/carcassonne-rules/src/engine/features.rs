//! Features: a union-find over the segments of the placed tiles (B5–B7). Each root carries what
//! scoring needs (open ends, tiles, coats of arms, meeples), merged as tiles join features. Only the
//! base game's fields live here; a module keeps its own per-feature data and is told of merges.

use super::board::{Board, Square};
use super::ids::{SegRef, TileRef};
use crate::command::{Figure, Target};
use crate::geometry::{Half, Pos, Rotation, Side};
use crate::setup::PlayerId;
use crate::tiles::{FeatureKind, Segment, TileDesign};
use serde::{Deserialize, Serialize};
use smallvec::{SmallVec, smallvec};

/// What a feature root knows. Only roots have one (a segment's kind is kept apart).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Feature {
    pub kind: FeatureKind,
    /// Union-find size, for union by size.
    size: u32,
    /// Road and city ends that face no tile yet; 0 means closed (B6).
    pub open: u16,
    /// Distinct tiles of a road, city or monastery (fields keep only their first). (Inline
    /// vectors: most features stay small, and a random game creates hundreds of them.)
    pub tiles: SmallVec<[TileRef; 4]>,
    /// The feature's square with the smallest (x, y): its canonical position (B11).
    pub min: Pos,
    pub coats: u32,
    /// Squares of printed large cities in this city (P3): each counts as one city tile.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub printed: u16,
    /// Inns & Cathedrals: an inn beside the road (I7) or a cathedral in the city (I9).
    #[serde(default, skip_serializing_if = "is_false")]
    pub inn: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub cathedral: bool,
    /// Meeples on the feature: owner, the segment it stands on, and which figure (I5: a large
    /// meeple counts 2 for majority).
    pub meeples: SmallVec<[(PlayerId, SegRef, Figure); 1]>,
    /// Completed and scored: never scored again.
    pub done: bool,
}

fn is_zero(v: &u16) -> bool {
    *v == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A segment, a placed tile or a record as the per-segment tables keep it: two bytes, since a
/// match has at most [`super::board::MAX_PILE`] tiles of a few segments each (a test checks the bound), and
/// these tables grow with every tile of a match held in memory.
type Small = u16;

/// `slot` of a segment that is not a root.
const NO_SLOT: Small = Small::MAX;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Features {
    parent: Vec<Small>,
    seg_tile: Vec<Small>,
    seg_local: Vec<u8>,
    /// Per segment, its kind (a non-root's is read when a player names it).
    kind: Vec<FeatureKind>,
    /// Per segment, the index of its record in `records` if it is a root, else [`NO_SLOT`].
    /// Records for roots only: after 40 tiles most segments have been merged into another, and
    /// a record is 72 bytes where a slot is 2.
    slot: Vec<Small>,
    /// The roots' records; the slots of merged-away roots are reused (`free`).
    records: Vec<Feature>,
    free: Vec<Small>,
    /// Per printed large city (P3): a segment of the city it is part of, once a tile joined it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    large: Vec<Option<SegRef>>,
}

impl Features {
    /// Gives back what the vectors reserved beyond their length (after a replay: a match in
    /// memory holds what it played, not a whole game's worth).
    pub fn shrink_to_fit(&mut self) {
        self.parent.shrink_to_fit();
        self.seg_tile.shrink_to_fit();
        self.seg_local.shrink_to_fit();
        self.kind.shrink_to_fit();
        self.slot.shrink_to_fit();
        self.records.shrink_to_fit();
        self.free.shrink_to_fit();
        self.large.shrink_to_fit();
    }

    /// The id the next tile's first segment gets.
    #[inline]
    pub fn next_seg(&self) -> SegRef {
        self.parent.len() as SegRef
    }

    /// Every segment so far (for scans over all roots).
    #[inline]
    pub fn len(&self) -> SegRef {
        self.parent.len() as SegRef
    }

    #[inline]
    pub fn is_root(&self, s: SegRef) -> bool {
        SegRef::from(self.parent[s as usize]) == s
    }

    /// The record of root `r` (panics for a segment that is not a root: a bug).
    #[inline]
    pub fn get(&self, r: SegRef) -> &Feature {
        &self.records[self.slot[r as usize] as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, r: SegRef) -> &mut Feature {
        &mut self.records[self.slot[r as usize] as usize]
    }

    /// The placed tile a segment belongs to.
    #[inline]
    pub fn tile_of(&self, s: SegRef) -> TileRef {
        TileRef::from(self.seg_tile[s as usize])
    }

    /// Adds the segments of the tile `t` just put on `pos`, each its own feature.
    pub fn add_tile(&mut self, t: TileRef, kind: &TileDesign, pos: Pos) {
        let first = self.next_seg();
        for (i, seg) in kind.segments.iter().enumerate() {
            let id = first + i as SegRef;
            self.parent.push(id as Small);
            self.seg_tile.push(t as Small);
            self.seg_local.push(i as u8);
            self.kind.push(seg.kind);
            let record = Feature {
                kind: seg.kind,
                size: 1,
                open: seg.side_count() as u16,
                tiles: smallvec![t],
                min: pos,
                coats: u32::from(seg.coat),
                printed: 0,
                inn: seg.inn,
                cathedral: seg.cathedral,
                meeples: SmallVec::new(),
                done: false,
            };
            let slot = match self.free.pop() {
                Some(slot) => {
                    self.records[slot as usize] = record;
                    slot
                }
                None => {
                    self.records.push(record);
                    (self.records.len() - 1) as Small
                }
            };
            self.slot.push(slot);
        }
    }

    /// Joins the features of tile `t` with those of its neighbours; a road or city end facing off
    /// the map is closed (P4). `merged(big, small)` hears of every merge of two roads, so modules
    /// can merge their own per-road data. (Only roads so far: fields merge most often, and no
    /// module keeps data on them or on cities.)
    pub fn join(&mut self, board: &Board, t: TileRef, mut merged: impl FnMut(SegRef, SegRef)) {
        let pos = board.pos(t);
        let edges = board.placed[t as usize].edges;
        for side in Side::ALL {
            let road_or_city = matches!((edges >> (2 * side.index())) & 3, 2 | 3);
            let Some(n) = board.tile_at(pos.step(side)) else {
                // P4: a road or city end facing off the map is closed; P3: a city edge facing
                // a large city joins it.
                if road_or_city
                    && board.bounded()
                    && board.across(pos, side) == Square::OffMap
                    && let Some(a) = self.seg_at_side(board, t, side)
                {
                    match board.large_city_across(pos, side) {
                        Some(c) => self.join_large(board, c, a, &mut merged),
                        None => {
                            let r = self.find(a);
                            self.get_mut(r).open -= 1;
                        }
                    }
                }
                continue;
            };
            let opp = side.opposite();
            // Road or city: join the two segments that reach this side; two ends close.
            if road_or_city
                && let (Some(a), Some(b)) = (
                    self.seg_at_side(board, t, side),
                    self.seg_at_side(board, n, opp),
                )
            {
                let r = self.union(a, b, &mut merged);
                self.get_mut(r).open -= 2;
            }
            // Fields meet on both halves of a field or road side.
            for h in side.halves() {
                if let (Some(a), Some(b)) = (
                    self.seg_at_half(board, t, h),
                    self.seg_at_half(board, n, h.facing()),
                ) {
                    self.union(a, b, &mut merged);
                }
            }
        }
    }

    /// P3: city segment `a` reaches an open edge of large city `c`. The first time, the large
    /// city's printed squares, coats and open edges join `a`'s city; later, the two cities merge.
    /// Either way the edge between them closes.
    fn join_large(
        &mut self,
        board: &Board,
        c: crate::maps::CityId,
        a: SegRef,
        merged: &mut impl FnMut(SegRef, SegRef),
    ) {
        if self.large.len() <= c.index() {
            self.large.resize(c.index() + 1, None);
        }
        let r = match self.large[c.index()] {
            Some(b) => self.union(a, b, merged),
            None => {
                let Some(city) = board.map().map(|m| m.city(c)) else {
                    return;
                };
                self.large[c.index()] = Some(a);
                let r = self.find(a);
                let f = self.get_mut(r);
                f.open += city.open.len() as u16;
                f.printed += city.squares.len() as u16;
                f.coats += u32::from(city.coats);
                r
            }
        };
        self.get_mut(r).open -= 2;
    }

    /// The segments of placed tile `t`.
    #[inline]
    pub fn segs_of(&self, board: &Board, t: TileRef) -> std::ops::Range<SegRef> {
        let first = board.placed[t as usize].first_seg;
        first..first + board.design(t).segments.len() as SegRef
    }

    /// The first segment of placed tile `t` that `wanted` picks.
    #[inline]
    pub fn find_seg(
        &self,
        board: &Board,
        t: TileRef,
        wanted: impl Fn(&Segment) -> bool,
    ) -> Option<SegRef> {
        board
            .design(t)
            .segments
            .iter()
            .position(wanted)
            .map(|i| board.placed[t as usize].first_seg + i as SegRef)
    }

    /// The road or city segment of placed tile `t` reaching board side `side`.
    #[inline]
    pub fn seg_at_side(&self, board: &Board, t: TileRef, side: Side) -> Option<SegRef> {
        let rot = board.placed[t as usize].rot;
        let bit = 1u8
            << side
                .rotate(Rotation::from_quarters(4 - rot.quarters()))
                .index();
        self.find_seg(board, t, |s| {
            matches!(s.kind, FeatureKind::Road | FeatureKind::City) && s.sides & bit != 0
        })
    }

    /// The field segment of placed tile `t` reaching board half-edge `h`.
    #[inline]
    pub fn seg_at_half(&self, board: &Board, t: TileRef, h: Half) -> Option<SegRef> {
        let rot = board.placed[t as usize].rot;
        let bit = 1u8
            << h.rotate(Rotation::from_quarters(4 - rot.quarters()))
                .index();
        self.find_seg(board, t, |s| {
            s.kind == FeatureKind::Field && s.halves & bit != 0
        })
    }

    /// The segment of placed tile `t` a target names (B5), whatever side the player wrote.
    #[inline]
    pub fn seg_of_target(&self, board: &Board, t: TileRef, target: Target) -> Option<SegRef> {
        match target {
            Target::Road(side) => self
                .seg_at_side(board, t, side)
                .filter(|&s| self.kind[s as usize] == FeatureKind::Road),
            Target::City(side) => self
                .seg_at_side(board, t, side)
                .filter(|&s| self.kind[s as usize] == FeatureKind::City),
            Target::Field(h) => self.seg_at_half(board, t, h),
            Target::Monastery => self.find_seg(board, t, |s| s.kind == FeatureKind::Monastery),
            Target::InnerField => {
                self.find_seg(board, t, |s| s.kind == FeatureKind::Field && s.halves == 0)
            }
        }
    }

    /// How a segment is named to players: its kind and first side or half in board orientation.
    #[inline]
    pub fn target_of(&self, board: &Board, seg: SegRef) -> Target {
        let p = &board.placed[self.seg_tile[seg as usize] as usize];
        let s = &board.cat.get(p.tile).segments[self.seg_local[seg as usize] as usize];
        let q = u32::from(p.rot.quarters());
        // Turn the segment's masks with the tile; the lowest set bit is its first side or half.
        let sides = ((u32::from(s.sides) << q) | (u32::from(s.sides) >> (4 - q))) & 0xF;
        let side = Side::from_index(sides.trailing_zeros() as usize % 4);
        let half = Half::ALL[s.halves.rotate_left(2 * q).trailing_zeros() as usize % 8];
        match s.kind {
            FeatureKind::Monastery => Target::Monastery,
            FeatureKind::Field if s.halves == 0 => Target::InnerField,
            FeatureKind::Field => Target::Field(half),
            FeatureKind::Road => Target::Road(side),
            FeatureKind::City => Target::City(side),
        }
    }

    #[inline]
    pub fn find(&self, mut s: SegRef) -> SegRef {
        while SegRef::from(self.parent[s as usize]) != s {
            s = SegRef::from(self.parent[s as usize]);
        }
        s
    }

    #[inline]
    fn find_compress(&mut self, mut s: SegRef) -> SegRef {
        while SegRef::from(self.parent[s as usize]) != s {
            let gp = self.parent[self.parent[s as usize] as usize];
            self.parent[s as usize] = gp;
            s = SegRef::from(gp);
        }
        s
    }

    /// Joins two segments' features and returns the root.
    fn union(&mut self, a: SegRef, b: SegRef, merged: &mut impl FnMut(SegRef, SegRef)) -> SegRef {
        let (ra, rb) = (self.find_compress(a), self.find_compress(b));
        if ra == rb {
            return ra;
        }
        let (big, small) = if self.get(ra).size >= self.get(rb).size {
            (ra, rb)
        } else {
            (rb, ra)
        };
        self.parent[small as usize] = big as Small;
        let kind = self.kind[small as usize];
        // The small root's record leaves; its slot is reused by the next tile's segments.
        let freed = std::mem::replace(&mut self.slot[small as usize], NO_SLOT);
        self.free.push(freed);
        let s = std::mem::replace(
            &mut self.records[freed as usize],
            Feature {
                kind,
                size: 0,
                open: 0,
                tiles: SmallVec::new(),
                min: Pos::default(),
                coats: 0,
                printed: 0,
                inn: false,
                cathedral: false,
                meeples: SmallVec::new(),
                done: false,
            },
        );
        let f = self.get_mut(big);
        f.size += s.size;
        f.open += s.open;
        f.min = f.min.min(s.min);
        // Fields never count their tiles (B7), and a large field is merged into often.
        if f.kind != FeatureKind::Field {
            for t in s.tiles {
                if !f.tiles.contains(&t) {
                    f.tiles.push(t);
                }
            }
        }
        f.coats += s.coats;
        f.printed += s.printed;
        f.inn |= s.inn;
        f.cathedral |= s.cathedral;
        // Most merges bring no meeple: skip the extend's setup.
        if !s.meeples.is_empty() {
            f.meeples.extend(s.meeples);
        }
        if kind == FeatureKind::Road {
            merged(big, small);
        }
        big
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::board::MAX_PILE;

    /// The two-byte tables hold any match: every segment of the largest pile of the designs with
    /// the most segments, the start tiles besides, has an index below `NO_SLOT`.
    #[test]
    fn a_whole_match_fits_the_small_indices() {
        let cat = crate::tiles::catalogue();
        let most = cat
            .tiles
            .iter()
            .map(|t| t.segments.len())
            .max()
            .unwrap_or(0);
        assert!(most > 0);
        assert!(
            (MAX_PILE + 2) * most < usize::from(NO_SLOT),
            "{most} segments a tile"
        );
    }
}
