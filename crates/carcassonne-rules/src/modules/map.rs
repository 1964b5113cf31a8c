//! The Map Chips of France (P7–P10): chips lie face down on the map, a tile placed on one takes
//! it and scores it (P8), and a wine (chips of one colour worth exactly 2) may be sold once a
//! turn, abroad for 5 or to a town of its colour for 9 (P9). Leftovers score nothing (P10).
//!
//! The map itself (P1–P6) is the board's business (`engine::board`); this module sets it out at
//! the start of a match ([`MapStart`]: the printed map, its outline and the start squares, P1,
//! P2), and owns the chips: the faces of those still lying (secret, B9), the players' open chips,
//! and the turn's sale mark.

use super::{Ctx, ModuleAsk};
use crate::command::{Command, Sale, WineSale};
use crate::engine::agenda::Source;
use crate::engine::ids::TileRef;
use crate::error::{RuleError, SetupError};
use crate::event::Event;
use crate::geometry::{Pos, Rotation};
use crate::maps::{Chip, Grape, Map, StartChoice};
use crate::setup::{Bounds, ChipAt, PlayerId, Setup, StartSquare, StartTile};
use rand_core::RngCore;
use serde::{Deserialize, Serialize};

/// P9: what a wine sells for.
pub const ABROAD_POINTS: u32 = 5;
pub const TOWN_POINTS: u32 = 9;

impl Sale {
    /// P9: the points a wine sold this way scores (the one table: offers and events use it).
    pub const fn points(self) -> u32 {
        match self {
            Sale::Abroad => ABROAD_POINTS,
            Sale::Town => TOWN_POINTS,
        }
    }
}

/// The map's part of a match's setup (P1, P2): the printed map, and the two start squares in use
/// when the setup places none itself.
#[derive(Debug, Clone, Copy)]
pub struct MapStart {
    pub map: &'static Map,
    /// P2: the start squares in use, drawn from the seed or named by the setup; `None` when the
    /// setup gives its own start squares.
    choice: Option<StartChoice>,
}

impl MapStart {
    /// P1: the setup's map, if it plays on one; P2: unless the setup gives its start squares, the
    /// two in use (drawn with `rng` unless the setup names them). Runs before the pile is
    /// shuffled, so these draws come first.
    pub fn new(setup: &Setup, rng: &mut impl RngCore) -> Result<Option<MapStart>, SetupError> {
        let Some(s) = &setup.modules.map else {
            return Ok(None);
        };
        let map = match &s.data {
            Some(text) => {
                crate::maps::register(&s.map, text).map_err(|e| SetupError::Map(e.to_string()))?
            }
            None => crate::maps::map(&s.map)
                .ok_or_else(|| SetupError::Map(format!("unknown map `{}`", s.map)))?,
        };
        let choice = match setup.starts.is_empty() {
            true => {
                let names = s.starts.as_ref().map(|[a, b]| [a.as_str(), b.as_str()]);
                let c = crate::maps::choose_starts(map, names, rng)
                    .map_err(|e| SetupError::Map(e.to_string()))?;
                Some(c)
            }
            false => None,
        };
        Ok(Some(MapStart { map, choice }))
    }

    /// P1: the map's bounding box, the board's outline.
    pub fn bounds(&self) -> Bounds {
        Bounds {
            min: self.map.bounds().min,
            max: self.map.bounds().max,
        }
    }

