//! What a lobby action does to a [`LobbyState`]: plain functions, no I/O, so that every option
//! and every refusal is unit-tested. The lobby actor calls them on a copy, stores the result,
//! and only then makes it the lobby's state and pushes it.

use protocol::{
    Account, CreateLobby, ErrorCode, JoinLobby, LobbySeat, LobbyState, LobbyStatus, Occupant,
};
use rules::Colour;
use uuid::Uuid;

/// Longest lobby name, in characters, after trimming.
pub const MAX_LOBBY_NAME: usize = 48;
pub const MIN_SEATS: u8 = 2;
pub const MAX_SEATS: u8 = 6;
pub const MAX_MEEPLES: u8 = 12;

/// A refusal: the protocol's code and a message for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LobbyError {
    pub code: ErrorCode,
    pub message: String,
}

pub fn refuse(code: ErrorCode, message: impl Into<String>) -> LobbyError {
    LobbyError {
        code,
        message: message.into(),
    }
}

fn bad(message: impl Into<String>) -> LobbyError {
    refuse(ErrorCode::BadOption, message)
}

/// A lobby action by an account (also sent to the node deciding for the lobby).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Join(JoinLobby),
    Leave,
    Colour(Colour),
    Ready(bool),
    Kick(u8),
    Bot(u8, protocol::BotLevel),
}

/// What an action left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum After {
    Open(LobbyState),
    /// The last player left: the lobby closes.
    Closed,
}

/// A new lobby with the host on seat 0 in the first colour; `invite_code` for private lobbies.
pub fn create(
    host: &Account,
    req: &CreateLobby,
    invite_code: Option<String>,
) -> Result<LobbyState, LobbyError> {
    let name = req.name.trim();
    let n = name.chars().count();
    if n == 0 || n > MAX_LOBBY_NAME || name.chars().any(char::is_control) {
        return Err(bad(format!(
            "a lobby name has 1 to {MAX_LOBBY_NAME} characters and no control characters"
        )));
    }
    if !(MIN_SEATS..=MAX_SEATS).contains(&req.seats) {
        return Err(bad(format!(
            "a lobby has {MIN_SEATS} to {MAX_SEATS} seats, not {}",
            req.seats
        )));
    }
    if let Some(m) = req.meeples
        && !(1..=MAX_MEEPLES).contains(&m)
    {
        return Err(bad(format!("meeples: 1 to {MAX_MEEPLES}, not {m}")));
    }
    if req.modules.chips && !req.modules.france {
        return Err(bad("the France chips need the France map (`france`)"));
    }
    // The same bounds as a match's clock: the lobby's becomes its match's.
    if let Some(clock) = &req.clock {
        clock.validate().map_err(bad)?;
    }
    if req.rated && !req.public {
        return Err(bad(
            "a rated lobby is public: its result goes on the leaderboard and its replay is open",
        ));
    }
    if req.rated {
        registered_for_rated(host)?;
    }
    let mut seats: Vec<LobbySeat> = (0..req.seats)
        .map(|seat| LobbySeat {
            seat,
            occupant: None,
            colour: None,
            ready: false,
        })
        .collect();
    seats[0].occupant = Some(player(host));
    seats[0].colour = Some(Colour::ALL[0]);
    Ok(LobbyState {
        id: Uuid::new_v4(),
        name: name.to_string(),
        host: Some(host.id),
        public: req.public,
        invite_code: if req.public { None } else { invite_code },
        modules: req.modules,
        meeples: req.meeples,
        clock: req.clock,
        rated: req.rated,
        seats,
        status: LobbyStatus::Open,
        match_id: None,
        version: 1,
    })
}

/// Only registered accounts play rated matches: a guest's rating would belong to no one.
fn registered_for_rated(a: &Account) -> Result<(), LobbyError> {
    match a.kind {
        protocol::AccountKind::Registered => Ok(()),
        protocol::AccountKind::Guest => Err(bad(
            "a rated lobby seats registered accounts only: sign up to play rated matches",
        )),
    }
}

fn player(a: &Account) -> Occupant {
    Occupant::Player {
        account_id: a.id,
        name: a.name.clone(),
    }
}

