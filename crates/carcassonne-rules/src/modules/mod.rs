//! The expansions, each a module with its own state, reached by the engine only through a fixed
//! list of hooks (a closed list, not a plugin system: static dispatch over `Option<State>`).
//!
//! A module gets `&mut` its own state and a [`Ctx`]: queries on the board and the features, the
//! pure scoring functions, the event list, and the agenda to push steps and asks on. It never gets
//! `&mut Game`, and nothing in `crate::engine` names a module.
//!
//! # Hooks, in the order the game calls them in a turn
//!
//! | hook | when | used by |
//! | --- | --- | --- |
//! | [`Modules::board_setup`] | the match's setup, before the pile is shuffled: the printed map, its outline and the start squares it sets out | P1, P2 |
//! | [`Modules::on_start`] | the match's setup, after the start tiles are placed, before the first turn | P7 (lay the chips) |
//! | [`Modules::tile_put`] | a tile's segments exist, before they join their neighbours | T3, T7 (per-feature data) |
//! | [`Modules::merged`] | two features merged (big, small) | T8 (merge per-feature data) |
//! | [`Modules::on_tile_placed`] | after `tile_placed`, before phase 2 | P8 (take a chip), R9 (a builder part earned) |
//! | `follower_*` | the options phase 2 offers besides a meeple | T2 (tollhouse), R8 (builder), R12 (pig) |
//! | [`Modules::on_feature_scored`] | after a feature scored and before its meeples return; also at the end (`last`) | T6–T8, T10, R5 (goods) |
//! | [`Modules::on_meeples_left`] | meeples left a feature (it scored, or dispatch 8 took one back) | R11, R12 (builder, pig home) |
//! | [`Modules::on_award`] | every award, before points are added; may take it over | M2, M3 |
//! | [`Modules::after_scoring`] | phase 3 of a turn part, after its features scored and their awards (pawn choices, M17) were made | P9 (wine sale ask) |
//! | [`Modules::on_turn_part_end`] | the end of each turn part (the turn's tile, each extra tile) | M5, M6, M11, R9, R17 |
//! | [`Modules::on_turn_end`] | the end of the turn, before the next player's | T9 |
//! | [`Modules::on_final`] | before final scoring | M16 |
//! | [`Modules::final_wants`] | which unscored features final scoring looks at besides those with meeples | T10 |
//! | [`Modules::pig_in`] | final scoring of a field (and dispatch 8 on a farmer) | R13, R17 |
//! | [`Modules::final_goods`] | the end of final scoring, after every other item | R7, R14 |
//! | [`Modules::run`], [`Modules::answer`], [`Modules::options`], [`Modules::default_command`] | a module's own steps and decisions | M3, M7, P9 |
//! | [`Modules::on_command`] | a command that answers no open decision (standing preferences) | M3 |
//!
//! # Order in which modules answer (a B11 for modules)
//!
//! Inns & Cathedrals answers no hook: its inns, cathedrals and large meeple are data the engine
//! reads (see [`inns_cathedrals`]). At every hook the other modules are called in one fixed order:
//! The Tollkeepers, then The Messages, then the map (France chips), then Traders & Builders. The
//! steps pushed during one hook (by all modules) run in the order they were pushed, before the
//! steps already on the agenda: The Tollkeepers' first. So at the end of a turn part The Messages'
//! dispatch runs before the builder part that the same part earned (R17). Asks pushed in one hook
//! open together. Award hooks see awards in the order they are made.

pub mod inns_cathedrals;
pub mod messages;
pub mod tollkeepers;
// Traders & Builders
pub mod traders_builders;
// Carcassonne Maps
pub mod map;
#[cfg(test)]
pub(crate) mod witness;

use crate::command::{Command, Figure};
use crate::decision::Decision;
use crate::engine::agenda::{self, Award, Source};
use crate::engine::board::Board;
use crate::engine::features::Features;
use crate::engine::ids::{SegRef, TileRef};
use crate::error::{RuleError, SetupError};
use crate::event::Event;
use crate::setup::{PlayerId, Setup};
use crate::view::TollhouseView;
use messages::Messages;
use rand_core::RngCore;
use serde::{Deserialize, Serialize};
use tollkeepers::Tollkeepers;
use traders_builders::TradersBuilders;

