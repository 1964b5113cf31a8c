//! Reading a server frame in part: its head ([`Head`]) and, for the seat that applies a diff,
//! its patch ([`FrameOp`]), without the full [`ServerMessage`] parse.

use crate::error::LoadError;
use client::ClientError;
use protocol::{PatchOp, Seq};
use std::borrow::Cow;
use uuid::Uuid;

#[cfg(doc)]
use protocol::ServerMessage;

/// Reads a frame's text as `T`; the error carries the text.
pub(crate) fn parse<'a, T: serde::Deserialize<'a>>(text: &'a str) -> Result<T, LoadError> {
    serde_json::from_str(text).map_err(|source| {
        LoadError::Client(ClientError::Decode {
            text: text.to_owned(),
            source,
        })
    })
}

/// What a seat reads of a server frame: the kind, an ack's or a diff's fields, and the patch
/// (`P`): parsed when the seat will apply it, skipped unparsed (`IgnoredAny`) when it only checks
/// (see [`Head::without_patch`]); the events are always skipped. Other kinds are parsed whole as
/// [`ServerMessage`].
#[derive(Debug, serde::Deserialize)]
pub(crate) struct Head<'a, P = Vec<FrameOp>> {
    #[serde(rename = "type", borrow)]
    pub(crate) kind: Cow<'a, str>,
    #[serde(default)]
    pub(crate) match_id: Option<Uuid>,
    #[serde(default)]
    pub(crate) seq: Option<Seq>,
    #[serde(default, borrow)]
    pub(crate) id: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(crate) patch: Option<P>,
}

/// [`Head`] with its patch skipped unparsed.
pub(crate) type HeadOnly<'a> = Head<'a, serde::de::IgnoredAny>;

impl<'a> HeadOnly<'a> {
    pub(crate) fn without_patch(self) -> Head<'a> {
        Head {
            kind: self.kind,
            match_id: self.match_id,
            seq: self.seq,
            id: self.id,
            patch: None,
        }
    }
}

/// A diff's patch, parsed by the seat that applies it.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct PatchOnly {
    pub(crate) patch: Vec<FrameOp>,
}

/// One patch operation read straight into its fields ([`PatchOp`]'s own derive, tagged by `op`,
/// buffers every value before building it).
#[derive(Debug, PartialEq, serde::Deserialize)]
pub(crate) struct FrameOp {
    pub(crate) op: OpKind,
    pub(crate) path: String,
    #[serde(default)]
    pub(crate) from: Option<String>,
    /// `Some(Null)` for `"value": null`, `None` when absent.
    #[serde(default, deserialize_with = "present")]
    pub(crate) value: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OpKind {
    Add,
    Remove,
    Replace,
    Move,
    Copy,
    Test,
}

pub(crate) fn present<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

impl TryFrom<FrameOp> for PatchOp {
    type Error = LoadError;

    fn try_from(o: FrameOp) -> Result<PatchOp, LoadError> {
        let missing = |field: &str| LoadError::Frame(format!("{:?} without {field}", o.op));
        Ok(match (o.op, o.value, o.from) {
            (OpKind::Add, Some(value), _) => PatchOp::Add {
                path: o.path,
                value,
            },
            (OpKind::Replace, Some(value), _) => PatchOp::Replace {
                path: o.path,
                value,
            },
            (OpKind::Test, Some(value), _) => PatchOp::Test {
                path: o.path,
                value,
            },
            (OpKind::Remove, _, _) => PatchOp::Remove { path: o.path },
            (OpKind::Move, _, Some(from)) => PatchOp::Move { from, path: o.path },
            (OpKind::Copy, _, Some(from)) => PatchOp::Copy { from, path: o.path },
            (OpKind::Add | OpKind::Replace | OpKind::Test, None, _) => {
                return Err(missing("value"));
            }
            (OpKind::Move | OpKind::Copy, _, None) => return Err(missing("from")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{MATCH, diff_1};
    use protocol::ServerMessage;

    /// The head skips the patch unless asked for it; a `null` value is a value, a missing one an
    /// error.
    #[test]
    fn frames_are_read_in_part() -> Result<(), LoadError> {
        let text = diff_1();
        let head: Head = parse(&text)?;
        let ops = head.patch.ok_or(LoadError::Closed)?;
        assert_eq!((head.kind.as_ref(), head.seq), ("diff", Some(1)));
        let ops: Vec<PatchOp> = ops
            .into_iter()
            .map(PatchOp::try_from)
            .collect::<Result<_, _>>()?;
        let typed: ServerMessage = parse(&text)?;
        let ServerMessage::Diff { patch, .. } = typed else {
            panic!("a diff");
        };
        assert_eq!(ops, patch);
        let only = parse::<HeadOnly>(&text)?.without_patch();
        assert!(only.patch.is_none() && only.seq == Some(1));
        let ack_text = format!(r#"{{"type":"ack","id":"s0c1","match_id":"{MATCH}","seq":1}}"#);
        let ack = parse::<HeadOnly>(&ack_text)?.without_patch();
        assert_eq!(
            (ack.kind.as_ref(), ack.id.as_deref()),
            ("ack", Some("s0c1"))
        );
        let missing: FrameOp = parse(r#"{"op":"add","path":"/x"}"#)?;
        assert!(PatchOp::try_from(missing).is_err());
        let null: FrameOp = parse(r#"{"op":"add","path":"/x","value":null}"#)?;
        assert!(matches!(
            PatchOp::try_from(null)?,
            PatchOp::Add {
                value: serde_json::Value::Null,
                ..
            }
        ));
        Ok(())
    }
}