    /// P2: the start tile on one of the two start squares in use, a drawn tile on the other;
    /// `None` when the setup gives its own start squares.
    pub fn start_squares(&self) -> Option<Vec<StartSquare>> {
        let [a, b] = self.choice?.squares(self.map);
        Some(vec![
            StartSquare {
                pos: a,
                rotation: Rotation::default(),
                tile: StartTile::Start,
            },
            StartSquare {
                pos: b,
                rotation: Rotation::default(),
                tile: StartTile::Drawn,
            },
        ])
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MapChips {
    /// Chips still face down, sorted by square (the faces are secret, B9; the squares public).
    lying: Vec<(Pos, Chip)>,
    /// Per player: the chips taken and not sold, face up (P8).
    hands: Vec<Vec<Chip>>,
    /// P9: a wine was sold this turn (every turn part of it, M11).
    sold: bool,
    /// The built-in map's id.
    map: String,
}

impl MapChips {
    pub fn new(players: usize, map: &str) -> MapChips {
        MapChips {
            lying: Vec::new(),
            hands: vec![Vec::new(); players],
            sold: false,
            map: map.to_string(),
        }
    }

    fn map(&self) -> Option<&'static Map> {
        crate::maps::map(&self.map)
    }

    /// The sales a wine decision offers.
    pub fn offered(&self, player: PlayerId, pos: Pos) -> Vec<WineSale> {
        self.map()
            .map_or_else(Vec::new, |m| self.sales(m, player, pos))
    }

    /// P7: lays the chips face down at the start of the match, once the start tiles lie (their
    /// drawn tile's turn is drawn first): the setup's `layout` if it gives one, else a layout
    /// drawn with `rng` around the start squares in use.
    pub fn on_start(
        &mut self,
        start: &MapStart,
        layout: Option<&[ChipAt]>,
        rng: &mut impl RngCore,
    ) -> Result<(), SetupError> {
        let m = start.map;
        let laid = match layout {
            Some(layout) => {
                let mut laid = Vec::with_capacity(layout.len());
                for c in layout {
                    if !m.is_placeable(c.pos)
                        || !(1..=2).contains(&c.value)
                        || laid.iter().any(|&(p, _)| p == c.pos)
                    {
                        return Err(SetupError::Map(format!(
                            "chip layout: a chip worth {} on {} is not allowed",
                            c.value, c.pos
                        )));
                    }
                    let chip = Chip {
                        grape: c.grape,
                        value: c.value,
                    };
                    laid.push((c.pos, chip));
                }
                laid
            }
            None => {
                let c = start.choice.ok_or_else(|| {
                    SetupError::Map(
                        "the chips need the map's start squares or a chip layout".into(),
                    )
                })?;
                crate::maps::lay_chips(m, c, rng).map_err(|e| SetupError::Map(e.to_string()))?
            }
        };
        self.lay(laid);
        Ok(())
    }

    /// P7: the chips laid at the start of the match.
    fn lay(&mut self, mut chips: Vec<(Pos, Chip)>) {
        chips.sort_unstable_by_key(|&(p, _)| p);
        self.lying = chips;
    }

    /// The chips still face down, with their faces (secret, B9): for an admin's secrets.
    pub fn face_down(&self) -> &[(Pos, Chip)] {
        &self.lying
    }

    /// Squares where a chip lies face down (public).
    pub fn lying(&self) -> impl Iterator<Item = Pos> + '_ {
        self.lying.iter().map(|&(p, _)| p)
    }

    /// A player's open chips.
    pub fn hand(&self, player: PlayerId) -> &[Chip] {
        self.hands
            .get(player as usize)
            .map_or(&[], |h| h.as_slice())
    }

    /// P8: the tile just placed on a chip's square wins it; its value is scored at once.
    pub fn on_tile_placed(&mut self, ctx: &mut Ctx<'_>, t: TileRef) {
        let pos = ctx.board.pos(t);
        let Ok(i) = self.lying.binary_search_by_key(&pos, |&(p, _)| p) else {
            return;
        };
        let (_, chip) = self.lying.remove(i);
        let player = ctx.active;
        self.hands[player as usize].push(chip);
        ctx.events.push(Event::ChipTaken {
            player,
            pos,
            chip,
            points: u32::from(chip.value),
        });
        ctx.award(player, u32::from(chip.value), Source::Chip(t));
    }

    /// P9 (DECISION: after the features of step 3 scored): ask the active player whether to sell
    /// a wine, if the tile just placed allows a sale they can make and none was made this turn.
    pub fn after_scoring(&mut self, ctx: &mut Ctx<'_>, t: TileRef) {
        if self.sold || self.hand(ctx.active).is_empty() {
            return;
        }
        let Some(map) = self.map() else { return };
        let pos = ctx.board.pos(t);
        if self.can_sell(map, ctx.active, pos) {
            let player = ctx.active;
            ctx.ask(
                player,
                ModuleAsk::SellWine {
                    player,
                    tile: t,
                    pos,
                },
            );
        }
    }

