//! The whole match-actor path of a move, in process (no sockets), for instruction counts under
//! callgrind (repeatable on a noisy machine): dedupe → apply → view → diff → serialize → store
//! append (SQLite in a temp dir) → ack → fan-out to two subscribed connections.
//!
//! Each game's moves are chosen first on a mirror `rules::Game` (same setup, fixed seeds), then
//! played through the real `Registry` and match actor, one command in flight (the sender waits
//! for its ack; both subscribers read every diff). `dry` does only the first part, so
//! (Ir of `play` − Ir of `dry`) / moves is the actor path per move, match creation and loading
//! amortised over the game. `setup` also opens the store and builds the registry and metrics,
//! and plays nothing: (Ir of `play` − Ir of `setup`) / moves leaves out what a process pays once
//! (the migrations, the metrics clock's calibration: ≈ 20 k instructions a move of a 10-game run).
//!
//! ```text
//! cargo build --release -p carcassonne-server --example actor_path
//! valgrind --tool=callgrind target/release/examples/actor_path play 10   # or dry, setup; add `all`
//! ```

use rules::{Colour, Command, Game, Modules, PlayerId, Setup, bot};
use server::actor::{ActorMsg, CommandMsg, Registry};
use server::outbox::{self, ConnHandle};
use server::store::{MatchRow, MatchStatus, SeatRow};
use server::{Config, Metrics, Store};
use std::sync::Arc;
use uuid::Uuid;

type Error = Box<dyn std::error::Error>;

fn setup(seed: u64, all: bool) -> Setup {
    let modules = if all {
        Modules::all()
    } else {
        Modules::default()
    };
    Setup::new(Colour::ALL[..2].to_vec(), seed).modules(modules)
}

/// A random legal game, chosen on a mirror of the match.
fn moves_of(setup: &Setup, seed: u64) -> Result<Vec<(PlayerId, Command)>, Error> {
    let (mut game, _) = Game::start(setup.clone())?;
    let mut rng = seed;
    let mut moves = Vec::new();
    while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
        game.apply(player, cmd.clone())?;
        moves.push((player, cmd));
    }
    Ok(moves)
}

/// An in-memory connection: its handle for the actor and the receiving end of its queue.
fn conn(id: u64) -> (ConnHandle, outbox::Receiver) {
    let (tx, rx) = outbox::channel(256);
    let handle = ConnHandle::new(id, tx, Arc::default());
    (handle, rx)
}

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "play".into());
    let games: u64 = args.next().map(|g| g.parse()).transpose()?.unwrap_or(10);
    let all = args.next().is_some_and(|a| a == "all");
    let games: Vec<_> = (0..games)
        .map(|seed| {
            let s = setup(seed, all);
            moves_of(&s, seed).map(|m| (s, m))
        })
        .collect::<Result<_, _>>()?;
    let moves: usize = games.iter().map(|(_, m)| m.len()).sum();
    if mode == "dry" {
        println!("dry: {moves} moves chosen");
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (games, moves) = if mode == "setup" {
        (Vec::new(), 0)
    } else {
        (games, moves)
    };
    let bytes = runtime.block_on(play(games))?;
    println!(
        "{mode}: {moves} moves through the actor, {} bytes of frames per move",
        bytes / moves.max(1)
    );
    Ok(())
}

async fn play(games: Vec<(Setup, Vec<(PlayerId, Command)>)>) -> Result<usize, Error> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(None, dir.path()).await?;
    let config = Arc::new(Config::default());
    let registry = Registry::new(store.clone(), config, Arc::new(Metrics::new(store.kind())));
    let mut bytes = 0;
    for (g, (setup, moves)) in games.into_iter().enumerate() {
        let id = Uuid::from_u128(g as u128 + 1);
        let row = MatchRow {
            id,
            setup: serde_json::to_string(&setup)?,
            status: MatchStatus::Active,
            rules_version: rules::REPLAY_VERSION.to_string(),
            created_at: chrono::Utc::now(),
            decision_timeout_ms: Some(30_000),
            clock: None,
            // No deadline at the start of a base game without a clock.
            wake_at: None,
        };
        let seats: Vec<_> = (0..2u8)
            .map(|seat| SeatRow {
                seat,
                colour: ["red", "blue"][usize::from(seat)].into(),
                token_hash: format!("{id}-{seat}"),
            })
            .collect();
        store.create_match(&row, &seats).await?;
        let handle = registry.get_or_load(id)?;
        let mut conns = [conn(2 * g as u64), conn(2 * g as u64 + 1)];
        for (c, _) in &conns {
            handle
                .tx
                .send(ActorMsg::Subscribe {
                    conn: c.clone(),
                    since: None,
                })
                .await?;
        }
        for (_, rx) in &mut conns {
            // The snapshot.
            let f = rx.recv().await.ok_or("no snapshot")?;
            bytes += f.as_str().len();
        }
        for (i, (player, command)) in moves.into_iter().enumerate() {
            let sender = usize::from(player) % 2;
            let cmd_id = format!("c{i}");
            handle
                .tx
                .send(ActorMsg::Command(Box::new(CommandMsg {
                    conn: conns[sender].0.clone(),
                    seat: player,
                    id: cmd_id,
                    command,
                    arrived: tokio::time::Instant::now(),
                })))
                .await?;
            // The sender gets its ack and the diff, the other the diff.
            for (k, (_, rx)) in conns.iter_mut().enumerate() {
                let want = if k == sender { 2 } else { 1 };
                for _ in 0..want {
                    let f = rx.recv().await.ok_or("connection closed")?;
                    if f.as_str().starts_with(r#"{"type":"error""#) {
                        return Err(format!("refused: {}", f.as_str()).into());
                    }
                    bytes += f.as_str().len();
                }
            }
        }
        for (c, _) in &conns {
            handle
                .tx
                .send(ActorMsg::Unsubscribe { conn_id: c.id })
                .await?;
        }
    }
    registry.shutdown().await;
    store.close().await;
    Ok(bytes)
}
