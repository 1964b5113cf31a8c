//! Encoding server messages into frames, once for any number of receivers.

use bytes::Bytes;
use protocol::{ErrorBody, ErrorCode, Seq, ServerMessage, ServerMove};
use std::fmt::Write as _;
use tracing::error;
use uuid::Uuid;

/// One encoded server message: UTF-8 JSON text, cheap to clone (shared bytes). The connection's
/// socket side turns it into a WebSocket text message; match actors and the outbox never see the
/// socket library's types.
///
/// Built only from `String`s and static strings, so its bytes are always UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame(Bytes);

impl Frame {
    pub fn from_static(s: &'static str) -> Self {
        Frame(Bytes::from_static(s.as_bytes()))
    }

    /// A frame of text read elsewhere (relayed by another node): `None` unless it is UTF-8.
    pub fn from_utf8(bytes: Bytes) -> Option<Frame> {
        std::str::from_utf8(&bytes).ok()?;
        Some(Frame(bytes))
    }

    /// The frame's text (checked again: for logs and tests, not for the hot path).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The frame's length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The frame's bytes (shared, not copied).
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

impl From<String> for Frame {
    /// Gives back the string's spare capacity first (a serializer's buffer grows by doubling):
    /// a frame kept in a match's window holds its length, not up to twice that.
    fn from(mut s: String) -> Self {
        s.shrink_to_fit();
        Frame(Bytes::from(s))
    }
}

/// Serializes a server message once, for any number of receivers.
pub fn frame(msg: &ServerMessage) -> Frame {
    match serde_json::to_string(msg) {
        Ok(s) => Frame::from(s),
        Err(e) => {
            // Not reachable with the protocol's types (no non-string map keys); say so loudly.
            error!(error = %e, "cannot serialize a server message");
            Frame::from_static(
                r#"{"type":"error","code":"internal","message":"serialization failed"}"#,
            )
        }
    }
}

pub fn error_frame(code: ErrorCode, id: Option<String>, message: impl Into<String>) -> Frame {
    let mut body = ErrorBody::new(code, message);
    body.id = id;
    frame(&ServerMessage::Error(body))
}

/// The `diff` frame from its parts already serialized for the record (`events`, `patch`: JSON
/// arrays): the bytes of `frame(&ServerMessage::Diff { .. })` without serializing the events and
/// the patch a second time.
pub fn diff_frame(
    match_id: Uuid,
    seq: Seq,
    by_server: Option<ServerMove>,
    events: &str,
    patch: &str,
) -> Frame {
    Frame(Bytes::from(diff_text(
        match_id, seq, by_server, events, patch,
    )))
}

const DIFF_HEAD: &str = r#"{"type":"diff","match_id":""#;
const ACK_HEAD: &str = r#"{"type":"ack","id":"#;
const SEQ: &str = r#"","seq":"#;
/// A hyphenated uuid's length.
const UUID_LEN: usize = 36;

/// The diff frame's text, in a string of exactly its length: the shared bytes take a full
/// string's buffer as it is, where one with spare room costs them an allocation of their own.
fn diff_text(
    match_id: Uuid,
    seq: Seq,
    by_server: Option<ServerMove>,
    events: &str,
    patch: &str,
) -> String {
    const BY_SERVER: &str = r#","by_server":""#;
    const EVENTS: &str = r#","events":"#;
    const PATCH: &str = r#","patch":"#;
    let mut digits = itoa::Buffer::new();
    let seq = digits.format(seq);
    let by = by_server.map(ServerMove::as_str);
    let len = DIFF_HEAD.len()
        + UUID_LEN
        + SEQ.len()
        + seq.len()
        + by.map_or(0, |b| BY_SERVER.len() + b.len() + 1)
        + EVENTS.len()
        + events.len()
        + PATCH.len()
        + patch.len()
        + 1;
    let mut out = String::with_capacity(len);
    out.push_str(DIFF_HEAD);
    push_uuid(&mut out, match_id);
    out.push_str(SEQ);
    out.push_str(seq);
    if let Some(b) = by {
        out.push_str(BY_SERVER);
        out.push_str(b);
        out.push('"');
    }
    out.push_str(EVENTS);
    out.push_str(events);
    out.push_str(PATCH);
    out.push_str(patch);
    out.push('}');
    debug_assert_eq!(out.len(), len);
    out
}

/// The `ack` frame, written directly: the bytes of `frame(&ServerMessage::Ack { .. })`.
pub fn ack_frame(id: &str, match_id: Uuid, seq: Seq) -> Frame {
    Frame(Bytes::from(ack_text(id, match_id, seq)))
}

/// The ack frame's text, in a string of exactly its length (as [`diff_text`]).
fn ack_text(id: &str, match_id: Uuid, seq: Seq) -> String {
    const MATCH_ID: &str = r#","match_id":""#;
    let mut digits = itoa::Buffer::new();
    let seq = digits.format(seq);
    let len =
        ACK_HEAD.len() + json_str_len(id) + MATCH_ID.len() + UUID_LEN + SEQ.len() + seq.len() + 1;
    let mut out = String::with_capacity(len);
    out.push_str(ACK_HEAD);
    push_json_str(&mut out, id);
    out.push_str(MATCH_ID);
    push_uuid(&mut out, match_id);
    out.push_str(SEQ);
    out.push_str(seq);
    out.push('}');
    debug_assert_eq!(out.len(), len);
    out
}

/// The seq of a `diff` frame as [`diff_frame`] writes it, read without parsing the rest (by a
/// node that fans a match's published diffs out); `None` for any other text.
pub fn diff_seq(text: &[u8]) -> Option<Seq> {
    let rest = text.strip_prefix(DIFF_HEAD.as_bytes())?;
    let rest = rest.get(UUID_LEN..)?.strip_prefix(SEQ.as_bytes())?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(rest.get(..digits)?).ok()?.parse().ok()
}

/// The head of a live mark (see [`live_mark`]); no server message starts with it (each is a
/// JSON object).
const LIVE_MARK: &str = "live ";

/// Not a server message: what a match's owner queues for the stand-in of another node's
/// connection once that connection has every diff up to `seq` and follows the match's published
/// diffs from there (cluster mode). Read by that node's relay, never written to a socket.
pub fn live_mark(seq: Seq) -> Frame {
    Frame::from(format!("{LIVE_MARK}{seq}"))
}

/// The seq of a [`live_mark`]; `None` for any other text.
pub fn live_mark_seq(text: &[u8]) -> Option<Seq> {
    std::str::from_utf8(text.strip_prefix(LIVE_MARK.as_bytes())?)
        .ok()?
        .parse()
        .ok()
}

/// How serde_json writes one byte of a string: as it is, by a short name (`"`, `\\`, and
/// `\b \f \n \r \t`), or as `\u00XX` (the other control characters).
enum Escape {
    None,
    Named(&'static str),
    Unicode,
}

fn escape(b: u8) -> Escape {
    match b {
        b'"' => Escape::Named("\\\""),
        b'\\' => Escape::Named("\\\\"),
        b'\n' => Escape::Named("\\n"),
        b'\r' => Escape::Named("\\r"),
        b'\t' => Escape::Named("\\t"),
        0x08 => Escape::Named("\\b"),
        0x0c => Escape::Named("\\f"),
        0x00..=0x1f => Escape::Unicode,
        _ => Escape::None,
    }
}

/// The length of `s` as [`push_json_str`] writes it, quotes included.
fn json_str_len(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match escape(b) {
            Escape::None => 1,
            Escape::Named(e) => e.len(),
            Escape::Unicode => "\\u00XX".len(),
        })
        .sum::<usize>()
}

/// A JSON string as serde_json writes it (the same escapes: see [`escape`]).
fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let e = escape(b);
        if let Escape::None = e {
            continue;
        }
        out.push_str(&s[start..i]);
        match e {
            Escape::Named(name) => out.push_str(name),
            // Into a `String` `write!` cannot fail.
            Escape::Unicode | Escape::None => {
                let _ = write!(out, "\\u{b:04x}");
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// A uuid as serde writes it: lower-case, hyphenated.
fn push_uuid(out: &mut String, id: Uuid) {
    let mut buf = Uuid::encode_buffer();
    out.push_str(id.hyphenated().encode_lower(&mut buf));
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::MatchView;
    use rules::{Colour, Game, Modules, Setup, bot};

    /// The frames written directly are byte for byte the serde ones, over random games with and
    /// without every module (every kind of event and patch), and for ids that need escapes.
    #[test]
    fn direct_frames_are_the_serde_frames() -> Result<(), Box<dyn std::error::Error>> {
        let match_id = Uuid::from_u128(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210);
        for seed in 0..6u64 {
            let modules = if seed % 2 == 1 {
                Modules::all()
            } else {
                Modules::default()
            };
            let setup =
                Setup::new(Colour::ALL[..2 + seed as usize % 3].to_vec(), seed).modules(modules);
            let (mut game, _) = Game::start(setup)?;
            let view = |g: &Game| MatchView::from(g.view());
            let mut before = view(&game);
            let mut rng = seed;
            let mut seq = 0;
            while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
                let events = game.apply(player, cmd)?;
                seq += 1;
                let after = view(&game);
                let patch = protocol::diff::match_view_patch(&before, &after)?;
                // As the actor writes it: the patch's JSON written directly, no `Value`s, only
                // the squares placed since `before` compared.
                let placed: Vec<_> = game.placed_since(before.view.board.len()).collect();
                let events_json = serde_json::to_string(&events)?;
                let patch_json =
                    protocol::diff::match_view_patch_json_touched(&before, &after, &placed)?;
                // Every other move as the server's own, each reason in turn.
                let by_server = [
                    None,
                    Some(ServerMove::Deadline),
                    None,
                    Some(ServerMove::Clock),
                    None,
                    Some(ServerMove::Away),
                ][seq as usize % 6];
                let direct = diff_frame(match_id, seq, by_server, &events_json, &patch_json);
                let serde = frame(&ServerMessage::Diff {
                    match_id,
                    seq,
                    by_server,
                    events,
                    patch,
                });
                assert_eq!(direct.as_str(), serde.as_str());
                // Exactly sized: the frame's bytes take the string's buffer as it is.
                let text = diff_text(match_id, seq, by_server, &events_json, &patch_json);
                assert_eq!(text.capacity(), text.len());
                before = after;
            }
        }
        for id in ["c1", "", "a\"b\\c\n\u{1}é/😀", &"x".repeat(300)] {
            for seq in [0, 1, 145, u64::MAX] {
                let serde = frame(&ServerMessage::Ack {
                    id: id.to_owned(),
                    match_id,
                    seq,
                });
                assert_eq!(ack_frame(id, match_id, seq).as_str(), serde.as_str());
                let text = ack_text(id, match_id, seq);
                assert_eq!(text.capacity(), text.len(), "{id:?} {seq}");
            }
        }
        Ok(())
    }

    /// A diff's seq is read from the frame's head, the serde frame's too; any other frame (a
    /// snapshot, an ack, a mark) has none, and a mark's seq is read back.
    #[test]
    fn a_diff_and_a_mark_tell_their_seq() {
        let match_id = Uuid::from_u128(7);
        for seq in [0, 1, 145, u64::MAX] {
            let direct = diff_frame(match_id, seq, Some(ServerMove::Away), "[]", "[]");
            assert_eq!(diff_seq(direct.as_str().as_bytes()), Some(seq));
            let serde = frame(&ServerMessage::Diff {
                match_id,
                seq,
                by_server: None,
                events: Vec::new(),
                patch: Vec::new(),
            });
            assert_eq!(diff_seq(serde.as_str().as_bytes()), Some(seq));
            let mark = live_mark(seq);
            assert_eq!(live_mark_seq(mark.as_str().as_bytes()), Some(seq));
            assert_eq!(diff_seq(mark.as_str().as_bytes()), None);
            let ack = ack_frame("c1", match_id, seq);
            assert_eq!(diff_seq(ack.as_str().as_bytes()), None);
            assert_eq!(live_mark_seq(ack.as_str().as_bytes()), None);
            assert_eq!(live_mark_seq(direct.as_str().as_bytes()), None);
        }
        assert_eq!(diff_seq(br#"{"type":"diff","match_id":"x"}"#), None);
    }
}
