//! The gate in front of a match actor: a game command is checked here (a seat, a well-formed
//! id, the server accepting, the rate limits) and queued for the actor without waiting. The
//! rules, the store and the answer are the actor's.

use super::state::{Ctx, Follows, Seat, not_queued_message};
use crate::actor::{ActorMsg, CommandMsg};
use crate::limits::Kind;
use crate::wire::error_frame;
use protocol::{ErrorCode, SERVER_COMMAND_PREFIX};
use tokio::time::Instant;

/// Longest client command id.
pub const MAX_COMMAND_ID: usize = 128;

/// `command`: `arrived` is when its frame was read (the ack latency's start).
pub fn command(
    ctx: &Ctx,
    seat: &mut Seat,
    follows: &Follows,
    id: String,
    command: rules::Command,
    arrived: Instant,
) {
    let Some((match_id, seat_no)) = seat.held else {
        // A connection that watches gets its own code: it is a spectator, not a stranger.
        let (code, message) = if follows.matches.is_empty() {
            (
                ErrorCode::Unauthenticated,
                "authenticate with a seat token (or take_seat) first",
            )
        } else {
            (
                ErrorCode::Spectator,
                "spectators cannot command: this connection holds no seat",
            )
        };
        return ctx.refuse(id, code, message);
    };
    // Control characters are refused: Postgres cannot store a NUL in text, and a write that
    // fails takes down the whole batch (other seats' commands with it).
    if id.is_empty() || id.len() > MAX_COMMAND_ID || id.chars().any(char::is_control) {
        return ctx.refuse(
            id,
            ErrorCode::Malformed,
            format!("a command id has 1 to {MAX_COMMAND_ID} bytes and no control characters"),
        );
    }
    if id.starts_with(SERVER_COMMAND_PREFIX) {
        return ctx.reply(error_frame(
            ErrorCode::Malformed,
            Some(id),
            format!("command ids starting with `{SERVER_COMMAND_PREFIX}` are the server's"),
        ));
    }
    if !ctx.accepting() {
        return ctx.refuse(id, ErrorCode::Unavailable, "the server is shutting down");
    }
    if let Err(l) = ctx.limit(Kind::Command) {
        ctx.shared.metrics.refused(ErrorCode::RateLimited);
        return ctx.reply_limited(Some(id), &l);
    }
    let cached = seat.actor.take();
    let msg = ActorMsg::Command(Box::new(CommandMsg {
        conn: ctx.handle.clone(),
        seat: seat_no,
        id,
        command,
        arrived,
    }));
    match ctx.send_to_actor(match_id, cached, msg) {
        Ok(h) => seat.actor = Some(h),
        // The refused command gives its id back for the answer (no copy of it per command).
        Err((code, msg)) => {
            let id = match msg {
                ActorMsg::Command(c) => c.id,
                _ => String::new(),
            };
            ctx.refuse(id, code, not_queued_message(code));
        }
    }
}
