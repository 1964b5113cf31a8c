//! The REST helpers of [`Client`] against a real server: accounts (sign up, log in and out,
//! `me`) with the server's typed refusals, and a lobby from creation to a match that two
//! accounts play to the end over their sessions.

mod common;

use carcassonne_client::{Client, ClientError, MatchEvent};
use common::{TestServer, consecutive, play_random};
use protocol::{AccountKind, BotLevel, CreateLobby, ErrorCode, JoinLobby, LobbyStatus, Occupant};

fn lobby(name: &str, seats: u8) -> CreateLobby {
    CreateLobby {
        name: name.to_owned(),
        seats,
        modules: Default::default(),
        meeples: None,
        clock: None,
        public: true,
        rated: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_sign_up_log_in_and_out_with_typed_refusals() -> Result<(), ClientError> {
    let server = TestServer::start();
    let mut ann = Client::new(&server.http())?;
    let err = ann.me().await.err();
    assert_eq!(
        err.as_ref().and_then(ClientError::code),
        Some(ErrorCode::Unauthenticated)
    );
    assert_eq!(err.as_ref().and_then(ClientError::http_status), Some(401));

    let registered = ann.register("ann", "a long password").await?;
    assert_eq!(registered.kind, AccountKind::Registered);
    assert_eq!(ann.me().await?, registered);
    let token = ann.session().expect("a session").to_owned();
    assert!(
        !format!("{ann:?}").contains(&token),
        "Debug shows no secret"
    );

    let mut other = Client::new(&server.http())?;
    let taken = other.register("ANN", "another password").await.err();
    assert_eq!(
        taken.as_ref().and_then(ClientError::code),
        Some(ErrorCode::NameTaken),
        "{taken:?}"
    );
    let wrong = other.login("ann", "not the password").await.err();
    assert_eq!(
        wrong.as_ref().and_then(ClientError::code),
        Some(ErrorCode::BadCredentials)
    );
    assert_eq!(other.login("ann", "a long password").await?, registered);
    assert_ne!(other.session(), ann.session(), "a session per log-in");

    let stale = ann.session().map(str::to_owned).expect("logged in");
    ann.logout().await?;
    assert_eq!(ann.session(), None);
    let revoked = Client::new(&server.http())?
        .with_session(stale)
        .me()
        .await
        .err();
    assert_eq!(
        revoked.as_ref().and_then(ClientError::code),
        Some(ErrorCode::UnknownSession)
    );
    assert_eq!(other.me().await?, registered, "the other session lives on");

    let guest = Client::new(&server.http())?.guest("").await.err();
    assert_eq!(
        guest.as_ref().and_then(ClientError::code),
        Some(ErrorCode::BadName)
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobby_goes_from_creation_to_a_match_played_to_its_end() -> Result<(), ClientError> {
    let server = TestServer::start();
    let mut host = Client::new(&server.http())?;
    let host_account = host.guest("host").await?;
    let mut guest = Client::new(&server.http())?;
    guest.guest("guest").await?;

    let created = host.create_lobby(&lobby("kit test", 3)).await?;
    assert_eq!(created.host, Some(host_account.id));
    let listed = guest.lobbies(1).await?;
    assert!(
        listed.lobbies.iter().any(|l| l.id == created.id),
        "{listed:?}"
    );
    let with_bot = host.add_bot(created.id, 2, BotLevel::Random).await?;
    assert!(matches!(
        with_bot.seats[2].occupant,
        Some(Occupant::Bot {
            level: BotLevel::Random
        })
    ));
    let not_host = guest.kick(created.id, 2).await.err();
    assert_eq!(
        not_host.as_ref().and_then(ClientError::code),
        Some(ErrorCode::NotHost)
    );
    host.kick(created.id, 2).await?;
    let joined = guest.join_lobby(created.id, &JoinLobby::default()).await?;
    assert!(
        matches!(&joined.seats[1].occupant, Some(Occupant::Player { name, .. }) if name == "guest")
    );
    host.add_bot(created.id, 2, BotLevel::Random).await?;
    host.pick_colour(created.id, rules::Colour::Pink).await?;
    host.set_ready(created.id, true).await?;
    let early = host.start(created.id).await.err();
    assert_eq!(
        early.as_ref().and_then(ClientError::code),
        Some(ErrorCode::NotReady)
    );

    let waiting = {
        let guest = guest.clone();
        tokio::spawn(async move { guest.wait_for_start(created.id).await })
    };
    guest.set_ready(created.id, true).await?;
    let started = host.start(created.id).await?;
    assert_eq!(waiting.await.expect("the waiting task")?, started.match_id);
    let read = guest.lobby(created.id, None).await?;
    assert_eq!(
        (read.status, read.match_id),
        (LobbyStatus::Started, Some(started.match_id))
    );

    let mut host_game = host.play(started.match_id).await?;
    let mut guest_game = guest.play(started.match_id).await?;
    // Together: the first to fail ends the test (the other would wait for its moves).
    let (host_played, guest_played) = tokio::try_join!(
        play_random(&mut host_game, 4, |_| {}),
        play_random(&mut guest_game, 5, |_| {}),
    )?;
    assert_eq!((host_game.seat(), guest_game.seat()), (Some(0), Some(1)));
    for played in [&host_played, &guest_played] {
        assert!(played.finished, "{played:?}");
        // A seat may subscribe after the first moves: its diffs follow its one snapshot.
        let [from] = played.snapshots[..] else {
            panic!("one snapshot: {played:?}");
        };
        assert!(consecutive(&played.diffs, from + 1), "{played:?}");
        assert!(played.acks > 0 && played.refusals.is_empty(), "{played:?}");
    }
    let view = host_game.view().expect("the final view");
    assert!(view.finished && view.players.len() == 3);
    assert_eq!(view.players[0].colour, rules::Colour::Pink);

    let done = host.leave_lobby(created.id).await.err();
    assert_eq!(
        done.as_ref().and_then(ClientError::code),
        Some(ErrorCode::LobbyStarted)
    );
    Ok(())
}

/// A private lobby's match is watched with its invite code, and refused without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_lobby_match_is_watched_with_its_invite_code() -> Result<(), ClientError> {
    let server = TestServer::start();
    let mut host = Client::new(&server.http())?;
    host.guest("host").await?;
    let private = CreateLobby {
        public: false,
        ..lobby("private", 2)
    };
    let created = host.create_lobby(&private).await?;
    let code = created.invite_code.clone().expect("a private lobby's code");
    host.add_bot(created.id, 1, BotLevel::Random).await?;
    host.set_ready(created.id, true).await?;
    let started = host.start(created.id).await?;

    let rail = Client::new(&server.http())?;
    let mut plain = rail.watch(started.match_id).await?;
    let mut refused = None;
    while refused.is_none() {
        match plain.next().await? {
            Some(MatchEvent::Refused(error)) => refused = Some(error.code),
            Some(MatchEvent::Snapshot { .. }) => panic!("a snapshot without the code"),
            Some(_) => {}
            None => panic!("closed"),
        }
    }
    assert_eq!(refused, Some(ErrorCode::InviteRequired));

    let mut watcher = rail.watch_private(started.match_id, &code).await?;
    loop {
        match watcher.next().await? {
            Some(MatchEvent::Snapshot { .. }) => break,
            Some(MatchEvent::Refused(error)) => panic!("refused: {error:?}"),
            Some(_) => {}
            None => panic!("closed"),
        }
    }
    assert_eq!(watcher.seat(), None);
    assert_eq!(watcher.view().map(|v| v.players.len()), Some(2));
    Ok(())
}
