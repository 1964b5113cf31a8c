//! What a match asks now: the open decisions, their options in one shape ([`AskOptions`]), the
//! default answers a clock sends, and the placement and target queries bots and clients use.

use super::Game;
use crate::command::{Command, Figure, Target};
use crate::decision::{Decision, Options, Placement};
use crate::engine::ids::{DecisionId, SegRef, TileRef};
use crate::geometry::{Pos, Rotation};
use crate::modules::Ask;
use crate::setup::PlayerId;
use crate::tiles::TileIdx;

impl Game {
    /// The decisions open now, oldest first (empty when the game is over).
    pub fn decisions(&self) -> Vec<Decision> {
        self.agenda
            .open()
            .iter()
            .map(|o| self.decision_of(&o.ask))
            .collect()
    }

    /// The decisions open now with their stable ids.
    pub fn open_decisions(&self) -> Vec<(DecisionId, Decision)> {
        self.agenda
            .open()
            .iter()
            .map(|o| (o.id, self.decision_of(&o.ask)))
            .collect()
    }

    /// The open decisions' ids and whose each is, without building them (cheap: a server
    /// tracks when each opened after every command, replays included).
    pub fn open_asks(&self) -> impl Iterator<Item = (DecisionId, PlayerId)> + '_ {
        self.agenda.open().iter().map(|o| (o.id, o.ask.player()))
    }

    /// The oldest open decision and whose it is (bots).
    #[inline]
    pub fn first_decision(&self) -> Option<(DecisionId, PlayerId)> {
        self.agenda.open().first().map(|o| (o.id, o.ask.player()))
    }

    #[inline]
    fn open_ask(&self, id: DecisionId) -> Option<&Ask> {
        self.agenda
            .open()
            .iter()
            .find(|o| o.id == id)
            .map(|o| &o.ask)
    }

    fn decision_of(&self, ask: &Ask) -> Decision {
        let o = AskOptions { game: self, ask };
        match *ask {
            Ask::PlaceTile { player, tile } => Decision::PlaceTile {
                player,
                tile: self.cat.get(tile).id.clone(),
                placements: self.placements_for(tile),
            },
            Ask::PlaceFollower { player, tile } => {
                let module_options: Vec<Command> =
                    (1..o.groups()).flat_map(|g| o.list(g)).collect();
                let figure_targets = |wanted: Figure| {
                    module_options
                        .iter()
                        .filter_map(|c| match *c {
                            Command::PlaceMeeple { target, figure } if figure == wanted => {
                                Some(target)
                            }
                            _ => None,
                        })
                        .collect()
                };
                Decision::PlaceFollower {
                    player,
                    pos: self.board.pos(tile),
                    meeple_targets: self
                        .free_segments(player, tile)
                        .map(|s| self.features.target_of(&self.board, s))
                        .collect(),
                    large_meeple_targets: figure_targets(Figure::LargeMeeple),
                    tollhouse_targets: module_options
                        .iter()
                        .filter_map(|c| match *c {
                            Command::PlaceTollhouse { pos } => Some(pos),
                            _ => None,
                        })
                        .collect(),
                    builder_targets: figure_targets(Figure::Builder),
                    pig_targets: figure_targets(Figure::Pig),
                }
            }
            Ask::Module { player, ref ask } => self.modules.decision(player, ask),
        }
    }

    /// The options of an open decision, in the one shape every decision kind has.
    #[inline]
    pub fn options(&self, id: DecisionId) -> Option<AskOptions<'_>> {
        Some(AskOptions {
            game: self,
            ask: self.open_ask(id)?,
        })
    }

    /// The deterministic default answer of an open decision, sent (as a logged command) when a
    /// clock runs out. Phase 1: the first legal placement, by square (x, then y) and then the
    /// least clockwise rotation; phase 2: pass; a module's decision: the module's default.
    pub fn default_command(&self, id: DecisionId) -> Option<(PlayerId, Command)> {
        let ask = self.open_ask(id)?;
        let command = match *ask {
            Ask::PlaceTile { tile, .. } => {
                let (pos, fits) = self
                    .board
                    .fitting(&self.cat.get(tile).fits)
                    .min_by_key(|&(pos, _)| pos)?;
                Command::PlaceTile {
                    pos,
                    rotation: Rotation::from_quarters(fits.trailing_zeros() as u8),
                }
            }
            Ask::PlaceFollower { .. } => Command::Pass {},
            Ask::Module { ref ask, player } => {
                self.modules.default_command(player, self.active, ask)
            }
        };
        Some((ask.player(), command))
    }

    /// The open phase 1 decision, if any: the tile to place.
    #[inline]
    pub(super) fn tile_ask(&self) -> Option<TileIdx> {
        self.agenda.open().iter().find_map(|o| match o.ask {
            Ask::PlaceTile { tile, .. } => Some(tile),
            _ => None,
        })
    }

    /// The open phase 2 decision, if any: who decides, on which tile.
    #[inline]
    fn follower_ask(&self) -> Option<(PlayerId, TileRef)> {
        self.agenda.open().iter().find_map(|o| match o.ask {
            Ask::PlaceFollower { player, tile } => Some((player, tile)),
            _ => None,
        })
    }

    fn placements_for(&self, tile: TileIdx) -> Vec<Placement> {
        let mut out = Vec::new();
        self.refill_placements(tile, &mut out);
        out
    }

    /// [`Game::placements_for`] into `out`, reusing its placements' vectors (a refreshed view's
    /// placement list would otherwise allocate one rotation list per square every turn).
    fn refill_placements(&self, tile: TileIdx, out: &mut Vec<Placement>) {
        let mut n = 0;
        for (pos, m) in self.board.fitting(&self.cat.get(tile).fits) {
            let rotations = Rotation::ALL
                .into_iter()
                .filter(|r| m & (1 << r.quarters()) != 0);
            match out.get_mut(n) {
                Some(p) => {
                    p.pos = pos;
                    p.rotations.clear();
                    p.rotations.extend(rotations);
                }
                None => out.push(Placement {
                    pos,
                    rotations: rotations.collect(),
                }),
            }
            n += 1;
        }
        out.truncate(n);
        // Squares are distinct: the order is the one a fresh list sorted by square has.
        out.sort_unstable_by_key(|p| p.pos);
    }

    /// [`Game::decisions`] into `out`, reusing a placement list already there.
    pub(super) fn refresh_decisions(&self, out: &mut Vec<Decision>) {
        let open = self.agenda.open();
        out.truncate(open.len());
        for (i, o) in open.iter().enumerate() {
            match (&o.ask, out.get_mut(i)) {
                (
                    &Ask::PlaceTile { player, tile },
                    Some(Decision::PlaceTile {
                        player: p,
                        tile: t,
                        placements,
                    }),
                ) => {
                    *p = player;
                    let id = &self.cat.get(tile).id;
                    if t != id {
                        t.clone_from(id);
                    }
                    self.refill_placements(tile, placements);
                }
                (ask, Some(d)) => *d = self.decision_of(ask),
                (ask, None) => out.push(self.decision_of(ask)),
            }
        }
    }

    /// Where the drawn tile may go, by square (sorted), with the rotations that fit (B4).
    pub fn legal_placements(&self) -> Vec<Placement> {
        self.tile_ask()
            .map(|t| self.placements_for(t))
            .unwrap_or_default()
    }

    /// Every legal (square, rotation) for the drawn tile, unsorted, into `out` (fast path for
    /// bots and benchmarks).
    pub fn placements_into(&self, out: &mut Vec<(Pos, Rotation)>) {
        match self.tile_ask() {
            Some(tile) => self.board.placements(&self.cat.get(tile).fits, out),
            None => out.clear(),
        }
    }

    /// How many legal (square, rotation) pairs the drawn tile has; 0 outside phase 1.
    pub fn placement_count(&self) -> usize {
        self.tile_ask()
            .map_or(0, |t| self.board.placement_count(&self.cat.get(t).fits))
    }

    /// The `k`-th legal (square, rotation) pair of the drawn tile, in the order of
    /// [`Game::placements_into`].
    pub fn placement(&self, k: usize) -> Option<(Pos, Rotation)> {
        self.board
            .placement(&self.cat.get(self.tile_ask()?).fits, k)
    }

    /// Where a tile of design `tile` could go on the board now (for any design, drawn or not:
    /// clients' hints, bots, benchmarks). Returns false for an unknown id.
    pub fn placements_of(&self, tile: &str, out: &mut Vec<(Pos, Rotation)>) -> bool {
        match self.cat.find(tile) {
            Some(t) => {
                self.board.placements(&self.cat.get(t).fits, out);
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
        self.follower_segments()
            .map(|s| self.features.target_of(&self.board, s))
            .collect()
    }

    /// How many targets [`Game::meeple_targets`] would list, without naming them (bots).
    pub fn meeple_target_count(&self) -> usize {
        self.follower_segments().count()
    }

    /// The `i`-th of [`Game::meeple_targets`].
    pub fn meeple_target(&self, i: usize) -> Option<Target> {
        self.follower_segments()
            .nth(i)
            .map(|s| self.features.target_of(&self.board, s))
    }

    fn follower_segments(&self) -> impl Iterator<Item = SegRef> + '_ {
        let (player, tile) = self.follower_ask().unwrap_or((0, TileRef::MAX));
        self.free_segments(player, tile)
    }

    /// Segments of tile `t` whose feature holds no meeple, when `player` has a meeple to place
    /// (B5). `t == TileRef::MAX`: none.
    #[inline]
    fn free_segments(&self, player: PlayerId, t: TileRef) -> impl Iterator<Item = SegRef> + '_ {
        self.free_for(player, t, Figure::Meeple)
    }

    /// [`Game::free_segments`] for a figure: the large meeple takes the same features as a
    /// meeple, from its own supply (I4).
    #[inline]
    fn free_for(
        &self,
        player: PlayerId,
        t: TileRef,
        figure: Figure,
    ) -> impl Iterator<Item = SegRef> + '_ {
        let p = &self.players[player as usize];
        let has = match figure {
            Figure::LargeMeeple => p.large > 0,
            _ => p.supply > 0,
        };
        let range = match t != TileRef::MAX && has {
            true => self.features.segs_of(&self.board, t),
            false => 0..0,
        };
        range.filter(|&s| self.features.get(self.features.find(s)).meeples.is_empty())
    }

    /// Option groups of phase 2 for the large meeple: one with Inns & Cathedrals (I4).
    #[inline]
    fn large_groups(&self) -> usize {
        usize::from(self.setup.modules.inns_cathedrals)
    }

    /// Crossroads where the deciding player may put or move their tollhouse now (T2–T5); empty
    /// outside phase 2 or without The Tollkeepers.
    pub fn tollhouse_targets(&self) -> Vec<Pos> {
        (0..self.tollhouse_target_count())
            .filter_map(|i| self.tollhouse_target(i))
            .collect()
    }

    /// The `i`-th of [`Game::tollhouse_targets`], without listing them (bots).
    pub fn tollhouse_target(&self, i: usize) -> Option<Pos> {
        self.follower_ask()?;
        self.modules.tollhouse_target(&self.board, i)
    }

    /// How many crossroads [`Game::tollhouse_targets`] would list, without listing them (bots).
    pub fn tollhouse_target_count(&self) -> usize {
        match self.follower_ask() {
            Some(_) => self.modules.tollhouse_target_count(&self.board),
            None => 0,
        }
    }
}

