//! Chat fan-out, apart from the match actors: chat is not a game command (no
//! seq, no rules), so it never enters a match's inbox and can never delay a match. The sending
//! connection's own task stores the message and then pushes it into each receiver's bounded
//! outgoing queue (`ConnHandle::push`, which never waits: a receiver that does not read is
//! closed as too slow, like for diffs).
//!
//! Rooms are keyed by match or lobby. The map is behind a `RwLock` that delivery only reads
//! (shared), and joins and leaves hold for an insert; per-connection mutes are read at delivery,
//! so a muted message is never queued for whoever muted its sender.
//!
//! In a cluster, a [`RoomWatch`] hears when a room gets its first member on this node and when
//! its last one leaves: the node follows a room's lines from the other nodes only meanwhile.

use crate::outbox::ConnHandle;
use crate::store::{Store, StoreError};
use crate::wire::frame;
use protocol::{ChatChannel, ChatLine, ServerMessage};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock, RwLock};
use uuid::Uuid;

/// Stores a chat line before anyone receives it (persist, then broadcast: the admin log has
/// every message anyone received), and gives it its stored id (what reports and removals name).
pub async fn record(
    store: &Store,
    line: &mut ChatLine,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<(), StoreError> {
    line.id = Some(store.insert_chat(line, at).await?);
    Ok(())
}

/// A chat room: a match's (both its channels) or a lobby's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Room {
    Match(Uuid),
    Lobby(Uuid),
}

/// Whom a connection has muted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Muted {
    Account(Uuid),
    Seat(Uuid, u8),
}

/// One connection's mutes, shared with the rooms it is in.
pub type Mutes = Arc<RwLock<HashSet<Muted>>>;

#[derive(Debug, Clone)]
struct Member {
    conn: ConnHandle,
    /// The seat the connection holds in the room's match (a player), if any.
    seat: Option<u8>,
    account: Option<Uuid>,
    mutes: Mutes,
}

/// Hears which rooms have members on this node: the cluster follows a room's chat on NATS
/// from its first member here to its last one's leave. Called with the rooms' lock held, so
/// the calls for one room come in the order of its joins and leaves: it must not block.
pub trait RoomWatch: Send + Sync + std::fmt::Debug {
    /// The room's first member on this node joined.
    fn opened(&self, room: Room);
    /// The room's last member on this node left.
    fn emptied(&self, room: Room);
}

#[derive(Debug, Default)]
pub struct ChatHub {
    rooms: RwLock<HashMap<Room, HashMap<u64, Member>>>,
    watch: OnceLock<Arc<dyn RoomWatch>>,
}

impl ChatHub {
    /// Tells `watch` of the rooms with members from now on (and of those that have some now).
    pub fn watch(&self, watch: Arc<dyn RoomWatch>) {
        if let Ok(rooms) = self.rooms.read() {
            let watch = self.watch.get_or_init(|| watch);
            for room in rooms.keys() {
                watch.opened(*room);
            }
        }
    }

    /// Adds (or updates) a connection in a room.
    pub fn join(
        &self,
        room: Room,
        conn: &ConnHandle,
        seat: Option<u8>,
        account: Option<Uuid>,
        mutes: &Mutes,
    ) {
        let member = Member {
            conn: conn.clone(),
            seat,
            account,
            mutes: Arc::clone(mutes),
        };
        if let Ok(mut rooms) = self.rooms.write() {
            let members = rooms.entry(room).or_default();
            let first = members.is_empty();
            members.insert(conn.id, member);
            if first && let Some(w) = self.watch.get() {
                w.opened(room);
            }
        }
    }

    /// The seat a member of the room is there (`Some(None)`: a spectator); `None` when the
    /// connection is not in the room.
    pub fn seat_in(&self, room: Room, conn_id: u64) -> Option<Option<u8>> {
        let rooms = self.rooms.read().ok()?;
        rooms.get(&room)?.get(&conn_id).map(|m| m.seat)
    }

    pub fn leave(&self, room: Room, conn_id: u64) {
        if let Ok(mut rooms) = self.rooms.write()
            && let Some(members) = rooms.get_mut(&room)
        {
            members.remove(&conn_id);
            if members.is_empty() {
                rooms.remove(&room);
                if let Some(w) = self.watch.get() {
                    w.emptied(room);
                }
            }
        }
    }

