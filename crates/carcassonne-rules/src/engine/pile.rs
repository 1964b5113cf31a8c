//! The face-down pile (B4, B9): the order is secret, the copies left of each design are public.

use super::board::{Board, MAX_PILE};
use crate::error::SetupError;
use crate::event::Event;
use crate::ids::Key;
use crate::setup::PlayerId;
use crate::tiles::{Catalogue, TileIdx};
use rand_core::RngCore;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The tiles still to draw; the next tile is the last element (secret, B9). Serialized as the
/// plain list of design indices.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Pile(Vec<TileIdx>);

impl Pile {
    /// The pile of a match: the setup's draw order (first drawn first) if it gives one, else
    /// every copy of the designs of the sets in the match (`in_match`) shuffled with `rng`. The
    /// start tile's copy on the table is left out unless it is in the pile (`start_in_pile`).
    pub fn new(
        cat: &Catalogue,
        draw_order: Option<&[String]>,
        in_match: impl Fn(&str) -> bool,
        start_in_pile: bool,
        rng: &mut impl RngCore,
    ) -> Result<Pile, SetupError> {
        let mut pile: Vec<TileIdx> = match draw_order {
            Some(order) => {
                let mut pile = Vec::with_capacity(order.len());
                for id in order {
                    match cat.find(id) {
                        Some(i) if in_match(&cat.get(i).set) => pile.push(i),
                        _ => return Err(SetupError::UnknownTile(id.clone())),
                    }
                }
                pile.reverse();
                pile
            }
            None => {
                let mut pile = Vec::new();
                for (i, t) in cat.tiles.iter().enumerate() {
                    if in_match(&t.set) {
                        let on_table = i as TileIdx == cat.start && !start_in_pile;
                        let copies = t.count - u32::from(on_table);
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
        Ok(Pile(pile))
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Gives back the places of the tiles drawn.
    pub fn shrink_to_fit(&mut self) {
        self.0.shrink_to_fit();
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Takes the next tile.
    #[inline]
    pub fn pop(&mut self) -> Option<TileIdx> {
        self.0.pop()
    }

    /// The tiles in the order they will be drawn (secret, B9).
    pub fn next_first(&self) -> impl Iterator<Item = TileIdx> + '_ {
        self.0.iter().rev().copied()
    }

    /// Draws for `player` until a tile fits the board (B4): the tiles that fit nowhere go to
    /// `discarded`. `None` when the pile ran out first.
    pub fn draw_fitting(
        &mut self,
        cat: &Catalogue,
        board: &Board,
        player: PlayerId,
        discarded: &mut Vec<TileIdx>,
        events: &mut Vec<Event>,
    ) -> Option<TileIdx> {
        while let Some(tile) = self.0.pop() {
            let design = cat.get(tile);
            events.push(Event::TileDrawn {
                player,
                tile: design.id.to_string(),
            });
            if board.fits_anywhere(&design.fits) {
                return Some(tile);
            }
            discarded.push(tile);
            events.push(Event::TileDiscarded {
                player,
                tile: design.id.to_string(),
            });
        }
        None
    }

    /// The copies left per design, by tile id (the view's pile).
    pub fn counts(&self, cat: &Catalogue) -> BTreeMap<Key, u32> {
        let mut pile = BTreeMap::new();
        for &t in &self.0 {
            *pile.entry(cat.get(t).id.clone()).or_insert(0) += 1;
        }
        pile
    }

    /// Brings a view's pile (tile id → copies left) up to date: the copies counted per design,
    /// then the map walked once in key order beside the designs in id order, so that no tile
    /// costs a search by its id and no key is allocated unless a design is missing from the map.
    pub fn refresh_counts(&self, cat: &Catalogue, pile: &mut BTreeMap<Key, u32>) {
        let mut counts = vec![0u32; cat.tiles.len()];
        for &t in &self.0 {
            counts[t as usize] += 1;
        }
        let left = cat
            .in_id_order()
            .iter()
            .filter(|&&t| counts[t as usize] > 0);
        // One walk of the map beside the designs: counts set in place, and the keys of designs
        // with no copy left noted, then removed one by one (a draw often takes a design's only
        // copy: a `retain` would rebuild its way through the whole map for that one key).
        let mut next = left.clone().peekable();
        let mut missing = false;
        let mut stale: Vec<Key> = Vec::new();
        for (id, n) in pile.iter_mut() {
            loop {
                let Some(&&t) = next.peek() else {
                    stale.push(id.clone());
                    break;
                };
                match id.as_str().cmp(cat.get(t).id.as_str()) {
                    std::cmp::Ordering::Equal => {
                        *n = counts[t as usize];
                        next.next();
                        break;
                    }
                    // No copy of this design is left.
                    std::cmp::Ordering::Less => {
                        stale.push(id.clone());
                        break;
                    }
                    // A design with copies left is not in the map.
                    std::cmp::Ordering::Greater => {
                        missing = true;
                        next.next();
                    }
                }
            }
        }
        for id in &stale {
            pile.remove(id.as_str());
        }
        if missing || next.peek().is_some() {
            for &t in left {
                let id = &cat.get(t).id;
                match pile.get_mut(id.as_str()) {
                    Some(n) => *n = counts[t as usize],
                    None => {
                        pile.insert(id.clone(), counts[t as usize]);
                    }
                }
            }
        }
    }
}
