//! The public projection of a match (B9): [`Game::view`] builds it, [`Game::refresh_view`] brings
//! an earlier one up to date in place.

use super::Game;
use crate::command::Figure;
use crate::geometry::Pos;
use crate::setup::PlayerId;
use crate::view::{MapView, MeepleView, PlayerView, TileView, View};

impl Game {
    /// The public view (B9).
    pub fn view(&self) -> View {
        let players = self
            .players
            .iter()
            .zip(&self.setup.players)
            .enumerate()
            .map(|(i, (p, colour))| {
                let mut view = PlayerView {
                    colour: *colour,
                    score: p.score,
                    meeples: p.supply,
                    large_meeples: self.large_view(p.large),
                    tollhouse: self.modules.tollhouse_view(i as PlayerId, &self.board),
                    scored: p.scored,
                    builder: None,
                    pig: None,
                    goods: None,
                    double_turn: None,
                };
                self.modules.traders_view(i as PlayerId, &mut view);
                view
            })
            .collect();
        let board = self
            .board
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
            .meeple_views()
            .into_iter()
            .map(|m| (meeple_key(&m), m))
            .collect();
        let pile = self.pile.counts(self.cat);
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
            drawn: self.tile_ask().map(|t| self.cat.get(t).id.clone()),
            decisions: self.decisions(),
            finished: self.over,
            messages: self.modules.messages_view(),
            map: self.map_view(),
        }
    }

    /// Brings `view`, an earlier [`Game::view`] of this game, up to date in place: the same
    /// value as `self.view()`, reusing its allocations. Placed tiles are only ever appended, so
    /// only the new ones are keyed and inserted; the pile is recounted without allocating; the
    /// printed map is kept. A long-lived view (the server's, per move) costs a fraction of a new
    /// one. A view that is not an earlier one of this game (more tiles placed) is rebuilt.
    pub fn refresh_view(&self, view: &mut View) {
        if view.board.len() > self.board.placed.len()
            || view.players.len() != self.players.len()
            || view.modules != self.setup.modules
        {
            *view = self.view();
            return;
        }
        let players = self.players.iter().zip(&self.setup.players).enumerate();
        for (v, (i, (p, colour))) in view.players.iter_mut().zip(players) {
            v.colour = *colour;
            v.score = p.score;
            v.meeples = p.supply;
            v.large_meeples = self.large_view(p.large);
            v.scored = p.scored;
            v.tollhouse = self.modules.tollhouse_view(i as PlayerId, &self.board);
            self.modules.traders_view(i as PlayerId, v);
        }
        for p in &self.board.placed[view.board.len()..] {
            view.board.insert(
                p.pos.key(),
                TileView {
                    tile: self.cat.get(p.tile).id.clone(),
                    rotation: p.rot,
                },
            );
        }
        // A few meeples at most, and most moves move none: rebuilt only when one differs (a
        // meeple's value decides its key, so equal values mean equal entries). Each meeple's
        // target is worked out once, not once per comparison.
        let meeples = self.meeple_views();
        let same = view.meeples.len() == meeples.len()
            && meeples
                .iter()
                .all(|m| view.meeples.values().any(|v| v == m))
            && view.meeples.values().all(|v| meeples.contains(v));
        if !same {
            view.meeples.clear();
            for m in meeples {
                view.meeples.insert(meeple_key(&m), m);
            }
        }
        self.pile.refresh_counts(self.cat, &mut view.pile);
        view.pile_size = self.pile.len() as u32;
        let discarded = self.discarded.iter().map(|&t| &self.cat.get(t).id);
        if !view.discarded.iter().eq(discarded.clone()) {
            view.discarded = discarded.cloned().collect();
        }
        view.turn = self.turn;
        view.active = self.active;
        let drawn = self.tile_ask().map(|t| &self.cat.get(t).id);
        if view.drawn.as_ref() != drawn {
            view.drawn = drawn.cloned();
        }
        self.refresh_decisions(&mut view.decisions);
        view.finished = self.over;
        view.messages = self.modules.messages_view();
        match (&mut view.map, self.board.map()) {
            // The printed map never changes: only the chips are brought up to date.
            (Some(v), Some(_)) => {
                let chips = self.modules.chips.as_ref();
                v.chips.clear();
                if let Some(c) = chips {
                    v.chips.extend(c.lying());
                }
                v.hands.clear();
                if let Some(c) = chips {
                    v.hands
                        .extend((0..self.players.len()).map(|p| c.hand(p as PlayerId).to_vec()));
                }
            }
            _ => view.map = self.map_view(),
        }
    }

    /// The figures on the board: meeples in the order placed, then builders and pigs (R8, R12).
    fn meeple_views(&self) -> Vec<MeepleView> {
        let meeples = self
            .on_board
            .iter()
            .map(|&(player, seg, figure)| MeepleView {
                player,
                pos: self.board.pos(self.features.tile_of(seg)),
                target: self.features.target_of(&self.board, seg),
                figure,
            });
        let others = self
            .modules
            .figures()
            .map(|(player, seg, figure)| MeepleView {
                player,
                pos: self.board.pos(self.features.tile_of(seg)),
                target: self.features.target_of(&self.board, seg),
                figure,
            });
        meeples.chain(others).collect()
    }

    /// Squares of the tiles placed after the first `n`: between a view with `n` tiles on its
    /// board and the view now, the only squares of the board that can differ (placed tiles never
    /// move, turn or leave), so a differ need not walk the rest.
    pub fn placed_since(&self, n: usize) -> impl Iterator<Item = Pos> + '_ {
        self.board
            .placed
            .get(n..)
            .unwrap_or_default()
            .iter()
            .map(|p| p.pos)
    }

    /// Inns & Cathedrals: a player's large meeples in supply, absent without the module (so views
    /// of matches without it stay byte for byte).
    fn large_view(&self, large: u8) -> Option<u8> {
        self.setup.modules.inns_cathedrals.then_some(large)
    }

    /// The map's part of the view (P1–P10).
    fn map_view(&self) -> Option<Box<MapView>> {
        let map = self.board.map()?;
        let chips = self.modules.chips.as_ref();
        Some(Box::new(MapView {
            info: map.shared_info(),
            chips: chips.map_or_else(Vec::new, |c| c.lying().collect()),
            hands: chips.map_or_else(Vec::new, |c| {
                (0..self.players.len())
                    .map(|p| c.hand(p as PlayerId).to_vec())
                    .collect()
            }),
        }))
    }
}

/// A figure's key in the view: `"x,y target"` for a meeple, `"x,y target figure"` for a builder or
/// a pig (it may share a tile's segment with nothing else, but keys stay distinct regardless).
fn meeple_key(m: &MeepleView) -> crate::view::Key {
    let mut key = m.pos.key();
    let _ = std::fmt::Write::write_fmt(&mut key, format_args!(" {}", m.target));
    match m.figure {
        Figure::Builder => key.push_str(" builder"),
        Figure::Pig => key.push_str(" pig"),
        _ => {}
    }
    key
}
