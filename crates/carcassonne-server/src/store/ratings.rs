//! Ratings in both dialects: the recorded results of rated matches (`rated_matches`, in the
//! order they were rated), what each did to its players (`rating_history`), the current
//! ratings (`ratings`), the leaderboard and a player's history. The arithmetic is the caller's
//! ([`crate::ratings`]); this file stores numbers.
//!
//! A result is recorded with a check: the players' ratings must still be the ones the caller
//! computed from ([`Recorded::Stale`] otherwise, nothing written), so that two nodes rating
//! matches of the same player at once never lose an update, and the order of `n` is an order
//! in which every result was applied to the ratings it was computed from.

use super::sqlite::uuid_text;
use super::{PgStore, SqliteStore, Store, StoreError};
use chrono::{DateTime, Utc};
use protocol::Family;
use sqlx::Row;
use uuid::Uuid;

/// A rating as stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredRating {
    pub mu: f64,
    pub sigma: f64,
    pub games: u32,
}

/// One player's line of a rated match.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryLine {
    pub account: Uuid,
    pub place: u32,
    /// `None`: the player's first match of the family (no row to check).
    pub before: Option<StoredRating>,
    pub before_value: StoredRating,
    pub after: StoredRating,
}

/// A rated match to record: its result (JSON, in seat order) and its players' lines.
#[derive(Debug, Clone)]
pub struct RatedRecord {
    pub match_id: Uuid,
    pub family: Family,
    pub ended_at: DateTime<Utc>,
    pub results: String,
    pub lines: Vec<HistoryLine>,
}

/// What recording a rated match did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Done,
    /// The match was rated before (by another node, or before a restart).
    AlreadyRated,
    /// A player's rating changed since it was read: compute again.
    Stale,
}

/// A recorded result, in rating order.
#[derive(Debug, Clone)]
pub struct ResultRow {
    pub n: i64,
    pub match_id: Uuid,
    pub family: Family,
    pub ended_at: DateTime<Utc>,
    pub results: String,
}

/// A line of a player's history, with its match's result.
#[derive(Debug, Clone)]
pub struct PlayerHistoryRow {
    pub result: ResultRow,
    pub place: u32,
    pub before: StoredRating,
    pub after: StoredRating,
}

/// Every rating and history line, as a recompute writes them.
#[derive(Debug, Clone, Default)]
pub struct AllRatings {
    pub ratings: Vec<(Uuid, Family, StoredRating)>,
    /// (n, family, line) for every player of every rated match.
    pub history: Vec<(i64, Family, HistoryLine)>,
}

fn family(s: &str) -> Result<Family, StoreError> {
    Family::parse(s).ok_or_else(|| StoreError::Corrupt(format!("unknown rating family {s}")))
}

fn games(v: i64) -> Result<u32, StoreError> {
    u32::try_from(v).map_err(|_| StoreError::Corrupt(format!("games {v}")))
}

fn conservative(r: &StoredRating) -> f64 {
    r.mu - 3.0 * r.sigma
}

macro_rules! both {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match $self {
            Store::Sqlite(s) => s.$method($($arg),*).await,
            Store::Postgres(p) => p.$method($($arg),*).await,
        }
    };
}

impl Store {
    /// The state of the lobby that started a match (JSON), if a lobby did.
    pub async fn lobby_state_of_match(&self, id: Uuid) -> Result<Option<String>, StoreError> {
        both!(self.match_lobby_state(id))
    }

    /// Finished matches of rated lobbies that have no recorded result yet, oldest first: those
    /// whose end the rating task did not see (a restart, a full queue).
    pub async fn unrated_matches(&self) -> Result<Vec<Uuid>, StoreError> {
        both!(self.unrated_matches())
    }

    /// How many of these accounts are registered.
    pub async fn registered_count(&self, ids: &[Uuid]) -> Result<usize, StoreError> {
        both!(self.registered_count(ids))
    }

    /// The accounts' ratings in a family (`None`: none yet), in the order asked.
    pub async fn ratings_of(
        &self,
        family: Family,
        ids: &[Uuid],
    ) -> Result<Vec<Option<StoredRating>>, StoreError> {
        both!(self.ratings_of(family, ids))
    }

    /// Records a rated match in one transaction (see the module's doc for the check).
    pub async fn record_rated(&self, r: &RatedRecord) -> Result<Recorded, StoreError> {
        both!(self.record_rated(r))
    }

    /// Every recorded result, in rating order.
    pub async fn rated_results(&self) -> Result<Vec<ResultRow>, StoreError> {
        both!(self.rated_results())
    }

