//! A second, naive implementation of the scoring rules (B4–B7, T6–T10, I5–I10), recomputing every
//! feature from scratch by walking the board after each command, compared with the engine over
//! many random games: legal placements, discards, scores after every command, meeple supplies
//! and final scoring must agree.

use carcassonne_rules::{
    Colour, Command, Event, FeatureKind, Figure, Game, Half, PictureKind, Pos, Rotation, Setup,
    Side, Target, TileDesign, bot, catalogue,
};
use std::collections::{BTreeMap, BTreeSet};

type Node = (Pos, usize);

#[derive(Default)]
struct Model {
    board: BTreeMap<Pos, (&'static TileDesign, Rotation)>,
    /// Meeples on the board: owner, node, and whether it is a large meeple (I5: counts 2).
    meeples: Vec<(u8, Node, bool)>,
    /// Completed features already scored, by their smallest node; monasteries by their node.
    scored: BTreeSet<Node>,
    scores: Vec<u32>,
    supply: Vec<u8>,
    /// Large meeples in each supply (I4).
    large: Vec<u8>,
    /// Tollhouse per player: crossroads square and value.
    tollhouses: Vec<Option<(Pos, u8)>>,
}

struct Feature {
    kind: FeatureKind,
    nodes: Vec<Node>,
    tiles: BTreeSet<Pos>,
    /// An inn beside the road (I7) or a cathedral in the city (I9).
    special: bool,
    open: u32,
    coats: u32,
}

fn unrot(r: Rotation) -> Rotation {
    Rotation::from_quarters(4 - r.quarters())
}

fn edge_code(k: &TileDesign, r: Rotation, side: Side) -> u8 {
    k.edges[side.rotate(unrot(r)).index()] as u8
}

impl Model {
    fn fits(&self, k: &TileDesign, pos: Pos, r: Rotation) -> bool {
        if self.board.contains_key(&pos) {
            return false;
        }
        let mut touches = false;
        for side in Side::ALL {
            if let Some(&(nk, nr)) = self.board.get(&pos.step(side)) {
                touches = true;
                if edge_code(k, r, side) != edge_code(nk, nr, side.opposite()) {
                    return false;
                }
            }
        }
        touches
    }

    fn legal_count(&self, k: &TileDesign) -> usize {
        let mut squares = BTreeSet::new();
        for &p in self.board.keys() {
            for s in Side::ALL {
                squares.insert(p.step(s));
            }
        }
        squares
            .into_iter()
            .map(|p| {
                Rotation::ALL
                    .iter()
                    .filter(|&&r| self.fits(k, p, r))
                    .count()
            })
            .sum()
    }

    /// The segment of the tile on `pos` reaching board side `side` (road or city).
    fn seg_at_side(&self, pos: Pos, side: Side) -> Option<usize> {
        let (k, r) = self.board.get(&pos)?;
        let own = side.rotate(unrot(*r));
        k.segments.iter().position(|s| {
            matches!(s.kind, FeatureKind::Road | FeatureKind::City)
                && s.sides & (1 << own.index()) != 0
        })
    }

    fn seg_at_half(&self, pos: Pos, h: Half) -> Option<usize> {
        let (k, r) = self.board.get(&pos)?;
        let own = h.rotate(unrot(*r));
        k.segments
            .iter()
            .position(|s| s.kind == FeatureKind::Field && s.halves & (1 << own.index()) != 0)
    }

    fn node_of(&self, pos: Pos, target: Target) -> Node {
        let (k, _) = self.board[&pos];
        let seg = match target {
            Target::Road(s) | Target::City(s) => self.seg_at_side(pos, s),
            Target::Field(h) => self.seg_at_half(pos, h),
            Target::InnerField => k
                .segments
                .iter()
                .position(|s| s.kind == FeatureKind::Field && s.halves == 0),
            Target::Monastery => k
                .segments
                .iter()
                .position(|s| s.kind == FeatureKind::Monastery),
        };
        (pos, seg.expect("the engine accepted this target"))
    }

