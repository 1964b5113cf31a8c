// The Messages (M1–M17) in the page: both pawns of every player on the 50-space track with the
// dark spaces marked, the dispatch stack's size, the standing preference, the buttons that answer
// a pawn choice, a dispatch or a chain, and the countdown of a decision with a deadline.
// Pawns carry their player's letter and a shape (a circle for the scoring pawn, a diamond for the
// messenger), so no one needs to tell colours apart.

import { el, titled } from './tiles.js';
import { COLOURS, DISPATCHES, REASONS, cap, targetWords } from './words.js';

/**
 * @typedef {import('./proto').MatchView} View
 * @typedef {import('./proto').Decision} Decision
 * @typedef {import('./proto').Command} Command
 * @typedef {import('./proto').PawnsView} PawnsView
 */

/** @typedef {import('./proto').Deadline} Deadline */

/**
 * The view's pending deadlines (the server adds them beside the rules' view; absent when none).
 * @param {View} v
 * @returns {Deadline[]}
 */
export const deadlines = (v) => v.deadlines ?? [];

/** Seconds left until `at` (never below 0). @param {number} at */
export const secondsLeft = (at) => Math.max(0, Math.ceil((at - Date.now()) / 1000));

/** A countdown span; `tick` keeps every one of them current. @param {number} at */
export function countdown(at) {
  const s = document.createElement('span');
  s.className = 'countdown';
  s.dataset.at = String(at);
  s.textContent = `${secondsLeft(at)} s`;
  return s;
}

/** Refreshes every countdown on the page (called each second). */
export function tick() {
  for (const s of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.countdown'))) {
    s.textContent = `${secondsLeft(Number(s.dataset.at))} s`;
  }
}

/** M4: a space that draws a dispatch. @param {number} n */
export const dark = (n) => n % 5 === 0;

/** @param {'scoring'|'messenger'} p */
export const pawnName = (p) => (p === 'scoring' ? 'scoring pawn' : 'messenger');

const CELL = 36;
/** Pawn shapes: a circle for the scoring pawn, a diamond for the messenger. */
const SHAPE = { scoring: 'M0,-7.5 a7.5,7.5 0 1,1 -0.1,0 Z', messenger: 'M0,-9 L9,0 L0,9 L-9,0 Z' };

/**
 * The track: spaces 0–49 in five rows of ten, dark spaces (multiples of 5) dark; both pawns of
 * every player on it. A pawn past 50 stands on its space modulo 50 and says so in its title.
 * @param {View} v
 * @returns {SVGSVGElement}
 */
export function drawTrack(v) {
  const svg = /** @type {SVGSVGElement} */ (el('svg', {
    viewBox: `0 0 ${10 * CELL} ${5 * CELL}`, class: 'track', role: 'img',
    'aria-label': 'The scoring track: both pawns of every player',
  }));
  for (let n = 0; n < 50; n++) {
    const [x, y] = [(n % 10) * CELL, Math.floor(n / 10) * CELL];
    const d = dark(n);
    svg.appendChild(el('g', { transform: `translate(${x},${y})`, 'data-space': n, class: d ? 'space dark' : 'space' }, [
      el('rect', { width: CELL, height: CELL }),
      el('text', { x: CELL - 3, y: CELL - 3, class: 'space-no' }, [text(String(n))]),
      ...(d ? [titled(`${n}: a dark space`)] : []),
    ]));
  }
  const players = v.messages?.players ?? [];
  /** @type {Map<number, {seat: number, pawn: 'scoring'|'messenger', at: number}[]>} */
  const bySpace = new Map();
  players.forEach((p, seat) => {
    for (const pawn of /** @type {const} */ (['scoring', 'messenger'])) {
      const at = p[pawn];
      const list = bySpace.get(at % 50) ?? [];
      list.push({ seat, pawn, at });
      bySpace.set(at % 50, list);
    }
  });
  for (const [space, list] of bySpace) {
    // The pawns of a space in a grid of its own, smaller as there are more (twelve at the
    // start of a six-player game): none ever covers another.
    const cols = list.length <= 4 ? 2 : list.length <= 9 ? 3 : 4;
    const rows = Math.ceil(list.length / cols);
    const step = CELL / cols;
    const rowStep = CELL / Math.max(rows, 2);
    const scale = Math.min(1, step / 19, rowStep / 19);
    list.forEach(({ seat, pawn, at }, i) => {
      const colour = v.players[seat]?.colour ?? 'black';
      const c = COLOURS[colour];
      const x = (space % 10) * CELL + step * (i % cols) + step / 2;
      const y = Math.floor(space / 10) * CELL + rowStep * Math.floor(i / cols) + rowStep / 2;
      svg.appendChild(el('g', {
        class: `pawn pawn-${pawn}`, 'data-pawn': `${colour} ${pawn}`, 'data-at': at,
        transform: `translate(${x},${y}) scale(${scale})`,
      }, [
        el('path', { d: SHAPE[pawn], class: 'halo' }),
        el('path', { d: SHAPE[pawn], fill: c.fill }),
        el('text', { y: 3.5, fill: c.ink }, [text(c.letter)]),
        titled(`${cap(colour)}'s ${pawnName(pawn)} on ${at}${at >= 50 ? ` (space ${at % 50})` : ''}`),
      ]));
    });
  }
  return svg;
}

