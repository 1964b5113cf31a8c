//! A text message from the client: its size checked, decoded, and handed by one `match` to the
//! handler of its family. Handlers answer through the connection's queue; none touches the
//! socket.

use super::state::Connection;
use super::{chat, command, lobby, seat, watch};
use crate::wire::error_frame;
use protocol::{ClientMessage, ErrorCode, MAX_FRAME_BYTES};
use tokio::time::Instant;

/// Handles one text message. A command is queued for its match in the first poll; the other
/// messages may wait for the store (the loop keeps writing meanwhile).
pub async fn on_text(conn: &mut Connection, text: &str) {
    let arrived = Instant::now();
    let Connection { ctx, seat, follows } = conn;
    if text.len() > MAX_FRAME_BYTES {
        return ctx.error(
            ErrorCode::TooLarge,
            format!(
                "message of {} bytes; the limit is {MAX_FRAME_BYTES}",
                text.len()
            ),
        );
    }
    let msg = match protocol::decode_client_message(text) {
        Ok(m) => m,
        // Names the command id when there is one, so the client knows what failed.
        Err(m) => return ctx.reply(error_frame(ErrorCode::Malformed, m.id, m.message)),
    };
    match msg {
        ClientMessage::Auth { token } => seat::auth(ctx, seat, follows, token).await,
        ClientMessage::TakeSeat { match_id } => seat::take_seat(ctx, seat, follows, match_id).await,
        ClientMessage::Subscribe { match_id, since } => {
            watch::subscribe(ctx, seat, follows, match_id, since, None).await
        }
        ClientMessage::Watch {
            match_id,
            invite_code,
            since,
        } => watch::subscribe(ctx, seat, follows, match_id, since, Some(invite_code)).await,
        ClientMessage::Unsubscribe { match_id } => watch::unsubscribe(ctx, follows, match_id),
        ClientMessage::Command { id, command } => {
            command::command(ctx, seat, follows, id, command, arrived)
        }
        ClientMessage::Chat {
            match_id,
            lobby_id,
            text,
        } => chat::chat(ctx, seat, follows, match_id, lobby_id, text).await,
        ClientMessage::Mute(target) => chat::mute(ctx, target, true),
        ClientMessage::Unmute(target) => chat::mute(ctx, target, false),
        ClientMessage::SubscribeLobby { lobby_id } => {
            lobby::subscribe_lobby(ctx, follows, lobby_id)
        }
        ClientMessage::UnsubscribeLobby { lobby_id } => {
            lobby::unsubscribe_lobby(ctx, follows, lobby_id)
        }
    }
}
