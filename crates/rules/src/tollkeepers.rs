//! The Tollkeepers (T1–T10): tollhouses on crossroads raise tolls on completed roads.
//!
//! The module is switched on by `Setup::modules.tollkeepers`; with it off every hook here is a
//! no-op and tollhouse commands are refused. The tile facts it needs (which villages are
//! crossroads, which pictures stand beside which road segment) come from the tile data and are
//! merged into road features by the engine.

use crate::error::RuleError;
use crate::event::Event;
use crate::game::{Game, SegRef};
use crate::geometry::Pos;
use crate::setup::PlayerId;
use crate::tiles::PictureKind;

/// A tollhouse shows 1 (small toll) or 2 (large toll); it enters play with 1 up (T2).
const FIRST_VALUE: u8 = 1;

fn on(game: &Game) -> bool {
    game.setup().modules.tollkeepers
}

/// Crossroads where the active player may put or move their tollhouse now (T3–T5): every
/// crossroads on the board with no tollhouse on it (their own current one excluded: staying is not
/// a move), in the order they were placed. Empty with the module off.
fn free_crossroads(game: &Game) -> impl Iterator<Item = Pos> + '_ {
    let crossroads: &[_] = if on(game) { &game.crossroads } else { &[] };
    crossroads
        .iter()
        .filter(|&&t| {
            !game
                .players
                .iter()
                .any(|p| matches!(p.tollhouse, Some((h, _)) if h == t))
        })
        .map(|&t| game.placed[t as usize].pos)
}

/// [`free_crossroads`], listed.
pub(crate) fn targets(game: &Game) -> Vec<Pos> {
    free_crossroads(game).collect()
}

/// The `i`-th of [`targets`], without listing them (bots).
pub(crate) fn target(game: &Game, i: usize) -> Option<Pos> {
    free_crossroads(game).nth(i)
}

/// The length of [`targets`]: every crossroads but those holding a tollhouse (each tollhouse
/// stands on a distinct crossroads).
pub(crate) fn target_count(game: &Game) -> usize {
    if !on(game) {
        return 0;
    }
    let placed = game
        .players
        .iter()
        .filter(|p| p.tollhouse.is_some())
        .count();
    game.crossroads.len() - placed
}

/// T2: put the tollhouse into play on `pos`, or move it there. Checks everything before changing
/// anything.
pub(crate) fn place(
    game: &mut Game,
    player: PlayerId,
    pos: Pos,
    events: &mut Vec<Event>,
) -> Result<(), RuleError> {
    if !on(game) {
        return Err(RuleError::ModuleOff("tollkeepers"));
    }
    let t = game
        .tile_at(pos)
        .filter(|&t| game.is_crossroads(t))
        .ok_or(RuleError::NotACrossroads(pos))?;
    let own = game.players[player as usize].tollhouse;
    if matches!(own, Some((h, _)) if h == t) {
        return Err(RuleError::TollhouseAlreadyThere(pos));
    }
    if game
        .players
        .iter()
        .any(|p| matches!(p.tollhouse, Some((h, _)) if h == t))
    {
        return Err(RuleError::CrossroadsTaken(pos));
    }
    match own {
        None => {
            game.players[player as usize].tollhouse = Some((t, FIRST_VALUE));
            events.push(Event::TollhousePlaced {
                player,
                pos,
                value: FIRST_VALUE,
            });
        }
        Some((from, value)) => {
            game.players[player as usize].tollhouse = Some((t, value));
            events.push(Event::TollhouseMoved {
                player,
                from: game.placed[from as usize].pos,
                to: pos,
                value,
            });
        }
    }
    Ok(())
}

/// Picture counts along a road, as tolls see them (T6, T7): water towers never count.
struct Along {
    farmhouses: u32,
    sheds: u32,
    gardens: u32,
    highwaymen: u32,
    travellers: u32,
}

impl Along {
    fn of(game: &Game, root: SegRef) -> Along {
        let p = &game.features[root as usize].pictures;
        let n = |k: PictureKind| u32::from(p[k as usize]);
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

fn raise(game: &mut Game, root: SegRef, last: bool, events: &mut Vec<Event>) {
    if !on(game) || game.features[root as usize].crossroads.is_empty() {
        return;
    }
    let road = game.min_pos(root);
    // Each owner of a tollhouse at one of the road's crossroads ends collects once (T8), in seat
    // order.
    for player in 0..game.players.len() {
        let Some((t, value)) = game.players[player].tollhouse else {
            continue;
        };
        if !game.features[root as usize].crossroads.contains(&t) {
            continue;
        }
        let along = Along::of(game, root);
        let pos = game.placed[t as usize].pos;
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
        let state = &mut game.players[player];
        state.score += points;
        // T9: a toll from travellers turns the tollhouse at the end of this turn.
        if !last && along.travellers > 0 {
            state.turn_over = true;
        }
        events.push(Event::TollRaised {
            player: player as PlayerId,
            pos,
            road,
            value,
            farmhouses: along.farmhouses,
            sheds: along.sheds,
            gardens: along.gardens,
            highwaymen: along.highwaymen,
            travellers: along.travellers,
            r#final: last,
            points,
        });
    }
}

/// T6–T8: a road was completed (in anyone's turn).
pub(crate) fn road_completed(game: &mut Game, root: SegRef, events: &mut Vec<Event>) {
    raise(game, root, false, events);
}

/// T10: an incomplete road at final scoring.
pub(crate) fn road_final(game: &mut Game, root: SegRef, events: &mut Vec<Event>) {
    raise(game, root, true, events);
}

/// T9: tollhouses that collected from travellers this turn turn over, in seat order.
pub(crate) fn end_of_turn(game: &mut Game, events: &mut Vec<Event>) {
    for i in 0..game.players.len() {
        // Only set when the module is on (by `raise`).
        if !std::mem::take(&mut game.players[i].turn_over) {
            continue;
        }
        if let Some((t, from)) = game.players[i].tollhouse {
            let to = if from == 1 { 2 } else { 1 };
            game.players[i].tollhouse = Some((t, to));
            events.push(Event::TollhouseTurned {
                player: i as PlayerId,
                pos: game.placed[t as usize].pos,
                from,
                to,
            });
        }
    }
}
