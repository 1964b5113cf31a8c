//! Chat across nodes: each room (a match's, a lobby's) has a subject of its own
//! ([`Subjects::chat`]). The node where a line is said delivers it to its own members and
//! publishes it once there; a node reads a room's subject only while it has members in the room
//! (the chat hub tells it, [`RoomWatch`]), so a line costs the nodes with nobody in its room
//! nothing. Removals by an admin take the same way.
//!
//! A node subscribes as its first member joins, without making the join wait: a line said on
//! another node in the moment before the subscription reaches NATS is not pushed to that member
//! (it is stored, and in the room's history, like every line).

use super::forward::{Broadcast, ChatNews, Subjects};
use super::{Cluster, lock};
use crate::chat::{Room, RoomWatch};
use crate::state::Shared;
use futures_util::StreamExt;
use metrics::{Counter, Gauge};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use tokio::task::JoinHandle;
use tracing::{Instrument, debug, info_span, warn};

/// The rooms this node follows on NATS, one task each (its subscription ends with it).
#[derive(Debug)]
pub(super) struct ChatRooms {
    nats: async_nats::Client,
    subjects: Subjects,
    /// This process: it skips its own publications (it delivered them already).
    edge: Arc<str>,
    shared: Weak<Shared>,
    followed: Mutex<HashMap<Room, JoinHandle<()>>>,
    rooms: Gauge,
    received: Counter,
}

impl ChatRooms {
    pub(super) fn new(cluster: &Cluster, shared: &Arc<Shared>) -> ChatRooms {
        ChatRooms {
            nats: cluster.nats.clone(),
            subjects: cluster.subjects.clone(),
            edge: Arc::clone(&cluster.edge),
            shared: Arc::downgrade(shared),
            followed: Mutex::default(),
            rooms: cluster.meters.chat_rooms.clone(),
            received: cluster.meters.chat_received.clone(),
        }
    }

    /// Ends every room's subscription (the node is stopping).
    pub(super) fn stop(&self) {
        for (_, task) in lock(&self.followed).drain() {
            task.abort();
        }
    }
}

impl RoomWatch for ChatRooms {
    fn opened(&self, room: Room) {
        let task = tokio::spawn(
            follow(
                self.nats.clone(),
                self.subjects.chat(room),
                Arc::clone(&self.edge),
                self.shared.clone(),
                room,
                (self.rooms.clone(), self.received.clone()),
            )
            .instrument(info_span!("chat_room", ?room)),
        );
        if let Some(old) = lock(&self.followed).insert(room, task) {
            old.abort();
        }
    }

    fn emptied(&self, room: Room) {
        if let Some(task) = lock(&self.followed).remove(&room) {
            task.abort();
        }
    }
}

/// Counts a room in the gauge while its subscription is in place (dropped with the task).
struct Followed(Gauge);

impl Drop for Followed {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

/// Delivers the room's news from the other nodes to this node's members, until aborted.
async fn follow(
    nats: async_nats::Client,
    subject: String,
    me: Arc<str>,
    shared: Weak<Shared>,
    room: Room,
    (rooms, received): (Gauge, Counter),
) {
    let mut news = match nats.subscribe(subject).await {
        Ok(s) => s,
        Err(e) => return warn!(error = %e, "cannot follow a chat room on NATS"),
    };
    // Once flushed, NATS has the subscription: lines published from now on reach it.
    if let Err(e) = nats.flush().await {
        debug!(error = %e, "cannot flush a chat room's subscription");
    }
    rooms.increment(1.0);
    let _followed = Followed(rooms);
    while let Some(msg) = news.next().await {
        let Some(news) = Broadcast::<ChatNews>::from_others(&msg.payload, &me) else {
            continue;
        };
        let Some(shared) = shared.upgrade() else {
            return;
        };
        received.increment(1);
        match news {
            ChatNews::Line {
                line,
                lobby_members,
            } => {
                let members: Option<HashSet<_>> = lobby_members.map(|m| m.into_iter().collect());
                shared.chat.deliver(room, &line, members.as_ref(), None);
            }
            ChatNews::Removed { id } => {
                shared.chat.removed(room, id);
            }
        }
    }
}

impl Cluster {
    /// Publishes a room's news for the other nodes with members there. Awaited by the sender,
    /// so that one connection's lines are published in the order it said them (the NATS
    /// client's queue takes it at once unless it is full).
    pub async fn tell_room(&self, room: Room, what: ChatNews) {
        let Some(body) = self.news(what) else {
            return;
        };
        let subject = self.subjects.chat(room);
        if let Err(e) = self.nats.publish(subject, body.into()).await {
            warn!(error = %e, "cannot publish chat news for the cluster");
        }
    }

    /// Follows on NATS the chat rooms that have members on this node, from now on.
    pub(super) fn follow_rooms(&self, shared: &Arc<Shared>) {
        let rooms = Arc::new(ChatRooms::new(self, shared));
        if self.rooms.set(Arc::clone(&rooms)).is_ok() {
            shared.chat.watch(rooms);
        }
    }
}
