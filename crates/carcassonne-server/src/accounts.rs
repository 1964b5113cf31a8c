//! Accounts and sessions: name rules, password hashing (argon2id), and turning a
//! session token into an [`Account`]. Used by the HTTP routes (`http/accounts.rs`) and by the
//! WebSocket upgrade. Session tokens, like seat tokens, are stored only as hashes.

use crate::outbox::Signals;
use crate::store::{AccountRow, NewSession, SessionRow, Store, StoreError};
use crate::tokens::{new_token, token_hash};
use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use chrono::Utc;
use protocol::{Account, AccountKind, ErrorCode};
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;

/// Longest display name, in characters, after trimming.
pub const MAX_NAME_CHARS: usize = 24;
/// Password length bounds, in bytes.
pub const MIN_PASSWORD: usize = 8;
pub const MAX_PASSWORD: usize = 256;
/// Longest session token accepted for a lookup (ours are 64 hex digits).
const MAX_TOKEN: usize = 256;

/// Why an account request was refused: a protocol error code and a message.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("a name has 1 to {MAX_NAME_CHARS} characters after trimming and no control characters")]
    BadName,
    #[error("a registered account already has the name `{0}`")]
    NameTaken(String),
    #[error("a password has {MIN_PASSWORD} to {MAX_PASSWORD} bytes")]
    BadPassword,
    #[error("wrong name or password")]
    BadCredentials,
    #[error("no such session (revoked, or never issued)")]
    UnknownSession,
    #[error("this account already has {0} live sessions, the most it may: log out of one first")]
    TooManySessions(usize),
    /// An admin suspended the account (`until`: `None` for good).
    #[error("{}", suspended_message(.until, .reason))]
    Suspended {
        until: Option<chrono::DateTime<Utc>>,
        reason: String,
    },
    #[error("this reset link is unknown, used already or expired: ask an admin for a new one")]
    BadReset,
    #[error("wrong password")]
    WrongPassword,
    #[error("only a registered account has a password")]
    NotRegistered,
    #[error("the store failed: {0}")]
    Store(#[from] StoreError),
    #[error("no OS randomness: {0}")]
    Randomness(String),
    #[error("password hashing failed: {0}")]
    Hash(String),
}

impl AccountError {
    pub fn code(&self) -> ErrorCode {
        match self {
            AccountError::BadName => ErrorCode::BadName,
            AccountError::NameTaken(_) => ErrorCode::NameTaken,
            AccountError::BadPassword => ErrorCode::BadPassword,
            AccountError::BadCredentials => ErrorCode::BadCredentials,
            AccountError::UnknownSession => ErrorCode::UnknownSession,
            AccountError::TooManySessions(_) => ErrorCode::TooManySessions,
            AccountError::Suspended { .. } => ErrorCode::Suspended,
            AccountError::BadReset => ErrorCode::BadReset,
            AccountError::WrongPassword => ErrorCode::BadCredentials,
            AccountError::NotRegistered => ErrorCode::BadPassword,
            AccountError::Store(_) | AccountError::Randomness(_) | AccountError::Hash(_) => {
                ErrorCode::Internal
            }
        }
    }
}

fn suspended_message(until: &Option<chrono::DateTime<Utc>>, reason: &str) -> String {
    match until {
        Some(t) => format!(
            "this account is suspended until {}: {reason}",
            t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
        None => format!("this account is suspended for good: {reason}"),
    }
}

/// A valid display name: trimmed, 1 to 24 characters, no control characters. Returns the name
/// and its key (lower case), by which registered names are unique.
pub fn check_name(raw: &str) -> Result<(String, String), AccountError> {
    let name = raw.trim();
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(AccountError::BadName);
    }
    Ok((name.to_string(), name.to_lowercase()))
}

fn check_password(p: &str) -> Result<(), AccountError> {
    if p.len() < MIN_PASSWORD || p.len() > MAX_PASSWORD {
        return Err(AccountError::BadPassword);
    }
    Ok(())
}

/// argon2id with the crate's defaults (19 MiB, 2 passes), on the blocking pool: a hash takes
/// tens of milliseconds, which must not stall the async workers.
async fn hash_password(password: String) -> Result<String, AccountError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| AccountError::Randomness(e.to_string()))?;
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::encode_b64(&salt).map_err(|e| AccountError::Hash(e.to_string()))?;
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| AccountError::Hash(e.to_string()))
    })
    .await
    .map_err(|e| AccountError::Hash(e.to_string()))?
}