/// The notification hooks, for [`Modules::listens`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    TilePlaced,
    FeatureScored,
    Award,
    AfterScoring,
    TurnPartEnd,
    TurnEnd,
    Final,
    Command,
    MeeplesLeft,
}

/// A module's own step on the agenda.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ModuleStep {
    // The Messages
    /// M3: ask every pending pawn choice at once.
    AskPawns,
    /// M4: the active player draws the top dispatch.
    DrawDispatch,
    /// M6: did the dispatch's points bring a pawn to a dark space?
    ChainCheck,
    // Traders & Builders
    /// R9: the builder part earned by the tile on `pos` may begin.
    DoubleTurn { pos: crate::geometry::Pos },
}

/// A module's own decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ModuleAsk {
    /// Test only: a player must acknowledge with `pass` (a decision of a non-active player).
    #[cfg(test)]
    Witness,
    // The Messages
    /// M2: which pawn moves `points` earned for `reason`.
    Pawn {
        points: u32,
        reason: crate::event::ScoreReason,
    },
    /// M7: resolve the drawn dispatch.
    Dispatch,
    /// M6: draw the next dispatch of a chain, or not.
    Chain,
    // Traders & Builders
    /// R9: play the builder part earned by the tile on `pos`, or not.
    DoubleTurn { pos: crate::geometry::Pos },
    // Carcassonne Maps
    /// P9: the active player may sell a wine with tile `tile` on `pos`.
    SellWine {
        player: PlayerId,
        tile: TileRef,
        pos: crate::geometry::Pos,
    },
}

pub type Step = agenda::Step<ModuleStep, ModuleAsk>;
pub type Ask = agenda::Ask<ModuleAsk>;
pub type Agenda = agenda::Agenda<ModuleStep, ModuleAsk>;

/// What a module may see and do from a hook.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub board: &'a Board,
    pub features: &'a Features,
    pub agenda: &'a mut Agenda,
    pub events: &'a mut Vec<Event>,
    /// Whose turn it is.
    pub active: PlayerId,
    /// How many players there are (only the test module reads it).
    #[cfg_attr(not(test), allow(dead_code))]
    pub players: usize,
    /// Tiles left in the pile (M7: dispatch 4 needs one).
    pub pile: usize,
}

impl Ctx<'_> {
    /// Points for `player` through the one award path: they run as the next step.
    #[inline]
    pub fn award(&mut self, player: PlayerId, points: u32, source: Source) {
        self.agenda.push(Step::Award(Award {
            player,
            points,
            source,
        }));
    }

    /// Asks `player` a module decision (asks pushed in one hook open together).
    pub fn ask(&mut self, player: PlayerId, ask: ModuleAsk) {
        self.agenda.push(Step::Ask(Ask::Module { player, ask }));
    }
}

/// The modules of a match: `None` when switched off. Each state is boxed, so that a match
/// without a module holds a word for it, not its size (≈ 440 bytes for the four).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Modules {
    pub toll: Option<Box<Tollkeepers>>,
    // The Messages
    pub messages: Option<Box<Messages>>,
    // Carcassonne Maps
    /// The Map Chips of France (P7–P10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chips: Option<Box<map::MapChips>>,
    // Traders & Builders
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traders: Option<Box<TradersBuilders>>,
    /// Test only: asks the other players to acknowledge every placement, keeps a ledger of
    /// awards, plays extra turn parts.
    #[cfg(test)]
    #[serde(skip)]
    pub witness: Option<witness::Witness>,
}

impl Modules {
    pub fn new(setup: &Setup) -> Modules {
        Modules {
            toll: setup
                .modules
                .tollkeepers
                .then(|| Box::new(Tollkeepers::new(setup.players.len()))),
            messages: setup
                .modules
                .messages
                .then(|| Box::new(Messages::new(setup))),
            chips: setup
                .modules
                .map
                .as_ref()
                .filter(|m| m.chips)
                .map(|m| Box::new(map::MapChips::new(setup.players.len(), &m.map))),
            traders: setup
                .modules
                .traders_builders
                .then(|| Box::new(TradersBuilders::new(setup.players.len()))),
            #[cfg(test)]
            witness: None,
        }
    }

