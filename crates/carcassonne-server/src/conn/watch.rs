//! Following a match: `subscribe` (and `watch`, with an invite code) hands this connection to
//! the match's actor, which sends it the snapshot or the diffs since `since`; `unsubscribe`
//! takes it back.

use super::chat::{chat_seat, join_match_chat};
use super::state::{Ctx, Follows, MAX_SUBSCRIPTIONS, Seat, not_queued_message};
use crate::access::{self, Watcher};
use crate::actor::ActorMsg;
use crate::chat::Room;
use protocol::ErrorCode;
use uuid::Uuid;

/// `subscribe` (`code`: none) or `watch` (`code`: the invite code given).
pub async fn subscribe(
    ctx: &Ctx,
    seat: &Seat,
    follows: &mut Follows,
    match_id: Uuid,
    since: Option<u64>,
    code: Option<String>,
) {
    // An actor that stopped (a match that failed to load) holds no subscriber any more: its
    // entry must not count against the limit.
    follows.matches.retain(|_, h| !h.tx.is_closed());
    let new = !follows.matches.contains_key(&match_id);
    if new && follows.matches.len() >= MAX_SUBSCRIPTIONS {
        return ctx.error(
            ErrorCode::Unavailable,
            format!("at most {MAX_SUBSCRIPTIONS} subscriptions per connection"),
        );
    }
    // Looked up before the subscription takes a slot, so that a match that does not exist never
    // counts against the limit (not even while an actor would be loading it).
    if new && !match_exists(ctx, match_id).await {
        return;
    }
    if new && !may_watch(ctx, seat, match_id, code.as_deref()).await {
        return;
    }
    // Before the actor is asked, so that the chat room is joined as soon as the subscription
    // is queued: once the snapshot arrives, every chat line said after it reaches this
    // connection.
    let Ok(as_seat) = chat_seat(ctx, seat, match_id).await else {
        return;
    };
    let cached = follows.matches.remove(&match_id);
    let msg = ActorMsg::Subscribe {
        conn: ctx.handle.clone(),
        since,
    };
    match ctx.send_to_actor(match_id, cached.clone(), msg) {
        Ok(h) => {
            follows.matches.insert(match_id, h);
            join_match_chat(ctx, follows, match_id, as_seat);
        }
        Err((code, _)) => {
            // Busy: the actor still holds the earlier subscription, if there was one.
            if code == ErrorCode::Busy
                && let Some(h) = cached
            {
                follows.matches.insert(match_id, h);
            }
            ctx.error(code, not_queued_message(code));
        }
    }
}

/// `unsubscribe`: leaves the match's chat room and its actor's subscribers.
pub fn unsubscribe(ctx: &Ctx, follows: &mut Follows, match_id: Uuid) {
    ctx.shared.chat.leave(Room::Match(match_id), ctx.handle.id);
    if let Some(h) = follows.matches.remove(&match_id) {
        let _ = h.tx.try_send(ActorMsg::Unsubscribe {
            conn_id: ctx.handle.id,
        });
    }
}

/// Whether a match exists; answers the client when it does not.
async fn match_exists(ctx: &Ctx, match_id: Uuid) -> bool {
    match access::match_exists(&ctx.shared.registry, &ctx.shared.store, match_id).await {
        Ok(true) => true,
        Ok(false) => {
            ctx.error(ErrorCode::UnknownMatch, "no such match");
            false
        }
        Err(e) => {
            ctx.store_failed("match lookup", &e);
            false
        }
    }
}

/// Whether this connection may watch a match (see [`access::may_watch`]); answers the client
/// when not.
async fn may_watch(ctx: &Ctx, seat: &Seat, match_id: Uuid, code: Option<&str>) -> bool {
    let who = Watcher {
        invite_code: code,
        seated_here: seat.in_match(match_id).is_some(),
        account: ctx.account(),
    };
    match access::may_watch(&ctx.shared.store, match_id, who).await {
        Ok(true) => true,
        Ok(false) => {
            ctx.error(
                ErrorCode::InviteRequired,
                "a private match is watched with its invite code (`watch`)",
            );
            false
        }
        Err(e) => {
            ctx.store_failed("access lookup", &e);
            false
        }
    }
}