    /// Every stored rating.
    pub async fn all_ratings(&self) -> Result<Vec<(Uuid, Family, StoredRating)>, StoreError> {
        both!(self.all_ratings())
    }

    /// Replaces every rating and history line in one transaction (a recompute).
    pub async fn replace_ratings(&self, all: &AllRatings) -> Result<(), StoreError> {
        both!(self.replace_ratings(all))
    }

    /// A page of a family's leaderboard, best first: (name, rating).
    pub async fn leaderboard(
        &self,
        family: Family,
        offset: u32,
        limit: u32,
    ) -> Result<Vec<(String, StoredRating)>, StoreError> {
        both!(self.leaderboard(family, offset, limit))
    }

    /// An account's ratings, one per family it has played.
    pub async fn account_ratings(
        &self,
        account: Uuid,
    ) -> Result<Vec<(Family, StoredRating)>, StoreError> {
        both!(self.account_ratings(account))
    }

    /// An account's most recent rated matches, newest first.
    pub async fn rating_history(
        &self,
        account: Uuid,
        limit: u32,
    ) -> Result<Vec<PlayerHistoryRow>, StoreError> {
        both!(self.rating_history(account, limit))
    }
}

/// Whether a stored row is the rating a line was computed from.
fn unchanged(stored: Option<StoredRating>, expected: Option<StoredRating>) -> bool {
    stored == expected
}

// SQLite.

fn sqlite_rating(r: &sqlx::sqlite::SqliteRow) -> Result<StoredRating, StoreError> {
    Ok(StoredRating {
        mu: r.try_get("mu")?,
        sigma: r.try_get("sigma")?,
        games: games(r.try_get("games")?)?,
    })
}

fn sqlite_result(r: &sqlx::sqlite::SqliteRow) -> Result<ResultRow, StoreError> {
    Ok(ResultRow {
        n: r.try_get("n")?,
        match_id: uuid_text(r, "match_id")?,
        family: family(&r.try_get::<String, _>("family")?)?,
        ended_at: r.try_get("ended_at")?,
        results: r.try_get("results")?,
    })
}

impl SqliteStore {
    async fn unrated_matches(&self) -> Result<Vec<Uuid>, StoreError> {
        sqlx::query(
            "SELECT m.id FROM matches m JOIN lobbies l ON l.match_id = m.id \
             WHERE m.status = 'finished' AND json_extract(l.state, '$.rated') = 1 \
             AND NOT EXISTS (SELECT 1 FROM rated_matches r WHERE r.match_id = m.id) \
             ORDER BY julianday(m.updated_at), m.id",
        )
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(|r| uuid_text(r, "id"))
        .collect()
    }

    async fn registered_count(&self, ids: &[Uuid]) -> Result<usize, StoreError> {
        let mut n = 0;
        for id in ids {
            let found: Option<i64> =
                sqlx::query_scalar("SELECT 1 FROM accounts WHERE id = ?1 AND kind = 'registered'")
                    .bind(id.to_string())
                    .fetch_optional(&self.read)
                    .await?;
            n += usize::from(found.is_some());
        }
        Ok(n)
    }

