//! The heuristic value of a position for each player: the score, plus what the meeples on
//! unscored features are expected to bring (a mix of their value now and complete, by how likely
//! they are to close before the pile runs out), plus the worth of meeples kept in the supply.
//! A position's value for a seat is its own value minus the best opponent's.

use rules::{FeatureKind, Game, PlayerId, Standing};

/// Worth of the 1st, 2nd, … meeple in a supply while the game has many turns left: the last
/// meeples are worth most, since a player without one cannot take a feature.
const HAND: [f64; 8] = [3.0, 2.4, 1.9, 1.5, 1.1, 0.8, 0.6, 0.4];

/// Tiles left in the pile past which a meeple in the supply keeps its full worth.
const HAND_HORIZON: f64 = 25.0;

/// The chance that a feature with `open` missing pieces is completed with `pile` tiles left.
fn completion(kind: FeatureKind, open: u32, pile: f64) -> f64 {
    if pile <= 0.0 || open == 0 {
        return if open == 0 { 1.0 } else { 0.0 };
    }
    let open = f64::from(open);
    let per_piece: f64 = match kind {
        FeatureKind::Road => 0.85,
        FeatureKind::City => 0.75,
        _ => 0.9,
    };
    per_piece.powf(open) * pile / (pile + 5.0 * open)
}

/// What one standing is expected to pay each of its winners by the end.
pub fn expected(s: &Standing, pile: f64) -> f64 {
    let (now, complete) = (f64::from(s.now), f64::from(s.complete));
    match s.kind {
        FeatureKind::Field => now + 2.0 * pile / (pile + 20.0),
        FeatureKind::Monastery => {
            // Every empty square around it is a point when filled, 9 in all when closed.
            let fill = pile / (pile + 3.0 * f64::from(s.open));
            now + (complete - now) * fill
        }
        _ => {
            let q = completion(s.kind, s.open, pile);
            q * complete + (1.0 - q) * now
        }
    }
}

/// Each player's value: score, expected points of their meeples' features, meeples in hand.
pub fn values(game: &Game) -> Vec<f64> {
    let scores = game.scores();
    let mut v: Vec<f64> = scores.iter().map(|&s| f64::from(s)).collect();
    if game.is_finished() {
        return v;
    }
    let pile = game.pile_size() as f64;
    for s in game.standings() {
        let e = expected(&s, pile);
        for &w in &s.winners {
            if let Some(x) = v.get_mut(w as usize) {
                *x += e;
            }
        }
    }
    let phase = (pile / HAND_HORIZON).min(1.0);
    for (x, &supply) in v.iter_mut().zip(&game.supplies()) {
        *x += phase * HAND.iter().take(supply as usize).sum::<f64>();
    }
    v
}

/// `seat`'s value minus the best opponent's.
pub fn relative(values: &[f64], seat: PlayerId) -> f64 {
    let own = values.get(seat as usize).copied().unwrap_or(0.0);
    let best = values
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != seat as usize)
        .map(|(_, &v)| v)
        .fold(f64::NEG_INFINITY, f64::max);
    own - if best.is_finite() { best } else { 0.0 }
}

/// [`relative`] of a game.
pub fn value_for(game: &Game, seat: PlayerId) -> f64 {
    relative(&values(game), seat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_feature_is_certain_and_an_endless_one_pays_its_value_now() {
        assert_eq!(completion(FeatureKind::City, 0, 10.0), 1.0);
        assert_eq!(completion(FeatureKind::City, 2, 0.0), 0.0);
        let s = Standing {
            kind: FeatureKind::City,
            pos: rules::Pos::new(0, 0),
            meeples: Vec::new(),
            winners: vec![0],
            now: 3,
            complete: 6,
            open: 1,
        };
        let e = expected(&s, 40.0);
        assert!(e > 3.0 && e < 6.0, "{e}");
        assert_eq!(expected(&s, 0.0), 3.0);
    }

    #[test]
    fn relative_is_against_the_best_opponent() {
        assert_eq!(relative(&[10.0, 4.0, 7.0], 0), 3.0);
        assert_eq!(relative(&[10.0, 4.0, 7.0], 1), -6.0);
    }
}
