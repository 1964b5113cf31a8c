//! The owner's side: messages forwarded by other nodes reach this node's actors through a
//! stand-in connection per (node, connection, match), whose bounded queue a relay task
//! publishes, in order, on that connection's relay subject: its answers, snapshots and resumes.
//! A match's live diffs go out once, on the match's subject, for every node that follows it
//! ([`Cluster::publisher`]).

use super::forward::{ACK, ACK_CONN, ACK_EDGE, Forward, Op, Reply};
use super::{Cluster, RemoteKey, lock};
use crate::actor::{ActorMsg, CommandMsg, MatchHandle};
use crate::outbox::{self, ConnHandle, Publication, Publisher, Signals};
use bytes::Bytes;
use futures_util::StreamExt;
use protocol::ErrorCode;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tracing::{debug, warn};
use uuid::Uuid;

/// The stand-ins of other nodes' connections.
#[derive(Debug, Default)]
pub(super) struct Remotes {
    by_key: HashMap<RemoteKey, ConnHandle>,
    /// Whose each stand-in is: (edge process, connection id there), by the stand-in's id.
    by_id: HashMap<u64, (Arc<str>, u64)>,
}

impl Remotes {
    fn insert(&mut self, key: RemoteKey, conn: ConnHandle) {
        self.by_id.insert(conn.id, (Arc::clone(&key.0), key.1));
        if let Some(old) = self.by_key.insert(key, conn) {
            self.by_id.remove(&old.id);
        }
    }

    pub(super) fn remove(&mut self, key: &RemoteKey) -> Option<ConnHandle> {
        let conn = self.by_key.remove(key)?;
        self.by_id.remove(&conn.id);
        Some(conn)
    }

    /// The stand-ins whose key `gone` picks, taken out.
    pub(super) fn take_where(&mut self, gone: impl Fn(&RemoteKey) -> bool) -> Vec<ConnHandle> {
        let keys: Vec<RemoteKey> = self.by_key.keys().filter(|k| gone(k)).cloned().collect();
        keys.iter().filter_map(|k| self.remove(k)).collect()
    }
}

/// Answers the forwarded messages one at a time, in the order they came: a connection's
/// subscription is queued before its next command.
pub(super) async fn serve(cluster: Arc<Cluster>, mut forwards: async_nats::Subscriber) {
    while let Some(msg) = forwards.next().await {
        let reply = match serde_json::from_slice::<Forward>(&msg.payload) {
            Ok(f) => cluster.on_forward(f).await,
            Err(e) => Reply::Refused {
                code: ErrorCode::Malformed,
                message: format!("not a forwarded message: {e}"),
            },
        };
        let Some(to) = msg.reply else { continue };
        match serde_json::to_vec(&reply) {
            Ok(body) => {
                if let Err(e) = cluster.nats.publish(to, body.into()).await {
                    warn!(error = %e, "cannot answer a forwarded message");
                }
            }
            Err(e) => warn!(error = %e, "cannot encode an answer"),
        }
    }
}

impl Cluster {
    async fn on_forward(&self, f: Forward) -> Reply {
        let Some(handle) = self.owned_actor(f.match_id) else {
            return Reply::NotOwner;
        };
        let edge: Arc<str> = f.edge.into();
        let key: RemoteKey = (edge, f.conn, f.match_id);
        let msg = match f.op {
            Op::Subscribe { since } => ActorMsg::Subscribe {
                conn: self.stand_in(&key),
                since,
            },
            Op::Command { seat, id, command } => ActorMsg::Command(Box::new(CommandMsg {
                conn: self.stand_in(&key),
                seat,
                id,
                command,
                arrived: Instant::now(),
            })),
            Op::Unsubscribe => {
                let Some(conn) = lock(&self.remotes).remove(&key) else {
                    return Reply::Queued;
                };
                ActorMsg::Unsubscribe { conn_id: conn.id }
            }
            Op::Away { seat, away } => ActorMsg::Away { seat, away },
            Op::Inspect => {
                let (reply, answer) = oneshot::channel();
                if handle.tx.send(ActorMsg::Inspect { reply }).await.is_err() {
                    return Reply::NotOwner;
                }
                return match answer.await {
                    Ok(state) => Reply::Inspected {
                        state: state.map(|(seq, view)| (seq, Box::new(view))),
                    },
                    Err(_) => Reply::NotOwner,
                };
            }
            Op::Abort => {
                let (reply, answer) = oneshot::channel();
                if handle.tx.send(ActorMsg::Abort { reply }).await.is_err() {
                    return Reply::NotOwner;
                }
                return match answer.await {
                    Ok(Ok(seq)) => Reply::Aborted { seq },
                    Ok(Err(code)) => Reply::Refused {
                        code,
                        message: "the match cannot be aborted".into(),
                    },
                    Err(_) => Reply::NotOwner,
                };
            }
        };
        match handle.tx.try_send(msg) {
            Ok(()) => Reply::Queued,
            Err(crate::queue::TrySendError::Full(_)) => Reply::Refused {
                code: ErrorCode::Busy,
                message: "the match is busy; try again".into(),
            },
            Err(crate::queue::TrySendError::Closed(_)) => Reply::NotOwner,
        }
    }

