//! A connection's state, in parts that each handler takes only as much of as it changes:
//! [`Ctx`] (what every handler reads: the server, this connection's queue, session, address,
//! mutes and limits), [`Seat`] (the seat it plays) and [`Follows`] (the matches and lobbies it
//! follows).

use crate::accounts::WsSession;
use crate::actor::{ActorMsg, MatchHandle};
use crate::chat::{Mutes, Room};
use crate::limits::{ConnLimits, Kind, Limited};
use crate::outbox::ConnHandle;
use crate::queue::TrySendError;
use crate::state::Shared;
use crate::wire::{Frame, error_frame, frame};
use protocol::{ErrorCode, ServerMessage};
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use uuid::Uuid;

/// Subscriptions (and, apart, followed lobbies) one connection may hold.
pub const MAX_SUBSCRIPTIONS: usize = 16;

/// What every handler reads. Its interior-mutable parts (the mutes, shared with the chat rooms,
/// and the rate limiters) change through `&self`.
pub struct Ctx {
    pub shared: Arc<Shared>,
    /// This connection's outgoing queue.
    pub handle: ConnHandle,
    /// The account session of the upgrade, if any.
    pub session: Option<WsSession>,
    /// The client's address, the per-address limits' key ([`crate::client_addr`]).
    pub client: Option<IpAddr>,
    /// Whose chat this connection does not want (shared with the chat rooms it is in); made
    /// when it first joins a room or mutes someone ([`Ctx::mutes`]).
    pub mutes: OnceLock<Mutes>,
    /// This connection's rate limits, made at its first limited message (an idle connection
    /// holds a pointer's room, not three limiters); its address's are in `Shared`.
    pub limits: OnceLock<Box<ConnLimits>>,
}

/// The seat this connection plays, if any, and its match's actor for the next command.
#[derive(Default)]
pub struct Seat {
    /// (match, seat).
    pub held: Option<(Uuid, u8)>,
    /// The match actor's handle, cached between commands.
    pub actor: Option<MatchHandle>,
}

/// The matches (with their actors' handles) and the lobbies this connection follows.
#[derive(Default)]
pub struct Follows {
    pub matches: HashMap<Uuid, MatchHandle>,
    pub lobbies: HashSet<Uuid>,
}

/// The whole connection, as the dispatcher sees it.
pub struct Connection {
    pub ctx: Ctx,
    pub seat: Seat,
    pub follows: Follows,
}

impl Ctx {
    /// Queues a frame for this client; an overflow raises `too_slow`, which closes the socket.
    pub fn reply(&self, frame: Frame) {
        self.handle.push(frame);
    }

    /// Answers with an error.
    pub fn error(&self, code: ErrorCode, message: impl Into<String>) {
        self.reply(error_frame(code, None, message));
    }

    /// Answers a store failure: logged with what was asked, told to the client as `internal`.
    pub fn store_failed(&self, asked: &str, e: &dyn std::fmt::Display) {
        tracing::warn!(error = %e, "{asked} failed");
        self.error(ErrorCode::Internal, "the store failed");
    }

    /// Refuses a command before it reaches its match (counted with the match's refusals).
    pub fn refuse(&self, id: String, code: ErrorCode, message: impl Into<String>) {
        self.shared.metrics.refused(code);
        self.reply(error_frame(code, Some(id), message));
    }

    /// This connection's rate limit of `kind`, then its address's.
    pub fn limit(&self, kind: Kind) -> Result<(), Limited> {
        let shared = &self.shared;
        self.limits
            .get_or_init(|| Box::new(ConnLimits::new(&shared.config.limits, &shared.limits)))
            .check(kind, self.client, &shared.limits)
    }

    /// This connection's mutes (made at the first use).
    pub fn mutes(&self) -> &Mutes {
        self.mutes.get_or_init(Mutes::default)
    }

    /// `rate_limited`, with the wait in `retry_after_ms`.
    pub fn reply_limited(&self, id: Option<String>, l: &Limited) {
        let mut body = protocol::ErrorBody::new(ErrorCode::RateLimited, l.message());
        body.id = id;
        body.retry_after_ms = Some(l.retry_after_ms());
        self.reply(frame(&ServerMessage::Error(body)));
    }

    /// Whether the server takes commands ([`crate::outbox::Signals::accepting`]).
    pub fn accepting(&self) -> bool {
        self.handle.signals().accepting.load(Ordering::Acquire)
    }

    pub fn account(&self) -> Option<Uuid> {
        self.session.as_ref().map(|s| s.account.id)
    }

    /// Queues a message for a match actor without waiting: a full inbox is `busy`. A retired
    /// actor (closed inbox) is replaced once through the registry. Gives the message back when
    /// it was not queued.
    pub fn send_to_actor(
        &self,
        match_id: Uuid,
        cached: Option<MatchHandle>,
        mut msg: ActorMsg,
    ) -> Result<MatchHandle, (ErrorCode, ActorMsg)> {
        let mut handle = cached;
        for _ in 0..2 {
            let h = match handle.take() {
                Some(h) if !h.tx.is_closed() => h,
                _ => match self.shared.registry.get_or_load(match_id) {
                    Ok(h) => h,
                    Err(_) => return Err((ErrorCode::Unavailable, msg)),
                },
            };
            match h.tx.try_send(msg) {
                Ok(()) => return Ok(h),
                Err(TrySendError::Full(m)) => return Err((ErrorCode::Busy, m)),
                Err(TrySendError::Closed(m)) => msg = m,
            }
        }
        Err((ErrorCode::Unavailable, msg))
    }
}

/// What a client is told when its message did not reach the match actor.
pub fn not_queued_message(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::Busy => "the match is busy; try again",
        _ => "the match is not available now",
    }
}

impl Seat {
    /// The seat held in this match, if any.
    pub fn in_match(&self, match_id: Uuid) -> Option<u8> {
        self.held.filter(|(m, _)| *m == match_id).map(|(_, s)| s)
    }
}

impl Follows {
    /// Tells the actors, the lobbies and the chat rooms this connection followed that it is
    /// gone.
    pub fn leave_all(&mut self, ctx: &Ctx) {
        let shared = &ctx.shared;
        let conn_id = ctx.handle.id;
        for lobby_id in self.lobbies.drain() {
            shared.lobbies.unsubscribe(lobby_id, conn_id);
            shared.chat.leave(Room::Lobby(lobby_id), conn_id);
        }
        for (match_id, h) in self.matches.drain() {
            shared.chat.leave(Room::Match(match_id), conn_id);
            let _ = h.tx.try_send(ActorMsg::Unsubscribe { conn_id });
        }
    }
}