    /// Whether [`MapChips::sales`] would offer anything, without listing (asked after every tile).
    fn can_sell(&self, map: &Map, player: PlayerId, pos: Pos) -> bool {
        let hand = self.hand(player);
        let wine_of = |g: Grape| {
            hand.iter().any(|c| c.grape == g && c.value == 2)
                || hand.iter().filter(|c| c.grape == g && c.value == 1).count() >= 2
        };
        (map.sale_abroad_sides(pos).next().is_some() && Grape::ALL.into_iter().any(wine_of))
            || map.town_at(pos).and_then(|t| t.grape).is_some_and(wine_of)
    }

    /// The turn is over: the next one may sell again.
    pub fn on_turn_end(&mut self) {
        self.sold = false;
    }

    /// P9: the wines `player` holds, each as its chips: per colour a 2-chip, then a pair of
    /// 1-chips.
    fn wines(&self, player: PlayerId) -> Vec<(Grape, Vec<Chip>)> {
        let hand = self.hand(player);
        let mut out = Vec::new();
        for grape in Grape::ALL {
            let count = |v| {
                hand.iter()
                    .filter(|c| c.grape == grape && c.value == v)
                    .count()
            };
            if count(2) >= 1 {
                out.push((grape, vec![Chip { grape, value: 2 }]));
            }
            if count(1) >= 2 {
                out.push((grape, vec![Chip { grape, value: 1 }; 2]));
            }
        }
        out
    }

    /// Every sale `player` may make with the tile on `pos`: abroad (any colour) if the tile
    /// joins a printed road or a city with a coat of arms on the border, then to the town on
    /// `pos` (its colour only). Start squares are not towns.
    pub fn sales(&self, map: &Map, player: PlayerId, pos: Pos) -> Vec<WineSale> {
        let mut out = Vec::new();
        let wines = self.wines(player);
        if wines.is_empty() {
            return out;
        }
        if map.sale_abroad_sides(pos).next().is_some() {
            out.extend(wines.iter().map(|(_, chips)| WineSale {
                sale: Sale::Abroad,
                chips: chips.clone(),
                points: Sale::Abroad.points(),
            }));
        }
        if let Some(g) = map.town_at(pos).and_then(|t| t.grape) {
            out.extend(
                wines
                    .iter()
                    .filter(|(grape, _)| *grape == g)
                    .map(|(_, chips)| WineSale {
                        sale: Sale::Town,
                        chips: chips.clone(),
                        points: Sale::Town.points(),
                    }),
            );
        }
        out
    }

    /// Answers the sale decision: `pass` sells nothing; `sell_wine` must name a wine (one colour,
    /// exactly 2: never a 1 with a 2) that the tile allows. Checks everything first.
    pub fn answer(
        &mut self,
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        t: TileRef,
        command: &Command,
    ) -> Result<(), RuleError> {
        let (sale, chips) = match command {
            Command::Pass {} => {
                ctx.events.push(Event::Passed { player });
                return Ok(());
            }
            Command::SellWine { sale, chips } => (*sale, chips),
            _ => {
                return Err(RuleError::WrongPhase {
                    expected: "the wine sale: sell_wine or pass",
                });
            }
        };
        if !is_wine(chips) {
            return Err(RuleError::NotAWine);
        }
        let map = self.map().ok_or(RuleError::ModuleOff("map"))?;
        let pos = ctx.board.pos(t);
        let offered = self
            .sales(map, player, pos)
            .into_iter()
            .find(|s| s.sale == sale && s.chips == *chips)
            .ok_or(RuleError::SaleNotAllowed)?;
        let hand = &mut self.hands[player as usize];
        for c in chips {
            if let Some(i) = hand.iter().position(|h| h == c) {
                hand.remove(i);
            }
        }
        self.sold = true;
        let points = offered.points;
        let town = match sale {
            Sale::Town => map.town_at(pos).map(|t| t.name.clone()),
            Sale::Abroad => None,
        };
        ctx.events.push(Event::WineSold {
            player,
            pos,
            sale,
            town,
            chips: chips.clone(),
            points,
        });
        ctx.award(player, points, Source::Wine(t));
        Ok(())
    }
}