/// The seat of an account in a lobby.
pub fn seat_of(l: &LobbyState, account: Uuid) -> Option<usize> {
    l.seats.iter().position(
        |s| matches!(&s.occupant, Some(Occupant::Player { account_id, .. }) if *account_id == account),
    )
}

/// Whether an invite code opens a private lobby (codes compare without case or spaces).
pub fn code_matches(l: &LobbyState, given: Option<&str>) -> bool {
    match (&l.invite_code, given) {
        (None, _) => true,
        (Some(code), Some(g)) => code.eq_ignore_ascii_case(g.trim()),
        (Some(_), None) => false,
    }
}

/// Whether `viewer` may see the lobby: public, a member, or holding the code.
pub fn may_see(l: &LobbyState, viewer: Option<Uuid>, code: Option<&str>) -> bool {
    l.public || viewer.is_some_and(|v| seat_of(l, v).is_some()) || code_matches(l, code)
}

/// The lobby as `viewer` is shown it: the invite code only to its members (the host is one);
/// anyone else, even one who gave the code, gets the lobby without it.
pub fn seen_by(l: &LobbyState, viewer: Option<Uuid>) -> LobbyState {
    let mut seen = l.clone();
    let member = viewer.is_some_and(|v| seat_of(l, v).is_some() || l.host == Some(v));
    if !member {
        seen.invite_code = None;
    }
    seen
}

fn first_free_colour(l: &LobbyState) -> Option<Colour> {
    Colour::ALL
        .into_iter()
        .find(|c| l.seats.iter().all(|s| s.colour != Some(*c)))
}

fn colour_taken(l: &LobbyState, c: Colour, except: usize) -> bool {
    l.seats
        .iter()
        .enumerate()
        .any(|(i, s)| i != except && s.colour == Some(c))
}

fn host_only(l: &LobbyState, by: &Account) -> Result<(), LobbyError> {
    if l.host != Some(by.id) {
        return Err(refuse(
            ErrorCode::NotHost,
            "only the lobby's host may do this",
        ));
    }
    Ok(())
}

fn member(l: &LobbyState, by: &Account) -> Result<usize, LobbyError> {
    seat_of(l, by.id).ok_or_else(|| refuse(ErrorCode::NotInLobby, "you have no seat in this lobby"))
}

fn seat_index(l: &LobbyState, seat: u8) -> Result<usize, LobbyError> {
    let i = usize::from(seat);
    if i >= l.seats.len() {
        return Err(refuse(
            ErrorCode::SeatTaken,
            format!("this lobby has seats 0 to {}", l.seats.len() - 1),
        ));
    }
    Ok(i)
}

fn clear(seat: &mut LobbySeat) {
    seat.occupant = None;
    seat.colour = None;
    seat.ready = false;
}

