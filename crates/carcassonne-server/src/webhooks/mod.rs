//! Your-turn notices to the accounts' webhooks. After every committed batch the match's actor
//! hands the notice task the seats a decision waits for (with when the server would answer for
//! each) through a bounded queue, never waiting (`try_send`: a full queue drops that state, a
//! notice is a courtesy, the match is the truth). The task compares with what it knew: a seat
//! that starts waiting gets a `your_turn` notice, and a reminder is scheduled `--webhook-reminder`
//! before its deadline or clock runs out, sent if the seat still waits then.
//!
//! Each notice is delivered by a task of its own (at most [`MAX_DELIVERIES`] at once; more are
//! dropped and logged), so a slow or dead receiver delays only its own notices: it finds the
//! seat's account (the match's seats are read once while it is played) and, if that account is
//! one of those with a webhook (kept in memory, so other notices read nothing), its webhook, signs the JSON body (HMAC-SHA256 under the
//! webhook's secret, [`deliver::signature`]) and posts it, retrying on a failure, a 5xx, 408 or
//! 429 with exponential backoff (`--webhook-retry`, doubled each time, `--webhook-attempts` in
//! all) under one delivery id.

pub mod deliver;

use crate::config::WebhookConfig;
use crate::store::Store;
use protocol::{NoticeKind, Seq, TurnNotice};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc};
use tokio::time::Instant;
use tracing::{debug, warn};
use uuid::Uuid;

/// Turn states waiting for the notice task before the next is dropped.
const QUEUE: usize = 4_096;
/// How often the accounts with a webhook are read again (those set on other nodes).
const HOOKS_REREAD: Duration = Duration::from_secs(60);
/// Deliveries in flight at once, over all accounts.
pub const MAX_DELIVERIES: usize = 256;

/// A seat a decision waits for, and when the server would answer for it (Unix milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    pub seat: u8,
    pub due_at: Option<u64>,
}

/// A match's waiting seats after a committed batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnState {
    pub match_id: Uuid,
    pub seq: Seq,
    pub waiting: Vec<Waiting>,
}

/// The accounts that have a webhook: a notice for anyone else costs no store read (a server
/// whose accounts have none reads nothing for its notices).
type Hooks = Arc<RwLock<HashSet<Uuid>>>;

/// The handle the actors tell.
#[derive(Debug, Clone)]
pub struct Notices {
    tx: mpsc::Sender<TurnState>,
    hooks: Hooks,
}

impl Notices {
    /// Starts the notice task; it first reads which accounts have a webhook.
    pub fn start(store: Store, config: WebhookConfig) -> Notices {
        let (tx, rx) = mpsc::channel(QUEUE);
        let hooks = Hooks::default();
        tokio::spawn(run(store, Arc::new(config), Arc::clone(&hooks), rx));
        Notices { tx, hooks }
    }

    /// An account's webhook was set (`true`) or removed.
    pub fn hook_changed(&self, account: Uuid, set: bool) {
        let mut hooks = self.hooks.write().unwrap_or_else(PoisonError::into_inner);
        match set {
            true => hooks.insert(account),
            false => hooks.remove(&account),
        };
    }

    /// Whether any account has a webhook: while none has, the match actors send nothing here
    /// (a server without webhooks pays nothing per move).
    pub fn any_hooks(&self) -> bool {
        !self
            .hooks
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// A match's waiting seats now. Never waits.
    pub fn turn(&self, state: TurnState) {
        if self.tx.try_send(state).is_err() {
            debug!("webhooks: the notice queue is full; a turn state was dropped");
        }
    }
}

fn now_ms() -> u64 {
    u64::try_from(chrono::Utc::now().timestamp_millis()).unwrap_or(0)
}

/// What the task knows of a waiting seat.
#[derive(Debug, Clone, Copy)]
struct Seat {
    since: Seq,
    due_at: Option<u64>,
    reminded: bool,
}

/// The accounts of each match's seats, read once per match while it has waiting seats.
type SeatAccounts = Arc<Mutex<HashMap<Uuid, Arc<Vec<(u8, Uuid)>>>>>;

struct Task {
    store: Store,
    config: Arc<WebhookConfig>,
    hooks: Hooks,
    accounts: SeatAccounts,
    seats: HashMap<Uuid, HashMap<u8, Seat>>,
    /// (when, match, seat, since): a reminder, valid if the seat still waits since then.
    reminders: BinaryHeap<Reverse<(u64, Uuid, u8, Seq)>>,
    slots: Arc<Semaphore>,
}

async fn run(
    store: Store,
    config: Arc<WebhookConfig>,
    hooks: Hooks,
    mut rx: mpsc::Receiver<TurnState>,
) {
    let mut t = Task {
        store,
        config,
        hooks,
        accounts: SeatAccounts::default(),
        seats: HashMap::new(),
        reminders: BinaryHeap::new(),
        slots: Arc::new(Semaphore::new(MAX_DELIVERIES)),
    };
    // Read at start and again every minute: in a cluster a webhook is set on any node.
    let mut reread = tokio::time::interval(HOOKS_REREAD);
    loop {
        let next = t.reminders.peek().map(|Reverse((at, ..))| *at);
        let sleep = match next {
            Some(at) => Duration::from_millis(at.saturating_sub(now_ms())),
            None => Duration::from_secs(3600),
        };
        tokio::select! {
            state = rx.recv() => match state {
                Some(s) => t.update(s),
                None => return,
            },
            _ = tokio::time::sleep_until(Instant::now() + sleep) => t.remind(),
            _ = reread.tick() => t.reread_hooks().await,
        }
    }
}

impl Task {
    async fn reread_hooks(&self) {
        match self.store.webhook_accounts().await {
            Ok(all) => {
                *self.hooks.write().unwrap_or_else(PoisonError::into_inner) =
                    all.into_iter().collect();
            }
            Err(e) => warn!(error = %e, "webhooks: the accounts with a webhook could not be read"),
        }
    }

