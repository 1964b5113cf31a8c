//! The cluster's series, each labelled with the node id: the matches and lobbies a node owns,
//! what happened to its leases, its forwards to other owners (by outcome, and their round trip),
//! the diffs it publishes for other nodes and those it fans out to its own connections, the chat
//! rooms it follows and the lines it hears there, and its reconnections to NATS.

use crate::meters::{FORWARD, Metrics};
use metrics::{Counter, Gauge, Histogram, Label};

const OWNED: &str = "carcassonne_cluster_owned_matches";
const LEASES: &str = "carcassonne_cluster_leases_total";
const OWNED_LOBBIES: &str = "carcassonne_cluster_owned_lobbies";
const LOBBY_LEASES: &str = "carcassonne_cluster_lobby_leases_total";
const FORWARDS: &str = "carcassonne_cluster_forwards_total";
const RECONNECTS: &str = "carcassonne_cluster_nats_reconnects_total";
const PUBLISHED: &str = "carcassonne_cluster_diffs_published_total";
const FANNED_OUT: &str = "carcassonne_cluster_diffs_fanned_out_total";
const EDGE_RESUMES: &str = "carcassonne_cluster_edge_resumes_total";
const CHAT_ROOMS: &str = "carcassonne_cluster_chat_rooms";
const CHAT_RECEIVED: &str = "carcassonne_cluster_chat_received_total";

/// What a forward came to.
#[derive(Debug, Clone, Copy)]
pub enum Forwarded {
    /// The owner's actor took it.
    Queued,
    /// The owner refused it with a client-facing error (busy, say).
    Refused,
    /// No owner answered: the match is moving.
    Gone,
}

#[derive(Debug)]
pub struct ClusterMeters {
    pub owned: Gauge,
    pub taken: Counter,
    pub lost: Counter,
    pub released: Counter,
    pub owned_lobbies: Gauge,
    pub lobby_taken: Counter,
    pub lobby_lost: Counter,
    pub lobby_released: Counter,
    forwards: [Counter; 3],
    pub forward_seconds: Histogram,
    pub reconnects: Counter,
    /// Diffs of the matches it owns published for the other nodes (once a diff, whatever the
    /// number of nodes and connections following).
    pub published: Counter,
    /// Published diffs this node handed to its own connections (one per connection and diff).
    pub fanned_out: Counter,
    /// Resumes this node asked for a connection of its own that missed a published diff.
    pub edge_resumes: Counter,
    /// Chat rooms this node follows on NATS (those with members here), once subscribed.
    pub chat_rooms: Gauge,
    /// Chat lines and removals said on other nodes that reached this node.
    pub chat_received: Counter,
}

impl ClusterMeters {
    pub fn new(metrics: &Metrics, node: &str) -> ClusterMeters {
        let node = || Label::new("node", node.to_owned());
        let with = |k: &'static str, v: &'static str| vec![node(), Label::from_static_parts(k, v)];
        let lease = |event| {
            metrics.counter(
                LEASES,
                with("event", event),
                "Match leases of this node, by event: taken, lost (another node took it, or it expired), released.",
            )
        };
        let lobby_lease = |event| {
            metrics.counter(
                LOBBY_LEASES,
                with("event", event),
                "Lobby leases of this node, by event: taken, lost (another node took it, it expired, or a write was fenced), released.",
            )
        };
        let forward = |outcome| {
            metrics.counter(
                FORWARDS,
                with("outcome", outcome),
                "Messages forwarded to the node owning their match, by outcome: queued, refused, gone (no owner answered).",
            )
        };
        ClusterMeters {
            owned: metrics.gauge(OWNED, vec![node()], "Matches whose lease this node holds."),
            taken: lease("taken"),
            lost: lease("lost"),
            released: lease("released"),
            owned_lobbies: metrics.gauge(
                OWNED_LOBBIES,
                vec![node()],
                "Open lobbies whose lease this node holds (it decides for them).",
            ),
            lobby_taken: lobby_lease("taken"),
            lobby_lost: lobby_lease("lost"),
            lobby_released: lobby_lease("released"),
            forwards: [forward("queued"), forward("refused"), forward("gone")],
            forward_seconds: metrics.histogram(
                FORWARD,
                vec![node()],
                "A forward's round trip to the node owning its match or lobby.",
            ),
            reconnects: metrics.counter(
                RECONNECTS,
                vec![node()],
                "Times this node's connection to NATS was made again after a loss.",
            ),
            published: metrics.counter(
                PUBLISHED,
                vec![node()],
                "Diffs of the matches this node owns published once for every other node that follows them.",
            ),
            fanned_out: metrics.counter(
                FANNED_OUT,
                vec![node()],
                "Published diffs of other nodes' matches handed to this node's connections, one per connection.",
            ),
            edge_resumes: metrics.counter(
                EDGE_RESUMES,
                vec![node()],
                "Resumes this node asked of a match's owner for a connection that missed a published diff.",
            ),
            chat_rooms: metrics.gauge(
                CHAT_ROOMS,
                vec![node()],
                "Chat rooms (matches, lobbies) with members on this node, whose lines from other nodes it reads.",
            ),
            chat_received: metrics.counter(
                CHAT_RECEIVED,
                vec![node()],
                "Chat lines and removals said on other nodes that reached this node (only rooms with members here).",
            ),
        }
    }

    pub fn forwarded(&self, outcome: Forwarded) {
        self.forwards[outcome as usize].increment(1);
    }
}
