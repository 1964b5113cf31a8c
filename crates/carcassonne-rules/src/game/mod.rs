//! The match: it owns the board, the features, the pile, the players, the modules and the agenda,
//! and orchestrates them (B3–B11). `apply` matches a command to an open decision of *that* player,
//! and the agenda runs until it needs a decision again.
//!
//! - this file: the state, command dispatch, the agenda's runner, the turn flow and scoring;
//! - [`start`]: setting a match up ([`Game::start`]);
//! - [`decisions`]: what is asked now and the options of each decision ([`AskOptions`]);
//! - [`view`]: the public projection ([`Game::view`], [`Game::refresh_view`]);
//! - [`standings`]: the unscored features with meeples, as public facts ([`Game::standings`]).

use crate::command::{Command, Figure, Target};
use crate::engine::agenda::{Award, Source};
use crate::engine::board::Board;
use crate::engine::features::Features;
use crate::engine::ids::{SegRef, TileRef};
use crate::engine::pile::Pile;
use crate::engine::rng::SavedRng;
use crate::engine::scoring;
use crate::error::RuleError;
use crate::event::Event;
use crate::geometry::{Pos, Rotation, Side};
use crate::modules::{Agenda, Ask, Ctx, Hook, Modules, Step};
use crate::setup::{PlayerId, Setup};
use crate::tiles::{Catalogue, TileIdx, catalogue};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
struct PlayerState {
    score: u32,
    supply: u8,
    /// Inns & Cathedrals: large meeples in the supply (I4; 0 without the module).
    #[serde(default)]
    large: u8,
    /// The score by kind of scoring (the view's `scored`).
    #[serde(default)]
    scored: crate::view::Scored,
}

/// One match: the whole state, secret parts included. Owned by one match actor on the server.
///
/// It serializes (for snapshots kept on the server side only: it holds the pile order and the
/// random generator); a snapshot is valid only for the same [`crate::RULES_VERSION`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Game {
    setup: Setup,
    /// The catalogue is static data of this build, not state.
    #[serde(skip, default = "catalogue")]
    cat: &'static Catalogue,
    /// For rules that draw at random (start squares, P2; the pile's shuffle; start tiles' turns;
    /// the chips, P7), all while the match starts: kept at rest (and in snapshots) after that.
    rng: SavedRng,
    /// The face-down pile (secret, B9).
    pile: Pile,
    discarded: Vec<TileIdx>,
    board: Board,
    features: Features,
    players: Vec<PlayerState>,
    /// Meeples on the board in the order they were placed: owner, segment and figure.
    on_board: Vec<(PlayerId, SegRef, Figure)>,
    modules: Modules,
    agenda: Agenda,
    active: PlayerId,
    turn: u32,
    over: bool,
    /// Every open decision holds the turn, other players' pawn choices too (a match stored with
    /// an older replay version, replayed as it was played). Otherwise another player's pawn
    /// choice lets the turn go on until it passes to the next player (M3).
    #[serde(default)]
    stalls: bool,
}

/// Whether the open decision `ask` holds the turn of `active`: every decision does except another
/// player's pawn choice (M3, M4: in this turn only the active player's pawns count, for the
/// dispatch checks and for what they may do), unless `stalls`.
#[inline]
fn holds_turn(ask: &Ask, active: PlayerId, stalls: bool) -> bool {
    stalls
        || !matches!(ask, Ask::Module { player, ask: crate::modules::ModuleAsk::Pawn { .. } }
            if *player != active)
}

/// Runs a module hook with a [`Ctx`]; the steps it pushes run in the order pushed.
macro_rules! hook {
    ($game:expr, $events:expr, |$m:ident, $ctx:ident| $body:expr) => {{
        let mark = $game.agenda.mark();
        let $ctx = &mut Ctx {
            board: &$game.board,
            features: &$game.features,
            agenda: &mut $game.agenda,
            events: $events,
            active: $game.active,
            players: $game.players.len(),
            pile: $game.pile.len(),
        };
        let $m = &mut $game.modules;
        let out = $body;
        $game.agenda.settle(mark);
        out
    }};
}

