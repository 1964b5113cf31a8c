// The replay page (/replay?match=ID&seq=N): a finished match stepped through, first, previous,
// next, last or any step, each step's events in words (the play page's wording), the board as
// the server replays it (the play page's board), and every player's score over the match as an
// inline SVG chart. The URL names the match and the step, so it can be shared; a private
// match's replay opens for its players only (the server decides, with the session cookie).

import { Board } from './board.js';
import { COLOURS, cap, eventWords, playerNaming } from './words.js';
import { bindStepper, clampSeq, showStep } from './stepper.js';

/**
 * @typedef {import('./tiles.js').Catalogue} Catalogue
 * @typedef {import('./proto').MatchReplay} MatchReplay
 * @typedef {import('./proto').ErrorBody} ErrorBody
 */

/** The refusals a reader meets, in words. @type {Record<string, string>} */
const REFUSED = {
  not_finished: 'This match is not over yet: its replay opens at the end.',
  not_your_seat: 'This private match can be replayed by its players only.',
  invite_required: 'This private match can be replayed by its players only.',
  unknown_match: 'There is no such match.',
  malformed: 'That step is not in this match.',
};

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * @param {string} tag
 * @param {Record<string, string>} [attrs]
 * @param {(Node|string)[]} [children]
 */
function h(tag, attrs = {}, children = []) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

/** @param {string} tag @param {Record<string, string|number>} attrs */
function svg(tag, attrs) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** @param {unknown} e */
function showError(e) {
  const box = $('error');
  box.hidden = e === null;
  box.textContent = e === null ? '' : e instanceof Error ? e.message : String(e);
}

const params = new URLSearchParams(location.search);
const matchId = params.get('match') ?? '';
/** @type {Board|null} */
let board = null;
/** @type {Map<string, import('./tiles.js').TileDesign>} */
let designs = new Map();
/** @type {MatchReplay|null} */
let shown = null;
const stepButtons = {
  first: /** @type {HTMLButtonElement} */ ($('r-first')),
  prev: /** @type {HTMLButtonElement} */ ($('r-prev')),
  next: /** @type {HTMLButtonElement} */ ($('r-next')),
  last: /** @type {HTMLButtonElement} */ ($('r-last-btn')),
};
/** Bumped by every step, so that an older answer arriving late draws nothing. */
let want = 0;

async function ensureBoard() {
  if (board) return board;
  const catalogue = /** @type {Catalogue} */ (await (await fetch('/api/tiles')).json());
  designs = new Map(catalogue.tiles.map((t) => [t.id, t]));
  const nothing = () => {};
  board = new Board(/** @type {SVGSVGElement} */ (/** @type {unknown} */ ($('board'))), designs, {
    square: nothing, preview: nothing, meeple: nothing, tollhouse: nothing, pick: nothing,
  });
  return board;
}

/** Asks the server for the match at `seq` (`null`: the end) and shows it. @param {number|null} seq */
async function step(seq) {
  const ticket = ++want;
  const q = seq === null ? '' : `?seq=${seq}`;
  const res = await fetch(`/api/matches/${encodeURIComponent(matchId)}/replay${q}`, { credentials: 'same-origin' });
  const json = await res.json().catch(() => ({ code: 'internal', message: `HTTP ${res.status}` }));
  if (ticket !== want) return;
  if (!res.ok) {
    const body = /** @type {ErrorBody} */ (json);
    throw new Error(`${REFUSED[body.code] ?? 'The server refused.'} (${body.message})`);
  }
  showError(null);
  draw(/** @type {MatchReplay} */ (json), await ensureBoard());
}

