// The ratings page (/ratings): a family's leaderboard, a page at a time (`#family=duel&offset=N`),
// and a player's profile (`#player=NAME`): ratings per family, the rating after each rated
// match as an inline SVG chart, and the recent rated matches with links to their replays.
// Everything it shows is public (`GET /api/ratings`, `GET /api/players/{name}`).

/**
 * @typedef {import('./proto').Leaderboard} Leaderboard
 * @typedef {import('./proto').PlayerProfile} PlayerProfile
 * @typedef {import('./proto').RatingView} RatingView
 * @typedef {import('./proto').RatingChange} RatingChange
 * @typedef {import('./proto').Family} Family
 * @typedef {import('./proto').ErrorBody} ErrorBody
 */

/** Lines per leaderboard page. */
const PAGE = 50;

/** @type {Record<Family, string>} */
const FAMILY = { duel: '2 players', multi: '3–6 players' };

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

/** @param {string} path */
async function get(path) {
  const res = await fetch(path, { credentials: 'same-origin' });
  const json = await res.json().catch(() => ({ code: 'internal', message: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(/** @type {ErrorBody} */ (json).code === 'bad_name' ? 'There is no registered player of that name.' : `The server refused: ${json.message}`);
  return json;
}

/** @param {unknown} e */
function showError(e) {
  const box = $('error');
  box.hidden = e === null;
  box.textContent = e === null ? '' : e instanceof Error ? e.message : String(e);
}

/** A rating as shown: one decimal, and `?` while provisional. @param {RatingView} r */
const ratingText = (r) => `${r.rating.toFixed(1)}${r.provisional ? ' ?' : ''}`;

/** @param {string} name */
const profileLink = (name) => h('a', { href: `/ratings#player=${encodeURIComponent(name)}` }, [name]);

/** @param {Family} family @param {number} offset */
async function showBoard(family, offset) {
  $('board-page').hidden = false;
  document.title = `Ratings, ${FAMILY[family]} — Carcassonne`;
  for (const f of /** @type {Family[]} */ (['duel', 'multi'])) {
    if (f === family) $(`tab-${f}`).setAttribute('aria-current', 'page');
    else $(`tab-${f}`).removeAttribute('aria-current');
  }
  /** @type {Leaderboard} */
  const board = await get(`/api/ratings?family=${family}&offset=${offset}&limit=${PAGE}`);
  const body = /** @type {HTMLElement} */ ($('leaders').querySelector('tbody'));
  body.replaceChildren(...board.entries.map((e) => h('tr', { 'data-name': e.name }, [
    h('td', { class: 'num' }, [String(e.rank)]),
    h('td', {}, [profileLink(e.name)]),
    h('td', { class: 'num rating' }, [ratingText(e)]),
    h('td', { class: 'num' }, [String(e.games)]),
  ])));
  $('no-leaders').hidden = board.entries.length > 0;
  const prev = /** @type {HTMLButtonElement} */ ($('prev-page'));
  const next = /** @type {HTMLButtonElement} */ ($('next-page'));
  prev.disabled = offset === 0;
  next.disabled = board.next_offset == null;
  prev.onclick = () => { location.hash = `family=${family}&offset=${Math.max(0, offset - PAGE)}`; };
  next.onclick = () => { location.hash = `family=${family}&offset=${board.next_offset ?? offset}`; };
}

/** The rating after each rated match, oldest first, one line per family. @param {RatingChange[]} history */
function drawChart(history) {
  const chart = $('p-chart');
  chart.replaceChildren();
  const points = [...history].reverse();
  if (points.length === 0) return;
  const values = points.flatMap((c) => [c.before, c.after]);
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const span = hi - lo || 1;
  const [w, ht, pad] = [600, 160, 24];
  /** @param {number} i */
  const x = (i) => pad + (i * (w - 2 * pad)) / Math.max(1, points.length);
  /** @param {number} v */
  const y = (v) => ht - pad - ((v - lo) * (ht - 2 * pad)) / span;
  chart.append(svg('line', { class: 'axis', x1: pad, y1: ht - pad, x2: w - pad, y2: ht - pad }));
  const lows = svg('text', { x: 2, y: ht - pad });
  lows.textContent = lo.toFixed(1);
  const highs = svg('text', { x: 2, y: pad });
  highs.textContent = hi.toFixed(1);
  chart.append(lows, highs);
  const colours = { duel: '#0072B2', multi: '#D55E00' };
  for (const family of /** @type {Family[]} */ (['duel', 'multi'])) {
    const mine = points.map((c, i) => ({ c, i })).filter((p) => p.c.family === family);
    if (mine.length === 0) continue;
    const d = mine.map((p, k) => `${k === 0 ? 'M' : 'L'}${x(p.i).toFixed(1)},${y(p.c.before).toFixed(1)} L${x(p.i + 1).toFixed(1)},${y(p.c.after).toFixed(1)}`).join(' ');
    const line = svg('path', { class: `line ${family}`, d, stroke: colours[family], 'data-family': family, 'data-points': mine.length });
    chart.append(line);
  }
}

/** @param {string} name */
async function showProfile(name) {
  $('profile-page').hidden = false;
  /** @type {PlayerProfile} */
  const p = await get(`/api/players/${encodeURIComponent(name)}`);
  document.title = `${p.name} — Carcassonne ratings`;
  $('p-name').textContent = p.name;
  const ratings = /** @type {HTMLElement} */ ($('p-ratings').querySelector('tbody'));
  ratings.replaceChildren(...(p.ratings.length ? p.ratings.map((r) => h('tr', { 'data-family': r.family }, [
    h('td', {}, [FAMILY[r.family]]),
    h('td', { class: 'num rating' }, [ratingText(r)]),
    h('td', { class: 'num' }, [r.mu.toFixed(2)]),
    h('td', { class: 'num' }, [r.sigma.toFixed(2)]),
    h('td', { class: 'num' }, [String(r.games)]),
  ])) : [h('tr', {}, [h('td', { colspan: '5' }, ['No rated match yet.'])])]));
  const history = /** @type {HTMLElement} */ ($('p-history').querySelector('tbody'));
  history.replaceChildren(...p.history.map((c) => h('tr', { 'data-match': c.match_id }, [
    h('td', {}, [c.ended_at.replace('T', ' ').replace('Z', '')]),
    h('td', {}, [FAMILY[c.family]]),
    h('td', { class: 'num' }, [String(c.place)]),
    h('td', {}, c.seats.flatMap((s, i) => [i ? ' · ' : '', profileLink(s.name), ` ${s.score}`])),
    h('td', { class: 'num' }, [`${c.before.toFixed(1)} → ${c.after.toFixed(1)}`]),
    h('td', {}, [h('a', { href: `/replay?match=${c.match_id}`, class: 'replay-link' }, ['Replay'])]),
  ])));
  drawChart(p.history);
}

async function show() {
  $('board-page').hidden = true;
  $('profile-page').hidden = true;
  showError(null);
  const params = new URLSearchParams(location.hash.slice(1));
  const player = params.get('player');
  try {
    if (player) await showProfile(player);
    else {
      const family = params.get('family') === 'multi' ? 'multi' : 'duel';
      await showBoard(family, Math.max(0, Number(params.get('offset')) || 0));
    }
    document.body.dataset.ready = location.hash;
  } catch (e) {
    showError(e);
  }
}

window.addEventListener('hashchange', show);
show();