/// Applies an action; the state's version goes up when anything changed.
pub fn apply(mut l: LobbyState, by: &Account, action: Action) -> Result<After, LobbyError> {
    if l.status != LobbyStatus::Open {
        return Err(refuse(
            ErrorCode::LobbyStarted,
            "the lobby's match has started",
        ));
    }
    match action {
        Action::Join(req) => {
            if seat_of(&l, by.id).is_some() {
                return Err(refuse(
                    ErrorCode::AlreadyInLobby,
                    "you already have a seat in this lobby",
                ));
            }
            if l.rated {
                registered_for_rated(by)?;
            }
            if !code_matches(&l, req.invite_code.as_deref()) {
                return Err(refuse(
                    ErrorCode::InviteRequired,
                    "this lobby is private: join it with its invite code",
                ));
            }
            let i = match req.seat {
                Some(seat) => {
                    let i = seat_index(&l, seat)?;
                    if l.seats[i].occupant.is_some() {
                        return Err(refuse(
                            ErrorCode::SeatTaken,
                            format!("seat {seat} is taken"),
                        ));
                    }
                    i
                }
                None => l
                    .seats
                    .iter()
                    .position(|s| s.occupant.is_none())
                    .ok_or_else(|| refuse(ErrorCode::SeatTaken, "the lobby is full"))?,
            };
            let colour = match req.colour {
                Some(c) if colour_taken(&l, c, i) => {
                    return Err(refuse(
                        ErrorCode::ColourTaken,
                        "another seat has this colour",
                    ));
                }
                Some(c) => c,
                None => first_free_colour(&l)
                    .ok_or_else(|| refuse(ErrorCode::ColourTaken, "no colour is free"))?,
            };
            l.seats[i].occupant = Some(player(by));
            l.seats[i].colour = Some(colour);
            l.seats[i].ready = false;
        }
        Action::Leave => {
            let i = member(&l, by)?;
            clear(&mut l.seats[i]);
            if l.host == Some(by.id) {
                // The host role passes to the next player in seat order after the host.
                let n = l.seats.len();
                l.host = (1..n).find_map(|k| match &l.seats[(i + k) % n].occupant {
                    Some(Occupant::Player { account_id, .. }) => Some(*account_id),
                    _ => None,
                });
            }
            if l.host.is_none() {
                return Ok(After::Closed);
            }
        }
        Action::Colour(c) => {
            let i = member(&l, by)?;
            if colour_taken(&l, c, i) {
                return Err(refuse(
                    ErrorCode::ColourTaken,
                    "another seat has this colour",
                ));
            }
            l.seats[i].colour = Some(c);
        }
        Action::Ready(r) => {
            let i = member(&l, by)?;
            l.seats[i].ready = r;
        }
        Action::Kick(seat) => {
            host_only(&l, by)?;
            let i = seat_index(&l, seat)?;
            match &l.seats[i].occupant {
                None => return Err(bad(format!("no one sits on seat {seat}"))),
                Some(Occupant::Player { account_id, .. }) if *account_id == by.id => {
                    return Err(bad("the host leaves rather than kicks themself"));
                }
                Some(_) => clear(&mut l.seats[i]),
            }
        }
        Action::Bot(seat, level) => {
            host_only(&l, by)?;
            if l.rated {
                return Err(bad("a rated lobby has no bots: only people are rated"));
            }
            let i = seat_index(&l, seat)?;
            if l.seats[i].occupant.is_some() {
                return Err(refuse(
                    ErrorCode::SeatTaken,
                    format!("seat {seat} is taken"),
                ));
            }
            let colour = first_free_colour(&l)
                .ok_or_else(|| refuse(ErrorCode::ColourTaken, "no colour is free"))?;
            l.seats[i] = LobbySeat {
                seat,
                occupant: Some(Occupant::Bot { level }),
                colour: Some(colour),
                ready: true,
            };
        }
    }
    l.version += 1;
    Ok(After::Open(l))
}