/// [`hook!`] for hooks that only notify: skipped when no module is on (the base game pays
/// nothing for them).
macro_rules! notify {
    ($game:expr, $events:expr, $hook:expr, |$m:ident, $ctx:ident| $body:expr) => {{
        if $game.modules.listens($hook) {
            hook!($game, $events, |$m, $ctx| $body)
        }
    }};
}

mod decisions;
mod standings;
mod start;
mod view;

pub use decisions::AskOptions;
pub use standings::Standing;

impl Game {
    /// Applies one player's command: it answers an open decision of that player (who need not
    /// be the active one). On error nothing changed.
    pub fn apply(&mut self, player: PlayerId, command: Command) -> Result<Vec<Event>, RuleError> {
        let mut events = Vec::new();
        self.apply_into(player, command, &mut events)?;
        Ok(events)
    }

    /// [`Game::apply`] appending to a caller's buffer (benchmarks, bulk replays).
    pub fn apply_into(
        &mut self,
        player: PlayerId,
        command: Command,
        events: &mut Vec<Event>,
    ) -> Result<(), RuleError> {
        if self.over {
            return Err(RuleError::GameOver);
        }
        if player as usize >= self.players.len() {
            return Err(RuleError::UnknownPlayer(player));
        }
        // The player's open decision this command answers: the first of theirs that takes a
        // command of this kind. Else a module may take it (a standing preference, M3); else the
        // player's first decision refuses it and says what it expects.
        let mut first = None;
        let mut taker = None;
        for (i, open) in self.agenda.open().iter().enumerate() {
            if open.ask.player() != player {
                continue;
            }
            if self.accepts(&open.ask, &command) {
                taker = Some(i);
                break;
            }
            first.get_or_insert(i);
        }
        if taker.is_none()
            && self.modules.listens(Hook::Command)
            && let Some(r) = hook!(self, events, |m, ctx| m.on_command(ctx, player, &command))
        {
            r?;
            self.run(events);
            return Ok(());
        }
        let Some(index) = taker.or(first) else {
            let waiting = self
                .agenda
                .open()
                .first()
                .map_or(self.active, |o| o.ask.player());
            return Err(RuleError::NotYourTurn { player, waiting });
        };
        let ask = self.agenda.open()[index].ask.clone();
        self.answer(&ask, player, &command, events)?;
        self.agenda.close(index);
        self.run(events);
        Ok(())
    }

    /// Whether `ask` takes a command of this kind at all.
    #[inline]
    fn accepts(&self, ask: &Ask, command: &Command) -> bool {
        match ask {
            Ask::PlaceTile { .. } => matches!(command, Command::PlaceTile { .. }),
            Ask::PlaceFollower { .. } => !matches!(
                command,
                Command::PlaceTile { .. }
                    | Command::SetPawnPreference { .. }
                    | Command::SetDoubleTurnPreference { .. }
                    | Command::SellWine { .. }
            ),
            Ask::Module { ask, .. } => Modules::accepts(ask, command),
        }
    }

