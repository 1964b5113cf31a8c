//! Seats a lobby gave to bots, played by the server at their levels ([`super::bot_mind`]). A
//! match's bots are one small task that follows the match like any client, through the match
//! actor's inbox and its own bounded queue (the same command pipeline as a connection: dedupe,
//! apply, persist, then broadcast): on each frame it asks the actor for the public view, and
//! answers the first open decision of one of its seats.
//!
//! In a cluster every node that knows the started lobby runs this task, but only the node that
//! holds the match's lease plays: the others wait while another node holds it, and take over
//! (by loading the match, which claims the lease) once it runs out, so that the bots go on when
//! the node that played them is gone.

use super::bot_mind::Minds;
use crate::actor::{ActorMsg, CommandMsg, Registry};
use crate::outbox::{self, ConnHandle};
use crate::store::MatchStatus;
use protocol::BotLevel;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::oneshot;
use tracing::{Instrument, debug, info_span, warn};
use uuid::Uuid;

/// Reattachments in a row after which a bot gives up on its match.
const MAX_MISSES: u32 = 5;

/// Bot "connections" take ids of their own ([`outbox::BOT_IDS_FROM`]).
static NEXT_BOT: AtomicU64 = AtomicU64::new(outbox::BOT_IDS_FROM);

/// Starts the bot task of a match (nothing when it has no bot seat). `after`: how long it
/// first leaves the match to the node that started it (a copy of a lobby started elsewhere).
pub(super) fn spawn(
    registry: Arc<Registry>,
    match_id: Uuid,
    seats: Vec<(u8, BotLevel)>,
    after: Duration,
) {
    if seats.is_empty() {
        return;
    }
    let task = async move {
        tokio::time::sleep(after).await;
        drive(registry, match_id, seats).await;
    };
    tokio::spawn(task.instrument(info_span!("bots", %match_id)));
}

async fn drive(registry: Arc<Registry>, match_id: Uuid, seats: Vec<(u8, BotLevel)>) {
    let id = NEXT_BOT.fetch_add(1, Ordering::Relaxed);
    let (tx, mut rx) = outbox::channel(256);
    let conn = ConnHandle::new(id, tx, Arc::default());
    let mut rng = getrandom::u64().unwrap_or(u64::from(id as u32));
    // Several nodes may drive the same seats over a match's life: each tags its command ids.
    let tag = rng >> 40;
    let mut minds = Minds::new(match_id, &seats, rng);
    let mut handle = None;
    // Command ids: a refused answer is never sent again under the same id (the dedupe would
    // repeat its refusal), so every send gets a new one.
    let mut sent: u64 = 0;
    // Reattachments in a row that did not reach a loaded match: a match that cannot be loaded
    // (broken) must not make the bot reload it in a tight loop.
    let mut misses: u32 = 0;
    loop {
        // (Re)attach to the match's actor: at start, and when it stopped.
        let h = match handle.take() {
            Some(h) => h,
            None => {
                if misses >= MAX_MISSES {
                    let Some(cluster) = registry.cluster() else {
                        warn!("the match cannot be reached: bots stop");
                        return;
                    };
                    // In a cluster the match may be between owners (one gone, its lease not
                    // yet run out): wait a lease's renewal and look again; the task ends
                    // when the match does.
                    tokio::time::sleep(cluster.renew_period()).await;
                    misses = 0;
                }
                if misses > 0 {
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(misses))).await;
                }
                if !our_turn_to_drive(&registry, match_id).await {
                    debug!("match over: bots leave");
                    return;
                }
                misses += 1;
                let Ok(h) = registry.get_or_load(match_id) else {
                    return; // shutting down
                };
                if h.tx
                    .send(ActorMsg::Subscribe {
                        conn: conn.clone(),
                        since: None,
                    })
                    .await
                    .is_err()
                {
                    return;
                }
                h
            }
        };
        tokio::select! {
            f = rx.recv() => if f.is_none() { return },
            () = h.tx.closed() => {
                // The actor stopped (shutdown, or a failed load): try once more through the
                // registry, which refuses while shutting down.
                continue;
            }
        }
        while rx.try_recv().is_some() {}
        let (reply, answer) = oneshot::channel();
        if h.tx.send(ActorMsg::Inspect { reply }).await.is_err() {
            continue;
        }
        let (seq, view) = match answer.await {
            Ok(Some(state)) => state,
            // The match cannot be played (aborted, broken).
            Ok(None) => return,
            // The actor (or, in a cluster, the proxy to its owner) stopped: attach again.
            Err(_) => continue,
        };
        misses = 0;
        if view.finished {
            debug!("match over: bots leave");
            return;
        }
        if let Some(cluster) = registry.cluster()
            && !cluster.owns(match_id)
        {
            // Reached through a proxy: the owner's node plays the bots.
            let _ = h.tx.send(ActorMsg::Unsubscribe { conn_id: conn.id }).await;
            continue;
        }
        let mine = view
            .decisions
            .iter()
            .find(|d| minds.seats().any(|s| s == d.player()))
            .cloned();
        if let Some(d) = mine {
            sent += 1;
            let seat = d.player();
            let command = match minds
                .answer(registry.store(), seq, view, &d, &mut rng)
                .await
            {
                Ok(c) => c,
                Err(e) => {
                    warn!(seat, level = minds.level(seat).as_str(), error = %e, "a bot could not think: it answers at random");
                    rules::bot::random_command(&d, || rules::bot::splitmix64(&mut rng))
                }
            };
            if let Some(command) = command {
                let _ =
                    h.tx.send(ActorMsg::Command(Box::new(CommandMsg {
                        conn: conn.clone(),
                        seat,
                        id: format!("bot-{tag:x}-{seat}-{seq}-{sent}"),
                        command,
                        arrived: tokio::time::Instant::now(),
                    })))
                    .await;
            }
        }
        handle = Some(h);
    }
}

/// Whether the bots play on: false once the match is over (read from the store, so that a
/// finished match is not loaded for nothing). In a cluster it first waits while another node
/// holds the match's lease: that node plays the bots.
async fn our_turn_to_drive(registry: &Registry, match_id: Uuid) -> bool {
    loop {
        if let Ok(Some(row)) = registry.store().load_match(match_id).await
            && row.status != MatchStatus::Active
        {
            return false;
        }
        let Some(cluster) = registry.cluster() else {
            return true;
        };
        if !cluster.held_elsewhere(match_id).await {
            return true;
        }
        tokio::time::sleep(cluster.renew_period()).await;
    }
}
