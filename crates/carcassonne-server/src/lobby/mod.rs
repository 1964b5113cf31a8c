//! Lobbies: people gather, choose the options, sit down, get ready, and the host
//! starts the match. ONE task, the lobby actor, owns every open lobby (invariant 5: no lock
//! around lobby state); HTTP handlers and connections talk to it through a bounded inbox. In a
//! cluster, every node's actor keeps a copy of every lobby ([`replica`]) and the node holding a
//! lobby's lease makes every decision on it ([`owner`]).
//!
//! Every change is computed on a copy ([`state::apply`]), stored, and only then becomes the
//! lobby's state and is pushed, whole, to every connection that follows the lobby (persist,
//! then broadcast). A restart reloads the open lobbies from the store. Starting creates the
//! match through [`crate::newmatch::prepare`] (as `POST /api/matches` does), binds each player's
//! seat to their account, and stores the match, its seats and the started lobby in one
//! transaction; the started lobby is then read-only (kept so that a late client finds the
//! match) and stays in the store as the record of who may watch the match (public, or private
//! with its invite code).

mod bot_mind;
mod bots;
mod owner;
mod replica;
pub mod state;

pub use owner::{Answer, Ask, Op};
pub use replica::Replica;
pub use state::{Action, LobbyError};

use crate::actor::Registry;
use crate::newmatch::{NewMatchError, prepare};
use crate::outbox::ConnHandle;
use crate::store::{Fence, LobbyRow, Store};
use crate::wire::{error_frame, frame};
use owner::{Decided, Owner};
use protocol::{
    Account, CreateLobby, CreateMatch, ErrorCode, LobbyList, LobbyModules, LobbyState, LobbyStatus,
    Occupant, ServerMessage, WatchableMatch,
};
use state::{After, refuse};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tracing::{Instrument, error, info, info_span, warn};
use uuid::Uuid;

/// Messages queued for the lobby actor before callers get `busy`.
const INBOX: usize = 256;
/// Connections that may follow one lobby.
const MAX_FOLLOWERS: usize = 64;

/// Which open lobbies `GET /api/lobbies` lists.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Only lobbies with this module on (`tollkeepers`, `messages`, `france`, `chips`,
    /// `inns_cathedrals`, `traders_builders`).
    pub module: Option<String>,
    /// Only lobbies with at least this many free seats.
    pub free_seats: Option<u8>,
}

type Reply<T> = oneshot::Sender<Result<T, LobbyError>>;

#[derive(Debug)]
enum Msg {
    Create {
        by: Account,
        req: CreateLobby,
        reply: Reply<LobbyState>,
    },
    /// An action or a start: decided here if this node decides for the lobby.
    Decide {
        ask: Ask,
        reply: oneshot::Sender<Decided>,
    },
    Get {
        viewer: Option<Uuid>,
        lobby: Uuid,
        code: Option<String>,
        reply: Reply<LobbyState>,
    },
    List {
        filter: ListFilter,
        reply: Reply<LobbyList>,
    },
    Subscribe {
        viewer: Option<Uuid>,
        lobby: Uuid,
        conn: ConnHandle,
    },
    Unsubscribe {
        lobby: Uuid,
        conn_id: u64,
    },
    /// Another node of the cluster changed a lobby (stored already).
    Replicated(Replica),
}

/// A cheap handle on the lobby actor.
#[derive(Debug, Clone)]
pub struct Lobbies {
    tx: mpsc::Sender<Msg>,
    /// Where a decision goes when another node decides for the lobby.
    cluster: Option<Arc<crate::cluster::Cluster>>,
}

fn busy() -> LobbyError {
    refuse(ErrorCode::Busy, "the lobbies are busy; try again")
}

fn gone() -> LobbyError {
    refuse(ErrorCode::Unavailable, "the server is shutting down")
}