async fn verify_password(password: String, phc: String) -> Result<bool, AccountError> {
    tokio::task::spawn_blocking(move || {
        let parsed = PasswordHash::new(&phc).map_err(|e| AccountError::Hash(e.to_string()))?;
        Ok(Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok())
    })
    .await
    .map_err(|e| AccountError::Hash(e.to_string()))?
}

pub fn account_of(row: &AccountRow) -> Account {
    Account {
        id: row.id,
        name: row.name.clone(),
        kind: if row.registered {
            AccountKind::Registered
        } else {
            AccountKind::Guest
        },
        admin: row.admin,
    }
}

/// A new session: (session row, the secret token to hand out once).
fn new_session(account_id: Uuid) -> Result<(SessionRow, String), AccountError> {
    let token = new_token().map_err(|e| AccountError::Randomness(e.to_string()))?;
    Ok((
        SessionRow {
            id: Uuid::new_v4(),
            account_id,
            token_hash: token_hash(&token),
            created_at: Utc::now(),
        },
        token,
    ))
}

/// What creating an account or logging in gives: the account, the session id, the token.
pub type Issued = (Account, Uuid, String);

/// A guest account with its first session. A guest may not take a registered account's name
/// (so that nobody passes for a registered player); guests' names need not be unique.
pub async fn create_guest(store: &Store, raw_name: &str) -> Result<Issued, AccountError> {
    let (name, key) = check_name(raw_name)?;
    if store.registered_account(&key).await?.is_some() {
        return Err(AccountError::NameTaken(name));
    }
    create(store, name, key, None).await
}

/// A registered account (name + password) with its first session.
pub async fn register(
    store: &Store,
    raw_name: &str,
    password: &str,
) -> Result<Issued, AccountError> {
    let (name, key) = check_name(raw_name)?;
    check_password(password)?;
    if store.registered_account(&key).await?.is_some() {
        return Err(AccountError::NameTaken(name));
    }
    let phc = hash_password(password.to_string()).await?;
    create(store, name, key, Some(phc)).await
}

async fn create(
    store: &Store,
    name: String,
    key: String,
    password_hash: Option<String>,
) -> Result<Issued, AccountError> {
    let row = AccountRow {
        id: Uuid::new_v4(),
        name: name.clone(),
        name_key: key,
        registered: password_hash.is_some(),
        password_hash,
        admin: false,
        created_at: Utc::now(),
    };
    let (session, token) = new_session(row.id)?;
    match store.create_account(&row, &session).await {
        Ok(()) => Ok((account_of(&row), session.id, token)),
        // Two registrations of one name at once: the unique index decides.
        Err(e) if e.is_unique_violation() => Err(AccountError::NameTaken(name)),
        Err(e) => Err(e.into()),
    }
}

/// A hash to verify against when a name is unknown.
static DUMMY: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();

/// Logs in a registered account: a new session.
/// `max_sessions`: the most live sessions an account may hold; one more is refused
/// (`too_many_sessions`) until one is revoked.
pub async fn login(
    store: &Store,
    raw_name: &str,
    password: &str,
    max_sessions: usize,
) -> Result<Issued, AccountError> {
    let key = raw_name.trim().to_lowercase();
    if password.len() > MAX_PASSWORD {
        return Err(AccountError::BadCredentials);
    }
    let Some((row, phc)) = store
        .registered_account(&key)
        .await?
        .and_then(|r| r.password_hash.clone().map(|p| (r, p)))
    else {
        // Hash anyway, so that the answer's timing does not tell which names exist.
        let dummy = DUMMY
            .get_or_try_init(|| hash_password("not a password".into()))
            .await?;
        let _ = verify_password(password.to_string(), dummy.clone()).await;
        return Err(AccountError::BadCredentials);
    };
    if !verify_password(password.to_string(), phc).await? {
        return Err(AccountError::BadCredentials);
    }
    // Told only to whoever knows the password: a suspension is no public fact.
    refuse_if_suspended(store, row.id).await?;
    let (session, token) = new_session(row.id)?;
    match store.create_session(&session, max_sessions).await? {
        NewSession::Opened => {}
        NewSession::Full(live) => return Err(AccountError::TooManySessions(live)),
    }
    // Asked again once the session is stored: a suspension stored before this read is seen
    // here, and one stored after it revokes this session with the others (a suspension is
    // stored before the account's sessions are revoked).
    if let Err(e) = refuse_if_suspended(store, row.id).await {
        store.revoke_sessions(row.id, Some(session.id)).await?;
        return Err(e);
    }
    Ok((account_of(&row), session.id, token))
}

