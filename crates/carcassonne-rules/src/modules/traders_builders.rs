//! Traders & Builders (R1–R20): trade goods, the builder and its double turn, the pig.
//!
//! - **Figures (R4, R8, R12).** A builder or a pig is the phase-2 figure of a turn part: the
//!   module checks the placement (own meeple in the feature, figure in the supply) and keeps where
//!   each stands, by segment. Neither is a meeple: they never enter a feature's meeples, so no
//!   majority, no dispatch (R17) and no meeple count sees them.
//! - **Return (R11, R12, R17).** Whenever meeples leave a feature (scored, or one taken back by
//!   dispatch 8), a builder or pig on it whose owner has no meeple left there goes home too.
//! - **Goods (R5, R6).** Right after a completed city's scoring, the active player takes a token
//!   per goods symbol of the city's placed tiles (printed large cities show none, R18), whoever
//!   holds the city, even nobody.
//! - **Double turn (R9, R10, R15, R17).** When a tile that is not itself a builder part's
//!   extends the road or city of the active player's builder (placed in an earlier turn), the
//!   part has earned a builder part. At the end of that part, after The Messages' check (the
//!   module answers after it, so its dispatches and their dispatch-4 parts run first, R17), a
//!   [`ModuleStep::DoubleTurn`] asks the player whether to play it (default: yes; a standing
//!   answer, as M3's, applies unasked); it is a turn part of its own (`Draw { extra: true }`,
//!   `EndTurnPart`). An empty pile: no part (R10).
//! - **End (R7, R13, R14).** The pig's 4 a city is counted by the game's field scoring through
//!   [`TradersBuilders::pig_in`]; the goods majorities are the last items of final scoring.

use super::{Ctx, ModuleAsk, ModuleStep, Step};
use crate::command::{Command, DoubleTurnPreference, Figure, Target};
use crate::engine::agenda::Source;
use crate::engine::board::Board;
use crate::engine::features::Features;
use crate::engine::ids::{SegRef, TileRef};
use crate::error::RuleError;
use crate::event::{Event, GoodsTokens};
use crate::geometry::Pos;
use crate::setup::PlayerId;
use crate::tiles::{FeatureKind, Goods};
use serde::{Deserialize, Serialize};

/// The tile set of the expansion (R1).
pub const SET: &str = "traders-builders";

/// R7: what the most tokens of one kind score.
const MAJORITY_POINTS: u32 = 10;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TradersBuilders {
    /// Per seat: the goods tokens taken (R5).
    goods: Vec<GoodsTokens>,
    /// Per seat: the segment the builder stands on, `None` in the supply.
    builder: Vec<Option<SegRef>>,
    /// Per seat: the segment the pig stands on, `None` in the supply.
    pig: Vec<Option<SegRef>>,
    /// The active player's builder was put out in this turn: it earns nothing in it (R9).
    fresh: bool,
    /// The turn part being played is a builder part: its tile earns none (R9, no chain).
    in_builder_part: bool,
    /// The tile of the turn part being played earned a builder part: its square.
    earned: Option<Pos>,
    /// Per seat: the standing answer to the double turn (R9, as M3).
    #[serde(default)]
    prefs: Vec<Option<DoubleTurnPreference>>,
}

impl TradersBuilders {
    pub fn new(players: usize) -> TradersBuilders {
        TradersBuilders {
            goods: vec![GoodsTokens::default(); players],
            builder: vec![None; players],
            pig: vec![None; players],
            fresh: false,
            in_builder_part: false,
            earned: None,
            prefs: vec![None; players],
        }
    }

    /// A player's standing answer to the double turn, if set.
    pub fn preference(&self, player: PlayerId) -> Option<DoubleTurnPreference> {
        self.prefs.get(player as usize).copied().flatten()
    }

    /// R9 (as M3): a standing answer, set at any time; setting the one already set is refused.
    pub(super) fn set_preference(
        &mut self,
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        preference: Option<DoubleTurnPreference>,
    ) -> Result<(), RuleError> {
        if self.preference(player) == preference {
            return Err(RuleError::PreferenceUnchanged);
        }
        self.prefs.resize(self.goods.len(), None);
        self.prefs[player as usize] = preference;
        ctx.events
            .push(Event::DoubleTurnPreferenceSet { player, preference });
        Ok(())
    }

    /// The default answer to the double turn (a clock ran out): the preference, else take it.
    pub(super) fn default_command(&self, player: PlayerId) -> Command {
        match self.preference(player) {
            Some(DoubleTurnPreference::Decline) => Command::Pass {},
            _ => Command::TakeDoubleTurn {},
        }
    }

    /// A player's goods tokens (public, R5).
    pub fn goods(&self, player: PlayerId) -> GoodsTokens {
        self.goods[player as usize]
    }

