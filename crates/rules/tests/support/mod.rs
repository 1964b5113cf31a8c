//! Checks shared by the random-game tests of several modules.

use rules::{Decision, View};

/// M2: each player's pawns plus the points still waiting for a pawn choice equal the score.
pub fn pawns_plus_waiting_equal_scores(view: &View) {
    let m = view.messages.as_ref().expect("the messages view");
    for (p, (pawns, player)) in m.players.iter().zip(&view.players).enumerate() {
        let waiting: u32 = view
            .decisions
            .iter()
            .filter_map(|d| match d {
                Decision::ChoosePawn { player, points, .. } if *player as usize == p => {
                    Some(*points)
                }
                _ => None,
            })
            .sum();
        assert_eq!(
            pawns.scoring + pawns.messenger + waiting,
            player.score,
            "seat {p}"
        );
    }
}
