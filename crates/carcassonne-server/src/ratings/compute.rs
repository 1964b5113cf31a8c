//! The rating arithmetic, and nothing else: ordered match results in, ratings out. Pure (no
//! store, no clock), so that rating a match as it ends and recomputing every rating from the
//! recorded results run the same code on the same numbers and give the same bits.
//!
//! The model is Weng-Lin's (`skillratings::weng_lin`, a TrueSkill-like Bayesian rating that
//! handles any number of players in one match): each player is a team of one, ranked by final
//! points, tied players sharing a place. The defaults are the crate's (mu 25, sigma 25/3,
//! beta 25/6).

use protocol::Family;
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};
use std::collections::BTreeMap;
use uuid::Uuid;

/// One account's rating in one family.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rating {
    pub mu: f64,
    pub sigma: f64,
    /// Rated matches played.
    pub games: u32,
}

impl Default for Rating {
    /// The rating of an account before its first rated match of a family.
    fn default() -> Self {
        let r = WengLinRating::new();
        Rating {
            mu: r.rating,
            sigma: r.uncertainty,
            games: 0,
        }
    }
}

impl Rating {
    /// The conservative estimate that ranks players: `mu - 3 sigma`.
    pub fn conservative(&self) -> f64 {
        self.mu - 3.0 * self.sigma
    }
}

/// A seat of a rated match: its account and its final points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    pub account: Uuid,
    pub score: u32,
}

/// The places of final scores: 1 for the highest; tied scores share the better place, and the
/// next place counts the tied ones (10, 7, 7, 3 → 1, 2, 2, 4).
pub fn places(scores: &[u32]) -> Vec<u32> {
    scores
        .iter()
        .map(|s| 1 + scores.iter().filter(|o| *o > s).count() as u32)
        .collect()
}

/// What one match does to its players' ratings: `before[i]` is seat i's rating going in, the
/// answer seat i's rating after, in seat order. A match of fewer than two seats changes nothing.
pub fn rate(before: &[Rating], scores: &[u32]) -> Vec<Rating> {
    if before.len() < 2 || before.len() != scores.len() {
        return before.to_vec();
    }
    let teams: Vec<[WengLinRating; 1]> = before
        .iter()
        .map(|r| {
            [WengLinRating {
                rating: r.mu,
                uncertainty: r.sigma,
            }]
        })
        .collect();
    let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(places(scores))
        .map(|(t, p)| (&t[..], MultiTeamOutcome::new(p as usize)))
        .collect();
    let after = weng_lin_multi_team(&ranked, &WengLinConfig::new());
    before
        .iter()
        .zip(after)
        .map(|(b, a)| Rating {
            mu: a[0].rating,
            sigma: a[0].uncertainty,
            games: b.games + 1,
        })
        .collect()
}

/// A rated match's result, as recorded when it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub family: Family,
    /// In seat order.
    pub seats: Vec<Seat>,
}

/// One player's line of one rated match: place, rating before and after.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    pub account: Uuid,
    pub place: u32,
    pub before: Rating,
    pub after: Rating,
}

/// Every account's rating per family.
pub type Ratings = BTreeMap<(Uuid, Family), Rating>;

/// Applies one result to `ratings` (every account's rating per family; a missing one is the
/// default) and gives each seat's change, in seat order.
pub fn apply(ratings: &mut Ratings, result: &Outcome) -> Vec<Change> {
    let before: Vec<Rating> = result
        .seats
        .iter()
        .map(|s| {
            ratings
                .get(&(s.account, result.family))
                .copied()
                .unwrap_or_default()
        })
        .collect();
    let scores: Vec<u32> = result.seats.iter().map(|s| s.score).collect();
    let after = rate(&before, &scores);
    let places = places(&scores);
    let mut changes = Vec::with_capacity(result.seats.len());
    for (i, seat) in result.seats.iter().enumerate() {
        ratings.insert((seat.account, result.family), after[i]);
        changes.push(Change {
            account: seat.account,
            place: places[i],
            before: before[i],
            after: after[i],
        });
    }
    changes
}

/// Every rating from every result, in the order given (the order the matches were rated):
/// the ratings at the end, and each result's changes.
pub fn replay<'a>(results: impl IntoIterator<Item = &'a Outcome>) -> (Ratings, Vec<Vec<Change>>) {
    let mut ratings = BTreeMap::new();
    let changes = results
        .into_iter()
        .map(|r| apply(&mut ratings, r))
        .collect();
    (ratings, changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(family: Family, seats: &[(Uuid, u32)]) -> Outcome {
        Outcome {
            family,
            seats: seats
                .iter()
                .map(|&(account, score)| Seat { account, score })
                .collect(),
        }
    }

    #[test]
    fn places_share_ties_and_count_them() {
        assert_eq!(places(&[10, 7, 7, 3]), vec![1, 2, 2, 4]);
        assert_eq!(places(&[0, 0]), vec![1, 1]);
        assert_eq!(places(&[3, 9]), vec![2, 1]);
    }

    #[test]
    fn a_win_raises_the_winner_and_lowers_the_loser() {
        let after = rate(&[Rating::default(), Rating::default()], &[40, 30]);
        assert!(after[0].mu > 25.0 && after[1].mu < 25.0, "{after:?}");
        assert!(after[0].sigma < 25.0 / 3.0, "uncertainty shrinks");
        assert_eq!((after[0].games, after[1].games), (1, 1));
        let tie = rate(&[Rating::default(), Rating::default()], &[30, 30]);
        assert_eq!(
            tie[0].mu, tie[1].mu,
            "a tie between equals moves neither apart"
        );
    }

    #[test]
    fn a_table_of_four_orders_its_changes_by_place() {
        let before = [Rating::default(); 4];
        let after = rate(&before, &[12, 50, 31, 31]);
        assert!(after[1].mu > after[2].mu && after[2].mu > after[0].mu);
        assert_eq!(after[2].mu, after[3].mu, "tied seats move alike");
    }

    #[test]
    fn families_are_rated_apart_and_replay_is_the_sum_of_its_steps() {
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let results = [
            result(Family::Duel, &[(a, 50), (b, 20)]),
            result(Family::Multi, &[(a, 10), (b, 20), (c, 30)]),
            result(Family::Duel, &[(b, 44), (a, 43)]),
        ];
        let (ratings, changes) = replay(&results);
        assert_eq!(ratings.len(), 5, "a and b in both families, c in one");
        assert_eq!(ratings[&(a, Family::Duel)].games, 2);
        assert_eq!(ratings[&(a, Family::Multi)].games, 1);
        // The third match started from the first's ratings, not from the multi one's.
        assert_eq!(changes[2][1].before, changes[0][0].after);
        // Step by step gives the same bits as the whole replay.
        let mut step = BTreeMap::new();
        for r in &results {
            apply(&mut step, r);
        }
        assert_eq!(step, ratings);
    }
}