/// The options of one open decision: groups of commands (phase 2: meeple targets, then each
/// module's group, such as tollhouse squares), and whether `pass` is allowed. Counting and
/// indexing do not list anything.
#[derive(Debug, Clone, Copy)]
pub struct AskOptions<'a> {
    game: &'a Game,
    ask: &'a Ask,
}

impl Options for AskOptions<'_> {
    #[inline]
    fn player(&self) -> PlayerId {
        self.ask.player()
    }

    #[inline]
    fn groups(&self) -> usize {
        match self.ask {
            Ask::PlaceTile { .. } => 1,
            Ask::PlaceFollower { .. } => {
                1 + self.game.large_groups() + self.game.modules.follower_groups()
            }
            Ask::Module { ask, .. } => self.game.modules.options(ask).0,
        }
    }

    #[inline]
    fn len(&self, group: usize) -> usize {
        let g = self.game;
        match *self.ask {
            Ask::PlaceTile { tile, .. } => g.board.placement_count(&g.cat.get(tile).fits),
            Ask::PlaceFollower { player, tile } => match group {
                0 => g.free_segments(player, tile).count(),
                m if m <= g.large_groups() => g.free_for(player, tile, Figure::LargeMeeple).count(),
                m => g.modules.follower_len(
                    m - 1 - g.large_groups(),
                    &g.board,
                    &g.features,
                    player,
                    tile,
                ),
            },
            Ask::Module { ref ask, .. } => g.modules.option_len(ask, group),
        }
    }

    #[inline]
    fn nth(&self, group: usize, i: usize) -> Option<Command> {
        let g = self.game;
        match *self.ask {
            Ask::PlaceTile { tile, .. } => {
                let (pos, rotation) = g.board.placement(&g.cat.get(tile).fits, i)?;
                Some(Command::PlaceTile { pos, rotation })
            }
            Ask::PlaceFollower { player, tile } => {
                let large = g.large_groups();
                let figure = match group {
                    0 => Figure::Meeple,
                    m if m <= large => Figure::LargeMeeple,
                    m => {
                        return g.modules.follower_nth(
                            m - 1 - large,
                            i,
                            &g.board,
                            &g.features,
                            player,
                            tile,
                        );
                    }
                };
                let seg = g.free_for(player, tile, figure).nth(i)?;
                Some(Command::PlaceMeeple {
                    target: g.features.target_of(&g.board, seg),
                    figure,
                })
            }
            Ask::Module { ref ask, .. } => g.modules.option_nth(ask, group, i),
        }
    }

    #[inline]
    fn may_pass(&self) -> bool {
        match self.ask {
            Ask::PlaceTile { .. } => false,
            Ask::PlaceFollower { .. } => true,
            Ask::Module { ask, .. } => self.game.modules.options(ask).1,
        }
    }
}
