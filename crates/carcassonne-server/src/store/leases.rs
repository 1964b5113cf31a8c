//! Ownership leases with fencing (cluster mode, Postgres only): which node runs a match or a
//! lobby, until when, under which epoch.
//!
//! A node takes a lease that is absent, expired or released, and the lease's epoch goes up by
//! one; it renews its leases while it runs them; a lease it does not renew in time may be taken
//! by another node. The epoch is the fence: a match's append and a lobby's write carry
//! `(node, epoch)` ([`Fence`]), and the write's own transaction checks the lease row and locks
//! it (`FOR KEY SHARE`), so that a stale owner's write never commits (see [`super::pg_writer`]
//! and [`super::lobbies`]).
//!
//! Locks: a takeover locks the row `FOR UPDATE` before it changes it, so it waits for the
//! appends that hold the row's key-share lock, and an append that comes after it sees the new
//! epoch. Renewals and releases take only the update lock that key-share allows: they never
//! wait for an append, and an append never waits for them. Expiry is by the database's clock
//! (`now()`), never a node's. Rows are never deleted (a release sets the expiry to
//! `-infinity`), so an epoch never goes back.

use super::{PgStore, StoreError};
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgPool};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// What a lease is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeaseKind {
    Match,
    Lobby,
}

impl LeaseKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LeaseKind::Match => "match",
            LeaseKind::Lobby => "lobby",
        }
    }

    fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "match" => Ok(LeaseKind::Match),
            "lobby" => Ok(LeaseKind::Lobby),
            other => Err(StoreError::Corrupt(format!("unknown lease kind `{other}`"))),
        }
    }
}

/// The thing a lease is held on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaseKey {
    pub kind: LeaseKind,
    pub id: Uuid,
}

impl LeaseKey {
    pub fn of_match(id: Uuid) -> LeaseKey {
        LeaseKey {
            kind: LeaseKind::Match,
            id,
        }
    }

    pub fn of_lobby(id: Uuid) -> LeaseKey {
        LeaseKey {
            kind: LeaseKind::Lobby,
            id,
        }
    }
}

/// A lease as held: by `node`, under `epoch`, until `expires_at` (the database's clock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub key: LeaseKey,
    pub node: String,
    pub epoch: i64,
    pub expires_at: DateTime<Utc>,
}

impl Lease {
    /// The fence the holder's appends carry.
    pub fn fence(&self) -> Fence {
        Fence {
            node: self.node.as_str().into(),
            epoch: self.epoch,
        }
    }
}

/// The lease a match's append (or a lobby's write) is written under: it commits only if the
/// lease is still held by `node` under `epoch` and has not expired. The node's name is shared by all
/// its appends, hence the `Arc`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    pub node: Arc<str>,
    pub epoch: i64,
}

/// Why a lease was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("the lease is held by node {node} until {expires_at}")]
    Held {
        node: String,
        expires_at: DateTime<Utc>,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for LeaseError {
    fn from(e: sqlx::Error) -> Self {
        LeaseError::Store(StoreError::Db(e))
    }
}

/// The leases of a Postgres store ([`super::Store::leases`]).
#[derive(Debug, Clone)]
pub struct Leases {
    pool: PgPool,
}

impl PgStore {
    pub fn leases(&self) -> Leases {
        Leases {
            pool: self.pool.clone(),
        }
    }
}

impl Leases {
    /// Takes the lease for `node` for `ttl`: see [`acquire_on`].
    pub async fn acquire(
        &self,
        key: LeaseKey,
        node: &str,
        ttl: Duration,
    ) -> Result<Lease, LeaseError> {
        let mut conn = self.pool.acquire().await?;
        acquire_on(&mut conn, key, node, ttl).await
    }

    /// Extends every lease of `keys` that `node` still holds (not expired) by `ttl` from now, in
    /// one statement; the keys it returns are still held, the others are lost (expired, taken
    /// over or released): their holder must stop writing and take them again, under a new
    /// epoch, before it writes.
    pub async fn renew_all(
        &self,
        node: &str,
        ttl: Duration,
        keys: &[LeaseKey],
    ) -> Result<HashSet<LeaseKey>, StoreError> {
        let kinds: Vec<&str> = keys.iter().map(|k| k.kind.as_str()).collect();
        let ids: Vec<Uuid> = keys.iter().map(|k| k.id).collect();
        let rows = sqlx::query(
            "UPDATE leases AS l SET expires_at = now() + make_interval(secs => $2) \
             FROM UNNEST($3::text[], $4::uuid[]) AS k(kind, id) \
             WHERE l.kind = k.kind AND l.id = k.id AND l.node_id = $1 AND l.expires_at > now() \
             RETURNING l.kind, l.id",
        )
        .bind(node)
        .bind(ttl.as_secs_f64())
        .bind(&kinds)
        .bind(&ids)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(LeaseKey {
                    kind: LeaseKind::parse(r.try_get("kind")?)?,
                    id: r.try_get("id")?,
                })
            })
            .collect()
    }

    /// Gives the lease up (a graceful hand-over): another node may take it at once, under the
    /// next epoch. False when `node` no longer held it under `epoch`.
    pub async fn release(&self, key: LeaseKey, node: &str, epoch: i64) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE leases SET expires_at = '-infinity' \
             WHERE kind = $1 AND id = $2 AND node_id = $3 AND epoch = $4 AND expires_at > now()",
        )
        .bind(key.kind.as_str())
        .bind(key.id)
        .bind(node)
        .bind(epoch)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Up to `limit` running matches whose next deadline falls before `until_ms` (milliseconds
    /// since the Unix epoch) and whose lease nobody holds: their owner died or let them go, and
    /// a clock or a decision's timeout needs a node to fire it.
    pub async fn orphans_due(&self, until_ms: i64, limit: i64) -> Result<Vec<Uuid>, StoreError> {
        let rows = sqlx::query(
            "SELECT m.id FROM matches m \
             WHERE m.status = 'active' AND m.wake_at IS NOT NULL AND m.wake_at <= $1 \
               AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.kind = 'match' AND l.id = m.id \
                               AND l.expires_at > now()) \
             ORDER BY m.wake_at LIMIT $2",
        )
        .bind(until_ms)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| r.try_get("id").map_err(StoreError::from))
            .collect()
    }

    /// The nodes running these matches now (live leases only), by match.
    pub async fn match_owners(
        &self,
        ids: &[Uuid],
    ) -> Result<std::collections::HashMap<Uuid, String>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, node_id FROM leases \
             WHERE kind = 'match' AND id = ANY($1) AND expires_at > now()",
        )
        .bind(ids)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("id")?, r.try_get("node_id")?)))
            .collect()
    }

    /// Who holds the lease now; `None` when nobody does (absent, expired or released).
    pub async fn owner(&self, key: LeaseKey) -> Result<Option<Lease>, StoreError> {
        let row = sqlx::query(
            "SELECT node_id, epoch, expires_at FROM leases \
             WHERE kind = $1 AND id = $2 AND expires_at > now()",
        )
        .bind(key.kind.as_str())
        .bind(key.id)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            Ok(Lease {
                key,
                node: r.try_get("node_id")?,
                epoch: r.try_get("epoch")?,
                expires_at: r.try_get("expires_at")?,
            })
        })
        .transpose()
    }
}

