//! Bots that play a match through [`Follower`]s, one per seat, each answering from its own
//! mirror as a real client would: [`play`] makes uniform random legal moves, [`answer_one`]
//! answers one open decision of any seat (several may be open at once). Seeded: the same seed on
//! the same match makes the same moves.

use crate::CommandOutcome;
use crate::follower::{FollowError, Follower};
use protocol::Seq;
use rules::{Command, Decision, Placement, PlayerId, View};
use std::borrow::BorrowMut;

/// A deterministic random source for the bots (SplitMix64, [`rules::bot::splitmix64`]).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        rules::bot::splitmix64(&mut self.0)
    }

    /// A uniform index below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// A random legal move from the decisions of a mirrored view (`rules::bot` on what a client
/// sees).
pub fn pick_move(view: &View, rng: &mut Rng) -> Option<(PlayerId, Command)> {
    rules::bot::random_move_from(&view.decisions, || rng.next_u64())
}

/// A move from the view; tiles go where they touch the most tiles (random boards sprawl and
/// complete little, so they would rarely reach a dark space and a dispatch).
pub fn compact_move(view: &View, rng: &mut Rng) -> Option<(PlayerId, Command)> {
    let Some(Decision::PlaceTile {
        player, placements, ..
    }) = view.decisions.first()
    else {
        return pick_move(view, rng);
    };
    Some((*player, compact_placement(view, placements, rng)?))
}

/// One of `placements` touching the most placed tiles.
fn compact_placement(view: &View, placements: &[Placement], rng: &mut Rng) -> Option<Command> {
    let touching = |p: rules::Pos| {
        rules::Side::ALL
            .iter()
            .filter(|&&s| view.board.contains_key(&p.step(s).key()))
            .count()
    };
    let best = placements.iter().map(|pl| touching(pl.pos)).max()?;
    let top: Vec<_> = placements
        .iter()
        .filter(|pl| touching(pl.pos) == best)
        .flat_map(|pl| pl.rotations.iter().map(move |&r| (pl.pos, r)))
        .collect();
    let (pos, rotation) = top[rng.below(top.len())];
    Some(Command::PlaceTile { pos, rotation })
}

/// What [`answer_one`] did.
#[derive(Debug, Clone)]
pub struct Answered {
    pub seat: PlayerId,
    /// The decision answered, as the seat saw it.
    pub decision: Decision,
    pub command: Command,
    /// The seat was not the active player.
    pub out_of_turn: bool,
    pub seq: Seq,
}

/// One step of a match played by clients that each answer their own decisions from their own
/// mirror: among the seats with an open decision of their own (several may be open at once),
/// one chosen at random answers its oldest. Tiles go where they touch the most tiles or anywhere
/// (half and half), a wine sale is always made (one of the offered sales), everything else is a
/// uniform legal answer. Then every follower syncs to the new seq. `Ok(None)` once the match is
/// finished.
pub async fn answer_one<F: BorrowMut<Follower>>(
    seats: &mut [F],
    watchers: &mut [F],
    rng: &mut Rng,
) -> Result<Option<Answered>, FollowError> {
    if seats[0].borrow().view()?.finished {
        return Ok(None);
    }
    let mut own: Vec<(usize, PlayerId, View, Decision)> = Vec::new();
    for (i, f) in seats.iter().enumerate() {
        let f = f.borrow();
        let Some(seat) = f.seat else { continue };
        let view = f.view()?;
        if let Some(d) = view.decisions.iter().find(|d| d.player() == seat).cloned() {
            own.push((i, seat, view, d));
        }
    }
    if own.is_empty() {
        return Err(FollowError::NoDecision);
    }
    let (i, seat, view, decision) = own.swap_remove(rng.below(own.len()));
    let command = match &decision {
        Decision::PlaceTile { placements, .. } if rng.below(2) == 0 => {
            compact_placement(&view, placements, rng)
        }
        Decision::SellWine { sales, .. } if !sales.is_empty() => {
            let s = &sales[rng.below(sales.len())];
            Some(Command::SellWine {
                sale: s.sale,
                chips: s.chips.clone(),
            })
        }
        d => rules::bot::random_command(d, || rng.next_u64()),
    }
    .ok_or(FollowError::NoDecision)?;
    let seq = send(seats[i].borrow_mut(), command.clone()).await?;
    sync_all(seats, watchers, seq).await?;
    Ok(Some(Answered {
        seat,
        out_of_turn: seat != view.active,
        decision,
        command,
        seq,
    }))
}