    async fn ratings_of(
        &self,
        family: Family,
        ids: &[Uuid],
    ) -> Result<Vec<Option<StoredRating>>, StoreError> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let row = sqlx::query(
                "SELECT mu, sigma, games FROM ratings WHERE account_id = ?1 AND family = ?2",
            )
            .bind(id.to_string())
            .bind(family.as_str())
            .fetch_optional(&self.read)
            .await?;
            out.push(row.as_ref().map(sqlite_rating).transpose()?);
        }
        Ok(out)
    }

    async fn record_rated(&self, r: &RatedRecord) -> Result<Recorded, StoreError> {
        // The one writing connection: this transaction runs alone.
        let mut conn = self.writing().await?;
        let mut tx = conn.begin().await?;
        let inserted: Option<i64> = sqlx::query_scalar(
            "INSERT INTO rated_matches (match_id, family, ended_at, results) \
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT (match_id) DO NOTHING RETURNING n",
        )
        .bind(r.match_id.to_string())
        .bind(r.family.as_str())
        .bind(r.ended_at)
        .bind(&r.results)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(n) = inserted else {
            return Ok(Recorded::AlreadyRated);
        };
        for line in &r.lines {
            let stored = sqlx::query(
                "SELECT mu, sigma, games FROM ratings WHERE account_id = ?1 AND family = ?2",
            )
            .bind(line.account.to_string())
            .bind(r.family.as_str())
            .fetch_optional(&mut *tx)
            .await?
            .as_ref()
            .map(sqlite_rating)
            .transpose()?;
            if !unchanged(stored, line.before) {
                return Ok(Recorded::Stale);
            }
            sqlite_write_line(&mut tx, n, r.family, line).await?;
        }
        tx.commit().await?;
        drop(conn);
        self.sync().await?;
        Ok(Recorded::Done)
    }

    async fn rated_results(&self) -> Result<Vec<ResultRow>, StoreError> {
        sqlx::query("SELECT n, match_id, family, ended_at, results FROM rated_matches ORDER BY n")
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(sqlite_result)
            .collect()
    }

    async fn all_ratings(&self) -> Result<Vec<(Uuid, Family, StoredRating)>, StoreError> {
        sqlx::query("SELECT account_id, family, mu, sigma, games FROM ratings")
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(|r| {
                Ok((
                    uuid_text(r, "account_id")?,
                    family(&r.try_get::<String, _>("family")?)?,
                    sqlite_rating(r)?,
                ))
            })
            .collect()
    }

    async fn replace_ratings(&self, all: &AllRatings) -> Result<(), StoreError> {
        let mut conn = self.writing().await?;
        let mut tx = conn.begin().await?;
        sqlx::query("DELETE FROM ratings").execute(&mut *tx).await?;
        sqlx::query("DELETE FROM rating_history")
            .execute(&mut *tx)
            .await?;
        for (n, family, line) in &all.history {
            sqlite_history_line(&mut tx, *n, *family, line).await?;
        }
        for (account, family, r) in &all.ratings {
            sqlite_upsert_rating(&mut tx, *account, *family, r).await?;
        }
        tx.commit().await?;
        drop(conn);
        self.sync().await
    }

    async fn leaderboard(
        &self,
        family: Family,
        offset: u32,
        limit: u32,
    ) -> Result<Vec<(String, StoredRating)>, StoreError> {
        sqlx::query(
            "SELECT a.name, r.mu, r.sigma, r.games FROM ratings r \
             JOIN accounts a ON a.id = r.account_id \
             WHERE r.family = ?1 ORDER BY r.rating DESC, r.account_id LIMIT ?2 OFFSET ?3",
        )
        .bind(family.as_str())
        .bind(i64::from(limit))
        .bind(i64::from(offset))
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("name")?, sqlite_rating(r)?)))
        .collect()
    }

    async fn account_ratings(
        &self,
        account: Uuid,
    ) -> Result<Vec<(Family, StoredRating)>, StoreError> {
        sqlx::query(
            "SELECT family, mu, sigma, games FROM ratings WHERE account_id = ?1 ORDER BY family",
        )
        .bind(account.to_string())
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(|r| {
            Ok((
                family(&r.try_get::<String, _>("family")?)?,
                sqlite_rating(r)?,
            ))
        })
        .collect()
    }

    async fn rating_history(
        &self,
        account: Uuid,
        limit: u32,
    ) -> Result<Vec<PlayerHistoryRow>, StoreError> {
        sqlx::query(
            "SELECT m.n, m.match_id, m.family, m.ended_at, m.results, h.place, \
             h.mu_before, h.sigma_before, h.mu, h.sigma FROM rating_history h \
             JOIN rated_matches m ON m.n = h.n \
             WHERE h.account_id = ?1 ORDER BY h.n DESC LIMIT ?2",
        )
        .bind(account.to_string())
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(|r| {
            let after = StoredRating {
                mu: r.try_get("mu")?,
                sigma: r.try_get("sigma")?,
                games: 0,
            };
            Ok(PlayerHistoryRow {
                result: sqlite_result(r)?,
                place: games(r.try_get("place")?)?,
                before: StoredRating {
                    mu: r.try_get("mu_before")?,
                    sigma: r.try_get("sigma_before")?,
                    games: 0,
                },
                after,
            })
        })
        .collect()
    }
}

async fn sqlite_write_line(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    n: i64,
    family: Family,
    line: &HistoryLine,
) -> Result<(), StoreError> {
    sqlite_history_line(tx, n, family, line).await?;
    sqlite_upsert_rating(tx, line.account, family, &line.after).await
}

async fn sqlite_history_line(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    n: i64,
    family: Family,
    line: &HistoryLine,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO rating_history \
         (n, account_id, family, place, mu_before, sigma_before, mu, sigma) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )
    .bind(n)
    .bind(line.account.to_string())
    .bind(family.as_str())
    .bind(i64::from(line.place))
    .bind(line.before_value.mu)
    .bind(line.before_value.sigma)
    .bind(line.after.mu)
    .bind(line.after.sigma)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn sqlite_upsert_rating(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    account: Uuid,
    family: Family,
    r: &StoredRating,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO ratings (account_id, family, mu, sigma, rating, games) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (account_id, family) DO UPDATE SET \
         mu = excluded.mu, sigma = excluded.sigma, rating = excluded.rating, \
         games = excluded.games",
    )
    .bind(account.to_string())
    .bind(family.as_str())
    .bind(r.mu)
    .bind(r.sigma)
    .bind(conservative(r))
    .bind(i64::from(r.games))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