impl Lobbies {
    /// Loads the open lobbies, starts the actor, and resumes the bots of running lobby matches.
    pub async fn start(
        store: Store,
        registry: Arc<Registry>,
        allow_test_setups: bool,
        max_open_lobbies: usize,
    ) -> Result<Lobbies, crate::store::StoreError> {
        let mut open = HashMap::new();
        let mut started = Started::default();
        for row in store.live_lobbies().await? {
            let lobby: LobbyState = match serde_json::from_str(&row.state) {
                Ok(l) => l,
                Err(e) => {
                    error!(lobby = %row.id, error = %e, "a stored lobby does not parse: skipped");
                    continue;
                }
            };
            match (lobby.status, lobby.match_id) {
                (LobbyStatus::Open, _) => {
                    open.insert(lobby.id, lobby);
                }
                (LobbyStatus::Started, Some(match_id)) => {
                    bots::spawn(
                        Arc::clone(&registry),
                        match_id,
                        bot_seats(&lobby),
                        Duration::ZERO,
                    );
                    started.insert(lobby.id, lobby);
                }
                (LobbyStatus::Started, None) => {}
            }
        }
        info!(open = open.len(), "lobbies loaded");
        let (tx, rx) = mpsc::channel(INBOX);
        let cluster = registry.cluster().cloned();
        let actor = Actor {
            store,
            registry,
            allow_test_setups,
            max_open_lobbies,
            open,
            started,
            followers: HashMap::new(),
        };
        tokio::spawn(actor.run(rx).instrument(info_span!("lobbies")));
        Ok(Lobbies { tx, cluster })
    }

    async fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> Msg) -> Result<T, LobbyError> {
        let (reply, answer) = oneshot::channel();
        self.tx.send(make(reply)).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }

    pub async fn create(&self, by: Account, req: CreateLobby) -> Result<LobbyState, LobbyError> {
        self.ask(|reply| Msg::Create { by, req, reply }).await
    }

    /// An action; `None` when it closed the lobby.
    pub async fn act(
        &self,
        by: Account,
        lobby: Uuid,
        action: Action,
    ) -> Result<Option<LobbyState>, LobbyError> {
        let op = Op::Act { action };
        match self.decide(Ask { by, lobby, op }).await {
            Answer::Changed { lobby } => Ok(lobby.map(|l| *l)),
            other => Err(other.refusal()),
        }
    }

    /// Starts the lobby's match; its id.
    pub async fn start_match(&self, by: Account, lobby: Uuid) -> Result<Uuid, LobbyError> {
        match self
            .decide(Ask {
                by,
                lobby,
                op: Op::Start,
            })
            .await
        {
            Answer::Started { match_id } => Ok(match_id),
            other => Err(other.refusal()),
        }
    }

    pub async fn get(
        &self,
        viewer: Option<Uuid>,
        lobby: Uuid,
        code: Option<String>,
    ) -> Result<LobbyState, LobbyError> {
        self.ask(|reply| Msg::Get {
            viewer,
            lobby,
            code,
            reply,
        })
        .await
    }

    pub async fn list(&self, filter: ListFilter) -> Result<LobbyList, LobbyError> {
        self.ask(|reply| Msg::List { filter, reply }).await
    }

    /// Follows a lobby without waiting (a connection never waits): the state or a refusal
    /// arrives through the connection's queue.
    pub fn subscribe(
        &self,
        viewer: Option<Uuid>,
        lobby: Uuid,
        conn: ConnHandle,
    ) -> Result<(), LobbyError> {
        self.tx
            .try_send(Msg::Subscribe {
                viewer,
                lobby,
                conn,
            })
            .map_err(|e| match e {
                mpsc::error::TrySendError::Full(_) => busy(),
                mpsc::error::TrySendError::Closed(_) => gone(),
            })
    }

    pub fn unsubscribe(&self, lobby: Uuid, conn_id: u64) {
        let _ = self.tx.try_send(Msg::Unsubscribe { lobby, conn_id });
    }

    /// A change another node stored. Without room in the inbox it is dropped: this node's copy
    /// is then behind until its next read of that lobby (a reader's, or a takeover's).
    pub fn replicated(&self, replica: Replica) {
        let _ = self.tx.try_send(Msg::Replicated(replica));
    }
}

