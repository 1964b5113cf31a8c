//! Taking a seat: `auth` with a seat's secret token, or `take_seat` with the account session
//! that holds the seat (a lobby match). A connection holds at most one seat, for its lifetime.

use super::chat::join_match_chat;
use super::state::{Ctx, Follows, Seat};
use crate::access;
use crate::accounts::still_valid;
use crate::store::StoreError;
use crate::wire::frame;
use protocol::{ErrorCode, ServerMessage};
use tracing::debug;
use uuid::Uuid;

/// `auth`: plays the seat whose token this is.
pub async fn auth(ctx: &Ctx, seat: &mut Seat, follows: &Follows, token: String) {
    if seat.held.is_some() {
        return already_seated(ctx);
    }
    let found = access::seat_for_token(&ctx.shared.store, &token).await;
    seated(
        ctx,
        seat,
        follows,
        found,
        (ErrorCode::BadToken, "no seat has this token"),
    );
}

/// `take_seat`: plays the seat this connection's account holds in a match.
pub async fn take_seat(ctx: &Ctx, seat: &mut Seat, follows: &Follows, match_id: Uuid) {
    if seat.held.is_some() {
        return already_seated(ctx);
    }
    let Some(session) = &ctx.session else {
        return ctx.error(
            ErrorCode::Unauthenticated,
            "take_seat needs an account session on the WebSocket upgrade (cookie or bearer)",
        );
    };
    // A session revoked since the upgrade takes no seat.
    match still_valid(&ctx.shared.store, &session.token_hash).await {
        Ok(true) => {}
        Ok(false) => {
            return ctx.error(
                ErrorCode::UnknownSession,
                "this connection's session was revoked",
            );
        }
        Err(e) => return ctx.store_failed("session lookup", &e),
    }
    let found = access::seat_of_account(&ctx.shared.store, match_id, session.account.id)
        .await
        .map(|s| s.map(|s| (match_id, s)));
    seated(
        ctx,
        seat,
        follows,
        found,
        (
            ErrorCode::NotYourSeat,
            "this account holds no seat in that match",
        ),
    );
}

fn already_seated(ctx: &Ctx) {
    ctx.error(
        ErrorCode::AlreadyAuthenticated,
        "this connection already holds a seat",
    );
}

/// The end of both ways to a seat: the seat found is held (and the match's chat knows this
/// connection as a player from now on), or the client hears why not.
fn seated(
    ctx: &Ctx,
    seat: &mut Seat,
    follows: &Follows,
    found: Result<Option<(Uuid, u8)>, StoreError>,
    (none, why): (ErrorCode, &str),
) {
    match found {
        Ok(Some((match_id, s))) => {
            seat.held = Some((match_id, s));
            tracing::Span::current()
                .record("match_id", tracing::field::display(match_id))
                .record("seat", s);
            debug!(%match_id, seat = s, "seat taken");
            join_match_chat(ctx, follows, match_id, Some(s));
            ctx.reply(frame(&ServerMessage::Authenticated { match_id, seat: s }));
        }
        Ok(None) => ctx.error(none, why),
        Err(e) => ctx.store_failed("seat lookup", &e),
    }
}
