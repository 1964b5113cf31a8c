//! The match state machine: board, features, meeples, scoring and turn flow (B3–B11).
//!
//! The board is a dense grid sized for the tiles of the match, so that legal placements are a few
//! bit operations per candidate square. Features are kept in a union-find over the segments of
//! the placed tiles; each root carries what scoring needs (open ends, tiles, coats of arms,
//! meeples, touched cities, crossroads ends, pictures beside roads), merged as tiles join them.

use crate::command::{Command, Target};
use crate::decision::{Decision, Placement};
use crate::error::{RuleError, SetupError};
use crate::event::{Event, MeepleCount};
use crate::geometry::{Half, Pos, Rotation, Side};
use crate::setup::{PlayerId, Setup};
use crate::tiles::{
    Catalogue, FeatureKind, PictureKind, RoadEnd, Segment, TileIdx, TileKind, catalogue,
};
use crate::tollkeepers;
use crate::view::{MeepleView, PlayerView, TileView, TollhouseView, View};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use serde::{Deserialize, Serialize};
use smallvec::{SmallVec, smallvec};
use std::collections::BTreeMap;

/// Index of a placed tile in [`Game::placed`].
pub(crate) type TileRef = u32;
/// Index of a segment of a placed tile (a node of the union-find).
pub(crate) type SegRef = u32;

/// One tile on the board.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Placed {
    pub(crate) tile: TileIdx,
    pub(crate) pos: Pos,
    pub(crate) rot: Rotation,
    /// Its edge code turned to board orientation.
    edges: u8,
    /// Its segments are `first_seg .. first_seg + segments.len()`.
    pub(crate) first_seg: SegRef,
}

/// What a feature root knows. Entries of non-root segments keep only their `kind`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Feature {
    pub(crate) kind: FeatureKind,
    /// Union-find size, for union by size.
    size: u32,
    /// Road and city ends that face no tile yet; 0 means closed (B6).
    open: u16,
    /// Distinct tiles of a road, city or monastery (fields keep only their first). (Inline
    /// vectors: most features stay small, and a random game creates hundreds of them.)
    pub(crate) tiles: SmallVec<[TileRef; 4]>,
    /// The feature's square with the smallest (x, y): its canonical position (B11).
    min: Pos,
    coats: u32,
    /// Meeples on the feature: owner and the segment it stands on.
    pub(crate) meeples: SmallVec<[(PlayerId, SegRef); 1]>,
    /// Roads: the crossroads tiles where this road ends, once per ending segment (T3, T8).
    pub(crate) crossroads: SmallVec<[TileRef; 2]>,
    /// Roads: pictures beside its segments, by [`PictureKind`] (T7).
    /// (Two bytes a kind: a test setup may repeat a design, up to [`MAX_PILE`] tiles.)
    pub(crate) pictures: [u16; PictureKind::COUNT],
    /// Completed and scored: never scored again.
    pub(crate) done: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PlayerState {
    pub(crate) score: u32,
    supply: u8,
    /// The Tollkeepers: the tile of the crossroads the tollhouse stands on, and its value.
    pub(crate) tollhouse: Option<(TileRef, u8)>,
    /// T9: the tollhouse raised a toll from travellers this turn.
    pub(crate) turn_over: bool,
}

/// An empty square next to the board.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Frontier {
    pos: Pos,
    /// Edge codes the neighbours demand (two bits a side, as in [`TileKind`]).
    code: u8,
    /// Which sides are constrained (0b11 per constrained side).
    mask: u8,
}

/// The largest pile a setup may ask for: the grid is sized for a line of every tile.
pub const MAX_PILE: usize = 500;

/// A grid cell holds 0 (empty), a placed index + 1, or `FRONTIER | slot in frontier`.
const FRONTIER: u16 = 0x8000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Phase {
    /// Phase 1: the active player must place this tile.
    Tile(TileIdx),
    /// Phase 2: the active player may place a follower on / around this placed tile.
    Follower(TileRef),
    Over,
}

/// One match: the whole state, secret parts included. Owned by one match actor on the server.
///
/// It serializes (for snapshots kept on the server side only: it holds the pile order and the
/// random generator); a snapshot is valid only for the same [`crate::RULES_VERSION`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Game {
    setup: Setup,
    /// The catalogue is static data of this build, not state.
    #[serde(skip, default = "catalogue")]
    cat: &'static Catalogue,
    /// Kept in the state for rules that will draw at random later (dispatches, chips).
    #[allow(dead_code)]
    rng: ChaCha8Rng,
    /// The face-down pile; the next tile is the last element (secret, B9).
    pile: Vec<TileIdx>,
    discarded: Vec<TileIdx>,
    /// Grid side length and offset of (0, 0).
    dim: i32,
    off: i32,
    /// Per square: 0 empty, a placed index + 1, or `FRONTIER | index in frontier` (two bytes a
    /// square keeps the grid of a whole game small enough to clear cheaply).
    cells: Vec<u16>,
    /// Empty squares next to a tile, in the order they appeared, each with the edges a tile
    /// must show there (kept up to date as neighbours arrive, so placement checks are a mask).
    frontier: Vec<Frontier>,
    pub(crate) placed: Vec<Placed>,
    /// Placed tiles showing a crossroads (T3), in placement order.
    pub(crate) crossroads: Vec<TileRef>,
    parent: Vec<SegRef>,
    seg_tile: Vec<TileRef>,
    seg_local: Vec<u8>,
    pub(crate) features: Vec<Feature>,
    pub(crate) players: Vec<PlayerState>,
    /// Meeples on the board in the order they were placed: owner and segment.
    on_board: Vec<(PlayerId, SegRef)>,
    active: PlayerId,
    turn: u32,
    phase: Phase,
}

