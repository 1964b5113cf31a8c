//! [`LoadError`]: why a run, a seat or a frame failed.

use client::ClientError;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Mirror(#[from] client::MirrorError),
    #[error("no frame for {0:?}")]
    Stalled(Duration),
    #[error("the connection closed")]
    Closed,
    #[error("bad arguments: {0}")]
    Args(String),
    #[error("runtime: {0}")]
    Io(#[from] std::io::Error),
    #[error("bad frame: {0}")]
    Frame(String),
}