    /// Setup hook, before the pile is shuffled (its draws come first): the printed map the match
    /// plays on, if any, with the start squares it sets out (P1, P2).
    pub fn board_setup(
        setup: &Setup,
        rng: &mut impl RngCore,
    ) -> Result<Option<map::MapStart>, SetupError> {
        map::MapStart::new(setup, rng)
    }

    /// Setup hook, once the start tiles lie (their drawn tile's turn drawn first): P7, the chips
    /// laid face down.
    pub fn on_start(
        &mut self,
        setup: &Setup,
        map: Option<&map::MapStart>,
        rng: &mut impl RngCore,
    ) -> Result<(), SetupError> {
        if let (Some(m), Some(chips)) = (map, &mut self.chips) {
            let layout = setup
                .modules
                .map
                .as_ref()
                .and_then(|s| s.chip_layout.as_deref());
            chips.on_start(m, layout, rng)?;
        }
        Ok(())
    }

    /// Whether a module that is on answers `hook`: the game skips the others, so a hook costs
    /// nothing in a match without a module that uses it.
    #[inline]
    pub fn listens(&self, hook: Hook) -> bool {
        #[cfg(test)]
        if self.witness.is_some()
            && matches!(
                hook,
                Hook::TilePlaced | Hook::Award | Hook::TurnPartEnd | Hook::TurnEnd
            )
        {
            return true;
        }
        let messages = self.messages.is_some();
        let chips = self.chips.is_some();
        let traders = self.traders.is_some();
        match hook {
            Hook::FeatureScored => self.toll.is_some() || traders,
            Hook::TurnEnd => self.toll.is_some() || messages || chips || traders,
            Hook::TurnPartEnd => messages || traders,
            Hook::Award | Hook::Final => messages,
            Hook::Command => messages || chips || traders,
            Hook::TilePlaced => chips || traders,
            Hook::AfterScoring => chips,
            Hook::MeeplesLeft => traders,
        }
    }

    /// Whether a tile set is in the match: `base` always, a module's set when it is on.
    #[inline]
    pub fn uses_set(setup: &Setup, set: &str) -> bool {
        set == "base"
            || (set == tollkeepers::SET && setup.modules.tollkeepers)
            || (set == inns_cathedrals::SET && setup.modules.inns_cathedrals)
            || (set == traders_builders::SET && setup.modules.traders_builders)
    }

    #[inline]
    pub fn tile_put(&mut self, board: &Board, features: &Features, t: TileRef) {
        if let Some(m) = &mut self.toll {
            m.tile_put(board, features, t);
        }
    }

    #[inline]
    pub fn merged(&mut self, big: SegRef, small: SegRef) {
        if let Some(m) = &mut self.toll {
            m.merged(big, small);
        }
    }

    #[inline]
    pub fn on_tile_placed(&mut self, _ctx: &mut Ctx<'_>, _t: TileRef) {
        if let Some(m) = &mut self.chips {
            m.on_tile_placed(_ctx, _t);
        }
        if let Some(m) = &mut self.traders {
            m.on_tile_placed(_ctx, _t);
        }
        #[cfg(test)]
        if let Some(m) = &mut self.witness {
            m.on_tile_placed(_ctx);
        }
    }

    /// How many option groups phase 2 offers besides meeples (each module's, in module order):
    /// the tollhouse (T2), then the builder (R8) and the pig (R12).
    #[inline]
    pub fn follower_groups(&self) -> usize {
        usize::from(self.toll.is_some()) + 2 * usize::from(self.traders.is_some())
    }

    /// What module group `g` of phase 2 holds: `None` the tollhouse, else a figure.
    #[inline]
    fn follower_group(&self, g: usize) -> Option<Figure> {
        let g = g + usize::from(self.toll.is_none());
        match g {
            0 => None,
            1 => Some(Figure::Builder),
            _ => Some(Figure::Pig),
        }
    }

    /// The length of module group `g` of phase 2 for `player` on tile `t`.
    #[inline]
    pub fn follower_len(
        &self,
        g: usize,
        board: &Board,
        features: &Features,
        player: PlayerId,
        t: TileRef,
    ) -> usize {
        match (self.follower_group(g), &self.toll, &self.traders) {
            (None, Some(m), _) => m.target_count(board),
            (Some(figure), _, Some(m)) => m.targets(board, features, player, t, figure).count(),
            _ => 0,
        }
    }