    /// Carries out `command` as the answer to `ask`; checks everything before changing anything.
    fn answer(
        &mut self,
        ask: &Ask,
        player: PlayerId,
        command: &Command,
        events: &mut Vec<Event>,
    ) -> Result<(), RuleError> {
        match (ask, command) {
            (&Ask::PlaceTile { tile, .. }, &Command::PlaceTile { pos, rotation }) => {
                self.board
                    .check_placement(self.cat.get(tile), pos, rotation)?;
                let t = self.put_tile(tile, pos, rotation);
                events.push(Event::TilePlaced {
                    player,
                    tile: self.cat.get(tile).id.to_string(),
                    pos,
                    rotation,
                });
                // Phase 2, then phase 3 of this turn part; what modules do on placement (P8)
                // comes first.
                self.agenda.push_all([
                    Step::Ask(Ask::PlaceFollower { player, tile: t }),
                    Step::ScoreTile(t),
                ]);
                notify!(self, events, Hook::TilePlaced, |m, ctx| m
                    .on_tile_placed(ctx, t));
                Ok(())
            }
            (Ask::PlaceTile { .. }, _) => Err(RuleError::WrongPhase {
                expected: "phase 1: place_tile",
            }),
            (
                &Ask::PlaceFollower { tile: t, .. },
                &Command::PlaceMeeple {
                    target,
                    figure: figure @ (Figure::Meeple | Figure::LargeMeeple),
                },
            ) => {
                let seg = self.check_meeple(player, t, target, figure)?;
                let root = self.features.find(seg);
                self.features
                    .get_mut(root)
                    .meeples
                    .push((player, seg, figure));
                self.on_board.push((player, seg, figure));
                let p = &mut self.players[player as usize];
                match figure {
                    Figure::LargeMeeple => p.large -= 1,
                    _ => p.supply -= 1,
                }
                // Named canonically (first side or half in board order), as the view and
                // `meeple_returned` name it, whichever side the player wrote.
                events.push(Event::MeeplePlaced {
                    player,
                    pos: self.board.pos(t),
                    target: self.features.target_of(&self.board, seg),
                    figure,
                });
                Ok(())
            }
            (Ask::PlaceFollower { .. }, Command::Pass {}) => {
                events.push(Event::Passed { player });
                Ok(())
            }
            (Ask::PlaceFollower { .. }, Command::PlaceTile { .. }) => Err(RuleError::WrongPhase {
                expected: "phase 2: place_meeple, place_tollhouse or pass",
            }),
            // The tollhouse (T2), the builder or the pig (R8, R12): the module's.
            (&Ask::PlaceFollower { tile: t, .. }, _) => {
                hook!(self, events, |m, ctx| m
                    .answer_follower(ctx, player, t, command))
            }
            (Ask::Module { ask, .. }, _) => {
                hook!(self, events, |m, ctx| m.answer(ctx, player, ask, command))
            }
        }
    }

    /// Runs the agenda until it needs a decision or the game is over.
    fn run(&mut self, events: &mut Vec<Event>) {
        loop {
            let (active, stalls) = (self.active, self.stalls);
            let Some(step) = self.agenda.next(|ask| holds_turn(ask, active, stalls)) else {
                break;
            };
            match step {
                Step::BeginTurn => self.begin_turn(events),
                Step::Draw { extra } => self.draw(extra, events),
                // Asks are opened by `Agenda::next`.
                Step::Ask(_) => {}
                Step::ScoreTile(t) => self.score_tile(t, events),
                Step::AfterScoring(t) => notify!(self, events, Hook::AfterScoring, |m, ctx| m
                    .after_scoring(ctx, t)),
                Step::Award(a) => self.award(a, events),
                Step::ReturnMeeple(seg) => self.return_meeple(seg, events),
                Step::EndTurnPart => notify!(self, events, Hook::TurnPartEnd, |m, ctx| m
                    .on_turn_part_end(ctx)),
                Step::EndTurn => {
                    // What modules push at the end of the turn runs before the next player's.
                    self.agenda.push(Step::NextPlayer);
                    notify!(self, events, Hook::TurnEnd, |m, ctx| m.on_turn_end(ctx));
                }
                Step::NextPlayer => {
                    self.active = ((self.active as usize + 1) % self.players.len()) as PlayerId;
                    self.begin_turn(events);
                }
                Step::Final => self.final_scoring(events),
                Step::GameOver => {
                    self.over = true;
                    self.agenda.clear();
                    events.push(Event::GameEnded {
                        scores: self.scores(),
                    });
                }
                Step::Module(s) => hook!(self, events, |m, ctx| m.run(ctx, s)),
            }
        }
    }

    /// The one award path (M2, M17): every point a player gets passes here; a module may take
    /// the award over (to ask first).
    #[inline]
    fn award(&mut self, a: Award, events: &mut Vec<Event>) {
        if !self.modules.listens(Hook::Award) || !hook!(self, events, |m, ctx| m.on_award(ctx, &a))
        {
            self.players[a.player as usize].score += a.points;
            self.count_kind(&a);
        }
    }