/// `Suspended` when an admin's suspension of the account holds now.
async fn refuse_if_suspended(store: &Store, account: Uuid) -> Result<(), AccountError> {
    match store.standing(account).await?.and_then(|s| s.suspension) {
        Some(s) if s.in_force(Utc::now()) => Err(AccountError::Suspended {
            until: s.until,
            reason: s.reason,
        }),
        _ => Ok(()),
    }
}

/// Checks the password of a registered account (by id): `WrongPassword` when it does not
/// match, `NotRegistered` for a guest.
pub async fn check_password_of(
    store: &Store,
    name_key: &str,
    password: &str,
) -> Result<(), AccountError> {
    let row = store
        .registered_account(name_key)
        .await?
        .ok_or(AccountError::NotRegistered)?;
    let phc = row.password_hash.ok_or(AccountError::NotRegistered)?;
    if password.len() > MAX_PASSWORD || !verify_password(password.to_string(), phc).await? {
        return Err(AccountError::WrongPassword);
    }
    Ok(())
}

/// Changes a registered account's password after checking the old one; every other session of
/// the account is revoked in the same transaction. The revoked sessions' ids (their sockets are
/// the caller's to close).
pub async fn change_password(
    store: &Store,
    account: &Account,
    keep: Uuid,
    old: &str,
    new: &str,
) -> Result<Vec<Uuid>, AccountError> {
    check_password_of(store, &account.name.to_lowercase(), old).await?;
    check_password(new)?;
    let phc = hash_password(new.to_string()).await?;
    Ok(store.set_password(account.id, &phc, Some(keep)).await?)
}

/// How long an admin's password reset link stays valid.
pub const RESET_TTL: chrono::TimeDelta = chrono::TimeDelta::hours(24);

/// A one-time reset link's token for a registered account (stored as its hash) and when it
/// expires; `NotRegistered` for any other account.
pub async fn issue_reset(
    store: &Store,
    account: Uuid,
) -> Result<(String, chrono::DateTime<Utc>), AccountError> {
    let standing = store.standing(account).await?;
    if standing.is_none_or(|s| s.kind != "registered") {
        return Err(AccountError::NotRegistered);
    }
    let token = new_token().map_err(|e| AccountError::Randomness(e.to_string()))?;
    let now = Utc::now();
    let row = crate::store::lifecycle::ResetRow {
        token_hash: token_hash(&token),
        account_id: account,
        created_at: now,
        expires_at: now + RESET_TTL,
    };
    store.create_reset(&row).await?;
    Ok((token, row.expires_at))
}

/// Sets a new password with a reset link's token: single use, before it expires; every session
/// of the account is revoked. The account.
pub async fn redeem_reset(
    store: &Store,
    token: &str,
    password: &str,
) -> Result<Uuid, AccountError> {
    if token.is_empty() || token.len() > MAX_TOKEN {
        return Err(AccountError::BadReset);
    }
    check_password(password)?;
    let phc = hash_password(password.to_string()).await?;
    store
        .redeem_reset(&token_hash(token), &phc, Utc::now())
        .await?
        .ok_or(AccountError::BadReset)
}

/// A WebSocket's account session: the account, the session (whose revocation closes the
/// connection, see [`LiveSessions`]), and the token's hash to check at `take_seat` that the
/// session was not revoked since the upgrade.
#[derive(Debug, Clone)]
pub struct WsSession {
    pub account: Account,
    pub session: Uuid,
    pub token_hash: String,
}

/// The WebSocket connections open with each account session, so that revoking a session closes
/// them (4002): a revoked device keeps neither its seat nor its chat.
#[derive(Debug, Default)]
pub struct LiveSessions {
    /// Account → its connections: (session, connection id, the connection's signal).
    inner: std::sync::Mutex<HashMap<Uuid, Vec<OpenConn>>>,
}

/// A connection of an account: its session, its id, and its signals (a revocation closes it).
type OpenConn = (Uuid, u64, Arc<Signals>);

/// A connection's entry in [`LiveSessions`], removed when dropped (the connection ended).
#[derive(Debug)]
pub struct LiveSession<'a> {
    live: &'a LiveSessions,
    account: Uuid,
    conn: u64,
}

