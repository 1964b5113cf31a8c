// Draws any tile of the catalogue (GET /api/tiles) as SVG, generically from its data: cities on
// the sides they reach, roads between side midpoints, fields as the background, monasteries,
// villages, the pictures as icons, inns beside their roads, cathedrals and goods symbols in their
// cities, and an enclosed middle field. A new set's tiles need no new drawing code.
// A tile is drawn in a 100×100 box centred on 0,0 at rotation 0; callers rotate the group.

/**
 * @typedef {'wine'|'grain'|'cloth'} Goods
 * @typedef {{kind: 'road'|'city'|'field'|'monastery', sides?: string[], halves?: string[],
 *   end?: string, coat?: boolean, touches?: number[], inn?: boolean, cathedral?: boolean,
 *   goods?: Goods}} Segment
 * @typedef {{kind: string, field: number|null, road: number|null, roads?: number[]}} Picture
 * @typedef {{field: number, roads: number[]}} Inn
 * @typedef {{id: string, letter: string, set: string, count: number, edges: string[],
 *   village: boolean, crossroads: boolean, segments: Segment[], pictures: Picture[],
 *   inns?: Inn[]}} TileDesign
 * @typedef {{start: string, tiles: TileDesign[]}} Catalogue
 */

export const SVGNS = 'http://www.w3.org/2000/svg';
const SIDES = ['N', 'E', 'S', 'W'];
const HALVES = ['Nw', 'Ne', 'En', 'Es', 'Se', 'Sw', 'Ws', 'Wn'];
/** @type {Record<string, [number, number]>} */
const SIDE_MID = { N: [0, -50], E: [50, 0], S: [0, 50], W: [-50, 0] };
/** @type {Record<string, [number, number]>} corners before each side, clockwise */
const SIDE_START = { N: [-50, -50], E: [50, -50], S: [50, 50], W: [-50, 50] };

/**
 * @param {string} tag
 * @param {Record<string, string|number>} attrs
 * @param {Element[]} [children]
 * @returns {SVGElement}
 */
export function el(tag, attrs, children = []) {
  const e = /** @type {SVGElement} */ (document.createElementNS(SVGNS, tag));
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  for (const c of children) e.appendChild(c);
  return e;
}

/**
 * The point of a half-edge, `f` of the way from the centre to the edge.
 * @param {string} half
 * @param {number} f
 * @returns {[number, number]}
 */
function halfPoint(half, f) {
  const i = HALVES.indexOf(half);
  const side = SIDES[Math.floor(i / 2)];
  const [mx, my] = SIDE_MID[side];
  const [sx, sy] = SIDE_START[side];
  // the half nearer the side's start corner, or its end
  const t = i % 2 === 0 ? 0.5 : -0.5;
  const px = mx + (sx - mx) * t * 1;
  const py = my + (sy - my) * t * 1;
  return [px * f, py * f];
}

/**
 * @param {[number, number][]} pts
 * @returns {[number, number]}
 */
function mean(pts) {
  const n = pts.length || 1;
  return [pts.reduce((a, p) => a + p[0], 0) / n, pts.reduce((a, p) => a + p[1], 0) / n];
}

/**
 * Where a meeple (or marker) sits on a segment, in the tile's own frame (rotation 0).
 * @param {TileDesign} t
 * @param {number} idx
 * @returns {[number, number]}
 */
export function segmentAnchor(t, idx) {
  let all = ANCHORS.get(t);
  if (!all) {
    all = placeAnchors(t);
    ANCHORS.set(t, all);
  }
  return all[idx];
}

/** @type {WeakMap<TileDesign, [number, number][]>} */
const ANCHORS = new WeakMap();
/** Targets are circles of radius 9: anchors this far apart never overlap. */
export const SPACING = 20;

/**
 * Every segment's anchor. Roads, cities and monasteries have fixed spots; a field takes the
 * middle of its half-edges when that is clear of the others, else the first of its half-edge
 * points that is (a field wrapping round a road's curve has its middle on the road).
 * @param {TileDesign} t
 * @returns {[number, number][]}
 */
