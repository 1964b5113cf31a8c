//! News for every node: a revoked session, a lobby's new state or the matches a stopping node
//! hands over, published once by the node where it happened (which delivered it to its own
//! clients already) and delivered by each other node to its own clients (a lobby's state also
//! replaces that node's copy). Chat lines go to the nodes with members in their room only
//! ([`super::rooms`]).

use super::forward::{Broadcast, News};
use super::{Cluster, ClusterError, lock};
use crate::actor::ActorMsg;
use crate::lobby::Replica;
use crate::state::Shared;
use futures_util::StreamExt;
use std::sync::{Arc, Weak};
use tracing::{Instrument, info_span, warn};

impl Cluster {
    /// Publishes `what` for every other node, without waiting.
    pub fn tell_all(&self, what: News) {
        let Some(body) = self.news(what) else {
            return;
        };
        let (nats, subject) = (self.nats.clone(), self.subjects.all());
        tokio::spawn(async move {
            if let Err(e) = nats.publish(subject, body.into()).await {
                warn!(error = %e, "cannot publish news for the cluster");
            }
        });
    }

    /// `what` as this process's news, encoded for the cluster (`None`, logged, if it cannot be).
    pub(super) fn news<T: serde::Serialize>(&self, what: T) -> Option<Vec<u8>> {
        let news = Broadcast {
            from: self.edge.to_string(),
            what,
        };
        serde_json::to_vec(&news)
            .inspect_err(|e| warn!(error = %e, "cannot encode news for the cluster"))
            .ok()
    }

    /// Delivers the other nodes' news to this node's clients, and answers their lobby
    /// requests, from now on.
    pub async fn attach(self: &Arc<Self>, shared: &Arc<Shared>) -> Result<(), ClusterError> {
        let news = self
            .nats
            .subscribe(self.subjects.all())
            .await
            .map_err(|e| ClusterError::Subscribe(e.to_string()))?;
        let span = info_span!("cluster", node = %self.node);
        let task = tokio::spawn(
            deliver(Arc::clone(&self.edge), news, Arc::downgrade(shared)).instrument(span),
        );
        lock(&self.tasks).push(task);
        self.follow_rooms(shared);
        self.serve_lobbies(shared).await
    }
}

async fn deliver(me: Arc<str>, mut news: async_nats::Subscriber, shared: Weak<Shared>) {
    while let Some(msg) = news.next().await {
        let Some(news) = Broadcast::<News>::from_others(&msg.payload, &me) else {
            continue;
        };
        let Some(shared) = shared.upgrade() else {
            return;
        };
        match news {
            News::Revoke { account, session } => {
                shared.live_sessions.revoke(account, session);
            }
            News::Lobby { state } => shared.lobbies.replicated(Replica::State(state)),
            News::LobbyClosed { id } => shared.lobbies.replicated(Replica::Closed(id)),
            News::Adopt { node, matches } => adopt(&shared, node.into(), matches).await,
        }
    }
}

/// Loads the matches a stopping node let go. A proxy here to that node ends first (its clients
/// are told to reconnect); then every node tries, and the lease decides which one runs each
/// match (the others hold a proxy that retires when idle).
async fn adopt(shared: &Shared, node: Arc<str>, matches: Vec<uuid::Uuid>) {
    for id in matches {
        if let Some(h) = shared.registry.running(id)
            && h.tx
                .send(ActorMsg::OwnerLeft(Arc::clone(&node)))
                .await
                .is_ok()
        {
            // A proxy to that node closes its inbox as it ends; an actor goes on.
            let _ =
                tokio::time::timeout(std::time::Duration::from_millis(200), h.tx.closed()).await;
        }
        if shared.registry.get_or_load(id).is_err() {
            return; // shutting down
        }
    }
}
