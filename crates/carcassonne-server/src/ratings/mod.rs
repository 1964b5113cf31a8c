//! Ratings: when a rated match ends, its result goes to the rating task, which reads the final
//! scores from the stored log, computes the players' new ratings ([`compute`], the arithmetic
//! alone) and records result, history and ratings in one transaction
//! ([`crate::store::ratings`]). A match is rated when the lobby that started it was rated and
//! every seat holds a registered account (the lobby refuses guests and bots; this is checked
//! again). The task is the only writer of ratings on a node and works one match at a time, in
//! the order the matches ended; recording checks that the players' ratings are still those it
//! computed from, so nodes of a cluster never lose an update.
//!
//! The actor only tells the task (`try_send` on a bounded queue): rating never delays a match.
//! A match whose end the task missed (a full queue, a restart) is found by the catch-up, which
//! runs at start and after an overflow (`Store::unrated_matches`). A recompute
//! ([`Ratings::recompute`], `POST /api/admin/ratings/recompute`) replays every recorded result
//! in rating order through the same arithmetic and rewrites ratings and history.

pub mod compute;

use crate::store::ratings::{AllRatings, HistoryLine, RatedRecord, Recorded, StoredRating};
use crate::store::{MatchStatus, Store, StoreError};
use compute::{Outcome, Rating, Seat};
use protocol::{Family, LobbyState, Occupant, RecomputeReport};
use rules::Event;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{mpsc, oneshot};
use tracing::{info, warn};
use uuid::Uuid;

/// Ended matches waiting for the rating task before the next one is left to the catch-up.
const QUEUE: usize = 1_024;
/// Tries of one match when concurrent ratings of its players keep making it stale.
const TRIES: usize = 5;

/// One seat of a recorded result (`rated_matches.results`, in seat order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedSeat {
    pub account_id: Uuid,
    /// The account's name when the match ended.
    pub name: String,
    pub score: u32,
}

/// Why rating or a recompute failed.
#[derive(Debug, thiserror::Error)]
pub enum RatingError {
    #[error("store: {0}")]
    Store(#[from] StoreError),
    #[error("a recorded result does not parse: {0}")]
    Corrupt(String),
    #[error("the rating task has stopped")]
    Stopped,
}

enum Job {
    Ended(Uuid),
    Recompute(oneshot::Sender<Result<RecomputeReport, RatingError>>),
}

/// The handle to the rating task.
#[derive(Debug, Clone)]
pub struct Ratings {
    tx: mpsc::Sender<Job>,
    /// An end was dropped on a full queue: the task runs the catch-up when it is idle.
    missed: Arc<AtomicBool>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Job::Ended(id) => write!(f, "Ended({id})"),
            Job::Recompute(_) => write!(f, "Recompute"),
        }
    }
}

impl Ratings {
    /// Starts the rating task; it first rates the finished rated matches no one rated yet.
    pub fn start(store: Store) -> Ratings {
        let (tx, rx) = mpsc::channel(QUEUE);
        let missed = Arc::new(AtomicBool::new(true));
        tokio::spawn(run(store, rx, Arc::clone(&missed)));
        Ratings { tx, missed }
    }

    /// A match ended: rate it if it is rated. Never waits.
    pub fn ended(&self, id: Uuid) {
        if self.tx.try_send(Job::Ended(id)).is_err() {
            self.missed.store(true, Ordering::Relaxed);
        }
    }

    /// Every rating recomputed from the recorded results, after the ratings queued before.
    pub async fn recompute(&self) -> Result<RecomputeReport, RatingError> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(Job::Recompute(reply))
            .await
            .map_err(|_| RatingError::Stopped)?;
        answer.await.map_err(|_| RatingError::Stopped)?
    }
}

async fn run(store: Store, mut rx: mpsc::Receiver<Job>, missed: Arc<AtomicBool>) {
    loop {
        if rx.is_empty() && missed.swap(false, Ordering::Relaxed) {
            match store.unrated_matches().await {
                Ok(ids) => {
                    for id in ids {
                        rate_logged(&store, id).await;
                    }
                }
                Err(e) => {
                    warn!(error = %e, "ratings: the catch-up could not list the matches");
                    missed.store(true, Ordering::Relaxed);
                }
            }
        }
        let Some(job) = rx.recv().await else { return };
        match job {
            Job::Ended(id) => rate_logged(&store, id).await,
            Job::Recompute(reply) => {
                let _ = reply.send(recompute(&store).await);
            }
        }
    }
}

async fn rate_logged(store: &Store, id: Uuid) {
    match rate(store, id).await {
        Ok(Some(family)) => info!(match_id = %id, family = family.as_str(), "match rated"),
        Ok(None) => {}
        Err(e) => warn!(match_id = %id, error = %e, "ratings: the match could not be rated"),
    }
}

