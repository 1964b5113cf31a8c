//! The Messages (M1–M18): a messenger beside every scoring pawn, dark spaces and the eight
//! dispatches.
//!
//! - **Pawns (M2, M3, M17).** Every award of a player (feature, toll, dispatch) passes
//!   [`Messages::on_award`]. The game adds it to the player's score at once (the score is the sum
//!   of both pawns); the module moves one pawn: at once when the player has a standing preference,
//!   else it keeps the award pending and a [`ModuleStep::AskPawns`] step asks every pending
//!   scoring at once, in the order earned. The turn waits for the active player's answers (M5
//!   needs final positions); another player's answer holds only the passing of the turn
//!   (`holds_turn` in `game/mod.rs`).
//! - **Checks (M4, M5).** The module remembers which of the active player's pawns advanced since
//!   the last check; at the end of each turn part (`on_turn_part_end`) one pawn that advanced and
//!   stands on a dark space (a multiple of 5, B8) draws one dispatch. Only the active player draws.
//! - **Chains (M6).** After a dispatch's points are placed, a pawn they brought to a dark space
//!   lets the player draw again: a decision (`draw_dispatch`, default, or `pass`).
//! - **Dispatches (M7–M15).** The action is offered only where it can be carried out; its
//!   choices (the equally smallest feature, the meeple of 8) are computed when it is drawn.
//!
//! The stack is secret (invariant 4): it is shuffled from the match seed by its own ChaCha8
//! stream (stream 1; the pile uses stream 0 of the same seed), so a match without The Messages
//! draws exactly what it drew before, and it never enters the view or an event; only its size
//! does. A resolved dispatch goes under the stack (M7).

use super::{Ctx, ModuleAsk, ModuleStep, Step};
use crate::command::{Command, MeepleRef, Pawn, PawnPreference};
use crate::decision::{Decision, Options};
use crate::engine::agenda::{Award, Source};
use crate::engine::ids::SegRef;
use crate::engine::scoring;
use crate::error::RuleError;
use crate::event::{Event, ScoreReason};
use crate::geometry::Pos;
use crate::setup::{PlayerId, Setup};
use crate::tiles::FeatureKind;
use crate::view::{MessagesView, PawnsView};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use serde::{Deserialize, Serialize};

/// The dispatches are numbered 1 to 8.
pub const DISPATCHES: u8 = 8;

/// M4, B8: spaces whose number is divisible by 5 are dark.
#[inline]
fn dark(space: u32) -> bool {
    space.is_multiple_of(5)
}

