//! What the admin API reads and writes beyond a match's log: the match list with its filters,
//! seats with their away marks, and the audit trail of admin actions (`admin_actions`). Both
//! dialects side by side.

use super::sqlite::uuid_text;
use super::{MatchStatus, PgStore, SqliteStore, Store, StoreError, seat_from_db, seq_from_db};
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

/// A module a match may be filtered by, read from its stored setup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleFilter {
    Tollkeepers,
    Messages,
    Map,
    Chips,
    InnsCathedrals,
    TradersBuilders,
}

impl ModuleFilter {
    fn as_str(self) -> &'static str {
        match self {
            ModuleFilter::Tollkeepers => "tollkeepers",
            ModuleFilter::Messages => "messages",
            ModuleFilter::Map => "map",
            ModuleFilter::Chips => "chips",
            ModuleFilter::InnsCathedrals => "inns_cathedrals",
            ModuleFilter::TradersBuilders => "traders_builders",
        }
    }
}

/// Which matches to list, newest first. `before` is the keyset cursor: the (created_at, id) of
/// the last match of the previous page.
#[derive(Debug, Clone, Default)]
pub struct MatchQuery {
    pub id: Option<Uuid>,
    pub status: Option<MatchStatus>,
    pub module: Option<ModuleFilter>,
    /// Created at or after.
    pub from: Option<DateTime<Utc>>,
    /// Created before.
    pub to: Option<DateTime<Utc>>,
    pub before: Option<(DateTime<Utc>, Uuid)>,
    /// Only matches where this player holds a seat.
    pub player: Option<PlayerFilter>,
    pub limit: u32,
}

/// A player of the match list's filter: an account, or every account of a display name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlayerFilter {
    Account(Uuid),
    /// The lower-cased name (`accounts.name_key`): guests may share a name, so this may match
    /// several accounts.
    NameKey(String),
}

impl PlayerFilter {
    fn account(&self) -> Option<Uuid> {
        match self {
            PlayerFilter::Account(id) => Some(*id),
            PlayerFilter::NameKey(_) => None,
        }
    }

    fn name_key(&self) -> Option<&str> {
        match self {
            PlayerFilter::Account(_) => None,
            PlayerFilter::NameKey(k) => Some(k),
        }
    }
}

/// A match as the admin list shows it.
#[derive(Debug, Clone)]
pub struct MatchListRow {
    pub id: Uuid,
    /// The stored setup (seed included: the caller keeps it to itself).
    pub setup: String,
    pub status: MatchStatus,
    pub rules_version: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The last stored seq (0: no command yet).
    pub seq: u64,
    /// The events of the last command, for a finished match only (its final scores).
    pub last_events: Option<String>,
}

/// A seat as the admin sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatInfo {
    pub match_id: Uuid,
    pub seat: u8,
    pub colour: String,
    pub away_since: Option<DateTime<Utc>>,
    /// The account bound to the seat and its name, if any.
    pub account: Option<(Uuid, String)>,
}

/// One entry of the audit trail.
#[derive(Debug, Clone)]
pub struct AdminActionRow {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub match_id: Option<Uuid>,
    /// JSON.
    pub detail: String,
    pub outcome: String,
}

