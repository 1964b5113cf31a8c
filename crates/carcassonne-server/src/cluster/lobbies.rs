//! Lobbies' leases on this node, and the lobby requests sent to a lobby's owner.
//!
//! Each open lobby is decided by one node: the one holding its lease (kind `lobby` in the same
//! table as the matches'). A node takes it when it creates the lobby, or when a request touches
//! a lobby whose lease nobody holds (its owner died, or let it go); it renews it with its match
//! leases, in the same statement ([`super::ownership`]); it releases it when the lobby starts
//! or closes, and all of them when it stops. A lobby write refused by the fence drops the
//! lease here without a release (another node holds it already).
//!
//! A node that does not own a lobby sends each decision to the owner over NATS request/reply on
//! `p.node.<owner>.lobby` (the account travels with the request, and the owner's lobby actor
//! checks it as for a local one); the owner answers each request from a task of its own, so
//! that one slow lobby write does not hold up the next request.

use super::{Claim, Cluster, ClusterError, ForwardError, lock};
use crate::lobby::{Answer, Ask};
use crate::state::Shared;
use crate::store::{Fence, LeaseError, LeaseKey};
use futures_util::StreamExt;
use protocol::ErrorCode;
use std::sync::{Arc, Weak};
use tokio::time::Instant;
use tracing::{Instrument, debug, info, info_span, warn};
use uuid::Uuid;

impl Cluster {
    /// The fence of a lobby whose lease this node holds.
    pub fn lobby_fence(&self, id: Uuid) -> Option<Arc<Fence>> {
        lock(&self.lobbies).get(&id).cloned()
    }

    /// How many lobbies this node decides.
    pub fn owned_lobbies(&self) -> usize {
        lock(&self.lobbies).len()
    }

    /// Takes the lobby's lease, or finds out who holds it. A node that is stopping takes none.
    pub async fn claim_lobby(&self, id: Uuid) -> Claim {
        if self.draining() {
            return Claim::Failed {
                code: ErrorCode::Unavailable,
                message: "this node is stopping; try again".into(),
            };
        }
        match self
            .leases
            .acquire(LeaseKey::of_lobby(id), &self.node, self.ttl)
            .await
        {
            Ok(lease) => {
                let fence = Arc::new(lease.fence());
                lock(&self.lobbies).insert(id, Arc::clone(&fence));
                self.meters.lobby_taken.increment(1);
                debug!(lobby = %id, epoch = lease.epoch, "lobby lease taken");
                Claim::Owned(fence)
            }
            Err(LeaseError::Held { node, .. }) => Claim::Elsewhere(node.into()),
            Err(LeaseError::Store(e)) => {
                warn!(lobby = %id, error = %e, "cannot find out who decides a lobby");
                Claim::Failed {
                    code: ErrorCode::Unavailable,
                    message: "the store is not available".into(),
                }
            }
        }
    }

    /// The lobby started or closed (or never was): its lease goes at once.
    pub async fn release_lobby(&self, id: Uuid) {
        let Some(fence) = lock(&self.lobbies).remove(&id) else {
            return;
        };
        self.give_back(id, &fence).await;
    }

    /// A write under `fence` was refused: another node holds the lobby now.
    pub fn lost_lobby(&self, id: Uuid, fence: &Fence) {
        let mut lobbies = lock(&self.lobbies);
        if lobbies.get(&id).is_some_and(|f| **f == *fence) {
            lobbies.remove(&id);
            self.meters.lobby_lost.increment(1);
            warn!(lobby = %id, "lobby lease lost: its decisions go to the new owner");
        }
    }

    /// The renewal found these lobbies' leases lost.
    pub(super) fn lobbies_lost(&self, ids: &[Uuid]) {
        let mut lobbies = lock(&self.lobbies);
        for id in ids {
            if lobbies.remove(id).is_some() {
                self.meters.lobby_lost.increment(1);
                warn!(lobby = %id, "lobby lease lost: its decisions go to the new owner");
            }
        }
    }