function placeAnchors(t) {
  /** @type {[number, number][]} */
  const out = t.segments.map((s, i) => (s.kind === 'field' ? [NaN, NaN] : fixedAnchor(t, i)));
  /** @param {[number, number]} p */
  const clear = (p) =>
    out.every(([x, y]) => Number.isNaN(x) || Math.hypot(x - p[0], y - p[1]) >= SPACING);
  t.segments.forEach((s, i) => {
    if (s.kind !== 'field') return;
    const halves = s.halves ?? [];
    if (halves.length === 0) {
      // The enclosed middle field (I2, R3): the centre, or the nearest point round it that is clear.
      /** @type {[number, number][]} */
      const ring = [[0, 0]];
      for (const r of [20, 26, 32]) {
        for (let k = 0; k < 8; k++) ring.push([Math.round(r * Math.cos((k * Math.PI) / 4)), Math.round(r * Math.sin((k * Math.PI) / 4))]);
      }
      out[i] = ring.find(clear) ?? [0, 0];
      return;
    }
    const middle = mean(halves.map((h) => halfPoint(h, 0.82)));
    /** @type {[number, number][]} */
    const candidates = [
      ...(Math.hypot(...middle) > 8 ? [middle] : []),
      ...halves.map((h) => halfPoint(h, 0.78)),
      ...halves.map((h) => halfPoint(h, 0.55)),
    ];
    out[i] = candidates.find(clear) ?? candidates[0] ?? [0, 0];
  });
  return out;
}

/**
 * @param {TileDesign} t
 * @param {number} idx
 * @returns {[number, number]}
 */
function fixedAnchor(t, idx) {
  const s = t.segments[idx];
  if (s.kind === 'monastery') return [0, 0];
  if (s.kind === 'road') {
    const sides = s.sides ?? [];
    if (sides.length === 1) {
      const [x, y] = SIDE_MID[sides[0]];
      return [x * 0.6, y * 0.6];
    }
    const [a, b] = sides.map((x) => SIDE_MID[x]);
    // on the quadratic curve A → (0,0) → B, at t = 0.3
    return [0.49 * a[0] + 0.09 * b[0], 0.49 * a[1] + 0.09 * b[1]];
  }
  if (s.kind === 'city') {
    const sides = s.sides ?? [];
    const pts = sides.map((x) => SIDE_MID[x]);
    const [mx, my] = mean(pts);
    if (sides.length === 1) return [mx * 0.8, my * 0.8];
    if (Math.abs(mx) + Math.abs(my) < 1) return [pts[0][0] * 0.3, pts[0][1] * 0.3];
    return [mx * 0.8, my * 0.8];
  }
  return [0, 0];
}

/**
 * The segment a wire target names (`road:E`, `field:Sw`, `monastery`), for a tile turned by
 * `rotation` degrees clockwise: the name is in board orientation.
 * @param {TileDesign} t
 * @param {number} rotation
 * @param {string} target
 * @returns {number}
 */
export function segmentOf(t, rotation, target) {
  const [kind, where] = target.split(':');
  const q = rotation / 90;
  return t.segments.findIndex((s) => {
    if (s.kind !== kind) return false;
    if (kind === 'monastery') return true;
    if (kind === 'field') {
      // The enclosed middle field (I2, R3) reaches no side: it has no halves.
      if (where === 'inner') return (s.halves ?? []).length === 0;
      const i = HALVES.indexOf(where);
      const local = HALVES[(i - 2 * q + 8) % 8];
      return (s.halves ?? []).includes(local);
    }
    const i = SIDES.indexOf(where);
    const local = SIDES[(i - q + 4) % 4];
    return (s.sides ?? []).includes(local);
  });
}

/**
 * A point in the tile's frame turned clockwise by `rotation` degrees (board orientation).
 * @param {[number, number]} p
 * @param {number} rotation
 * @returns {[number, number]}
 */
export function rotate(p, rotation) {
  let [x, y] = p;
  for (let i = 0; i < rotation / 90; i++) [x, y] = [-y, x];
  return [x, y];
}

