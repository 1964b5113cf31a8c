//! The match's clocks: when each open decision opened, which of them have a deadline, the
//! players' game clocks, and who is away. One table, one firing path, one sleep per match.
//!
//! The rules have no clock (invariant 1); the actor feeds [`Deadlines`] the open decisions after
//! every applied command, with the command's stored time and who sent it, and sleeps until
//! [`Deadlines::next_due`] in its select loop (no task per timer). Since a decision's opening
//! time is the stored time of the command after which it first showed, a replay rebuilds the
//! same deadlines and clocks from the log: a restart neither resets nor forgets one.
//!
//! What falls due, and why (the id of the server's command says it, see [`Why`]):
//! - a decision of a player who is not the active one (The Messages' pawn choices): at
//!   `opened + timeout`, the match's decision timeout, clock or not (`server:deadline:<seq>`);
//! - with a game clock, the active player's decisions: when their bank runs out, `running_since
//!   + remaining` (`server:clock:<seq>`); the player is then marked away;
//! - every decision of a player marked away (by their clock running out, an admin, or their
//!   account's suspension or deletion): at once (`server:away:<seq>`), clock or not.
//!
//! Game clocks: only the active player's clock runs, and only while they have a decision open;
//! a non-active player's decision keeps its decision timeout and costs no clock time. The time
//! between two stored commands is taken from the bank of the player whose clock ran (never below
//! zero: time past the flag, a server slow to fire or down, is not owed), and a player gets the
//! increment when their turn ends (the turn number changes), whoever played it.
//!
//! Away marks are stored (`seats.away_since`, also set by an admin) rather than derived from the
//! log, because a player comes back with ANY command from their seat, even one the rules refuse
//! (an away player's turns are played at once, so they could never get one accepted). The view's
//! `away` list is kept a function of the log (so that stored diffs and a rebuilt view agree): the
//! players the server played for by clock or away and who have had no command accepted since.

use protocol::{ClockSettings, ClockView, Deadline, SERVER_COMMAND_PREFIX};
use rules::{DecisionId, Game, PlayerId};
use std::collections::BTreeSet;

/// Wall-clock milliseconds since the Unix epoch: deadlines are sent to clients and outlive the
/// process, so they are not monotonic `Instant`s.
pub type Millis = i64;

/// Wall-clock now, in [`Millis`].
pub fn now_millis() -> Millis {
    chrono::Utc::now().timestamp_millis()
}

fn millis(ms: u64) -> Millis {
    Millis::try_from(ms).unwrap_or(Millis::MAX)
}

/// Why the server applies a decision's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Why {
    /// A non-active player's decision timeout passed.
    Deadline,
    /// The active player's game clock ran out: they are marked away.
    Clock,
    /// The player is marked away: played at once.
    Away,
}

impl Why {
    fn as_str(self) -> &'static str {
        match self {
            Why::Deadline => "deadline",
            Why::Clock => "clock",
            Why::Away => "away",
        }
    }

    /// The id the server's command is stored under: `server:<why>:<seq>`.
    pub fn command_id(self, seq: u64) -> String {
        format!("{SERVER_COMMAND_PREFIX}{}:{seq}", self.as_str())
    }

    /// The reason in a stored command id, if the server sent it.
    fn of(command_id: &str) -> Option<Why> {
        let rest = command_id.strip_prefix(SERVER_COMMAND_PREFIX)?;
        [Why::Deadline, Why::Clock, Why::Away]
            .into_iter()
            .find(|w| rest.starts_with(w.as_str()) && rest[w.as_str().len()..].starts_with(':'))
    }
}

/// Who caused a sync, as the log says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The match's creation (its opening).
    Start,
    /// A command of the player in this seat.
    Player(PlayerId),
    /// The server's default for the player in this seat.
    Server(Why, PlayerId),
}

