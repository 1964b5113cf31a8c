//! A match's diffs for the other nodes that follow it (cluster mode), as its actor sees them:
//! one bounded queue per match, whatever the number of nodes and of their connections. The
//! cluster publishes each entry once on the match's subject; every node with followers of the
//! match fans it out to them.

use crate::wire::Frame;
use tokio::sync::mpsc;

/// One diff of a match, as published for the other nodes.
#[derive(Debug)]
pub struct Publication {
    pub diff: Frame,
    /// The ack of the command this diff answers, when its sender is a connection of another
    /// node that follows the match (by its stand-in's id): carried with the diff, so that the
    /// sender reads its ack before the diff whatever the order of the two subjects.
    pub ack: Option<(u64, Frame)>,
}

/// The sending side of a match's publications. Dropping the last one ends the publishing task.
#[derive(Debug)]
pub struct Publisher {
    tx: mpsc::Sender<Publication>,
}

impl Publisher {
    pub fn new(tx: mpsc::Sender<Publication>) -> Publisher {
        Publisher { tx }
    }

    /// Queues a publication without waiting. False when the queue is full or its task ended:
    /// the other nodes will not see this diff, and their followers must resume.
    pub fn publish(&self, p: Publication) -> bool {
        self.tx.try_send(p).is_ok()
    }
}
