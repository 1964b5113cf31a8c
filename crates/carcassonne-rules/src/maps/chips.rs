//! The setup of a map match (P2) and of the Map Chips of France (P7): pure functions of the map,
//! the start squares in use and a random generator the caller owns and seeds (the engine passes
//! its ChaCha8 stream; B10). Draws use our own multiply-shift and Fisher–Yates, like the pile
//! shuffle, so a library update cannot change a stored match.

use super::Grape;
use super::Map;
use crate::geometry::{Pos, Side};
use rand_core::RngCore;
use serde::{Deserialize, Serialize};

/// P7 DECISION: per grape colour, 6 chips worth 1 and 4 worth 2 (value, count).
pub const CHIPS_PER_GRAPE: [(u8, usize); 2] = [(1, 6), (2, 4)];

/// Candidates drawn for each chip; the one farthest from the chips already laid wins. More
/// samples spread the chips more regularly and leave less to chance.
const SAMPLES: usize = 8;

/// Whole layouts tried before giving up; `tests/map_france.rs` shows one always suffices there.
const ATTEMPTS: usize = 16;

/// A map chip (P7): face down until a tile is placed on its square (P8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Chip {
    pub grape: Grape,
    /// 1 or 2 points.
    pub value: u8,
}

/// The 30 chips of the France map in a fixed order (grape, then value): 10 per colour (P7).
pub fn chip_set() -> Vec<Chip> {
    Grape::ALL
        .into_iter()
        .flat_map(|grape| {
            CHIPS_PER_GRAPE
                .into_iter()
                .flat_map(move |(value, n)| std::iter::repeat_n(Chip { grape, value }, n))
        })
        .collect()
}

/// Why a map setup cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapSetupError {
    #[error("map {map} has {have} start squares; P2 uses 2")]
    TooFewStarts { map: String, have: usize },
    #[error("map {map} has no start square named `{name}`")]
    UnknownStart { map: String, name: String },
    #[error("start square `{0}` is named twice; P2 uses two different squares")]
    SameStartTwice(String),
    #[error("map {map}: only {laid} of {wanted} chips found room under the P7 constraints")]
    NoRoom {
        map: String,
        laid: usize,
        wanted: usize,
    },
}

/// P2: the two start squares in use, as indices into [`Map::starts`]. The start tile goes on
/// `start_tile`, a random tile from the pile on `random_tile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StartChoice {
    pub start_tile: usize,
    pub random_tile: usize,
}

impl StartChoice {
    /// The two squares: the start tile's first.
    pub fn squares(self, map: &Map) -> [Pos; 2] {
        [
            map.starts()[self.start_tile].pos,
            map.starts()[self.random_tile].pos,
        ]
    }
}

