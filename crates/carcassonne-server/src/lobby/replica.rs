//! Lobbies in a cluster: each node keeps a copy of every lobby, written through the store with
//! the state's version as a compare-and-swap (`store::StoreError::StaleLobby`), and tells the
//! other nodes each change it stored, which replace their copies and push the new state to
//! their own followers. A node that is behind (a change's news not arrived, or dropped) finds
//! out at its next write of that lobby, reads it again and tries once more.

use super::{Actor, LobbyError, frame, store_failed};
use protocol::{LobbyState, LobbyStatus, ServerMessage};
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
    /// In a cluster, a lobby this node does not know may have been opened on another a moment
    /// ago (its news not here yet): it is read from the store.
    pub(super) async fn find(&mut self, id: Uuid) {
        let known = self.open.contains_key(&id) || self.started.contains_key(&id);
        if !known && self.registry.cluster().is_some() {
            let _ = self.refresh(id).await;
        }
    }

    /// Reads a lobby again from the store (another node changed it).
    pub(super) async fn refresh(&mut self, id: Uuid) -> Result<(), LobbyError> {
        let rows = self.store.live_lobbies().await.map_err(store_failed)?;
        let found = rows
            .iter()
            .find(|r| r.id == id)
            .and_then(|r| serde_json::from_str::<LobbyState>(&r.state).ok());
        match found {
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

    /// In a cluster, every other node's copy follows this change.
    pub(super) fn tell_cluster(&self, replica: Replica) {
        let Some(cluster) = self.registry.cluster() else {
            return;
        };
        cluster.tell_all(match replica {
            Replica::State(l) => crate::cluster::News::Lobby { state: l },
            Replica::Closed(id) => crate::cluster::News::LobbyClosed { id },
        });
    }
}