impl LiveSessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Vec<OpenConn>>> {
        // Only pushes and removals happen under it: a panic cannot leave it inconsistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers connection `conn`, opened with `session`: a revocation raises its `signals`.
    pub fn open(&self, session: &WsSession, conn: u64, signals: &Arc<Signals>) -> LiveSession<'_> {
        self.lock().entry(session.account.id).or_default().push((
            session.session,
            conn,
            Arc::clone(signals),
        ));
        LiveSession {
            live: self,
            account: session.account.id,
            conn,
        }
    }

    /// Signals the connections of the account's revoked session (`None`: of all its sessions).
    /// How many were signalled.
    pub fn revoke(&self, account: Uuid, session: Option<Uuid>) -> usize {
        let inner = self.lock();
        let Some(conns) = inner.get(&account) else {
            return 0;
        };
        let mut n = 0;
        for (s, _, signals) in conns {
            if session.is_none_or(|target| target == *s) {
                signals.revoke();
                n += 1;
            }
        }
        n
    }
}

impl Drop for LiveSession<'_> {
    fn drop(&mut self) {
        let mut inner = self.live.lock();
        if let Some(conns) = inner.get_mut(&self.account) {
            conns.retain(|(_, c, _)| *c != self.conn);
            if conns.is_empty() {
                inner.remove(&self.account);
            }
        }
    }
}

/// Whether a session (by its token's hash) still exists.
pub async fn still_valid(store: &Store, token_hash: &str) -> Result<bool, AccountError> {
    Ok(store.session_account(token_hash).await?.is_some())
}

/// The session and account of a token.
pub async fn resolve(store: &Store, token: &str) -> Result<(Uuid, Account), AccountError> {
    if token.is_empty() || token.len() > MAX_TOKEN {
        return Err(AccountError::UnknownSession);
    }
    match store.session_account(&token_hash(token)).await? {
        Some((session, row)) => Ok((session, account_of(&row))),
        None => Err(AccountError::UnknownSession),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Revoking one session signals only its connections; revoking all signals every one of
    /// the account's; a connection that ended is forgotten.
    #[test]
    fn revoking_signals_the_connections_of_the_revoked_sessions() {
        let live = LiveSessions::default();
        let account = Account {
            id: Uuid::new_v4(),
            name: "Ada".into(),
            kind: AccountKind::Registered,
            admin: false,
        };
        let ws = |session| WsSession {
            account: account.clone(),
            session,
            token_hash: String::new(),
        };
        let (s1, s2) = (Uuid::new_v4(), Uuid::new_v4());
        let signals: Vec<Arc<Signals>> = (0..3).map(|_| Arc::default()).collect();
        let a = live.open(&ws(s1), 1, &signals[0]);
        let b = live.open(&ws(s2), 2, &signals[1]);
        assert_eq!(live.revoke(account.id, Some(s2)), 1);
        assert!(signals[1].is_revoked() && !signals[0].is_revoked());
        assert_eq!(live.revoke(Uuid::new_v4(), None), 0, "another account");
        drop(b);
        assert_eq!(live.revoke(account.id, Some(s2)), 0, "an ended connection");
        let c = live.open(&ws(s2), 3, &signals[2]);
        assert_eq!(live.revoke(account.id, None), 2);
        assert!(signals.iter().all(|s| s.is_revoked()));
        drop((a, c));
        assert!(live.lock().is_empty());
    }

    #[test]
    fn names_are_trimmed_bounded_and_free_of_control_characters() {
        assert_eq!(
            check_name("  Ada ").ok(),
            Some(("Ada".to_string(), "ada".to_string()))
        );
        assert!(check_name("   ").is_err());
        assert!(check_name("").is_err());
        assert!(check_name("a\u{7}b").is_err());
        assert!(check_name(&"é".repeat(24)).is_ok());
        assert!(check_name(&"é".repeat(25)).is_err());
    }

    #[tokio::test]
    async fn a_password_hash_is_argon2id_and_verifies_only_its_password() {
        let phc = hash_password("correct horse".into()).await.expect("hash");
        assert!(phc.starts_with("$argon2id$"), "{phc}");
        assert!(
            verify_password("correct horse".into(), phc.clone())
                .await
                .expect("verify")
        );
        assert!(
            !verify_password("wrong horse".into(), phc)
                .await
                .expect("verify")
        );
    }
}