    /// The `i`-th command of module group `g` of phase 2.
    #[inline]
    pub fn follower_nth(
        &self,
        g: usize,
        i: usize,
        board: &Board,
        features: &Features,
        player: PlayerId,
        t: TileRef,
    ) -> Option<Command> {
        match self.follower_group(g) {
            None => {
                let pos = self.toll.as_ref()?.target(board, i)?;
                Some(Command::PlaceTollhouse { pos })
            }
            Some(figure) => {
                let m = self.traders.as_ref()?;
                let seg = m.targets(board, features, player, t, figure).nth(i)?;
                Some(Command::PlaceMeeple {
                    target: features.target_of(board, seg),
                    figure,
                })
            }
        }
    }

    /// The Tollkeepers' crossroads a tollhouse may go to now (T2–T5).
    pub fn tollhouse_target_count(&self, board: &Board) -> usize {
        self.toll.as_ref().map_or(0, |m| m.target_count(board))
    }

    /// The `i`-th of [`Modules::tollhouse_target_count`].
    pub fn tollhouse_target(&self, board: &Board, i: usize) -> Option<crate::geometry::Pos> {
        self.toll.as_ref()?.target(board, i)
    }

    /// A phase 2 command that is not a meeple or a pass, on tile `t`: the module it belongs to
    /// carries it out.
    pub fn answer_follower(
        &mut self,
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        t: TileRef,
        command: &Command,
    ) -> Result<(), RuleError> {
        match (command, &mut self.toll) {
            (Command::PlaceTollhouse { pos }, Some(m)) => m.place(ctx, player, *pos),
            (Command::PlaceTollhouse { .. }, None) => Err(RuleError::ModuleOff("tollkeepers")),
            (
                &Command::PlaceMeeple {
                    figure: Figure::LargeMeeple,
                    ..
                },
                _,
            ) => Err(RuleError::ModuleOff("inns & cathedrals")),
            (&Command::PlaceMeeple { target, figure }, _) => match &mut self.traders {
                Some(m) => m.place(ctx, player, t, target, figure),
                None => Err(RuleError::ModuleOff("traders & builders")),
            },
            (Command::SetPawnPreference { .. }, _) if self.messages.is_none() => {
                Err(RuleError::ModuleOff("messages"))
            }
            _ => Err(RuleError::WrongPhase {
                expected: "phase 2: place_meeple, place_tollhouse or pass",
            }),
        }
    }

    /// The Tollkeepers' view of a player: their tollhouse.
    pub fn tollhouse_view(&self, player: PlayerId, board: &Board) -> Option<TollhouseView> {
        self.toll.as_ref()?.view(player, board)
    }

    #[inline]
    pub fn on_feature_scored(&mut self, ctx: &mut Ctx<'_>, root: SegRef, last: bool) {
        if let Some(m) = &mut self.toll {
            m.raise(ctx, root, last);
        }
        if let Some(m) = &mut self.traders {
            m.on_feature_scored(ctx, root, last);
        }
    }

    /// Meeples left feature `root` (scored, or one taken back): R11, R12.
    #[inline]
    pub fn on_meeples_left(&mut self, ctx: &mut Ctx<'_>, root: SegRef) {
        if let Some(m) = &mut self.traders {
            m.on_meeples_left(ctx, root);
        }
    }

    /// R13: whether `player`'s pig stands in field `root`.
    #[inline]
    pub fn pig_in(&self, features: &Features, player: PlayerId, root: SegRef) -> bool {
        self.traders
            .as_ref()
            .is_some_and(|m| m.pig_in(features, player, root))
    }

    /// R7, R14: the goods majorities, after every other item of final scoring.
    #[inline]
    pub fn final_goods(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(m) = &mut self.traders {
            m.final_goods(ctx);
        }
    }