/// Takes the lease for `node` until `ttl` from now, in one statement on `conn` (a pooled
/// connection, or a transaction that takes it with other writes): when it is absent (epoch 1),
/// expired or released (the epoch goes up by one), or already `node`'s and live (renewed, same
/// epoch). Held by another node: [`LeaseError::Held`], with that node and its expiry.
///
/// The row is locked `FOR UPDATE` first, so a takeover waits for the appends under way under the
/// old epoch (they hold its key-share lock) and every later one is fenced.
pub async fn acquire_on(
    conn: &mut PgConnection,
    key: LeaseKey,
    node: &str,
    ttl: Duration,
) -> Result<Lease, LeaseError> {
    // A lease found expired on the read-back below was let go between the two statements: tried
    // again a few times (it is free now).
    for _ in 0..3 {
        let taken = sqlx::query(
            "WITH current AS ( \
               SELECT 1 FROM leases WHERE kind = $1 AND id = $2 FOR UPDATE) \
             INSERT INTO leases AS l (kind, id, node_id, epoch, expires_at) \
             SELECT $1, $2, $3, 1, now() + make_interval(secs => $4) \
             WHERE (SELECT count(*) FROM current) >= 0 \
             ON CONFLICT (kind, id) DO UPDATE SET \
               epoch = CASE WHEN l.node_id = EXCLUDED.node_id AND l.expires_at > now() \
                            THEN l.epoch ELSE l.epoch + 1 END, \
               node_id = EXCLUDED.node_id, \
               expires_at = EXCLUDED.expires_at \
             WHERE l.expires_at <= now() OR l.node_id = EXCLUDED.node_id \
             RETURNING l.epoch, l.expires_at",
        )
        .bind(key.kind.as_str())
        .bind(key.id)
        .bind(node)
        .bind(ttl.as_secs_f64())
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(r) = taken {
            return Ok(Lease {
                key,
                node: node.to_string(),
                epoch: r.try_get("epoch")?,
                expires_at: r.try_get("expires_at")?,
            });
        }
        let holder = sqlx::query(
            "SELECT node_id, expires_at FROM leases \
             WHERE kind = $1 AND id = $2 AND expires_at > now()",
        )
        .bind(key.kind.as_str())
        .bind(key.id)
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(r) = holder {
            return Err(LeaseError::Held {
                node: r.try_get("node_id")?,
                expires_at: r.try_get("expires_at")?,
            });
        }
    }
    Err(LeaseError::Store(StoreError::Corrupt(format!(
        "the {} lease {} was neither taken nor held",
        key.kind.as_str(),
        key.id
    ))))
}

/// Checks and key-share-locks `fence` on the lease of `key` in the transaction `conn` is in:
/// the write that follows commits only under this lease. A stale fence:
/// [`StoreError::Fenced`].
pub(super) async fn check_fence(
    conn: &mut PgConnection,
    key: LeaseKey,
    fence: &Fence,
) -> Result<(), StoreError> {
    let id = key.id;
    let held = sqlx::query(
        "SELECT 1 FROM leases \
         WHERE kind = $4 AND id = $1 AND node_id = $2 AND epoch = $3 AND expires_at > now() \
         FOR KEY SHARE",
    )
    .bind(id)
    .bind(&*fence.node)
    .bind(fence.epoch)
    .bind(key.kind.as_str())
    .fetch_optional(conn)
    .await?;
    match held {
        Some(_) => Ok(()),
        None => Err(StoreError::Fenced {
            id,
            node: fence.node.to_string(),
            epoch: fence.epoch,
        }),
    }
}
