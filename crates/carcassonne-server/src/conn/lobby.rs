//! Following a lobby: the lobby actor sends the lobby's whole state after each change (and the
//! match id when it starts); the connection also enters the lobby's chat room.

use super::state::{Ctx, Follows, MAX_SUBSCRIPTIONS};
use crate::chat::Room;
use crate::limits::Kind;
use protocol::ErrorCode;
use uuid::Uuid;

/// `subscribe_lobby`.
pub fn subscribe_lobby(ctx: &Ctx, follows: &mut Follows, lobby_id: Uuid) {
    if let Err(l) = ctx.limit(Kind::Lobby) {
        return ctx.reply_limited(None, &l);
    }
    if !follows.lobbies.contains(&lobby_id) && follows.lobbies.len() >= MAX_SUBSCRIPTIONS {
        return ctx.error(
            ErrorCode::Unavailable,
            format!("at most {MAX_SUBSCRIPTIONS} lobbies per connection"),
        );
    }
    let viewer = ctx.account();
    match ctx
        .shared
        .lobbies
        .subscribe(viewer, lobby_id, ctx.handle.clone())
    {
        Ok(()) => {
            follows.lobbies.insert(lobby_id);
            ctx.shared.chat.join(
                Room::Lobby(lobby_id),
                &ctx.handle,
                None,
                viewer,
                ctx.mutes(),
            );
        }
        Err(e) => ctx.error(e.code, e.message),
    }
}

/// `unsubscribe_lobby`.
pub fn unsubscribe_lobby(ctx: &Ctx, follows: &mut Follows, lobby_id: Uuid) {
    if follows.lobbies.remove(&lobby_id) {
        ctx.shared.lobbies.unsubscribe(lobby_id, ctx.handle.id);
        ctx.shared.chat.leave(Room::Lobby(lobby_id), ctx.handle.id);
    }
}
