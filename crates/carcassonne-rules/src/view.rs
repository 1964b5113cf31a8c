//! The public view of a match: everything on the table that every player may see, and nothing
//! secret (B9): the pile's order and the seed are not in it. Collections are maps keyed by stable
//! ids so that JSON Patches between two views stay small.

use crate::command::{Figure, Target};
use crate::decision::Decision;
use crate::event::GoodsTokens;
use crate::geometry::{Pos, Rotation};
pub use crate::ids::Key;
use crate::setup::{Colour, Modules, PlayerId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct View {
    pub modules: Modules,
    /// Seats in turn order.
    pub players: Vec<PlayerView>,
    /// Placed tiles keyed by square, `"x,y"`.
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, TileView>"))]
    pub board: BTreeMap<Key, TileView>,
    /// Meeples on the board keyed by `"x,y target"`, for example `"0,1 road:E"`.
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, MeepleView>"))]
    pub meeples: BTreeMap<Key, MeepleView>,
    /// Tiles still in the pile, by tile id (the order is secret).
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, u32>"))]
    pub pile: BTreeMap<Key, u32>,
    pub pile_size: u32,
    /// Tiles that fitted nowhere and left the game (B4).
    #[cfg_attr(feature = "schema", schemars(with = "Vec<String>"))]
    pub discarded: Vec<Key>,
    /// Turn number, from 1.
    pub turn: u32,
    /// Whose turn it is.
    pub active: PlayerId,
    /// The tile drawn this turn and not yet placed.
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub drawn: Option<Key>,
    /// The decisions open now.
    pub decisions: Vec<Decision>,
    pub finished: bool,
    // The Messages
    /// The Messages: both pawns of every player and the stack's size (never its order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<MessagesView>,
    // Carcassonne Maps
    /// The map the match is played on (P1–P6) and its chips (P7–P10); absent on an open table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<Box<MapView>>,
}

// The Messages

/// The Messages' public state (M1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessagesView {
    /// Per seat: both pawns and the standing preference.
    pub players: Vec<PawnsView>,
    /// Dispatches face down in the stack (8, or 7 while one is being resolved).
    pub stack: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PawnsView {
    /// The scoring pawn's space, counted on past 50 (after M16: the whole score).
    pub scoring: u32,
    pub messenger: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preference: Option<crate::command::PawnPreference>,
}

// Carcassonne Maps
/// The public state of a map: the printed map (it never changes, so JSON Patches between views
/// never repeat it), where chips lie face down, and each player's chips face up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MapView {
    // Shared by every view of the matches on this map (`Map::shared_info`): not a doc comment,
    // which would be the schema's description.
    pub info: std::sync::Arc<crate::maps::MapInfo>,
    /// Squares where a chip lies face down: only "a chip lies here", never its face (P7, B9).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chips: Vec<Pos>,
    /// Per seat, the chips taken and not sold, face up (P8); empty without the France chips.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hands: Vec<Vec<crate::maps::Chip>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlayerView {
    pub colour: Colour,
    pub score: u32,
    /// Meeples in the supply.
    pub meeples: u8,
    /// Inns & Cathedrals: large meeples in the supply (0 or 1, I4); absent without the module.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub large_meeples: Option<u8>,
    /// The Tollkeepers: the tollhouse, once in play.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tollhouse: Option<TollhouseView>,
    /// What the score is made of, by kind of scoring; the parts add up to `score`.
    #[serde(default, skip_serializing_if = "Scored::is_empty")]
    pub scored: Scored,
    // Traders & Builders (absent when the module is off)
    /// The builder in the supply: 1, or 0 while it stands on the board (R8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builder: Option<u8>,
    /// The pig in the supply: 1, or 0 while it stands on the board (R12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pig: Option<u8>,
    /// The trade goods tokens taken (public, R5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goods: Option<GoodsTokens>,
    /// The standing answer to the builder's double turn, if set (R9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub double_turn: Option<crate::command::DoubleTurnPreference>,
}

/// A player's points by kind of scoring (each scoring is public, as an event): what the end of a
/// game shows beside the winner. Kinds without points are left out of the JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Scored {
    /// The setup's start score (scenarios and tests).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub start: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub roads: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cities: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub monasteries: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fields: u32,
    /// The Tollkeepers (T6, T10).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tolls: u32,
    /// The Messages (M7–M15).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dispatches: u32,
    /// The France chips (P8).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub chips: u32,
    /// Wine sold (P9).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub wine: u32,
    /// Goods majorities at the end (R7).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub goods: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Scored {
    pub fn is_empty(&self) -> bool {
        *self == Scored::default()
    }

    /// The sum of the parts: the score.
    pub fn total(&self) -> u32 {
        self.start
            + self.roads
            + self.cities
            + self.monasteries
            + self.fields
            + self.tolls
            + self.dispatches
            + self.chips
            + self.wine
            + self.goods
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TollhouseView {
    pub pos: Pos,
    /// 1 (small toll) or 2 (large toll) up.
    pub value: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TileView {
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub tile: Key,
    pub rotation: Rotation,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MeepleView {
    pub player: PlayerId,
    pub pos: Pos,
    pub target: Target,
    /// Which figure stands there (absent: a meeple): the large meeple (I4), a builder or a pig
    /// (R8, R12); a builder or pig is keyed `"x,y target figure"`.
    #[serde(default, skip_serializing_if = "Figure::is_meeple")]
    pub figure: Figure,
}
