//! The accounts API's bodies: accounts, guest and registered, credentials and sessions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// An account: a guest (a display name only) or registered (name and password).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Account {
    pub id: Uuid,
    pub name: String,
    pub kind: AccountKind,
    pub admin: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AccountKind {
    Guest,
    Registered,
}

/// `POST /api/accounts/guest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewGuest {
    pub name: String,
}

/// `POST /api/accounts` (register) and `POST /api/sessions` (log in).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    pub name: String,
    pub password: String,
}

/// A new session: the account and its secret token (also set as the `session` cookie). The
/// server keeps only the token's hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionCreated {
    pub account: Account,
    pub session_id: Uuid,
    pub token: String,
}

/// One of the caller's sessions (`GET /api/sessions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionInfo {
    pub id: Uuid,
    /// RFC 3339.
    pub created_at: String,
    /// The session of this request.
    pub current: bool,
}
