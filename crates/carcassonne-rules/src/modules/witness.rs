//! Test only: a module that exercises what the next expansions need from the engine.
//!
//! - After every placement each player who is not the active one must acknowledge it with `pass`
//!   (several players asked at once, as M3 asks after one placement); the turn cannot end before
//!   they all do, while the active player answers phase 2 in the meantime.
//! - It keeps a ledger of every award (M2 sees every scoring through one path).
//! - With `extra`, the first turn part of each turn is followed by an extra one (M11: a tile
//!   drawn and placed inside the turn, with its own phases 1–3).
//! - With `take_back`, at the end of each turn the active player takes back one of their meeples
//!   (the one on the lowest segment), and only that one (M15).
//! - With `quiet`, it asks nobody.

use super::{Ctx, ModuleAsk, Step};
use crate::command::Command;
use crate::engine::agenda::Award;
use crate::error::RuleError;
use crate::event::Event;
use crate::setup::PlayerId;

#[derive(Debug, Clone, Default)]
pub struct Witness {
    /// Every award seen, in order.
    pub awards: Vec<Award>,
    /// Play an extra turn part after the turn's own.
    pub extra: bool,
    extra_done: bool,
    /// Take back one meeple of the active player at the end of each turn.
    pub take_back: bool,
    /// Ask nobody.
    pub quiet: bool,
}

impl Witness {
    pub(super) fn on_tile_placed(&mut self, ctx: &mut Ctx<'_>) {
        if self.quiet {
            return;
        }
        for p in 0..ctx.players as PlayerId {
            if p != ctx.active {
                ctx.ask(p, ModuleAsk::Witness);
            }
        }
    }

    pub(super) fn on_award(&mut self, award: &Award) {
        self.awards.push(*award);
    }

    pub(super) fn on_turn_part_end(&mut self, ctx: &mut Ctx<'_>) {
        if self.extra && !std::mem::replace(&mut self.extra_done, true) {
            ctx.agenda.push(Step::Draw { extra: true });
            ctx.agenda.push(Step::EndTurnPart);
        }
    }

    pub(super) fn on_turn_end(&mut self, ctx: &mut Ctx<'_>) {
        self.extra_done = false;
        if !self.take_back {
            return;
        }
        let f = ctx.features;
        let mine = (0..f.len())
            .filter(|&s| f.is_root(s))
            .flat_map(|r| f.get(r).meeples.iter())
            .filter(|&&(p, _, _)| p == ctx.active)
            .map(|&(_, seg, _)| seg)
            .min();
        if let Some(seg) = mine {
            ctx.agenda.push(Step::ReturnMeeple(seg));
        }
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
    use super::Witness;
    use crate::bot;
    use crate::command::Command;
    use crate::decision::Decision;
    use crate::error::RuleError;
    use crate::event::Event;
    use crate::game::Game;
    use crate::setup::PlayerId;
    use crate::setup::{Colour, Setup};

    fn witnessed(seed: u64, extra: bool) -> Game {
        let setup = Setup::new(Colour::ALL[..3].to_vec(), seed).tollkeepers(true);
        let (game, _) = Game::start(setup).expect("valid setup");
        game.with_witness(Witness {
            extra,
            ..Witness::default()
        })
    }

    fn players(game: &Game) -> Vec<PlayerId> {
        game.decisions().iter().map(Decision::player).collect()
    }

    /// Places the drawn tile by its default (the first legal placement).
    fn place(game: &mut Game) {
        let (id, _) = game.first_decision().expect("a decision");
        let (p, c) = game.default_command(id).expect("a default");
        game.apply(p, c).expect("the default placement is legal");
    }

    #[test]
    fn decisions_of_non_active_players_are_answered_while_the_active_player_waits() {
        let mut game = witnessed(1, false);
        place(&mut game);
        // Players 1 and 2 must acknowledge while player 0 decides phase 2: all open at once.
        assert_eq!(players(&game), vec![1, 2, 0]);
        assert!(matches!(
            game.decisions()[0],
            Decision::Witness { player: 1 }
        ));
        // The active player answers phase 2; the turn cannot end before the others answer.
        let events = game.apply(0, Command::Pass {}).expect("phase 2 pass");
        assert_eq!(events, vec![Event::Passed { player: 0 }]);
        assert_eq!(players(&game), vec![1, 2]);
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
            target: crate::command::Target::Monastery,
            figure: crate::command::Figure::Meeple,
        };
        assert!(matches!(
            game.apply(2, wrong),
            Err(RuleError::WrongPhase { .. })
        ));
        assert_eq!(game.view(), before);
        // Player 2 answers before player 1: any order.
        let events = game.apply(2, Command::Pass {}).expect("acknowledged");
        assert_eq!(events, vec![Event::Passed { player: 2 }]);
        assert_eq!(players(&game), vec![1]);
        // The snapshot holds the open decision and the waiting turn.
        let copy: Game =
            serde_json::from_str(&serde_json::to_string(&game).expect("ser")).expect("de");
        assert_eq!(copy.decisions(), game.decisions());
        // The last answer (not the active player's) ends the turn; player 1's begins.
        let events = game.apply(1, Command::Pass {}).expect("acknowledged");
        assert_eq!(events[0], Event::Passed { player: 1 });
        assert!(events.contains(&Event::TurnStarted { player: 1, turn: 2 }));
        assert_eq!(game.active(), 1);
    }