/// The seats a lobby gave to bots, with their levels.
fn bot_seats(l: &LobbyState) -> Vec<(u8, protocol::BotLevel)> {
    l.seats
        .iter()
        .filter_map(|s| match s.occupant {
            Some(Occupant::Bot { level }) => Some((s.seat, level)),
            _ => None,
        })
        .collect()
}

fn row_of(l: &LobbyState) -> Result<LobbyRow, LobbyError> {
    Ok(LobbyRow {
        id: l.id,
        version: l.version,
        started: l.status == LobbyStatus::Started,
        public: l.public,
        invite_code: l.invite_code.clone(),
        match_id: l.match_id,
        state: serde_json::to_string(l)
            .map_err(|e| refuse(ErrorCode::Internal, format!("serialization failed: {e}")))?,
    })
}

/// What a start writes: the match, the seats' accounts, and the started lobby.
struct StartPlan {
    prepared: crate::newmatch::Prepared,
    owners: Vec<(u8, Uuid)>,
    next: LobbyState,
}

/// A store failure: `unavailable` while the database cannot be reached (try again), else
/// `internal`.
fn store_failed(e: crate::store::StoreError) -> LobbyError {
    if e.is_outage() {
        warn!(error = %e, "lobby store unreachable");
        return refuse(
            ErrorCode::Unavailable,
            "the store is not available; try again",
        );
    }
    error!(error = %e, "lobby store access failed");
    refuse(ErrorCode::Internal, "the store failed")
}

fn unknown() -> LobbyError {
    refuse(ErrorCode::UnknownLobby, "no such lobby")
}

fn already_started() -> LobbyError {
    refuse(ErrorCode::LobbyStarted, "the lobby's match has started")
}

/// An invite code: 8 characters without look-alikes (no 0/O, 1/I/L).
fn invite_code() -> Result<String, LobbyError> {
    const ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| refuse(ErrorCode::Internal, e.to_string()))?;
    Ok(bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect())
}

fn has_module(m: &LobbyModules, name: &str) -> Result<bool, LobbyError> {
    Ok(match name {
        "tollkeepers" => m.tollkeepers,
        "messages" => m.messages,
        "france" => m.france,
        "chips" => m.chips,
        "inns_cathedrals" => m.inns_cathedrals,
        "traders_builders" => m.traders_builders,
        other => {
            return Err(refuse(
                ErrorCode::BadOption,
                format!(
                    "unknown module `{other}` (tollkeepers, messages, france, chips, \
                     inns_cathedrals, traders_builders)"
                ),
            ));
        }
    })
}

/// A connection following a lobby.
struct Follower {
    viewer: Option<Uuid>,
    conn: ConnHandle,
}

/// Most started lobbies kept in memory: enough for late clients of recent starts, bounded so
/// that a long uptime does not grow the lobby actor without end.
const MAX_STARTED: usize = 4096;

/// The started lobbies, read-only, the oldest dropped beyond [`MAX_STARTED`] (a lobby dropped
/// here is then unknown: its match has long been listed and joined).
struct Started<T = LobbyState> {
    lobbies: HashMap<Uuid, T>,
    order: std::collections::VecDeque<Uuid>,
}

impl<T> Default for Started<T> {
    fn default() -> Self {
        Started {
            lobbies: HashMap::new(),
            order: std::collections::VecDeque::new(),
        }
    }
}

impl<T> Started<T> {
    fn insert(&mut self, id: Uuid, lobby: T) {
        if self.lobbies.insert(id, lobby).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > MAX_STARTED {
            if let Some(old) = self.order.pop_front() {
                self.lobbies.remove(&old);
            }
        }
    }

    fn get(&self, id: &Uuid) -> Option<&T> {
        self.lobbies.get(id)
    }

    fn contains_key(&self, id: &Uuid) -> bool {
        self.lobbies.contains_key(id)
    }
}

struct Actor {
    store: Store,
    registry: Arc<Registry>,
    allow_test_setups: bool,
    /// Open lobbies one account may host (`too_many_lobbies`).
    max_open_lobbies: usize,
    /// Every open lobby: this task alone reads and changes them.
    open: HashMap<Uuid, LobbyState>,
    /// Lobbies whose match started (since this run, or still running at its start): read-only,
    /// so that a late client finds the match and an action gets `lobby_started`.
    started: Started,
    /// Who follows each lobby: the connection and its account, if any.
    followers: HashMap<Uuid, Vec<Follower>>,
}

