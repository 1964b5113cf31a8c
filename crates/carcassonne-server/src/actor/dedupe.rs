//! What a match remembers of command ids, to give a repeated id its first answer: the ids of
//! every accepted command (rebuilt by every load's replay) and the recent refusals.

use crate::wire::{Frame, ack_frame, frame};
use protocol::{ErrorBody, Seq, ServerMessage};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use uuid::Uuid;

/// How many refused command ids each seat of a match has remembered, to answer a repeated id with
/// the same error. Per seat, so that one seat's refusals never push out another's.
const REJECTED_CACHE: usize = 256;

/// An accepted command's (seat, client id), as the dedupe table keeps it: the first 128 bits of
/// SHA-256 over the seat and the id. 16 bytes whatever the id's length, and no allocation; two
/// different ids of one seat sharing a key is a 2^-128 event (and would only refuse the second
/// one as a repeat: a command is never applied twice).
pub type IdKey = [u8; 16];

/// The key of a seat's command id.
pub fn id_key(seat: u8, id: &str) -> IdKey {
    let digest = Sha256::new()
        .chain_update([seat])
        .chain_update(id.as_bytes())
        .finalize();
    let mut key = [0; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

/// What a match remembers of command ids, to give a repeated id its first answer: every accepted
/// id, and the recently refused ones (bounded per seat). It is the only guard against storing an
/// id twice (the store keeps no unique index on ids): it is rebuilt from the
/// store by every load's replay, and one actor owns each match.
#[derive(Debug, Default)]
pub struct Dedupe {
    /// Every accepted command's (seat, id) key, in seq order: the key at index `i` is seq
    /// `i + 1` (every seq from 1 is an accepted command, and a batch is stored in seq order).
    /// Sized by what the match played (16 bytes a command, no per-id allocation); a linear scan,
    /// since a match has a few hundred commands at most and a repeated id is rare.
    accepted: Vec<IdKey>,
    /// Recently refused command ids and their answers, bounded per seat.
    rejected: HashMap<(u8, String), ErrorBody>,
    /// Per seat, its refused ids in `rejected`, oldest first.
    rejected_order: HashMap<u8, VecDeque<String>>,
}

impl Dedupe {
    /// `accepted`: every accepted command's key from seq 1 on, as a replay gives them.
    pub(super) fn new(mut accepted: Vec<IdKey>) -> Self {
        accepted.shrink_to_fit();
        Dedupe {
            accepted,
            ..Dedupe::default()
        }
    }

    /// The first answer to a repeated id (accepted before, accepted earlier in this batch, or
    /// refused recently), or `None` for a new id. `idk`: the id's [`id_key`], hashed once per
    /// command by the caller (it is also what the command is remembered by).
    pub(super) fn answer(
        &self,
        match_id: Uuid,
        key: &(u8, String),
        idk: &IdKey,
        pending: &[(IdKey, Seq)],
    ) -> Option<Frame> {
        let seq = pending
            .iter()
            .find(|(k, _)| k == idk)
            .map(|&(_, seq)| seq)
            .or_else(|| {
                let i = self.accepted.iter().position(|k| k == idk)?;
                Some(i as Seq + 1)
            });
        if let Some(seq) = seq {
            return Some(ack_frame(&key.1, match_id, seq));
        }
        self.rejected
            .get(key)
            .map(|body| frame(&ServerMessage::Error(body.clone())))
    }

    /// Remembers a refusal, forgetting the seat's oldest one beyond [`REJECTED_CACHE`].
    pub(super) fn remember_refusal(&mut self, seat: u8, body: ErrorBody) {
        let Some(id) = body.id.clone() else { return };
        let order = self.rejected_order.entry(seat).or_default();
        if order.len() >= REJECTED_CACHE
            && let Some(old) = order.pop_front()
        {
            self.rejected.remove(&(seat, old));
        }
        order.push_back(id.clone());
        self.rejected.insert((seat, id), body);
    }

    /// Remembers the ids of a stored batch (their keys and seqs, in seq order, the first right
    /// after the last remembered).
    pub(super) fn stored(&mut self, pending: Vec<(IdKey, Seq)>) {
        for (key, seq) in pending {
            debug_assert_eq!(seq, self.accepted.len() as Seq + 1, "a seq skipped");
            self.accepted.push(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::ErrorCode;

    /// `Dedupe::answer`, hashing the id as the actor does.
    fn answer(d: &Dedupe, m: Uuid, key: &(u8, String), pending: &[(IdKey, Seq)]) -> Option<Frame> {
        d.answer(m, key, &id_key(key.0, &key.1), pending)
    }

    fn refusal(id: &str) -> ErrorBody {
        ErrorBody::new(ErrorCode::Rule, format!("no {id}")).with_id(id)
    }

    /// A repeated id gets its first answer: the ack of an accepted (or pending) id, the same
    /// error for a refused one; each seat remembers its own last `REJECTED_CACHE` refusals.
    #[test]
    fn dedupe_answers_repeated_ids_and_bounds_refusals_per_seat() {
        let m = Uuid::nil();
        let mut d = Dedupe::new(vec![id_key(0, "a")]);
        let pending = vec![(id_key(1, "b"), 2)];
        let ack = |f: Option<Frame>| f.map(|f| f.as_str().to_string()).unwrap_or_default();
        assert!(ack(answer(&d, m, &(0, "a".into()), &pending)).contains(r#""seq":1"#));
        assert!(ack(answer(&d, m, &(1, "b".into()), &pending)).contains(r#""seq":2"#));
        assert_eq!(
            answer(&d, m, &(1, "a".into()), &pending),
            None,
            "ids are per seat"
        );
        for i in 0..REJECTED_CACHE {
            d.remember_refusal(0, refusal(&format!("r{i}")));
        }
        d.remember_refusal(1, refusal("r0"));
        assert!(ack(answer(&d, m, &(0, "r0".into()), &pending)).contains("no r0"));
        d.remember_refusal(0, refusal("one more"));
        assert_eq!(
            answer(&d, m, &(0, "r0".into()), &pending),
            None,
            "the oldest is forgotten"
        );
        assert!(ack(answer(&d, m, &(0, "r1".into()), &pending)).contains("no r1"));
        assert!(ack(answer(&d, m, &(1, "r0".into()), &pending)).contains("no r0"));
        d.stored(pending);
        assert!(ack(answer(&d, m, &(1, "b".into()), &[])).contains(r#""seq":2"#));
    }

    /// Accepted ids are kept as 16-byte keys in seq order (the seq is the place), whatever their
    /// length: a repeated
    /// id, however old, gets the seq it was first acked with; the same id of another seat, or a
    /// new one, is new.
    #[test]
    fn accepted_ids_take_a_fixed_size_and_keep_their_first_seq() {
        let m = Uuid::nil();
        let long = |i: u64| format!("{i}-{}", "x".repeat(200));
        let mut d = Dedupe::new(vec![id_key(0, &long(1))]);
        for batch in 0..10u64 {
            let pending: Vec<_> = (0..10)
                .map(|i| {
                    let seq = 2 + batch * 10 + i;
                    (id_key((seq % 2) as u8, &long(seq)), seq)
                })
                .collect();
            d.stored(pending);
        }
        assert_eq!(d.accepted.len(), 101);
        assert!(
            d.accepted.capacity() * size_of::<IdKey>() <= 2 * 101 * 16,
            "no id is kept whole"
        );
        let empty = [];
        let seq = |f: Option<Frame>| {
            f.and_then(|f| serde_json::from_str::<serde_json::Value>(f.as_str()).ok())
                .and_then(|v| v["seq"].as_u64())
        };
        assert_eq!(seq(answer(&d, m, &(0, long(1)), &empty)), Some(1));
        assert_eq!(seq(answer(&d, m, &(1, long(57)), &empty)), Some(57));
        assert_eq!(
            answer(&d, m, &(0, long(57)), &empty),
            None,
            "another seat's id"
        );
        assert_eq!(answer(&d, m, &(0, long(102)), &empty), None, "a new id");
        assert_ne!(id_key(0, "ab"), id_key(1, "ab"));
        assert_ne!(id_key(0, "ab"), id_key(0, "ab "));
    }
}
