// A printed map (Carcassonne Maps, P1–P6) under the tiles: the squares that take a tile, the sea
// and the foreign land around them, start squares, printed large cities with their coats of arms,
// towns with their grape (a letter and a shape as well as a colour) and the border prints.
// The map never changes in a match, so it is drawn once and the layer is kept.

import { el, titled } from './tiles.js';
import { GRAPES } from './words.js';

/**
 * @typedef {import('./proto').MapInfo} MapInfo
 * @typedef {import('./proto').Pos} Pos
 * @typedef {import('./proto').Side} Side
 */

const U = 100;
/** Where a side's middle lies from a square's centre, and which way the side runs. */
/** @type {Record<Side, [number, number, boolean]>} */
const SIDE = { N: [0, -50, true], S: [0, 50, true], E: [50, 0, false], W: [-50, 0, false] };
/** One shape per grape: a circle, a diamond, a square. */
const SHAPES = {
  purple: 'M0,-16 a16,16 0 1,1 -0.1,0 Z',
  light_blue: 'M0,-19 L19,0 L0,19 L-19,0 Z',
  orange: 'M-15,-15 H15 V15 H-15 Z',
};

/**
 * What the outline prints on `p`: `#` placeable, `.` not on the map, a letter a large city.
 * @param {MapInfo} info
 * @param {Pos} p
 */
export function cellAt(info, p) {
  const row = info.outline[info.bounds.max.y - p.y];
  return row?.charAt(p.x) || '.';
}

/** @param {number} n */
const shield = (n) => el('path', { d: 'M-9,-10 H9 V2 Q9,10 0,13 Q-9,10 -9,2 Z', class: 'coat', 'data-coats': n });

/**
 * @param {MapInfo} info
 * @param {(pos: Pos) => void} click a square of the grid clicked (on the map or not)
 * @returns {SVGGElement}
 */
export function drawMap(info, click) {
  const g = /** @type {SVGGElement} */ (el('g', { class: 'map', 'data-map': info.id }));
  const cities = new Map(info.cities.map((c) => [c.mark, c]));
  const { min, max } = info.bounds;
  for (let y = min.y; y <= max.y; y++) {
    for (let x = min.x; x <= max.x; x++) {
      const c = cellAt(info, { x, y });
      const key = `${x},${y}`;
      const city = cities.get(c);
      const cls = c === '.' ? 'offmap' : city ? 'map-city' : 'land';
      const r = el('rect', {
        x: x * U - 50, y: -y * U - 50, width: U, height: U, class: cls,
        [c === '.' ? 'data-offmap' : 'data-map-square']: key,
      }, [titled(c === '.' ? `${key}: not on the map` : city ? `${key}: ${city.name}` : key)]);
      r.addEventListener('click', () => click({ x, y }));
      g.appendChild(r);
    }
  }
  for (const city of info.cities) {
    // The coats on the city's first square, its name across the squares.
    const [first] = city.squares;
    const cx = city.squares.reduce((s, p) => s + p.x, 0) / city.squares.length;
    g.appendChild(el('g', {
      class: 'printed-city', 'data-city': city.name,
      transform: `translate(${first.x * U - 28},${-first.y * U - 22})`,
    }, [
      ...Array.from({ length: city.coats }, (_, i) => el('g', { transform: `translate(${i * 22},0)` }, [shield(city.coats)])),
      titled(`${city.name}: a printed large city, ${city.coats} coat${city.coats === 1 ? '' : 's'} of arms`),
    ]));
    g.appendChild(el('text', { class: 'map-label', x: cx * U, y: -first.y * U + 34 }, [text(city.name)]));
  }
  for (const t of info.towns) {
    const gr = t.grape ? GRAPES[t.grape] : null;
    g.appendChild(el('g', {
      class: 'town', 'data-town': t.name, 'data-grape': t.grape ?? '',
      transform: `translate(${t.pos.x * U},${-t.pos.y * U})`,
    }, [
      el('path', { d: t.grape ? SHAPES[t.grape] : SHAPES.purple, fill: gr ? gr.fill : '#999', class: 'town-mark' }),
      el('text', { y: 6, class: 'town-letter', fill: gr ? gr.ink : '#000' }, [text(gr ? gr.letter : '·')]),
      el('text', { y: 38, class: 'map-label' }, [text(t.name)]),
      titled(`${t.name}: a town${gr ? ` buying ${gr.name} wine` : ''}`),
    ]));
  }
  for (const s of info.starts) {
    g.appendChild(el('g', {
      class: 'start', 'data-start': s.name, transform: `translate(${s.pos.x * U},${-s.pos.y * U})`,
    }, [el('text', { y: 44, class: 'map-label' }, [text(`★ ${s.name}`)]), titled(`${s.name}: a start square`)]));
  }
  for (const b of info.borders) {
    const [dx, dy, across] = SIDE[b.side];
    const x = b.pos.x * U + dx;
    const y = -b.pos.y * U + dy;
    const kind = b.print.kind === 'city' ? (b.print.coat ? 'city-coat' : 'city') : b.print.kind;
    const what = kind === 'road' ? 'a road' : kind === 'city' ? 'a city' : 'a city with a coat of arms';
    const parts = kind === 'road'
      ? [el('rect', across ? { x: -7, y: -16, width: 14, height: 32 } : { x: -16, y: -7, width: 32, height: 14 }, [])]
      : [el('path', { d: 'M-20,-20 H20 V20 H-20 Z', class: 'print-city' })];
    if (kind === 'city-coat') parts.push(shield(1));
    parts.push(titled(`${b.pos.x},${b.pos.y} ${b.side}: the border prints ${what}${b.country ? ` (to ${b.country})` : ''}`));
    g.appendChild(el('g', {
      class: `print print-${kind}`, 'data-print': `${b.pos.x},${b.pos.y} ${b.side}`,
      transform: `translate(${x},${y})`,
    }, parts));
  }
  return g;
}

/** @param {string} s */
function text(s) {
  return /** @type {Element} */ (/** @type {unknown} */ (document.createTextNode(s)));
}
