//! `server backup --to FILE` on SQLite, while a server process plays matches on the same file:
//! the copy is one consistent moment (each match's log a prefix of the live one), a second
//! server serves it (every match replays to its last stored seq), and an existing target is
//! refused.

use crate::common::*;
use server::Store;
use std::path::Path;
use std::process::Command;

/// Matches played while the backup runs.
const MATCHES: usize = 4;

/// The server binary on a SQLite data directory, killed on drop.
fn start(data_dir: &Path) -> ServerProcess {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_carcassonne-server"));
    cmd.args(["--bind", "127.0.0.1:0", "--log-format", "json"])
        .args(["--allow-test-setups", "--command-rate-addr", "1000000/1s"])
        .args(["--command-rate-conn", "1000000/1s"])
        .arg("--data-dir")
        .arg(data_dir);
    ServerProcess::spawn(cmd)
}

/// `server backup --to <to>` on `data_dir`: whether it succeeded, and its output.
async fn backup(data_dir: &Path, to: &Path) -> (bool, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_carcassonne-server"))
        .arg("backup")
        .arg("--to")
        .arg(to)
        .arg("--data-dir")
        .arg(data_dir)
        .env_remove("DATABASE_URL")
        .output()
        .await
        .expect("run server backup");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_during_play_is_a_consistent_copy_that_serves() {
    let dir = tempfile::tempdir().expect("temp dir");
    let live_dir = dir.path().join("live");
    let process = start(&live_dir);
    let server = TestServer::attach(process.addr);

    // Matches under way, then played on while the backup runs.
    let mut games = Vec::new();
    for i in 0..MATCHES {
        let created = create(&server, 2).await;
        let mut seats = join_seats(&server, &created).await;
        let mut rng = Rng::new(40 + i as u64);
        assert_eq!(play(&mut seats, &mut [], &mut rng, 3).await, 3);
        games.push((created.match_id, seats, rng));
    }
    let ids: Vec<uuid::Uuid> = games.iter().map(|g| g.0).collect();
    // Each player says when it has made 10 more moves; the backup starts once all have, while
    // they go on.
    let (under_way, mut started) = tokio::sync::mpsc::channel::<()>(MATCHES);
    let players: Vec<_> = games
        .into_iter()
        .map(|(_, mut seats, mut rng)| {
            let under_way = under_way.clone();
            tokio::spawn(async move {
                let mut moves = 0;
                // Moves until the match ends or the test has seen enough.
                while moves < 60 && answer_one(&mut seats, &mut [], &mut rng).await.is_some() {
                    moves += 1;
                    if moves == 10 {
                        let _ = under_way.send(()).await;
                    }
                }
                moves
            })
        })
        .collect();
    drop(under_way);
    for _ in 0..MATCHES {
        let _ = started.recv().await;
    }
    let copy = dir.path().join("copy.db");
    let (ok, out) = backup(&live_dir, &copy).await;
    assert!(ok, "the backup failed: {out}");
    let mut played = 0;
    for p in players {
        played += p.await.expect("a player task");
    }
    assert!(played > 0, "no move was played during the backup");

    // The target exists now: a second backup to it is refused, the copy untouched.
    let size = std::fs::metadata(&copy).expect("the copy").len();
    let (ok, out) = backup(&live_dir, &copy).await;
    assert!(!ok && out.contains("exists"), "{out}");
    assert_eq!(std::fs::metadata(&copy).expect("the copy").len(), size);
    drop(process);

    // Each match's log in the copy is a prefix of the live one: one moment, nothing half
    // written.
    let live = Store::open(None, &live_dir).await.expect("the live store");
    let restored_dir = dir.path().join("restored");
    std::fs::create_dir_all(&restored_dir).expect("restored dir");
    std::fs::rename(&copy, restored_dir.join("server.db")).expect("place the copy");
    let restored = Store::open(None, &restored_dir)
        .await
        .expect("the copy opens");
    let mut copied = Vec::new();
    for &id in &ids {
        let original = live.commands(id, 0).await.expect("live log");
        let backed = restored.commands(id, 0).await.expect("copied log");
        assert!(
            backed.len() >= 3,
            "{id}: {} commands in the copy",
            backed.len()
        );
        assert!(
            backed.len() <= original.len() && original[..backed.len()] == backed[..],
            "{id}: the copy's {} commands are not a prefix of the live {}",
            backed.len(),
            original.len()
        );
        eprintln!(
            "{id}: {} of {} commands in the copy",
            backed.len(),
            original.len()
        );
        copied.push(backed.len() as u64);
    }
    live.close().await;
    restored.close().await;

    // A server on the copy replays every match to its last stored seq.
    let mut config = TestDb::sqlite().config();
    config.store.data_dir = restored_dir;
    let second = TestServer::start(config);
    for (&id, &seq) in ids.iter().zip(&copied) {
        let (served, _) = server_view(&second, id).await;
        assert_eq!(served, seq, "{id}");
        let state = admin_json(&second, &format!("/api/admin/matches/{id}")).await;
        assert_ne!(state["status"], "broken", "{id}: {state}");
    }
    second.stop().await;
}
