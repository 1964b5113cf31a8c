//! Which node runs a match: claiming its lease on first touch, renewing every lease this node
//! holds (its lobbies' too, [`super::lobbies`]) in one statement, stopping the actors of the
//! leases lost, letting a lease go when its actor stops, and adopting the matches whose
//! deadline is due while nobody holds them.

use super::{Cluster, lock};
use crate::actor::ActorMsg;
use crate::actor::timers::now_millis;
use crate::store::{Fence, LeaseError, LeaseKey, LeaseKind};
use protocol::ErrorCode;
use std::sync::Arc;
use tracing::{debug, info, warn};
use uuid::Uuid;

/// Matches adopted per upkeep at most: a node that comes back after a long outage takes the
/// due ones a batch at a time, and leaves some to the other nodes.
const ADOPT_BATCH: i64 = 64;

/// Who runs a match, as a node that touches it finds out.
#[derive(Debug)]
pub enum Claim {
    /// This node holds the lease: it runs the match, writing under this fence.
    Owned(Arc<Fence>),
    /// Another node holds it.
    Elsewhere(Arc<str>),
    /// Neither: the match does not exist, or the store failed.
    Failed { code: ErrorCode, message: String },
}

impl Cluster {
    /// Takes the match's lease, or finds out who holds it.
    pub async fn claim(&self, id: Uuid) -> Claim {
        // No lease row for a match that does not exist: nothing else keeps ids honest here.
        match self.store.load_match(id).await {
            Ok(Some(_)) => {}
            Ok(None) => {
                return Claim::Failed {
                    code: ErrorCode::UnknownMatch,
                    message: "no such match".into(),
                };
            }
            Err(e) => return failed(&e),
        }
        match self
            .leases
            .acquire(LeaseKey::of_match(id), &self.node, self.ttl)
            .await
        {
            Ok(lease) => {
                lock(&self.owned).insert(id, lease.epoch);
                self.meters.taken.increment(1);
                debug!(match_id = %id, epoch = lease.epoch, "lease taken");
                Claim::Owned(Arc::new(lease.fence()))
            }
            Err(LeaseError::Held { node, .. }) => Claim::Elsewhere(node.into()),
            Err(LeaseError::Store(e)) => failed(&e),
        }
    }

    /// The actor of a match this node owned stopped: the lease goes at once, so that another
    /// node may take the match without waiting for it to expire.
    pub async fn let_go(&self, id: Uuid, fence: &Fence) {
        let ours = {
            let mut owned = lock(&self.owned);
            let ours = owned.get(&id) == Some(&fence.epoch);
            if ours {
                owned.remove(&id);
            }
            ours
        };
        if !ours {
            return; // lost already
        }
        match self
            .leases
            .release(LeaseKey::of_match(id), &self.node, fence.epoch)
            .await
        {
            Ok(true) => {
                self.meters.released.increment(1);
                debug!(match_id = %id, "lease released");
                if self.draining() {
                    lock(&self.handed).push(id);
                }
            }
            // Taken over already (the actor stopped on a fenced write).
            Ok(false) => self.meters.lost.increment(1),
            Err(e) => warn!(match_id = %id, error = %e, "cannot release a lease: it expires"),
        }
    }

    /// Renews every lease this node holds, matches' and lobbies', in one statement; stops the
    /// actors of the matches it lost, and forgets the lobbies it lost.
    async fn renew(&self) {
        let mut keys: Vec<LeaseKey> = lock(&self.owned)
            .keys()
            .map(|id| LeaseKey::of_match(*id))
            .collect();
        keys.extend(self.lobby_keys());
        if keys.is_empty() {
            return;
        }
        let held = match self.leases.renew_all(&self.node, self.ttl, &keys).await {
            Ok(held) => held,
            Err(e) => {
                // Not lost yet: the appends are fenced, and the next renewal may succeed.
                warn!(error = %e, leases = keys.len(), "cannot renew the leases");
                return;
            }
        };
        let lost_lobbies: Vec<Uuid> = keys
            .iter()
            .filter(|k| k.kind == LeaseKind::Lobby && !held.contains(k))
            .map(|k| k.id)
            .collect();
        self.lobbies_lost(&lost_lobbies);
        let lost: Vec<Uuid> = keys
            .iter()
            .filter(|k| k.kind == LeaseKind::Match && !held.contains(k))
            .map(|k| k.id)
            .collect();
        if lost.is_empty() {
            return;
        }
        let registry = self.registry.upgrade();
        for id in lost {
            lock(&self.owned).remove(&id);
            self.meters.lost.increment(1);
            warn!(match_id = %id, "lease lost: the match's actor stops");
            if let Some(h) = registry.as_ref().and_then(|r| r.running(id)) {
                // A full inbox: the actor's next append is fenced and stops it all the same.
                let _ = h.tx.try_send(ActorMsg::LeaseLost);
            }
        }
    }

    /// Loads the matches whose deadline is due and whose lease nobody holds.
    async fn adopt(&self) {
        let Some(registry) = self.registry.upgrade() else {
            return;
        };
        let until = now_millis() + i64::try_from(self.renew.as_millis()).unwrap_or(i64::MAX);
        match self.leases.orphans_due(until, ADOPT_BATCH).await {
            Ok(ids) => {
                for id in ids {
                    info!(match_id = %id, "adopting a match whose deadline is due");
                    if registry.get_or_load(id).is_err() {
                        return; // shutting down
                    }
                }
            }
            Err(e) => warn!(error = %e, "cannot look for matches without an owner"),
        }
    }

    /// Ends the stand-ins of connections whose process is gone (its node no longer heard, or
    /// heard from a later process): nobody reads them.
    fn sweep_remotes(&self) {
        let conns = lock(&self.remotes).take_where(|(edge, _, _)| !self.edge_alive(edge));
        for conn in conns {
            conn.close_too_slow();
        }
    }
}

fn failed(e: &dyn std::fmt::Display) -> Claim {
    warn!(error = %e, "cannot find out who runs a match");
    Claim::Failed {
        code: ErrorCode::Unavailable,
        message: "the store is not available".into(),
    }
}

/// Every `--lease-renew`: renew, adopt, sweep.
pub(super) async fn upkeep(cluster: Arc<Cluster>) {
    let mut every = tokio::time::interval(cluster.renew);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        cluster.renew().await;
        cluster.meters.owned.set(cluster.owned_count() as f64);
        cluster
            .meters
            .owned_lobbies
            .set(cluster.owned_lobbies() as f64);
        cluster.adopt().await;
        cluster.sweep_remotes();
    }
}