const SQLITE_LIST: &str = "SELECT m.id, m.setup, m.status, m.rules_version, m.created_at, m.updated_at, \
     COALESCE((SELECT MAX(c.seq) FROM commands c WHERE c.match_id = m.id), 0) AS seq, \
     CASE WHEN m.status = 'finished' THEN (SELECT c.events FROM commands c \
        WHERE c.match_id = m.id ORDER BY c.seq DESC LIMIT 1) END AS last_events \
     FROM matches m \
     WHERE (?1 IS NULL OR m.id = ?1) \
       AND (?2 IS NULL OR m.status = ?2) \
       AND (?3 IS NULL \
            OR (?3 = 'tollkeepers' AND json_extract(m.setup, '$.modules.tollkeepers') = 1) \
            OR (?3 = 'messages' AND json_extract(m.setup, '$.modules.messages') = 1) \
            OR (?3 = 'map' AND json_type(m.setup, '$.modules.map') = 'object') \
            OR (?3 = 'chips' AND json_extract(m.setup, '$.modules.map.chips') = 1) \
            OR (?3 = 'inns_cathedrals' AND json_extract(m.setup, '$.modules.inns_cathedrals') = 1) \
            OR (?3 = 'traders_builders' AND json_extract(m.setup, '$.modules.traders_builders') = 1)) \
       AND (?4 IS NULL OR m.created_at >= ?4) \
       AND (?5 IS NULL OR m.created_at < ?5) \
       AND (?6 IS NULL OR m.created_at < ?6 OR (m.created_at = ?6 AND m.id < ?7)) \
       AND (?9 IS NULL OR EXISTS (SELECT 1 FROM seat_accounts sa \
            WHERE sa.match_id = m.id AND sa.account_id = ?9)) \
       AND (?10 IS NULL OR EXISTS (SELECT 1 FROM seat_accounts sa \
            JOIN accounts a ON a.id = sa.account_id WHERE sa.match_id = m.id AND a.name_key = ?10)) \
     ORDER BY m.created_at DESC, m.id DESC LIMIT ?8";

const PG_LIST: &str = "SELECT m.id, m.setup::text AS setup, m.status, m.rules_version, m.created_at, \
     m.updated_at, \
     COALESCE((SELECT MAX(c.seq) FROM commands c WHERE c.match_id = m.id), 0) AS seq, \
     CASE WHEN m.status = 'finished' THEN (SELECT c.events FROM commands c \
        WHERE c.match_id = m.id ORDER BY c.seq DESC LIMIT 1) END AS last_events \
     FROM matches m \
     WHERE ($1::uuid IS NULL OR m.id = $1) \
       AND ($2::text IS NULL OR m.status = $2) \
       AND ($3::text IS NULL \
            OR ($3 = 'tollkeepers' AND m.setup->'modules'->'tollkeepers' = 'true'::jsonb) \
            OR ($3 = 'messages' AND m.setup->'modules'->'messages' = 'true'::jsonb) \
            OR ($3 = 'map' AND jsonb_typeof(m.setup->'modules'->'map') = 'object') \
            OR ($3 = 'chips' AND m.setup->'modules'->'map'->'chips' = 'true'::jsonb) \
            OR ($3 = 'inns_cathedrals' AND m.setup->'modules'->'inns_cathedrals' = 'true'::jsonb) \
            OR ($3 = 'traders_builders' AND m.setup->'modules'->'traders_builders' = 'true'::jsonb)) \
       AND ($4::timestamptz IS NULL OR m.created_at >= $4) \
       AND ($5::timestamptz IS NULL OR m.created_at < $5) \
       AND ($6::timestamptz IS NULL OR m.created_at < $6 \
            OR (m.created_at = $6 AND m.id < $7::uuid)) \
       AND ($9::uuid IS NULL OR EXISTS (SELECT 1 FROM seat_accounts sa \
            WHERE sa.match_id = m.id AND sa.account_id = $9)) \
       AND ($10::text IS NULL OR EXISTS (SELECT 1 FROM seat_accounts sa \
            JOIN accounts a ON a.id = sa.account_id WHERE sa.match_id = m.id AND a.name_key = $10)) \
     ORDER BY m.created_at DESC, m.id DESC LIMIT $8";

fn sqlite_list_row(r: &SqliteRow) -> Result<MatchListRow, StoreError> {
    let id: String = r.try_get("id")?;
    Ok(MatchListRow {
        id: Uuid::parse_str(&id).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        setup: r.try_get("setup")?,
        status: MatchStatus::parse(r.try_get("status")?)?,
        rules_version: r.try_get("rules_version")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
        seq: seq_from_db(r.try_get("seq")?)?,
        last_events: r.try_get("last_events")?,
    })
}