impl Game {
    /// Starts a match: places the start tile, shuffles the pile with the seed, draws the first
    /// tile. Returns the opening events.
    pub fn start(setup: Setup) -> Result<(Game, Vec<Event>), SetupError> {
        let n = setup.players.len();
        if !(2..=6).contains(&n) {
            return Err(SetupError::PlayerCount(n));
        }
        for (i, c) in setup.players.iter().enumerate() {
            if setup.players[..i].contains(c) {
                return Err(SetupError::DuplicateColour(*c));
            }
        }
        if !(1..=30).contains(&setup.meeples) {
            return Err(SetupError::Meeples(setup.meeples));
        }
        let cat = catalogue();
        let in_match =
            |t: &TileKind| t.set == "base" || (t.set == "tollkeepers" && setup.modules.tollkeepers);
        let mut rng = ChaCha8Rng::seed_from_u64(setup.seed);
        let mut pile: Vec<TileIdx> = match &setup.draw_order {
            Some(order) => {
                let mut pile = Vec::with_capacity(order.len());
                for id in order {
                    match cat.find(id) {
                        Some(i) if in_match(cat.get(i)) => pile.push(i),
                        _ => return Err(SetupError::UnknownTile(id.clone())),
                    }
                }
                pile.reverse();
                pile
            }
            None => {
                let mut pile = Vec::new();
                for (i, t) in cat.tiles.iter().enumerate() {
                    if in_match(t) {
                        let copies = t.count - u32::from(i as TileIdx == cat.start);
                        pile.extend(std::iter::repeat_n(i as TileIdx, copies as usize));
                    }
                }
                // Fisher–Yates with our own draws, so the order depends only on the seed.
                for i in (1..pile.len()).rev() {
                    let j = ((u128::from(rng.next_u64()) * (i as u128 + 1)) >> 64) as usize;
                    pile.swap(i, j);
                }
                pile
            }
        };
        if pile.len() > MAX_PILE {
            return Err(SetupError::PileTooLarge(pile.len()));
        }
        pile.shrink_to_fit();
        let total = pile.len() as i32 + 1;
        // Most games stay within a dozen squares of the start; the grid grows when one does not.
        let off = total.clamp(2, 12) + 1;
        let dim = 2 * off + 1;
        let players = (0..n)
            .map(|_| PlayerState {
                score: 0,
                supply: setup.meeples,
                tollhouse: None,
                turn_over: false,
            })
            .collect();
        let mut game = Game {
            setup,
            cat,
            rng,
            pile,
            discarded: Vec::new(),
            dim,
            off,
            cells: vec![0; (dim * dim) as usize],
            frontier: Vec::with_capacity(64),
            placed: Vec::with_capacity(total as usize),
            crossroads: Vec::new(),
            parent: Vec::with_capacity(total as usize * 6),
            seg_tile: Vec::with_capacity(total as usize * 6),
            seg_local: Vec::with_capacity(total as usize * 6),
            features: Vec::with_capacity(total as usize * 6),
            players,
            on_board: Vec::new(),
            active: 0,
            turn: 0,
            phase: Phase::Over,
        };
        let start = cat.start;
        game.place(start, Pos::new(0, 0), Rotation::default());
        let mut events = vec![Event::GameStarted {
            players: game.setup.players.clone(),
            start_tile: cat.get(start).id.clone(),
            pos: Pos::new(0, 0),
            rotation: Rotation::default(),
            pile: game.pile.len() as u32,
        }];
        game.begin_turn(&mut events);
        Ok((game, events))
    }

    /// Applies one player's command. On error nothing changed.
    pub fn apply(&mut self, player: PlayerId, command: Command) -> Result<Vec<Event>, RuleError> {
        let mut events = Vec::new();
        self.apply_into(player, command, &mut events)?;
        Ok(events)
    }

