//! `examples/bot.rs`, compiled into this test as a module, against a real server: it opens
//! lobbies with a server bot and plays whole games to their end with every move accepted, under
//! the server's default rate limits; and it
//! joins a lobby someone else opened and plays the seat it got.

mod common;

#[allow(dead_code)] // its `main` runs only as the example
#[path = "../examples/bot.rs"]
mod example;

use carcassonne_client::{Client, ClientError, MatchEvent, uuid::Uuid};
use common::{TestServer, play_random};
use std::time::Duration;

/// Whether a spectator sees `match_id` finished.
async fn finished(server: &TestServer, match_id: Uuid) -> Result<bool, ClientError> {
    let mut rail = Client::new(&server.http())?.watch(match_id).await?;
    while let Some(event) = rail.next().await? {
        if let MatchEvent::Snapshot { .. } = event {
            return Ok(rail.view().is_some_and(|v| v.finished));
        }
    }
    Ok(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_bot_plays_whole_games_in_lobbies_it_opens() -> Result<(), ClientError> {
    // The default limits: a bot that answers at once is paced by them, never refused.
    let server = TestServer::with_default_limits();
    let mut client = Client::new(&server.http())?;
    example::sign_in(&mut client).await?;
    let mut matches = Vec::new();
    for game in 0..2 {
        let match_id = example::find_match(&client).await?;
        let example::Played(played_id, seat, accepted, refused, scores) =
            example::play(&client, match_id, game).await?;
        assert_eq!((played_id, seat), (match_id, Some(0)));
        assert!(
            accepted > 20 && refused == 0,
            "{accepted} accepted, {refused} refused"
        );
        assert_eq!(scores.len(), 2);
        assert!(finished(&server, match_id).await?, "game {game} is over");
        matches.push(match_id);
    }
    assert_ne!(matches[0], matches[1], "a new lobby and match per game");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_bot_joins_an_open_lobby_and_plays_its_seat() -> Result<(), ClientError> {
    let server = TestServer::start();
    let mut host = Client::new(&server.http())?;
    host.guest("host").await?;
    let lobby = host
        .create_lobby(&protocol::CreateLobby {
            name: "waiting for a bot".into(),
            seats: 2,
            modules: Default::default(),
            meeples: None,
            clock: None,
            public: true,
            rated: false,
        })
        .await?;
    host.set_ready(lobby.id, true).await?;
    let mut bot = Client::new(&server.http())?;
    example::sign_in(&mut bot).await?;
    let bot_plays = async {
        let match_id = example::find_match(&bot).await?;
        example::play(&bot, match_id, 9).await
    };
    let host_plays = async {
        let mut ready = false;
        for _ in 0..1000 {
            ready = host.lobby(lobby.id, None).await?.seats[1].ready;
            if ready {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(ready, "the bot took the free seat and is ready");
        let started = host.start(lobby.id).await?;
        let mut host_game = host.play(started.match_id).await?;
        let played = play_random(&mut host_game, 3, |_| {}).await?;
        Ok::<_, ClientError>((started, played))
    };
    // Together: the first to fail ends the test (the other would wait for its moves).
    let (bot_played, (started, host_played)) = tokio::try_join!(bot_plays, host_plays)?;
    let example::Played(match_id, seat, accepted, refused, _) = bot_played;
    assert_eq!((match_id, seat), (started.match_id, Some(1)));
    assert!(
        accepted > 20 && refused == 0,
        "{accepted} accepted, {refused} refused"
    );
    assert!(host_played.finished && host_played.refusals.is_empty());
    Ok(())
}