// Postgres.

fn pg_rating(r: &sqlx::postgres::PgRow) -> Result<StoredRating, StoreError> {
    Ok(StoredRating {
        mu: r.try_get("mu")?,
        sigma: r.try_get("sigma")?,
        games: games(i64::from(r.try_get::<i32, _>("games")?))?,
    })
}

fn pg_result(r: &sqlx::postgres::PgRow) -> Result<ResultRow, StoreError> {
    Ok(ResultRow {
        n: r.try_get("n")?,
        match_id: r.try_get("match_id")?,
        family: family(&r.try_get::<String, _>("family")?)?,
        ended_at: r.try_get("ended_at")?,
        results: r.try_get("results")?,
    })
}

impl PgStore {
    async fn unrated_matches(&self) -> Result<Vec<Uuid>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT m.id FROM matches m JOIN lobbies l ON l.match_id = m.id \
             WHERE m.status = 'finished' AND (l.state->>'rated')::boolean IS TRUE \
             AND NOT EXISTS (SELECT 1 FROM rated_matches r WHERE r.match_id = m.id) \
             ORDER BY m.updated_at, m.id",
        )
        .fetch_all(&self.pool)
        .await?)
    }

    async fn registered_count(&self, ids: &[Uuid]) -> Result<usize, StoreError> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM accounts WHERE id = ANY($1) AND kind = 'registered'",
        )
        .bind(ids)
        .fetch_one(&self.pool)
        .await?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    async fn ratings_of(
        &self,
        family: Family,
        ids: &[Uuid],
    ) -> Result<Vec<Option<StoredRating>>, StoreError> {
        let rows = sqlx::query(
            "SELECT account_id, mu, sigma, games FROM ratings \
             WHERE account_id = ANY($1) AND family = $2",
        )
        .bind(ids)
        .bind(family.as_str())
        .fetch_all(&self.pool)
        .await?;
        let mut found = std::collections::HashMap::new();
        for r in &rows {
            found.insert(r.try_get::<Uuid, _>("account_id")?, pg_rating(r)?);
        }
        Ok(ids.iter().map(|id| found.get(id).copied()).collect())
    }

    async fn record_rated(&self, r: &RatedRecord) -> Result<Recorded, StoreError> {
        let mut tx = self.pool.begin().await?;
        let inserted: Option<i64> = sqlx::query_scalar(
            "INSERT INTO rated_matches (match_id, family, ended_at, results) \
             VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT (match_id) DO NOTHING RETURNING n",
        )
        .bind(r.match_id)
        .bind(r.family.as_str())
        .bind(r.ended_at)
        .bind(&r.results)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(n) = inserted else {
            return Ok(Recorded::AlreadyRated);
        };
        for line in &r.lines {
            // Locks the row (when there is one) until the commit: a concurrent rating of the
            // same player waits, then sees this one's numbers and comes back stale.
            let stored = sqlx::query(
                "SELECT mu, sigma, games FROM ratings \
                 WHERE account_id = $1 AND family = $2 FOR UPDATE",
            )
            .bind(line.account)
            .bind(r.family.as_str())
            .fetch_optional(&mut *tx)
            .await?
            .as_ref()
            .map(pg_rating)
            .transpose()?;
            if !unchanged(stored, line.before) {
                return Ok(Recorded::Stale);
            }
            pg_history_line(&mut tx, n, r.family, line).await?;
            // A first rating is inserted only if no concurrent first match inserted it (that
            // insert waits for the other's commit, then does nothing): stale, not overwritten.
            let written = match line.before {
                None => pg_insert_rating(&mut tx, line.account, r.family, &line.after).await?,
                Some(_) => {
                    pg_upsert_rating(&mut tx, line.account, r.family, &line.after).await?;
                    true
                }
            };
            if !written {
                return Ok(Recorded::Stale);
            }
        }
        tx.commit().await?;
        Ok(Recorded::Done)
    }

    async fn rated_results(&self) -> Result<Vec<ResultRow>, StoreError> {
        sqlx::query(
            "SELECT n, match_id, family, ended_at, results::text AS results \
             FROM rated_matches ORDER BY n",
        )
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(pg_result)
        .collect()
    }

    async fn all_ratings(&self) -> Result<Vec<(Uuid, Family, StoredRating)>, StoreError> {
        sqlx::query("SELECT account_id, family, mu, sigma, games FROM ratings")
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| {
                Ok((
                    r.try_get("account_id")?,
                    family(&r.try_get::<String, _>("family")?)?,
                    pg_rating(r)?,
                ))
            })
            .collect()
    }

    async fn replace_ratings(&self, all: &AllRatings) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        // No rating is recorded while the table is rewritten.
        sqlx::query("LOCK TABLE rated_matches, ratings, rating_history IN EXCLUSIVE MODE")
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM ratings").execute(&mut *tx).await?;
        sqlx::query("DELETE FROM rating_history")
            .execute(&mut *tx)
            .await?;
        for (n, family, line) in &all.history {
            pg_history_line(&mut tx, *n, *family, line).await?;
        }
        for (account, family, r) in &all.ratings {
            pg_upsert_rating(&mut tx, *account, *family, r).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn leaderboard(
        &self,
        family: Family,
        offset: u32,
        limit: u32,
    ) -> Result<Vec<(String, StoredRating)>, StoreError> {
        sqlx::query(
            "SELECT a.name, r.mu, r.sigma, r.games FROM ratings r \
             JOIN accounts a ON a.id = r.account_id \
             WHERE r.family = $1 ORDER BY r.rating DESC, r.account_id LIMIT $2 OFFSET $3",
        )
        .bind(family.as_str())
        .bind(i64::from(limit))
        .bind(i64::from(offset))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("name")?, pg_rating(r)?)))
        .collect()
    }

    async fn account_ratings(
        &self,
        account: Uuid,
    ) -> Result<Vec<(Family, StoredRating)>, StoreError> {
        sqlx::query(
            "SELECT family, mu, sigma, games FROM ratings WHERE account_id = $1 ORDER BY family",
        )
        .bind(account)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|r| Ok((family(&r.try_get::<String, _>("family")?)?, pg_rating(r)?)))
        .collect()
    }

    async fn rating_history(
        &self,
        account: Uuid,
        limit: u32,
    ) -> Result<Vec<PlayerHistoryRow>, StoreError> {
        sqlx::query(
            "SELECT m.n, m.match_id, m.family, m.ended_at, m.results::text AS results, h.place, \
             h.mu_before, h.sigma_before, h.mu, h.sigma FROM rating_history h \
             JOIN rated_matches m ON m.n = h.n \
             WHERE h.account_id = $1 ORDER BY h.n DESC LIMIT $2",
        )
        .bind(account)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|r| {
            Ok(PlayerHistoryRow {
                result: pg_result(r)?,
                place: games(i64::from(r.try_get::<i32, _>("place")?))?,
                before: StoredRating {
                    mu: r.try_get("mu_before")?,
                    sigma: r.try_get("sigma_before")?,
                    games: 0,
                },
                after: StoredRating {
                    mu: r.try_get("mu")?,
                    sigma: r.try_get("sigma")?,
                    games: 0,
                },
            })
        })
        .collect()
    }
}

