//! Test only: a module whose decision belongs to a player who is not the active one. After every
//! placement the next player in seat order must acknowledge it with `pass`; the turn cannot end
//! before they do, while the active player answers phase 2 in the meantime.

use super::{Ctx, ModuleAsk};
use crate::command::Command;
use crate::error::RuleError;
use crate::event::Event;
use crate::setup::PlayerId;

#[derive(Debug, Clone, Default)]
pub struct Witness;

impl Witness {
    pub(super) fn on_tile_placed(&mut self, ctx: &mut Ctx<'_>) {
        let next = ((ctx.active as usize + 1) % ctx.players) as PlayerId;
        ctx.ask(next, ModuleAsk::Witness);
    }

    pub(super) fn answer(
        ctx: &mut Ctx<'_>,
        player: PlayerId,
        command: &Command,
    ) -> Result<(), RuleError> {
        match command {
            Command::Pass {} => {
                ctx.events.push(Event::Passed { player });
                Ok(())
            }
            _ => Err(RuleError::WrongPhase {
                expected: "acknowledge with pass",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::bot;
    use crate::decision::Decision;
    use crate::error::RuleError;
    use crate::event::Event;
    use crate::game::Game;
    use crate::setup::{Colour, Setup};
    use crate::{Command, PlayerId};

    fn witnessed(seed: u64) -> Game {
        let setup = Setup::new(Colour::ALL[..3].to_vec(), seed).tollkeepers(true);
        let (game, _) = Game::start(setup).expect("valid setup");
        game.with_witness()
    }

    fn players(game: &Game) -> Vec<PlayerId> {
        game.decisions().iter().map(Decision::player).collect()
    }

    /// Places the drawn tile by its default (the first legal placement).
    fn place(game: &mut Game) {
        let (id, _) = game.first_decision().expect("a decision");
        let (p, c) = game.default_command(id).expect("a default");
        assert_eq!(p, 0);
        game.apply(p, c).expect("the default placement is legal");
    }

    #[test]
    fn a_decision_of_a_non_active_player_is_answered_while_the_active_player_waits() {
        let mut game = witnessed(1);
        place(&mut game);
        // Player 1 must acknowledge while player 0 decides phase 2: both are open at once.
        assert_eq!(players(&game), vec![1, 0]);
        assert!(matches!(
            game.decisions()[0],
            Decision::Witness { player: 1 }
        ));
        assert_eq!(
            game.apply(2, Command::Pass {}),
            Err(RuleError::NotYourTurn {
                player: 2,
                waiting: 1
            })
        );
        // The active player answers phase 2; the turn cannot end before player 1 answers.
        let events = game.apply(0, Command::Pass {}).expect("phase 2 pass");
        assert_eq!(events, vec![Event::Passed { player: 0 }]);
        assert_eq!(players(&game), vec![1]);
        assert_eq!(game.active(), 0);
        assert_eq!(
            game.apply(0, Command::Pass {}),
            Err(RuleError::NotYourTurn {
                player: 0,
                waiting: 1
            })
        );
        // A command of the wrong kind is refused and changes nothing.
        let before = game.view();
        let wrong = Command::PlaceMeeple {
            target: crate::Target::Monastery,
        };
        assert!(matches!(
            game.apply(1, wrong),
            Err(RuleError::WrongPhase { .. })
        ));
        assert_eq!(game.view(), before);
        // The snapshot holds the open decision and the waiting turn.
        let copy: Game =
            serde_json::from_str(&serde_json::to_string(&game).expect("ser")).expect("de");
        assert_eq!(copy.decisions(), game.decisions());
        // Player 1 (not the active player) answers: the turn ends and player 1's begins.
        let events = game.apply(1, Command::Pass {}).expect("acknowledged");
        assert_eq!(events[0], Event::Passed { player: 1 });
        assert!(events.contains(&Event::TurnStarted { player: 1, turn: 2 }));
        assert_eq!(game.active(), 1);
    }

    #[test]
    fn the_non_active_player_may_answer_first() {
        let mut game = witnessed(2);
        place(&mut game);
        let events = game.apply(1, Command::Pass {}).expect("acknowledged");
        assert_eq!(events, vec![Event::Passed { player: 1 }]);
        assert_eq!(players(&game), vec![0]);
        let events = game.apply(0, Command::Pass {}).expect("phase 2 pass");
        assert!(events.contains(&Event::TurnStarted { player: 1, turn: 2 }));
    }

    #[test]
    fn whole_games_with_a_witness_end_and_keep_scores_b3() {
        for seed in 0..8 {
            let mut game = witnessed(seed);
            let mut rng = seed;
            let mut n = 0;
            while let Some((p, c)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
                let (id, _) = game.first_decision().expect("open");
                assert!(game.default_command(id).is_some());
                game.apply(p, c).expect("bot moves are legal");
                n += 1;
                assert!(n < 2000, "the game must end");
            }
            assert!(game.is_finished());
            let total: u32 = game.scores().iter().sum();
            assert!(total > 0);
        }
    }
}