/// Checks that the host may start now: every seat filled, ready and coloured. Gives the colours
/// in seat order.
pub fn check_start(l: &LobbyState, by: &Account) -> Result<Vec<Colour>, LobbyError> {
    if l.status != LobbyStatus::Open {
        return Err(refuse(
            ErrorCode::LobbyStarted,
            "the lobby's match has started",
        ));
    }
    host_only(l, by)?;
    let mut colours = Vec::new();
    for s in &l.seats {
        match (&s.occupant, s.colour) {
            (None, _) => {
                return Err(refuse(
                    ErrorCode::NotReady,
                    format!("seat {} is free", s.seat),
                ));
            }
            (Some(_), _) if !s.ready => {
                return Err(refuse(
                    ErrorCode::NotReady,
                    format!("seat {} is not ready", s.seat),
                ));
            }
            (Some(_), Some(c)) => colours.push(c),
            (Some(_), None) => {
                return Err(refuse(
                    ErrorCode::NotReady,
                    format!("seat {} has no colour", s.seat),
                ));
            }
        }
    }
    if colours.len() < usize::from(MIN_SEATS) {
        return Err(refuse(
            ErrorCode::NotReady,
            "a match needs at least 2 players",
        ));
    }
    Ok(colours)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{AccountKind, ClockSettings, LobbyModules};

    fn account(name: &str) -> Account {
        Account {
            id: Uuid::new_v4(),
            name: name.into(),
            kind: AccountKind::Guest,
            admin: false,
        }
    }

    fn req(seats: u8) -> CreateLobby {
        CreateLobby {
            name: "Friday".into(),
            seats,
            modules: LobbyModules::default(),
            meeples: None,
            clock: None,
            public: true,
            rated: false,
        }
    }

    fn open(a: After) -> LobbyState {
        match a {
            After::Open(l) => l,
            After::Closed => panic!("closed"),
        }
    }

    fn code(r: Result<After, LobbyError>) -> ErrorCode {
        match r {
            Err(e) => e.code,
            Ok(a) => panic!("accepted: {a:?}"),
        }
    }

    #[test]
    fn options_are_validated() {
        let a = account("a");
        let bad_opt = |r: CreateLobby| create(&a, &r, None).map_err(|e| e.code);
        assert_eq!(bad_opt(req(1)).err(), Some(ErrorCode::BadOption));
        assert_eq!(bad_opt(req(7)).err(), Some(ErrorCode::BadOption));
        assert_eq!(
            bad_opt(CreateLobby {
                name: " ".into(),
                ..req(2)
            })
            .err(),
            Some(ErrorCode::BadOption)
        );
        assert_eq!(
            bad_opt(CreateLobby {
                meeples: Some(0),
                ..req(2)
            })
            .err(),
            Some(ErrorCode::BadOption)
        );
        let chips_alone = LobbyModules {
            chips: true,
            ..LobbyModules::default()
        };
        assert_eq!(
            bad_opt(CreateLobby {
                modules: chips_alone,
                ..req(2)
            })
            .err(),
            Some(ErrorCode::BadOption)
        );
        let clock = |bank_secs: u64, increment_secs: u64| CreateLobby {
            clock: Some(ClockSettings {
                bank_ms: bank_secs * 1000,
                increment_ms: increment_secs * 1000,
            }),
            ..req(2)
        };
        assert_eq!(bad_opt(clock(5, 0)).err(), Some(ErrorCode::BadOption));
        assert_eq!(
            bad_opt(clock(300, 8 * 86_400)).err(),
            Some(ErrorCode::BadOption)
        );
        assert!(bad_opt(clock(300, 20)).is_ok());
    }

    #[test]
    fn seats_colours_ready_kick_bots_and_start() {
        let (h, b, c) = (account("h"), account("b"), account("c"));
        let l = create(&h, &req(3), None).expect("create");
        assert_eq!(l.host, Some(h.id));
        let l = open(apply(l, &b, Action::Join(JoinLobby::default())).expect("join"));
        assert_eq!(l.seats[1].colour, Some(Colour::Green));
        assert_eq!(
            code(apply(l.clone(), &b, Action::Join(JoinLobby::default()))),
            ErrorCode::AlreadyInLobby
        );
        assert_eq!(
            code(apply(l.clone(), &b, Action::Colour(Colour::Red))),
            ErrorCode::ColourTaken
        );
        assert_eq!(
            code(apply(l.clone(), &b, Action::Kick(0))),
            ErrorCode::NotHost
        );
        assert_eq!(
            code(apply(l.clone(), &c, Action::Ready(true))),
            ErrorCode::NotInLobby
        );
        let taken = JoinLobby {
            seat: Some(1),
            ..JoinLobby::default()
        };
        assert_eq!(
            code(apply(l.clone(), &c, Action::Join(taken))),
            ErrorCode::SeatTaken
        );
        assert_eq!(
            check_start(&l, &h).err().map(|e| e.code),
            Some(ErrorCode::NotReady)
        );
        let l = open(apply(l, &h, Action::Bot(2, protocol::BotLevel::Easy)).expect("bot"));
        let l = open(apply(l, &h, Action::Ready(true)).expect("ready"));
        assert_eq!(
            check_start(&l, &h).err().map(|e| e.code),
            Some(ErrorCode::NotReady)
        );
        let l = open(apply(l, &b, Action::Ready(true)).expect("ready"));
        assert_eq!(
            check_start(&l, &b).err().map(|e| e.code),
            Some(ErrorCode::NotHost)
        );
        assert_eq!(
            check_start(&l, &h).expect("start"),
            vec![Colour::Red, Colour::Green, Colour::Blue]
        );
        let l = open(apply(l, &h, Action::Kick(1)).expect("kick"));
        assert!(l.seats[1].occupant.is_none());
    }

    #[test]
    fn the_host_role_passes_on_and_an_empty_lobby_closes() {
        let (h, b) = (account("h"), account("b"));
        let l = create(&h, &req(3), None).expect("create");
        let l = open(apply(l, &h, Action::Bot(1, protocol::BotLevel::Easy)).expect("bot"));
        let l = open(apply(l, &b, Action::Join(JoinLobby::default())).expect("join"));
        let l = open(apply(l, &h, Action::Leave).expect("leave"));
        assert_eq!(l.host, Some(b.id));
        // Bots alone do not keep a lobby open.
        assert_eq!(apply(l, &b, Action::Leave), Ok(After::Closed));
    }

    #[test]
    fn a_private_lobby_needs_its_code() {
        let (h, b) = (account("h"), account("b"));
        let private = CreateLobby {
            public: false,
            ..req(2)
        };
        let l = create(&h, &private, Some("ABCD2345".into())).expect("create");
        assert!(!may_see(&l, Some(b.id), None));
        assert_eq!(
            code(apply(l.clone(), &b, Action::Join(JoinLobby::default()))),
            ErrorCode::InviteRequired
        );
        let with_code = JoinLobby {
            invite_code: Some("abcd2345".into()),
            ..JoinLobby::default()
        };
        let l = open(apply(l, &b, Action::Join(with_code)).expect("join"));
        assert!(may_see(&l, Some(b.id), None));
    }

    /// The invite code is shown to the lobby's members only: not to one who holds the code but
    /// no seat, nor to nobody in particular, nor to one who left.
    #[test]
    fn only_members_see_the_invite_code() {
        let (h, b, c) = (account("h"), account("b"), account("c"));
        let private = CreateLobby {
            public: false,
            ..req(3)
        };
        let l = create(&h, &private, Some("ABCD2345".into())).expect("create");
        let with_code = JoinLobby {
            invite_code: Some("ABCD2345".into()),
            ..JoinLobby::default()
        };
        let l = open(apply(l, &b, Action::Join(with_code)).expect("join"));
        let shown = |who: Option<Uuid>| seen_by(&l, who).invite_code;
        assert_eq!(shown(Some(h.id)).as_deref(), Some("ABCD2345"), "the host");
        assert_eq!(shown(Some(b.id)).as_deref(), Some("ABCD2345"), "a member");
        assert_eq!(shown(Some(c.id)), None, "a non-member");
        assert_eq!(shown(None), None, "an anonymous reader");
        let l = open(apply(l, &b, Action::Leave).expect("leave"));
        assert_eq!(seen_by(&l, Some(b.id)).invite_code, None, "one who left");
    }

    #[test]
    fn a_rated_lobby_is_public_and_seats_registered_people_only() {
        let registered = |name: &str| Account {
            kind: AccountKind::Registered,
            ..account(name)
        };
        let (h, b, g) = (registered("h"), registered("b"), account("g"));
        let rated = CreateLobby {
            rated: true,
            ..req(3)
        };
        let bad_opt = |r: Result<LobbyState, LobbyError>| r.err().map(|e| e.code);
        assert_eq!(
            bad_opt(create(&g, &rated, None)),
            Some(ErrorCode::BadOption),
            "a guest hosts no rated lobby"
        );
        let private = CreateLobby {
            public: false,
            ..rated.clone()
        };
        assert_eq!(
            bad_opt(create(&h, &private, Some("code".into()))),
            Some(ErrorCode::BadOption)
        );
        let l = create(&h, &rated, None).expect("a rated lobby");
        assert!(l.rated);
        assert_eq!(
            code(apply(l.clone(), &g, Action::Join(JoinLobby::default()))),
            ErrorCode::BadOption,
            "a guest joins no rated lobby"
        );
        assert_eq!(
            code(apply(
                l.clone(),
                &h,
                Action::Bot(2, protocol::BotLevel::Easy)
            )),
            ErrorCode::BadOption,
            "a rated lobby has no bots"
        );
        let l = open(apply(l, &b, Action::Join(JoinLobby::default())).expect("join"));
        assert!(seat_of(&l, b.id).is_some());
    }
}