impl Origin {
    /// The origin of a stored command, read from its id.
    pub fn of(seat: PlayerId, command_id: &str) -> Origin {
        match Why::of(command_id) {
            Some(why) => Origin::Server(why, seat),
            // A server id of an unknown kind counts as a plain deadline (never a player's).
            None if command_id.starts_with(SERVER_COMMAND_PREFIX) => {
                Origin::Server(Why::Deadline, seat)
            }
            None => Origin::Player(seat),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Open {
    player: PlayerId,
    /// The stored time of the command after which the decision first was open.
    opened: Millis,
    /// Its default could not be applied (a bug, logged): not fired again while it stays open.
    stalled: bool,
}

/// One player's game clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Clock {
    /// Left in the bank at `running_since` (or now, when stopped); never negative.
    remaining: Millis,
    running_since: Option<Millis>,
}

/// Every open decision with the time it opened; the game clocks; the away marks; what falls due
/// and when.
#[derive(Debug, Default, Clone)]
pub struct Deadlines {
    timeout: Millis,
    /// The open decisions, by id. A vector: a match has one to a few open, and a map's first
    /// node would take ≈ 240 bytes in every match held in memory.
    open: Vec<(DecisionId, Open)>,
    active: PlayerId,
    /// The game clock's settings; `None`: the match has no clock.
    settings: Option<ClockSettings>,
    /// Per seat.
    clocks: Vec<Clock>,
    /// The current turn and whose it is (whose increment its end brings).
    turn: Option<(u32, PlayerId)>,
    /// The view's `away`: played for by clock or away, nothing accepted from them since.
    shown_away: BTreeSet<PlayerId>,
    /// Players marked away (stored in `seats.away_since`).
    away: BTreeSet<PlayerId>,
    /// Away marks changed here and not yet stored: (seat, away since, or back).
    unsaved: Vec<(PlayerId, Option<Millis>)>,
}

impl Deadlines {
    /// `timeout_ms`: how long a non-active player has to answer.
    pub fn new(timeout_ms: u64) -> Deadlines {
        let mut d = Deadlines::default();
        d.set_timeout(timeout_ms);
        d
    }

    pub fn set_timeout(&mut self, timeout_ms: u64) {
        self.timeout = millis(timeout_ms);
    }

    /// Gives the match a game clock for `players` seats, each with the full bank. Before the
    /// first sync (the clocks start with the match).
    pub fn set_clock(&mut self, settings: Option<ClockSettings>, players: usize) {
        self.settings = settings;
        self.clocks = match settings {
            Some(s) => vec![
                Clock {
                    remaining: millis(s.bank_ms),
                    running_since: None,
                };
                players
            ],
            None => Vec::new(),
        };
    }

    /// [`Deadlines::sync`] with the game's open decisions, active player and turn.
    pub fn sync_game(&mut self, game: &Game, now: Millis, origin: Origin) {
        self.sync(game.open_asks(), game.active(), game.turn(), now, origin);
    }

    /// Feeds the state after a command stored at `now` (or the match's creation) sent by
    /// `origin`: the decisions open now, the active player and the turn number. A decision seen
    /// for the first time opened at `now`; one no longer open is forgotten. The clock that ran
    /// since the last sync is charged, the increment goes to the player whose turn ended, and
    /// the active player's clock runs from `now` if they have a decision open.
    pub fn sync(
        &mut self,
        open: impl IntoIterator<Item = (DecisionId, PlayerId)>,
        active: PlayerId,
        turn: u32,
        now: Millis,
        origin: Origin,
    ) {
        let mut next: Vec<(DecisionId, Open)> = Vec::new();
        for (id, player) in open {
            let mut entry = self.get(id).copied().unwrap_or(Open {
                player,
                opened: now,
                stalled: false,
            });
            entry.player = player;
            match next.binary_search_by_key(&id, |&(i, _)| i) {
                Ok(at) => next[at].1 = entry,
                Err(at) => next.insert(at, (id, entry)),
            }
        }
        self.open = next;
        self.active = active;
        match origin {
            Origin::Player(p) => {
                self.shown_away.remove(&p);
            }
            Origin::Server(Why::Clock | Why::Away, p) => {
                self.shown_away.insert(p);
            }
            Origin::Server(Why::Deadline, _) | Origin::Start => {}
        }
        let Some(settings) = self.settings else {
            return;
        };
        for c in &mut self.clocks {
            if let Some(since) = c.running_since.take() {
                let spent = now.saturating_sub(since).max(0);
                c.remaining = c.remaining.saturating_sub(spent).max(0);
            }
        }
        match self.turn {
            Some((t, owner)) if t != turn => {
                if let Some(c) = self.clocks.get_mut(usize::from(owner)) {
                    c.remaining = c.remaining.saturating_add(millis(settings.increment_ms));
                }
                self.turn = Some((turn, active));
            }
            Some(_) => {}
            None => self.turn = Some((turn, active)),
        }
        if self.open.iter().any(|(_, o)| o.player == active)
            && let Some(c) = self.clocks.get_mut(usize::from(active))
        {
            c.running_since = Some(now);
        }
    }

    /// The open decision `id`.
    fn get(&self, id: DecisionId) -> Option<&Open> {
        self.open.iter().find(|(i, _)| *i == id).map(|(_, o)| o)
    }

    /// When `o` falls due and why, if it does.
    fn due_of(&self, o: &Open) -> Option<(Millis, Why)> {
        if o.stalled {
            return None;
        }
        if self.away.contains(&o.player) {
            return Some((o.opened, Why::Away));
        }
        if o.player != self.active {
            return Some((o.opened.saturating_add(self.timeout), Why::Deadline));
        }
        let c = self.clocks.get(usize::from(o.player))?;
        let since = c.running_since?;
        Some((since.saturating_add(c.remaining), Why::Clock))
    }

    /// The decisions that may still fire: (at, id, why), earliest first (ties by id, the order
    /// they opened in).
    fn firing(&self) -> Vec<(Millis, DecisionId, Why)> {
        let mut v: Vec<(Millis, DecisionId, Why)> = self
            .open
            .iter()
            .filter_map(|(id, o)| self.due_of(o).map(|(at, why)| (at, *id, why)))
            .collect();
        v.sort_unstable();
        v
    }

    /// When the next deadline falls, if any.
    pub fn next_due(&self) -> Option<Millis> {
        self.firing().first().map(|&(at, _, _)| at)
    }

    /// The earliest decision due at `now`, and why. The actor fires one, syncs, and asks again:
    /// a default may close or open other decisions (an away player's next one is due at once).
    pub fn first_due(&self, now: Millis) -> Option<(DecisionId, Why)> {
        self.firing()
            .first()
            .filter(|&&(at, _, _)| at <= now)
            .map(|&(_, id, why)| (id, why))
    }

    /// The decisions whose deadline has passed at `now`, earliest first.
    pub fn due(&self, now: Millis) -> Vec<DecisionId> {
        self.firing()
            .into_iter()
            .take_while(|&(at, _, _)| at <= now)
            .map(|(_, id, _)| id)
            .collect()
    }

    /// The default of `id` could not be applied: it does not fire again while it stays open.
    pub fn stall(&mut self, id: DecisionId) {
        if let Some((_, o)) = self.open.iter_mut().find(|(i, _)| *i == id) {
            o.stalled = true;
        }
    }

    /// Whether any deadline is pending (the match must stay in memory to fire it).
    pub fn is_pending(&self) -> bool {
        self.next_due().is_some()
    }

    /// Whether the match has a game clock.
    pub fn has_clock(&self) -> bool {
        self.settings.is_some()
    }

    /// The away marks as stored (on load, or an admin's change): no write follows.
    pub fn set_away(&mut self, player: PlayerId, away: bool) {
        if away {
            self.away.insert(player);
        } else {
            self.away.remove(&player);
        }
    }

    /// The player's clock ran out at `now`: marked away, to be stored.
    pub fn mark_away(&mut self, player: PlayerId, now: Millis) {
        if self.away.insert(player) {
            self.unsaved.push((player, Some(now)));
        }
    }

    /// A command came from the player's seat: they are back (to be stored), if they were away.
    pub fn come_back(&mut self, player: PlayerId) {
        if self.away.remove(&player) {
            self.unsaved.push((player, None));
        }
    }

    /// Whether the player is marked away.
    pub fn is_away(&self, player: PlayerId) -> bool {
        self.away.contains(&player)
    }

    /// The away marks to store, oldest first.
    pub fn take_unsaved(&mut self) -> Vec<(PlayerId, Option<Millis>)> {
        std::mem::take(&mut self.unsaved)
    }

    /// The deadlines as clients see them (non-active players' decisions), sorted by player,
    /// then time.
    pub fn wire(&self) -> Vec<Deadline> {
        let mut v: Vec<Deadline> = self
            .open
            .iter()
            .map(|(_, o)| o)
            .filter(|o| o.player != self.active)
            .map(|o| Deadline {
                player: o.player,
                at: u64::try_from(o.opened.saturating_add(self.timeout)).unwrap_or(0),
            })
            .collect();
        v.sort_unstable_by_key(|d| (d.player, d.at));
        v
    }

    /// The game clocks as clients see them, in seat order; empty without a clock.
    pub fn clocks_wire(&self) -> Vec<ClockView> {
        self.clocks
            .iter()
            .enumerate()
            .map(|(i, c)| ClockView {
                player: PlayerId::try_from(i).unwrap_or(PlayerId::MAX),
                remaining_ms: u64::try_from(c.remaining).unwrap_or(0),
                running_since: c.running_since.and_then(|s| u64::try_from(s).ok()),
            })
            .collect()
    }

    /// The view's `away` list, sorted.
    pub fn away_wire(&self) -> Vec<PlayerId> {
        self.shown_away.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: u64 = 1_000;

    fn d(id: u32) -> DecisionId {
        DecisionId(id)
    }

    /// Only the decisions of non-active players have a deadline, at the time they opened plus
    /// the timeout; a later sync keeps that time.
    #[test]
    fn non_active_decisions_get_opened_plus_timeout() {
        let mut dl = Deadlines::new(T);
        // Active player 0 places a tile: no deadline.
        dl.sync([(d(0), 0)], 0, 1, 100, Origin::Start);
        assert_eq!(dl.next_due(), None);
        assert!(dl.wire().is_empty());
        assert!(!dl.is_pending());
        // Two pawn choices open at 500: the active player's and player 1's.
        dl.sync([(d(1), 0), (d(2), 1)], 0, 1, 500, Origin::Start);
        assert_eq!(dl.next_due(), Some(1_500));
        assert_eq!(
            dl.wire(),
            [Deadline {
                player: 1,
                at: 1_500
            }]
        );
        // Player 0 answers at 900: player 1's deadline keeps its time.
        dl.sync([(d(2), 1)], 0, 1, 900, Origin::Start);
        assert_eq!(dl.next_due(), Some(1_500));
        assert_eq!(dl.due(1_499), []);
        assert_eq!(dl.due(1_500), [d(2)]);
        // Player 1 answers: nothing pending.
        dl.sync([(d(3), 1)], 1, 1, 1_200, Origin::Start);
        assert_eq!(dl.next_due(), None);
        assert!(dl.wire().is_empty());
    }

    /// Several due at once come earliest first, then by id; the wire is sorted by player.
    #[test]
    fn due_order_and_wire_order() {
        let mut dl = Deadlines::new(T);
        dl.sync([(d(5), 2)], 0, 1, 10, Origin::Start);
        dl.sync([(d(5), 2), (d(6), 1), (d(7), 3)], 0, 1, 20, Origin::Start);
        dl.sync(
            [(d(5), 2), (d(6), 1), (d(7), 3), (d(8), 1)],
            0,
            1,
            20,
            Origin::Start,
        );
        assert_eq!(dl.due(5_000), [d(5), d(6), d(7), d(8)]);
        assert_eq!(dl.due(1_010), [d(5)]);
        let wire: Vec<(u8, u64)> = dl.wire().iter().map(|w| (w.player, w.at)).collect();
        assert_eq!(wire, [(1, 1_020), (1, 1_020), (2, 1_010), (3, 1_020)]);
    }

    /// A stalled default is not fired again while its decision stays open; a decision reopened
    /// under a new id is armed again.
    #[test]
    fn stalled_decisions_do_not_fire_again() {
        let mut dl = Deadlines::new(T);
        dl.sync([(d(1), 1)], 0, 1, 0, Origin::Start);
        dl.stall(d(1));
        assert_eq!(dl.due(10_000), []);
        assert_eq!(dl.next_due(), None);
        assert_eq!(dl.wire().len(), 1, "still shown while open");
        dl.sync([(d(2), 1)], 0, 1, 50, Origin::Start);
        assert_eq!(dl.due(10_000), [d(2)]);
    }

    /// A replay that feeds the same log (ids and stored times) gives the same deadlines as live
    /// play did, whatever the clock says now: a restart resets nothing.
    #[test]
    fn a_replay_rebuilds_the_same_deadlines() {
        /// One stored command: the decisions open after it, the active player, its time.
        type Record<'a> = (&'a [(DecisionId, PlayerId)], PlayerId, Millis);
        let log: [Record<'_>; 3] = [
            (&[(d(0), 0)], 0, 1_000),
            (&[(d(1), 1), (d(2), 0)], 0, 2_000),
            (&[(d(1), 1)], 0, 3_000),
        ];
        let mut live = Deadlines::new(T);
        for (open, active, at) in log {
            live.sync(open.iter().copied(), active, 1, at, Origin::Start);
        }
        let mut replayed = Deadlines::default();
        for (open, active, at) in log {
            replayed.sync(open.iter().copied(), active, 1, at, Origin::Start);
        }
        replayed.set_timeout(T);
        assert_eq!(replayed.wire(), live.wire());
        assert_eq!(replayed.next_due(), Some(3_000));
    }

    /// An active player's decision has no deadline even if it is the only one open, and a
    /// decision whose player becomes the active one loses its deadline.
    #[test]
    fn the_active_player_has_no_deadline() {
        let mut dl = Deadlines::new(T);
        dl.sync([(d(1), 1)], 0, 1, 0, Origin::Start);
        assert!(dl.is_pending());
        dl.sync([(d(1), 1)], 1, 1, 10, Origin::Start);
        assert!(!dl.is_pending());
        assert!(dl.wire().is_empty());
    }

    const BANK: u64 = 10_000;
    const INC: u64 = 2_000;

    fn clocked(players: usize) -> Deadlines {
        let mut dl = Deadlines::new(T);
        dl.set_clock(
            Some(ClockSettings {
                bank_ms: BANK,
                increment_ms: INC,
            }),
            players,
        );
        dl
    }

    /// (remaining, running_since) per seat.
    fn clocks(dl: &Deadlines) -> Vec<(u64, Option<u64>)> {
        dl.clocks_wire()
            .iter()
            .map(|c| (c.remaining_ms, c.running_since))
            .collect()
    }

    /// Only the active player's clock runs, while they have a decision open; the time between
    /// two commands is charged to it, and the increment comes when their turn ends.
    #[test]
    fn the_active_players_clock_runs_and_gets_the_increment() {
        let mut dl = clocked(2);
        // Turn 1, red (0) to place a tile, from 1_000.
        dl.sync([(d(0), 0)], 0, 1, 1_000, Origin::Start);
        assert_eq!(clocks(&dl), [(BANK, Some(1_000)), (BANK, None)]);
        assert_eq!(dl.next_due(), Some(1_000 + 10_000), "the flag");
        // Red places at 4_000 (3 s spent); the meeple decision keeps the clock running.
        dl.sync([(d(1), 0)], 0, 1, 4_000, Origin::Player(0));
        assert_eq!(clocks(&dl), [(7_000, Some(4_000)), (BANK, None)]);
        assert_eq!(dl.next_due(), Some(11_000), "the flag does not move");
        // Red passes at 5_000: turn 2 is blue's; red gets the increment.
        dl.sync([(d(2), 1)], 1, 2, 5_000, Origin::Player(0));
        assert_eq!(clocks(&dl), [(6_000 + INC, None), (BANK, Some(5_000))]);
        assert_eq!(dl.next_due(), Some(15_000));
        assert!(dl.wire().is_empty(), "the clock is not a deadline");
        // A non-active player's decision in blue's turn: its deadline, no clock of red's runs.
        dl.sync([(d(3), 1), (d(4), 0)], 1, 2, 6_000, Origin::Player(1));
        assert_eq!(clocks(&dl), [(8_000, None), (9_000, Some(6_000))]);
        assert_eq!(
            dl.wire(),
            [Deadline {
                player: 0,
                at: 7_000
            }]
        );
        assert_eq!(dl.first_due(7_000), Some((d(4), Why::Deadline)));
        assert_eq!(dl.first_due(6_999), None);
    }

    /// The flag falls at `running_since + remaining`; a default applied late charges no more
    /// than the bank (never below zero), and the increment still comes at the turn's end.
    #[test]
    fn the_flag_and_time_past_it() {
        let mut dl = clocked(2);
        dl.sync([(d(0), 0)], 0, 1, 0, Origin::Start);
        assert_eq!(dl.first_due(9_999), None);
        assert_eq!(dl.first_due(10_000), Some((d(0), Why::Clock)));
        dl.mark_away(0, 10_000);
        assert_eq!(dl.take_unsaved(), [(0, Some(10_000))]);
        // Fired 5 s late (a server down): the bank is empty, not negative.
        dl.sync([(d(1), 0)], 0, 1, 15_000, Origin::Server(Why::Clock, 0));
        assert_eq!(clocks(&dl), [(0, Some(15_000)), (BANK, None)]);
        assert_eq!(dl.away_wire(), [0]);
        // Away: the next decision is due at once.
        assert_eq!(dl.first_due(15_000), Some((d(1), Why::Away)));
        dl.sync([(d(2), 1)], 1, 2, 15_001, Origin::Server(Why::Away, 0));
        assert_eq!(clocks(&dl), [(INC, None), (BANK, Some(15_001))]);
        // Red comes back (a command from the seat): no longer due at once; stored as back.
        dl.sync([(d(3), 0)], 0, 3, 16_000, Origin::Player(1));
        assert_eq!(dl.first_due(16_000), Some((d(3), Why::Away)));
        dl.come_back(0);
        dl.come_back(0);
        assert_eq!(dl.take_unsaved(), [(0, None)], "one write");
        assert_eq!(dl.first_due(16_000), None);
        assert_eq!(dl.next_due(), Some(16_000 + INC as Millis));
        // The view's mark goes with red's first accepted command.
        assert_eq!(dl.away_wire(), [0]);
        dl.sync([(d(4), 0)], 0, 3, 16_500, Origin::Player(0));
        assert!(dl.away_wire().is_empty());
    }

    /// Without a clock: no clock entries and the active player never falls due, unless marked
    /// away (an admin's mark, a suspended or deleted account): then at once.
    #[test]
    fn no_clock_no_flag() {
        let mut dl = Deadlines::new(T);
        dl.set_clock(None, 2);
        dl.sync([(d(0), 0)], 0, 1, 0, Origin::Start);
        assert!(dl.clocks_wire().is_empty());
        assert_eq!(dl.next_due(), None);
        assert!(!dl.has_clock());
        dl.set_away(0, true);
        assert_eq!(dl.first_due(0), Some((d(0), Why::Away)));
    }

    /// A replay of the same log (times and origins) gives the same clocks, flag and view marks,
    /// whatever the time now: a restart keeps a turn-based bank where it was.
    #[test]
    fn a_replay_rebuilds_the_same_clocks() {
        const DAY: Millis = 86_400_000;
        let settings = ClockSettings {
            bank_ms: 3 * DAY as u64,
            increment_ms: DAY as u64,
        };
        type Record = (Vec<(DecisionId, PlayerId)>, PlayerId, u32, Millis, Origin);
        let log: Vec<Record> = vec![
            (vec![(d(0), 0)], 0, 1, 0, Origin::Start),
            (vec![(d(1), 1)], 1, 2, 2 * DAY, Origin::Player(0)),
            (vec![(d(2), 0)], 0, 3, 3 * DAY + 5, Origin::Player(1)),
        ];
        let run = || {
            let mut dl = Deadlines::new(T);
            dl.set_clock(Some(settings), 2);
            for (open, active, turn, at, origin) in &log {
                dl.sync(open.iter().copied(), *active, *turn, *at, *origin);
            }
            dl
        };
        let (a, b) = (run(), run());
        assert_eq!(a.clocks_wire(), b.clocks_wire());
        assert_eq!(
            clocks(&a),
            [
                (2 * DAY as u64, Some(3 * DAY as u64 + 5)),
                (3 * DAY as u64 - 5, None)
            ]
        );
        assert_eq!(a.next_due(), Some(5 * DAY + 5));
    }

    /// Command ids tell who sent a command and why.
    #[test]
    fn origins_from_command_ids() {
        assert_eq!(Origin::of(1, "c-1"), Origin::Player(1));
        assert_eq!(
            Origin::of(1, "server:clock:7"),
            Origin::Server(Why::Clock, 1)
        );
        assert_eq!(Origin::of(0, "server:away:8"), Origin::Server(Why::Away, 0));
        assert_eq!(
            Origin::of(0, "server:deadline:9"),
            Origin::Server(Why::Deadline, 0)
        );
        assert_eq!(
            Origin::of(0, "server:other"),
            Origin::Server(Why::Deadline, 0)
        );
        assert_eq!(Why::Clock.command_id(12), "server:clock:12");
    }
}
