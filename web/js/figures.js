// The figures beyond the meeple (the large meeple of Inns & Cathedrals, the builder and pig of
// Traders & Builders) and the goods tokens: how each is named, drawn on the board (a shape of its
// own, not a colour alone) and counted in the player panel, which targets the placement step
// offers for each, and the buttons of the builder's double turn.

import { el, GOODS } from './tiles.js';

/**
 * @typedef {'meeple'|'large_meeple'|'builder'|'pig'} Figure
 * @typedef {import('./proto').Decision} Decision
 * @typedef {import('./proto').Command} Command
 * @typedef {import('./tiles.js').Goods} Goods
 */

/** The figures in the order the placement step offers them. @type {Figure[]} */
export const FIGURES = ['meeple', 'large_meeple', 'builder', 'pig'];

/** Each figure in words. @type {Record<Figure, string>} */
export const FIGURE_NAMES = {
  meeple: 'meeple',
  large_meeple: 'large meeple',
  builder: 'builder',
  pig: 'pig',
};

/**
 * The targets an open `place_follower` decision offers each figure (empty when none).
 * @param {Decision} d
 * @param {Figure} f
 * @returns {string[]}
 */
export function figureTargets(d, f) {
  if (d.type !== 'place_follower') return [];
  const list = f === 'meeple' ? d.meeple_targets
    : f === 'large_meeple' ? d.large_meeple_targets
      : f === 'builder' ? d.builder_targets : d.pig_targets;
  return list ?? [];
}

/**
 * A figure on the board in its owner's colour: the meeple's outline (bigger and bolder for the
 * large meeple), the builder as a figure with a hammer, the pig as a pig; each with the colour's
 * letter and a title in words.
 * @param {Figure} f
 * @param {{fill: string, ink: string, letter: string}} c
 * @returns {SVGElement[]}
 */
export function figureShape(f, c) {
  const meeple = 'M0,-13 a5,5 0 1,1 0.1,0 M-10,12 L-10,4 L-4,-4 L4,-4 L10,4 L10,12 Z';
  if (f === 'large_meeple') {
    return [
      el('path', { d: meeple, fill: c.fill, class: 'meeple-body', transform: 'translate(0,4) scale(1.4)' }),
      el('text', { y: 16, class: 'meeple-letter', fill: c.ink }, [textNode(c.letter)]),
    ];
  }
  if (f === 'builder') {
    return [
      el('path', { d: 'M0,-15 a5,5 0 1,1 0.1,0 M-8,12 L-8,-4 L8,-4 L8,12 Z M8,-3 L15,-10 M12,-13 L18,-7', fill: c.fill, class: 'builder-body' }),
      el('text', { y: 8, class: 'meeple-letter', fill: c.ink }, [textNode(c.letter)]),
    ];
  }
  if (f === 'pig') {
    return [
      el('ellipse', { rx: 11, ry: 7, fill: c.fill, class: 'pig-body' }),
      el('path', { d: 'M-7,-5 L-9,-10 L-4,-6 M3,-6 L6,-10 L7,-5', fill: c.fill, class: 'pig-body' }),
      el('ellipse', { cx: 11, cy: 1, rx: 3, ry: 3.5, class: 'pig-snout' }),
      el('path', { d: 'M-7,6 L-7,10 M5,6 L5,10', class: 'pig-body' }),
      el('text', { x: -1, y: 4, class: 'figure-letter', fill: c.ink }, [textNode(c.letter)]),
    ];
  }
  return [
    el('path', { d: meeple, fill: c.fill, class: 'meeple-body' }),
    el('text', { y: 9, class: 'meeple-letter', fill: c.ink }, [textNode(c.letter)]),
  ];
}

/**
 * The buttons that answer the builder's double turn (R9), or null for other decisions.
 * @param {Decision} d
 * @param {(c: Command) => void} send
 * @returns {{hint: string, buttons: HTMLButtonElement[]}|null}
 */
export function doubleTurnControls(d, send) {
  if (d.type !== 'double_turn') return null;
  /** @param {string} key @param {string} label @param {Command} c */
  const button = (key, label, c) => {
    const b = document.createElement('button');
    b.textContent = label;
    b.dataset.key = key;
    b.className = 'msg-choice';
    b.onclick = () => send(c);
    return b;
  };
  return {
    hint: 'Your builder earned a double turn: draw and place another tile, or pass it up.',
    buttons: [
      button('double:take', 'Take the double turn', { type: 'take_double_turn' }),
      button('double:pass', 'Pass it up', { type: 'pass' }),
    ],
  };
}

/**
 * A player's figures in the supply beyond the meeples, for the player panel: `L1` the large
 * meeple, `B1` the builder, `P1` the pig (0 while on the board); empty when no module gives any.
 * @param {import('./proto').PlayerView} p
 */
export function figuresHtml(p) {
  /** @type {string[]} */
  const out = [];
  /** @param {string} key @param {string} letter @param {string} name @param {number|undefined|null} n */
  const one = (key, letter, name, n) => {
    if (n === undefined || n === null) return;
    out.push(`<span class="figure-count" data-figure="${key}" data-count="${n}" title="${name}: ${n ? 'in the supply' : 'on the board'}">${letter}${n}</span>`);
  };
  one('large_meeple', 'L', 'large meeple', p.large_meeples);
  one('builder', 'B', 'builder', p.builder);
  one('pig', 'P', 'pig', p.pig);
  return out.join(' ');
}

/**
 * A player's goods tokens (R5) as small symbols with their counts.
 * @param {{wine: number, grain: number, cloth: number}|undefined|null} goods
 */
export function goodsHtml(goods) {
  if (!goods) return '';
  return /** @type {Goods[]} */ (['wine', 'grain', 'cloth']).map((g) => {
    const k = GOODS[g];
    const svg = `<svg viewBox="-11 -11 22 22" width="12" height="12" aria-hidden="true"><circle r="10" class="goods-bg" stroke="${k.fill}"/><path d="${k.shape}" stroke="${k.fill}" class="goods-shape"/></svg>`;
    return `<span class="goods-count" data-goods="${g}" data-count="${goods[g]}" title="${k.name}: ${goods[g]}">${svg}${k.letter}${goods[g]}</span>`;
  }).join('');
}

/**
 * A figure glyph for the board's legend of a placement target.
 * @param {Figure} f
 */
export function targetLetter(f) {
  return f === 'large_meeple' ? 'L' : f === 'builder' ? 'B' : f === 'pig' ? 'P' : '';
}

/**
 * @param {string} s
 * @returns {Element}
 */
function textNode(s) {
  return /** @type {Element} */ (/** @type {unknown} */ (document.createTextNode(s)));
}