/** @param {MatchReplay} r @param {Board} b */
function draw(r, b) {
  shown = r;
  const v = r.view;
  const seq = r.step.seq;
  const colours = v.players.map((p) => p.colour);
  const names = v.players.map((p, i) => v.names?.[i]?.name ?? cap(p.colour));
  $('replay-page').hidden = false;
  $('r-seq').textContent = String(seq);
  $('r-last').textContent = String(r.last_seq);
  const to = /** @type {HTMLInputElement} */ ($('r-to'));
  to.max = String(r.last_seq);
  to.value = String(seq);
  showStep(stepButtons, seq, r.last_seq);
  $('r-where').textContent = names.join(' · ');
  document.title = `Replay, step ${seq} — Carcassonne`;
  const naming = playerNaming((id) => designs.get(id));
  const lines = r.step.events
    .map((e, i) => eventWords(e, colours, r.step.events.slice(0, i), naming))
    .filter((l) => l !== null);
  const who = r.step.seat === undefined || r.step.seat === null ? 'The opening' : `${names[r.step.seat] ?? ''}${r.step.by_server ? ' (played by the server)' : ''}`;
  $('r-events').replaceChildren(h('li', { class: 'who' }, [`${who}:`]), ...lines.map((l) => h('li', {}, [l])));
  $('r-players').replaceChildren(...v.players.map((p, i) => {
    const sw = h('span', { class: 'swatch' }, [COLOURS[p.colour].letter]);
    sw.style.background = COLOURS[p.colour].fill;
    sw.style.color = COLOURS[p.colour].ink;
    return h('tr', { 'data-player': p.colour }, [h('td', {}, [sw, ` ${names[i]}`]), h('td', { class: 'num score' }, [String(p.score)])]);
  }));
  drawChart(r, colours.map((c) => COLOURS[c].fill));
  b.render({ view: v, legal: [], selected: null, fits: false, targets: null, focusTarget: null, mine: false, placing: false });
  const url = new URL(location.href);
  url.search = `?match=${encodeURIComponent(r.match_id)}&seq=${seq}`;
  history.replaceState(null, '', url);
  /** @type {HTMLInputElement} */ ($('r-link')).value = url.href;
  $('board').dataset.seq = String(seq);
  document.body.dataset.seq = String(seq);
}

/** Every player's score after each step, with the step shown marked. @param {MatchReplay} r @param {string[]} fills */
function drawChart(r, fills) {
  const chart = $('r-chart');
  chart.replaceChildren();
  const [w, ht, pad] = [400, 160, 16];
  const top = Math.max(1, ...r.scores.flat());
  const n = Math.max(1, r.scores.length - 1);
  /** @param {number} i */
  const x = (i) => pad + (i * (w - 2 * pad)) / n;
  /** @param {number} s */
  const y = (s) => ht - pad - (s * (ht - 2 * pad)) / top;
  chart.append(svg('line', { class: 'axis', x1: pad, y1: ht - pad, x2: w - pad, y2: ht - pad }));
  const label = svg('text', { x: 2, y: pad });
  label.textContent = String(top);
  chart.append(label);
  fills.forEach((fill, p) => {
    const d = r.scores.map((s, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(s[p] ?? 0).toFixed(1)}`).join(' ');
    chart.append(svg('path', { class: 'line', d, stroke: fill, 'data-seat': p }));
  });
  chart.append(svg('line', { class: 'now', x1: x(r.step.seq), y1: pad, x2: x(r.step.seq), y2: ht - pad }));
}

/** Steps and shows what the server refused. @param {number} seq */
function go(seq) {
  step(clampSeq(seq, shown?.last_seq ?? 0)).catch(showError);
}

bindStepper(stepButtons, {
  at: () => shown?.step.seq ?? 0,
  end: () => shown?.last_seq ?? 0,
  go,
}, () => shown !== null, { zoom: (f) => board?.zoom(f), fit: () => board?.fit() });
$('r-jump').addEventListener('submit', (e) => {
  e.preventDefault();
  go(Number(/** @type {HTMLInputElement} */ ($('r-to')).value));
});
$('zoom-in').addEventListener('click', () => board?.zoom(1.25));
$('zoom-out').addEventListener('click', () => board?.zoom(0.8));
$('zoom-fit').addEventListener('click', () => board?.fit());

if (!matchId) showError('No match named: the link needs ?match=ID.');
else {
  const s = params.get('seq');
  step(s === null ? null : Number(s)).catch(showError);
}
