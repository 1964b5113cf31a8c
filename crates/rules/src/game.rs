//! The match: it owns the board, the features, the players, the modules and the agenda, and
//! orchestrates them (B3–B11). `apply` matches a command to an open decision of *that* player,
//! and the agenda runs until it needs a decision again.

use crate::command::{Command, Target};
use crate::decision::{Decision, Options, Placement};
use crate::engine::agenda::{Award, Source};
use crate::engine::board::{Board, MAX_PILE};
use crate::engine::features::Features;
use crate::engine::ids::{DecisionId, SegRef, TileRef};
use crate::engine::scoring;
use crate::error::{RuleError, SetupError};
use crate::event::Event;
use crate::geometry::{Pos, Rotation, Side};
use crate::modules::{Agenda, Ask, Ctx, Hook, Modules, Step};
use crate::setup::{PlayerId, Setup, StartSquare, StartTile};
use crate::tiles::{Catalogue, TileIdx, catalogue};
use crate::view::{Key, MeepleView, PlayerView, TileView, View};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct PlayerState {
    score: u32,
    supply: u8,
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
    /// For rules that draw at random (start tiles' turns, P2; later dispatches and chips).
    rng: ChaCha8Rng,
    /// The face-down pile; the next tile is the last element (secret, B9).
    pile: Vec<TileIdx>,
    discarded: Vec<TileIdx>,
    board: Board,
    features: Features,
    players: Vec<PlayerState>,
    /// Meeples on the board in the order they were placed: owner and segment.
    on_board: Vec<(PlayerId, SegRef)>,
    modules: Modules,
    agenda: Agenda,
    active: PlayerId,
    turn: u32,
    over: bool,
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

impl Game {
    /// Starts a match: places the start tiles, shuffles the pile with the seed, draws the first
    /// tile. Returns the opening events.
    pub fn start(setup: Setup) -> Result<(Game, Vec<Event>), SetupError> {
        let n = setup.players.len();
        if !(2..=6).contains(&n) {
            return Err(SetupError::PlayerCount(n));
        }
        for (i, c) in setup.players.iter().enumerate() {
            if setup.players[..i].contains(c) {
                return Err(SetupError::DuplicateColour(*c));
            }
        }
        if let Some(order) = &setup.dispatch_order
            && !crate::modules::messages::valid_order(order)
        {
            return Err(SetupError::DispatchOrder);
        }
        if !(1..=30).contains(&setup.meeples) {
            return Err(SetupError::Meeples(setup.meeples));
        }
        let cat = catalogue();
        let in_match = |set: &str| Modules::uses_set(&setup, set);
        let mut rng = ChaCha8Rng::seed_from_u64(setup.seed);
        // Carcassonne Maps (P1, P2): the map, and its bounding box as the board's outline.
        let map = match &setup.modules.map {
            Some(m) => Some(
                crate::maps::map(&m.map)
                    .ok_or_else(|| SetupError::Map(format!("unknown map `{}`", m.map)))?,
            ),
            None => None,
        };
        let bounds = match map {
            Some(m) => Some(crate::setup::Bounds {
                min: m.bounds().min,
                max: m.bounds().max,
            }),
            None => setup.bounds,
        };
        let starts = match setup.starts.is_empty() {
            true if map.is_some() => Vec::new(), // P2: chosen from the seed below
            true => vec![StartSquare {
                pos: Pos::new(0, 0),
                rotation: Rotation::default(),
                tile: StartTile::Start,
            }],
            false => setup.starts.clone(),
        };
        let mut choice = None;
        let starts = match (map, starts.is_empty()) {
            (Some(m), true) => {
                // P2: the start tile on one of two start squares, a drawn tile on the other.
                let requested = setup.modules.map.as_ref().and_then(|s| s.starts.as_ref());
                let names = requested.map(|[a, b]| [a.as_str(), b.as_str()]);
                let c = crate::maps::choose_starts(m, names, &mut rng)
                    .map_err(|e| SetupError::Map(e.to_string()))?;
                choice = Some(c);
                let [a, b] = c.squares(m);
                vec![
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
                ]
            }
            _ => starts,
        };
        let first = starts
            .iter()
            .position(|s| s.tile != StartTile::Open)
            .ok_or(SetupError::StartSquares("no start square holds a tile"))?;
        if starts.iter().filter(|s| s.tile == StartTile::Start).count() > 1 {
            return Err(SetupError::StartSquares("the start tile is on two squares"));
        }
        for (i, s) in starts.iter().enumerate() {
            if starts[..i].iter().any(|o| o.pos == s.pos) {
                return Err(SetupError::StartSquares("two start squares on one square"));
            }
            if bounds.is_some_and(|b| !b.contains(s.pos))
                || map.is_some_and(|m| !m.is_placeable(s.pos))
            {
                return Err(SetupError::StartSquares("a start square is off the map"));
            }
            // The grid is sized by the distance from (0, 0): keep it bounded like the pile.
            let far = MAX_PILE as u32;
            if s.pos.x.unsigned_abs() > far || s.pos.y.unsigned_abs() > far {
                return Err(SetupError::StartSquares(
                    "a start square lies more than 500 squares from (0, 0)",
                ));
            }
        }
        let start_in_pile = starts.iter().all(|s| s.tile != StartTile::Start);
        let mut pile: Vec<TileIdx> = match &setup.draw_order {
            Some(order) => {
                let mut pile = Vec::with_capacity(order.len());
                for id in order {
                    match cat.find(id) {
                        Some(i) if in_match(&cat.get(i).set) => pile.push(i),
                        _ => return Err(SetupError::UnknownTile(id.clone())),
                    }
                }
                pile.reverse();
                pile
            }
            None => {
                let mut pile = Vec::new();
                for (i, t) in cat.tiles.iter().enumerate() {
                    if in_match(&t.set) {
                        let on_table = i as TileIdx == cat.start && !start_in_pile;
                        let copies = t.count - u32::from(on_table);
                        pile.extend(std::iter::repeat_n(i as TileIdx, copies as usize));
                    }
                }
                // Fisher–Yates with our own draws, so the order depends only on the seed.
                for i in (1..pile.len()).rev() {
                    let j = ((u128::from(rng.next_u64()) * (i as u128 + 1)) >> 64) as usize;
                    pile.swap(i, j);
                }
                pile
            }
        };
        if pile.len() > MAX_PILE {
            return Err(SetupError::PileTooLarge(pile.len()));
        }
        pile.shrink_to_fit();
        let total = pile.len() + starts.len();
        let players = (0..n)
            .map(|_| PlayerState {
                score: 0,
                supply: setup.meeples,
            })
            .collect();
        let mut game = Game {
            cat,
            rng,
            pile,
            discarded: Vec::new(),
            board: Board::new(cat, total, bounds),
            features: Features::default(),
            players,
            on_board: Vec::new(),
            modules: Modules::new(&setup),
            agenda: Agenda::default(),
            active: 0,
            turn: 0,
            over: false,
            setup,
        };
        if let Some(m) = map {
            game.board.set_map(m);
        }
        let mut events = Vec::new();
        for (i, s) in starts.iter().enumerate() {
            let (tile, rotation) = match s.tile {
                StartTile::Start => (cat.start, s.rotation),
                StartTile::Drawn => {
                    let tile = game
                        .pile
                        .pop()
                        .ok_or(SetupError::StartSquares("the pile is empty"))?;
                    let quarters = (game.rng.next_u64() % 4) as u8;
                    (tile, Rotation::from_quarters(quarters))
                }
                StartTile::Open => continue,
            };
            game.put_tile(tile, s.pos, rotation);
            let id = cat.get(tile).id.to_string();
            events.push(if i == first {
                Event::GameStarted {
                    players: game.setup.players.clone(),
                    start_tile: id,
                    pos: s.pos,
                    rotation,
                    pile: 0,
                }
            } else {
                Event::StartTilePlaced {
                    tile: id,
                    pos: s.pos,
                    rotation,
                }
            });
        }
        for s in starts.iter().filter(|s| s.tile == StartTile::Open) {
            game.board.open_square(s.pos, 0);
        }
        // P7: the chips, face down, after the start tiles (their random tile's turn drawn first).
        if let (Some(m), Some(chips)) = (map, &mut game.modules.chips) {
            let forced = game
                .setup
                .modules
                .map
                .as_ref()
                .and_then(|s| s.chip_layout.clone());
            let laid = match forced {
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
                        let chip = crate::maps::Chip {
                            grape: c.grape,
                            value: c.value,
                        };
                        laid.push((c.pos, chip));
                    }
                    laid
                }
                None => {
                    let c = choice.ok_or_else(|| {
                        SetupError::Map(
                            "the chips need the map's start squares or a chip layout".into(),
                        )
                    })?;
                    crate::maps::lay_chips(m, c, &mut game.rng)
                        .map_err(|e| SetupError::Map(e.to_string()))?
                }
            };
            chips.lay(laid);
        }
        if let Some(Event::GameStarted { pile, .. }) = events.first_mut() {
            *pile = game.pile.len() as u32;
        }
        game.agenda.push(Step::BeginTurn);
        game.run(&mut events);
        Ok((game, events))
    }

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
            (&Ask::PlaceFollower { tile: t, .. }, &Command::PlaceMeeple { target }) => {
                let seg = self.check_meeple(player, t, target)?;
                let root = self.features.find(seg);
                self.features.get_mut(root).meeples.push((player, seg));
                self.on_board.push((player, seg));
                self.players[player as usize].supply -= 1;
                // Named canonically (first side or half in board order), as the view and
                // `meeple_returned` name it, whichever side the player wrote.
                events.push(Event::MeeplePlaced {
                    player,
                    pos: self.board.pos(t),
                    target: self.features.target_of(&self.board, seg),
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
            (Ask::PlaceFollower { .. }, _) => {
                hook!(self, events, |m, ctx| m
                    .answer_follower(ctx, player, command))
            }
            (Ask::Module { ask, .. }, _) => {
                hook!(self, events, |m, ctx| m.answer(ctx, player, ask, command))
            }
        }
    }

    /// Runs the agenda until it needs a decision or the game is over.
    fn run(&mut self, events: &mut Vec<Event>) {
        while let Some(step) = self.agenda.next() {
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
        }
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

    fn check_meeple(
        &self,
        player: PlayerId,
        t: TileRef,
        target: Target,
    ) -> Result<SegRef, RuleError> {
        if self.players[player as usize].supply == 0 {
            return Err(RuleError::NoMeepleLeft);
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
        while let Some(tile) = self.pile.pop() {
            let kind = self.cat.get(tile);
            events.push(Event::TileDrawn {
                player: self.active,
                tile: kind.id.to_string(),
            });
            if self.board.fits_anywhere(&kind.fits) {
                self.agenda.push(Step::Ask(Ask::PlaceTile {
                    player: self.active,
                    tile,
                }));
                return;
            }
            self.discarded.push(tile);
            events.push(Event::TileDiscarded {
                player: self.active,
                tile: kind.id.to_string(),
            });
        }
        if !extra {
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

    /// Meeples on a scored feature go back to their supplies (B6).
    fn return_meeples(&mut self, root: SegRef, events: &mut Vec<Event>) {
        let meeples = std::mem::take(&mut self.features.get_mut(root).meeples);
        for (player, seg) in meeples {
            self.meeple_home(player, seg, events);
        }
    }

    /// One meeple, standing on segment `seg`, goes back to its owner's supply (M15: "take back
    /// only that meeple"); the others on its feature stay. Nothing happens if none stands there.
    fn return_meeple(&mut self, seg: SegRef, events: &mut Vec<Event>) {
        let root = self.features.find(seg);
        let meeples = &mut self.features.get_mut(root).meeples;
        if let Some(i) = meeples.iter().position(|&(_, s)| s == seg) {
            let (player, _) = meeples.remove(i);
            self.meeple_home(player, seg, events);
        }
    }

    fn meeple_home(&mut self, player: PlayerId, seg: SegRef, events: &mut Vec<Event>) {
        self.players[player as usize].supply += 1;
        self.on_board.retain(|&(_, s)| s != seg);
        events.push(Event::MeepleReturned {
            player,
            pos: self.board.pos(self.features.tile_of(seg)),
            target: self.features.target_of(&self.board, seg),
        });
    }

    /// B7: incomplete roads, cities, monasteries, then fields; then the game ends.
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
            for &player in &winners {
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
            });
        }
    }

    // ---- decisions ----

    /// The decisions open now, oldest first (empty when the game is over).
    pub fn decisions(&self) -> Vec<Decision> {
        self.agenda
            .open()
            .iter()
            .map(|o| self.decision_of(&o.ask))
            .collect()
    }

    /// The decisions open now with their stable ids.
    pub fn open_decisions(&self) -> Vec<(DecisionId, Decision)> {
        self.agenda
            .open()
            .iter()
            .map(|o| (o.id, self.decision_of(&o.ask)))
            .collect()
    }

    /// The open decisions' ids and whose each is, without building them (cheap: a server
    /// tracks when each opened after every command, replays included).
    pub fn open_asks(&self) -> impl Iterator<Item = (DecisionId, PlayerId)> + '_ {
        self.agenda.open().iter().map(|o| (o.id, o.ask.player()))
    }

    /// The oldest open decision and whose it is (bots).
    #[inline]
    pub fn first_decision(&self) -> Option<(DecisionId, PlayerId)> {
        self.agenda.open().first().map(|o| (o.id, o.ask.player()))
    }

    #[inline]
    fn open_ask(&self, id: DecisionId) -> Option<&Ask> {
        self.agenda
            .open()
            .iter()
            .find(|o| o.id == id)
            .map(|o| &o.ask)
    }

    fn decision_of(&self, ask: &Ask) -> Decision {
        let o = AskOptions { game: self, ask };
        match *ask {
            Ask::PlaceTile { player, tile } => Decision::PlaceTile {
                player,
                tile: self.cat.get(tile).id.clone(),
                placements: self.placements_for(tile),
            },
            Ask::PlaceFollower { player, tile } => Decision::PlaceFollower {
                player,
                pos: self.board.pos(tile),
                meeple_targets: self
                    .free_segments(player, tile)
                    .map(|s| self.features.target_of(&self.board, s))
                    .collect(),
                tollhouse_targets: (1..o.groups())
                    .flat_map(|g| o.list(g))
                    .filter_map(|c| match c {
                        Command::PlaceTollhouse { pos } => Some(pos),
                        _ => None,
                    })
                    .collect(),
            },
            Ask::Module { player, ref ask } => self.modules.decision(player, ask),
        }
    }

    /// The options of an open decision, in the one shape every decision kind has.
    #[inline]
    pub fn options(&self, id: DecisionId) -> Option<AskOptions<'_>> {
        Some(AskOptions {
            game: self,
            ask: self.open_ask(id)?,
        })
    }

    /// The deterministic default answer of an open decision, sent (as a logged command) when a
    /// clock runs out. Phase 1: the first legal placement, by square (x, then y) and then the
    /// least clockwise rotation; phase 2: pass; a module's decision: the module's default.
    pub fn default_command(&self, id: DecisionId) -> Option<(PlayerId, Command)> {
        let ask = self.open_ask(id)?;
        let command = match *ask {
            Ask::PlaceTile { tile, .. } => {
                let (pos, fits) = self
                    .board
                    .fitting(&self.cat.get(tile).fits)
                    .min_by_key(|&(pos, _)| pos)?;
                Command::PlaceTile {
                    pos,
                    rotation: Rotation::from_quarters(fits.trailing_zeros() as u8),
                }
            }
            Ask::PlaceFollower { .. } => Command::Pass {},
            Ask::Module { ref ask, player } => {
                self.modules.default_command(player, self.active, ask)
            }
        };
        Some((ask.player(), command))
    }

    /// The open phase 1 decision, if any: the tile to place.
    #[inline]
    fn tile_ask(&self) -> Option<TileIdx> {
        self.agenda.open().iter().find_map(|o| match o.ask {
            Ask::PlaceTile { tile, .. } => Some(tile),
            _ => None,
        })
    }

    /// The open phase 2 decision, if any: who decides, on which tile.
    #[inline]
    fn follower_ask(&self) -> Option<(PlayerId, TileRef)> {
        self.agenda.open().iter().find_map(|o| match o.ask {
            Ask::PlaceFollower { player, tile } => Some((player, tile)),
            _ => None,
        })
    }

    fn placements_for(&self, tile: TileIdx) -> Vec<Placement> {
        let mut out = Vec::new();
        self.refill_placements(tile, &mut out);
        out
    }

    /// [`Game::placements_for`] into `out`, reusing its placements' vectors (a refreshed view's
    /// placement list would otherwise allocate one rotation list per square every turn).
    fn refill_placements(&self, tile: TileIdx, out: &mut Vec<Placement>) {
        let mut n = 0;
        for (pos, m) in self.board.fitting(&self.cat.get(tile).fits) {
            let rotations = Rotation::ALL
                .into_iter()
                .filter(|r| m & (1 << r.quarters()) != 0);
            match out.get_mut(n) {
                Some(p) => {
                    p.pos = pos;
                    p.rotations.clear();
                    p.rotations.extend(rotations);
                }
                None => out.push(Placement {
                    pos,
                    rotations: rotations.collect(),
                }),
            }
            n += 1;
        }
        out.truncate(n);
        // Squares are distinct: the order is the one a fresh list sorted by square has.
        out.sort_unstable_by_key(|p| p.pos);
    }

    /// [`Game::decisions`] into `out`, reusing a placement list already there.
    fn refresh_decisions(&self, out: &mut Vec<Decision>) {
        let open = self.agenda.open();
        out.truncate(open.len());
        for (i, o) in open.iter().enumerate() {
            match (&o.ask, out.get_mut(i)) {
                (
                    &Ask::PlaceTile { player, tile },
                    Some(Decision::PlaceTile {
                        player: p,
                        tile: t,
                        placements,
                    }),
                ) => {
                    *p = player;
                    let id = &self.cat.get(tile).id;
                    if t != id {
                        t.clone_from(id);
                    }
                    self.refill_placements(tile, placements);
                }
                (ask, Some(d)) => *d = self.decision_of(ask),
                (ask, None) => out.push(self.decision_of(ask)),
            }
        }
    }

    /// Where the drawn tile may go, by square (sorted), with the rotations that fit (B4).
    pub fn legal_placements(&self) -> Vec<Placement> {
        self.tile_ask()
            .map(|t| self.placements_for(t))
            .unwrap_or_default()
    }

    /// Every legal (square, rotation) for the drawn tile, unsorted, into `out` (fast path for
    /// bots and benchmarks).
    pub fn placements_into(&self, out: &mut Vec<(Pos, Rotation)>) {
        match self.tile_ask() {
            Some(tile) => self.board.placements(&self.cat.get(tile).fits, out),
            None => out.clear(),
        }
    }

    /// How many legal (square, rotation) pairs the drawn tile has; 0 outside phase 1.
    pub fn placement_count(&self) -> usize {
        self.tile_ask()
            .map_or(0, |t| self.board.placement_count(&self.cat.get(t).fits))
    }

    /// The `k`-th legal (square, rotation) pair of the drawn tile, in the order of
    /// [`Game::placements_into`].
    pub fn placement(&self, k: usize) -> Option<(Pos, Rotation)> {
        self.board
            .placement(&self.cat.get(self.tile_ask()?).fits, k)
    }

    /// Where a tile of design `tile` could go on the board now (for any design, drawn or not:
    /// clients' hints, bots, benchmarks). Returns false for an unknown id.
    pub fn placements_of(&self, tile: &str, out: &mut Vec<(Pos, Rotation)>) -> bool {
        match self.cat.find(tile) {
            Some(t) => {
                self.board.placements(&self.cat.get(t).fits, out);
                true
            }
            None => {
                out.clear();
                false
            }
        }
    }

    /// Features of the tile just placed that may take a meeple now (B5); empty outside phase 2
    /// or with an empty supply.
    pub fn meeple_targets(&self) -> Vec<Target> {
        self.follower_segments()
            .map(|s| self.features.target_of(&self.board, s))
            .collect()
    }

    /// How many targets [`Game::meeple_targets`] would list, without naming them (bots).
    pub fn meeple_target_count(&self) -> usize {
        self.follower_segments().count()
    }

    /// The `i`-th of [`Game::meeple_targets`].
    pub fn meeple_target(&self, i: usize) -> Option<Target> {
        self.follower_segments()
            .nth(i)
            .map(|s| self.features.target_of(&self.board, s))
    }

    fn follower_segments(&self) -> impl Iterator<Item = SegRef> + '_ {
        let (player, tile) = self.follower_ask().unwrap_or((0, TileRef::MAX));
        self.free_segments(player, tile)
    }

    /// Segments of tile `t` whose feature holds no meeple, when `player` has a meeple to place
    /// (B5). `t == TileRef::MAX`: none.
    #[inline]
    fn free_segments(&self, player: PlayerId, t: TileRef) -> impl Iterator<Item = SegRef> + '_ {
        let range = match t != TileRef::MAX && self.players[player as usize].supply > 0 {
            true => self.features.segs_of(&self.board, t),
            false => 0..0,
        };
        range.filter(|&s| self.features.get(self.features.find(s)).meeples.is_empty())
    }

    /// Crossroads where the deciding player may put or move their tollhouse now (T2–T5); empty
    /// outside phase 2 or without The Tollkeepers.
    pub fn tollhouse_targets(&self) -> Vec<Pos> {
        (0..self.tollhouse_target_count())
            .filter_map(|i| self.tollhouse_target(i))
            .collect()
    }

    /// The `i`-th of [`Game::tollhouse_targets`], without listing them (bots).
    pub fn tollhouse_target(&self, i: usize) -> Option<Pos> {
        self.follower_ask()?;
        match self.modules.follower_nth(0, i, &self.board)? {
            Command::PlaceTollhouse { pos } => Some(pos),
            _ => None,
        }
    }

    /// How many crossroads [`Game::tollhouse_targets`] would list, without listing them (bots).
    pub fn tollhouse_target_count(&self) -> usize {
        match self.follower_ask() {
            Some(_) if self.modules.follower_groups() > 0 => {
                self.modules.follower_len(0, &self.board)
            }
            _ => 0,
        }
    }

    // ---- the public projection ----

    /// The public view (B9).
    pub fn view(&self) -> View {
        let players = self
            .players
            .iter()
            .zip(&self.setup.players)
            .enumerate()
            .map(|(i, (p, colour))| PlayerView {
                colour: *colour,
                score: p.score,
                meeples: p.supply,
                tollhouse: self.modules.tollhouse_view(i as PlayerId, &self.board),
            })
            .collect();
        let board = self
            .board
            .placed
            .iter()
            .map(|p| {
                (
                    p.pos.key(),
                    TileView {
                        tile: self.cat.get(p.tile).id.clone(),
                        rotation: p.rot,
                    },
                )
            })
            .collect();
        let meeples = self
            .on_board
            .iter()
            .map(|&(player, seg)| {
                let pos = self.board.pos(self.features.tile_of(seg));
                let target = self.features.target_of(&self.board, seg);
                (
                    compact_str::format_compact!("{pos} {target}"),
                    MeepleView {
                        player,
                        pos,
                        target,
                    },
                )
            })
            .collect();
        let mut pile = BTreeMap::new();
        for &t in &self.pile {
            *pile.entry(self.cat.get(t).id.clone()).or_insert(0) += 1;
        }
        View {
            modules: self.setup.modules.clone(),
            players,
            board,
            meeples,
            pile,
            pile_size: self.pile.len() as u32,
            discarded: self
                .discarded
                .iter()
                .map(|&t| self.cat.get(t).id.clone())
                .collect(),
            turn: self.turn,
            active: self.active,
            drawn: self.tile_ask().map(|t| self.cat.get(t).id.clone()),
            decisions: self.decisions(),
            finished: self.over,
            messages: self.modules.messages_view(),
            map: self.map_view(),
        }
    }

    /// Brings `view`, an earlier [`Game::view`] of this game, up to date in place: the same
    /// value as `self.view()`, reusing its allocations. Placed tiles are only ever appended, so
    /// only the new ones are keyed and inserted; the pile is recounted without allocating; the
    /// printed map is kept. A long-lived view (the server's, per move) costs a fraction of a new
    /// one. A view that is not an earlier one of this game (more tiles placed) is rebuilt.
    pub fn refresh_view(&self, view: &mut View) {
        if view.board.len() > self.board.placed.len()
            || view.players.len() != self.players.len()
            || view.modules != self.setup.modules
        {
            *view = self.view();
            return;
        }
        let players = self.players.iter().zip(&self.setup.players).enumerate();
        for (v, (i, (p, colour))) in view.players.iter_mut().zip(players) {
            v.colour = *colour;
            v.score = p.score;
            v.meeples = p.supply;
            v.tollhouse = self.modules.tollhouse_view(i as PlayerId, &self.board);
        }
        for p in &self.board.placed[view.board.len()..] {
            view.board.insert(
                p.pos.key(),
                TileView {
                    tile: self.cat.get(p.tile).id.clone(),
                    rotation: p.rot,
                },
            );
        }
        // A few meeples at most, and most moves move none: rebuilt only when one differs (a
        // meeple's value decides its key, so equal values mean equal entries). Each meeple's
        // target is worked out once, not once per comparison.
        let meeples: Vec<MeepleView> = self
            .on_board
            .iter()
            .map(|&(player, seg)| MeepleView {
                player,
                pos: self.board.pos(self.features.tile_of(seg)),
                target: self.features.target_of(&self.board, seg),
            })
            .collect();
        let same = view.meeples.len() == meeples.len()
            && meeples
                .iter()
                .all(|m| view.meeples.values().any(|v| v == m))
            && view.meeples.values().all(|v| meeples.contains(v));
        if !same {
            view.meeples.clear();
            for m in meeples {
                let mut key = m.pos.key();
                key.push(' ');
                let _ = std::fmt::Write::write_fmt(&mut key, format_args!("{}", m.target));
                view.meeples.insert(key, m);
            }
        }
        self.refresh_pile(&mut view.pile);
        view.pile_size = self.pile.len() as u32;
        let discarded = self.discarded.iter().map(|&t| &self.cat.get(t).id);
        if !view.discarded.iter().eq(discarded.clone()) {
            view.discarded = discarded.cloned().collect();
        }
        view.turn = self.turn;
        view.active = self.active;
        let drawn = self.tile_ask().map(|t| &self.cat.get(t).id);
        if view.drawn.as_ref() != drawn {
            view.drawn = drawn.cloned();
        }
        self.refresh_decisions(&mut view.decisions);
        view.finished = self.over;
        view.messages = self.modules.messages_view();
        match (&mut view.map, self.board.map()) {
            // The printed map never changes: only the chips are brought up to date.
            (Some(v), Some(_)) => {
                let chips = self.modules.chips.as_ref();
                v.chips.clear();
                if let Some(c) = chips {
                    v.chips.extend(c.lying());
                }
                v.hands.clear();
                if let Some(c) = chips {
                    v.hands
                        .extend((0..self.players.len()).map(|p| c.hand(p as PlayerId).to_vec()));
                }
            }
            _ => view.map = self.map_view(),
        }
    }

    /// Squares of the tiles placed after the first `n`: between a view with `n` tiles on its
    /// board and the view now, the only squares of the board that can differ (placed tiles never
    /// move, turn or leave), so a differ need not walk the rest.
    pub fn placed_since(&self, n: usize) -> impl Iterator<Item = Pos> + '_ {
        self.board
            .placed
            .get(n..)
            .unwrap_or_default()
            .iter()
            .map(|p| p.pos)
    }

    /// Brings a view's pile (tile id → copies left) up to date: the copies counted per design,
    /// then the map walked once in key order beside the designs in id order, so that no tile
    /// costs a search by its id and no key is allocated unless a design is missing from the map.
    fn refresh_pile(&self, pile: &mut BTreeMap<Key, u32>) {
        let mut counts = vec![0u32; self.cat.tiles.len()];
        for &t in &self.pile {
            counts[t as usize] += 1;
        }
        let left = self
            .cat
            .in_id_order()
            .iter()
            .filter(|&&t| counts[t as usize] > 0);
        // One walk of the map beside the designs: counts set in place, and the keys of designs
        // with no copy left noted, then removed one by one (a draw often takes a design's only
        // copy: a `retain` would rebuild its way through the whole map for that one key).
        let mut next = left.clone().peekable();
        let mut missing = false;
        let mut stale: Vec<Key> = Vec::new();
        for (id, n) in pile.iter_mut() {
            loop {
                let Some(&&t) = next.peek() else {
                    stale.push(id.clone());
                    break;
                };
                match id.as_str().cmp(self.cat.get(t).id.as_str()) {
                    std::cmp::Ordering::Equal => {
                        *n = counts[t as usize];
                        next.next();
                        break;
                    }
                    // No copy of this design is left.
                    std::cmp::Ordering::Less => {
                        stale.push(id.clone());
                        break;
                    }
                    // A design with copies left is not in the map.
                    std::cmp::Ordering::Greater => {
                        missing = true;
                        next.next();
                    }
                }
            }
        }
        for id in &stale {
            pile.remove(id.as_str());
        }
        if missing || next.peek().is_some() {
            for &t in left {
                let id = &self.cat.get(t).id;
                match pile.get_mut(id.as_str()) {
                    Some(n) => *n = counts[t as usize],
                    None => {
                        pile.insert(id.clone(), counts[t as usize]);
                    }
                }
            }
        }
    }

    /// The map's part of the view (P1–P10).
    fn map_view(&self) -> Option<Box<crate::view::MapView>> {
        let map = self.board.map()?;
        let chips = self.modules.chips.as_ref();
        Some(Box::new(crate::view::MapView {
            info: map.shared_info(),
            chips: chips.map_or_else(Vec::new, |c| c.lying().collect()),
            hands: chips.map_or_else(Vec::new, |c| {
                (0..self.players.len())
                    .map(|p| c.hand(p as PlayerId).to_vec())
                    .collect()
            }),
        }))
    }

    /// Gives back what the state's vectors reserved beyond their length: a server calls it once
    /// a match is replayed, so that a match in memory holds what it played, not a whole game.
    pub fn shrink_to_fit(&mut self) {
        self.board.shrink_to_fit();
        self.features.shrink_to_fit();
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

    /// Meeples on the board, per player, in seat order.
    pub fn meeples_on_board(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.players.len()];
        for &(p, _) in &self.on_board {
            out[p as usize] += 1;
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
                .iter()
                .rev()
                .map(|&t| self.cat.get(t).id.to_string())
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

/// The options of one open decision: groups of commands (phase 2: meeple targets, then each
/// module's group, such as tollhouse squares), and whether `pass` is allowed. Counting and
/// indexing do not list anything.
#[derive(Debug, Clone, Copy)]
pub struct AskOptions<'a> {
    game: &'a Game,
    ask: &'a Ask,
}

impl Options for AskOptions<'_> {
    #[inline]
    fn player(&self) -> PlayerId {
        self.ask.player()
    }

    #[inline]
    fn groups(&self) -> usize {
        match self.ask {
            Ask::PlaceTile { .. } => 1,
            Ask::PlaceFollower { .. } => 1 + self.game.modules.follower_groups(),
            Ask::Module { ask, .. } => self.game.modules.options(ask).0,
        }
    }

    #[inline]
    fn len(&self, group: usize) -> usize {
        let g = self.game;
        match *self.ask {
            Ask::PlaceTile { tile, .. } => g.board.placement_count(&g.cat.get(tile).fits),
            Ask::PlaceFollower { player, tile } => match group {
                0 => g.free_segments(player, tile).count(),
                m => g.modules.follower_len(m - 1, &g.board),
            },
            Ask::Module { ref ask, .. } => g.modules.option_len(ask, group),
        }
    }

    #[inline]
    fn nth(&self, group: usize, i: usize) -> Option<Command> {
        let g = self.game;
        match *self.ask {
            Ask::PlaceTile { tile, .. } => {
                let (pos, rotation) = g.board.placement(&g.cat.get(tile).fits, i)?;
                Some(Command::PlaceTile { pos, rotation })
            }
            Ask::PlaceFollower { player, tile } => match group {
                0 => {
                    let seg = g.free_segments(player, tile).nth(i)?;
                    Some(Command::PlaceMeeple {
                        target: g.features.target_of(&g.board, seg),
                    })
                }
                m => g.modules.follower_nth(m - 1, i, &g.board),
            },
            Ask::Module { ref ask, .. } => g.modules.option_nth(ask, group, i),
        }
    }

    #[inline]
    fn may_pass(&self) -> bool {
        match self.ask {
            Ask::PlaceTile { .. } => false,
            Ask::PlaceFollower { .. } => true,
            Ask::Module { ask, .. } => self.game.modules.options(ask).1,
        }
    }
}