    fn update(&mut self, s: TurnState) {
        let margin = u64::try_from(self.config.webhook_reminder.as_millis()).unwrap_or(u64::MAX);
        let known = self.seats.entry(s.match_id).or_default();
        known.retain(|seat, _| s.waiting.iter().any(|w| w.seat == *seat));
        let mut sends = Vec::new();
        for w in &s.waiting {
            let seat = known.entry(w.seat).or_insert_with(|| {
                sends.push((NoticeKind::YourTurn, w.seat, s.seq, w.due_at));
                Seat {
                    since: s.seq,
                    due_at: None,
                    reminded: false,
                }
            });
            if seat.due_at != w.due_at {
                seat.due_at = w.due_at;
                if let Some(due) = w.due_at
                    && !seat.reminded
                    && due.saturating_sub(margin) > now_ms()
                {
                    self.reminders
                        .push(Reverse((due - margin, s.match_id, w.seat, seat.since)));
                }
            }
        }
        if known.is_empty() {
            self.seats.remove(&s.match_id);
            self.accounts
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&s.match_id);
        }
        for (kind, seat, seq, due_at) in sends {
            self.send(kind, s.match_id, seat, seq, due_at);
        }
    }

    fn remind(&mut self) {
        let now = now_ms();
        while let Some(Reverse((at, match_id, seat, since))) = self.reminders.peek().copied() {
            if at > now {
                break;
            }
            self.reminders.pop();
            let Some(s) = self.seats.get_mut(&match_id).and_then(|m| m.get_mut(&seat)) else {
                continue;
            };
            if s.since != since || s.reminded {
                continue;
            }
            s.reminded = true;
            let due_at = s.due_at;
            self.send(NoticeKind::Reminder, match_id, seat, since, due_at);
        }
    }

    fn send(&self, kind: NoticeKind, match_id: Uuid, seat: u8, seq: Seq, due_at: Option<u64>) {
        if self
            .hooks
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
        {
            return;
        }
        let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() else {
            warn!(%match_id, seat, "webhooks: too many deliveries in flight; a notice was dropped");
            return;
        };
        let (store, config) = (self.store.clone(), Arc::clone(&self.config));
        let (hooks, accounts) = (Arc::clone(&self.hooks), Arc::clone(&self.accounts));
        let notice = TurnNotice {
            kind,
            match_id,
            seat,
            seq,
            due_at,
            sent_at: now_ms(),
        };
        tokio::spawn(async move {
            if let Some(account) = account_of(&store, &accounts, match_id, seat).await
                && hooks
                    .read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .contains(&account)
            {
                deliver_notice(&store, &config, account, &notice).await;
            }
            drop(permit);
        });
    }
}

/// The account holding a seat: the match's seats read once while it is played.
async fn account_of(store: &Store, cache: &SeatAccounts, match_id: Uuid, seat: u8) -> Option<Uuid> {
    let known = cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&match_id)
        .cloned();
    let seats = match known {
        Some(s) => s,
        None => match store.seat_accounts(match_id).await {
            Ok(s) => {
                let s = Arc::new(s);
                cache
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(match_id, Arc::clone(&s));
                s
            }
            Err(e) => {
                warn!(error = %e, "webhooks: the seats' accounts could not be read");
                return None;
            }
        },
    };
    seats.iter().find(|(s, _)| *s == seat).map(|(_, a)| *a)
}

/// Finds the account's webhook and posts the notice, with retries.
async fn deliver_notice(store: &Store, config: &WebhookConfig, account: Uuid, notice: &TurnNotice) {
    let hook = match store.webhook(account).await {
        Ok(Some(h)) => h,
        Ok(None) => return,
        Err(e) => return warn!(error = %e, "webhooks: the webhook could not be read"),
    };
    // Checked when it was set; checked again, since the server's policy may have changed.
    let Ok(target) = deliver::parse_url(&hook.url, config.webhook_allow_http) else {
        return warn!(%account, "webhooks: the stored URL is not allowed now; not posted");
    };
    let Ok(body) = serde_json::to_vec(notice) else {
        return;
    };
    let signature = deliver::signature(&hook.secret, &body);
    let delivery = Uuid::new_v4().to_string();
    let mut wait = config.webhook_retry;
    for attempt in 1..=config.webhook_attempts {
        match deliver::post(
            &target,
            &body,
            &signature,
            &delivery,
            config.webhook_timeout,
        )
        .await
        {
            Ok(code) if (200..300).contains(&code) => return,
            // The receiver refuses this notice for good: retrying would not change its mind.
            Ok(code) if (400..500).contains(&code) && code != 408 && code != 429 => {
                return warn!(%account, code, "webhooks: the receiver refused a notice");
            }
            Ok(code) => debug!(%account, code, attempt, "webhooks: a post failed"),
            Err(e) => debug!(%account, error = %e, attempt, "webhooks: a post failed"),
        }
        if attempt < config.webhook_attempts {
            tokio::time::sleep(wait).await;
            wait = wait.saturating_mul(2);
        }
    }
    warn!(%account, "webhooks: a notice was given up after every attempt");
}
