//! What the nodes of a cluster say to each other over NATS, and on which subjects. Never seen by
//! a client (the clients' wire types are in the protocol crate): a node forwards what one of its
//! connections sends to a match owned elsewhere, the owner answers whether its actor took it,
//! relays the frames that actor queues for that connection, and publishes the match's diffs
//! once for every node that follows it.
//!
//! Subjects, under the cluster's prefix `p` (`--nats-prefix`), with each node id's `.` written
//! `~` (a subject's tokens are separated by dots; node ids never hold a `~`):
//! - `p.node.<owner>.forward`: requests to the owner of a match ([`Forward`] → [`Reply`]);
//! - `p.node.<owner>.lobby`: decisions for the owner of a lobby (`lobby::Ask` →
//!   `lobby::Answer`, see [`super::lobbies`]);
//! - `p.node.<edge>.relay.<match>.<conn>`: frames for one connection of the edge process
//!   (`<node>+<start number>`), in order: answers, snapshots, resumes, and the live mark
//!   ([`crate::wire::live_mark`]) after which the connection follows the match's diffs;
//!   an empty message ends the relay (the client reconnects with `since`);
//! - `p.match.<match>.diffs`: each diff of the match once, as its frame, while a connection of
//!   another node follows it; the ack of the command it answers rides in the headers
//!   ([`ACK_EDGE`], [`ACK_CONN`], [`ACK`]) when that command came from such a connection;
//! - `p.match.<match>.chat`, `p.lobby.<lobby>.chat`: a chat room's lines and removals
//!   ([`ChatNews`]), read by the nodes with members in the room, each skipping its own;
//! - `p.all`: what every node delivers to its own clients or keeps ([`News`]: revoked
//!   sessions, lobbies' states, matches a stopping node hands over), each node skipping its own;
//! - `p.alive.<node>`: each node's heartbeat, which names its process (`<node>+<start number>`).

use crate::chat::Room;
use protocol::{ErrorCode, Seq};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A message of one client connection of the `edge` process for the match `match_id`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Forward {
    pub match_id: Uuid,
    /// The process holding the connection: its node id, `+`, and a number made at its start
    /// (a restarted node numbers its connections from 1 again).
    pub edge: String,
    /// The connection's id on the edge node.
    pub conn: u64,
    pub op: Op,
}

/// What the connection asks. The edge has already checked who the client is (its seat for a
/// command, its right to watch for a subscription): nodes trust each other, and the NATS
/// server's credentials keep everyone else off these subjects.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    Subscribe {
        since: Option<Seq>,
    },
    Command {
        seat: u8,
        id: String,
        command: rules::Command,
    },
    /// The connection left the match (or closed): no answer is awaited.
    Unsubscribe,
    /// An admin's abort; answered with [`Reply::Aborted`].
    Abort,
    /// The current seq and public view (a lobby bot's driver on another node, say); answered
    /// with [`Reply::Inspected`].
    Inspect,
    /// An admin's away mark, stored already; the actor follows it.
    Away {
        seat: u8,
        away: bool,
    },
}

/// The owner's answer to a [`Forward`].
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    /// The match's actor took the message; its answers come through the relay.
    Queued,
    /// Refused with a client-facing error (a full inbox is `busy`).
    Refused { code: ErrorCode, message: String },
    /// This node does not run the match (any more): ask who does.
    NotOwner,
    /// The abort was stored at this seq.
    Aborted { seq: Seq },
    /// The match's seq and public view; `None` when it cannot be played.
    Inspected {
        state: Option<(Seq, Box<rules::View>)>,
    },
}

/// What one node tells the others, to deliver to their own clients: [`News`] for every node,
/// on the cluster's subject, or [`ChatNews`] for the nodes with members in a chat room, on the
/// room's subject.
#[derive(Debug, Serialize, Deserialize)]
pub struct Broadcast<T = News> {
    /// The sending process (`<node>+<start number>`), which delivered it already.
    pub from: String,
    pub what: T,
}

impl<T: serde::de::DeserializeOwned> Broadcast<T> {
    /// What another process of the cluster published: `None` for this process's own (`me`),
    /// which it delivered already, and for a message that is not news (logged).
    pub fn from_others(payload: &[u8], me: &str) -> Option<T> {
        match serde_json::from_slice::<Broadcast<T>>(payload) {
            Ok(news) if news.from != me => Some(news.what),
            Ok(_) => None,
            Err(e) => {
                tracing::debug!(error = %e, "garbled news from the cluster");
                None
            }
        }
    }
}

/// News of one chat room, published on the room's subject ([`Subjects::chat`]).
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "news", rename_all = "snake_case")]
pub enum ChatNews {
    /// A stored chat line, for the local members of its room who may read it;
    /// `lobby_members`: for a lobby line, the accounts seated in the lobby.
    Line {
        line: protocol::ChatLine,
        lobby_members: Option<Vec<Uuid>>,
    },
    /// An admin removed a chat line of the room: its local members are told.
    Removed { id: i64 },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "news", rename_all = "snake_case")]
