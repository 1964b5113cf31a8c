// Game clocks in the page: a countdown per player, counted locally from the view's
// `remaining_ms` and `running_since` (the server sends no diff per second), and who is away.

/**
 * @typedef {import('./proto').MatchView} View
 * @typedef {import('./proto').ClockView} ClockView
 */

/** The view's clocks, in seat order (absent without a clock). @param {View} v */
export const clocks = (v) => v.clocks ?? [];

/** Whether the server plays for this player (their clock ran out, or they are away). @param {View} v @param {number} p */
export const isAway = (v, p) => (v.away ?? []).includes(p);

/** Milliseconds left now on a clock (never below 0). @param {number} remaining @param {number | undefined} since */
export const leftNow = (remaining, since) => Math.max(0, since ? remaining - (Date.now() - since) : remaining);

/** `4:59`, `1:02:03`, or `2 d 5 h` for a turn-based bank. @param {number} ms */
export function clockText(ms) {
  const s = Math.ceil(ms / 1000);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const two = (/** @type {number} */ n) => String(n).padStart(2, '0');
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h}:${two(m)}:${two(s % 60)}`;
  return `${m}:${two(s % 60)}`;
}

/**
 * One player's clock as a span; `tickClocks` keeps a running one current.
 * @param {ClockView} c
 * @param {boolean} away
 */
export function clockSpan(c, away) {
  const s = document.createElement('span');
  s.className = `clock${c.running_since ? ' running' : ''}`;
  s.dataset.remaining = String(c.remaining_ms);
  if (c.running_since) s.dataset.since = String(c.running_since);
  s.textContent = clockText(leftNow(c.remaining_ms, c.running_since ?? undefined)) + (away ? ' (away)' : '');
  s.title = away ? 'The server plays for this player until they send a move' : c.running_since ? 'running' : 'stopped';
  return s;
}

/** Refreshes every running clock on the page (called each second). */
export function tickClocks() {
  for (const s of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.clock[data-since]'))) {
    const away = s.textContent?.endsWith('(away)') ? ' (away)' : '';
    s.textContent = clockText(leftNow(Number(s.dataset.remaining), Number(s.dataset.since))) + away;
  }
}