/** @param {string[]} sides */
function cityPath(sides) {
  if (sides.length === 1) {
    const s = sides[0];
    const [sx, sy] = SIDE_START[s];
    const i = SIDES.indexOf(s);
    const [ex, ey] = SIDE_START[SIDES[(i + 1) % 4]];
    const [mx, my] = SIDE_MID[s];
    return `M${sx},${sy} L${ex},${ey} Q${mx * 0.1},${my * 0.1} ${sx},${sy} Z`;
  }
  // Walk the border clockwise from a city side; each run of non-city sides (a gap) is closed by
  // one curve from its first corner to its last, bowing towards the gap.
  const start = SIDES.findIndex((s, i) => sides.includes(s) && !sides.includes(SIDES[(i + 3) % 4]));
  const s0 = start < 0 ? 0 : start;
  const [x0, y0] = SIDE_START[SIDES[s0]];
  let d = `M${x0},${y0}`;
  /** @type {[number, number][]} */
  let gap = [];
  for (let k = 0; k < 4; k++) {
    const s = SIDES[(s0 + k) % 4];
    const [ex, ey] = SIDE_START[SIDES[(s0 + k + 1) % 4]];
    if (sides.includes(s)) {
      d += ` L${ex},${ey}`;
      continue;
    }
    gap.push(SIDE_MID[s]);
    const next = SIDES[(s0 + k + 1) % 4];
    if (sides.includes(next) || k === 3) {
      const [cx, cy] = mean(gap);
      d += ` Q${cx * 0.3},${cy * 0.3} ${ex},${ey}`;
      gap = [];
    }
  }
  return d + ' Z';
}

/** @param {Segment} s */
function roadPath(s) {
  const sides = s.sides ?? [];
  const [ax, ay] = SIDE_MID[sides[0]];
  if (sides.length === 1) {
    const stop = s.end === 'monastery' ? 0.3 : s.end === 'village' ? 0.22 : 0;
    return `M${ax},${ay} L${ax * stop},${ay * stop}`;
  }
  const [bx, by] = SIDE_MID[sides[1]];
  return `M${ax},${ay} Q0,0 ${bx},${by}`;
}

/** Icons for the pictures: a shape a reader can tell apart, and a title in words. */
/** @type {Record<string, string>} */
const ICONS = {
  farmhouse: 'M-7,3 L-7,-3 L0,-9 L7,-3 L7,3 Z M-2,3 L-2,-1 L2,-1 L2,3',
  cowshed: 'M-8,4 L-8,-3 L-4,-7 L8,-7 L8,4 Z',
  pigsty: 'M-8,4 L-8,-2 L0,-7 L8,-2 L8,4 Z',
  'donkey-stable': 'M-8,4 L-8,-4 L8,-4 L8,4 Z M-8,-4 L0,-9 L8,-4',
  garden: 'M-6,0 a3,3 0 1,0 6,0 a3,3 0 1,0 -6,0 M0,0 a3,3 0 1,0 6,0 a3,3 0 1,0 -6,0 M-3,-5 a3,3 0 1,0 6,0 a3,3 0 1,0 -6,0',
  highwaymen: 'M-7,-4 L7,-4 L5,2 L-5,2 Z M-4,-2 L-1,-2 M1,-2 L4,-2',
  'water-tower': 'M-5,-8 L5,-8 L5,-2 L-5,-2 Z M-4,-2 L-6,6 M4,-2 L6,6 M0,-2 L0,6',
  travellers: 'M-4,-6 a2,2 0 1,0 0.1,0 M-4,-4 L-4,3 M4,-6 a2,2 0 1,0 0.1,0 M4,-4 L4,3',
};
/** @type {Record<string, string>} */
const PICTURE_LETTER = {
  farmhouse: 'F', cowshed: 'C', pigsty: 'P', 'donkey-stable': 'D', garden: 'G',
  highwaymen: 'H', 'water-tower': 'W', travellers: 'T',
};

