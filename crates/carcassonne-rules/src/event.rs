//! What happened: the events a command produces. They are public (B9) and are what the server
//! stores and broadcasts.

use crate::command::{Figure, Pawn, PawnPreference, Target};
use crate::geometry::{Pos, Rotation};
use crate::setup::PlayerId;
use crate::tiles::{FeatureKind, Goods};
use serde::{Deserialize, Serialize};

/// How many meeples one player has on a feature, as majority counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MeepleCount {
    pub player: PlayerId,
    /// The player's strength on the feature: 1 a meeple, 2 a large meeple (I5).
    pub count: u32,
    /// Inns & Cathedrals: how many of them are large meeples (each counted 2 in `count`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub large: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One event. Events of one command come in the order they happened (B11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The match began: the start tile lies face up on `pos` (B1) and `pile` tiles are face down.
    GameStarted {
        players: Vec<crate::setup::Colour>,
        start_tile: String,
        pos: Pos,
        rotation: Rotation,
        pile: u32,
    },
    /// A further start square got its tile when the match began (P2: a tile from the pile).
    StartTilePlaced {
        tile: String,
        pos: Pos,
        rotation: Rotation,
    },
    /// A player's turn begins.
    TurnStarted { player: PlayerId, turn: u32 },
    /// The top tile of the pile is shown to everyone (B9).
    TileDrawn { player: PlayerId, tile: String },
    /// The drawn tile fits nowhere: it leaves the game and the player draws again (B4).
    TileDiscarded { player: PlayerId, tile: String },
    TilePlaced {
        player: PlayerId,
        tile: String,
        pos: Pos,
        rotation: Rotation,
    },
    /// A figure went from the supply onto the tile just placed (a meeple, B5; R8, R12).
    MeeplePlaced {
        player: PlayerId,
        pos: Pos,
        target: Target,
        /// Which figure (absent: a meeple): the large meeple (I4), the builder (R8) or the pig
        /// (R12).
        #[serde(default, skip_serializing_if = "Figure::is_meeple")]
        figure: Figure,
    },
    /// The player placed nothing in phase 2.
    Passed { player: PlayerId },
    /// A road, city or monastery was scored (B6, or B7 when `complete` is false).
    FeatureScored {
        feature: FeatureKind,
        /// The feature's tile with the smallest (x, y): where to point at it.
        pos: Pos,
        /// Distinct tiles (a tile counts once even if the feature crosses it twice).
        tiles: u32,
        /// Coats of arms (cities).
        coats: u32,
        complete: bool,
        meeples: Vec<MeepleCount>,
        /// Points each winner scores.
        points: u32,
        /// The players with the most meeples (all tied players score, B6).
        winners: Vec<PlayerId>,
        /// Inns & Cathedrals: an inn set the road's rate: 2 a tile complete (I7), 0 incomplete
        /// at the end (I8).
        #[serde(default, skip_serializing_if = "is_false")]
        inn: bool,
        /// Inns & Cathedrals: a cathedral set the city's rate: 3 a tile and coat complete (I9), 0
        /// incomplete at the end (I10).
        #[serde(default, skip_serializing_if = "is_false")]
        cathedral: bool,
    },
    /// A field scored at the end (B7).
    FieldScored {
        pos: Pos,
        /// Completed cities touching the field.
        cities: u32,
        meeples: Vec<MeepleCount>,
        points: u32,
        winners: Vec<PlayerId>,
        /// R13: the winners whose own pig stands in the field; each scores 4 a city instead.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pigs: Vec<PlayerId>,
    },
    /// A figure went back to its supply: a meeple after its feature scored (B6) or taken back
    /// (M15); a builder or pig whose owner has no meeple left in its feature (R11, R12).
    MeepleReturned {
        player: PlayerId,
        pos: Pos,
        target: Target,
        /// Which figure (absent: a meeple): the large meeple (I6), the builder or the pig (R11,
        /// R12).
        #[serde(default, skip_serializing_if = "Figure::is_meeple")]
        figure: Figure,
    },
    /// T2: a tollhouse was put into play, `value` up.
    TollhousePlaced {
        player: PlayerId,
        pos: Pos,
        value: u8,
    },
    /// T2: a tollhouse moved to another crossroads; its value is unchanged.
    TollhouseMoved {
        player: PlayerId,
        from: Pos,
        to: Pos,
        value: u8,
    },
    /// T6–T8, T10: the owner of the tollhouse at `pos` raised a toll on a road.
    TollRaised {
        player: PlayerId,
        /// The crossroads the tollhouse stands on.
        pos: Pos,
        /// The road's tile with the smallest (x, y).
        road: Pos,
        /// The value used (1 or 2); at the end of the game always 1 (T10).
        value: u8,
        farmhouses: u32,
        sheds: u32,
        gardens: u32,
        highwaymen: u32,
        travellers: u32,
        /// True during final scoring (T10).
        // `final` on the wire (a keyword in Rust).
        #[serde(default, rename = "final")]
        at_final_scoring: bool,
        points: u32,
    },
    /// T9: the tollhouse turned over at the end of a turn.
    TollhouseTurned {
        player: PlayerId,
        pos: Pos,
        from: u8,
        to: u8,
    },
    /// The pile is empty and final scoring is done (B7). Scores in seat order.
    GameEnded { scores: Vec<u32> },
    // The Messages
    /// M2: a pawn of `player` moved from space `from` to `to` (the track's spaces counted on past
    /// 50: the space shown is the number modulo 50) for a scoring.
    PawnMoved {
        player: PlayerId,
        pawn: Pawn,
        from: u32,
        to: u32,
        reason: ScoreReason,
    },
    /// M3: `player` set (or cleared, `null`) a standing preference.
    PawnPreferenceSet {
        player: PlayerId,
        preference: Option<PawnPreference>,
    },
    /// M4–M6: `player` drew dispatch `dispatch` (1–8) from the top of the stack.
    DispatchDrawn { player: PlayerId, dispatch: u8 },
    /// M7–M15: the dispatch was resolved by its action (`action`) or its 2 points, scoring
    /// `points` for `player`; `pos` points at the feature it valued (1–3, 8). It then went under
    /// the stack.
    DispatchResolved {
        player: PlayerId,
        dispatch: u8,
        action: bool,
        points: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pos: Option<Pos>,
    },
    /// M16: before final scoring `player`'s messenger joined the scoring pawn on `score`.
    PawnsSummed { player: PlayerId, score: u32 },
    // Carcassonne Maps
    /// P8: a tile placed on a chip's square: the player turns the chip over and scores it.
    ChipTaken {
        player: PlayerId,
        pos: Pos,
        chip: crate::maps::Chip,
        points: u32,
    },
    /// P9: a wine sold, abroad or to `town`, from the tile on `pos`; the chips leave the game.
    WineSold {
        player: PlayerId,
        pos: Pos,
        sale: crate::command::Sale,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        town: Option<String>,
        chips: Vec<crate::maps::Chip>,
        points: u32,
    },
    // Traders & Builders
    /// R5, R6: the active player takes the goods tokens of the city completed at `pos` (its
    /// canonical square), one per goods symbol in it.
    GoodsTaken {
        player: PlayerId,
        pos: Pos,
        goods: GoodsTokens,
    },
    /// R9: the tile placed on `pos` extends the road or city holding `player`'s builder: a builder
    /// turn part is earned, played after this part's dispatches (R17).
    DoubleTurnEarned { player: PlayerId, pos: Pos },
    /// R9, R15: `player` takes the builder's double turn: a turn part of its own begins.
    DoubleTurnStarted { player: PlayerId },
    /// R9: `player` set (or cleared, `null`) a standing answer to the double turn.
    DoubleTurnPreferenceSet {
        player: PlayerId,
        preference: Option<crate::command::DoubleTurnPreference>,
    },
    /// R7, R14: the most tokens of one kind of goods at the end (`tokens`, at least 1): each of
    /// `winners` scores `points`.
    GoodsMajority {
        goods: Goods,
        tokens: u32,
        winners: Vec<PlayerId>,
        points: u32,
    },
}

