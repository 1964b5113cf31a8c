// The board: placed tiles, meeples (and large meeples, builders, pigs) and tollhouses from the view, each player's last tile outlined
// in their colour, the legal squares of the open decision, a preview of the drawn tile, the
// meeple/tollhouse targets of the tile just placed, and the points just scored, flashed briefly.
// Pans with a drag, zooms with the wheel or the +/- buttons; fits itself until the user moves it.

import { el, drawTile, segmentAnchor, segmentOf, rotate, titled } from './tiles.js';
import { COLOURS, targetWords, tileWords } from './words.js';
import { drawMap } from './map.js';
import { FIGURE_NAMES, figureShape, targetLetter } from './figures.js';

/**
 * @typedef {import('./tiles.js').TileDesign} TileDesign
 * @typedef {import('./proto').MatchView} View
 * @typedef {import('./proto').Pos} Pos
 * @typedef {import('./proto').Placement} Placement
 * @typedef {{
 *   view: View,
 *   legal: Placement[],
 *   selected: {pos: Pos, rotation: number}|null,
 *   fits: boolean,
 *   targets: {pos: Pos, meeple: string[], tollhouse: Pos[], figure?: import('./figures.js').Figure}|null,
 *   focusTarget: string|null,
 *   mine: boolean,
 *   placing: boolean,
 *   picks?: string[],
 *   lastTiles?: {pos: Pos, colour: import('./proto').Colour}[],
 * }} Scene
 * @typedef {{
 *   square: (pos: Pos) => void,
 *   preview: () => void,
 *   meeple: (target: string) => void,
 *   tollhouse: (pos: Pos) => void,
 *   pick: (meeple: string) => void,
 * }} Handlers
 */

const U = 100; // one square
/** How long points just scored stay on the board. */
export const FLASH_MS = 3000;

/** @param {string} key @returns {Pos} */
export function parseKey(key) {
  const [x, y] = key.split(',').map(Number);
  return { x, y };
}

export class Board {
  /**
   * @param {SVGSVGElement} svg
   * @param {Map<string, TileDesign>} designs
   * @param {Handlers} on
   */
  constructor(svg, designs, on) {
    this.svg = svg;
    this.designs = designs;
    this.on = on;
    this.world = el('g', { class: 'world' });
    svg.appendChild(this.world);
    this.scale = 0.8;
    this.tx = 0;
    this.ty = 0;
    this.autoFit = true;
    /** @type {Scene|null} */
    this.scene = null;
    this.dragged = false;
    /** @type {{info: import('./proto').MapInfo, layer: SVGGElement}|null} the map, drawn once */
    this.map = null;
    /** The points just scored: kept over the redraws until each fades. */
    this.flashes = el('g', { class: 'flashes' });
    this.bindPanZoom();
  }