fn pg_list_row(r: &PgRow) -> Result<MatchListRow, StoreError> {
    Ok(MatchListRow {
        id: r.try_get("id")?,
        setup: r.try_get("setup")?,
        status: MatchStatus::parse(r.try_get("status")?)?,
        rules_version: r.try_get("rules_version")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
        seq: seq_from_db(r.try_get("seq")?)?,
        last_events: r.try_get("last_events")?,
    })
}

fn sqlite_seat(r: &SqliteRow) -> Result<SeatInfo, StoreError> {
    let account: Option<String> = r.try_get("account_id")?;
    let account = match account {
        Some(a) => Some((
            Uuid::parse_str(&a).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            r.try_get("name")?,
        )),
        None => None,
    };
    Ok(SeatInfo {
        account,
        match_id: uuid_text(r, "match_id")?,
        seat: seat_from_db(r.try_get("seat")?)?,
        colour: r.try_get("colour")?,
        away_since: r.try_get("away_since")?,
    })
}

fn pg_seat(r: &PgRow) -> Result<SeatInfo, StoreError> {
    let seat: i16 = r.try_get("seat")?;
    let account: Option<Uuid> = r.try_get("account_id")?;
    let account = match account {
        Some(a) => Some((a, r.try_get("name")?)),
        None => None,
    };
    Ok(SeatInfo {
        account,
        match_id: r.try_get("match_id")?,
        seat: seat_from_db(i64::from(seat))?,
        colour: r.try_get("colour")?,
        away_since: r.try_get("away_since")?,
    })
}

fn sqlite_action(r: &SqliteRow) -> Result<AdminActionRow, StoreError> {
    let match_id: Option<String> = r.try_get("match_id")?;
    Ok(AdminActionRow {
        id: r.try_get("id")?,
        at: r.try_get("at")?,
        actor: r.try_get("actor")?,
        action: r.try_get("action")?,
        match_id: match_id
            .map(|m| Uuid::parse_str(&m).map_err(|e| StoreError::Corrupt(e.to_string())))
            .transpose()?,
        detail: r.try_get("detail")?,
        outcome: r.try_get("outcome")?,
    })
}

fn pg_action(r: &PgRow) -> Result<AdminActionRow, StoreError> {
    Ok(AdminActionRow {
        id: r.try_get("id")?,
        at: r.try_get("at")?,
        actor: r.try_get("actor")?,
        action: r.try_get("action")?,
        match_id: r.try_get("match_id")?,
        detail: r.try_get("detail")?,
        outcome: r.try_get("outcome")?,
    })
}

impl SqliteStore {
    pub(super) async fn list_matches(
        &self,
        q: &MatchQuery,
    ) -> Result<Vec<MatchListRow>, StoreError> {
        sqlx::query(SQLITE_LIST)
            .bind(q.id.map(|i| i.to_string()))
            .bind(q.status.map(MatchStatus::as_str))
            .bind(q.module.map(ModuleFilter::as_str))
            .bind(q.from)
            .bind(q.to)
            .bind(q.before.map(|(t, _)| t))
            .bind(q.before.map(|(_, i)| i.to_string()))
            .bind(i64::from(q.limit))
            .bind(
                q.player
                    .as_ref()
                    .and_then(PlayerFilter::account)
                    .map(|i| i.to_string()),
            )
            .bind(q.player.as_ref().and_then(PlayerFilter::name_key))
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(sqlite_list_row)
            .collect()
    }

