//! [`Client`]: one account on one server: the REST API for accounts, lobbies and matches, and
//! the WebSocket connections opened with the account's session.

use crate::http::{Call, bad_url};
use crate::{ClientError, Connection, MatchStream, Reconnect, Tls};
use hyper::Method;
use protocol::{
    Account, BotChoice, BotLevel, CreateLobby, CreateMatch, Credentials, ErrorCode, JoinLobby,
    LobbyList, LobbyStarted, LobbyState, LobbyStatus, MatchCreated, NewGuest, PickColour,
    SeatChoice, ServerMessage, SessionCreated, SetReady,
};
use rules::Colour;
use uuid::Uuid;

/// A client of one server, as one account: the base URL (`http://` or `https://`), whom to
/// trust over TLS, and the account's session once logged in.
///
/// Every call is one HTTP request; a refusal is [`ClientError::Api`] with the server's
/// [`ErrorCode`](protocol::ErrorCode) ([`ClientError::code`]). The session token is a secret:
/// it is sent as `Authorization: Bearer …` and never logged.
///
/// ```no_run
/// # async fn f() -> Result<(), carcassonne_client::ClientError> {
/// use carcassonne_client::Client;
/// let mut client = Client::new("https://carcassonne.example.org")?;
/// let me = client.guest("robot").await?;
/// println!("playing as {} ({})", me.name, me.id);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    base: String,
    tls: Tls,
    session: Option<String>,
    reconnect: Reconnect,
}