  bindPanZoom() {
    /** @type {{x: number, y: number, tx: number, ty: number}|null} */
    let drag = null;
    this.svg.addEventListener('pointerdown', (e) => {
      drag = { x: e.clientX, y: e.clientY, tx: this.tx, ty: this.ty };
      this.dragged = false;
    });
    this.svg.addEventListener('pointermove', (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (!this.dragged && Math.hypot(dx, dy) < 5) return;
      this.dragged = true;
      this.autoFit = false;
      this.tx = drag.tx + dx;
      this.ty = drag.ty + dy;
      this.apply();
    });
    const end = () => {
      drag = null;
    };
    this.svg.addEventListener('pointerup', end);
    this.svg.addEventListener('pointerleave', end);
    this.svg.addEventListener(
      'wheel',
      (e) => {
        e.preventDefault();
        const r = this.svg.getBoundingClientRect();
        this.zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX - r.left, e.clientY - r.top);
      },
      { passive: false },
    );
  }

  /**
   * @param {number} f
   * @param {number} [cx] screen point that stays put
   * @param {number} [cy]
   */
  zoom(f, cx, cy) {
    const r = this.svg.getBoundingClientRect();
    const x = cx ?? r.width / 2;
    const y = cy ?? r.height / 2;
    const s = Math.min(3, Math.max(0.1, this.scale * f));
    const k = s / this.scale;
    this.tx = x - (x - this.tx) * k;
    this.ty = y - (y - this.ty) * k;
    this.scale = s;
    this.autoFit = false;
    this.apply();
  }

  fit() {
    this.autoFit = true;
    if (this.scene) this.render(this.scene);
  }

  apply() {
    this.world.setAttribute('transform', `translate(${this.tx},${this.ty}) scale(${this.scale})`);
  }

  /** @param {Scene} scene */
  fitTo(scene) {
    const pts = [...Object.keys(scene.view.board).map(parseKey), ...scene.legal.map((p) => p.pos)];
    const info = scene.view.map?.info;
    if (info) pts.push(info.bounds.min, info.bounds.max);
    const xs = pts.map((p) => p.x);
    const ys = pts.map((p) => -p.y);
    const minx = Math.min(...xs) - 0.5, maxx = Math.max(...xs) + 1.5;
    const miny = Math.min(...ys) - 0.5, maxy = Math.max(...ys) + 1.5;
    const r = this.svg.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return;
    const s = Math.min(1.2, r.width / ((maxx - minx) * U), r.height / ((maxy - miny) * U));
    this.scale = s;
    this.tx = r.width / 2 - ((minx + maxx) / 2 - 0.5) * U * s;
    this.ty = r.height / 2 - ((miny + maxy) / 2 - 0.5) * U * s;
    this.apply();
  }

  /** @param {Scene} scene */
  render(scene) {
    this.scene = scene;
    const w = this.world;
    while (w.firstChild) w.removeChild(w.firstChild);
    const view = scene.view;
    const info = view.map?.info;
    if (info) {
      // Any square may be tried while placing (the server says why not): clicks pass through.
      if (!this.map || this.map.info.id !== info.id) {
        this.map = {
          info,
          layer: drawMap(info, (pos) => {
            if (!this.dragged && this.scene?.placing && !this.scene.view.board[`${pos.x},${pos.y}`]) this.on.square(pos);
          }),
        };
      }
      w.appendChild(this.map.layer);
    }
    for (const [key, tv] of Object.entries(view.board)) {
      const p = parseKey(key);
      const d = this.designs.get(tv.tile);
      const g = el('g', {
        transform: `translate(${p.x * U},${-p.y * U}) rotate(${tv.rotation})`,
        'data-square': key,
        'data-tile': tv.tile,
        'data-rotation': tv.rotation,
        class: 'placed',
      });
      if (d) g.appendChild(drawTile(d));
      g.appendChild(titled(tileWords(d)));
      w.appendChild(g);
    }
    // Each player's last tile, outlined in their colour, with their letter (not by colour alone).
    for (const { pos, colour } of scene.lastTiles ?? []) {
      const c = COLOURS[colour];
      w.appendChild(el('g', { class: 'last-tile-mark', transform: `translate(${pos.x * U},${-pos.y * U})` }, [
        el('rect', {
          x: -47, y: -47, width: 94, height: 94, rx: 4,
          class: 'last-tile', stroke: c.fill, 'data-last-tile': colour, 'data-at': `${pos.x},${pos.y}`,
        }),
        el('circle', { cx: -38, cy: -38, r: 10, fill: c.fill, class: 'last-tile-badge' }),
        el('text', { x: -38, y: -34, fill: c.ink, class: 'last-tile-letter' }, [textNode(c.letter)]),
        titled(`${colour}'s last tile`),
      ]));
    }
    for (const c of view.map?.chips ?? []) {
      w.appendChild(el('g', { class: 'chip', 'data-chip': `${c.x},${c.y}`, transform: `translate(${c.x * U + 24},${-c.y * U - 24})` }, [
        el('circle', { r: 14 }), el('text', { y: 6 }, [textNode('?')]),
        titled('a chip lies face down here'),
      ]));
    }
    if (scene.selected && !scene.legal.some((p) => p.pos.x === scene.selected?.pos.x && p.pos.y === scene.selected.pos.y)) {
      const { x, y } = scene.selected.pos;
      w.appendChild(el('rect', { x: x * U - 46, y: -y * U - 46, width: 92, height: 92, rx: 8, class: 'legal selected tried', 'data-tried': `${x},${y}` }));
    }
    for (const pl of scene.legal) {
      const key = `${pl.pos.x},${pl.pos.y}`;
      const sel = scene.selected && scene.selected.pos.x === pl.pos.x && scene.selected.pos.y === pl.pos.y;
      const r = el('rect', {
        x: pl.pos.x * U - 46, y: -pl.pos.y * U - 46, width: 92, height: 92, rx: 8,
        class: `legal${sel ? ' selected' : ''}${scene.mine ? '' : ' theirs'}`,
        'data-legal': key,
        tabindex: -1,
      }, [titled('the tile fits here')]);
      if (scene.mine) r.addEventListener('click', () => !this.dragged && this.on.square(pl.pos));
      w.appendChild(r);
    }
    if (scene.selected && view.drawn) {
      const d = this.designs.get(view.drawn);
      const { pos, rotation } = scene.selected;
      const g = el('g', {
        transform: `translate(${pos.x * U},${-pos.y * U}) rotate(${rotation})`,
        class: `preview${scene.fits ? '' : ' misfit'}`,
        'data-preview': `${pos.x},${pos.y}`,
        'data-rotation': rotation,
      }, [titled(`the drawn tile, turned ${rotation}°: click to turn`)]);
      if (d) g.appendChild(drawTile(d));
      // Where it does not fit, the preview is tinted and crossed (not by colour alone).
      if (!scene.fits) {
        g.appendChild(el('g', { class: 'misfit-tint' }, [
          el('rect', { x: -50, y: -50, width: 100, height: 100 }),
          el('path', { d: 'M-30,-30 L30,30 M30,-30 L-30,30' }),
        ]));
      }
      g.addEventListener('click', () => !this.dragged && this.on.preview());
      w.appendChild(g);
    }
    for (const [key, m] of Object.entries(view.meeples)) {
      const tv = view.board[`${m.pos.x},${m.pos.y}`];
      const d = tv && this.designs.get(tv.tile);
      if (!tv || !d) continue;
      const figure = m.figure ?? 'meeple';
      // A builder or pig stands on the tile it was put on, where no other figure of that feature is.
      const [x, y] = this.anchor(d, tv.rotation, m.target, m.pos);
      const c = COLOURS[view.players[m.player]?.colour ?? 'black'];
      // A meeple a dispatch may act on (M8–M10, M15) is ringed and picked by a click.
      const pick = !!scene.picks?.includes(key);
      const cls = figure === 'meeple' ? 'meeple' : figure === 'large_meeple' ? 'meeple large' : figure;
      const g = el('g', { class: pick ? `${cls} pick` : cls, 'data-meeple': key, 'data-player': m.player, 'data-figure': figure, transform: `translate(${x},${y})` }, [
        ...(pick ? [el('circle', { r: 19, class: 'pick-ring' })] : []),
        ...figureShape(figure, c),
        titled(`${view.players[m.player]?.colour} ${FIGURE_NAMES[figure]} on ${targetWords(m.target)}${pick ? ': click to pick it for the dispatch' : ''}`),
      ]);
      if (pick) g.addEventListener('click', () => !this.dragged && this.on.pick(key));
      w.appendChild(g);
    }
    view.players.forEach((pl) => {
      if (!pl.tollhouse) return;
      const c = COLOURS[pl.colour];
      const { pos, value } = pl.tollhouse;
      w.appendChild(el('g', {
        class: 'tollhouse', 'data-tollhouse': pl.colour, 'data-pos': `${pos.x},${pos.y}`,
        transform: `translate(${pos.x * U + 22},${-pos.y * U + 22})`,
      }, [
        el('path', { d: 'M-13,12 L-13,-4 L0,-15 L13,-4 L13,12 Z', fill: c.fill }),
        el('text', { y: 8, class: 'toll-value', fill: c.ink }, [textNode(`${c.letter}${value}`)]),
        titled(`${pl.colour}'s tollhouse, toll ${value}`),
      ]));
    });
    if (scene.targets) {
      const { pos } = scene.targets;
      const tv = view.board[`${pos.x},${pos.y}`];
      const d = tv && this.designs.get(tv.tile);
      if (tv && d) {
        // The targets of the figure chosen for this placement (a meeple unless another is picked).
        const figure = scene.targets.figure ?? 'meeple';
        const letter = targetLetter(figure);
        for (const t of scene.targets.meeple) {
          const [x, y] = this.anchor(d, tv.rotation, t, pos);
          const g = el('g', {
            class: `target figure-${figure}${scene.focusTarget === t ? ' focus' : ''}`,
            'data-target': t,
            'data-figure': figure,
            transform: `translate(${x},${y})`,
          }, [el('circle', { r: 9 }), ...(letter ? [el('text', { y: 3 }, [textNode(letter)])] : []),
            titled(`put the ${FIGURE_NAMES[figure]} on ${targetWords(t)}`)]);
          if (scene.mine) g.addEventListener('click', () => !this.dragged && this.on.meeple(t));
          w.appendChild(g);
        }
      }
      for (const tp of scene.targets.tollhouse) {
        const key = `${tp.x},${tp.y}`;
        const g = el('g', {
          class: `toll-target${scene.focusTarget === `tollhouse@${key}` ? ' focus' : ''}`,
          'data-toll-target': key,
          transform: `translate(${tp.x * U + 22},${-tp.y * U + 22})`,
        }, [el('rect', { x: -11, y: -11, width: 22, height: 22, rx: 3 }), el('text', { y: 6 }, [textNode('T')]),
          titled('put the tollhouse on this crossroads')]);
        if (scene.mine) g.addEventListener('click', () => !this.dragged && this.on.tollhouse(tp));
        w.appendChild(g);
      }
    }
    w.appendChild(this.flashes);
    if (this.autoFit) this.fitTo(scene);
    else this.apply();
  }

  /**
   * Flashes points just scored on a square for a few seconds: a ring and `+N` in the scorer's
   * colour.
   * @param {Pos} pos
   * @param {string} label
   * @param {import('./proto').Colour} colour
   */
  flash(pos, label, colour) {
    const c = COLOURS[colour];
    const g = el('g', { class: 'flash', 'data-flash': `${pos.x},${pos.y}`, 'data-colour': colour, transform: `translate(${pos.x * U},${-pos.y * U})` }, [
      el('rect', { x: -50, y: -50, width: 100, height: 100, rx: 10, class: 'flash-ring', stroke: c.fill }),
      el('rect', { x: -26, y: -18, width: 52, height: 30, rx: 6, fill: c.fill, class: 'flash-box' }),
      el('text', { y: 5, class: 'flash-points', fill: c.ink }, [textNode(label)]),
    ]);
    this.flashes.appendChild(g);
    setTimeout(() => g.remove(), FLASH_MS);
  }

  /**
   * Board coordinates of a target on the tile at `pos`.
   * @param {TileDesign} d
   * @param {number} rotation
   * @param {string} target
   * @param {Pos} pos
   * @returns {[number, number]}
   */
  anchor(d, rotation, target, pos) {
    const i = segmentOf(d, rotation, target);
    const [x, y] = i >= 0 ? rotate(segmentAnchor(d, i), rotation) : [0, 0];
    return [pos.x * U + x, -pos.y * U + y];
  }
}

/**
 * @param {string} s
 * @returns {Element}
 */
function textNode(s) {
  return /** @type {Element} */ (/** @type {unknown} */ (document.createTextNode(s)));
}
