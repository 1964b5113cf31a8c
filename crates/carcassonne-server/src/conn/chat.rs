//! Chat at a match or a lobby, and mutes. A chat message never reaches a match actor: this
//! connection checks it, stores it, then delivers it (see [`crate::chat`]).

use super::state::{Ctx, Follows, Seat};
use crate::access;
use crate::chat::{self as hub, Muted, Room};
use crate::limits::Kind;
use protocol::{ChatChannel, ChatFrom, ChatLine, ErrorCode, MuteTarget, Occupant};
use std::collections::HashSet;
use uuid::Uuid;

/// Most mutes one connection keeps (more would let a client grow the server's memory).
pub const MAX_MUTES: usize = 256;

/// Enters (or updates its place in) a followed match's chat room: as a player (`as_seat`, see
/// [`chat_seat`]) or as a spectator (`None`).
pub fn join_match_chat(ctx: &Ctx, follows: &Follows, match_id: Uuid, as_seat: Option<u8>) {
    if !follows.matches.contains_key(&match_id) {
        return;
    }
    ctx.shared.chat.join(
        Room::Match(match_id),
        &ctx.handle,
        as_seat,
        ctx.account(),
        ctx.mutes(),
    );
}

/// The seat this connection is at a match's chat: the seat it holds there, else the seat its
/// account holds there. A player's other device (one that has not taken the seat) is the player
/// at the chat, never a spectator: it reads the table and speaks on it as that seat, and the
/// spectators' channel stays closed to it. `Err` once the client was told the lookup failed.
pub async fn chat_seat(ctx: &Ctx, seat: &Seat, match_id: Uuid) -> Result<Option<u8>, ()> {
    if let Some(s) = seat.in_match(match_id) {
        return Ok(Some(s));
    }
    let Some(account) = ctx.account() else {
        return Ok(None);
    };
    access::seat_of_account(&ctx.shared.store, match_id, account)
        .await
        .map_err(|e| ctx.store_failed("seat lookup", &e))
}

/// `chat`: at a match (`match_id`) or in a lobby (`lobby_id`), exactly one of them.
pub async fn chat(
    ctx: &Ctx,
    seat: &Seat,
    follows: &Follows,
    match_id: Option<Uuid>,
    lobby_id: Option<Uuid>,
    text: String,
) {
    if let Err(l) = ctx.limit(Kind::Chat) {
        return ctx.reply_limited(None, &l);
    }
    if let Err(m) = protocol::check_chat_text(&text) {
        return ctx.error(ErrorCode::BadChat, m);
    }
    let account = ctx.session.as_ref().map(|s| s.account.clone());
    let mut lobby_members = None;
    let (room, channel, seat_no) = match (match_id, lobby_id) {
        (Some(m), None) => match (seat.in_match(m), chat_room_seat(ctx, follows, m)) {
            (Some(s), _) | (None, Some(Some(s))) => (Room::Match(m), ChatChannel::Table, Some(s)),
            (None, Some(None)) if account.is_some() => {
                (Room::Match(m), ChatChannel::Spectators, None)
            }
            _ => {
                return ctx.error(
                    ErrorCode::NotInChat,
                    "chat at a match needs its seat, or watching it with an account session",
                );
            }
        },
        (None, Some(l)) => {
            let Some(a) = &account else {
                return ctx.error(ErrorCode::NotInChat, "lobby chat needs an account session");
            };
            let Some(members) = lobby_members_of(ctx, a.id, l).await else {
                return;
            };
            lobby_members = Some(members);
            (Room::Lobby(l), ChatChannel::Lobby, None)
        }
        _ => {
            return ctx.error(
                ErrorCode::BadChat,
                "a chat message names exactly one of match_id and lobby_id",
            );
        }
    };
    let now = chrono::Utc::now();
    let mut line = ChatLine {
        id: None,
        match_id,
        lobby_id,
        channel,
        from: ChatFrom {
            seat: seat_no,
            account_id: account.as_ref().map(|a| a.id),
            name: account.map(|a| a.name),
        },
        text,
        at: u64::try_from(now.timestamp_millis()).unwrap_or(0),
    };
    if let Err(e) = hub::record(&ctx.shared.store, &mut line, now).await {
        return ctx.store_failed("chat store", &e);
    }
    ctx.shared
        .chat
        .deliver(room, &line, lobby_members.as_ref(), Some(&ctx.handle));
    if let Some(cluster) = ctx.shared.registry.cluster() {
        let lobby_members = lobby_members.map(|m| m.into_iter().collect());
        let news = crate::cluster::ChatNews::Line {
            line,
            lobby_members,
        };
        cluster.tell_room(room, news).await;
    }
}

/// The seat this connection is at a followed match's chat room (`Some(None)`: a spectator),
/// `None` when it is not in the room.
fn chat_room_seat(ctx: &Ctx, follows: &Follows, match_id: Uuid) -> Option<Option<u8>> {
    if !follows.matches.contains_key(&match_id) {
        return None;
    }
    ctx.shared
        .chat
        .seat_in(Room::Match(match_id), ctx.handle.id)
}

/// The accounts seated in a lobby, when `account` is one of them; answers the client when not.
async fn lobby_members_of(ctx: &Ctx, account: Uuid, lobby_id: Uuid) -> Option<HashSet<Uuid>> {
    let lobby = match ctx.shared.lobbies.get(Some(account), lobby_id, None).await {
        Ok(lobby) => lobby,
        Err(e) => {
            ctx.error(e.code, e.message);
            return None;
        }
    };
    let members: HashSet<Uuid> = lobby
        .seats
        .iter()
        .filter_map(|s| match &s.occupant {
            Some(Occupant::Player { account_id, .. }) => Some(*account_id),
            _ => None,
        })
        .collect();
    if !members.contains(&account) {
        ctx.error(
            ErrorCode::NotInChat,
            "lobby chat is for the accounts seated in the lobby",
        );
        return None;
    }
    Some(members)
}

/// `mute` (`on`) or `unmute`: an account, or a seat of a match, for this connection.
pub fn mute(ctx: &Ctx, t: MuteTarget, on: bool) {
    let key = match (t.account_id, t.match_id, t.seat) {
        (Some(a), None, None) => Muted::Account(a),
        (None, Some(m), Some(s)) => Muted::Seat(m, s),
        _ => {
            return ctx.error(
                ErrorCode::BadChat,
                "mute names an account_id, or a match_id and a seat",
            );
        }
    };
    if let Ok(mut mutes) = ctx.mutes().write() {
        if !on {
            mutes.remove(&key);
        } else if mutes.len() < MAX_MUTES || mutes.contains(&key) {
            mutes.insert(key);
        } else {
            // Bounded: a client cannot grow the connection's memory with mutes.
            drop(mutes);
            ctx.error(
                ErrorCode::BadChat,
                format!("at most {MAX_MUTES} mutes per connection: unmute someone first"),
            );
        }
    }
}
