//! The Tollkeepers (T1–T10): tollhouses on crossroads raise tolls on completed roads.
//!
//! All of the module's state lives here: the tollhouses, the T9 turn-over marks, the crossroads
//! on the board, and per road its crossroads ends and the pictures beside it (merged as roads
//! join, from the tile data).

use super::Ctx;
use crate::engine::agenda::Source;
use crate::engine::board::Board;
use crate::engine::features::Features;
use crate::engine::ids::{SegRef, TileRef};
use crate::error::RuleError;
use crate::event::Event;
use crate::geometry::Pos;
use crate::setup::PlayerId;
use crate::tiles::{FeatureKind, PictureKind, RoadEnd};
use crate::view::TollhouseView;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// The module's tile set (T1).
pub const SET: &str = "tollkeepers";

/// A tollhouse shows 1 (small toll) or 2 (large toll); it enters play with 1 up (T2).
const FIRST_VALUE: u8 = 1;

/// What a road carries for tolls, on its root.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Road {
    /// The crossroads tiles where this road ends, once per ending segment (T3, T8).
    crossroads: SmallVec<[TileRef; 2]>,
    /// Pictures beside its segments, by [`PictureKind`] (T7). (Two bytes a kind: a test setup may
    /// repeat a design, up to `MAX_PILE` tiles.)
    pictures: [u16; PictureKind::COUNT],
    /// Pictures beside two segments of their tile (I3: C's pigsty, E's farmhouse), each counted
    /// in `pictures` once per segment: tile, picture index, kind. When both segments join one
    /// road, the second count goes (a picture counts once for a road, T7).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    shared: Vec<(TileRef, u8, u8)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tollkeepers {
    /// Per player: the tile of the crossroads their tollhouse stands on, and its value.
    houses: Vec<Option<(TileRef, u8)>>,
    /// T9: per player, the tollhouse raised a toll from travellers this turn.
    turn_over: Vec<bool>,
    /// Placed tiles showing a crossroads (T3), in placement order.
    crossroads: Vec<TileRef>,
    /// Per segment (indexed like the features): an index into `marks` for roads with a
    /// crossroads end or a picture beside them, meaningful on roots; [`NONE`] for the others
    /// (most segments: the dense part stays four bytes a segment).
    roads: Vec<u32>,
    marks: Vec<Road>,
}

const NONE: u32 = u32::MAX;

/// Picture counts along a road, as tolls see them (T6, T7): water towers never count.
struct Along {
    farmhouses: u32,
    sheds: u32,
    gardens: u32,
    highwaymen: u32,
    travellers: u32,
}

impl Along {
    fn of(road: &Road) -> Along {
        let n = |k: PictureKind| u32::from(road.pictures[k as usize]);
        Along {
            farmhouses: n(PictureKind::Farmhouse),
            sheds: n(PictureKind::Cowshed) + n(PictureKind::Pigsty) + n(PictureKind::DonkeyStable),
            gardens: n(PictureKind::Garden),
            highwaymen: n(PictureKind::Highwaymen),
            travellers: n(PictureKind::Travellers),
        }
    }

    fn pictures(&self) -> u32 {
        self.farmhouses + self.sheds + self.gardens + self.highwaymen
    }
}

impl Tollkeepers {
    pub fn new(players: usize) -> Tollkeepers {
        Tollkeepers {
            houses: vec![None; players],
            turn_over: vec![false; players],
            crossroads: Vec::new(),
            roads: Vec::new(),
            marks: Vec::new(),
        }
    }