    /// Traders & Builders: builders and pigs on the board (owner, segment, figure).
    pub fn figures(&self) -> impl Iterator<Item = (PlayerId, SegRef, Figure)> + '_ {
        self.traders.iter().flat_map(|m| m.on_board())
    }

    /// Traders & Builders' part of a player's view: builder and pig in the supply, goods, the
    /// standing answer to the double turn.
    pub fn traders_view(&self, player: PlayerId, view: &mut crate::view::PlayerView) {
        let m = self.traders.as_ref();
        let supply = |figure| m.map(|m| u8::from(m.in_supply(player, figure)));
        view.builder = supply(Figure::Builder);
        view.pig = supply(Figure::Pig);
        view.goods = m.map(|m| m.goods(player));
        view.double_turn = m.and_then(|m| m.preference(player));
    }

    /// Every award passes here first; `true`: a module took it over (and will credit it, or ask
    /// first). The Messages moves a pawn or asks which (M2) and lets the score be credited: the
    /// score stays the sum of both pawns.
    #[inline]
    pub fn on_award(&mut self, ctx: &mut Ctx<'_>, award: &Award) -> bool {
        if let Some(m) = &mut self.messages {
            m.on_award(ctx, award);
        }
        #[cfg(test)]
        if let Some(m) = &mut self.witness {
            m.on_award(award);
        }
        false
    }

    #[inline]
    pub fn after_scoring(&mut self, ctx: &mut Ctx<'_>, t: TileRef) {
        if let Some(m) = &mut self.chips {
            m.after_scoring(ctx, t);
        }
    }

    #[inline]
    pub fn on_turn_part_end(&mut self, _ctx: &mut Ctx<'_>) {
        if let Some(m) = &mut self.messages {
            m.on_turn_part_end(_ctx);
        }
        if let Some(m) = &mut self.traders {
            m.on_turn_part_end(_ctx);
        }
        #[cfg(test)]
        if let Some(m) = &mut self.witness {
            m.on_turn_part_end(_ctx);
        }
    }

    #[inline]
    pub fn on_turn_end(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(m) = &mut self.toll {
            m.turn_over(ctx);
        }
        if let Some(m) = &mut self.messages {
            m.on_turn_end();
        }
        if let Some(m) = &mut self.chips {
            m.on_turn_end();
        }
        if let Some(m) = &mut self.traders {
            m.on_turn_end();
        }
        #[cfg(test)]
        if let Some(m) = &mut self.witness {
            m.on_turn_end(ctx);
        }
    }

    #[inline]
    pub fn on_final(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(m) = &mut self.messages {
            m.on_final(ctx);
        }
    }

    /// T10: roads ending at a crossroads are looked at in final scoring even without meeples.
    #[inline]
    pub fn final_wants(&self, root: SegRef) -> bool {
        self.toll
            .as_ref()
            .is_some_and(|m| m.ends_at_crossroads(root))
    }

    /// Runs a module's own step.
    pub fn run(&mut self, ctx: &mut Ctx<'_>, step: ModuleStep) {
        match (&step, &mut self.messages, &mut self.traders) {
            (ModuleStep::DoubleTurn { .. }, _, Some(m)) => m.run(ctx, &step),
            (ModuleStep::DoubleTurn { .. }, _, None) => {}
            (_, Some(m), _) => m.run(ctx, step),
            (_, None, _) => {}
        }
    }

    /// Whether the module decision `ask` takes a command of this kind at all.
    #[inline]
    pub fn accepts(ask: &ModuleAsk, command: &Command) -> bool {
        match ask {
            ModuleAsk::SellWine { .. } => {
                matches!(command, Command::SellWine { .. } | Command::Pass {})
            }
            ModuleAsk::DoubleTurn { .. } => {
                matches!(command, Command::TakeDoubleTurn {} | Command::Pass {})
            }
            _ => Messages::accepts(ask, command),
        }
    }

    /// Answers a module's decision with `command`; on an error nothing changed.
    pub fn answer(
        &mut self,
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        ask: &ModuleAsk,
        command: &Command,
    ) -> Result<(), RuleError> {
        match (ask, &mut self.messages) {
            #[cfg(test)]
            (ModuleAsk::Witness, _) => witness::Witness::answer(ctx, player, command),
            (&ModuleAsk::SellWine { tile, .. }, _) => match &mut self.chips {
                Some(m) => m.answer(ctx, player, tile, command),
                None => Err(RuleError::ModuleOff("map chips")),
            },
            (ModuleAsk::DoubleTurn { .. }, _) => match &mut self.traders {
                Some(m) => m.answer(ctx, player, command),
                None => Err(RuleError::ModuleOff("traders & builders")),
            },
            (_, Some(m)) => {
                // R17: dispatch 8 on a farmer scores the field with the owner's pig.
                let pig = self.traders.as_ref().and_then(|t| t.pig_of(player));
                m.answer(ctx, player, ask, command, pig)
            }
            (_, None) => Err(RuleError::ModuleOff("messages")),
        }
    }

    /// The options of a module's decision: (groups, may pass).
    pub fn options(&self, ask: &ModuleAsk) -> (usize, bool) {
        match *ask {
            ModuleAsk::SellWine { .. } | ModuleAsk::DoubleTurn { .. } => (1, true),
            _ => Messages::options(ask),
        }
    }

    pub fn option_len(&self, ask: &ModuleAsk, g: usize) -> usize {
        match *ask {
            ModuleAsk::SellWine { player, pos, .. } => self
                .chips
                .as_ref()
                .map_or(0, |m| m.offered(player, pos).len()),
            ModuleAsk::DoubleTurn { .. } => 1,
            _ => self.messages.as_ref().map_or(0, |m| m.option_len(ask, g)),
        }
    }

    pub fn option_nth(&self, ask: &ModuleAsk, g: usize, i: usize) -> Option<Command> {
        match *ask {
            ModuleAsk::SellWine { player, pos, .. } => {
                let sale = self
                    .chips
                    .as_ref()?
                    .offered(player, pos)
                    .into_iter()
                    .nth(i)?;
                Some(Command::SellWine {
                    sale: sale.sale,
                    chips: sale.chips,
                })
            }
            ModuleAsk::DoubleTurn { .. } => (i == 0).then_some(Command::TakeDoubleTurn {}),
            _ => self.messages.as_ref()?.option_nth(ask, g, i),
        }
    }

    /// The deterministic default answer of a module's decision (a clock ran out).
    pub fn default_command(&self, player: PlayerId, active: PlayerId, ask: &ModuleAsk) -> Command {
        match (&self.messages, ask) {
            // P9: no sale.
            (_, ModuleAsk::SellWine { .. }) => Command::Pass {},
            // R9 (DECISION): the double turn is taken unless the player declines.
            (_, ModuleAsk::DoubleTurn { .. }) => match &self.traders {
                Some(m) => m.default_command(player),
                None => Command::TakeDoubleTurn {},
            },
            (Some(m), _) => m.default_command(player, active, ask),
            (None, _) => Command::Pass {},
        }
    }

    /// A module's decision as clients see it.
    pub fn decision(&self, player: PlayerId, ask: &ModuleAsk) -> Decision {
        match (&self.messages, ask) {
            (_, &ModuleAsk::SellWine { player, pos, .. }) => Decision::SellWine {
                player,
                pos,
                sales: self
                    .chips
                    .as_ref()
                    .map_or_else(Vec::new, |m| m.offered(player, pos)),
            },
            (_, &ModuleAsk::DoubleTurn { pos }) => Decision::DoubleTurn { player, pos },
            (Some(m), _) => m.decision(player, ask),
            #[cfg(test)]
            (None, ModuleAsk::Witness) => Decision::Witness { player },
            (None, _) => Decision::ChainDispatch { player },
        }
    }

    /// The Messages' public state.
    pub fn messages_view(&self) -> Option<crate::view::MessagesView> {
        self.messages.as_deref().map(Messages::view)
    }

    /// A command that answers no open decision (a standing preference, M3): `None` when no
    /// module takes it. P9: a `sell_wine` with no sale open is refused as such.
    pub fn on_command(
        &mut self,
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        command: &Command,
    ) -> Option<Result<(), RuleError>> {
        match command {
            Command::SellWine { .. } if self.chips.is_some() => Some(Err(RuleError::NoSale)),
            Command::SetDoubleTurnPreference { preference } => Some(match &mut self.traders {
                Some(m) => m.set_preference(ctx, player, *preference),
                None => Err(RuleError::ModuleOff("traders & builders")),
            }),
            _ => self.messages.as_mut()?.on_command(ctx, player, command),
        }
    }
}