    /// The actor of a match this node owns, if it runs.
    fn owned_actor(&self, id: uuid::Uuid) -> Option<MatchHandle> {
        if !lock(&self.owned).contains_key(&id) {
            return None;
        }
        self.registry.upgrade()?.running(id)
    }

    /// The stand-in of a connection of another node, made (with its relay) on first use.
    fn stand_in(&self, key: &RemoteKey) -> ConnHandle {
        let mut remotes = lock(&self.remotes);
        if let Some(c) = remotes.by_key.get(key)
            && !c.is_gone()
        {
            return c.clone();
        }
        let (tx, rx) = outbox::channel(self.outgoing_queue);
        let signals = Arc::new(Signals::default());
        let id = self.next_remote.fetch_add(1, Ordering::Relaxed);
        let conn = ConnHandle::new(id, tx, Arc::clone(&signals));
        remotes.insert(key.clone(), conn.clone());
        let subject = self.subjects.relay(&key.0, key.2, key.1);
        tokio::spawn(relay_out(self.nats.clone(), subject, rx, signals));
        conn
    }

    /// A new publisher of the match's diffs for the other nodes, with its task; the task ends
    /// when the publisher is dropped (nobody of another node follows the match any more).
    pub fn publisher(self: &Arc<Self>, match_id: Uuid) -> Publisher {
        let (tx, rx) = mpsc::channel(self.outgoing_queue);
        let subject = self.subjects.match_diffs(match_id);
        tokio::spawn(publish(Arc::clone(self), subject, rx));
        Publisher::new(tx)
    }
}

/// Publishes a match's diffs in order, each once, an ack riding with its diff in the headers
/// (the connection it is for, on its node). A failed publish ends the task: the actor's next
/// diff finds it gone and tells the other nodes' connections to resume.
async fn publish(cluster: Arc<Cluster>, subject: String, mut rx: mpsc::Receiver<Publication>) {
    while let Some(p) = rx.recv().await {
        let to = p
            .ack
            .and_then(|(id, ack)| Some((lock(&cluster.remotes).by_id.get(&id).cloned()?, ack)));
        let body = p.diff.into_bytes();
        let sent = match to {
            None => cluster.nats.publish(subject.clone(), body).await,
            Some(((edge, conn), ack)) => {
                let mut headers = async_nats::HeaderMap::new();
                headers.insert(ACK_EDGE, &*edge);
                headers.insert(ACK_CONN, conn.to_string().as_str());
                // A frame is JSON on one line: a valid header value.
                headers.insert(ACK, ack.as_str());
                cluster
                    .nats
                    .publish_with_headers(subject.clone(), headers, body)
                    .await
            }
        };
        if let Err(e) = sent {
            debug!(error = %e, "cannot publish a match's diff");
            return;
        }
        cluster.meters.published.increment(1);
    }
}

/// Publishes a stand-in's frames in order until every handle on it is gone, or it is told to
/// close (too slow, or the match stopped here): then an empty message tells the edge to close
/// its client's socket, which reconnects with `since`.
async fn relay_out(
    nats: async_nats::Client,
    subject: String,
    mut rx: outbox::Receiver,
    signals: Arc<Signals>,
) {
    loop {
        tokio::select! {
            biased;
            frame = rx.recv() => match frame {
                Some(f) => {
                    // Too slow: what is queued is dropped. Moved: it is written first.
                    if signals.is_raised() && !signals.is_moved() {
                        break;
                    }
                    if let Err(e) = nats.publish(subject.clone(), f.into_bytes()).await {
                        debug!(error = %e, "relay: publish failed");
                        break;
                    }
                    // A catch-up paced on this queue goes on.
                    signals.drained();
                }
                None => return,
            },
            () = signals.wait() => break,
        }
    }
    let _ = nats.publish(subject, Bytes::new()).await;
}
