//! The lobby API's bodies: creating and joining a lobby, its seats, and its state as listed and
//! pushed.

use crate::ClockSettings;
use rules::{Colour, Modules};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The modules a lobby offers (the France chips need the France map).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LobbyModules {
    #[serde(default)]
    pub tollkeepers: bool,
    #[serde(default)]
    pub messages: bool,
    /// Play on the France map (Carcassonne Maps).
    #[serde(default)]
    pub france: bool,
    /// The France chips (P7–P10); needs `france`.
    #[serde(default)]
    pub chips: bool,
    /// Inns & Cathedrals (I1–I18): its 18 tiles and a large meeple per player.
    #[serde(default)]
    pub inns_cathedrals: bool,
    /// Traders & Builders (R1–R20): its 24 tiles, a builder and a pig per player, goods.
    #[serde(default)]
    pub traders_builders: bool,
}

impl LobbyModules {
    /// The rules' modules for a match started from this lobby.
    pub fn to_rules(self) -> Modules {
        Modules {
            tollkeepers: self.tollkeepers,
            messages: self.messages,
            map: self.france.then(|| {
                Box::new(rules::MapSetup {
                    map: "france".into(),
                    starts: None,
                    chips: self.chips,
                    chip_layout: None,
                    data: None,
                })
            }),
            inns_cathedrals: self.inns_cathedrals,
            traders_builders: self.traders_builders,
        }
    }
}

fn yes() -> bool {
    true
}

/// `POST /api/lobbies`: the caller becomes the host and takes seat 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateLobby {
    /// 1 to 48 characters, no control characters.
    pub name: String,
    /// 2 to 6.
    pub seats: u8,
    #[serde(default)]
    pub modules: LobbyModules,
    /// Meeples per player (1 to 12; default 7, 9 on a map).
    #[serde(default)]
    pub meeples: Option<u8>,
    #[serde(default)]
    pub clock: Option<ClockSettings>,
    /// Listed and open to all (default), or private: joined and watched with the invite code.
    #[serde(default = "yes")]
    pub public: bool,
    /// The match's result changes its players' ratings (default: not rated). A rated lobby is
    /// public, and seats registered accounts only: no guest, no bot.
    #[serde(default)]
    pub rated: bool,
}

/// `POST /api/lobbies/{id}/join`: a seat (default: the first free) and a colour (default: the
/// first free).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinLobby {
    #[serde(default)]
    pub seat: Option<u8>,
    #[serde(default)]
    pub colour: Option<Colour>,
    #[serde(default)]
    pub invite_code: Option<String>,
}

/// `POST /api/lobbies/{id}/colour`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PickColour {
    pub colour: Colour,
}

/// `POST /api/lobbies/{id}/ready`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetReady {
    pub ready: bool,
}

/// `POST /api/lobbies/{id}/kick` (host only): a seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SeatChoice {
    pub seat: u8,
}

/// `POST /api/lobbies/{id}/bot` (host only): a seat, and how strong its bot plays (`easy`
/// unless given).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BotChoice {
    pub seat: u8,
    #[serde(default = "BotLevel::offered")]
    pub level: BotLevel,
}

/// How strong a seat the server plays plays.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BotLevel {
    /// Uniformly random legal moves (the level of a bot seated before there were levels).
    #[default]
    Random,
    /// The best immediate score difference, keeping meeples in hand.
    Easy,
    /// A search over sampled games, about 200 ms a decision.
    Medium,
    /// The same search, about 1 s a decision.
    Hard,
}

impl BotLevel {
    pub const ALL: [BotLevel; 4] = [
        BotLevel::Random,
        BotLevel::Easy,
        BotLevel::Medium,
        BotLevel::Hard,
    ];

    /// The level a bot gets when the host names none.
    pub fn offered() -> BotLevel {
        BotLevel::Easy
    }

    /// The level's name on the wire (`easy`).
    pub fn as_str(self) -> &'static str {
        match self {
            BotLevel::Random => "random",
            BotLevel::Easy => "easy",
            BotLevel::Medium => "medium",
            BotLevel::Hard => "hard",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LobbyStatus {
    Open,
    /// The match was created (`match_id`).
    Started,
}

/// Who sits on a lobby seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Occupant {
    Player {
        account_id: Uuid,
        name: String,
    },
    /// Played by the server, at `level`.
    Bot {
        #[serde(default)]
        level: BotLevel,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LobbySeat {
    pub seat: u8,
    #[serde(default)]
    pub occupant: Option<Occupant>,
    #[serde(default)]
    pub colour: Option<Colour>,
    /// Bots are always ready.
    pub ready: bool,
}

/// A lobby, whole: what `GET /api/lobbies/{id}` answers and `lobby` pushes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LobbyState {
    pub id: Uuid,
    pub name: String,
    /// The host's account (`None` only while a lobby closes).
    pub host: Option<Uuid>,
    pub public: bool,
    /// Private lobbies: the code to join and watch (shown to members only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invite_code: Option<String>,
    pub modules: LobbyModules,
    pub meeples: Option<u8>,
    pub clock: Option<ClockSettings>,
    /// Its match is rated (see [`CreateLobby::rated`]).
    #[serde(default)]
    pub rated: bool,
    pub seats: Vec<LobbySeat>,
    pub status: LobbyStatus,
    #[serde(default)]
    pub match_id: Option<Uuid>,
    /// Bumped on every change.
    pub version: u64,
}

/// A running match from a public lobby, to watch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WatchableMatch {
    pub match_id: Uuid,
    pub lobby_id: Uuid,
    pub name: String,
    pub modules: LobbyModules,
    /// Player names in seat order (`bot` for bots).
    pub players: Vec<String>,
}

/// `GET /api/lobbies`: open public lobbies and running public matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LobbyList {
    pub lobbies: Vec<LobbyState>,
    pub matches: Vec<WatchableMatch>,
}

/// `POST /api/lobbies/{id}/start`: the match was created; every member also gets it pushed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LobbyStarted {
    pub match_id: Uuid,
}