    /// The feature holding `start`, by a walk over the board.
    fn feature(&self, start: Node) -> Feature {
        let kind = self.board[&start.0].0.segments[start.1].kind;
        let mut seen = BTreeSet::from([start]);
        let mut todo = vec![start];
        let mut open = 0;
        let mut coats = 0;
        let mut special = false;
        while let Some((pos, i)) = todo.pop() {
            let (k, r) = self.board[&pos];
            let seg = &k.segments[i];
            coats += u32::from(seg.coat);
            special |= seg.inn || seg.cathedral;
            let mut next = Vec::new();
            match kind {
                FeatureKind::Road | FeatureKind::City => {
                    for own in Side::ALL {
                        if seg.sides & (1 << own.index()) == 0 {
                            continue;
                        }
                        let side = own.rotate(r);
                        let n = pos.step(side);
                        match self.seg_at_side(n, side.opposite()) {
                            Some(j) => next.push((n, j)),
                            None => open += 1,
                        }
                    }
                }
                FeatureKind::Field => {
                    for own in Half::ALL {
                        if seg.halves & (1 << own.index()) == 0 {
                            continue;
                        }
                        let h = own.rotate(r);
                        let n = pos.step(h.side());
                        if let Some(j) = self.seg_at_half(n, h.facing()) {
                            next.push((n, j));
                        }
                    }
                }
                FeatureKind::Monastery => {}
            }
            for n in next {
                if seen.insert(n) {
                    todo.push(n);
                }
            }
        }
        let nodes: Vec<Node> = seen.into_iter().collect();
        Feature {
            kind,
            tiles: nodes.iter().map(|n| n.0).collect(),
            nodes,
            open,
            coats,
            special,
        }
    }

    fn winners(&self, f: &Feature) -> Vec<u8> {
        let mut counts = vec![0u32; self.scores.len()];
        for (p, n, large) in &self.meeples {
            if f.nodes.contains(n) {
                counts[*p as usize] += if *large { 2 } else { 1 };
            }
        }
        let max = counts.iter().copied().max().unwrap_or(0);
        if max == 0 {
            return Vec::new();
        }
        (0..counts.len() as u8)
            .filter(|&p| counts[p as usize] == max)
            .collect()
    }

    fn ring_count(&self, pos: Pos) -> usize {
        let mut n = 0;
        for dx in -1..=1 {
            for dy in -1..=1 {
                if (dx, dy) != (0, 0) && self.board.contains_key(&Pos::new(pos.x + dx, pos.y + dy))
                {
                    n += 1;
                }
            }
        }
        n
    }

    /// Pictures along a road, as tolls count them (each picture once, even one beside two of
    /// the road's segments, I3), and the crossroads at its ends (T6–T8).
    fn along(&self, f: &Feature) -> (u32, u32, BTreeSet<Pos>) {
        let mut seen: BTreeSet<(Pos, usize)> = BTreeSet::new();
        let (mut pictures, mut travellers) = (0, 0);
        let mut ends = BTreeSet::new();
        for &(pos, i) in &f.nodes {
            let k = self.board[&pos].0;
            for (pi, p) in k.pictures.iter().enumerate() {
                if !p.roads.contains(&(i as u8)) || !seen.insert((pos, pi)) {
                    continue;
                }
                match p.kind {
                    PictureKind::WaterTower => {}
                    PictureKind::Travellers => travellers += 1,
                    _ => pictures += 1,
                }
            }
            let seg = &k.segments[i];
            if k.is_crossroads() && seg.end == Some(carcassonne_rules::RoadEnd::Village) {
                ends.insert(pos);
            }
        }
        (pictures, travellers, ends)
    }

    fn tolls(&mut self, f: &Feature, last: bool, turned: &mut BTreeSet<usize>) {
        let (pictures, travellers, ends) = self.along(f);
        for p in 0..self.scores.len() {
            if let Some((at, v)) = self.tollhouses[p]
                && ends.contains(&at)
            {
                let v = if last { 1 } else { u32::from(v) };
                let per_group = if last { 1 } else { 3 * v };
                self.scores[p] += v * pictures + per_group * travellers;
                if !last && travellers > 0 {
                    turned.insert(p);
                }
            }
        }
    }