impl Actor {
    async fn run(mut self, mut rx: mpsc::Receiver<Msg>) {
        while let Some(msg) = rx.recv().await {
            match msg {
                Msg::Create { by, req, reply } => {
                    let _ = reply.send(self.create(&by, &req).await);
                }
                Msg::Decide { ask, reply } => {
                    let _ = reply.send(self.decide(ask).await);
                }
                Msg::Get {
                    viewer,
                    lobby,
                    code,
                    reply,
                } => {
                    self.find(lobby).await;
                    let found = self.open.get(&lobby).or_else(|| self.started.get(&lobby));
                    let answer = match found {
                        Some(l) if state::may_see(l, viewer, code.as_deref()) => {
                            Ok(state::seen_by(l, viewer))
                        }
                        Some(_) => Err(refuse(
                            ErrorCode::InviteRequired,
                            "this lobby is private: give its invite code",
                        )),
                        None => Err(unknown()),
                    };
                    let _ = reply.send(answer);
                }
                Msg::List { filter, reply } => {
                    let _ = reply.send(self.list(&filter).await);
                }
                Msg::Subscribe {
                    viewer,
                    lobby,
                    conn,
                } => {
                    self.find(lobby).await;
                    self.subscribe(viewer, lobby, conn);
                }
                Msg::Unsubscribe { lobby, conn_id } => {
                    if let Some(f) = self.followers.get_mut(&lobby) {
                        f.retain(|c| c.conn.id != conn_id);
                    }
                }
                Msg::Replicated(replica) => self.replicated(replica),
            }
        }
    }

    async fn create(&mut self, by: &Account, req: &CreateLobby) -> Result<LobbyState, LobbyError> {
        let hosted = self.open.values().filter(|l| l.host == Some(by.id)).count();
        if hosted >= self.max_open_lobbies {
            return Err(refuse(
                ErrorCode::TooManyLobbies,
                format!(
                    "this account already hosts {hosted} open lobbies (at most {}): start or \
                     leave one first",
                    self.max_open_lobbies
                ),
            ));
        }
        let code = if req.public {
            None
        } else {
            Some(invite_code()?)
        };
        let lobby = state::create(by, req, code)?;
        let row = row_of(&lobby)?;
        let fence = self.claim_new(lobby.id).await?;
        if let Err(e) = self.store.save_lobby(&row, fence.as_deref()).await {
            self.let_go(lobby.id).await;
            return Err(store_failed(e));
        }
        info!(lobby = %lobby.id, host = %by.id, "lobby created");
        self.open.insert(lobby.id, lobby.clone());
        self.tell_cluster(Replica::State(Box::new(lobby.clone())));
        Ok(lobby)
    }

    /// An action or a start, by the node that decides for the lobby.
    async fn decide(&mut self, ask: Ask) -> Decided {
        let Ask { by, lobby: id, op } = ask;
        let fence = match self.owner(id).await {
            Ok(Owner::Here(fence)) => fence,
            Ok(Owner::Elsewhere(node)) => return Decided::Elsewhere(node),
            Err(e) => return Decided::Here(e.into()),
        };
        let answer = match op {
            // One who just left (or was never seated) is shown no invite code.
            Op::Act { action } => {
                self.act(&by, id, action, fence.as_deref())
                    .await
                    .map(|l| Answer::Changed {
                        lobby: l.map(|l| Box::new(state::seen_by(&l, Some(by.id)))),
                    })
            }
            Op::Start => self
                .start(&by, id, fence.as_deref())
                .await
                .map(|match_id| Answer::Started { match_id }),
        };
        Decided::Here(answer.unwrap_or_else(Answer::from))
    }