/// Shows whether there is a session, never the token.
impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base)
            .field("logged_in", &self.session.is_some())
            .field("reconnect", &self.reconnect)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client of the server at `base_url` (`http://host:port` or `https://host`), trusting the
    /// Mozilla roots over TLS, not logged in.
    ///
    /// ```
    /// use carcassonne_client::Client;
    /// let client = Client::new("http://127.0.0.1:8080")?;
    /// assert_eq!(client.ws_url(), "ws://127.0.0.1:8080/ws");
    /// assert!(Client::new("ftp://example.org").is_err());
    /// # Ok::<(), carcassonne_client::ClientError>(())
    /// ```
    pub fn new(base_url: &str) -> Result<Client, ClientError> {
        let base = base_url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(bad_url(base_url, "not an http:// or https:// URL"));
        }
        base.parse::<hyper::Uri>()
            .map_err(|e| bad_url(base_url, e))?;
        Ok(Client {
            base: base.to_owned(),
            tls: Tls::default(),
            session: None,
            reconnect: Reconnect::default(),
        })
    }

    /// Trusts the servers `tls` trusts (for example a private authority: [`Tls::with_ca_pem`]).
    ///
    /// ```
    /// use carcassonne_client::{Client, Tls};
    /// let client = Client::new("https://127.0.0.1:8443")?.with_tls(Tls::default());
    /// # Ok::<(), carcassonne_client::ClientError>(())
    /// ```
    pub fn with_tls(mut self, tls: Tls) -> Client {
        self.tls = tls;
        self
    }

    /// Uses a session token from an earlier log-in (kept by the caller).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), carcassonne_client::ClientError> {
    /// use carcassonne_client::Client;
    /// let token = std::env::var("CARCASSONNE_SESSION").unwrap_or_default();
    /// let client = Client::new("http://127.0.0.1:8080")?.with_session(token);
    /// let me = client.me().await?;
    /// # Ok(()) }
    /// ```
    pub fn with_session(mut self, token: impl Into<String>) -> Client {
        self.session = Some(token.into());
        self
    }

    /// How the [`MatchStream`]s of [`Client::play`] reconnect.
    ///
    /// ```
    /// use carcassonne_client::{Client, Reconnect};
    /// use std::time::Duration;
    /// let patient = Reconnect { max_attempts: 100, max_delay: Duration::from_secs(30), ..Reconnect::default() };
    /// let client = Client::new("http://127.0.0.1:8080")?.with_reconnect(patient);
    /// # Ok::<(), carcassonne_client::ClientError>(())
    /// ```
    pub fn with_reconnect(mut self, reconnect: Reconnect) -> Client {
        self.reconnect = reconnect;
        self
    }

    /// The session token, once logged in (a secret: keep it like a password).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), carcassonne_client::ClientError> {
    /// let mut client = carcassonne_client::Client::new("http://127.0.0.1:8080")?;
    /// client.login("robot-7", "a long password").await?;
    /// let token = client.session().unwrap_or_default().to_owned();
    /// // Next time: Client::new(…)?.with_session(token)
    /// # Ok(()) }
    /// ```
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The base URL, as given.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The server's WebSocket URL: `ws://…/ws`, or `wss://…/ws` for an `https://` base.
    pub fn ws_url(&self) -> String {
        match self.base.strip_prefix("https://") {
            Some(rest) => format!("wss://{rest}/ws"),
            None => format!(
                "ws://{}/ws",
                self.base.strip_prefix("http://").unwrap_or(&self.base)
            ),
        }
    }

    fn call(&self) -> Call<'_> {
        Call {
            base: &self.base,
            tls: &self.tls,
            bearer: self.session.as_deref(),
        }
    }

    async fn signed_in(
        &mut self,
        path: &str,
        body: &(impl serde::Serialize + ?Sized),
    ) -> Result<Account, ClientError> {
        let created: SessionCreated = self.call().json(Method::POST, path, Some(body)).await?;
        self.session = Some(created.token);
        Ok(created.account)
    }

    /// Creates a guest account named `name` (a display name; any number of guests may share
    /// it) and keeps its session.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), carcassonne_client::ClientError> {
    /// let mut client = carcassonne_client::Client::new("http://127.0.0.1:8080")?;
    /// let me = client.guest("robot").await?;
    /// assert_eq!(me.kind, carcassonne_client::protocol::AccountKind::Guest);
    /// # Ok(()) }
    /// ```
    pub async fn guest(&mut self, name: &str) -> Result<Account, ClientError> {
        let body = NewGuest {
            name: name.to_owned(),
        };
        self.signed_in("/api/accounts/guest", &body).await
    }

    /// Registers the account `name` (unique, without regard to case) with `password` (8 to 256
    /// bytes) and keeps its session. A taken name is `name_taken`.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), carcassonne_client::ClientError> {
    /// let mut client = carcassonne_client::Client::new("http://127.0.0.1:8080")?;
    /// let me = client.register("robot-7", "a long password").await?;
    /// # Ok(()) }
    /// ```
    pub async fn register(&mut self, name: &str, password: &str) -> Result<Account, ClientError> {
        let body = Credentials {
            name: name.to_owned(),
            password: password.to_owned(),
        };
        self.signed_in("/api/accounts", &body).await
    }

    /// Logs a registered account in: a new session, kept. A wrong name or password is
    /// `bad_credentials`.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), carcassonne_client::ClientError> {
    /// let mut client = carcassonne_client::Client::new("http://127.0.0.1:8080")?;
    /// let me = client.login("robot-7", "a long password").await?;
    /// # Ok(()) }
    /// ```
    pub async fn login(&mut self, name: &str, password: &str) -> Result<Account, ClientError> {
        let body = Credentials {
            name: name.to_owned(),
            password: password.to_owned(),
        };
        self.signed_in("/api/sessions", &body).await
    }

    /// Ends this session on the server and forgets it (connections opened with it are closed
    /// by the server with 4002).
    ///
    /// ```no_run
    /// # async fn f(mut client: carcassonne_client::Client) -> Result<(), carcassonne_client::ClientError> {
    /// client.logout().await?;
    /// assert!(client.session().is_none());
    /// # Ok(()) }
    /// ```
    pub async fn logout(&mut self) -> Result<(), ClientError> {
        self.call()
            .call(Method::DELETE, "/api/sessions/current", None::<&()>)
            .await?;
        self.session = None;
        Ok(())
    }

    /// The session's account.
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client) -> Result<(), carcassonne_client::ClientError> {
    /// let me = client.me().await?;
    /// println!("{} ({:?})", me.name, me.kind);
    /// # Ok(()) }
    /// ```
    pub async fn me(&self) -> Result<Account, ClientError> {
        self.call().json(Method::GET, "/api/me", None::<&()>).await
    }

    /// The open public lobbies with at least `free_seats` free seats (`0`: all), and the running
    /// public matches to watch.
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client) -> Result<(), carcassonne_client::ClientError> {
    /// let open = client.lobbies(1).await?;
    /// for lobby in &open.lobbies {
    ///     println!("{} {}: {} seats", lobby.id, lobby.name, lobby.seats.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn lobbies(&self, free_seats: u8) -> Result<LobbyList, ClientError> {
        let path = if free_seats == 0 {
            "/api/lobbies".to_owned()
        } else {
            format!("/api/lobbies?free_seats={free_seats}")
        };
        self.call().json(Method::GET, &path, None::<&()>).await
    }

    /// One lobby (a private one needs membership or its invite code).
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// let lobby = client.lobby(id, None).await?;
    /// println!("{:?}, match {:?}", lobby.status, lobby.match_id);
    /// # Ok(()) }
    /// ```
    pub async fn lobby(
        &self,
        id: Uuid,
        invite_code: Option<&str>,
    ) -> Result<LobbyState, ClientError> {
        let path = match invite_code {
            Some(code) => format!("/api/lobbies/{id}?invite_code={}", query_value(code)),
            None => format!("/api/lobbies/{id}"),
        };
        self.call().json(Method::GET, &path, None::<&()>).await
    }

    /// Creates a lobby; this account is its host, on seat 0.
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client) -> Result<(), carcassonne_client::ClientError> {
    /// use carcassonne_client::protocol::CreateLobby;
    /// let lobby = client
    ///     .create_lobby(&CreateLobby {
    ///         name: "bots welcome".into(),
    ///         seats: 2,
    ///         modules: Default::default(),
    ///         meeples: None,
    ///         clock: None,
    ///         public: true,
    ///         rated: false,
    ///     })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn create_lobby(&self, request: &CreateLobby) -> Result<LobbyState, ClientError> {
        self.call()
            .json(Method::POST, "/api/lobbies", Some(request))
            .await
    }

    /// Sits down in lobby `id` (`JoinLobby::default()`: the first free seat and colour).
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// let lobby = client.join_lobby(id, &Default::default()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn join_lobby(
        &self,
        id: Uuid,
        request: &JoinLobby,
    ) -> Result<LobbyState, ClientError> {
        self.lobby_action(id, "join", request).await
    }

    /// Stands up; `None` when that closed the lobby (this account was its last player).
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// let left = client.leave_lobby(id).await?;
    /// # Ok(()) }
    /// ```
    pub async fn leave_lobby(&self, id: Uuid) -> Result<Option<LobbyState>, ClientError> {
        let path = format!("/api/lobbies/{id}/leave");
        let bytes = self.call().call(Method::POST, &path, None::<&()>).await?;
        if bytes.is_empty() {
            return Ok(None);
        }
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|source| ClientError::Decode {
                text: String::from_utf8_lossy(&bytes).into_owned(),
                source,
            })
    }

    /// Marks this account ready (or not) in lobby `id`.
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// client.set_ready(id, true).await?;
    /// # Ok(()) }
    /// ```
    pub async fn set_ready(&self, id: Uuid, ready: bool) -> Result<LobbyState, ClientError> {
        self.lobby_action(id, "ready", &SetReady { ready }).await
    }

    /// Picks a free colour in lobby `id`.
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// client.pick_colour(id, carcassonne_client::rules::Colour::Green).await?;
    /// # Ok(()) }
    /// ```
    pub async fn pick_colour(&self, id: Uuid, colour: Colour) -> Result<LobbyState, ClientError> {
        self.lobby_action(id, "colour", &PickColour { colour })
            .await
    }

    /// Host only: a bot played by the server takes the free `seat`, at `level`.
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// use carcassonne_client::protocol::BotLevel;
    /// client.add_bot(id, 1, BotLevel::Medium).await?;
    /// # Ok(()) }
    /// ```
    pub async fn add_bot(
        &self,
        id: Uuid,
        seat: u8,
        level: BotLevel,
    ) -> Result<LobbyState, ClientError> {
        self.lobby_action(id, "bot", &BotChoice { seat, level })
            .await
    }

    /// Host only: empties `seat` (a player or a bot).
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// client.kick(id, 1).await?;
    /// # Ok(()) }
    /// ```
    pub async fn kick(&self, id: Uuid, seat: u8) -> Result<LobbyState, ClientError> {
        self.lobby_action(id, "kick", &SeatChoice { seat }).await
    }

    /// Host only, every seat taken and ready: starts the lobby's match (its seats are bound to
    /// the players' accounts; [`Client::play`] takes this account's).
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// let started = client.start(id).await?;
    /// let game = client.play(started.match_id).await?;
    /// # Ok(()) }
    /// ```
    pub async fn start(&self, id: Uuid) -> Result<LobbyStarted, ClientError> {
        let path = format!("/api/lobbies/{id}/start");
        self.call().json(Method::POST, &path, None::<&()>).await
    }

    async fn lobby_action(
        &self,
        id: Uuid,
        action: &str,
        body: &(impl serde::Serialize + ?Sized),
    ) -> Result<LobbyState, ClientError> {
        let path = format!("/api/lobbies/{id}/{action}");
        self.call().json(Method::POST, &path, Some(body)).await
    }

    /// Waits until lobby `id` starts (the host starts it) and returns its match id: follows the
    /// lobby over a WebSocket of this session (a lobby that started already is read once). A
    /// lobby that closes first is [`ClientError::Unexpected`].
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// client.set_ready(id, true).await?;
    /// let match_id = client.wait_for_start(id).await?;
    /// let game = client.play(match_id).await?;
    /// # Ok(()) }
    /// ```
    pub async fn wait_for_start(&self, id: Uuid) -> Result<Uuid, ClientError> {
        let mut conn = self.connect().await?;
        conn.subscribe_lobby(id).await?;
        loop {
            match conn.next_message().await? {
                Some(ServerMessage::Lobby { lobby }) if lobby.id == id => {
                    if let (LobbyStatus::Started, Some(match_id)) = (lobby.status, lobby.match_id) {
                        let _ = conn.close().await;
                        return Ok(match_id);
                    }
                }
                Some(ServerMessage::LobbyClosed { lobby_id }) if lobby_id == id => {
                    return Err(ClientError::Unexpected {
                        expected: "the lobby's start",
                        got: "lobby_closed".into(),
                    });
                }
                // Started before the subscription: the lobby says which match.
                Some(ServerMessage::Error(error)) if error.code == ErrorCode::LobbyStarted => {
                    let _ = conn.close().await;
                    return self
                        .lobby(id, None)
                        .await?
                        .match_id
                        .ok_or(ClientError::Unexpected {
                            expected: "the started lobby's match",
                            got: "none".into(),
                        });
                }
                Some(ServerMessage::Error(error)) => return Err(ClientError::Refused(error)),
                Some(_) => {}
                None => return Err(ClientError::Closed(conn.close_frame().cloned())),
            }
        }
    }

    /// Creates a match with seat tokens (`POST /api/matches`: tests and bot matches; lobby
    /// matches come from [`Client::start`]).
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client) -> Result<(), carcassonne_client::ClientError> {
    /// use carcassonne_client::{protocol::CreateMatch, rules::Colour};
    /// let created = client
    ///     .create_match(&CreateMatch {
    ///         players: vec![Colour::Red, Colour::Blue],
    ///         modules: Default::default(),
    ///         meeples: None,
    ///         draw_order: None,
    ///         clock: None,
    ///     })
    ///     .await?;
    /// let red = client.play_with_token(created.match_id, &created.seats[0].token).await?;
    /// # Ok(()) }
    /// ```
    pub async fn create_match(&self, request: &CreateMatch) -> Result<MatchCreated, ClientError> {
        self.call()
            .json(Method::POST, "/api/matches", Some(request))
            .await
    }

    /// A WebSocket connection to this server, with the session if logged in (the server then
    /// sends `identified` after the `welcome`).
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client) -> Result<(), carcassonne_client::ClientError> {
    /// let conn = client.connect().await?;
    /// println!("server {}", conn.welcome().server_version);
    /// # Ok(()) }
    /// ```
    pub async fn connect(&self) -> Result<Connection, ClientError> {
        let bearer = self.session.as_ref().map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = bearer
            .as_deref()
            .map(|b| ("Authorization", b))
            .into_iter()
            .collect();
        Connection::connect_tls(&self.ws_url(), &self.tls, &headers).await
    }

    /// Plays this account's seat in `match_id` (a lobby match): a [`MatchStream`] that took the
    /// seat and follows the match, reconnecting as [`Client::with_reconnect`] says.
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, match_id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// let mut game = client.play(match_id).await?;
    /// while let Some(event) = game.next().await? {
    ///     println!("{event:?}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn play(&self, match_id: Uuid) -> Result<MatchStream, ClientError> {
        let session = self
            .session
            .clone()
            .ok_or_else(|| ClientError::Unexpected {
                expected: "a session (log in first)",
                got: "none".into(),
            })?;
        MatchStream::open(self.target(match_id, crate::SeatClaim::Account(session))).await
    }

    /// Plays the seat of a seat token (a match from [`Client::create_match`]).
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, match_id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// let mut game = client.play_with_token(match_id, "the seat's token").await?;
    /// # Ok(()) }
    /// ```
    pub async fn play_with_token(
        &self,
        match_id: Uuid,
        token: &str,
    ) -> Result<MatchStream, ClientError> {
        MatchStream::open(self.target(match_id, crate::SeatClaim::Token(token.to_owned()))).await
    }

    /// Follows `match_id` without a seat (with the session if logged in): a spectator's stream.
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, match_id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// let mut rail = client.watch(match_id).await?;
    /// # Ok(()) }
    /// ```
    pub async fn watch(&self, match_id: Uuid) -> Result<MatchStream, ClientError> {
        let claim = crate::SeatClaim::Watch {
            session: self.session.clone(),
            invite_code: None,
        };
        MatchStream::open(self.target(match_id, claim)).await
    }

    /// Like [`Client::watch`], for the match of a private lobby: with its invite code (a plain
    /// watch is refused with `invite_required`).
    ///
    /// ```no_run
    /// # async fn f(client: carcassonne_client::Client, match_id: uuid::Uuid) -> Result<(), carcassonne_client::ClientError> {
    /// let mut rail = client.watch_private(match_id, "the lobby's invite code").await?;
    /// # Ok(()) }
    /// ```
    pub async fn watch_private(
        &self,
        match_id: Uuid,
        invite_code: &str,
    ) -> Result<MatchStream, ClientError> {
        let claim = crate::SeatClaim::Watch {
            session: self.session.clone(),
            invite_code: Some(invite_code.to_owned()),
        };
        MatchStream::open(self.target(match_id, claim)).await
    }

    fn target(&self, match_id: Uuid, claim: crate::SeatClaim) -> crate::Target {
        crate::Target {
            ws_url: self.ws_url(),
            tls: self.tls.clone(),
            match_id,
            claim,
            reconnect: self.reconnect.clone(),
        }
    }
}

/// `value` percent-encoded for a query string (every byte but the unreserved ones).
fn query_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_query_value_is_percent_encoded() {
        assert_eq!(super::query_value("Ab-1_.~"), "Ab-1_.~");
        assert_eq!(super::query_value("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
    }
}
