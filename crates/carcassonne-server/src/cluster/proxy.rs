//! The edge's side: a match owned by another node gets a proxy here, in the registry where its
//! actor would be. The proxy forwards what this node's connections send to the owner and routes
//! the frames relayed back to them; while some of them follow the match, it reads the match's
//! published diffs for them ([`super::fanout`]). When the owner is gone, it closes their sockets
//! (4003: reconnect with `since`, after what was queued) and leaves, so that the next touch
//! finds the match's new owner.

use super::fanout::Fanout;
use super::forward::{Forward, Op, Reply};
use super::meters::Forwarded;
use super::{Cluster, lock};
use crate::actor::{ActorMsg, CommandMsg, LoadOutcome, Registry, refuse};
use crate::outbox::ConnHandle;
use crate::wire::{Frame, error_frame, live_mark_seq};
use async_nats::RequestErrorKind;
use futures_util::StreamExt;
use protocol::ErrorCode;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::time::Instant;
use tracing::{debug, info};
use uuid::Uuid;

/// Why a forward got no answer from the owner.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    #[error("no node answers for the match's owner")]
    NoResponders,
    #[error("the match's owner did not answer in time")]
    TimedOut,
    #[error("the owner does not run the match any more")]
    NotOwner,
    #[error("NATS: {0}")]
    Nats(String),
    #[error("a garbled answer: {0}")]
    Garbled(String),
}

/// What a client is told when its message could not reach the match's owner.
const MOVING: &str = "the match is moving to another node: reconnect and send it again";

impl Cluster {
    /// Sends one message to the owner and waits for its answer.
    pub(crate) async fn forward(&self, owner: &str, f: &Forward) -> Result<Reply, ForwardError> {
        let body = serde_json::to_vec(f).map_err(|e| ForwardError::Garbled(e.to_string()))?;
        let subject = self.subjects.forward(owner);
        let started = Instant::now();
        let asked = tokio::time::timeout(
            self.forward_timeout,
            self.nats.request(subject, body.into()),
        );
        let asked = asked.await;
        self.meters
            .forward_seconds
            .record(started.elapsed().as_secs_f64());
        let outcome = self.forward_outcome(asked);
        self.meters.forwarded(match &outcome {
            Ok(Reply::Refused { .. }) => Forwarded::Refused,
            Ok(_) => Forwarded::Queued,
            Err(_) => Forwarded::Gone,
        });
        outcome
    }

    fn forward_outcome(
        &self,
        asked: Result<
            Result<async_nats::Message, async_nats::RequestError>,
            tokio::time::error::Elapsed,
        >,
    ) -> Result<Reply, ForwardError> {
        let answer = match asked {
            Err(_) => return Err(ForwardError::TimedOut),
            Ok(Err(e)) => return Err(request_failed(&e)),
            Ok(Ok(m)) => m,
        };
        match serde_json::from_slice::<Reply>(&answer.payload) {
            Ok(Reply::NotOwner) => Err(ForwardError::NotOwner),
            Ok(r) => Ok(r),
            Err(e) => Err(ForwardError::Garbled(e.to_string())),
        }
    }

    /// Tells the owner, without waiting, that a connection left the match.
    async fn forward_unsubscribe(&self, owner: &str, match_id: Uuid, conn: u64) {
        let f = Forward {
            match_id,
            edge: self.edge.to_string(),
            conn,
            op: Op::Unsubscribe,
        };
        if let Ok(body) = serde_json::to_vec(&f) {
            let _ = self
                .nats
                .publish(self.subjects.forward(owner), body.into())
                .await;
        }
    }
}

/// Why a NATS request got no answer.
pub(super) fn request_failed(e: &async_nats::RequestError) -> ForwardError {
    match e.kind() {
        RequestErrorKind::NoResponders => ForwardError::NoResponders,
        RequestErrorKind::TimedOut => ForwardError::TimedOut,
        _ => ForwardError::Nats(e.to_string()),
    }
}

/// A proxy's state: the owner, the local connections it routes frames to, and the match's
/// published diffs while some of them follow it.
struct Proxy {
    cluster: Arc<Cluster>,
    id: Uuid,
    owner: Arc<str>,
    conns: HashMap<u64, ConnHandle>,
    fanout: Option<Fanout>,
}