async fn pg_history_line(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    n: i64,
    family: Family,
    line: &HistoryLine,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO rating_history \
         (n, account_id, family, place, mu_before, sigma_before, mu, sigma) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(n)
    .bind(line.account)
    .bind(family.as_str())
    .bind(i32::try_from(line.place).unwrap_or(i32::MAX))
    .bind(line.before_value.mu)
    .bind(line.before_value.sigma)
    .bind(line.after.mu)
    .bind(line.after.sigma)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn pg_upsert_rating(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    account: Uuid,
    family: Family,
    r: &StoredRating,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO ratings (account_id, family, mu, sigma, rating, games) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (account_id, family) DO UPDATE SET \
         mu = excluded.mu, sigma = excluded.sigma, rating = excluded.rating, \
         games = excluded.games",
    )
    .bind(account)
    .bind(family.as_str())
    .bind(r.mu)
    .bind(r.sigma)
    .bind(conservative(r))
    .bind(i32::try_from(r.games).unwrap_or(i32::MAX))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn pg_insert_rating(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    account: Uuid,
    family: Family,
    r: &StoredRating,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "INSERT INTO ratings (account_id, family, mu, sigma, rating, games) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (account_id, family) DO NOTHING",
    )
    .bind(account)
    .bind(family.as_str())
    .bind(r.mu)
    .bind(r.sigma)
    .bind(conservative(r))
    .bind(i32::try_from(r.games).unwrap_or(i32::MAX))
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}