    pub(super) async fn seats_of(&self, ids: &[Uuid]) -> Result<Vec<SeatInfo>, StoreError> {
        let ids: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        let ids = serde_json::to_string(&ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        sqlx::query(
            "SELECT s.match_id, s.seat, s.colour, s.away_since, sa.account_id, a.name FROM seats s \
             LEFT JOIN seat_accounts sa ON sa.match_id = s.match_id AND sa.seat = s.seat \
             LEFT JOIN accounts a ON a.id = sa.account_id \
             WHERE s.match_id IN (SELECT value FROM json_each(?1)) ORDER BY s.match_id, s.seat",
        )
        .bind(ids)
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(sqlite_seat)
        .collect()
    }

    pub(super) async fn set_away(
        &self,
        id: Uuid,
        seat: u8,
        since: Option<DateTime<Utc>>,
    ) -> Result<bool, StoreError> {
        let done =
            sqlx::query("UPDATE seats SET away_since = ?1 WHERE match_id = ?2 AND seat = ?3")
                .bind(since)
                .bind(id.to_string())
                .bind(i64::from(seat))
                .execute(&mut *self.writing().await?)
                .await?;
        self.sync().await?;
        Ok(done.rows_affected() == 1)
    }

    pub(super) async fn set_admin(&self, account: Uuid, admin: bool) -> Result<bool, StoreError> {
        let done =
            sqlx::query("UPDATE accounts SET admin = ?1 WHERE id = ?2 AND kind = 'registered'")
                .bind(i64::from(admin))
                .bind(account.to_string())
                .execute(&mut *self.writing().await?)
                .await?;
        self.sync().await?;
        Ok(done.rows_affected() == 1)
    }

    pub(super) async fn record_action(&self, a: &AdminActionRow) -> Result<i64, StoreError> {
        let row = sqlx::query(
            "INSERT INTO admin_actions (at, actor, action, match_id, detail, outcome) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
        )
        .bind(a.at)
        .bind(&a.actor)
        .bind(&a.action)
        .bind(a.match_id.map(|i| i.to_string()))
        .bind(&a.detail)
        .bind(&a.outcome)
        .fetch_one(&mut *self.writing().await?)
        .await?;
        self.sync().await?;
        Ok(row.try_get("id")?)
    }

    pub(super) async fn actions(
        &self,
        match_id: Option<Uuid>,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<AdminActionRow>, StoreError> {
        sqlx::query(
            "SELECT id, at, actor, action, match_id, detail, outcome FROM admin_actions \
             WHERE (?1 IS NULL OR match_id = ?1) AND (?2 IS NULL OR id < ?2) \
             ORDER BY id DESC LIMIT ?3",
        )
        .bind(match_id.map(|i| i.to_string()))
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(sqlite_action)
        .collect()
    }
}

impl PgStore {
    pub(super) async fn list_matches(
        &self,
        q: &MatchQuery,
    ) -> Result<Vec<MatchListRow>, StoreError> {
        sqlx::query(PG_LIST)
            .bind(q.id)
            .bind(q.status.map(MatchStatus::as_str))
            .bind(q.module.map(ModuleFilter::as_str))
            .bind(q.from)
            .bind(q.to)
            .bind(q.before.map(|(t, _)| t))
            .bind(q.before.map(|(_, i)| i))
            .bind(i64::from(q.limit))
            .bind(q.player.as_ref().and_then(PlayerFilter::account))
            .bind(q.player.as_ref().and_then(PlayerFilter::name_key))
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(pg_list_row)
            .collect()
    }

    pub(super) async fn seats_of(&self, ids: &[Uuid]) -> Result<Vec<SeatInfo>, StoreError> {
        sqlx::query(
            "SELECT s.match_id, s.seat, s.colour, s.away_since, sa.account_id, a.name FROM seats s \
             LEFT JOIN seat_accounts sa ON sa.match_id = s.match_id AND sa.seat = s.seat \
             LEFT JOIN accounts a ON a.id = sa.account_id \
             WHERE s.match_id = ANY($1) ORDER BY s.match_id, s.seat",
        )
        .bind(ids)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(pg_seat)
        .collect()
    }

    pub(super) async fn set_away(
        &self,
        id: Uuid,
        seat: u8,
        since: Option<DateTime<Utc>>,
    ) -> Result<bool, StoreError> {
        let done =
            sqlx::query("UPDATE seats SET away_since = $1 WHERE match_id = $2 AND seat = $3")
                .bind(since)
                .bind(id)
                .bind(i16::from(seat))
                .execute(&self.pool)
                .await?;
        Ok(done.rows_affected() == 1)
    }

    pub(super) async fn set_admin(&self, account: Uuid, admin: bool) -> Result<bool, StoreError> {
        let done =
            sqlx::query("UPDATE accounts SET admin = $1 WHERE id = $2 AND kind = 'registered'")
                .bind(admin)
                .bind(account)
                .execute(&self.pool)
                .await?;
        Ok(done.rows_affected() == 1)
    }

    pub(super) async fn record_action(&self, a: &AdminActionRow) -> Result<i64, StoreError> {
        let row = sqlx::query(
            "INSERT INTO admin_actions (at, actor, action, match_id, detail, outcome) \
             VALUES ($1, $2, $3, $4, $5::jsonb, $6) RETURNING id",
        )
        .bind(a.at)
        .bind(&a.actor)
        .bind(&a.action)
        .bind(a.match_id)
        .bind(&a.detail)
        .bind(&a.outcome)
        .fetch_one(&self.pool)
        .await?;
        Ok(row.try_get("id")?)
    }

    pub(super) async fn actions(
        &self,
        match_id: Option<Uuid>,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<AdminActionRow>, StoreError> {
        sqlx::query(
            "SELECT id, at, actor, action, match_id, detail::text AS detail, outcome \
             FROM admin_actions \
             WHERE ($1::uuid IS NULL OR match_id = $1) AND ($2::bigint IS NULL OR id < $2) \
             ORDER BY id DESC LIMIT $3",
        )
        .bind(match_id)
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(pg_action)
        .collect()
    }
}

// The admin API's reads and writes, for either store.

impl Store {
    /// Matches by the query's filters, newest first, at most `limit`.
    pub async fn list_matches(&self, q: &MatchQuery) -> Result<Vec<MatchListRow>, StoreError> {
        match self {
            Store::Sqlite(s) => s.list_matches(q).await,
            Store::Postgres(p) => p.list_matches(q).await,
        }
    }

    /// The seats of these matches, by match then seat.
    pub async fn seats_of(&self, ids: &[Uuid]) -> Result<Vec<SeatInfo>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            Store::Sqlite(s) => s.seats_of(ids).await,
            Store::Postgres(p) => p.seats_of(ids).await,
        }
    }

    /// Marks a seat's player away since `since` (`None`: back). False when there is no such
    /// seat.
    pub async fn set_away(
        &self,
        id: Uuid,
        seat: u8,
        since: Option<DateTime<Utc>>,
    ) -> Result<bool, StoreError> {
        match self {
            Store::Sqlite(s) => s.set_away(id, seat, since).await,
            Store::Postgres(p) => p.set_away(id, seat, since).await,
        }
    }

    /// Gives a registered account the admin role, or takes it away. False when there is no
    /// such registered account (guests cannot be admins).
    pub async fn set_admin(&self, account: Uuid, admin: bool) -> Result<bool, StoreError> {
        match self {
            Store::Sqlite(s) => s.set_admin(account, admin).await,
            Store::Postgres(p) => p.set_admin(account, admin).await,
        }
    }

    /// Appends to the audit trail; the row's `id` is ignored and the new one returned.
    pub async fn record_action(&self, a: &AdminActionRow) -> Result<i64, StoreError> {
        match self {
            Store::Sqlite(s) => s.record_action(a).await,
            Store::Postgres(p) => p.record_action(a).await,
        }
    }

    /// The audit trail, newest first: of one match or all, before the entry `before`.
    pub async fn actions(
        &self,
        match_id: Option<Uuid>,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<AdminActionRow>, StoreError> {
        match self {
            Store::Sqlite(s) => s.actions(match_id, before, limit).await,
            Store::Postgres(p) => p.actions(match_id, before, limit).await,
        }
    }
}