    #[test]
    fn the_non_active_players_may_answer_first() {
        let mut game = witnessed(2, false);
        place(&mut game);
        for p in [1, 2] {
            let events = game.apply(p, Command::Pass {}).expect("acknowledged");
            assert_eq!(events, vec![Event::Passed { player: p }]);
        }
        assert_eq!(players(&game), vec![0]);
        let events = game.apply(0, Command::Pass {}).expect("phase 2 pass");
        assert!(events.contains(&Event::TurnStarted { player: 1, turn: 2 }));
    }

    #[test]
    fn an_extra_turn_part_has_its_own_phases_inside_the_turn_m11() {
        let mut game = witnessed(3, true);
        place(&mut game);
        for p in [1, 2] {
            game.apply(p, Command::Pass {}).expect("acknowledged");
        }
        // Phase 2 of the turn's tile ends the first turn part: the same player draws again,
        // in the same turn.
        let events = game.apply(0, Command::Pass {}).expect("phase 2 pass");
        assert!(matches!(
            events.last(),
            Some(Event::TileDrawn { player: 0, .. })
        ));
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::TurnStarted { .. }))
        );
        assert_eq!(game.active(), 0);
        assert!(matches!(
            game.decisions()[..],
            [Decision::PlaceTile { player: 0, .. }]
        ));
        // Its own phase 1 and phase 2; then the turn ends.
        place(&mut game);
        assert!(
            game.decisions()
                .iter()
                .any(|d| matches!(d, Decision::PlaceFollower { player: 0, .. }))
        );
        for p in [1, 2] {
            game.apply(p, Command::Pass {}).expect("acknowledged");
        }
        let events = game.apply(0, Command::Pass {}).expect("phase 2 pass");
        assert!(events.contains(&Event::TurnStarted { player: 1, turn: 2 }));
        assert_eq!(game.placed_tiles().count(), 3);
    }

    #[test]
    fn a_meeple_taken_back_returns_alone_m15() {
        let setup = Setup::new(Colour::ALL[..2].to_vec(), 4);
        let (game, _) = Game::start(setup).expect("valid setup");
        let mut game = game.with_witness(Witness {
            take_back: true,
            quiet: true,
            ..Witness::default()
        });
        let mut rng = 9u64;
        let mut returned_alone = 0;
        while let Some((p, c)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
            let before = game.meeples_on_board();
            let placed = matches!(c, Command::PlaceMeeple { .. });
            let events = game.apply(p, c).expect("legal");
            for (s, b) in game.supplies().iter().zip(game.meeples_on_board()) {
                assert_eq!(s + b, 7, "meeples conserved");
            }
            let turn_ended = events
                .iter()
                .any(|e| matches!(e, Event::TurnStarted { .. } | Event::GameEnded { .. }));
            let scored = events
                .iter()
                .any(|e| matches!(e, Event::FeatureScored { .. } | Event::FieldScored { .. }));
            if turn_ended && !scored && (before[p as usize] > 0 || placed) {
                // Exactly one meeple of the player came back, and nobody else's.
                let back: Vec<_> = events
                    .iter()
                    .filter_map(|e| match e {
                        Event::MeepleReturned { player, .. } => Some(*player),
                        _ => None,
                    })
                    .collect();
                assert_eq!(back, vec![p]);
                returned_alone += 1;
            }
        }
        assert!(returned_alone > 5);
    }

    #[test]
    fn whole_games_with_the_test_module_end_and_every_point_is_one_award_b3_m2() {
        for seed in 0..8 {
            let mut game = witnessed(seed, seed % 2 == 1);
            let mut rng = seed;
            let mut n = 0;
            let mut meeples_placed = 0;
            while let Some((p, c)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
                let (id, _) = game.first_decision().expect("open");
                assert!(game.default_command(id).is_some());
                meeples_placed += usize::from(matches!(c, Command::PlaceMeeple { .. }));
                game.apply(p, c).expect("bot moves are legal");
                for (s, b) in game.supplies().iter().zip(game.meeples_on_board()) {
                    assert_eq!(s + b, 7, "meeples conserved");
                }
                n += 1;
                assert!(n < 3000, "the game must end");
            }
            assert!(game.is_finished());
            assert!(meeples_placed > 0);
            // The ledger of awards adds up to every player's score.
            let mut sums = vec![0u32; 3];
            let ledger = game.witness().map(|w| w.awards.clone()).unwrap_or_default();
            for a in &ledger {
                sums[a.player as usize] += a.points;
            }
            assert_eq!(sums, game.scores());
            assert!(!ledger.is_empty());
        }
    }
}
