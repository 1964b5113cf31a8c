// @ts-check
// The end of a game: who won, the ranking, and each player's points by kind of scoring, from
// the view's `scored` (so a reload, a late spectator and a player see the same).

import { COLOURS } from './words.js';

/** The kinds of scoring, in the order the table shows them. */
const KINDS = /** @type {const} */ ([
  ['roads', 'Roads'],
  ['cities', 'Cities'],
  ['monasteries', 'Monasteries'],
  ['fields', 'Fields'],
  ['tolls', 'Tolls'],
  ['dispatches', 'Dispatches'],
  ['chips', 'Chips'],
  ['wine', 'Wine'],
  ['goods', 'Goods majorities'],
  ['start', 'Start'],
]);

/**
 * The banner's heading: the winner (or those who share the win) and the winning score.
 * @param {{colour: string, score: number}[]} players
 * @param {number | null} seat the page's own seat
 * @param {string[]} names each seat's name
 */
export function winnerLine(players, seat, names) {
  const best = Math.max(...players.map((p) => p.score));
  const won = players.flatMap((p, i) => (p.score === best ? [i] : []));
  const shown = won.map((i) => names[i] + (i === seat ? ' (you)' : ''));
  const pts = `${best} point${best === 1 ? '' : 's'}`;
  return shown.length > 1
    ? `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]} share the win with ${pts}`
    : `${shown[0]} wins with ${pts}`;
}

/**
 * Fills the end-of-game section: hidden while the game runs.
 * @param {HTMLElement} section
 * @param {import('./proto').View} v
 * @param {number | null} seat
 * @param {string[]} names each seat's name (an account's, or the colour's)
 */
export function renderEnd(section, v, seat, names) {
  section.hidden = !v.finished;
  if (!v.finished) return;
  const heading = /** @type {HTMLElement} */ (section.querySelector('h2'));
  heading.textContent = winnerLine(v.players, seat, names);
  const kinds = KINDS.filter(([k]) => v.players.some((p) => (p.scored?.[k] ?? 0) > 0));
  // One column per player, best first (equal scores share a rank, then seat order); one row per
  // kind of scoring that scored at all, then the totals: narrow enough for the side panel.
  const order = v.players.map((p, i) => ({ p, i })).sort((a, b) => b.p.score - a.p.score || a.i - b.i);
  const table = /** @type {HTMLTableElement} */ (section.querySelector('table'));
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  head.append(document.createElement('th'));
  for (const { p, i } of order) {
    const th = document.createElement('th');
    th.dataset.player = p.colour;
    const rank = 1 + v.players.filter((o) => o.score > p.score).length;
    const c = COLOURS[p.colour];
    th.title = names[i] + (i === seat ? ' (you)' : '');
    th.innerHTML = `${rank}. <span class="swatch" data-fill="${c.fill}" data-ink="${c.ink}">${c.letter}</span>`;
    head.append(th);
  }
  const body = table.createTBody();
  /** @param {string} name @param {(p: import('./proto').PlayerView) => number} points */
  const row = (name, points) => {
    const tr = body.insertRow();
    const th = document.createElement('th');
    th.textContent = name;
    tr.append(th);
    for (const { p } of order) tr.insertCell().textContent = String(points(p));
    return tr;
  };
  for (const [k, name] of kinds) row(name, (p) => p.scored?.[k] ?? 0);
  row('Total', (p) => p.score).className = 'total';
}