    /// [`Game::apply`] appending to a caller's buffer (benchmarks, bulk replays).
    pub fn apply_into(
        &mut self,
        player: PlayerId,
        command: Command,
        events: &mut Vec<Event>,
    ) -> Result<(), RuleError> {
        if self.phase == Phase::Over {
            return Err(RuleError::GameOver);
        }
        if player as usize >= self.players.len() {
            return Err(RuleError::UnknownPlayer(player));
        }
        if player != self.active {
            return Err(RuleError::NotYourTurn {
                player,
                waiting: self.active,
            });
        }
        match (command, self.phase) {
            (Command::PlaceTile { pos, rotation }, Phase::Tile(tile)) => {
                self.check_placement(tile, pos, rotation)?;
                let t = self.place(tile, pos, rotation);
                self.phase = Phase::Follower(t);
                events.push(Event::TilePlaced {
                    player,
                    tile: self.cat.get(tile).id.clone(),
                    pos,
                    rotation,
                });
            }
            (Command::PlaceTile { .. }, _) => {
                return Err(RuleError::WrongPhase {
                    expected: "phase 2: place_meeple, place_tollhouse or pass",
                });
            }
            (Command::PlaceMeeple { target }, Phase::Follower(t)) => {
                let seg = self.check_meeple(player, t, target)?;
                let root = self.find(seg);
                self.features[root as usize].meeples.push((player, seg));
                self.on_board.push((player, seg));
                self.players[player as usize].supply -= 1;
                // Named canonically (first side or half in board order), as the view and
                // `meeple_returned` name it, whichever side the player wrote.
                events.push(Event::MeeplePlaced {
                    player,
                    pos: self.placed[t as usize].pos,
                    target: self.target_of(seg),
                });
                self.finish_turn(t, events);
            }
            (Command::PlaceTollhouse { pos }, Phase::Follower(t)) => {
                tollkeepers::place(self, player, pos, events)?;
                self.finish_turn(t, events);
            }
            (Command::Pass {}, Phase::Follower(t)) => {
                events.push(Event::Passed { player });
                self.finish_turn(t, events);
            }
            (_, _) => {
                return Err(RuleError::WrongPhase {
                    expected: "phase 1: place_tile",
                });
            }
        }
        Ok(())
    }

    /// The decisions open now (empty when the game is over).
    pub fn decisions(&self) -> Vec<Decision> {
        match self.phase {
            Phase::Tile(tile) => vec![Decision::PlaceTile {
                player: self.active,
                tile: self.cat.get(tile).id.clone(),
                placements: self.legal_placements(),
            }],
            Phase::Follower(t) => vec![Decision::PlaceFollower {
                player: self.active,
                pos: self.placed[t as usize].pos,
                meeple_targets: self.meeple_targets(),
                tollhouse_targets: self.tollhouse_targets(),
            }],
            Phase::Over => Vec::new(),
        }
    }

    /// Where the drawn tile may go, by square (sorted), with the rotations that fit (B4).
    pub fn legal_placements(&self) -> Vec<Placement> {
        let Phase::Tile(tile) = self.phase else {
            return Vec::new();
        };
        let kind = self.cat.get(tile);
        let mut out: Vec<Placement> = self
            .frontier
            .iter()
            .filter_map(|&Frontier { pos, code, mask }| {
                let rotations: Vec<Rotation> = Rotation::ALL
                    .into_iter()
                    .filter(|r| (kind.edge_code_rotated(r.quarters()) ^ code) & mask == 0)
                    .collect();
                (!rotations.is_empty()).then_some(Placement { pos, rotations })
            })
            .collect();
        out.sort_by_key(|p| p.pos);
        out
    }

    /// Every legal (square, rotation) for the drawn tile, unsorted, into `out` (fast path for
    /// bots and benchmarks).
    pub fn placements_into(&self, out: &mut Vec<(Pos, Rotation)>) {
        match self.phase {
            Phase::Tile(tile) => self.options_for(tile, out),
            _ => out.clear(),
        }
    }

    /// How many legal (square, rotation) pairs the drawn tile has; 0 outside phase 1.
    /// With [`Game::placement`], a bot picks one uniformly without listing them.
    pub fn placement_count(&self) -> usize {
        let Phase::Tile(tile) = self.phase else {
            return 0;
        };
        let fits = &self.cat.get(tile).fits;
        self.frontier
            .iter()
            .map(|f| fits[usize::from(f.code)].count_ones() as usize)
            .sum()
    }