    /// A tile's segments exist: note its crossroads and the pictures beside its roads.
    pub(super) fn tile_put(&mut self, board: &Board, features: &Features, t: TileRef) {
        let kind = board.design(t);
        let crossroads = kind.is_crossroads();
        if crossroads {
            self.crossroads.push(t);
        }
        let segs = features.segs_of(board, t);
        self.roads.resize(segs.end as usize, NONE);
        if !crossroads && !kind.pictured_roads {
            return;
        }
        for (local, (seg, s)) in segs.zip(&kind.segments).enumerate() {
            let local = local as u8;
            let end = crossroads && s.end == Some(RoadEnd::Village);
            if s.kind != FeatureKind::Road || (!end && s.beside.iter().all(|&n| n == 0)) {
                continue;
            }
            self.roads[seg as usize] = self.marks.len() as u32;
            self.marks.push(Road {
                crossroads: if end {
                    SmallVec::from_slice(&[t])
                } else {
                    SmallVec::new()
                },
                pictures: s.beside.map(u16::from),
                shared: kind
                    .pictures
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.roads.len() > 1 && p.roads.contains(&local))
                    .map(|(i, p)| (t, i as u8, p.kind as u8))
                    .collect(),
            });
        }
    }

    /// Two roads merged: the small one's road data joins the big one's.
    #[inline]
    pub(super) fn merged(&mut self, big: SegRef, small: SegRef) {
        let s = std::mem::replace(&mut self.roads[small as usize], NONE);
        if s == NONE {
            return;
        }
        let b = self.roads[big as usize];
        if b == NONE {
            self.roads[big as usize] = s;
            return;
        }
        let small = std::mem::take(&mut self.marks[s as usize]);
        let big = &mut self.marks[b as usize];
        big.crossroads.extend(small.crossroads);
        // At most MAX_PILE tiles, each with a few pictures: two bytes a kind cannot overflow.
        for (k, c) in small.pictures.iter().enumerate() {
            big.pictures[k] = big.pictures[k].saturating_add(*c);
        }
        for entry in small.shared {
            match big.shared.contains(&entry) {
                true => big.pictures[entry.2 as usize] -= 1,
                false => big.shared.push(entry),
            }
        }
    }

    /// The toll data of road `root`, if it has any.
    #[inline]
    fn road(&self, root: SegRef) -> Option<&Road> {
        match self.roads.get(root as usize) {
            Some(&i) if i != NONE => self.marks.get(i as usize),
            _ => None,
        }
    }

    /// T10: the road ends at a crossroads.
    #[inline]
    pub(super) fn ends_at_crossroads(&self, root: SegRef) -> bool {
        self.road(root).is_some_and(|r| !r.crossroads.is_empty())
    }

    #[inline]
    fn taken(&self, t: TileRef) -> bool {
        self.houses
            .iter()
            .any(|h| matches!(h, Some((x, _)) if *x == t))
    }

    /// Crossroads where the deciding player may put or move their tollhouse now (T3–T5): every
    /// crossroads on the board with no tollhouse on it (their own current one excluded: staying
    /// is not a move), in the order they were placed.
    fn free_crossroads<'a>(&'a self, board: &'a Board) -> impl Iterator<Item = Pos> + 'a {
        self.crossroads
            .iter()
            .filter(|&&t| !self.taken(t))
            .map(|&t| board.pos(t))
    }

    /// The `i`-th free crossroads, without listing them (bots).
    #[inline]
    pub(super) fn target(&self, board: &Board, i: usize) -> Option<Pos> {
        self.free_crossroads(board).nth(i)
    }

    /// How many crossroads are free: every crossroads but those holding a tollhouse (each
    /// tollhouse stands on a distinct crossroads).
    #[inline]
    pub(super) fn target_count(&self, _board: &Board) -> usize {
        self.crossroads.len() - self.houses.iter().filter(|h| h.is_some()).count()
    }

    pub(super) fn view(&self, player: PlayerId, board: &Board) -> Option<TollhouseView> {
        self.houses[player as usize].map(|(t, value)| TollhouseView {
            pos: board.pos(t),
            value,
        })
    }

    /// T2: put the tollhouse into play on `pos`, or move it there. Checks everything before
    /// changing anything.
    pub(super) fn place(
        &mut self,
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        pos: Pos,
    ) -> Result<(), RuleError> {
        let t = ctx
            .board
            .tile_at(pos)
            .filter(|&t| ctx.board.design(t).is_crossroads())
            .ok_or(RuleError::NotACrossroads(pos))?;
        let own = self.houses[player as usize];
        if matches!(own, Some((h, _)) if h == t) {
            return Err(RuleError::TollhouseAlreadyThere(pos));
        }
        if self.taken(t) {
            return Err(RuleError::CrossroadsTaken(pos));
        }
        match own {
            None => {
                self.houses[player as usize] = Some((t, FIRST_VALUE));
                ctx.events.push(Event::TollhousePlaced {
                    player,
                    pos,
                    value: FIRST_VALUE,
                });
            }
            Some((from, value)) => {
                self.houses[player as usize] = Some((t, value));
                ctx.events.push(Event::TollhouseMoved {
                    player,
                    from: ctx.board.pos(from),
                    to: pos,
                    value,
                });
            }
        }
        Ok(())
    }

    /// T6–T8 (a road completed, in anyone's turn) and T10 (`last`: an incomplete road at final
    /// scoring): each owner of a tollhouse at one of the road's crossroads ends collects once, in
    /// seat order.
    pub(super) fn raise(&mut self, ctx: &mut Ctx<'_>, root: SegRef, last: bool) {
        let Some(r) = self.road(root) else {
            return;
        };
        if r.crossroads.is_empty() || ctx.features.get(root).kind != FeatureKind::Road {
            return;
        }
        let road = ctx.features.get(root).min;
        let along = Along::of(r);
        let ends = r.crossroads.clone();
        for player in 0..self.houses.len() {
            let Some((t, value)) = self.houses[player] else {
                continue;
            };
            if !ends.contains(&t) {
                continue;
            }
            // T10: at the end every picture and group is worth 1, whatever value is up.
            let (value, points) = if last {
                (1, along.pictures() + along.travellers)
            } else {
                let v = u32::from(value);
                (value, v * along.pictures() + 3 * v * along.travellers)
            };
            // Nothing along the road: no toll, and no event (T6).
            if points == 0 {
                continue;
            }
            // T9: a toll from travellers turns the tollhouse at the end of this turn.
            if !last && along.travellers > 0 {
                self.turn_over[player] = true;
            }
            ctx.events.push(Event::TollRaised {
                player: player as PlayerId,
                pos: ctx.board.pos(t),
                road,
                value,
                farmhouses: along.farmhouses,
                sheds: along.sheds,
                gardens: along.gardens,
                highwaymen: along.highwaymen,
                travellers: along.travellers,
                at_final_scoring: last,
                points,
            });
            ctx.award(player as PlayerId, points, Source::Toll(t));
        }
    }

    /// T9: tollhouses that collected from travellers this turn turn over, in seat order.
    pub(super) fn turn_over(&mut self, ctx: &mut Ctx<'_>) {
        for i in 0..self.houses.len() {
            if !std::mem::take(&mut self.turn_over[i]) {
                continue;
            }
            if let Some((t, from)) = self.houses[i] {
                let to = if from == 1 { 2 } else { 1 };
                self.houses[i] = Some((t, to));
                ctx.events.push(Event::TollhouseTurned {
                    player: i as PlayerId,
                    pos: ctx.board.pos(t),
                    from,
                    to,
                });
            }
        }
    }
}