/// What the owner did with a forwarded message.
enum Asked {
    Taken,
    /// Turned away (the client was told).
    Refused,
    /// The owner is gone (the client was told).
    Gone,
}

/// Runs the proxy of match `id` until its owner is gone, it is idle, or the server stops.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    registry: Arc<Registry>,
    id: Uuid,
    generation: u64,
    owner: Arc<str>,
    mut rx: crate::queue::Receiver<ActorMsg>,
) {
    debug!(%owner, "proxy to the match's owner");
    let mut proxy = Proxy {
        cluster: Arc::clone(&cluster),
        id,
        owner,
        conns: HashMap::new(),
        fanout: None,
    };
    let mut every = tokio::time::interval(cluster.renew);
    let mut last_msg = Instant::now();
    loop {
        tokio::select! {
            msg = rx.recv() => {
                let Some(msg) = msg else { break };
                last_msg = Instant::now();
                if !proxy.handle(msg).await {
                    break;
                }
            }
            _ = every.tick() => {
                if !cluster.is_alive(&proxy.owner) {
                    info!(owner = %proxy.owner, "the match's owner is not heard any more");
                    break;
                }
                proxy.sweep().await;
                if proxy.conns.is_empty()
                    && last_msg.elapsed() >= cluster.match_idle
                    && registry.retire(id, generation, &rx)
                {
                    return;
                }
            }
        }
    }
    // Gone: the clients reconnect and find the new owner; what is queued is refused.
    registry.forget(id, generation);
    for (conn_id, conn) in proxy.conns.drain() {
        lock(&cluster.routes).remove(&(id, conn_id));
        conn.close_moved();
    }
    proxy.fanout = None;
    rx.close();
    while let Some(msg) = rx.try_recv() {
        refuse(
            msg,
            ErrorCode::Unavailable,
            MOVING,
            &registry.metrics,
            || LoadOutcome::Failed {
                code: ErrorCode::Unavailable,
                message: MOVING.into(),
            },
        );
    }
}

impl Proxy {
    /// Handles one message; false when the owner is gone.
    async fn handle(&mut self, msg: ActorMsg) -> bool {
        match msg {
            ActorMsg::Command(c) => {
                let CommandMsg {
                    conn,
                    seat,
                    id,
                    command,
                    ..
                } = *c;
                self.route(&conn);
                let op = Op::Command {
                    seat,
                    id: id.clone(),
                    command,
                };
                !matches!(self.ask(&conn, Some(id), op).await, Asked::Gone)
            }
            ActorMsg::Subscribe { conn, since } => {
                self.route(&conn);
                if !self.follow(&conn).await {
                    return false;
                }
                match self.ask(&conn, None, Op::Subscribe { since }).await {
                    Asked::Taken => true,
                    Asked::Refused => {
                        if let Some(f) = &self.fanout {
                            f.followers.refused(conn.id);
                        }
                        true
                    }
                    Asked::Gone => false,
                }
            }
            ActorMsg::Unsubscribe { conn_id } => {
                self.unroute(conn_id).await;
                true
            }
            ActorMsg::Abort { reply } => {
                let f = self.message(0, Op::Abort);
                let answer = match self.cluster.forward(&self.owner, &f).await {
                    Ok(Reply::Aborted { seq }) => Ok(seq),
                    Ok(Reply::Refused { code, .. }) => Err(code),
                    _ => Err(ErrorCode::Unavailable),
                };
                let _ = reply.send(answer);
                true
            }
            ActorMsg::Away { seat, away } => {
                let f = self.message(0, Op::Away { seat, away });
                self.cluster.forward(&self.owner, &f).await.is_ok()
            }
            ActorMsg::Inspect { reply } => {
                let f = self.message(0, Op::Inspect);
                match self.cluster.forward(&self.owner, &f).await {
                    Ok(Reply::Inspected { state }) => {
                        let _ = reply.send(state.map(|(seq, view)| (seq, *view)));
                        true
                    }
                    // Dropped: the asker sees the match stopped, and asks the registry again.
                    _ => false,
                }
            }
            ActorMsg::Loaded(reply) => {
                let _ = reply.send(LoadOutcome::Failed {
                    code: ErrorCode::Unavailable,
                    message: format!("run by node {}", self.owner),
                });
                true
            }
            ActorMsg::Shutdown => false,
            ActorMsg::OwnerLeft(node) => *node != *self.owner,
            ActorMsg::CaughtUp { .. } | ActorMsg::LeaseLost => true,
        }
    }