    /// An action, computed on a copy, written (under `fence` in a cluster), then made current.
    async fn act(
        &mut self,
        by: &Account,
        id: Uuid,
        action: Action,
        fence: Option<&Fence>,
    ) -> Result<Option<LobbyState>, LobbyError> {
        if self.started.contains_key(&id) {
            return Err(already_started());
        }
        let current = self.open.get(&id).ok_or_else(unknown)?;
        let version = current.version;
        match state::apply(current.clone(), by, action)? {
            After::Open(next) => {
                let row = row_of(&next)?;
                let written = self.store.save_lobby(&row, fence).await;
                self.stored(id, fence, written).await?;
                self.open.insert(id, next.clone());
                self.push(&next);
                self.tell_cluster(Replica::State(Box::new(next.clone())));
                Ok(Some(next))
            }
            After::Closed => {
                let written = self.store.delete_lobby(id, version, fence).await;
                self.stored(id, fence, written).await?;
                self.open.remove(&id);
                info!(lobby = %id, "lobby closed: no player left");
                self.closed(id);
                self.tell_cluster(Replica::Closed(id));
                self.let_go(id).await;
                Ok(None)
            }
        }
    }

    /// Starts the lobby's match: the match, its seats' accounts and the started lobby in one
    /// write (under `fence` in a cluster).
    async fn start(
        &mut self,
        by: &Account,
        id: Uuid,
        fence: Option<&Fence>,
    ) -> Result<Uuid, LobbyError> {
        if self.started.contains_key(&id) {
            return Err(already_started());
        }
        if !self.open.contains_key(&id) {
            return Err(unknown());
        }
        let StartPlan {
            prepared,
            owners,
            next,
        } = self.prepare_start(by, id)?;
        let match_id = prepared.row.id;
        let row = row_of(&next)?;
        let written = self
            .store
            .start_lobby_match(&prepared.row, &prepared.seats, &owners, &row, fence)
            .await;
        self.stored(id, fence, written).await?;
        info!(lobby = %id, %match_id, "lobby started its match");
        // The match's actor, loaded now so that the first subscriber finds it ready.
        if self.registry.get_or_load(match_id).is_err() {
            warn!(%match_id, "the server is shutting down: the match starts on the next run");
        }
        let bots = bot_seats(&next);
        if !bots.is_empty() {
            bots::spawn(Arc::clone(&self.registry), match_id, bots, Duration::ZERO);
        }
        self.push(&next);
        self.open.remove(&id);
        self.followers.remove(&id);
        self.tell_cluster(Replica::State(Box::new(next.clone())));
        self.started.insert(id, next);
        self.let_go(id).await;
        Ok(match_id)
    }

    /// The match a start creates, the seats' accounts, and the started lobby.
    fn prepare_start(&self, by: &Account, id: Uuid) -> Result<StartPlan, LobbyError> {
        let current = self.open.get(&id).ok_or_else(unknown)?;
        let players = state::check_start(current, by)?;
        let req = CreateMatch {
            players,
            modules: current.modules.to_rules(),
            meeples: current.meeples,
            draw_order: None,
            // The lobby's clock runs in its match.
            clock: current.clock,
        };
        let timeout = self.registry.config().matches.decision_timeout;
        let prepared = prepare(&req, self.allow_test_setups, timeout).map_err(|e| match e {
            NewMatchError::Invalid(m) => refuse(ErrorCode::BadOption, m),
            other => {
                error!(error = %other, "cannot create a lobby's match");
                refuse(ErrorCode::Internal, "the server failed")
            }
        })?;
        let match_id = prepared.row.id;
        let owners: Vec<(u8, Uuid)> = current
            .seats
            .iter()
            .filter_map(|s| match &s.occupant {
                Some(Occupant::Player { account_id, .. }) => Some((s.seat, *account_id)),
                _ => None,
            })
            .collect();
        let mut next = current.clone();
        next.status = LobbyStatus::Started;
        next.match_id = Some(match_id);
        next.version += 1;
        Ok(StartPlan {
            prepared,
            owners,
            next,
        })
    }