pub enum News {
    /// An account's session (`None`: all its sessions) was revoked: its sockets close.
    Revoke {
        account: Uuid,
        session: Option<Uuid>,
    },
    /// A lobby's state as stored (opened, changed or started).
    Lobby { state: Box<protocol::LobbyState> },
    /// A lobby closed (no player left).
    LobbyClosed { id: Uuid },
    /// A node that is stopping (`node`) let these matches go: another node loads them now,
    /// before their clients come back.
    Adopt { node: String, matches: Vec<Uuid> },
}

/// A published diff's headers when an ack rides with it: the edge process and the connection
/// there that sent the command, and the ack's frame.
pub const ACK_EDGE: &str = "Ack-Edge";
pub const ACK_CONN: &str = "Ack-Conn";
pub const ACK: &str = "Ack";

/// The subjects of one cluster (its prefix).
#[derive(Debug, Clone)]
pub struct Subjects {
    prefix: String,
}

impl Subjects {
    pub fn new(prefix: &str) -> Subjects {
        Subjects {
            prefix: prefix.to_owned(),
        }
    }

    pub fn forward(&self, node: &str) -> String {
        format!("{}.node.{}.forward", self.prefix, token(node))
    }

    pub fn lobby(&self, node: &str) -> String {
        format!("{}.node.{}.lobby", self.prefix, token(node))
    }

    pub fn relay(&self, edge: &str, match_id: Uuid, conn: u64) -> String {
        format!(
            "{}.node.{}.relay.{}.{}",
            self.prefix,
            token(edge),
            match_id.simple(),
            conn
        )
    }

    /// Every relay subject of `node` (its one subscription).
    pub fn relays_of(&self, node: &str) -> String {
        format!("{}.node.{}.relay.>", self.prefix, token(node))
    }

    /// The match and connection of a relay subject.
    pub fn parse_relay(&self, subject: &str) -> Option<(Uuid, u64)> {
        let mut tail = subject.rsplit('.');
        let conn = tail.next()?.parse().ok()?;
        let match_id = Uuid::try_parse(tail.next()?).ok()?;
        Some((match_id, conn))
    }

    /// Where the match's diffs are published for every node that follows it.
    pub fn match_diffs(&self, match_id: Uuid) -> String {
        format!("{}.match.{}.diffs", self.prefix, match_id.simple())
    }

    /// A chat room's lines and removals: only the nodes with members there subscribe.
    pub fn chat(&self, room: Room) -> String {
        match room {
            Room::Match(id) => format!("{}.match.{}.chat", self.prefix, id.simple()),
            Room::Lobby(id) => format!("{}.lobby.{}.chat", self.prefix, id.simple()),
        }
    }

    pub fn all(&self) -> String {
        format!("{}.all", self.prefix)
    }

    pub fn alive(&self, node: &str) -> String {
        format!("{}.alive.{}", self.prefix, token(node))
    }

    pub fn alive_all(&self) -> String {
        format!("{}.alive.*", self.prefix)
    }

    /// The node of a heartbeat subject.
    pub fn parse_alive(&self, subject: &str) -> Option<String> {
        let node = subject.rsplit('.').next()?;
        Some(node.replace('~', "."))
    }
}

/// A node id as one subject token.
fn token(node: &str) -> String {
    node.replace('.', "~")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_carry_dotted_node_ids_and_parse_back() {
        let s = Subjects::new("carc");
        let id = Uuid::from_u128(7);
        let relay = s.relay("eu-1.example", id, 42);
        assert_eq!(
            relay,
            format!("carc.node.eu-1~example.relay.{}.42", id.simple())
        );
        assert_eq!(s.parse_relay(&relay), Some((id, 42)));
        assert_eq!(s.parse_relay("carc.node.x.relay.nope.1"), None);
        assert_eq!(s.forward("a.b"), "carc.node.a~b.forward");
        assert_eq!(s.lobby("a.b"), "carc.node.a~b.lobby");
        assert_eq!(
            s.match_diffs(id),
            format!("carc.match.{}.diffs", id.simple())
        );
        assert_eq!(s.parse_alive(&s.alive("a.b")).as_deref(), Some("a.b"));
    }

    #[test]
    fn a_forward_and_its_replies_round_trip() {
        let f = Forward {
            match_id: Uuid::from_u128(1),
            edge: "n1".into(),
            conn: 3,
            op: Op::Subscribe { since: Some(4) },
        };
        let text = serde_json::to_string(&f).expect("serializes");
        let back: Forward = serde_json::from_str(&text).expect("parses");
        assert!(matches!(back.op, Op::Subscribe { since: Some(4) }));
        for r in [
            Reply::Queued,
            Reply::NotOwner,
            Reply::Aborted { seq: 9 },
            Reply::Refused {
                code: ErrorCode::Busy,
                message: "busy".into(),
            },
        ] {
            let text = serde_json::to_string(&r).expect("serializes");
            assert_eq!(serde_json::from_str::<Reply>(&text).expect("parses"), r);
        }
    }
}