    fn message(&self, conn: u64, op: Op) -> Forward {
        Forward {
            match_id: self.id,
            edge: self.cluster.edge.to_string(),
            conn,
            op,
        }
    }

    /// Forwards a connection's message; a refusal goes to the client (`id`: the command's),
    /// and so does the owner's absence (then it is closed with the others).
    async fn ask(&mut self, conn: &ConnHandle, id: Option<String>, op: Op) -> Asked {
        let f = self.message(conn.id, op);
        match self.cluster.forward(&self.owner, &f).await {
            Ok(Reply::Queued | Reply::Aborted { .. } | Reply::Inspected { .. }) => Asked::Taken,
            Ok(Reply::Refused { code, message }) => {
                conn.push(error_frame(code, id, message));
                Asked::Refused
            }
            Ok(Reply::NotOwner) | Err(_) => {
                conn.push(error_frame(ErrorCode::Unavailable, id, MOVING));
                Asked::Gone
            }
        }
    }

    /// `conn` resumes: the match's published diffs are read here from now on (before the resume
    /// is forwarded) and held for it until its live mark. False when they cannot be read (the
    /// client is told, and closed with the others).
    async fn follow(&mut self, conn: &ConnHandle) -> bool {
        if self.fanout.is_none() {
            match Fanout::start(&self.cluster, self.id, Arc::clone(&self.owner)).await {
                Ok(f) => self.fanout = Some(f),
                Err(e) => {
                    debug!(error = %e, "cannot subscribe to the match's diffs");
                    conn.push(error_frame(ErrorCode::Unavailable, None, MOVING));
                    return false;
                }
            }
        }
        if let Some(f) = &self.fanout {
            f.followers.follow(conn);
        }
        true
    }

    /// Frames relayed for `conn` in this match reach it from now on.
    fn route(&mut self, conn: &ConnHandle) {
        if let std::collections::hash_map::Entry::Vacant(e) = self.conns.entry(conn.id) {
            e.insert(conn.clone());
            lock(&self.cluster.routes).insert((self.id, conn.id), conn.clone());
        }
    }

    async fn unroute(&mut self, conn_id: u64) {
        if self.conns.remove(&conn_id).is_some() {
            lock(&self.cluster.routes).remove(&(self.id, conn_id));
            if self
                .fanout
                .as_ref()
                .is_some_and(|f| f.followers.unfollow(conn_id))
            {
                self.fanout = None;
            }
            self.cluster
                .forward_unsubscribe(&self.owner, self.id, conn_id)
                .await;
        }
    }

    /// Forgets the connections that closed (a seat that never subscribed, say).
    async fn sweep(&mut self) {
        let gone: Vec<u64> = self
            .conns
            .iter()
            .filter(|(_, c)| c.is_gone())
            .map(|(id, _)| *id)
            .collect();
        for conn_id in gone {
            self.unroute(conn_id).await;
        }
    }
}

/// Routes every frame relayed to this node to its connection; an empty message closes it, and
/// a live mark goes to the match's followers here.
pub(super) async fn relay_in(cluster: Arc<Cluster>, mut relays: async_nats::Subscriber) {
    while let Some(msg) = relays.next().await {
        let Some(key) = cluster.subjects.parse_relay(&msg.subject) else {
            continue;
        };
        if let Some(seq) = live_mark_seq(&msg.payload) {
            let followers = lock(&cluster.fanouts).get(&key.0).cloned();
            if let Some(f) = followers {
                f.live(key.1, seq);
            }
            continue;
        }
        if msg.payload.is_empty() {
            if let Some(conn) = lock(&cluster.routes).remove(&key) {
                conn.close_moved();
            }
            continue;
        }
        let conn = lock(&cluster.routes).get(&key).cloned();
        if let (Some(conn), Some(frame)) = (conn, Frame::from_utf8(msg.payload)) {
            conn.push(frame);
        }
    }
}
