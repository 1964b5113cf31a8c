//! The typed diff (`carcassonne_protocol::diff`) over random games: applying each move's patch to the JSON of
//! the view before it gives exactly the JSON of the view after it, with every module on (The
//! Tollkeepers, The Messages, the France map with its chips) and without, 2 to 6 players, and with
//! deadlines coming and going.

use carcassonne_protocol::diff::{
    PatchWriter, match_view_patch, match_view_patch_json, match_view_patch_json_touched,
};
use carcassonne_protocol::{ClockView, Deadline, MatchView, PatchOp};
use rules::{Colour, Game, Setup, bot};

fn all_modules(players: usize, seed: u64) -> Setup {
    Setup::new(Colour::ALL[..players].to_vec(), seed)
        .tollkeepers(true)
        .messages(true)
        .map("france")
        .chips(true)
}

/// Deadlines as the server keeps them: one per open decision of a player who is not the active
/// one, timed by the move that opened it (so they appear, stay, change and vanish). Clocks in
/// every other game (the active player's runs, banks shrink), and away marks that come and go.
fn match_view(game: &Game, moves: u64) -> MatchView {
    let active = game.active();
    let mut deadlines: Vec<Deadline> = game
        .open_asks()
        .filter(|(_, p)| *p != active)
        .map(|(_, player)| Deadline {
            player,
            at: 1_764_527_400_000 + moves * 7,
        })
        .collect();
    deadlines.sort_by_key(|d| (d.player, d.at));
    let players = game.view().players.len() as u8;
    let clocks = if game.setup().seed.is_multiple_of(2) {
        (0..players)
            .map(|player| ClockView {
                player,
                remaining_ms: 300_000u64.saturating_sub(moves * 100 * u64::from(player + 1)),
                running_since: (player == active).then_some(1_764_527_400_000 + moves),
            })
            .collect()
    } else {
        Vec::new()
    };
    let away = (0..players)
        .filter(|p| (moves / 9 + u64::from(*p)).is_multiple_of(4))
        .collect();
    // Names come and go now and then, so that their patches are checked too.
    let names = match moves % 5 {
        0 => Vec::new(),
        _ => (0..players)
            .map(|p| carcassonne_protocol::SeatName {
                name: format!("player {p}"),
                bot: p == 1,
            })
            .collect(),
    };
    MatchView {
        view: game.view(),
        deadlines,
        clocks,
        away,
        names,
    }
}

/// Plays a whole random game and checks every move's patch; returns the number of moves.
fn check_game(setup: Setup, bot_seed: u64) -> usize {
    let (mut game, _) = Game::start(setup).expect("a valid setup");
    let mut rng = bot_seed;
    let mut before = match_view(&game, 0);
    let mut json = serde_json::to_value(&before).expect("the view serializes");
    let mut moves = 0;
    // One writer for the whole game, as a server thread keeps it: what its kept buffers held
    // for the last patch must not leak into the next.
    let mut writer = PatchWriter::default();
    while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
        game.apply(player, cmd.clone())
            .expect("bot moves are legal");
        moves += 1;
        let after = match_view(&game, moves as u64);
        let patch = match_view_patch(&before, &after).expect("the patch serializes");
        // Through the wire type and back, as a client reads it.
        let text = serde_json::to_string(&patch).expect("the patch serializes");
        // The text the server stores and sends, written without `Value`s: the same bytes.
        let direct = match_view_patch_json(&before, &after).expect("the patch serializes");
        assert_eq!(direct, text, "move {moves} of seed {bot_seed}: direct JSON");
        // As the server diffs: only the squares placed since the old view are compared.
        let placed: Vec<_> = game.placed_since(before.view.board.len()).collect();
        let touched =
            match_view_patch_json_touched(&before, &after, &placed).expect("the patch serializes");
        assert_eq!(
            touched, text,
            "move {moves} of seed {bot_seed}: touched squares"
        );
        let kept = writer
            .match_view_patch_json_touched(&before, &after, &placed)
            .expect("the patch serializes");
        assert_eq!(kept, text, "move {moves} of seed {bot_seed}: a kept writer");
        if !placed.is_empty() {
            // The test can fail: a touched set that misses the new square misses its tile.
            let missed =
                match_view_patch_json_touched(&before, &after, &[]).expect("the patch serializes");
            assert_ne!(
                missed, text,
                "move {moves}: a square left out is not diffed"
            );
        }
        let ops: Vec<json_patch::PatchOperation> =
            serde_json::from_str(&text).expect("RFC 6902 operations");
        json_patch::patch(&mut json, &ops).unwrap_or_else(|e| {
            panic!("move {moves} ({cmd:?}): the patch does not apply: {e}\n{text}")
        });
        let expected = serde_json::to_value(&after).expect("the view serializes");
        assert_eq!(
            json, expected,
            "move {moves} ({cmd:?}) of seed {bot_seed}: patch {text}"
        );
        assert_eq!(
            patch.is_empty(),
            before == after,
            "an empty patch exactly when nothing changed"
        );
        before = after;
    }
    assert!(game.is_finished(), "random games run to the end");
    moves
}

#[test]
fn patches_rebuild_every_view_of_random_games_with_all_modules() {
    let mut moves = 0;
    for seed in 0..24u64 {
        let players = 2 + (seed as usize % 5);
        moves += check_game(all_modules(players, seed), seed.wrapping_mul(0x9E37));
    }
    assert!(moves > 24 * 50, "whole games were played: {moves} moves");
}

#[test]
fn patches_rebuild_every_view_of_random_base_games() {
    for seed in 100..112u64 {
        let players = 2 + (seed as usize % 5);
        check_game(Setup::new(Colour::ALL[..players].to_vec(), seed), seed);
    }
}

#[test]
fn an_unchanged_view_gives_an_empty_patch() {
    let (game, _) = Game::start(all_modules(3, 7)).expect("a valid setup");
    let v = match_view(&game, 0);
    let patch: Vec<PatchOp> = match_view_patch(&v, &v.clone()).expect("serializes");
    assert!(patch.is_empty());
    assert_eq!(match_view_patch_json(&v, &v).expect("serializes"), "[]");
}