/// A uniform draw below `n` (`n > 0`) by multiply-shift, as the pile shuffle draws.
fn below<R: RngCore>(rng: &mut R, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// Fisher–Yates with our own draws, exactly as the engine shuffles the pile.
fn shuffle<T, R: RngCore>(v: &mut [T], rng: &mut R) {
    for i in (1..v.len()).rev() {
        let j = below(rng, i + 1);
        v.swap(i, j);
    }
}

/// P2 DECISION: the two start squares in use and which takes the start tile. `requested` names
/// them from the match setup (start tile first) and draws nothing; without it two draws pick the
/// start tile's square among all start squares, then the random tile's among the others.
pub fn choose_starts<R: RngCore>(
    map: &Map,
    requested: Option<[&str; 2]>,
    rng: &mut R,
) -> Result<StartChoice, MapSetupError> {
    let n = map.starts().len();
    if n < 2 {
        return Err(MapSetupError::TooFewStarts {
            map: map.id.clone(),
            have: n,
        });
    }
    match requested {
        Some([a, b]) => {
            let find = |name: &str| {
                map.start_named(name)
                    .ok_or_else(|| MapSetupError::UnknownStart {
                        map: map.id.clone(),
                        name: name.into(),
                    })
            };
            let (start_tile, random_tile) = (find(a)?, find(b)?);
            if start_tile == random_tile {
                return Err(MapSetupError::SameStartTwice(a.into()));
            }
            Ok(StartChoice {
                start_tile,
                random_tile,
            })
        }
        None => {
            let start_tile = below(rng, n);
            let mut random_tile = below(rng, n - 1);
            if random_tile >= start_tile {
                random_tile += 1;
            }
            Ok(StartChoice {
                start_tile,
                random_tile,
            })
        }
    }
}

/// The squares that may hold a chip (P7, P2), by `y` then `x`: placeable, not a town, not any
/// start square (P2: start squares never hold a chip), not next to a start square in use, not
/// across an open edge of a large city. Large-city squares are not placeable.
pub fn chip_squares(map: &Map, starts: StartChoice) -> Vec<Pos> {
    // One mark per square of the bounding box: what may not hold a chip. (A match lays chips
    // once; marking beats a search per square, and keeps a map game's setup cheap.)
    let b = map.bounds();
    let w = b.width();
    let mut banned = vec![false; (w * b.height()) as usize];
    let mut ban = |p: Pos| {
        if b.contains(p) {
            banned[(p.y * w + p.x) as usize] = true;
        }
    };
    map.towns().iter().for_each(|t| ban(t.pos));
    map.starts().iter().for_each(|s| ban(s.pos));
    for u in starts.squares(map) {
        Side::ALL.iter().for_each(|&s| ban(u.step(s)));
    }
    for c in map.cities() {
        c.open.iter().for_each(|&(p, s)| ban(p.step(s)));
    }
    map.placeable()
        .filter(|p| !banned[(p.y * w + p.x) as usize])
        .collect()
}

/// P7: lays the 30 chips face down, one per square, spread evenly over the map, none next to
/// another. Returns `(square, chip)` sorted by square. Which chip lies where is secret (B9).
///
/// DECISION (how "spread evenly" is done): chip squares are picked one at a time; for each, 8
/// candidates are drawn among the squares still free, and the one farthest (Euclidean) from the
/// chips already laid wins. A laid chip takes its square and its 4 neighbours out of the free set.
/// If the free set runs out, the whole layout is drawn again (at most 16 times). Then the chips
/// are shuffled face down and dealt onto the squares in square order.
pub fn lay_chips<R: RngCore>(
    map: &Map,
    starts: StartChoice,
    rng: &mut R,
) -> Result<Vec<(Pos, Chip)>, MapSetupError> {
    let mut chips = chip_set();
    let eligible = chip_squares(map, starts);
    let mut best_laid = 0;
    let mut free = Vec::with_capacity(eligible.len());
    let mut laid: Vec<Pos> = Vec::with_capacity(chips.len());
    for _ in 0..ATTEMPTS {
        free.clear();
        free.extend_from_slice(&eligible);
        laid.clear();
        while laid.len() < chips.len() && !free.is_empty() {
            let mut pick = below(rng, free.len());
            let mut pick_d = min_dist2(free[pick], &laid);
            for _ in 1..SAMPLES {
                let i = below(rng, free.len());
                let d = min_dist2(free[i], &laid);
                if d > pick_d {
                    (pick, pick_d) = (i, d);
                }
            }
            let p = free[pick];
            laid.push(p);
            free.retain(|&q| (q.x - p.x).abs() + (q.y - p.y).abs() > 1);
        }
        if laid.len() == chips.len() {
            laid.sort();
            shuffle(&mut chips, rng);
            return Ok(laid.iter().copied().zip(chips).collect());
        }
        best_laid = best_laid.max(laid.len());
    }
    Err(MapSetupError::NoRoom {
        map: map.id.clone(),
        laid: best_laid,
        wanted: chips.len(),
    })
}

/// Squared distance from `p` to the nearest of `laid` (`i32::MAX` when none is laid yet).
fn min_dist2(p: Pos, laid: &[Pos]) -> i32 {
    laid.iter()
        .map(|q| (q.x - p.x).pow(2) + (q.y - p.y).pow(2))
        .min()
        .unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chip_set_is_ten_per_grape_six_ones_four_twos() {
        let set = chip_set();
        assert_eq!(set.len(), 30);
        for g in Grape::ALL {
            let of = |v| set.iter().filter(|c| c.grape == g && c.value == v).count();
            assert_eq!((of(1), of(2)), (6, 4), "{g:?}");
        }
    }

    #[test]
    fn below_stays_below() {
        use rand_core::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for n in 1..50 {
            assert!(below(&mut rng, n) < n);
        }
    }
}
