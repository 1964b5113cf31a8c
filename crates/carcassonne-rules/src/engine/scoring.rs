//! Scoring as pure functions over the board and the features (B6, B7, B11): they compute values
//! and change nothing. The game applies them through its one award path, and a module may ask
//! "what would this feature score, as in final scoring" (M8–M15) without side effects.

use super::board::Board;
use super::features::Features;
use super::ids::{SegRef, TileRef};
use crate::event::{Event, MeepleCount};
use crate::geometry::Pos;
use crate::setup::PlayerId;
use crate::tiles::FeatureKind;
use smallvec::SmallVec;

/// What a road, city or monastery is worth (B6 complete, B7 at the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value {
    /// Distinct tiles (a monastery: itself and its neighbours).
    pub tiles: u32,
    pub coats: u32,
    pub points: u32,
    /// Inns & Cathedrals: an inn (roads, I7, I8) or a cathedral (cities, I9, I10) set the rate.
    pub inn: bool,
    pub cathedral: bool,
}

/// One scoring of a feature: its value and who gets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scoring {
    pub root: SegRef,
    pub kind: FeatureKind,
    pub pos: Pos,
    pub value: Value,
    pub complete: bool,
    pub meeples: Vec<MeepleCount>,
    /// Each winner gets `value.points` (B6: all tied players score).
    pub winners: Vec<PlayerId>,
}

impl Scoring {
    pub fn event(&self) -> Event {
        Event::FeatureScored {
            feature: self.kind,
            pos: self.pos,
            tiles: self.value.tiles,
            coats: self.value.coats,
            complete: self.complete,
            meeples: self.meeples.clone(),
            points: self.value.points,
            winners: self.winners.clone(),
            inn: self.value.inn,
            cathedral: self.value.cathedral,
        }
    }
}

/// The value of road, city or monastery `root`, complete (B6) or as in final scoring (B7);
/// `None` for a field (fields score only at the end, by [`field_points`]). An inn makes a road
/// 2 a tile complete and 0 incomplete (I7, I8); a cathedral makes a city 3 a tile and coat of
/// arms complete and 0 incomplete (I9, I10, I17: printed squares too).
#[inline]
pub fn value_of(board: &Board, features: &Features, root: SegRef, complete: bool) -> Option<Value> {
    let f = features.get(root);
    let value = |tiles, coats, points| Value {
        tiles,
        coats,
        points,
        inn: false,
        cathedral: false,
    };
    Some(match f.kind {
        FeatureKind::Road => {
            let n = f.tiles.len() as u32;
            let per = match (f.inn, complete) {
                (false, _) => 1,
                (true, true) => 2,
                (true, false) => 0,
            };
            Value {
                inn: f.inn,
                ..value(n, 0, per * n)
            }
        }
        FeatureKind::City => {
            // P3: a large city's printed squares count as tiles.
            let n = f.tiles.len() as u32 + u32::from(f.printed);
            let per = match (f.cathedral, complete) {
                (false, true) => 2,
                (false, false) => 1,
                (true, true) => 3,
                (true, false) => 0,
            };
            Value {
                cathedral: f.cathedral,
                ..value(n, f.coats, per * (n + f.coats))
            }
        }
        FeatureKind::Monastery => {
            let n = 1 + f.min.ring().filter(|&q| board.filled(q)).count() as u32;
            value(n, 0, if complete { 9 } else { n })
        }
        FeatureKind::Field => return None,
    })
}

/// Meeples per player on a feature, and the players with the most (B6: ties all win). A large
/// meeple adds 2 to its owner's count (I5).
pub fn majority(features: &Features, root: SegRef) -> (Vec<MeepleCount>, Vec<PlayerId>) {
    let mut counts: Vec<MeepleCount> = Vec::new();
    for &(p, _, figure) in &features.get(root).meeples {
        let large = u32::from(figure == crate::command::Figure::LargeMeeple);
        match counts.iter_mut().find(|c| c.player == p) {
            Some(c) => {
                c.count += figure.strength();
                c.large += large;
            }
            None => counts.push(MeepleCount {
                player: p,
                count: figure.strength(),
                large,
            }),
        }
    }
    counts.sort_by_key(|c| c.player);
    let max = counts.iter().map(|c| c.count).max().unwrap_or(0);
    let winners = counts
        .iter()
        .filter(|c| c.count == max && max > 0)
        .map(|c| c.player)
        .collect();
    (counts, winners)
}