    /// The `k`-th legal (square, rotation) pair of the drawn tile, in the order of
    /// [`Game::placements_into`].
    pub fn placement(&self, mut k: usize) -> Option<(Pos, Rotation)> {
        let Phase::Tile(tile) = self.phase else {
            return None;
        };
        let fits = &self.cat.get(tile).fits;
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

    /// Whether `tile` fits anywhere on the board (B4): one pass without branches per square.
    fn fits_anywhere(&self, tile: TileIdx) -> bool {
        let fits = &self.cat.get(tile).fits;
        self.frontier
            .iter()
            .fold(0u8, |acc, f| acc | fits[usize::from(f.code)])
            != 0
    }

    fn options_for(&self, tile: TileIdx, out: &mut Vec<(Pos, Rotation)>) {
        let fits = &self.cat.get(tile).fits;
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

    /// Where a tile of design `tile` could go on the board now (for any design, drawn or not:
    /// clients' hints, bots, benchmarks). Returns false for an unknown id.
    pub fn placements_of(&self, tile: &str, out: &mut Vec<(Pos, Rotation)>) -> bool {
        match self.cat.find(tile) {
            Some(t) => {
                self.options_for(t, out);
                true
            }
            None => {
                out.clear();
                false
            }
        }
    }

    /// Features of the tile just placed that may take a meeple now (B5); empty outside phase 2
    /// or with an empty supply.
    pub fn meeple_targets(&self) -> Vec<Target> {
        self.free_segments().map(|s| self.target_of(s)).collect()
    }

    /// How many targets [`Game::meeple_targets`] would list, without naming them (bots).
    pub fn meeple_target_count(&self) -> usize {
        self.free_segments().count()
    }

    /// The `i`-th of [`Game::meeple_targets`].
    pub fn meeple_target(&self, i: usize) -> Option<Target> {
        self.free_segments().nth(i).map(|s| self.target_of(s))
    }

    /// Segments of the tile just placed whose feature holds no meeple, when the active player
    /// has a meeple to place (B5).
    fn free_segments(&self) -> impl Iterator<Item = SegRef> + '_ {
        let range = match self.phase {
            Phase::Follower(t) if self.players[self.active as usize].supply > 0 => {
                let p = &self.placed[t as usize];
                p.first_seg..p.first_seg + self.cat.get(p.tile).segments.len() as SegRef
            }
            _ => 0..0,
        };
        range.filter(|&s| self.features[self.find(s) as usize].meeples.is_empty())
    }

    /// Crossroads where the active player may put or move their tollhouse now (T2–T5); empty
    /// outside phase 2 or without The Tollkeepers.
    pub fn tollhouse_targets(&self) -> Vec<Pos> {
        match self.phase {
            Phase::Follower(_) => tollkeepers::targets(self),
            _ => Vec::new(),
        }
    }

    /// The `i`-th of [`Game::tollhouse_targets`], without listing them (bots).
    pub fn tollhouse_target(&self, i: usize) -> Option<Pos> {
        match self.phase {
            Phase::Follower(_) => tollkeepers::target(self, i),
            _ => None,
        }
    }

    /// How many crossroads [`Game::tollhouse_targets`] would list, without listing them (bots).
    pub fn tollhouse_target_count(&self) -> usize {
        match self.phase {
            Phase::Follower(_) => tollkeepers::target_count(self),
            _ => 0,
        }
    }

    /// The public view (B9).
    pub fn view(&self) -> View {
        let players = self
            .players
            .iter()
            .zip(&self.setup.players)
            .map(|(p, colour)| PlayerView {
                colour: *colour,
                score: p.score,
                meeples: p.supply,
                tollhouse: p.tollhouse.map(|(t, value)| TollhouseView {
                    pos: self.placed[t as usize].pos,
                    value,
                }),
            })
            .collect();
        let board = self
            .placed
            .iter()
            .map(|p| {
                (
                    p.pos.key(),
                    TileView {
                        tile: self.cat.get(p.tile).id.clone(),
                        rotation: p.rot,
                    },
                )
            })
            .collect();
        let meeples = self
            .on_board
            .iter()
            .map(|&(player, seg)| {
                let pos = self.placed[self.seg_tile[seg as usize] as usize].pos;
                let target = self.target_of(seg);
                (
                    format!("{pos} {target}"),
                    MeepleView {
                        player,
                        pos,
                        target,
                    },
                )
            })
            .collect();
        let mut pile = BTreeMap::new();
        for &t in &self.pile {
            *pile.entry(self.cat.get(t).id.clone()).or_insert(0) += 1;
        }
        View {
            modules: self.setup.modules.clone(),
            players,
            board,
            meeples,
            pile,
            pile_size: self.pile.len() as u32,
            discarded: self
                .discarded
                .iter()
                .map(|&t| self.cat.get(t).id.clone())
                .collect(),
            turn: self.turn,
            active: self.active,
            drawn: match self.phase {
                Phase::Tile(t) => Some(self.cat.get(t).id.clone()),
                _ => None,
            },
            decisions: self.decisions(),
            finished: self.phase == Phase::Over,
        }
    }

    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Over
    }

    /// Scores in seat order.
    pub fn scores(&self) -> Vec<u32> {
        self.players.iter().map(|p| p.score).collect()
    }

    /// Meeples in each player's supply, in seat order.
    pub fn supplies(&self) -> Vec<u8> {
        self.players.iter().map(|p| p.supply).collect()
    }

