//! The actor's per-move diff path, alone, for instruction counts under callgrind (repeatable on a
//! noisy machine): plays random games and, for each move, builds the view and its `Diff` frame
//! by diffing trees (`tree`: the whole view as a JSON tree, diffed with `json_patch::diff`), the
//! typed way (`typed`: `carcassonne_protocol::diff::match_view_patch_json`, the patch's JSON written directly)
//! or as the match actor does (`server`: typed, and the view is the spare one brought up to date
//! with `Game::refresh_view` rather than built, and only the squares placed since compared). The
//! rules' own cost is in all; `rules` runs them alone.
//!
//! ```text
//! cargo build --release -p carcassonne-protocol --example diff_cost
//! valgrind --tool=callgrind target/release/examples/diff_cost typed 20
//! ```
//! Instructions per move = the total `Ir` divided by the moves printed.

use carcassonne_protocol::{MatchView, PatchOp, ServerMessage};
use rules::{Colour, Game, Setup, bot};
use uuid::Uuid;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "typed".into());
    let games: u64 = args.next().map(|g| g.parse()).transpose()?.unwrap_or(20);
    let all = args.next().is_some_and(|a| a == "all");
    let mut moves = 0u64;
    let mut bytes = 0usize;
    for seed in 0..games {
        let mut setup = Setup::new(Colour::ALL[..2].to_vec(), seed);
        if all {
            setup = setup
                .tollkeepers(true)
                .messages(true)
                .map("france")
                .chips(true);
        }
        let (mut game, _) = Game::start(setup)?;
        let mut rng = seed;
        let view = |g: &Game| MatchView::from(g.view());
        let mut before = view(&game);
        let mut before_json = serde_json::to_value(&before)?;
        let mut spare = Some(before.clone());
        while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
            let events = game.apply(player, cmd)?;
            moves += 1;
            let after = match (mode.as_str(), spare.take()) {
                ("server", Some(mut v)) => {
                    game.refresh_view(&mut v.view);
                    v
                }
                _ => view(&game),
            };
            let patch: Vec<PatchOp> = match mode.as_str() {
                "typed" | "server" => {
                    // The frame around the patch's text, as the server writes it.
                    let text = if mode == "server" {
                        let placed: Vec<_> = game.placed_since(before.view.board.len()).collect();
                        carcassonne_protocol::diff::match_view_patch_json_touched(
                            &before, &after, &placed,
                        )?
                    } else {
                        carcassonne_protocol::diff::match_view_patch_json(&before, &after)?
                    };
                    let events = serde_json::to_string(&events)?;
                    let frame = format!(
                        r#"{{"type":"diff","match_id":"{}","seq":{moves},"events":{events},"patch":{text}}}"#,
                        Uuid::nil()
                    );
                    bytes += frame.len();
                    spare = Some(std::mem::replace(&mut before, after));
                    continue;
                }
                "tree" => {
                    let after_json = serde_json::to_value(&after)?;
                    let p = serde_json::from_value(serde_json::to_value(json_patch::diff(
                        &before_json,
                        &after_json,
                    ))?)?;
                    before_json = after_json;
                    p
                }
                _ => Vec::new(),
            };
            let frame = serde_json::to_string(&ServerMessage::Diff {
                match_id: Uuid::nil(),
                seq: moves,
                by_server: None,
                events,
                patch,
            })?;
            bytes += frame.len();
            before = after;
        }
    }
    println!(
        "{mode}: {moves} moves, {} bytes of diff frames per move",
        bytes / moves.max(1) as usize
    );
    Ok(())
}