    /// Adds an award to its player's points by kind (a feature's kind decides between roads,
    /// cities and monasteries).
    fn count_kind(&mut self, a: &Award) {
        use crate::tiles::FeatureKind;
        let feature = |seg| self.features.get(self.features.find(seg)).kind;
        let kind = match a.source {
            Source::Feature(seg) => Some(feature(seg)),
            _ => None,
        };
        let s = &mut self.players[a.player as usize].scored;
        let part = match (a.source, kind) {
            (Source::Feature(_), Some(FeatureKind::Road)) => &mut s.roads,
            (Source::Feature(_), Some(FeatureKind::City)) => &mut s.cities,
            (Source::Feature(_), _) => &mut s.monasteries,
            (Source::Field(_), _) => &mut s.fields,
            (Source::Toll(_), _) => &mut s.tolls,
            (Source::Dispatch(_), _) => &mut s.dispatches,
            (Source::Chip(_), _) => &mut s.chips,
            (Source::Wine(_), _) => &mut s.wine,
            (Source::Goods(_), _) => &mut s.goods,
        };
        *part += a.points;
    }

    /// Puts a tile on the board and joins its features to its neighbours'. Legality has been
    /// checked.
    fn put_tile(&mut self, tile: TileIdx, pos: Pos, rot: Rotation) -> TileRef {
        let kind = self.cat.get(tile);
        let first = self.features.next_seg();
        let t = self.board.put(tile, kind, pos, rot, first);
        self.features.add_tile(t, kind, pos);
        self.modules.tile_put(&self.board, &self.features, t);
        let modules = &mut self.modules;
        self.features
            .join(&self.board, t, |big, small| modules.merged(big, small));
        t
    }

    /// B5, I4: the figure is in the player's supply and the feature named holds no meeple.
    fn check_meeple(
        &self,
        player: PlayerId,
        t: TileRef,
        target: Target,
        figure: Figure,
    ) -> Result<SegRef, RuleError> {
        let p = &self.players[player as usize];
        match crate::modules::inns_cathedrals::check_figure(&self.setup.modules, figure)? {
            true if p.large == 0 => return Err(RuleError::NoLargeMeepleLeft),
            false if p.supply == 0 => return Err(RuleError::NoMeepleLeft),
            _ => {}
        }
        let seg = self
            .features
            .seg_of_target(&self.board, t, target)
            .ok_or(RuleError::NoSuchFeature(target))?;
        if !self
            .features
            .get(self.features.find(seg))
            .meeples
            .is_empty()
        {
            return Err(RuleError::FeatureOccupied(target));
        }
        Ok(seg)
    }

    // ---- turn flow ----

    fn begin_turn(&mut self, events: &mut Vec<Event>) {
        if self.pile.is_empty() {
            self.agenda.push(Step::Final);
            return;
        }
        self.turn += 1;
        events.push(Event::TurnStarted {
            player: self.active,
            turn: self.turn,
        });
        self.agenda.push_all([
            Step::Draw { extra: false },
            Step::EndTurnPart,
            Step::EndTurn,
        ]);
    }

    /// Draws until a tile fits (B4). When the pile runs out the turn's draw ends the game (B7);
    /// an extra tile's draw (M11) ends with no tile.
    fn draw(&mut self, extra: bool, events: &mut Vec<Event>) {
        let drawn = self.pile.draw_fitting(
            self.cat,
            &self.board,
            self.active,
            &mut self.discarded,
            events,
        );
        if let Some(tile) = drawn {
            self.agenda.push(Step::Ask(Ask::PlaceTile {
                player: self.active,
                tile,
            }));
        } else if !extra {
            self.agenda.clear();
            self.agenda.push(Step::Final);
        }
    }

    /// Phase 3: score what tile `t` completed (B6, B11), each feature's tolls (T6–T8), return
    /// the meeples; what modules do after scoring (P9) runs as the next step, after the awards and
    /// pawn choices of this scoring (M17).
    fn score_tile(&mut self, t: TileRef, events: &mut Vec<Event>) {
        if self.modules.listens(Hook::AfterScoring) {
            self.agenda.push(Step::AfterScoring(t));
        }
        for root in scoring::completed_by(&self.board, &self.features, t) {
            self.features.get_mut(root).done = true;
            self.score_feature(root, true, events);
            notify!(self, events, Hook::FeatureScored, |m, ctx| m
                .on_feature_scored(ctx, root, false));
            self.return_meeples(root, events);
        }
    }