/// P9: a wine is chips of one colour adding up to exactly 2: one 2-chip or two 1-chips.
pub fn is_wine(chips: &[Chip]) -> bool {
    match chips {
        [a] => a.value == 2,
        [a, b] => a.grape == b.grape && a.value == 1 && b.value == 1,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::command::{Command, Sale};
    use crate::decision::Decision;
    use crate::error::RuleError;
    use crate::event::Event;
    use crate::game::Game;
    use crate::geometry::{Pos, Rotation};
    use crate::maps::{Chip, Grape};
    use crate::modules::witness::Witness;
    use crate::setup::{ChipAt, Colour, Setup, StartSquare, StartTile};

    fn place(x: i32, y: i32, deg: u8) -> Command {
        Command::PlaceTile {
            pos: Pos::new(x, y),
            rotation: Rotation::from_quarters(deg / 90),
        }
    }

    /// P9 with M11: the extra tile of a turn is the same turn, so after a sale in the first turn
    /// part, a tile that would allow a second sale opens no sale decision; `sell_wine` is refused.
    #[test]
    fn one_sale_per_turn_also_across_an_extra_turn_part_p9_m11() {
        let mut setup = Setup::new(Colour::ALL[..2].to_vec(), 1)
            .map("france")
            .chips(true)
            .draw_order(vec!["base/K".into(), "base/K".into(), "base/U".into()])
            .starts(vec![StartSquare {
                pos: Pos::new(11, 13),
                rotation: Rotation::default(),
                tile: StartTile::Start,
            }]);
        if let Some(m) = &mut setup.modules.map {
            m.chip_layout = Some(vec![
                ChipAt {
                    pos: Pos::new(12, 13),
                    grape: Grape::Purple,
                    value: 2,
                },
                ChipAt {
                    pos: Pos::new(11, 14),
                    grape: Grape::Orange,
                    value: 2,
                },
            ]);
        }
        let (game, _) = Game::start(setup).expect("valid setup");
        let mut witness = Witness::default();
        witness.extra = true;
        witness.quiet = true;
        let mut game = game.with_witness(witness);
        // First turn part: on the border city with a coat of arms, the purple 2 is taken and sold.
        game.apply(0, place(12, 13, 0)).expect("fits");
        game.apply(0, Command::Pass {}).expect("no meeple");
        let purple = Chip {
            grape: Grape::Purple,
            value: 2,
        };
        assert!(matches!(
            &game.decisions()[..],
            [Decision::SellWine { player: 0, sales, .. }]
                if sales.len() == 1 && sales[0].points == 5
        ));
        let events = game
            .apply(
                0,
                Command::SellWine {
                    sale: Sale::Abroad,
                    chips: vec![purple],
                },
            )
            .expect("sold");
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::WineSold { points: 5, .. }))
        );
        // The extra tile (M11) lies on the printed road to Belgium and takes the orange 2: a
        // sale would be allowed by this tile, but the turn has had its sale.
        game.apply(0, place(11, 14, 180)).expect("fits");
        let orange = Chip {
            grape: Grape::Orange,
            value: 2,
        };
        let events = game.apply(0, Command::Pass {}).expect("no meeple");
        assert!(
            !game
                .decisions()
                .iter()
                .any(|d| matches!(d, Decision::SellWine { .. }))
        );
        assert!(events.contains(&Event::TurnStarted { player: 1, turn: 2 }));
        assert_eq!(
            game.apply(
                0,
                Command::SellWine {
                    sale: Sale::Abroad,
                    chips: vec![orange],
                }
            ),
            Err(RuleError::NoSale)
        );
        assert_eq!(game.scores(), vec![2 + 5 + 2, 0]);
        let view = game.view();
        let map = view.map.as_deref().expect("a map view");
        assert_eq!(map.hands[0], vec![orange]);
        assert!(map.chips.is_empty());
    }
}
