//! The rules' command application driven by fuzz input: random legal commands (the rules' own
//! bot), legal commands sent by the wrong player, and arbitrary [`Command`] values, from the
//! states those reach.

use crate::bytes::Bytes;
use rules::bot::{random_move, splitmix64};
use rules::maps::{Chip, Grape};
use rules::{
    Colour, Command, Game, Half, MeepleRef, Pawn, PawnPreference, PlayerId, Pos, Rotation, Sale,
    Setup, Side, Target,
};

/// Commands tried per input: enough for a whole base game (about 72 tiles, two or three
/// decisions each) and a bound on the cost of one execution.
const MAX_STEPS: usize = 400;

/// Plays one input; see [`crate::game`].
pub fn run(data: &[u8]) {
    let mut b = Bytes::new(data);
    let setup = setup(&mut b);
    let players = setup.players.len();
    // Every setup built here is valid, so a refusal is a defect too.
    let (mut game, _) = match Game::start(setup.clone()) {
        Ok(started) => started,
        Err(e) => panic!("a valid setup was refused: {e} ({setup:?})"),
    };
    let mut rng = b.u64();
    let mut view = game.view();
    for _ in 0..MAX_STEPS {
        if b.is_empty() {
            break;
        }
        let op = b.u8();
        let legal = random_move(&game, || splitmix64(&mut rng));
        let (player, command, must_pass) = match (op % 4, legal) {
            (0 | 1, Some((player, command))) => (player, command, true),
            (2, Some((player, command))) => {
                // The same command from another seat (or a seat that does not exist).
                let other = (usize::from(player) + 1 + b.below(players)) % (players + 2);
                (other as PlayerId, command, false)
            }
            _ => (b.below(players + 2) as PlayerId, command(&mut b), false),
        };
        // `view` is the state before the command (checked equal to `game.view()` after every
        // step), decisions included, so one full view per step checks both invariants.
        let result = game.apply(player, command.clone());
        match &result {
            Ok(_) => game.refresh_view(&mut view),
            Err(e) => assert!(
                !must_pass,
                "a legal command of the bot was refused: {e} ({player} {command:?})"
            ),
        }
        let now = game.view();
        match result {
            Ok(_) => assert_eq!(view, now, "refresh_view after {command:?}"),
            Err(e) => assert_eq!(view, now, "refused {command:?} changed the state ({e})"),
        }
    }
}

/// Players, seed and modules from the first bytes.
fn setup(b: &mut Bytes) -> Setup {
    let flags = b.u8();
    let players = 2 + usize::from(flags % 5);
    let mut setup = Setup::new(Colour::ALL[..players].to_vec(), b.u64())
        .tollkeepers(flags & 0x08 != 0)
        .messages(flags & 0x10 != 0)
        .traders_builders(flags & 0x80 != 0)
        .inns_cathedrals(b.bool());
    if flags & 0x20 != 0 {
        setup = setup.map("france").chips(flags & 0x40 != 0);
    }
    setup
}

/// Any command, legal or not.
fn command(b: &mut Bytes) -> Command {
    match b.u8() % 10 {
        0 => Command::PlaceTile {
            pos: pos(b),
            rotation: Rotation::ALL[b.below(4)],
        },
        1 => Command::PlaceMeeple {
            target: target(b),
            figure: [
                rules::Figure::Meeple,
                rules::Figure::LargeMeeple,
                rules::Figure::Builder,
                rules::Figure::Pig,
            ][b.below(4)],
        },
        2 => Command::PlaceTollhouse { pos: pos(b) },
        3 => Command::Pass {},
        4 => Command::ChoosePawn {
            pawn: if b.bool() {
                Pawn::Scoring
            } else {
                Pawn::Messenger
            },
        },
        5 => Command::SetPawnPreference {
            preference: [
                None,
                Some(PawnPreference::Scoring),
                Some(PawnPreference::Messenger),
                Some(PawnPreference::DarkInMyTurn),
            ][b.below(4)],
        },
        6 => Command::DispatchAction {
            meeple: b.bool().then(|| MeepleRef {
                pos: pos(b),
                target: target(b),
            }),
        },
        7 => Command::DispatchPoints {},
        8 if b.bool() => Command::TakeDoubleTurn {},
        8 => Command::DrawDispatch {},
        _ => Command::SellWine {
            sale: if b.bool() { Sale::Abroad } else { Sale::Town },
            chips: (0..b.below(4))
                .map(|_| Chip {
                    grape: Grape::ALL[b.below(3)],
                    value: b.u8() % 4,
                })
                .collect(),
        },
    }
}

/// A square near the start, or at the ends of the coordinate range.
fn pos(b: &mut Bytes) -> Pos {
    let mut coord = || match b.u8() {
        0xFF => i32::MAX,
        0xFE => i32::MIN,
        v => i32::from(v as i8) % 24,
    };
    Pos::new(coord(), coord())
}

fn target(b: &mut Bytes) -> Target {
    match b.below(4) {
        0 => Target::Road(Side::ALL[b.below(4)]),
        1 => Target::City(Side::ALL[b.below(4)]),
        2 => Target::Field(Half::ALL[b.below(8)]),
        _ => Target::Monastery,
    }
}