    /// Meeples on the board, per player, in seat order.
    pub fn meeples_on_board(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.players.len()];
        for &(p, _) in &self.on_board {
            out[p as usize] += 1;
        }
        out
    }

    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// The tile drawn and waiting to be placed (phase 1), if any.
    pub fn drawn_tile(&self) -> Option<&'static str> {
        match self.phase {
            Phase::Tile(t) => Some(self.cat.get(t).id.as_str()),
            _ => None,
        }
    }

    /// Whose turn it is.
    pub fn active(&self) -> PlayerId {
        self.active
    }

    /// Tiles left in the pile.
    pub fn pile_size(&self) -> usize {
        self.pile.len()
    }

    /// Every placed tile: position, tile id, rotation (for tests and tools).
    pub fn placed_tiles(&self) -> impl Iterator<Item = (Pos, &str, Rotation)> + '_ {
        self.placed
            .iter()
            .map(|p| (p.pos, self.cat.get(p.tile).id.as_str(), p.rot))
    }

    /// What the tile on `pos` shows on `side`, in board orientation.
    pub fn edge_at(&self, pos: Pos, side: Side) -> Option<crate::tiles::Edge> {
        let t = self.tile_at(pos)?;
        Some(
            match (self.placed[t as usize].edges >> (2 * side.index())) & 3 {
                1 => crate::tiles::Edge::Field,
                2 => crate::tiles::Edge::Road,
                _ => crate::tiles::Edge::City,
            },
        )
    }

    // ---- board ----

    /// Doubles the grid around (0, 0) when `pos` or a square next to it falls outside it.
    fn make_room(&mut self, pos: Pos) {
        let lo = -self.off;
        let hi = self.dim - self.off - 1;
        if pos.x > lo && pos.x < hi && pos.y > lo && pos.y < hi {
            return;
        }
        let off = self.off * 2 + pos.x.abs().max(pos.y.abs());
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
    fn cell(&self, pos: Pos) -> Option<usize> {
        let (off, dim) = (i64::from(self.off), i64::from(self.dim));
        let (x, y) = (i64::from(pos.x) + off, i64::from(pos.y) + off);
        (x >= 0 && y >= 0 && x < dim && y < dim).then(|| (y * dim + x) as usize)
    }

    /// The placed tile shows a crossroads (T3).
    pub(crate) fn is_crossroads(&self, t: TileRef) -> bool {
        self.cat.get(self.placed[t as usize].tile).is_crossroads()
    }

    pub(crate) fn tile_at(&self, pos: Pos) -> Option<TileRef> {
        match self.cell(pos).map(|c| self.cells[c]) {
            Some(v) if v != 0 && v & FRONTIER == 0 => Some(TileRef::from(v) - 1),
            _ => None,
        }
    }

    /// The edges a tile on `pos` must show: a code and a mask of the constrained sides.
    fn requirement(&self, pos: Pos) -> (u8, u8) {
        match self.cell(pos).map(|c| self.cells[c]) {
            Some(v) if v & FRONTIER != 0 => {
                let f = &self.frontier[usize::from(v & !FRONTIER)];
                (f.code, f.mask)
            }
            _ => (0, 0),
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

    fn check_placement(&self, tile: TileIdx, pos: Pos, rot: Rotation) -> Result<(), RuleError> {
        if self.tile_at(pos).is_some() {
            return Err(RuleError::Occupied(pos));
        }
        let (code, mask) = self.requirement(pos);
        if mask == 0 {
            return Err(RuleError::NotAdjacent(pos));
        }
        let edges = self.cat.get(tile).edge_code_rotated(rot.quarters());
        for side in Side::ALL {
            let m = 3u8 << (2 * side.index());
            if mask & m != 0 && (edges ^ code) & m != 0 {
                return Err(RuleError::EdgeMismatch { pos, side });
            }
        }
        Ok(())
    }

    /// Puts a tile on the board and joins its segments to its neighbours' features. Legality has
    /// been checked.
    fn place(&mut self, tile: TileIdx, pos: Pos, rot: Rotation) -> TileRef {
        let cat = self.cat;
        let kind = cat.get(tile);
        self.make_room(pos);
        let t = self.placed.len() as TileRef;
        let first_seg = self.parent.len() as SegRef;
        let q = rot.quarters();
        self.placed.push(Placed {
            tile,
            pos,
            rot,
            edges: kind.edge_code_rotated(q),
            first_seg,
        });
        let crossroads = kind.is_crossroads();
        if crossroads {
            self.crossroads.push(t);
        }
        for (i, seg) in kind.segments.iter().enumerate() {
            let id = first_seg + i as SegRef;
            self.parent.push(id);
            self.seg_tile.push(t);
            self.seg_local.push(i as u8);
            let pictures = seg.beside.map(u16::from);
            self.features.push(Feature {
                kind: seg.kind,
                size: 1,
                open: seg.side_count() as u16,
                tiles: smallvec![t],
                min: pos,
                coats: u32::from(seg.coat),
                meeples: SmallVec::new(),
                crossroads: if crossroads && seg.end == Some(RoadEnd::Village) {
                    smallvec![t]
                } else {
                    SmallVec::new()
                },
                pictures,
                done: false,
            });
        }
        let c = self.cell(pos).unwrap_or(0);
        self.frontier_remove(c);
        self.cells[c] = (t + 1) as u16;
        let edges = self.placed[t as usize].edges;
        for side in Side::ALL {
            let npos = pos.step(side);
            let Some(n) = self.tile_at(npos) else {
                // The empty square across this side must now match this side.
                if let Some(nc) = self.cell(npos) {
                    let opp = side.opposite().index() * 2;
                    let e = (edges >> (2 * side.index())) & 3;
                    let slot = match self.cells[nc] {
                        v if v & FRONTIER != 0 => usize::from(v & !FRONTIER),
                        _ => {
                            self.cells[nc] = FRONTIER | self.frontier.len() as u16;
                            self.frontier.push(Frontier {
                                pos: npos,
                                code: 0,
                                mask: 0,
                            });
                            self.frontier.len() - 1
                        }
                    };
                    let f = &mut self.frontier[slot];
                    f.code |= e << opp;
                    f.mask |= 3 << opp;
                }
                continue;
            };
            let opp = side.opposite();
            match (self.placed[t as usize].edges >> (2 * side.index())) & 3 {
                // Road or city: join the two segments that reach this side; two ends close.
                2 | 3 => {
                    if let (Some(a), Some(b)) =
                        (self.seg_at_side(t, side), self.seg_at_side(n, opp))
                    {
                        let r = self.union(a, b);
                        self.features[r as usize].open -= 2;
                    }
                }
                _ => {}
            }
            // Fields meet on both halves of a field or road side.
            for h in side.halves() {
                if let (Some(a), Some(b)) =
                    (self.seg_at_half(t, h), self.seg_at_half(n, h.facing()))
                {
                    self.union(a, b);
                }
            }
        }
        t
    }

    /// The first segment of placed tile `t` that `wanted` picks.
    fn find_seg(&self, t: TileRef, wanted: impl Fn(&Segment) -> bool) -> Option<SegRef> {
        let p = &self.placed[t as usize];
        self.cat
            .get(p.tile)
            .segments
            .iter()
            .position(wanted)
            .map(|i| p.first_seg + i as SegRef)
    }

    /// The road or city segment of placed tile `t` reaching board side `side`.
    fn seg_at_side(&self, t: TileRef, side: Side) -> Option<SegRef> {
        let rot = self.placed[t as usize].rot;
        let bit = 1u8
            << side
                .rotate(Rotation::from_quarters(4 - rot.quarters()))
                .index();
        self.find_seg(t, |s| {
            matches!(s.kind, FeatureKind::Road | FeatureKind::City) && s.sides & bit != 0
        })
    }

    /// The field segment of placed tile `t` reaching board half-edge `h`.
    fn seg_at_half(&self, t: TileRef, h: Half) -> Option<SegRef> {
        let rot = self.placed[t as usize].rot;
        let bit = 1u8
            << h.rotate(Rotation::from_quarters(4 - rot.quarters()))
                .index();
        self.find_seg(t, |s| s.kind == FeatureKind::Field && s.halves & bit != 0)
    }

    /// How a segment is named to players: its kind and first side or half in board orientation.
    fn target_of(&self, seg: SegRef) -> Target {
        let p = &self.placed[self.seg_tile[seg as usize] as usize];
        let s = &self.cat.get(p.tile).segments[self.seg_local[seg as usize] as usize];
        let q = u32::from(p.rot.quarters());
        // Turn the segment's masks with the tile; the lowest set bit is its first side or half.
        let sides = ((u32::from(s.sides) << q) | (u32::from(s.sides) >> (4 - q))) & 0xF;
        let side = Side::from_index(sides.trailing_zeros() as usize % 4);
        let half = Half::ALL[s.halves.rotate_left(2 * q).trailing_zeros() as usize % 8];
        match s.kind {
            FeatureKind::Monastery => Target::Monastery,
            FeatureKind::Field => Target::Field(half),
            FeatureKind::Road => Target::Road(side),
            FeatureKind::City => Target::City(side),
        }
    }

    fn check_meeple(
        &self,
        player: PlayerId,
        t: TileRef,
        target: Target,
    ) -> Result<SegRef, RuleError> {
        if self.players[player as usize].supply == 0 {
            return Err(RuleError::NoMeepleLeft);
        }
        let seg = match target {
            Target::Road(side) => self
                .seg_at_side(t, side)
                .filter(|&s| self.features[s as usize].kind == FeatureKind::Road),
            Target::City(side) => self
                .seg_at_side(t, side)
                .filter(|&s| self.features[s as usize].kind == FeatureKind::City),
            Target::Field(h) => self.seg_at_half(t, h),
            Target::Monastery => self.find_seg(t, |s| s.kind == FeatureKind::Monastery),
        }
        .ok_or(RuleError::NoSuchFeature(target))?;
        if !self.features[self.find(seg) as usize].meeples.is_empty() {
            return Err(RuleError::FeatureOccupied(target));
        }
        Ok(seg)
    }

    // ---- union-find ----

    pub(crate) fn find(&self, mut s: SegRef) -> SegRef {
        while self.parent[s as usize] != s {
            s = self.parent[s as usize];
        }
        s
    }

    fn find_compress(&mut self, mut s: SegRef) -> SegRef {
        while self.parent[s as usize] != s {
            let gp = self.parent[self.parent[s as usize] as usize];
            self.parent[s as usize] = gp;
            s = gp;
        }
        s
    }

    /// Joins two segments' features and returns the root.
    fn union(&mut self, a: SegRef, b: SegRef) -> SegRef {
        let (ra, rb) = (self.find_compress(a), self.find_compress(b));
        if ra == rb {
            return ra;
        }
        let (big, small) = if self.features[ra as usize].size >= self.features[rb as usize].size {
            (ra, rb)
        } else {
            (rb, ra)
        };
        self.parent[small as usize] = big;
        let kind = self.features[small as usize].kind;
        let s = std::mem::replace(
            &mut self.features[small as usize],
            Feature {
                kind,
                size: 0,
                open: 0,
                tiles: SmallVec::new(),
                min: Pos::default(),
                coats: 0,
                meeples: SmallVec::new(),
                crossroads: SmallVec::new(),
                pictures: [0; PictureKind::COUNT],
                done: false,
            },
        );
        let f = &mut self.features[big as usize];
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
        f.meeples.extend(s.meeples);
        f.crossroads.extend(s.crossroads);
        // At most MAX_PILE tiles, each with a few pictures: two bytes a kind cannot overflow.
        for (k, c) in s.pictures.iter().enumerate() {
            f.pictures[k] = f.pictures[k].saturating_add(*c);
        }
        big
    }

    // ---- turn flow ----

    fn begin_turn(&mut self, events: &mut Vec<Event>) {
        if self.pile.is_empty() {
            self.final_scoring(events);
            return;
        }
        self.turn += 1;
        events.push(Event::TurnStarted {
            player: self.active,
            turn: self.turn,
        });
        self.draw(events);
    }

    /// Draws until a tile fits somewhere (B4); ends the game when the pile runs out (B7).
    fn draw(&mut self, events: &mut Vec<Event>) {
        while let Some(tile) = self.pile.pop() {
            let id = self.cat.get(tile).id.clone();
            events.push(Event::TileDrawn {
                player: self.active,
                tile: id.clone(),
            });
            self.phase = Phase::Tile(tile);
            if self.fits_anywhere(tile) {
                return;
            }
            self.discarded.push(tile);
            events.push(Event::TileDiscarded {
                player: self.active,
                tile: id,
            });
        }
        self.final_scoring(events);
    }

    /// Phase 3 and the end of the turn: score what this tile completed (B6, B11), turn
    /// tollhouses (T9), pass to the next player.
    fn finish_turn(&mut self, t: TileRef, events: &mut Vec<Event>) {
        let mut completed: SmallVec<[(u8, Pos, SegRef); 8]> = SmallVec::new();
        let p = self.placed[t as usize].clone();
        let nsegs = self.cat.get(p.tile).segments.len() as SegRef;
        for s in p.first_seg..p.first_seg + nsegs {
            let r = self.find(s);
            let f = &self.features[r as usize];
            let order = match f.kind {
                FeatureKind::Road => 0,
                FeatureKind::City => 1,
                _ => continue,
            };
            if f.open == 0 && !f.done && !completed.iter().any(|c| c.2 == r) {
                completed.push((order, self.min_pos(r), r));
            }
        }
        for pos in std::iter::once(p.pos).chain(p.pos.ring()) {
            if let Some(m) = self.monastery_at(pos)
                && !self.features[m as usize].done
                && pos.ring().all(|q| self.tile_at(q).is_some())
            {
                completed.push((2, pos, m));
            }
        }
        completed.sort_unstable();
        for (_, _, root) in completed {
            self.features[root as usize].done = true;
            self.score_feature(root, true, events);
            if self.features[root as usize].kind == FeatureKind::Road {
                tollkeepers::road_completed(self, root, events);
            }
            self.return_meeples(root, events);
        }
        tollkeepers::end_of_turn(self, events);
        self.active = ((self.active as usize + 1) % self.players.len()) as PlayerId;
        self.begin_turn(events);
    }

    /// The monastery segment (a root: monasteries never merge) on `pos`, if any.
    fn monastery_at(&self, pos: Pos) -> Option<SegRef> {
        let t = self.tile_at(pos)?;
        self.find_seg(t, |s| s.kind == FeatureKind::Monastery)
    }

    /// The feature's tile with the smallest (x, y): its canonical position (B11).
    pub(crate) fn min_pos(&self, root: SegRef) -> Pos {
        self.features[root as usize].min
    }

    /// Meeples per player on a feature, and the players with the most (B6: ties all win).
    fn majority(&self, root: SegRef) -> (Vec<MeepleCount>, Vec<PlayerId>) {
        let mut counts: Vec<MeepleCount> = Vec::new();
        for &(p, _) in &self.features[root as usize].meeples {
            match counts.iter_mut().find(|c| c.player == p) {
                Some(c) => c.count += 1,
                None => counts.push(MeepleCount {
                    player: p,
                    count: 1,
                }),
            }
        }
        counts.sort_by_key(|c| c.player);
        let max = counts.iter().map(|c| c.count).max().unwrap_or(0);
        let winners = counts
            .iter()
            .filter(|c| c.count == max)
            .map(|c| c.player)
            .collect();
        (counts, winners)
    }

    /// Scores a road, city or monastery with meeples on it, complete (B6) or not (B7).
    fn score_feature(&mut self, root: SegRef, complete: bool, events: &mut Vec<Event>) {
        if self.features[root as usize].meeples.is_empty() {
            return;
        }
        let f = &self.features[root as usize];
        let kind = f.kind;
        let pos = self.min_pos(root);
        let (tiles, coats, points) = match kind {
            FeatureKind::Road => {
                let n = f.tiles.len() as u32;
                (n, 0, n)
            }
            FeatureKind::City => {
                let n = f.tiles.len() as u32;
                let per = if complete { 2 } else { 1 };
                (n, f.coats, per * (n + f.coats))
            }
            FeatureKind::Monastery => {
                let n = 1 + pos.ring().filter(|&q| self.tile_at(q).is_some()).count() as u32;
                (n, 0, if complete { 9 } else { n })
            }
            FeatureKind::Field => return,
        };
        let (meeples, winners) = self.majority(root);
        for &w in &winners {
            self.players[w as usize].score += points;
        }
        events.push(Event::FeatureScored {
            feature: kind,
            pos,
            tiles,
            coats,
            complete,
            meeples,
            points,
            winners,
        });
    }

    /// Meeples on a scored feature go back to their supplies (B6).
    fn return_meeples(&mut self, root: SegRef, events: &mut Vec<Event>) {
        let meeples = std::mem::take(&mut self.features[root as usize].meeples);
        for (player, seg) in meeples {
            self.players[player as usize].supply += 1;
            self.on_board.retain(|&(_, s)| s != seg);
            events.push(Event::MeepleReturned {
                player,
                pos: self.placed[self.seg_tile[seg as usize] as usize].pos,
                target: self.target_of(seg),
            });
        }
    }

    /// Feature roots not yet scored that final scoring must look at, per kind (roads, cities,
    /// monasteries, fields), each in canonical order (B11): those with meeples, and roads that end
    /// at a crossroads while The Tollkeepers is on (T10).
    fn final_candidates(&self) -> [Vec<SegRef>; 4] {
        let tolls = self.setup.modules.tollkeepers;
        let mut by_kind: [Vec<(Pos, SegRef)>; 4] = Default::default();
        for s in 0..self.parent.len() as SegRef {
            if self.parent[s as usize] != s {
                continue;
            }
            let f = &self.features[s as usize];
            let wanted = !f.done && (!f.meeples.is_empty() || (tolls && !f.crossroads.is_empty()));
            if wanted {
                let k = match f.kind {
                    FeatureKind::Road => 0,
                    FeatureKind::City => 1,
                    FeatureKind::Monastery => 2,
                    FeatureKind::Field => 3,
                };
                by_kind[k].push((self.min_pos(s), s));
            }
        }
        by_kind.map(|mut v| {
            v.sort_unstable();
            v.into_iter().map(|(_, s)| s).collect()
        })
    }

    /// B7: incomplete roads, cities, monasteries, then fields; then the game ends.
    fn final_scoring(&mut self, events: &mut Vec<Event>) {
        self.phase = Phase::Over;
        let [roads, cities, monasteries, fields] = self.final_candidates();
        for root in roads {
            self.score_feature(root, false, events);
            tollkeepers::road_final(self, root, events);
        }
        for root in cities.into_iter().chain(monasteries) {
            self.score_feature(root, false, events);
        }
        // Which completed cities each field touches, from the tiles' data (B7).
        let mut touched: Vec<(SegRef, SegRef)> = Vec::new();
        if !fields.is_empty() {
            for p in &self.placed {
                for (local, seg) in self.cat.get(p.tile).segments.iter().enumerate() {
                    if seg.touches.is_empty() {
                        continue;
                    }
                    let field = self.find(p.first_seg + local as SegRef);
                    for &c in &seg.touches {
                        let city = self.find(p.first_seg + SegRef::from(c));
                        if self.features[city as usize].done {
                            touched.push((field, city));
                        }
                    }
                }
            }
            touched.sort_unstable();
            touched.dedup();
        }
        for root in fields {
            let n = touched.iter().filter(|&&(f, _)| f == root).count() as u32;
            let (meeples, winners) = self.majority(root);
            let points = 3 * n;
            for &w in &winners {
                self.players[w as usize].score += points;
            }
            events.push(Event::FieldScored {
                pos: self.min_pos(root),
                cities: n,
                meeples,
                points,
                winners,
            });
        }
        events.push(Event::GameEnded {
            scores: self.scores(),
        });
    }
}