/// Whether `order` names each dispatch once.
pub fn valid_order(order: &[u8]) -> bool {
    let mut seen = [false; DISPATCHES as usize + 1];
    order.len() == DISPATCHES as usize
        && order.iter().all(|&d| {
            (1..=DISPATCHES).contains(&d) && !std::mem::replace(&mut seen[d as usize], true)
        })
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Messages {
    /// Per seat: the scoring pawn and the messenger, in points (the space is the number modulo
    /// 50; dark spaces are the same either way).
    pawns: Vec<[u32; 2]>,
    prefs: Vec<Option<PawnPreference>>,
    /// Secret: the dispatch stack, top last.
    stack: Vec<u8>,
    /// Scorings earned and not asked yet: player, points, reason.
    pending: Vec<(PlayerId, u32, ScoreReason)>,
    ask_queued: bool,
    /// Which of the active player's pawns advanced since the last check (M5).
    moved: [bool; 2],
    /// The dispatch being resolved, whether its action is offered, and its choices (M7).
    current: Option<u8>,
    action: bool,
    offer: Vec<MeepleRef>,
    /// M16: the pawns were summed; later awards go to the scoring pawn unasked.
    summed: bool,
}

impl Messages {
    pub fn new(setup: &Setup) -> Messages {
        let n = setup.players.len();
        let stack = match &setup.dispatch_order {
            Some(order) => order.iter().rev().copied().collect(),
            None => {
                let mut rng = ChaCha8Rng::seed_from_u64(setup.seed);
                rng.set_stream(1);
                let mut stack: Vec<u8> = (1..=DISPATCHES).collect();
                for i in (1..stack.len()).rev() {
                    let j = ((u128::from(rng.next_u64()) * (i as u128 + 1)) >> 64) as usize;
                    stack.swap(i, j);
                }
                stack
            }
        };
        Messages {
            pawns: (0..n)
                .map(|i| setup.start_scores.get(i).map_or([0, 0], |s| s.pawns()))
                .collect(),
            prefs: vec![None; n],
            stack,
            pending: Vec::new(),
            ask_queued: false,
            moved: [false; 2],
            current: None,
            action: false,
            offer: Vec::new(),
            summed: false,
        }
    }

    /// The dispatch stack, top first (secret, M1): for an admin's secrets.
    pub fn stack_top_first(&self) -> Vec<u8> {
        self.stack.iter().rev().copied().collect()
    }

    pub fn view(&self) -> MessagesView {
        MessagesView {
            players: self
                .pawns
                .iter()
                .zip(&self.prefs)
                .map(|(p, pref)| PawnsView {
                    scoring: p[0],
                    messenger: p[1],
                    preference: *pref,
                })
                .collect(),
            stack: self.stack.len() as u32,
        }
    }

    /// The pawn a standing preference picks, `None` without one (M3).
    fn preferred(&self, player: PlayerId, points: u32, active: PlayerId) -> Option<Pawn> {
        Some(match self.prefs[player as usize]? {
            PawnPreference::Scoring => Pawn::Scoring,
            PawnPreference::Messenger => Pawn::Messenger,
            PawnPreference::DarkInMyTurn => {
                let [s, m] = self.pawns[player as usize];
                if player == active && !dark(s + points) && dark(m + points) {
                    Pawn::Messenger
                } else {
                    Pawn::Scoring
                }
            }
        })
    }

    /// M2: every award of a player; the game credits the score, the module moves a pawn now (a
    /// standing preference) or asks.
    pub(super) fn on_award(&mut self, ctx: &mut Ctx<'_>, a: &Award) {
        if a.points == 0 {
            return;
        }
        if self.summed {
            self.pawns[a.player as usize][0] += a.points;
            return;
        }
        let reason = match a.source {
            Source::Feature(_) => ScoreReason::Feature,
            Source::Field(_) => ScoreReason::Field,
            Source::Toll(_) => ScoreReason::Toll,
            Source::Dispatch(_) => ScoreReason::Dispatch,
            // M17: chip points (P8) and wine sales (P9) are scorings like any other.
            Source::Chip(_) => ScoreReason::Chip,
            Source::Wine(_) => ScoreReason::Wine,
            Source::Goods(_) => ScoreReason::Goods,
        };
        match self.preferred(a.player, a.points, ctx.active) {
            Some(pawn) => self.move_pawn(ctx, a.player, pawn, a.points, reason),
            None => {
                self.pending.push((a.player, a.points, reason));
                if !std::mem::replace(&mut self.ask_queued, true) {
                    ctx.agenda.push(Step::Module(ModuleStep::AskPawns));
                }
            }
        }
    }

    fn move_pawn(
        &mut self,
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        pawn: Pawn,
        points: u32,
        reason: ScoreReason,
    ) {
        let i = usize::from(pawn == Pawn::Messenger);
        let from = self.pawns[player as usize][i];
        self.pawns[player as usize][i] = from + points;
        if player == ctx.active {
            self.moved[i] = true;
        }
        ctx.events.push(Event::PawnMoved {
            player,
            pawn,
            from,
            to: from + points,
            reason,
        });
    }

    /// M5: a check of the active player's pawns; it consumes what moved.
    fn check(&mut self, active: PlayerId) -> bool {
        let pawns = self.pawns[active as usize];
        let hit = (0..2).any(|i| self.moved[i] && dark(pawns[i]));
        self.moved = [false; 2];
        hit && !self.summed
    }

    pub(super) fn on_turn_part_end(&mut self, ctx: &mut Ctx<'_>) {
        if self.check(ctx.active) {
            ctx.agenda.push(Step::Module(ModuleStep::DrawDispatch));
        }
    }

    pub(super) fn on_turn_end(&mut self) {
        self.moved = [false; 2];
    }

    /// M16: the two pawns are summed before final scoring.
    pub(super) fn on_final(&mut self, ctx: &mut Ctx<'_>) {
        self.summed = true;
        for (p, pawns) in self.pawns.iter_mut().enumerate() {
            *pawns = [pawns[0] + pawns[1], 0];
            ctx.events.push(Event::PawnsSummed {
                player: p as PlayerId,
                score: pawns[0],
            });
        }
    }

    pub(super) fn run(&mut self, ctx: &mut Ctx<'_>, step: ModuleStep) {
        match step {
            ModuleStep::AskPawns => {
                self.ask_queued = false;
                for (player, points, reason) in std::mem::take(&mut self.pending) {
                    ctx.ask(player, ModuleAsk::Pawn { points, reason });
                }
            }
            ModuleStep::DrawDispatch => self.draw(ctx),
            ModuleStep::ChainCheck => {
                if self.check(ctx.active) {
                    ctx.ask(ctx.active, ModuleAsk::Chain);
                }
            }
            // Traders & Builders' step: [`super::Modules`] sends it there, never here.
            ModuleStep::DoubleTurn { .. } => {}
        }
    }

    /// M4: the active player takes the top dispatch; what its action could act on is fixed now
    /// (nothing changes on the board while the decision is open).
    fn draw(&mut self, ctx: &mut Ctx<'_>) {
        let Some(d) = self.stack.pop() else { return };
        self.current = Some(d);
        let (action, offer) = offer(ctx, d);
        self.action = action;
        self.offer = offer;
        ctx.events.push(Event::DispatchDrawn {
            player: ctx.active,
            dispatch: d,
        });
        ctx.ask(ctx.active, ModuleAsk::Dispatch);
    }

    pub(super) fn accepts(ask: &ModuleAsk, command: &Command) -> bool {
        match ask {
            ModuleAsk::Pawn { .. } => matches!(command, Command::ChoosePawn { .. }),
            ModuleAsk::Dispatch => matches!(
                command,
                Command::DispatchAction { .. } | Command::DispatchPoints {}
            ),
            ModuleAsk::Chain => matches!(command, Command::DrawDispatch {} | Command::Pass {}),
            // Other modules' decisions: [`super::Modules`] sends them there, never here.
            ModuleAsk::SellWine { .. } | ModuleAsk::DoubleTurn { .. } => false,
            #[cfg(test)]
            ModuleAsk::Witness => true,
        }
    }

    /// `pig`: where the player's pig stands (R17: dispatch 8 scores a field with it).
    pub(super) fn answer(
        &mut self,
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        ask: &ModuleAsk,
        command: &Command,
        pig: Option<SegRef>,
    ) -> Result<(), RuleError> {
        match (ask, command) {
            (&ModuleAsk::Pawn { points, reason }, &Command::ChoosePawn { pawn }) => {
                self.move_pawn(ctx, player, pawn, points, reason);
                Ok(())
            }
            (ModuleAsk::Chain, Command::DrawDispatch {}) => {
                ctx.agenda.push(Step::Module(ModuleStep::DrawDispatch));
                Ok(())
            }
            (ModuleAsk::Chain, Command::Pass {}) => {
                ctx.events.push(Event::Passed { player });
                Ok(())
            }
            (ModuleAsk::Dispatch, Command::DispatchPoints {}) => {
                self.resolve(ctx, false, 2, None);
                Ok(())
            }
            (ModuleAsk::Dispatch, &Command::DispatchAction { meeple }) => {
                self.act(ctx, player, meeple, pig)
            }
            _ => Err(RuleError::WrongPhase {
                expected: match ask {
                    ModuleAsk::Pawn { .. } => "M2: choose_pawn",
                    ModuleAsk::Dispatch => "M7: dispatch_action or dispatch_points",
                    _ => "M6: draw_dispatch or pass",
                },
            }),
        }
    }

    /// M8–M15: carries out the drawn dispatch's action; checks before changing anything.
    fn act(
        &mut self,
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        meeple: Option<MeepleRef>,
        pig: Option<SegRef>,
    ) -> Result<(), RuleError> {
        let d = self.current.unwrap_or(0);
        if !self.action {
            return Err(RuleError::DispatchChoice(
                "its action has nothing to act on: take the 2 points (M7)",
            ));
        }
        let (board, f) = (ctx.board, ctx.features);
        // The meeple named, when the dispatch acts on one (1–3, 8).
        let seg = match (self.offer.is_empty(), meeple) {
            (true, None) => None,
            (true, Some(_)) => {
                return Err(RuleError::DispatchChoice("this dispatch names no meeple"));
            }
            (false, None) => {
                return Err(RuleError::DispatchChoice("name one of the offered meeples"));
            }
            (false, Some(m)) => {
                let seg = seg_of(ctx, m)
                    .filter(|&s| {
                        f.get(f.find(s))
                            .meeples
                            .iter()
                            .any(|&(p, at, _)| (p, at) == (player, s))
                    })
                    .ok_or(RuleError::DispatchChoice("no meeple of yours stands there"))?;
                // 1–3: any meeple on one of the equally smallest features; 8: that meeple.
                let offered = self.offer.iter().filter_map(|&o| seg_of(ctx, o));
                let ok = match d {
                    8 => offered.into_iter().any(|o| o == seg),
                    _ => offered.into_iter().any(|o| f.find(o) == f.find(seg)),
                };
                if !ok {
                    return Err(RuleError::DispatchChoice(
                        "not among the smallest features with a meeple of yours (M8–M10)",
                    ));
                }
                Some(seg)
            }
        };
        let mine = || my_meeples(ctx.features, player);
        let (points, pos) = match d {
            1..=3 => {
                let root = f.find(seg.unwrap_or(0));
                let v = scoring::value_of(board, f, root, false).map_or(0, |v| v.points);
                (v, Some(f.get(root).min))
            }
            4 => {
                // M11: a turn part inside the turn, with its own check (M5).
                self.resolve(ctx, true, 0, None);
                ctx.agenda.push(Step::Draw { extra: true });
                ctx.agenda.push(Step::EndTurnPart);
                return Ok(());
            }
            5 => {
                let mut roots: Vec<SegRef> = mine()
                    .filter(|&(_, k)| k == FeatureKind::City)
                    .map(|(r, _)| r)
                    .collect();
                roots.dedup();
                (roots.iter().map(|&r| 2 * f.get(r).coats).sum(), None)
            }
            6 => (
                2 * mine().filter(|&(_, k)| k == FeatureKind::City).count() as u32,
                None,
            ),
            7 => (
                2 * mine().filter(|&(_, k)| k == FeatureKind::Field).count() as u32,
                None,
            ),
            _ => {
                let seg = seg.unwrap_or(0);
                let root = f.find(seg);
                let (_, winners) = scoring::majority(f, root);
                // M15: a tie counts as the majority (as in B6); a farmer scores its field (B7).
                let points = match (winners.contains(&player), f.get(root).kind) {
                    (false, _) => 0,
                    (true, FeatureKind::Field) => {
                        let touched = scoring::cities_touched(board, f);
                        let (cities, points) = scoring::field_points(&touched, root);
                        // R17 (DECISION): "as in final scoring", the owner's pig included.
                        match pig.is_some_and(|s| f.find(s) == root) {
                            true => 4 * cities,
                            false => points,
                        }
                    }
                    (true, _) => scoring::value_of(board, f, root, false).map_or(0, |v| v.points),
                };
                let pos = f.get(root).min;
                // The meeple goes home first, then the points are placed (and a chain checked).
                ctx.agenda.push(Step::ReturnMeeple(seg));
                self.resolve(ctx, true, points, Some(pos));
                return Ok(());
            }
        };
        self.resolve(ctx, true, points, pos);
        Ok(())
    }

    /// M7: the dispatch is resolved and goes under the stack; its points are awarded; a chain
    /// may follow (M6). Dispatch 4's own check is the end of its turn part instead.
    fn resolve(&mut self, ctx: &mut Ctx<'_>, action: bool, points: u32, pos: Option<Pos>) {
        let Some(d) = self.current.take() else { return };
        self.stack.insert(0, d);
        self.offer.clear();
        ctx.events.push(Event::DispatchResolved {
            player: ctx.active,
            dispatch: d,
            action,
            points,
            pos,
        });
        if points > 0 {
            ctx.award(ctx.active, points, Source::Dispatch(d));
        }
        if !(action && d == 4) {
            ctx.agenda.push(Step::Module(ModuleStep::ChainCheck));
        }
    }

    pub(super) fn options(ask: &ModuleAsk) -> (usize, bool) {
        match ask {
            ModuleAsk::Pawn { .. } | ModuleAsk::Dispatch => (2, false),
            ModuleAsk::Chain | ModuleAsk::SellWine { .. } | ModuleAsk::DoubleTurn { .. } => {
                (1, true)
            }
            #[cfg(test)]
            ModuleAsk::Witness => (0, true),
        }
    }

    pub(super) fn option_len(&self, ask: &ModuleAsk, g: usize) -> usize {
        self.decision(0, ask).len(g)
    }

    pub(super) fn option_nth(&self, ask: &ModuleAsk, g: usize, i: usize) -> Option<Command> {
        self.decision(0, ask).nth(g, i)
    }

    /// The default answers (M3): the preference, else the scoring pawn; the 2 points of a
    /// dispatch (always possible); drawing again in a chain (M6: the seed's "may", drawn unless
    /// the player declines).
    pub(super) fn default_command(
        &self,
        player: PlayerId,
        active: PlayerId,
        ask: &ModuleAsk,
    ) -> Command {
        match *ask {
            ModuleAsk::Pawn { points, .. } => Command::ChoosePawn {
                pawn: self
                    .preferred(player, points, active)
                    .unwrap_or(Pawn::Scoring),
            },
            ModuleAsk::Dispatch => Command::DispatchPoints {},
            ModuleAsk::Chain => Command::DrawDispatch {},
            ModuleAsk::SellWine { .. } => Command::Pass {},
            ModuleAsk::DoubleTurn { .. } => Command::TakeDoubleTurn {},
            #[cfg(test)]
            ModuleAsk::Witness => Command::Pass {},
        }
    }

    pub(super) fn decision(&self, player: PlayerId, ask: &ModuleAsk) -> Decision {
        match *ask {
            ModuleAsk::Pawn { points, reason } => {
                let [scoring, messenger] = self.pawns[player as usize];
                Decision::ChoosePawn {
                    player,
                    points,
                    reason,
                    scoring,
                    messenger,
                }
            }
            ModuleAsk::Dispatch => Decision::Dispatch {
                player,
                dispatch: self.current.unwrap_or(0),
                action: self.action,
                meeples: self.offer.clone(),
            },
            ModuleAsk::Chain => Decision::ChainDispatch { player },
            ModuleAsk::SellWine { player, pos, .. } => Decision::SellWine {
                player,
                pos,
                sales: Vec::new(),
            },
            ModuleAsk::DoubleTurn { pos } => Decision::DoubleTurn { player, pos },
            #[cfg(test)]
            ModuleAsk::Witness => Decision::Witness { player },
        }
    }

    /// M3: a standing preference, set at any time.
    pub(super) fn on_command(
        &mut self,
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        command: &Command,
    ) -> Option<Result<(), RuleError>> {
        let Command::SetPawnPreference { preference } = *command else {
            return None;
        };
        if self.prefs[player as usize] == preference {
            return Some(Err(RuleError::PreferenceUnchanged));
        }
        self.prefs[player as usize] = preference;
        ctx.events
            .push(Event::PawnPreferenceSet { player, preference });
        Some(Ok(()))
    }
}

/// The segment a meeple reference names.
fn seg_of(ctx: &Ctx<'_>, m: MeepleRef) -> Option<SegRef> {
    let t = ctx.board.tile_at(m.pos)?;
    ctx.features.seg_of_target(ctx.board, t, m.target)
}

/// `player`'s meeples on the board: (root, kind), in segment order of the roots. A large meeple
/// is one figure here: dispatches 6 and 7 count it once (I16).
fn my_meeples(
    f: &crate::engine::features::Features,
    player: PlayerId,
) -> impl Iterator<Item = (SegRef, FeatureKind)> + '_ {
    (0..f.len()).filter(|&s| f.is_root(s)).flat_map(move |r| {
        let feat = f.get(r);
        feat.meeples
            .iter()
            .filter(move |&&(p, _, figure)| p == player && figure.strength() > 0)
            .map(move |_| (r, feat.kind))
    })
}

