//! The owner's side: messages forwarded by other nodes reach this node's actors through a
//! stand-in connection per (node, connection, match), whose bounded queue a relay task
//! publishes, in order, on that connection's relay subject.

use super::forward::{Forward, Op, Reply};
use super::{Cluster, RemoteKey, lock};
use crate::actor::{ActorMsg, CommandMsg, MatchHandle};
use crate::outbox::{self, ConnHandle, TooSlow};
use bytes::Bytes;
use futures_util::StreamExt;
use protocol::ErrorCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::time::Instant;
use tracing::{debug, warn};

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
            Err(mpsc::error::TrySendError::Full(_)) => Reply::Refused {
                code: ErrorCode::Busy,
                message: "the match is busy; try again".into(),
            },
            Err(mpsc::error::TrySendError::Closed(_)) => Reply::NotOwner,
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
        if let Some(c) = remotes.get(key)
            && !c.is_gone()
        {
            return c.clone();
        }
        let (tx, rx) = outbox::channel(self.outgoing_queue);
        let too_slow = Arc::new(TooSlow::default());
        let drained = Arc::new(Notify::new());
        let id = self.next_remote.fetch_add(1, Ordering::Relaxed);
        let conn = ConnHandle::new(id, tx, Arc::clone(&too_slow), Arc::clone(&drained));
        remotes.insert(key.clone(), conn.clone());
        let subject = self.subjects.relay(&key.0, key.2, key.1);
        tokio::spawn(relay_out(self.nats.clone(), subject, rx, too_slow, drained));
        conn
    }
}

/// Publishes a stand-in's frames in order until every handle on it is gone, or it is told to
/// close (too slow, or the match stopped here): then an empty message tells the edge to close
/// its client's socket, which reconnects with `since`.
async fn relay_out(
    nats: async_nats::Client,
    subject: String,
    mut rx: outbox::Receiver,
    too_slow: Arc<TooSlow>,
    drained: Arc<Notify>,
) {
    loop {
        tokio::select! {
            biased;
            frame = rx.recv() => match frame {
                Some(f) => {
                    // Too slow: what is queued is dropped. Moved: it is written first.
                    if too_slow.is_raised() && !too_slow.is_moved() {
                        break;
                    }
                    if let Err(e) = nats.publish(subject.clone(), f.into_bytes()).await {
                        debug!(error = %e, "relay: publish failed");
                        break;
                    }
                    // A catch-up paced on this queue goes on.
                    drained.notify_waiters();
                }
                None => return,
            },
            () = too_slow.wait() => break,
        }
    }
    let _ = nats.publish(subject, Bytes::new()).await;
}