/// Rates one finished match if it is rated: the family it was rated in, or `None` when it is
/// not rated (or was rated before).
pub async fn rate(store: &Store, id: Uuid) -> Result<Option<Family>, RatingError> {
    let Some(state) = store.lobby_state_of_match(id).await? else {
        return Ok(None);
    };
    let lobby: LobbyState =
        serde_json::from_str(&state).map_err(|e| RatingError::Corrupt(e.to_string()))?;
    if !lobby.rated {
        return Ok(None);
    }
    let mut seats = lobby.seats.clone();
    seats.sort_by_key(|s| s.seat);
    let mut players = Vec::with_capacity(seats.len());
    for s in &seats {
        match &s.occupant {
            Some(Occupant::Player { account_id, name }) => players.push((*account_id, name)),
            _ => {
                warn!(match_id = %id, "ratings: a rated lobby's match has a seat without a player");
                return Ok(None);
            }
        }
    }
    let accounts: Vec<Uuid> = players.iter().map(|(a, _)| *a).collect();
    if store.registered_count(&accounts).await? != accounts.len() {
        warn!(match_id = %id, "ratings: a seat is not a registered account");
        return Ok(None);
    }
    let Some(row) = store.load_match(id).await? else {
        return Ok(None);
    };
    if row.status != MatchStatus::Finished {
        return Ok(None);
    }
    let log = store.commands(id, 0).await?;
    let Some(last) = log.last() else {
        return Ok(None);
    };
    let events: Vec<Event> =
        serde_json::from_str(&last.events).map_err(|e| RatingError::Corrupt(e.to_string()))?;
    let Some(scores) = events.into_iter().find_map(|e| match e {
        Event::GameEnded { scores } => Some(scores),
        _ => None,
    }) else {
        return Err(RatingError::Corrupt(
            "a finished match without its end".into(),
        ));
    };
    if scores.len() != players.len() {
        return Err(RatingError::Corrupt("scores and seats differ".into()));
    }
    let family = Family::of(players.len());
    let recorded: Vec<RecordedSeat> = players
        .iter()
        .zip(&scores)
        .map(|((account_id, name), score)| RecordedSeat {
            account_id: *account_id,
            name: (*name).clone(),
            score: *score,
        })
        .collect();
    let results =
        serde_json::to_string(&recorded).map_err(|e| RatingError::Corrupt(e.to_string()))?;
    let outcome = outcome_of(family, &recorded);
    for _ in 0..TRIES {
        let stored = store.ratings_of(family, &accounts).await?;
        let mut ratings = BTreeMap::new();
        for (account, r) in accounts.iter().zip(&stored) {
            if let Some(r) = r {
                ratings.insert((*account, family), from_stored(r));
            }
        }
        let changes = compute::apply(&mut ratings, &outcome);
        let lines = changes
            .iter()
            .zip(&stored)
            .map(|(c, before)| HistoryLine {
                account: c.account,
                place: c.place,
                before: *before,
                before_value: to_stored(&c.before),
                after: to_stored(&c.after),
            })
            .collect();
        let record = RatedRecord {
            match_id: id,
            family,
            ended_at: last.created_at,
            results: results.clone(),
            lines,
        };
        match store.record_rated(&record).await? {
            Recorded::Done => return Ok(Some(family)),
            Recorded::AlreadyRated => return Ok(None),
            Recorded::Stale => continue,
        }
    }
    Err(RatingError::Corrupt(format!(
        "the players' ratings kept changing over {TRIES} tries"
    )))
}

fn outcome_of(family: Family, seats: &[RecordedSeat]) -> Outcome {
    Outcome {
        family,
        seats: seats
            .iter()
            .map(|s| Seat {
                account: s.account_id,
                score: s.score,
            })
            .collect(),
    }
}

fn from_stored(r: &StoredRating) -> Rating {
    Rating {
        mu: r.mu,
        sigma: r.sigma,
        games: r.games,
    }
}

pub fn to_stored(r: &Rating) -> StoredRating {
    StoredRating {
        mu: r.mu,
        sigma: r.sigma,
        games: r.games,
    }
}

/// The results recorded for a match, in seat order.
pub fn recorded_seats(results: &str) -> Result<Vec<RecordedSeat>, RatingError> {
    serde_json::from_str(results).map_err(|e| RatingError::Corrupt(e.to_string()))
}

/// Every rating again from the recorded results, in rating order; counts the stored ratings
/// that differed.
pub async fn recompute(store: &Store) -> Result<RecomputeReport, RatingError> {
    let rows = store.rated_results().await?;
    let mut outcomes = Vec::with_capacity(rows.len());
    for r in &rows {
        outcomes.push(outcome_of(r.family, &recorded_seats(&r.results)?));
    }
    let (ratings, changes) = compute::replay(&outcomes);
    let mut all = AllRatings::default();
    for (row, changes) in rows.iter().zip(&changes) {
        for c in changes {
            all.history.push((
                row.n,
                row.family,
                HistoryLine {
                    account: c.account,
                    place: c.place,
                    before: None,
                    before_value: to_stored(&c.before),
                    after: to_stored(&c.after),
                },
            ));
        }
    }
    all.ratings = ratings
        .iter()
        .map(|((account, family), r)| (*account, *family, to_stored(r)))
        .collect();
    let stored: BTreeMap<(Uuid, Family), StoredRating> = store
        .all_ratings()
        .await?
        .into_iter()
        .map(|(a, f, r)| ((a, f), r))
        .collect();
    let changed = all
        .ratings
        .iter()
        .filter(|(a, f, r)| stored.get(&(*a, *f)) != Some(r))
        .count()
        + stored.keys().filter(|k| !ratings.contains_key(k)).count();
    store.replace_ratings(&all).await?;
    Ok(RecomputeReport {
        matches: rows.len() as u64,
        ratings: all.ratings.len() as u64,
        changed: changed as u64,
    })
}