/// M7: whether the action of dispatch `d` has something to act on, and the meeples to choose
/// among (1–3: one per equally smallest feature; 8: every meeple of the player).
fn offer(ctx: &Ctx<'_>, d: u8) -> (bool, Vec<MeepleRef>) {
    let (board, f, player) = (ctx.board, ctx.features, ctx.active);
    let name = |seg: SegRef| MeepleRef {
        pos: board.pos(f.tile_of(seg)),
        target: f.target_of(board, seg),
    };
    // The player's meeples: (root, own segment), in order of roots.
    let mut mine: Vec<(SegRef, SegRef)> = Vec::new();
    for r in (0..f.len()).filter(|&s| f.is_root(s)) {
        for &(p, seg, figure) in &f.get(r).meeples {
            if p == player && figure.strength() > 0 {
                mine.push((r, seg));
            }
        }
    }
    let kind_of = |r: SegRef| f.get(r).kind;
    match d {
        1..=3 => {
            let kind =
                [FeatureKind::Road, FeatureKind::City, FeatureKind::Monastery][usize::from(d - 1)];
            let mut roots: Vec<(u32, SegRef, SegRef)> = Vec::new();
            for &(r, seg) in &mine {
                if kind_of(r) == kind && !roots.iter().any(|x| x.1 == r) {
                    let v = scoring::value_of(board, f, r, false).map_or(0, |v| v.points);
                    roots.push((v, r, seg));
                }
            }
            let min = roots.iter().map(|x| x.0).min();
            let offer: Vec<MeepleRef> = roots
                .iter()
                .filter(|x| Some(x.0) == min)
                .map(|x| name(x.2))
                .collect();
            (!offer.is_empty(), offer)
        }
        4 => (ctx.pile > 0, Vec::new()),
        5 | 6 => (
            mine.iter().any(|&(r, _)| kind_of(r) == FeatureKind::City),
            Vec::new(),
        ),
        7 => (
            mine.iter().any(|&(r, _)| kind_of(r) == FeatureKind::Field),
            Vec::new(),
        ),
        _ => {
            let offer: Vec<MeepleRef> = mine.iter().map(|&(_, s)| name(s)).collect();
            (!offer.is_empty(), offer)
        }
    }
}
