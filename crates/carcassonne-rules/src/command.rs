//! What players ask for. Clients only send intentions; [`crate::Game::apply`] decides.

use crate::geometry::{Half, Pos, Rotation, Side};
use crate::tiles::FeatureKind;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A command of one player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Command {
    /// Phase 1 (B4): put the drawn tile on `pos`, turned clockwise by `rotation`.
    PlaceTile { pos: Pos, rotation: Rotation },
    /// Phase 2 (B5): put a figure from the supply on a feature of the tile just placed; `figure`
    /// says which (absent: an ordinary meeple; Inns & Cathedrals: the large meeple, I4; Traders &
    /// Builders: the builder, R8, or the pig, R12).
    PlaceMeeple {
        target: Target,
        #[serde(default, skip_serializing_if = "Figure::is_meeple")]
        figure: Figure,
    },
    /// Phase 2 with The Tollkeepers (T2): instead of a meeple, put the tollhouse into play on the
    /// crossroads at `pos`, or move it there.
    PlaceTollhouse { pos: Pos },
    /// Phase 2: place nothing. (A struct variant, so that unknown fields are refused like
    /// everywhere else: serde ignores them on unit variants of tagged enums.)
    Pass {},
    // The Messages
    /// M2: move the points of the scoring you are asked about with this pawn.
    ChoosePawn { pawn: Pawn },
    /// M3: a standing preference (at any time); `null` clears it and you are asked again.
    SetPawnPreference {
        #[serde(default)]
        preference: Option<PawnPreference>,
    },
    /// M7: carry out the drawn dispatch; `meeple` names the meeple (dispatch 8) or a meeple on
    /// the feature (dispatches 1–3) it acts on, absent for the others.
    DispatchAction {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        meeple: Option<MeepleRef>,
    },
    /// M7: take the dispatch's 2 points instead of its action.
    DispatchPoints {},
    /// M6: draw the next dispatch of a chain (`pass` declines).
    DrawDispatch {},
    // Traders & Builders
    /// R9: play the builder's double turn now: draw and place another tile (`pass` declines).
    TakeDoubleTurn {},
    /// R9 (as M3): a standing answer to the double turn (at any time); `null` clears it and you
    /// are asked again.
    SetDoubleTurnPreference {
        #[serde(default)]
        preference: Option<DoubleTurnPreference>,
    },
    // Carcassonne Maps
    /// P9, in the wine sale decision: sell these chips (one colour, worth exactly 2) abroad or to
    /// the town of the tile just placed.
    SellWine {
        sale: Sale,
        chips: Vec<crate::maps::Chip>,
    },
}

/// Which of a player's figures a `place_meeple` puts on the board (R4: one figure a phase 2).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// An ordinary meeple (B3).
    #[default]
    Meeple,
    /// Inns & Cathedrals: the large meeple, counting 2 for majority (I4, I5).
    LargeMeeple,
    /// Traders & Builders: the builder, on a road or city holding an own meeple (R8); never a
    /// meeple for majority.
    Builder,
    /// Traders & Builders: the pig, in a field holding an own farmer (R12); never a meeple for
    /// majority.
    Pig,
}

impl Figure {
    /// The default: left out of the JSON.
    pub fn is_meeple(&self) -> bool {
        *self == Figure::Meeple
    }

    /// What the figure adds to its owner's count where a majority is decided (B6, B7, I5, M15).
    #[inline]
    pub const fn strength(self) -> u32 {
        match self {
            Figure::Meeple => 1,
            Figure::LargeMeeple => 2,
            Figure::Builder | Figure::Pig => 0,
        }
    }
}

/// A standing answer to the builder's double turn (R9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DoubleTurnPreference {
    /// Play every builder part earned, unasked.
    Take,
    /// Decline every builder part earned, unasked.
    Decline,
}

// The Messages

/// One of a player's two pawns on the scoring track (M1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Pawn {
    Scoring,
    Messenger,
}

/// A standing answer to every pawn choice (M3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PawnPreference {
    /// The scoring pawn every time.
    Scoring,
    /// The messenger every time.
    Messenger,
    /// In your own turn whichever pawn comes to rest on a dark space (the scoring pawn if both
    /// or neither do); in other players' turns the scoring pawn.
    DarkInMyTurn,
}

/// A meeple on the board, named as the view names it: its tile's square and its feature there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MeepleRef {
    pub pos: Pos,
    pub target: Target,
}

// Carcassonne Maps
/// P9: where a wine goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Sale {
    /// For 5 points: the tile joins a printed road, or a city with a coat of arms, on the border.
    Abroad,
    /// For 9 points: the tile covers a town of the wine's colour.
    Town,
}

/// One sale the wine decision offers (P9), with the points it would score, so that a client
/// shows them without a table of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WineSale {
    pub sale: Sale,
    pub chips: Vec<crate::maps::Chip>,
    /// What this sale scores (P9: abroad 5, to a town 9); the `wine_sold` event carries the same.
    pub points: u32,
}

/// A feature of the tile just placed, named in board orientation (after rotation) by a side or
/// half-edge it reaches: `road:E` is the road leaving the tile to the east, `city:N` the city on its
/// north side, `field:Sw` the field at the west half of its south side, `monastery` its monastery,
/// `field:inner` a field that reaches no side (Inns & Cathedrals tile H, enclosed by four cities).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Road(Side),
    City(Side),
    Field(Half),
    Monastery,
    /// The tile's field that reaches no side.
    InnerField,
}

impl Target {
    pub fn kind(self) -> FeatureKind {
        match self {
            Target::Road(_) => FeatureKind::Road,
            Target::City(_) => FeatureKind::City,
            Target::Field(_) | Target::InnerField => FeatureKind::Field,
            Target::Monastery => FeatureKind::Monastery,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Road(s) => write!(f, "road:{s}"),
            Target::City(s) => write!(f, "city:{s}"),
            Target::Field(h) => write!(f, "field:{h}"),
            Target::Monastery => f.write_str("monastery"),
            Target::InnerField => f.write_str("field:inner"),
        }
    }
}

impl FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "monastery" => return Ok(Target::Monastery),
            "field:inner" => return Ok(Target::InnerField),
            _ => {}
        }
        let (kind, at) = s.split_once(':').ok_or_else(|| {
            format!("`{s}` is not a target (road:E, city:N, field:Sw or monastery)")
        })?;
        match kind {
            "road" => Ok(Target::Road(at.parse()?)),
            "city" => Ok(Target::City(at.parse()?)),
            "field" => Ok(Target::Field(at.parse()?)),
            _ => Err(format!(
                "`{kind}` is not a feature (road, city, field, monastery)"
            )),
        }
    }
}

impl Serialize for Target {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Target {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Target".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A feature of the tile just placed, in board orientation: road:<side>, city:<side>, field:<half>, field:inner (a field that reaches no side) or monastery.",
            "type": "string",
            "pattern": "^(monastery|(road|city):[NESW]|field:(Nw|Ne|En|Es|Se|Sw|Ws|Wn|inner))$"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_round_trip() {
        for s in ["road:E", "city:N", "field:Sw", "field:inner", "monastery"] {
            let t: Target = s.parse().unwrap_or(Target::Monastery);
            assert_eq!(t.to_string(), s);
        }
        assert!("road:X".parse::<Target>().is_err());
        assert!("tower:N".parse::<Target>().is_err());
    }
}
