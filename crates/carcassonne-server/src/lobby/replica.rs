//! Lobbies in a cluster: each node keeps a copy of every lobby, for its readers and followers.
//! The node that decides for a lobby ([`super::owner`]) tells the other nodes each change it
//! stored; they replace their copies and push the new state to their own followers. A reader
//! or a follower of a lobby this node does not decide for reads it from the store first (the
//! news may not be here yet).

use super::{Actor, LobbyError, bot_seats, frame, store_failed};
use protocol::{LobbyState, LobbyStatus, ServerMessage};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// A lobby as another node stored it.
#[derive(Debug)]
pub enum Replica {
    /// Its state now (open or started).
    State(Box<LobbyState>),
    /// It closed (no player left).
    Closed(Uuid),
}

impl Actor {
    /// In a cluster, this node's copy of a lobby another node decides for may be behind that
    /// node's change (its news not here yet), or missing (opened elsewhere a moment ago):
    /// before it shows a lobby, it reads it from the store. The owner's copy is the store's.
    pub(super) async fn find(&mut self, id: Uuid) {
        if let Some(cluster) = self.registry.cluster()
            && cluster.lobby_fence(id).is_none()
        {
            let _ = self.refresh(id).await;
        }
    }

    /// Reads a lobby again from the store.
    pub(super) async fn refresh(&mut self, id: Uuid) -> Result<(), LobbyError> {
        let row = self.store.lobby(id).await.map_err(store_failed)?;
        match row.and_then(|r| serde_json::from_str::<LobbyState>(&r.state).ok()) {
            Some(l) => self.replicated(Replica::State(Box::new(l))),
            None => self.replicated(Replica::Closed(id)),
        }
        Ok(())
    }

    /// Takes another node's change: the newer state replaces this node's copy and reaches the
    /// lobby's followers here.
    pub(super) fn replicated(&mut self, replica: Replica) {
        match replica {
            Replica::State(l) => {
                let newer = self
                    .open
                    .get(&l.id)
                    .or_else(|| self.started.get(&l.id))
                    .is_none_or(|mine| mine.version < l.version);
                if !newer {
                    return;
                }
                self.push(&l);
                if l.status == LobbyStatus::Started {
                    self.open.remove(&l.id);
                    self.followers.remove(&l.id);
                    // Started on another node: this node's bot task waits while that node
                    // holds the match, and plays if it goes.
                    if !self.started.contains_key(&l.id)
                        && let Some(match_id) = l.match_id
                    {
                        let after = self
                            .registry
                            .cluster()
                            .map_or(Duration::ZERO, |c| c.renew_period());
                        super::bots::spawn(
                            Arc::clone(&self.registry),
                            match_id,
                            bot_seats(&l),
                            after,
                        );
                    }
                    self.started.insert(l.id, *l);
                } else {
                    self.open.insert(l.id, *l);
                }
            }
            Replica::Closed(id) => {
                if self.open.remove(&id).is_some() {
                    self.closed(id);
                }
            }
        }
    }

    /// Tells the lobby's followers it closed.
    pub(super) fn closed(&mut self, id: Uuid) {
        if let Some(followers) = self.followers.remove(&id) {
            let f = frame(&ServerMessage::LobbyClosed { lobby_id: id });
            for c in followers {
                c.conn.push(f.clone());
            }
        }
    }
}