    async fn list(&self, filter: &ListFilter) -> Result<LobbyList, LobbyError> {
        if let Some(m) = &filter.module {
            has_module(&LobbyModules::default(), m)?; // an unknown module is refused
        }
        let mut lobbies = Vec::new();
        for l in self.open.values().filter(|l| l.public) {
            if let Some(m) = &filter.module
                && !has_module(&l.modules, m)?
            {
                continue;
            }
            let free = l.seats.iter().filter(|s| s.occupant.is_none()).count();
            if filter.free_seats.is_some_and(|n| free < usize::from(n)) {
                continue;
            }
            lobbies.push(l.clone());
        }
        lobbies.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
        let mut matches = Vec::new();
        for row in self.store.live_lobbies().await.map_err(store_failed)? {
            if !row.started || !row.public {
                continue;
            }
            let Ok(l) = serde_json::from_str::<LobbyState>(&row.state) else {
                continue;
            };
            let Some(match_id) = l.match_id else {
                continue;
            };
            if let Some(m) = &filter.module
                && !has_module(&l.modules, m)?
            {
                continue;
            }
            matches.push(WatchableMatch {
                match_id,
                lobby_id: l.id,
                name: l.name.clone(),
                modules: l.modules,
                players: l
                    .seats
                    .iter()
                    .map(|s| match &s.occupant {
                        Some(Occupant::Player { name, .. }) => name.clone(),
                        _ => "bot".to_string(),
                    })
                    .collect(),
            });
        }
        Ok(LobbyList { lobbies, matches })
    }

    fn subscribe(&mut self, viewer: Option<Uuid>, id: Uuid, conn: ConnHandle) {
        let Some(l) = self.open.get(&id) else {
            let (code, message) = if self.started.contains_key(&id) {
                (ErrorCode::LobbyStarted, "the lobby's match has started")
            } else {
                (ErrorCode::UnknownLobby, "no such lobby")
            };
            conn.push(error_frame(code, None, message));
            return;
        };
        if !l.public && viewer.is_none_or(|v| state::seat_of(l, v).is_none()) {
            conn.push(error_frame(
                ErrorCode::InviteRequired,
                None,
                "a private lobby is followed by its members: join it with its invite code first",
            ));
            return;
        }
        let followers = self.followers.entry(id).or_default();
        followers.retain(|c| c.conn.id != conn.id);
        if followers.len() >= MAX_FOLLOWERS {
            conn.push(error_frame(
                ErrorCode::Unavailable,
                None,
                format!("at most {MAX_FOLLOWERS} connections follow one lobby"),
            ));
            return;
        }
        if conn.push(frame(&ServerMessage::Lobby { lobby: l.clone() })) {
            followers.push(Follower { viewer, conn });
        }
    }

    /// The whole state to every follower; connections that are gone are dropped. One frame for
    /// all: a private lobby's followers are its members (checked here), who may see its invite
    /// code, and a public lobby has none.
    fn push(&mut self, l: &LobbyState) {
        if let Some(followers) = self.followers.get_mut(&l.id) {
            let f = frame(&ServerMessage::Lobby { lobby: l.clone() });
            followers.retain(|c| {
                // A private lobby is followed by its members only: whoever left or was kicked
                // is told once and dropped.
                if !l.public && c.viewer.is_none_or(|v| state::seat_of(l, v).is_none()) {
                    c.conn.push(error_frame(
                        ErrorCode::NotInLobby,
                        None,
                        "you no longer have a seat in this private lobby",
                    ));
                    return false;
                }
                c.conn.push(f.clone())
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Started lobbies are bounded: beyond the cap the oldest goes, the newest stay.
    #[test]
    fn started_lobbies_keep_only_the_newest() {
        let mut started: Started<u32> = Started::default();
        let ids: Vec<Uuid> = (0..=MAX_STARTED).map(|_| Uuid::new_v4()).collect();
        for (i, id) in ids.iter().enumerate() {
            started.insert(*id, i as u32);
        }
        // Inserting a kept one again changes nothing.
        started.insert(ids[MAX_STARTED], 0);
        assert!(!started.contains_key(&ids[0]));
        assert_eq!(started.get(&ids[1]), Some(&1));
        assert_eq!(started.get(&ids[MAX_STARTED]), Some(&0));
        assert_eq!(started.lobbies.len(), MAX_STARTED);
        assert_eq!(started.order.len(), MAX_STARTED);
    }
}
