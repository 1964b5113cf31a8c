//! A bot that plays whole games over the wire: it signs in (a guest, or the account of
//! `BOT_NAME` and `BOT_PASSWORD`), joins an open lobby with a free seat or opens one with a
//! server bot, and answers its seat's decisions with random legal moves until the match ends.
//! `docs/write-a-bot.md` explains each step. Arguments: the server's URL (`https://` for TLS)
//! and the number of games:
//! `cargo run -p carcassonne-client --example bot -- http://127.0.0.1:8080 3`.

use carcassonne_client::protocol::{BotLevel, CreateLobby, ErrorCode, JoinLobby};
use carcassonne_client::{Client, ClientError, MatchEvent, bot::Rng, rules, uuid::Uuid};

/// What one game came to: the match, the seat, its commands accepted and refused, the scores.
#[derive(Debug)]
pub struct Played(pub Uuid, pub Option<u8>, pub usize, pub usize, pub Vec<u32>);

const LOCAL: &str = "http://127.0.0.1:8080";

#[tokio::main]
async fn main() -> Result<(), ClientError> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| LOCAL.into());
    let games: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let mut client = Client::new(&url)?;
    sign_in(&mut client).await?;
    for game in 0..games {
        let match_id = find_match(&client).await?;
        println!("{:?}", play(&client, match_id, game).await?);
    }
    Ok(())
}

/// Logs in the account of `BOT_NAME` and `BOT_PASSWORD` (registered on first use), or a guest.
pub async fn sign_in(client: &mut Client) -> Result<(), ClientError> {
    let (Ok(name), Ok(password)) = (std::env::var("BOT_NAME"), std::env::var("BOT_PASSWORD"))
    else {
        return client.guest("example bot").await.map(drop);
    };
    match client.login(&name, &password).await {
        Err(e) if e.code() == Some(ErrorCode::BadCredentials) => {
            client.register(&name, &password).await.map(drop)
        }
        logged_in => logged_in.map(drop),
    }
}

/// Joins the first open lobby and waits for its host to start it; with none open, opens one
/// with a server bot on seat 1 and starts it. Returns the match to play.
pub async fn find_match(client: &Client) -> Result<Uuid, ClientError> {
    if let Some(lobby) = client.lobbies(1).await?.lobbies.first()
        && client
            .join_lobby(lobby.id, &JoinLobby::default())
            .await
            .is_ok()
    {
        client.set_ready(lobby.id, true).await?;
        return client.wait_for_start(lobby.id).await;
    }
    let options = CreateLobby {
        name: "example bot".into(),
        seats: 2,
        modules: Default::default(),
        meeples: None,
        clock: None,
        public: true,
        rated: false,
    };
    let lobby = client.create_lobby(&options).await?;
    client.add_bot(lobby.id, 1, BotLevel::Random).await?;
    client.set_ready(lobby.id, true).await?;
    Ok(client.start(lobby.id).await?.match_id)
}

/// Plays this account's seat of `match_id` with random legal moves until the match ends.
pub async fn play(client: &Client, match_id: Uuid, seed: u64) -> Result<Played, ClientError> {
    let mut game = client.play(match_id).await?;
    let mut rng = Rng::new(seed);
    let (mut accepted, mut refused) = (0, 0);
    // The last diff may come before the last ack: read on until every command is answered.
    while !(game.finished() && game.waiting() == 0) {
        match game.next().await? {
            Some(MatchEvent::YourTurn { decisions }) => {
                let pick = rules::bot::random_command(&decisions[0], || rng.next_u64());
                if let Some(command) = pick {
                    game.send(command).await?;
                }
            }
            Some(MatchEvent::Ack { .. }) => accepted += 1,
            Some(MatchEvent::Refused(error)) => {
                eprintln!("refused: {} ({})", error.message, error.code.as_str());
                refused += 1;
            }
            Some(_) => {}
            None => break,
        }
    }
    let scores = game.view().map(|v| v.players.iter().map(|p| p.score));
    let scores = scores.map(Iterator::collect).unwrap_or_default();
    let played = Played(match_id, game.seat(), accepted, refused, scores);
    game.close().await?;
    Ok(played)
}