/// Plays random moves until the match is finished or `max_moves` were made; returns the number
/// of moves. `seats` holds one follower per seat (index = seat); every follower in `seats` and
/// `watchers` is synced after each move.
pub async fn play<F: BorrowMut<Follower>>(
    seats: &mut [F],
    watchers: &mut [F],
    rng: &mut Rng,
    max_moves: usize,
) -> Result<usize, FollowError> {
    let mut moves = 0;
    for f in seats.iter_mut().chain(watchers.iter_mut()) {
        f.borrow_mut().sync_first().await?;
    }
    while moves < max_moves {
        let view = seats[0].borrow().view()?;
        if view.finished {
            break;
        }
        let (player, command) = pick_move(&view, rng).ok_or(FollowError::NoDecision)?;
        let seq = send(seats[usize::from(player)].borrow_mut(), command).await?;
        sync_all(seats, watchers, seq).await?;
        moves += 1;
    }
    Ok(moves)
}

/// Sends `command` from `f` and returns the seq it was stored as; a refusal is an error.
async fn send(f: &mut Follower, command: Command) -> Result<Seq, FollowError> {
    let id = f.new_id();
    match f.command(&id, command.clone()).await? {
        CommandOutcome::Accepted { seq, .. } => Ok(seq),
        CommandOutcome::Rejected(error) => Err(FollowError::Refused(Box::new((command, error)))),
    }
}

/// Syncs every follower to `seq`.
async fn sync_all<F: BorrowMut<Follower>>(
    seats: &mut [F],
    watchers: &mut [F],
    seq: Seq,
) -> Result<(), FollowError> {
    for f in seats.iter_mut().chain(watchers.iter_mut()) {
        f.borrow_mut().sync_to(seq).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::{Colour, Game, Setup};

    fn view_after(moves: usize, seed: u64) -> View {
        let (mut game, _) =
            Game::start(Setup::new(vec![Colour::Red, Colour::Blue], seed)).expect("setup");
        let mut rng = Rng::new(seed);
        for _ in 0..moves {
            let (player, command) = pick_move(&game.view(), &mut rng).expect("a move");
            game.apply(player, command).expect("a legal move");
        }
        game.view()
    }

    #[test]
    fn the_same_seed_makes_the_same_moves() {
        assert_eq!(
            serde_json::to_value(view_after(30, 7)).expect("json"),
            serde_json::to_value(view_after(30, 7)).expect("json")
        );
        let mut rng = Rng::new(1);
        assert!((0..1000).all(|_| rng.below(3) < 3));
    }

    #[test]
    fn a_compact_move_touches_the_most_tiles() {
        let view = view_after(20, 3);
        let Some(Decision::PlaceTile { placements, .. }) = view.decisions.first() else {
            panic!("a tile to place after whole turns: {:?}", view.decisions);
        };
        let touching = |p: rules::Pos| {
            rules::Side::ALL
                .iter()
                .filter(|&&s| view.board.contains_key(&p.step(s).key()))
                .count()
        };
        let best = placements.iter().map(|pl| touching(pl.pos)).max();
        let Some((_, Command::PlaceTile { pos, .. })) = compact_move(&view, &mut Rng::new(5))
        else {
            panic!("a tile placement");
        };
        assert_eq!(Some(touching(pos)), best);
    }
}
