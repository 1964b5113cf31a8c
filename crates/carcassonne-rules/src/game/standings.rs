//! The features with meeples that are not scored yet, as public facts: what each would score now
//! in final scoring (B7), what it would score complete (B6), and how far it is from complete.
//! Everything here follows from the view (tiles and meeples are on the table); it is computed
//! from the engine's features so that a caller (a bot's evaluation) needs no feature tracker of
//! its own. It only reads.

use super::Game;
use crate::engine::scoring;
use crate::event::MeepleCount;
use crate::geometry::Pos;
use crate::setup::PlayerId;
use crate::tiles::FeatureKind;

/// One road, city, monastery or field with meeples on it, not scored yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub kind: FeatureKind,
    /// The feature's square with the smallest (x, y).
    pub pos: Pos,
    pub meeples: Vec<MeepleCount>,
    /// The players with the most meeples: each would score (B6: ties all score).
    pub winners: Vec<PlayerId>,
    /// Points each winner would get if the game ended now (B7; a field: 3 per completed city).
    pub now: u32,
    /// Points each winner would get for it complete (B6); a field's equal `now`.
    pub complete: u32,
    /// What is missing: open road or city ends, empty squares around a monastery, 0 for a field.
    pub open: u32,
}

impl Game {
    /// The features with meeples not scored yet, in final scoring's order (B11): roads, cities,
    /// monasteries, fields, each by canonical position.
    pub fn standings(&self) -> Vec<Standing> {
        let [roads, cities, monasteries, fields] =
            scoring::final_candidates(&self.features, |_| false);
        let mut out = Vec::new();
        for root in roads.into_iter().chain(cities).chain(monasteries) {
            let (Some(now), Some(done)) = (
                scoring::value_of(&self.board, &self.features, root, false),
                scoring::value_of(&self.board, &self.features, root, true),
            ) else {
                continue;
            };
            let f = self.features.get(root);
            let (meeples, winners) = scoring::majority(&self.features, root);
            let open = match f.kind {
                FeatureKind::Monastery => 9u32.saturating_sub(now.tiles),
                _ => u32::from(f.open),
            };
            out.push(Standing {
                kind: f.kind,
                pos: f.min,
                meeples,
                winners,
                now: now.points,
                complete: done.points,
                open,
            });
        }
        if !fields.is_empty() {
            let touched = scoring::cities_touched(&self.board, &self.features);
            for root in fields {
                let (_, points) = scoring::field_points(&touched, root);
                let (meeples, winners) = scoring::majority(&self.features, root);
                out.push(Standing {
                    kind: FeatureKind::Field,
                    pos: self.features.get(root).min,
                    meeples,
                    winners,
                    now: points,
                    complete: points,
                    open: 0,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::bot::{random_move, splitmix64};
    use crate::setup::{Colour, Setup};
    use crate::{Event, Game};

    /// Over random games: every meeple on the board stands on a listed feature, and final
    /// scoring pays each road, city and monastery exactly what its standing said it would now.
    #[test]
    fn standings_list_every_meeple_and_foretell_final_scoring() {
        for seed in 0..20u64 {
            let setup = Setup::new(vec![Colour::Red, Colour::Blue, Colour::Green], seed);
            let Ok((mut game, _)) = Game::start(setup) else {
                panic!("setup")
            };
            let mut rng = seed;
            while let Some((p, c)) = random_move(&game, || splitmix64(&mut rng)) {
                let last = game.standings();
                let counted: u32 = last.iter().flat_map(|s| &s.meeples).map(|m| m.count).sum();
                let on_board: u32 = game.meeples_on_board().iter().map(|&n| u32::from(n)).sum();
                assert_eq!(counted, on_board);
                let events = game.apply(p, c).unwrap_or_default();
                if game.is_finished() {
                    let finals: Vec<u32> = events
                        .iter()
                        .filter_map(|e| match e {
                            Event::FeatureScored {
                                points,
                                complete: false,
                                ..
                            } => Some(*points),
                            _ => None,
                        })
                        .collect();
                    let foretold: Vec<u32> = last
                        .iter()
                        .filter(|s| s.kind != crate::tiles::FeatureKind::Field)
                        .map(|s| s.now)
                        .collect();
                    // The last tile may have completed some: each final scoring was foretold.
                    assert!(finals.iter().all(|f| foretold.contains(f)), "{seed}");
                }
            }
            assert!(game.is_finished());
        }
    }
}
