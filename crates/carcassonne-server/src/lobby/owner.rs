//! Which node decides for a lobby (cluster mode), and the decisions sent to it.
//!
//! Every decision on an open lobby (an [`Action`], a start) is made by one lobby actor: the one
//! of the node holding the lobby's lease (`cluster::lobbies`). The node that creates a lobby
//! takes its lease; a node that gets a decision for an open lobby nobody holds (its owner died,
//! or stopped) takes it then, and reads the lobby again under it. Any other node's actor
//! answers [`Decided::Elsewhere`], and the [`Lobbies`] handle (the HTTP handler's task, never
//! the actor) sends the [`Ask`] to the owner over NATS and hands back its [`Answer`]. The
//! account travels with the request, and the owner's actor applies the same checks as for a
//! local one.
//!
//! Every write of an owner carries its lease's fence, checked in the write's own transaction: a
//! node that lost the lease (paused, cut off) writes nothing, answers `unavailable` and stops
//! deciding for the lobby. The version compare-and-swap of the writes stays too: it costs one
//! `WHERE` term, and it keeps an owner whose copy is behind (its read under a new lease failed
//! half-way, say) from writing over a newer state: it reads the lobby again and answers `busy`.

use super::state::{Action, LobbyError, refuse};
use super::{Actor, Lobbies, Msg, Replica, gone};
use crate::cluster::Claim;
use crate::store::{Fence, StoreError};
use protocol::{Account, ErrorCode, LobbyState};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tokio::sync::oneshot;
use tracing::{debug, error};
use uuid::Uuid;

/// A decision asked of a lobby's owner, by `by`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ask {
    pub by: Account,
    pub lobby: Uuid,
    pub op: Op,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    Act { action: Action },
    Start,
}

/// The owner's answer to an [`Ask`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Answer {
    /// An action's result as its author sees it; `None` when it closed the lobby.
    Changed {
        lobby: Option<Box<LobbyState>>,
    },
    Started {
        match_id: Uuid,
    },
    Refused {
        code: ErrorCode,
        message: String,
    },
    /// The node asked does not decide for the lobby (any more).
    NotOwner,
}

impl From<LobbyError> for Answer {
    fn from(e: LobbyError) -> Answer {
        Answer::Refused {
            code: e.code,
            message: e.message,
        }
    }
}

impl Answer {
    /// Any answer but the one expected, as a refusal.
    pub(super) fn refusal(self) -> LobbyError {
        match self {
            Answer::Refused { code, message } => refuse(code, message),
            Answer::NotOwner => refuse(
                ErrorCode::Unavailable,
                "the lobby is moving to another node; try again",
            ),
            other => {
                error!(answer = ?other, "a lobby answer of the wrong kind");
                refuse(ErrorCode::Internal, "the server failed")
            }
        }
    }
}

/// What a lobby actor makes of an [`Ask`].
#[derive(Debug)]
pub(super) enum Decided {
    Here(Answer),
    /// Another node holds the lobby's lease.
    Elsewhere(Arc<str>),
}

/// Who decides for a lobby, as its actor finds out.
pub(super) enum Owner {
    /// This node: with the fence its writes carry (`None`: a single server, or a lobby that is
    /// not open, refused without a write).
    Here(Option<Arc<Fence>>),
    Elsewhere(Arc<str>),
}

impl Lobbies {
    /// Has the lobby's owner decide: this node's actor, or the owner's over NATS.
    pub(super) async fn decide(&self, ask: Ask) -> Answer {
        match self.decide_here(ask.clone()).await {
            Decided::Here(answer) => answer,
            Decided::Elsewhere(owner) => self.forward(&owner, &ask).await,
        }
    }

    /// A decision another node sent here: decided here, or `NotOwner` (never sent on).
    pub async fn answer(&self, ask: Ask) -> Answer {
        match self.decide_here(ask).await {
            Decided::Here(answer) => answer,
            Decided::Elsewhere(_) => Answer::NotOwner,
        }
    }

    async fn decide_here(&self, ask: Ask) -> Decided {
        let (reply, answer) = oneshot::channel();
        if self.tx.send(Msg::Decide { ask, reply }).await.is_err() {
            return Decided::Here(gone().into());
        }
        answer
            .await
            .unwrap_or_else(|_| Decided::Here(gone().into()))
    }

    async fn forward(&self, owner: &str, ask: &Ask) -> Answer {
        let Some(cluster) = &self.cluster else {
            return gone().into();
        };
        match cluster.ask_lobby_owner(owner, ask).await {
            Ok(answer) => answer,
            Err(e) => {
                debug!(%owner, lobby = %ask.lobby, error = %e, "the lobby's owner did not answer");
                Answer::Refused {
                    code: ErrorCode::Unavailable,
                    message: "the node deciding for this lobby does not answer; try again".into(),
                }
            }
        }
    }
}