/// The scoring of a road, city or monastery with meeples on it; `None` without meeples (nobody
/// scores) or for a field.
#[inline]
pub fn score_of(
    board: &Board,
    features: &Features,
    root: SegRef,
    complete: bool,
) -> Option<Scoring> {
    let f = features.get(root);
    if f.meeples.is_empty() {
        return None;
    }
    let value = value_of(board, features, root, complete)?;
    let (meeples, winners) = majority(features, root);
    Some(Scoring {
        root,
        kind: f.kind,
        pos: f.min,
        value,
        complete,
        meeples,
        winners,
    })
}

/// The features tile `t` completed and that are not scored yet, in the order they score (B11):
/// roads, then cities, each by canonical position, then monasteries around the tile.
pub fn completed_by(board: &Board, features: &Features, t: TileRef) -> SmallVec<[SegRef; 8]> {
    let mut completed: SmallVec<[(u8, Pos, SegRef); 8]> = SmallVec::new();
    let pos = board.pos(t);
    for s in features.segs_of(board, t) {
        let r = features.find(s);
        let f = features.get(r);
        let order = match f.kind {
            FeatureKind::Road => 0,
            FeatureKind::City => 1,
            _ => continue,
        };
        if f.open == 0 && !f.done && !completed.iter().any(|c| c.2 == r) {
            completed.push((order, f.min, r));
        }
    }
    board.around(pos, |q, n| {
        if let Some(local) = board.design(n).monastery {
            let m = board.placed[n as usize].first_seg + SegRef::from(local);
            if !features.get(m).done && q.ring().all(|r| board.filled(r)) {
                completed.push((2, q, m));
            }
        }
    });
    completed.sort_unstable();
    completed.into_iter().map(|c| c.2).collect()
}

/// Feature roots not yet scored that final scoring looks at, per kind (roads, cities,
/// monasteries, fields), each in canonical order (B11): those with meeples, and those a module
/// asks for (`wanted`, e.g. T10's roads ending at a crossroads).
pub fn final_candidates(features: &Features, wanted: impl Fn(SegRef) -> bool) -> [Vec<SegRef>; 4] {
    let mut by_kind: [Vec<(Pos, SegRef)>; 4] = Default::default();
    for s in 0..features.len() {
        if !features.is_root(s) {
            continue;
        }
        let f = features.get(s);
        if !f.done && (!f.meeples.is_empty() || wanted(s)) {
            let k = match f.kind {
                FeatureKind::Road => 0,
                FeatureKind::City => 1,
                FeatureKind::Monastery => 2,
                FeatureKind::Field => 3,
            };
            by_kind[k].push((f.min, s));
        }
    }
    by_kind.map(|mut v| {
        v.sort_unstable();
        v.into_iter().map(|(_, s)| s).collect()
    })
}

/// Which completed cities each field touches, from the tiles' data (B7): sorted (field, city)
/// pairs of roots.
pub fn cities_touched(board: &Board, features: &Features) -> Vec<(SegRef, SegRef)> {
    let mut touched: Vec<(SegRef, SegRef)> = Vec::new();
    for p in &board.placed {
        for (local, seg) in board.cat.get(p.tile).segments.iter().enumerate() {
            if seg.touches.is_empty() {
                continue;
            }
            let field = features.find(p.first_seg + local as SegRef);
            for &c in &seg.touches {
                let city = features.find(p.first_seg + SegRef::from(c));
                if features.get(city).done {
                    touched.push((field, city));
                }
            }
        }
    }
    touched.sort_unstable();
    touched.dedup();
    touched
}

/// B7: a field's completed cities and points (3 a city), from [`cities_touched`].
#[inline]
pub fn field_points(touched: &[(SegRef, SegRef)], root: SegRef) -> (u32, u32) {
    let n = touched.iter().filter(|&&(f, _)| f == root).count() as u32;
    (n, 3 * n)
}