    /// Whether the figure is in `player`'s supply.
    pub fn in_supply(&self, player: PlayerId, figure: Figure) -> bool {
        match figure {
            Figure::Builder => self.builder[player as usize].is_none(),
            Figure::Pig => self.pig[player as usize].is_none(),
            _ => false,
        }
    }

    /// Builders and pigs on the board: owner, segment, figure.
    pub fn on_board(&self) -> impl Iterator<Item = (PlayerId, SegRef, Figure)> + '_ {
        fn of(
            v: &[Option<SegRef>],
            figure: Figure,
        ) -> impl Iterator<Item = (PlayerId, SegRef, Figure)> + '_ {
            v.iter()
                .enumerate()
                .filter_map(move |(p, s)| Some((p as PlayerId, (*s)?, figure)))
        }
        of(&self.builder, Figure::Builder).chain(of(&self.pig, Figure::Pig))
    }

    /// Where `player`'s pig stands, if on the board.
    pub fn pig_of(&self, player: PlayerId) -> Option<SegRef> {
        self.pig[player as usize]
    }

    /// R13: whether `player`'s pig stands in field `root`.
    pub fn pig_in(&self, features: &Features, player: PlayerId, root: SegRef) -> bool {
        self.pig[player as usize].is_some_and(|s| features.find(s) == root)
    }

    /// The segments of tile `t` where `player` may put `figure` now (R8, R12): a road or city
    /// (builder) or a field (pig) that already holds a meeple of theirs.
    pub fn targets<'a>(
        &'a self,
        board: &'a Board,
        features: &'a Features,
        player: PlayerId,
        t: TileRef,
        figure: Figure,
    ) -> impl Iterator<Item = SegRef> + 'a {
        let range = match self.in_supply(player, figure) {
            true => features.segs_of(board, t),
            false => 0..0,
        };
        range.filter(move |&s| check(features, player, s, figure).is_ok())
    }

    /// Phase 2 (R4, R8, R12): `player` puts the builder or the pig on `target` of tile `t`.
    pub(super) fn place(
        &mut self,
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        t: TileRef,
        target: Target,
        figure: Figure,
    ) -> Result<(), RuleError> {
        if !self.in_supply(player, figure) {
            return Err(RuleError::FigureInUse(figure));
        }
        let seg = ctx
            .features
            .seg_of_target(ctx.board, t, target)
            .ok_or(RuleError::NoSuchFeature(target))?;
        check(ctx.features, player, seg, figure).map_err(|why| RuleError::FigurePlacement {
            figure,
            target,
            why,
        })?;
        match figure {
            Figure::Builder => {
                self.builder[player as usize] = Some(seg);
                self.fresh = true;
            }
            _ => self.pig[player as usize] = Some(seg),
        }
        ctx.events.push(Event::MeeplePlaced {
            player,
            pos: ctx.board.pos(t),
            target: ctx.features.target_of(ctx.board, seg),
            figure,
        });
        Ok(())
    }

    /// R9: a tile of the active player extends the road or city of their builder.
    pub(super) fn on_tile_placed(&mut self, ctx: &mut Ctx<'_>, t: TileRef) {
        let player = ctx.active;
        let Some(b) = self.builder[player as usize] else {
            return;
        };
        if self.in_builder_part || self.fresh {
            return;
        }
        let f = ctx.features;
        let root = f.find(b);
        if f.segs_of(ctx.board, t).any(|s| f.find(s) == root) {
            let pos = ctx.board.pos(t);
            self.earned = Some(pos);
            ctx.events.push(Event::DoubleTurnEarned { player, pos });
        }
    }

    /// R11, R12, R17: meeples left feature `root`; a builder or pig there whose owner has none
    /// left in it goes home.
    pub(super) fn on_meeples_left(&mut self, ctx: &mut Ctx<'_>, root: SegRef) {
        let f = ctx.features;
        for (figure, stands) in [
            (Figure::Builder, &mut self.builder),
            (Figure::Pig, &mut self.pig),
        ] {
            for (p, slot) in stands.iter_mut().enumerate() {
                let player = p as PlayerId;
                let Some(seg) = *slot else { continue };
                if f.find(seg) != root || f.get(root).meeples.iter().any(|m| m.0 == player) {
                    continue;
                }
                *slot = None;
                ctx.events.push(Event::MeepleReturned {
                    player,
                    pos: ctx.board.pos(f.tile_of(seg)),
                    target: f.target_of(ctx.board, seg),
                    figure,
                });
            }
        }
    }

    /// R5, R6: a completed city gives its goods to the active player, right after its scoring.
    pub(super) fn on_feature_scored(&mut self, ctx: &mut Ctx<'_>, root: SegRef, last: bool) {
        let (board, f) = (ctx.board, ctx.features);
        let feature = f.get(root);
        if last || feature.kind != FeatureKind::City {
            return;
        }
        let mut goods = GoodsTokens::default();
        for &t in &feature.tiles {
            let design = board.design(t);
            let first = f.segs_of(board, t).start;
            for (i, seg) in design.segments.iter().enumerate() {
                if let Some(g) = seg.goods
                    && f.find(first + i as SegRef) == root
                {
                    *goods.get_mut(g) += 1;
                }
            }
        }
        if goods.is_empty() {
            return;
        }
        let mine = &mut self.goods[ctx.active as usize];
        for g in Goods::ALL {
            *mine.get_mut(g) += goods.get(g);
        }
        ctx.events.push(Event::GoodsTaken {
            player: ctx.active,
            pos: feature.min,
            goods,
        });
    }

    /// The end of a turn part: a builder part earned by its tile follows, after what the other
    /// modules pushed at this hook (R17: the dispatches of this part come first).
    pub(super) fn on_turn_part_end(&mut self, ctx: &mut Ctx<'_>) {
        self.in_builder_part = false;
        if let Some(pos) = self.earned.take() {
            ctx.agenda
                .push(Step::Module(ModuleStep::DoubleTurn { pos }));
        }
    }

    pub(super) fn on_turn_end(&mut self) {
        self.fresh = false;
        self.in_builder_part = false;
        self.earned = None;
    }

    /// R9, R10: the builder part is offered, unless the pile is empty; a standing answer
    /// (take or decline) is applied unasked.
    pub(super) fn run(&mut self, ctx: &mut Ctx<'_>, step: &ModuleStep) {
        let &ModuleStep::DoubleTurn { pos } = step else {
            return;
        };
        if ctx.pile == 0 {
            return;
        }
        match self.preference(ctx.active) {
            Some(DoubleTurnPreference::Take) => self.start_part(ctx, ctx.active),
            Some(DoubleTurnPreference::Decline) => {}
            None => ctx.ask(ctx.active, ModuleAsk::DoubleTurn { pos }),
        }
    }

    /// R9, R15: the builder part begins: a turn part of its own (draw, place, phases 2 and 3,
    /// its own check).
    fn start_part(&mut self, ctx: &mut Ctx<'_>, player: PlayerId) {
        self.in_builder_part = true;
        ctx.events.push(Event::DoubleTurnStarted { player });
        ctx.agenda.push(Step::Draw { extra: true });
        ctx.agenda.push(Step::EndTurnPart);
    }

    /// R9: the player takes the double turn (a turn part: draw, place, phases 2 and 3, its own
    /// check, R15) or declines it.
    pub(super) fn answer(
        &mut self,
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        command: &Command,
    ) -> Result<(), RuleError> {
        match command {
            Command::TakeDoubleTurn {} => {
                self.start_part(ctx, player);
                Ok(())
            }
            Command::Pass {} => {
                ctx.events.push(Event::Passed { player });
                Ok(())
            }
            _ => Err(RuleError::WrongPhase {
                expected: "R9: take_double_turn or pass",
            }),
        }
    }

    /// R7, R14: the goods majorities, wine, grain, cloth: the last items of final scoring.
    pub(super) fn final_goods(&mut self, ctx: &mut Ctx<'_>) {
        for g in Goods::ALL {
            let tokens = self.goods.iter().map(|t| t.get(g)).max().unwrap_or(0);
            if tokens == 0 {
                continue;
            }
            let winners: Vec<PlayerId> = (0..self.goods.len())
                .filter(|&p| self.goods[p].get(g) == tokens)
                .map(|p| p as PlayerId)
                .collect();
            for &w in &winners {
                ctx.award(w, MAJORITY_POINTS, Source::Goods(g));
            }
            ctx.events.push(Event::GoodsMajority {
                goods: g,
                tokens,
                winners,
                points: MAJORITY_POINTS,
            });
        }
    }
}

/// Whether `figure` may stand on segment `seg` for `player` (R8, R12): why not, if not.
fn check(
    features: &Features,
    player: PlayerId,
    seg: SegRef,
    figure: Figure,
) -> Result<(), &'static str> {
    let root = features.find(seg);
    let feature = features.get(root);
    let kind_ok = match figure {
        Figure::Builder => matches!(feature.kind, FeatureKind::Road | FeatureKind::City),
        _ => feature.kind == FeatureKind::Field,
    };
    if !kind_ok {
        return Err(match figure {
            Figure::Builder => "the builder goes on a road or a city (R8)",
            _ => "the pig goes in a field (R12)",
        });
    }
    if !feature.meeples.iter().any(|m| m.0 == player) {
        return Err("it needs a meeple of yours in that feature already");
    }
    Ok(())
}
