//! Plays games against a running server and prints the sender's `ack` and own-`diff` latency
//! percentiles, as a separate client process over real TCP:
//!
//! ```sh
//! cargo run --release -p carcassonne-server &
//! cargo run --release -p carcassonne-client --example latency -- http://127.0.0.1:8080 20 4
//! ```
//!
//! Arguments: the server's base URL, the number of games, how many play at once.

use carcassonne_client::latency::{Latencies, play_game};
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let base = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:8080".to_owned());
    let games: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let parallel: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(4).max(1);
    let base = base.trim_end_matches('/').to_owned();
    let ws = format!("{}/ws", base.replacen("http", "ws", 1));
    let mut tasks = Vec::new();
    for lane in 0..parallel {
        let (base, ws) = (base.clone(), ws.clone());
        tasks.push(tokio::spawn(async move {
            let mut all = Latencies::default();
            for game in (lane..games).step_by(parallel as usize) {
                all.extend(play_game(&base, &ws, game, usize::MAX).await?);
            }
            Ok::<_, carcassonne_client::ClientError>(all)
        }));
    }
    let mut all = Latencies::default();
    for t in tasks {
        match t.await {
            Ok(Ok(l)) => all.extend(l),
            Ok(Err(e)) => {
                eprintln!("a game failed: {e}");
                return ExitCode::FAILURE;
            }
            Err(e) => {
                eprintln!("a game task failed: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!("{games} games, {parallel} at once: {}", all.summary());
    ExitCode::SUCCESS
}
