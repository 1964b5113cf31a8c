//! Inns & Cathedrals (I1–I18): 18 tiles with inns and cathedrals, and a large meeple per player.
//!
//! The module keeps no state of its own: what it adds is printed on tiles or stands on the board,
//! so it lives where the base game keeps the same things, and a match without the module never
//! meets it (its tiles are not in the pile, no player has a large meeple).
//!
//! - **Tiles (I2, I3, I12).** `data/inns-cathedrals.toml`: inns name the road segments they stand
//!   beside, cathedrals are a city segment's flag; the tile catalogue marks the segments, and a
//!   feature carries `inn` / `cathedral` once any of its segments has one (merged like coats of
//!   arms). Tile C's junction and tile I's village are villages where roads end, so they are
//!   crossroads for The Tollkeepers like any other (I12).
//! - **Rates (I7–I11, I16, I17).** `engine::scoring::value_of`: a road with an inn scores 2 a tile
//!   complete and 0 incomplete; a city with a cathedral 3 a tile and coat (printed squares too)
//!   complete and 0 incomplete. Every reader of a feature's value goes through it: B6/B7 scoring,
//!   The Messages' dispatches 1, 2 and 8 ("as in final scoring"), the standings. Farmers and
//!   dispatch 5 read the coats and completed cities directly, unchanged (I11, I16).
//! - **Large meeple (I4–I6, I14).** A player's supply of large meeples (1 with the module, else
//!   0) sits beside the meeple supply; a placed figure is recorded on its feature
//!   ([`crate::command::Figure`]), and `engine::scoring::majority` adds its strength (2), so every
//!   majority counts it the same: roads, cities, monasteries, fields, dispatch 8 (I5, I16). It
//!   returns like any meeple (I6). Dispatches 6 and 7 count figures, one each (I16).
//! - **Tolls (I15).** Placing the large meeple answers phase 2 like a meeple, so that turn part
//!   places no tollhouse; tolls read pictures and travellers only, never the road's rate.
//!
//! This file holds what is the module's own: its tile set and which figures a player may place.

use crate::command::Figure;
use crate::error::RuleError;
use crate::setup::Modules;

/// The module's tile set (I1).
pub const SET: &str = "inns-cathedrals";

/// The module's name in refusals (`module_off`).
pub const NAME: &str = crate::error::INNS_CATHEDRALS;

/// Large meeples per player (I4); only in a match with the module (I14).
pub const LARGE_MEEPLES: u8 = 1;

/// Large meeples a player starts with in a match with these modules.
pub fn large_meeples(modules: &Modules) -> u8 {
    match modules.inns_cathedrals {
        true => LARGE_MEEPLES,
        false => 0,
    }
}

/// Whether `figure` may be placed in a match with these modules, and from which supply:
/// `Ok(true)` for the large meeple (I4), `Ok(false)` for a meeple. Builders and pigs belong to
/// Traders & Builders.
pub fn check_figure(modules: &Modules, figure: Figure) -> Result<bool, RuleError> {
    match figure {
        Figure::Meeple => Ok(false),
        Figure::LargeMeeple if modules.inns_cathedrals => Ok(true),
        Figure::LargeMeeple => Err(RuleError::ModuleOff(NAME)),
        Figure::Builder | Figure::Pig => Err(RuleError::ModuleOff("traders & builders")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_large_meeple_needs_the_module_and_builder_and_pig_theirs() {
        let off = Modules::default();
        let on = Modules {
            inns_cathedrals: true,
            ..Modules::default()
        };
        assert_eq!(large_meeples(&off), 0);
        assert_eq!(large_meeples(&on), 1);
        assert!(matches!(check_figure(&off, Figure::Meeple), Ok(false)));
        assert!(matches!(check_figure(&on, Figure::LargeMeeple), Ok(true)));
        assert!(matches!(
            check_figure(&off, Figure::LargeMeeple),
            Err(RuleError::ModuleOff("inns & cathedrals"))
        ));
        for f in [Figure::Builder, Figure::Pig] {
            assert!(matches!(
                check_figure(&on, f),
                Err(RuleError::ModuleOff("traders & builders"))
            ));
        }
        assert_eq!(Figure::LargeMeeple.strength(), 2);
        assert_eq!(Figure::Meeple.strength(), 1);
    }
}