    /// Delivers a stored line to the room's members who may read its channel and have not muted
    /// its sender; `lobby_members`: for a lobby line, the accounts seated in the lobby. The
    /// sender (`echo`, when it is on this node) gets it too, once. Returns how many received it.
    pub fn deliver(
        &self,
        room: Room,
        line: &ChatLine,
        lobby_members: Option<&HashSet<Uuid>>,
        echo: Option<&ConnHandle>,
    ) -> usize {
        let f = frame(&ServerMessage::Chat(line.clone()));
        let mut sent = 0;
        let mut echoed = false;
        if let Ok(rooms) = self.rooms.read()
            && let Some(members) = rooms.get(&room)
        {
            for m in members.values() {
                let may_read = match line.channel {
                    ChatChannel::Table => true,
                    ChatChannel::Spectators => m.seat.is_none(),
                    ChatChannel::Lobby => m
                        .account
                        .is_some_and(|a| lobby_members.is_some_and(|s| s.contains(&a))),
                };
                if !may_read || is_muted(&m.mutes, line, room) {
                    continue;
                }
                echoed |= echo.is_some_and(|e| m.conn.id == e.id);
                if m.conn.push(f.clone()) {
                    sent += 1;
                }
            }
        }
        if !echoed && echo.is_some_and(|e| e.push(f)) {
            sent += 1;
        }
        sent
    }
}

impl ChatHub {
    /// Tells every member of the room that an admin removed the line `id` (whatever their
    /// channel: a client that never had the line ignores it). How many were told.
    pub fn removed(&self, room: Room, id: i64) -> usize {
        let (match_id, lobby_id) = match room {
            Room::Match(m) => (Some(m), None),
            Room::Lobby(l) => (None, Some(l)),
        };
        let f = frame(&ServerMessage::ChatRemoved {
            id,
            match_id,
            lobby_id,
        });
        let Ok(rooms) = self.rooms.read() else {
            return 0;
        };
        rooms.get(&room).map_or(0, |members| {
            members.values().filter(|m| m.conn.push(f.clone())).count()
        })
    }
}

fn is_muted(mutes: &Mutes, line: &ChatLine, room: Room) -> bool {
    let Ok(mutes) = mutes.read() else {
        return false;
    };
    if mutes.is_empty() {
        return false;
    }
    line.from
        .account_id
        .is_some_and(|a| mutes.contains(&Muted::Account(a)))
        || matches!((room, line.from.seat), (Room::Match(m), Some(s)) if mutes.contains(&Muted::Seat(m, s)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outbox;
    use std::sync::Mutex;

    /// What a watch heard, in order.
    #[derive(Debug, Default)]
    struct Heard(Mutex<Vec<(&'static str, Room)>>);

    impl RoomWatch for Heard {
        fn opened(&self, room: Room) {
            self.0.lock().expect("lock").push(("opened", room));
        }
        fn emptied(&self, room: Room) {
            self.0.lock().expect("lock").push(("emptied", room));
        }
    }

    fn conn(id: u64) -> ConnHandle {
        let (tx, _rx) = outbox::channel(4);
        ConnHandle::new(id, tx, Arc::default())
    }

    /// A room is opened by its first member and emptied by its last one's leave, not at each
    /// join and leave; a room with members before the watch came is told at once.
    #[test]
    fn the_watch_hears_a_rooms_first_join_and_last_leave() {
        let hub = ChatHub::default();
        let (a, b, c) = (conn(1), conn(2), conn(3));
        let mutes = Mutes::default();
        let (m, l) = (
            Room::Match(Uuid::from_u128(1)),
            Room::Lobby(Uuid::from_u128(2)),
        );
        hub.join(l, &c, None, None, &mutes);
        let heard = Arc::new(Heard::default());
        hub.watch(Arc::clone(&heard) as Arc<dyn RoomWatch>);
        hub.join(m, &a, Some(0), None, &mutes);
        hub.join(m, &b, None, None, &mutes);
        hub.join(m, &a, Some(0), None, &mutes);
        hub.leave(m, a.id);
        hub.leave(m, a.id);
        hub.leave(m, b.id);
        hub.leave(l, 99);
        hub.leave(l, c.id);
        let heard = heard.0.lock().expect("lock").clone();
        assert_eq!(
            heard,
            [("opened", l), ("opened", m), ("emptied", m), ("emptied", l)]
        );
    }
}