/**
 * A player's pawns in words and glyphs, for the players table: "● 7 ◆ 0".
 * @param {PawnsView} p
 */
export function pawnsHtml(p) {
  const mark = (/** @type {number} */ n) => (n > 0 && dark(n) ? ' dark' : '');
  return `<span class="pawn-s${mark(p.scoring)}" title="scoring pawn">●${p.scoring}</span> ` +
    `<span class="pawn-m${mark(p.messenger)}" title="messenger">◆${p.messenger}</span>`;
}

/**
 * The buttons that answer one of the page's own Messages decisions, or null for other decisions.
 * @param {Decision} d
 * @param {boolean} myTurn
 * @param {(c: Command) => void} send
 * @returns {{hint: string, buttons: HTMLButtonElement[]}|null}
 */
export function decisionControls(d, myTurn, send) {
  /** @param {string} key @param {string} label @param {Command} c */
  const button = (key, label, c) => {
    const b = document.createElement('button');
    b.textContent = label;
    b.dataset.key = key;
    b.className = 'msg-choice';
    b.onclick = () => send(c);
    return b;
  };
  if (d.type === 'choose_pawn') {
    const to = (/** @type {number} */ n) => {
      const t = n + d.points;
      return `${n} → ${t}${dark(t) ? (myTurn ? ' (dark space: a dispatch)' : ' (dark space)') : ''}`;
    };
    return {
      hint: `You score ${d.points} for ${REASONS[d.reason]}: move which pawn? (Tab, Enter)`,
      buttons: [
        button('pawn:scoring', `● Scoring pawn ${to(d.scoring)}`, { type: 'choose_pawn', pawn: 'scoring' }),
        button('pawn:messenger', `◆ Messenger ${to(d.messenger)}`, { type: 'choose_pawn', pawn: 'messenger' }),
      ],
    };
  }
  if (d.type === 'dispatch') {
    const what = DISPATCHES[d.dispatch] ?? '';
    const buttons = [];
    if (d.action) {
      const meeples = d.meeples ?? [];
      if (meeples.length === 0) {
        buttons.push(button('dispatch:action', `Carry it out: ${what}`, { type: 'dispatch_action' }));
      }
      // Without squares: two meeples alike are told apart by a number (the board rings each).
      /** @type {Map<string, number>} */
      const seen = new Map();
      for (const m of meeples) {
        const k = `${m.pos.x},${m.pos.y} ${m.target}`;
        const base = d.dispatch === 8
          ? `Score and take back the meeple on ${targetWords(m.target)}`
          : `Score ${targetWords(m.target)}`;
        const n = (seen.get(base) ?? 0) + 1;
        seen.set(base, n);
        const label = n > 1 ? `${base} (${n})` : base;
        buttons.push(button(`dispatch:${k}`, label, { type: 'dispatch_action', meeple: m }));
      }
    }
    buttons.push(button('dispatch:points', 'Take 2 points instead', { type: 'dispatch_points' }));
    const only = d.action ? '' : ' Nothing to act on: only the 2 points.';
    return { hint: `Dispatch ${d.dispatch}: ${what}.${only}`, buttons };
  }
  if (d.type === 'chain_dispatch') {
    return {
      hint: 'Your dispatch points reached a dark space: draw another dispatch?',
      buttons: [
        button('chain:draw', 'Draw a dispatch', { type: 'draw_dispatch' }),
        button('chain:pass', 'No more', { type: 'pass' }),
      ],
    };
  }
  return null;
}

/** @param {string} s */
function text(s) {
  return /** @type {Element} */ (/** @type {unknown} */ (document.createTextNode(s)));
}