    /// Scoring at the end of a turn in which a tile went on `pos` (B6, T6–T9).
    fn end_turn(&mut self, pos: Pos) {
        let (k, _) = self.board[&pos];
        let mut turned = BTreeSet::new();
        for i in 0..k.segments.len() {
            let f = self.feature((pos, i));
            if !matches!(f.kind, FeatureKind::Road | FeatureKind::City) || f.open != 0 {
                continue;
            }
            if !self.scored.insert(f.nodes[0]) {
                continue;
            }
            // I7, I9: an inn doubles a road, a cathedral makes a city 3 a tile and coat.
            let points = match (f.kind, f.special) {
                (FeatureKind::Road, false) => f.tiles.len() as u32,
                (FeatureKind::Road, true) => 2 * f.tiles.len() as u32,
                (_, false) => 2 * (f.tiles.len() as u32 + f.coats),
                (_, true) => 3 * (f.tiles.len() as u32 + f.coats),
            };
            for w in self.winners(&f) {
                self.scores[w as usize] += points;
            }
            if f.kind == FeatureKind::Road {
                self.tolls(&f, false, &mut turned);
            }
            self.return_meeples(&f);
        }
        let mut around = vec![pos];
        for dx in -1..=1 {
            for dy in -1..=1 {
                if (dx, dy) != (0, 0) {
                    around.push(Pos::new(pos.x + dx, pos.y + dy));
                }
            }
        }
        for q in around {
            let Some((k, _)) = self.board.get(&q) else {
                continue;
            };
            let Some(i) = k
                .segments
                .iter()
                .position(|s| s.kind == FeatureKind::Monastery)
            else {
                continue;
            };
            if self.ring_count(q) == 8 && self.scored.insert((q, i)) {
                let f = self.feature((q, i));
                for w in self.winners(&f) {
                    self.scores[w as usize] += 9;
                }
                self.return_meeples(&f);
            }
        }
        for p in turned {
            if let Some((at, v)) = self.tollhouses[p] {
                self.tollhouses[p] = Some((at, 3 - v));
            }
        }
    }

    fn return_meeples(&mut self, f: &Feature) {
        let (supply, large_supply) = (&mut self.supply, &mut self.large);
        self.meeples.retain(|(p, n, large)| {
            let back = f.nodes.contains(n);
            if back && *large {
                large_supply[*p as usize] += 1;
            } else if back {
                supply[*p as usize] += 1;
            }
            !back
        });
    }

