//! Who may sit at a match and who may watch it: the questions a connection asks the store
//! before it takes a seat or a subscription. One place for them, so that the rule "a private
//! lobby's match is watched with its invite code, or by its own players" is written once.

use crate::actor::Registry;
use crate::store::{Store, StoreError};
use crate::tokens::token_hash;
use uuid::Uuid;

/// Longest seat token looked up at all (a longer one is no seat's).
const MAX_SEAT_TOKEN: usize = 256;

/// The seat (match, seat number) whose secret token this is, if any.
pub async fn seat_for_token(store: &Store, token: &str) -> Result<Option<(Uuid, u8)>, StoreError> {
    if token.is_empty() || token.len() > MAX_SEAT_TOKEN {
        return Ok(None);
    }
    store.seat_for_token(&token_hash(token)).await
}

/// The seat an account holds in a match (a lobby match), if any.
pub async fn seat_of_account(
    store: &Store,
    match_id: Uuid,
    account: Uuid,
) -> Result<Option<u8>, StoreError> {
    store.seat_of_account(match_id, account).await
}

/// Whether a match exists: a running actor says so without the store.
pub async fn match_exists(
    registry: &Registry,
    store: &Store,
    match_id: Uuid,
) -> Result<bool, StoreError> {
    if registry.is_running(match_id) {
        return Ok(true);
    }
    Ok(store.load_match(match_id).await?.is_some())
}

/// Who asks to watch a match.
#[derive(Debug, Clone, Copy)]
pub struct Watcher<'a> {
    /// The invite code given with `watch`, if any.
    pub invite_code: Option<&'a str>,
    /// The connection holds a seat in this very match.
    pub seated_here: bool,
    /// The connection's account, if it has a session.
    pub account: Option<Uuid>,
}

/// Whether someone may watch a match: any match that no private lobby started; a private one
/// with its invite code (any case, surrounding blanks ignored), or for its own players.
pub async fn may_watch(
    store: &Store,
    match_id: Uuid,
    who: Watcher<'_>,
) -> Result<bool, StoreError> {
    let Some(access) = store.match_access(match_id).await?.filter(|a| !a.public) else {
        return Ok(true);
    };
    let code_ok = matches!(
        (&access.invite_code, who.invite_code),
        (Some(c), Some(g)) if c.eq_ignore_ascii_case(g.trim())
    );
    if code_ok || who.seated_here {
        return Ok(true);
    }
    Ok(match who.account {
        // A failed lookup here refuses, as a stranger would be refused.
        Some(account) => matches!(store.seat_of_account(match_id, account).await, Ok(Some(_))),
        None => false,
    })
}

/// Whether someone may step through a finished match's replay: any match that no private lobby
/// started; a private one only for its own players (`seated`: the asker holds a seat of it, by
/// token or account). An invite code, which lets a friend watch live, does not open the record.
pub async fn may_replay(store: &Store, match_id: Uuid, seated: bool) -> Result<bool, StoreError> {
    let private = store
        .match_access(match_id)
        .await?
        .is_some_and(|a| !a.public);
    Ok(!private || seated)
}
