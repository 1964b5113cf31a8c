//! The browser client in real Chromium against a real server on 127.0.0.1 with a
//! SQLite store: two players in separate browser contexts play a scenario's game to the end by
//! clicking; a toll is paid and shown; a reload and a server restart both resume the exact state;
//! a spectator follows live; a refused command shows the server's words; keyboard play on a phone
//! viewport; with Inns & Cathedrals and Traders & Builders, the large meeple, builder and pig put
//! by clicking, the double turn taken and goods shown, both offered in the lobby; on the France map, the map drawn, a chip taken and a wine sold by clicking, and
//! refusals off the map and against a border print in words; the admin console lists a played
//! match, steps its board to any seq (as the rules crate replays it), shows the secrets of a
//! finished match, refuses them for a running one, aborts and marks away after a confirmation,
//! and says in words that a token is wrong. The lobby: guests (and a registered account that logs
//! out and in) in separate browser contexts meet in a lobby from the list, pick colours, get ready,
//! the host starts and both play their seat by clicking; a bot seat is added and removed; a private
//! lobby and its match need the invite code; a spectator watches from the list; two players chat
//! at the table; the end of a game names the winner and splits each score by kind, for a player
//! and a late spectator; "My games" follows the turn live, a password change signs another
//! device out, and the console's moderation screen removes a reported line, resolves the report,
//! suspends and lifts an account and hands out a reset link whose page sets a password; the
//! leaderboard and a profile after rated matches, the replay viewer stepping through a finished
//! match, and the your-turn notice (title, browser notification); every page runs clean under
//! the Content-Security-Policy. Each test saves a
//! screenshot under `target/browser-tests/`. Without Chromium the tests are skipped with a notice
//! (and fail with `CI=true`).
//!
//! One file per area; `harness` and `clicks` hold what they share, `cdp` drives Chromium.

mod cdp;
mod clicks;
mod harness;

mod account;
mod admin;
mod chat;
mod clocks;
mod csp;
mod end;
mod expansions;
mod fits;
mod france;
mod happened;
mod history;
mod lobby;
mod messages;
mod play;
mod records;
mod spectator;
mod start;
mod turns;