    /// Scores a road, city or monastery with meeples on it, complete (B6) or not (B7).
    fn score_feature(&mut self, root: SegRef, complete: bool, events: &mut Vec<Event>) {
        let Some(s) = scoring::score_of(&self.board, &self.features, root, complete) else {
            return;
        };
        events.push(s.event());
        for &player in &s.winners {
            self.award(
                Award {
                    player,
                    points: s.value.points,
                    source: Source::Feature(root),
                },
                events,
            );
        }
    }

    /// Meeples on a scored feature go back to their supplies (B6); then builders and pigs
    /// there (R11).
    fn return_meeples(&mut self, root: SegRef, events: &mut Vec<Event>) {
        let meeples = std::mem::take(&mut self.features.get_mut(root).meeples);
        for (player, seg, figure) in meeples {
            self.meeple_home(player, seg, figure, events);
        }
        notify!(self, events, Hook::MeeplesLeft, |m, ctx| m
            .on_meeples_left(ctx, root));
    }

    /// One meeple, standing on segment `seg`, goes back to its owner's supply (M15: "take back
    /// only that meeple"); the others on its feature stay. Nothing happens if none stands there.
    fn return_meeple(&mut self, seg: SegRef, events: &mut Vec<Event>) {
        let root = self.features.find(seg);
        let meeples = &mut self.features.get_mut(root).meeples;
        if let Some(i) = meeples.iter().position(|&(_, s, _)| s == seg) {
            let (player, _, figure) = meeples.remove(i);
            self.meeple_home(player, seg, figure, events);
            // R11, R12, R17: a builder or pig whose owner has no meeple left there goes too.
            notify!(self, events, Hook::MeeplesLeft, |m, ctx| m
                .on_meeples_left(ctx, root));
        }
    }

    /// A figure goes back to its owner's supply (B6, I6).
    fn meeple_home(
        &mut self,
        player: PlayerId,
        seg: SegRef,
        figure: Figure,
        events: &mut Vec<Event>,
    ) {
        let p = &mut self.players[player as usize];
        match figure {
            Figure::LargeMeeple => p.large += 1,
            _ => p.supply += 1,
        }
        self.on_board.retain(|&(_, s, _)| s != seg);
        events.push(Event::MeepleReturned {
            player,
            pos: self.board.pos(self.features.tile_of(seg)),
            target: self.features.target_of(&self.board, seg),
            figure,
        });
    }

    /// B7: incomplete roads, cities, monasteries, then fields (R13: with pigs); then the goods
    /// majorities (R14, last); then the game ends.
    fn final_scoring(&mut self, events: &mut Vec<Event>) {
        notify!(self, events, Hook::Final, |m, ctx| m.on_final(ctx));
        // Below every award final scoring pushes: the scores are complete when the game ends.
        self.agenda.push(Step::GameOver);
        let modules = &self.modules;
        let [roads, cities, monasteries, fields] =
            scoring::final_candidates(&self.features, |r| modules.final_wants(r));
        for root in roads.into_iter().chain(cities).chain(monasteries) {
            self.score_feature(root, false, events);
            notify!(self, events, Hook::FeatureScored, |m, ctx| m
                .on_feature_scored(ctx, root, true));
        }
        let touched = match fields.is_empty() {
            true => Vec::new(),
            false => scoring::cities_touched(&self.board, &self.features),
        };
        for root in fields {
            let (cities, points) = scoring::field_points(&touched, root);
            let (meeples, winners) = scoring::majority(&self.features, root);
            // R13: a winner whose own pig is in the field scores 4 a city.
            let pigs: Vec<PlayerId> = winners
                .iter()
                .copied()
                .filter(|&p| self.modules.pig_in(&self.features, p, root))
                .collect();
            for &player in &winners {
                let points = match pigs.contains(&player) {
                    true => 4 * cities,
                    false => points,
                };
                self.award(
                    Award {
                        player,
                        points,
                        source: Source::Field(root),
                    },
                    events,
                );
            }
            events.push(Event::FieldScored {
                pos: self.features.get(root).min,
                cities,
                meeples,
                points,
                winners,
                pigs,
            });
        }
        if self.modules.traders.is_some() {
            hook!(self, events, |m, ctx| m.final_goods(ctx));
        }
    }