/**
 * @param {TileDesign} t
 * @param {Picture} p
 * @param {number} n which picture of the tile
 * @returns {[number, number]}
 */
function pictureAnchor(t, p, n) {
  if (p.field !== null && p.field !== undefined) {
    const f = t.segments[p.field];
    let [x, y] = mean((f.halves ?? []).map((h) => halfPoint(h, 0.62)));
    if (Math.abs(x) + Math.abs(y) < 4) [x, y] = halfPoint((f.halves ?? ['Ne'])[1] ?? 'Ne', 0.6);
    return [x + n * 6, y - n * 6];
  }
  return [25, -25];
}

/**
 * One tile as an SVG group at rotation 0 (callers turn it).
 * @param {TileDesign} t
 * @returns {SVGElement}
 */
export function drawTile(t) {
  const g = el('g', { class: 'tile', 'data-tile': t.id });
  g.appendChild(el('rect', { x: -50, y: -50, width: 100, height: 100, class: 'field' }));
  for (const s of t.segments) {
    if (s.kind === 'road') {
      const d = roadPath(s);
      g.appendChild(el('path', { d, class: 'road-edge' }));
      g.appendChild(el('path', { d, class: 'road' }));
    }
  }
  for (const s of t.segments) {
    if (s.kind === 'city') g.appendChild(el('path', { d: cityPath(s.sides ?? []), class: 'city' }));
  }
  t.segments.forEach((s, i) => {
    if (s.kind === 'city' && s.coat) {
      const [x, y] = segmentAnchor(t, i);
      g.appendChild(
        el('path', {
          d: `M${x - 6},${y + 6} L${x - 6},${y - 2} L${x + 6},${y - 2} L${x + 6},${y + 6} L${x},${y + 11} Z`,
          class: 'coat',
        }, [titled('coat of arms')]),
      );
    }
  });
  t.segments.forEach((s, i) => {
    if (s.kind !== 'city') return;
    const [x, y] = segmentAnchor(t, i);
    if (s.cathedral) g.appendChild(cathedralMark(x * 0.55, y * 0.55));
    if (s.goods) g.appendChild(goodsMark(s.goods, x * 0.55 + (s.cathedral ? 14 : 0), y * 0.55 + (s.coat ? -12 : 0)));
  });
  // The enclosed middle field (I2, R3): a green patch ringed by the cities around it.
  if (t.segments.some((s) => s.kind === 'field' && (s.halves ?? []).length === 0)) {
    g.appendChild(el('circle', { r: 13, class: 'inner-field', 'data-inner-field': 'true' }, [titled('an enclosed field')]));
  }
  for (const inn of t.inns ?? []) {
    const [x, y] = innAnchor(t, inn);
    g.appendChild(el('g', { class: 'inn', transform: `translate(${x},${y})` }, [
      el('rect', { x: -8, y: -4, width: 16, height: 11 }),
      el('path', { d: 'M-10,-3 L0,-11 L10,-3 Z', class: 'inn-roof' }),
      el('path', { d: 'M-2,7 L-2,2 L2,2 L2,7', class: 'inn-door' }),
      titled('an inn beside the road'),
    ]));
  }
  if (t.segments.some((s) => s.kind === 'monastery')) {
    g.appendChild(el('g', { class: 'monastery' }, [
      el('rect', { x: -12, y: -10, width: 24, height: 20 }),
      el('path', { d: 'M-12,-10 L0,-20 L12,-10 Z' }),
      el('path', { d: 'M0,-4 L0,8 M-4,0 L4,0', class: 'cross' }),
      titled('monastery'),
    ]));
  }
  if (t.village) {
    g.appendChild(el('g', { class: 'village' }, [
      el('path', { d: 'M-10,8 L-10,-2 L-3,-8 L4,-2 L4,8 Z' }),
      el('path', { d: 'M2,8 L2,0 L7,-5 L12,0 L12,8 Z' }),
      titled(t.crossroads ? 'crossroads village' : 'village'),
    ]));
  }
  t.pictures.forEach((p, n) => {
    const [x, y] = pictureAnchor(t, p, n);
    g.appendChild(el('g', { class: `picture picture-${p.kind}`, transform: `translate(${x},${y})` }, [
      el('circle', { r: 11, class: 'picture-bg' }),
      el('path', { d: ICONS[p.kind] ?? 'M-5,-5 L5,5 M5,-5 L-5,5' }),
      el('text', { x: 7, y: 10, class: 'picture-letter' }, [text(PICTURE_LETTER[p.kind] ?? '?')]),
      titled(p.kind.replace('-', ' ')),
    ]));
  });
  return g;
}