    /// The lobbies whose lease this node holds.
    pub(super) fn lobby_keys(&self) -> Vec<LeaseKey> {
        lock(&self.lobbies)
            .keys()
            .map(|id| LeaseKey::of_lobby(*id))
            .collect()
    }

    /// On a graceful stop (after [`Cluster::drain`], so no lease is taken again): every lobby
    /// lease goes, so that the next node a request touches takes the lobby at once.
    pub async fn release_lobbies(&self) {
        let all: Vec<(Uuid, Arc<Fence>)> = lock(&self.lobbies).drain().collect();
        if !all.is_empty() {
            info!(lobbies = all.len(), "letting the lobbies go");
        }
        for (id, fence) in all {
            self.give_back(id, &fence).await;
        }
    }

    async fn give_back(&self, id: Uuid, fence: &Fence) {
        match self
            .leases
            .release(LeaseKey::of_lobby(id), &self.node, fence.epoch)
            .await
        {
            Ok(true) => self.meters.lobby_released.increment(1),
            Ok(false) => self.meters.lobby_lost.increment(1),
            Err(e) => warn!(lobby = %id, error = %e, "cannot release a lobby lease: it expires"),
        }
    }

    /// Sends a lobby decision to the node that owns the lobby and waits for its answer, at
    /// most `--forward-timeout`.
    pub async fn ask_lobby_owner(&self, owner: &str, ask: &Ask) -> Result<Answer, ForwardError> {
        let body = serde_json::to_vec(ask).map_err(|e| ForwardError::Garbled(e.to_string()))?;
        let subject = self.subjects.lobby(owner);
        let started = Instant::now();
        let asked = tokio::time::timeout(
            self.forward_timeout,
            self.nats.request(subject, body.into()),
        )
        .await;
        self.meters
            .forward_seconds
            .record(started.elapsed().as_secs_f64());
        let answer = match asked {
            Err(_) => return Err(ForwardError::TimedOut),
            Ok(Err(e)) => return Err(super::proxy::request_failed(&e)),
            Ok(Ok(m)) => m,
        };
        serde_json::from_slice::<Answer>(&answer.payload)
            .map_err(|e| ForwardError::Garbled(e.to_string()))
    }

    /// Answers the lobby requests other nodes send this node, from now on.
    pub(super) async fn serve_lobbies(
        self: &Arc<Self>,
        shared: &Arc<Shared>,
    ) -> Result<(), ClusterError> {
        let asks = self
            .nats
            .subscribe(self.subjects.lobby(&self.node))
            .await
            .map_err(|e| ClusterError::Subscribe(e.to_string()))?;
        let span = info_span!("cluster", node = %self.node);
        let task = tokio::spawn(
            answer_all(self.nats.clone(), asks, Arc::downgrade(shared)).instrument(span),
        );
        lock(&self.tasks).push(task);
        Ok(())
    }
}

/// Each request in a task of its own: the lobby actor puts them in order.
async fn answer_all(
    nats: async_nats::Client,
    mut asks: async_nats::Subscriber,
    shared: Weak<Shared>,
) {
    while let Some(msg) = asks.next().await {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let Some(to) = msg.reply.clone() else {
            continue;
        };
        let nats = nats.clone();
        tokio::spawn(async move {
            let answer = match serde_json::from_slice::<Ask>(&msg.payload) {
                Ok(ask) => shared.lobbies.answer(ask).await,
                Err(e) => Answer::Refused {
                    code: ErrorCode::Malformed,
                    message: format!("not a lobby request: {e}"),
                },
            };
            match serde_json::to_vec(&answer) {
                Ok(body) => {
                    if let Err(e) = nats.publish(to, body.into()).await {
                        warn!(error = %e, "cannot answer a lobby request");
                    }
                }
                Err(e) => warn!(error = %e, "cannot encode a lobby answer"),
            }
        });
    }
}