    /// B7, T10.
    fn final_scoring(&mut self, tolls: bool) {
        let mut nodes: Vec<Node> = Vec::new();
        for (&pos, (k, _)) in &self.board {
            for i in 0..k.segments.len() {
                nodes.push((pos, i));
            }
        }
        let mut done: BTreeSet<Node> = BTreeSet::new();
        let mut features = Vec::new();
        for n in nodes {
            if done.contains(&n) {
                continue;
            }
            let f = self.feature(n);
            done.extend(f.nodes.iter().copied());
            features.push(f);
        }
        // Completed cities, by any node.
        let cities: Vec<&Feature> = features
            .iter()
            .filter(|f| f.kind == FeatureKind::City && f.open == 0)
            .collect();
        let mut gains = vec![0u32; self.scores.len()];
        let mut ignore = BTreeSet::new();
        for f in &features {
            let points = match f.kind {
                // I8, I10: an incomplete inn road or cathedral city scores nothing.
                FeatureKind::Road | FeatureKind::City if f.open > 0 && f.special => 0,
                FeatureKind::Road if f.open > 0 => f.tiles.len() as u32,
                FeatureKind::City if f.open > 0 => f.tiles.len() as u32 + f.coats,
                FeatureKind::Monastery if self.ring_count(f.nodes[0].0) < 8 => {
                    1 + self.ring_count(f.nodes[0].0) as u32
                }
                FeatureKind::Field => {
                    let mut touched = BTreeSet::new();
                    for &(pos, i) in &f.nodes {
                        for &c in &self.board[&pos].0.segments[i].touches {
                            let node = (pos, usize::from(c));
                            if let Some(ci) = cities.iter().position(|c| c.nodes.contains(&node)) {
                                touched.insert(ci);
                            }
                        }
                    }
                    3 * touched.len() as u32
                }
                _ => continue,
            };
            for w in self.winners(f) {
                gains[w as usize] += points;
            }
            if tolls && f.kind == FeatureKind::Road && f.open > 0 {
                self.tolls(f, true, &mut ignore);
            }
        }
        for (s, g) in self.scores.iter_mut().zip(gains) {
            *s += g;
        }
    }
}

fn check(players: usize, seed: u64, bot_seed: u64, tollkeepers: bool, inns: bool, meeples: u8) {
    let setup = Setup::new(Colour::ALL[..players].to_vec(), seed)
        .tollkeepers(tollkeepers)
        .inns_cathedrals(inns)
        .meeples(meeples);
    let cat = catalogue();
    let (mut game, events) = Game::start(setup).expect("valid setup");
    let mut m = Model {
        scores: vec![0; players],
        supply: vec![meeples; players],
        large: vec![u8::from(inns); players],
        tollhouses: vec![None; players],
        ..Model::default()
    };
    m.board
        .insert(Pos::new(0, 0), (cat.get(cat.start), Rotation::default()));
    let mut rng = bot_seed;
    let mut last = Pos::new(0, 0);
    let mut pending = events;
    let ctx =
        format!("players {players} seed {seed} bot {bot_seed} tolls {tollkeepers} inns {inns}");
    while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
        // B4: every discard fits nowhere, every drawn tile has exactly the engine's options.
        for e in pending.drain(..) {
            if let Event::TileDiscarded { tile, .. } = &e {
                let k = cat.get(cat.find(tile).expect("known tile"));
                assert_eq!(m.legal_count(k), 0, "{ctx}: {tile} discarded but fits");
            }
        }
        if let Some(id) = game.drawn_tile() {
            let k = cat.get(cat.find(id).expect("known tile"));
            assert_eq!(m.legal_count(k), game.placement_count(), "{ctx}: options");
        }
        let drawn = game
            .drawn_tile()
            .map(|id| cat.get(cat.find(id).expect("known")));
        let evs = game
            .apply(player, cmd.clone())
            .expect("bot moves are legal");
        match cmd {
            Command::PlaceTile { pos, rotation } => {
                let k = drawn.expect("phase 1 has a drawn tile");
                assert!(m.fits(k, pos, rotation), "{ctx}: engine accepted a misfit");
                m.board.insert(pos, (k, rotation));
                last = pos;
            }
            Command::PlaceMeeple { target, figure } => {
                let node = m.node_of(last, target);
                let f = m.feature(node);
                assert!(
                    !m.meeples.iter().any(|(_, n, _)| f.nodes.contains(n)),
                    "{ctx}: meeple accepted on an occupied feature"
                );
                let large = figure == Figure::LargeMeeple;
                m.meeples.push((player, node, large));
                match large {
                    true => m.large[player as usize] -= 1,
                    false => m.supply[player as usize] -= 1,
                }
                m.end_turn(last);
            }
            Command::PlaceTollhouse { pos } => {
                let value = m.tollhouses[player as usize].map_or(1, |(_, v)| v);
                m.tollhouses[player as usize] = Some((pos, value));
                m.end_turn(last);
            }
            Command::Pass {} => m.end_turn(last),
            // The reference model plays no map (Carcassonne Maps) and not The Messages.
            _ => unreachable!("{ctx}: a command of a module that is off"),
        }
        if game.is_finished() {
            m.final_scoring(tollkeepers);
        }
        assert_eq!(game.scores(), m.scores, "{ctx}: scores after {cmd:?}");
        if !game.is_finished() {
            assert_eq!(game.supplies(), m.supply, "{ctx}: supplies after {cmd:?}");
            assert_eq!(
                game.large_supplies(),
                m.large,
                "{ctx}: large meeples after {cmd:?}"
            );
        }
        pending = evs;
    }
    assert!(game.is_finished());
}

#[test]
fn the_engine_agrees_with_a_naive_recount_over_random_games() {
    // REFERENCE_GAMES=5000 for a longer hunt.
    let games = std::env::var("REFERENCE_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let mut s = std::env::var("REFERENCE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EEDu64);
    for i in 0..games {
        let seed = bot::splitmix64(&mut s);
        let bot_seed = bot::splitmix64(&mut s);
        let players = 2 + (i % 5);
        let meeples = if i % 7 == 0 { 2 } else { 7 };
        check(players, seed, bot_seed, i % 2 == 0, i % 3 != 1, meeples);
    }
}