/**
 * Where an inn stands: beside its (first) road, towards its field.
 * @param {TileDesign} t
 * @param {Inn} inn
 * @returns {[number, number]}
 */
function innAnchor(t, inn) {
  const road = inn.roads[0];
  const [rx, ry] = road === undefined ? [0, 0] : segmentAnchor(t, road);
  const f = t.segments[inn.field];
  const [fx, fy] = f ? mean((f.halves ?? []).map((h) => halfPoint(h, 0.7))) : [0, 0];
  const dx = fx - rx, dy = fy - ry;
  const n = Math.hypot(dx, dy) || 1;
  return [rx + (dx / n) * 16, ry + (dy / n) * 16];
}

/**
 * A cathedral (I9): a nave with two towers and a cross.
 * @param {number} x
 * @param {number} y
 */
function cathedralMark(x, y) {
  return el('g', { class: 'cathedral', transform: `translate(${x},${y})` }, [
    el('path', { d: 'M-10,9 L-10,-6 L-6,-12 L-2,-6 L-2,-2 L2,-2 L2,-6 L6,-12 L10,-6 L10,9 Z' }),
    el('path', { d: 'M0,-9 L0,-17 M-3,-14 L3,-14', class: 'cathedral-cross' }),
    el('path', { d: 'M-2,9 L-2,3 a2,2 0 0,1 4,0 L2,9', class: 'cathedral-door' }),
    titled('a cathedral'),
  ]);
}

/**
 * The goods symbols (R1, R2), each with its own shape, colour and letter: no one needs to tell
 * the colours apart.
 * @type {Record<Goods, {fill: string, letter: string, shape: string, name: string}>}
 */
export const GOODS = {
  // a wine barrel
  wine: { fill: '#882255', letter: 'W', name: 'wine', shape: 'M-6,-7 L6,-7 Q9,0 6,7 L-6,7 Q-9,0 -6,-7 Z M-7,-3 L7,-3 M-7,3 L7,3' },
  // a sheaf of grain
  grain: { fill: '#DDAA33', letter: 'G', name: 'grain', shape: 'M0,8 L0,-8 M0,-4 L-5,-8 M0,-4 L5,-8 M0,1 L-5,-3 M0,1 L5,-3 M0,6 L-5,2 M0,6 L5,2' },
  // a bolt of cloth
  cloth: { fill: '#4477AA', letter: 'C', name: 'cloth', shape: 'M-8,-5 L5,-5 a3,5 0 0,1 0,10 L-8,5 Z M5,-5 a3,5 0 0,0 0,10' },
};

/**
 * A goods symbol on a city, or in a player's panel.
 * @param {Goods} goods
 * @param {number} x
 * @param {number} y
 */
export function goodsMark(goods, x, y) {
  const k = GOODS[goods];
  return el('g', { class: `goods goods-${goods}`, 'data-goods': goods, transform: `translate(${x},${y})` }, [
    el('circle', { r: 10, class: 'goods-bg', stroke: k.fill }),
    el('path', { d: k.shape, stroke: k.fill, class: 'goods-shape' }),
    el('text', { x: 7, y: 11, class: 'goods-letter' }, [text(k.letter)]),
    titled(k.name),
  ]);
}

/** @param {string} s */
export function titled(s) {
  const t = el('title', {});
  t.textContent = s;
  return t;
}

/**
 * @param {string} s
 * @returns {Element}
 */
function text(s) {
  return /** @type {Element} */ (/** @type {unknown} */ (document.createTextNode(s)));
}