    /// Gives back what the state's vectors reserved beyond their length: a server calls it once
    /// a match is replayed, so that a match in memory holds what it played, not a whole game.
    pub fn shrink_to_fit(&mut self) {
        self.board.shrink_to_fit();
        self.features.shrink_to_fit();
        self.pile.shrink_to_fit();
        self.agenda.shrink_to_fit();
        self.on_board.shrink_to_fit();
        self.discarded.shrink_to_fit();
    }

    pub fn is_finished(&self) -> bool {
        self.over
    }

    /// Scores in seat order.
    pub fn scores(&self) -> Vec<u32> {
        self.players.iter().map(|p| p.score).collect()
    }

    /// Meeples in each player's supply, in seat order.
    pub fn supplies(&self) -> Vec<u8> {
        self.players.iter().map(|p| p.supply).collect()
    }

    /// Builders and pigs on the board: owner, square and target, figure (Traders & Builders).
    pub fn builders_and_pigs_on_board(&self) -> Vec<(PlayerId, Pos, Target, Figure)> {
        self.modules
            .figures()
            .map(|(p, seg, figure)| {
                let pos = self.board.pos(self.features.tile_of(seg));
                (p, pos, self.features.target_of(&self.board, seg), figure)
            })
            .collect()
    }

    /// Meeples on the board, per player, in seat order (large meeples not counted).
    pub fn meeples_on_board(&self) -> Vec<u8> {
        self.figures_on_board(Figure::Meeple)
    }

    /// Inns & Cathedrals: large meeples in each player's supply, in seat order (I4).
    pub fn large_supplies(&self) -> Vec<u8> {
        self.players.iter().map(|p| p.large).collect()
    }

    /// Figures of one kind on the board, per player, in seat order.
    pub fn figures_on_board(&self, figure: Figure) -> Vec<u8> {
        let mut out = vec![0u8; self.players.len()];
        for &(p, _, f) in &self.on_board {
            if f == figure {
                out[p as usize] += 1;
            }
        }
        out
    }

    /// The secret state now (B9): seed, pile order, face-down chips, dispatch stack. Never part
    /// of [`Game::view`]; the server gives it to an admin for a match that is over.
    pub fn secrets(&self) -> crate::secrets::Secrets {
        crate::secrets::Secrets {
            seed: self.setup.seed,
            pile: self
                .pile
                .next_first()
                .map(|t| self.cat.get(t).id.to_string())
                .collect(),
            chips: self.modules.chips.as_ref().map_or_else(Vec::new, |c| {
                c.face_down()
                    .iter()
                    .map(|&(pos, chip)| crate::setup::ChipAt {
                        pos,
                        grape: chip.grape,
                        value: chip.value,
                    })
                    .collect()
            }),
            dispatches: self.modules.messages.as_ref().map(|m| m.stack_top_first()),
        }
    }

    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// The tile drawn and waiting to be placed (phase 1), if any.
    pub fn drawn_tile(&self) -> Option<&'static str> {
        self.tile_ask().map(|t| self.cat.get(t).id.as_str())
    }

    /// Whose turn it is.
    pub fn active(&self) -> PlayerId {
        self.active
    }

    /// The turn number, from 1 (0 before the first turn): a server's clock adds a player's
    /// increment when it changes.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Tiles left in the pile.
    pub fn pile_size(&self) -> usize {
        self.pile.len()
    }

    /// Every placed tile: position, tile id, rotation (for tests and tools).
    pub fn placed_tiles(&self) -> impl Iterator<Item = (Pos, &str, Rotation)> + '_ {
        self.board
            .placed
            .iter()
            .map(|p| (p.pos, self.cat.get(p.tile).id.as_str(), p.rot))
    }

    /// What the tile on `pos` shows on `side`, in board orientation.
    pub fn edge_at(&self, pos: Pos, side: Side) -> Option<crate::tiles::Edge> {
        let t = self.board.tile_at(pos)?;
        Some(self.board.edge_of(t, side))
    }

    /// Test only: switches on the test module whose decisions belong to non-active players.
    #[cfg(test)]
    pub(crate) fn with_witness(mut self, w: crate::modules::witness::Witness) -> Game {
        self.modules.witness = Some(w);
        self
    }

    #[cfg(test)]
    pub(crate) fn witness(&self) -> Option<&crate::modules::witness::Witness> {
        self.modules.witness.as_ref()
    }
}