/// A player's trade goods tokens, or the goods of one city (R5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GoodsTokens {
    pub wine: u32,
    pub grain: u32,
    pub cloth: u32,
}

impl GoodsTokens {
    /// The count of one kind.
    pub fn get(&self, goods: Goods) -> u32 {
        match goods {
            Goods::Wine => self.wine,
            Goods::Grain => self.grain,
            Goods::Cloth => self.cloth,
        }
    }

    /// The count of one kind, to change.
    pub fn get_mut(&mut self, goods: Goods) -> &mut u32 {
        match goods {
            Goods::Wine => &mut self.wine,
            Goods::Grain => &mut self.grain,
            Goods::Cloth => &mut self.cloth,
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == GoodsTokens::default()
    }
}

// The Messages

/// What a pawn moved for (M2, M17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ScoreReason {
    /// A road, city or monastery (B6).
    Feature,
    /// A field (B7).
    Field,
    /// A toll (T6).
    Toll,
    /// A dispatch (M7–M15).
    Dispatch,
    /// A map chip taken (P8, M17).
    Chip,
    /// A wine sold (P9, M17).
    Wine,
    /// A goods majority at the end (R7).
    Goods,
}

impl Event {
    /// Points this event awards, per player: the sum over all events is every player's score.
    pub fn awards(&self) -> Vec<(PlayerId, u32)> {
        match self {
            Event::FeatureScored {
                points, winners, ..
            }
            | Event::GoodsMajority {
                points, winners, ..
            } => winners.iter().map(|&w| (w, *points)).collect(),
            // R13: a winner with their pig in the field scores 4 a city instead of 3.
            Event::FieldScored {
                cities,
                points,
                winners,
                pigs,
                ..
            } => winners
                .iter()
                .map(|&w| {
                    (
                        w,
                        if pigs.contains(&w) {
                            4 * cities
                        } else {
                            *points
                        },
                    )
                })
                .collect(),
            Event::TollRaised { player, points, .. }
            | Event::DispatchResolved { player, points, .. }
            | Event::ChipTaken { player, points, .. }
            | Event::WineSold { player, points, .. } => vec![(*player, *points)],
            _ => Vec::new(),
        }
    }
}