impl Actor {
    /// Who decides for lobby `id`: this node when it holds the lease, or takes it now (an open
    /// lobby nobody holds); the holder otherwise.
    pub(super) async fn owner(&mut self, id: Uuid) -> Result<Owner, LobbyError> {
        let Some(cluster) = self.registry.cluster().cloned() else {
            return Ok(Owner::Here(None));
        };
        if let Some(fence) = cluster.lobby_fence(id) {
            return Ok(Owner::Here(Some(fence)));
        }
        // Only an open lobby has an owner: an unknown or started one is refused here, from the
        // store's copy (no lease row for an id that names nothing).
        if !self.open.contains_key(&id) {
            self.refresh(id).await?;
            if !self.open.contains_key(&id) {
                return Ok(Owner::Here(None));
            }
        }
        match cluster.claim_lobby(id).await {
            Claim::Owned(fence) => {
                // Read again under the lease: a previous owner's last write is in (the takeover
                // waited for it), and nobody else writes from now on.
                if let Err(e) = self.refresh(id).await {
                    cluster.release_lobby(id).await;
                    return Err(e);
                }
                if !self.open.contains_key(&id) {
                    cluster.release_lobby(id).await;
                    return Ok(Owner::Here(None));
                }
                Ok(Owner::Here(Some(fence)))
            }
            Claim::Elsewhere(node) => Ok(Owner::Elsewhere(node)),
            Claim::Failed { code, message } => Err(refuse(code, message)),
        }
    }

    /// A new lobby's lease, taken before its first write.
    pub(super) async fn claim_new(&self, id: Uuid) -> Result<Option<Arc<Fence>>, LobbyError> {
        let Some(cluster) = self.registry.cluster() else {
            return Ok(None);
        };
        match cluster.claim_lobby(id).await {
            Claim::Owned(fence) => Ok(Some(fence)),
            Claim::Elsewhere(node) => {
                error!(lobby = %id, %node, "a new lobby's id is leased already");
                Err(refuse(ErrorCode::Internal, "the server failed"))
            }
            Claim::Failed { code, message } => Err(refuse(code, message)),
        }
    }

    /// The lobby started, closed or was never stored: its lease goes.
    pub(super) async fn let_go(&self, id: Uuid) {
        if let Some(cluster) = self.registry.cluster() {
            cluster.release_lobby(id).await;
        }
    }

    /// A write's outcome. Fenced: this node no longer decides for the lobby. Stale: the copy
    /// is read again and the caller tries later.
    pub(super) async fn stored(
        &mut self,
        id: Uuid,
        fence: Option<&Fence>,
        written: Result<(), StoreError>,
    ) -> Result<(), LobbyError> {
        match written {
            Ok(()) => Ok(()),
            Err(StoreError::Fenced { .. }) => {
                if let (Some(cluster), Some(fence)) = (self.registry.cluster(), fence) {
                    cluster.lost_lobby(id, fence);
                }
                Err(refuse(
                    ErrorCode::Unavailable,
                    "the lobby moved to another node; try again",
                ))
            }
            Err(StoreError::StaleLobby(_)) => {
                self.refresh(id).await?;
                Err(refuse(
                    ErrorCode::Busy,
                    "the lobby changed meanwhile; try again",
                ))
            }
            Err(e) => Err(super::store_failed(e)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_and_answers_round_trip() {
        let ask = Ask {
            by: Account {
                id: Uuid::from_u128(1),
                name: "Ana".into(),
                kind: protocol::AccountKind::Guest,
                admin: false,
            },
            lobby: Uuid::from_u128(2),
            op: Op::Act {
                action: Action::Bot(2, protocol::BotLevel::Hard),
            },
        };
        let text = serde_json::to_string(&ask).expect("serializes");
        let back: Ask = serde_json::from_str(&text).expect("parses");
        assert_eq!(back.by, ask.by);
        assert!(matches!(
            back.op,
            Op::Act {
                action: Action::Bot(2, protocol::BotLevel::Hard)
            }
        ));
        for a in [
            Answer::Changed { lobby: None },
            Answer::Started {
                match_id: Uuid::from_u128(3),
            },
            Answer::Refused {
                code: ErrorCode::NotHost,
                message: "no".into(),
            },
            Answer::NotOwner,
        ] {
            let text = serde_json::to_string(&a).expect("serializes");
            assert_eq!(serde_json::from_str::<Answer>(&text).expect("parses"), a);
        }
    }
}
