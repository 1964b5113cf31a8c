// The admin console (/admin): the match list with filters and paging, and for one match its
// summary, a timeline of every command in words, the board at any seq (replayed by the server,
// drawn with the play page's board code), the secrets of a match that is over, the scenario
// export, abort and away with a confirmation, and the audit trail; the moderation screen
// (reports, chat removal, suspensions, reset links) is `moderation.js`. The admin token is asked
// once and kept in this tab's sessionStorage; it goes in a header, never in a URL.

import { Board } from './board.js';
import { COLOURS, at, cap, chipWords, commandWords, eventWords } from './words.js';
import { openModeration } from './moderation.js';
import { bindStepper, clampSeq, showStep } from './stepper.js';

/**
 * @typedef {import('./tiles.js').Catalogue} Catalogue
 * @typedef {import('./proto').View} View
 * @typedef {import('./proto').Colour} Colour
 * @typedef {import('./proto').ErrorBody} ErrorBody
 * @typedef {import('./proto').AdminMatchSummary} Summary
 * @typedef {import('./proto').AdminMatchList} MatchList
 * @typedef {import('./proto').AdminMatchLog} MatchLog
 * @typedef {import('./proto').AdminLogEntry} LogEntry
 * @typedef {import('./proto').AdminMatchState} MatchState
 * @typedef {import('./proto').AdminMatchSecrets} MatchSecrets
 * @typedef {import('./proto').AdminActionList} ActionList
 * @typedef {import('./proto').AdminAction} Action
 * @typedef {import('./proto').Secrets} Secrets
 */

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));
/** @param {string} id */
const button = (id) => /** @type {HTMLButtonElement} */ (document.getElementById(id));

const TOKEN_KEY = 'carcassonne.admin-token';

/** The match page's stepper. */
const stepButtons = {
  first: button('seq-first'), prev: button('seq-prev'), next: button('seq-next'), last: button('seq-last'),
};

/** The refusals an admin meets, in words; the server's own message follows. */
/** @type {Record<string, string>} */
const REFUSED = {
  bad_token: 'The admin token was refused.',
  unavailable: 'Not available now.',
  unknown_match: 'There is no such match.',
  not_finished: 'The match is not over yet.',
  not_active: 'The match is not being played.',
  malformed: 'The request was refused as malformed.',
  internal: 'The server failed.',
};

/** A refusal of the admin API, with the JSON error body the server sends. */
class Refused extends Error {
  /** @param {number} status @param {ErrorBody} body */
  constructor(status, body) {
    super(body.message);
    this.status = status;
    this.body = body;
  }

  /** The refusal in words: what it means, then the server's message and code. */
  words() {
    const lead = REFUSED[this.body.code] ?? 'The server refused.';
    return `${lead} The server says: ${this.body.message} (${this.body.code}, HTTP ${this.status}).`;
  }
}

/** A refusal or a failed request, in words. @param {unknown} e */
function errorWords(e) {
  if (e instanceof Refused) return e.words();
  return `The request failed: ${e instanceof Error ? e.message : String(e)}`;
}

/**
 * A request to the admin API with the token. Throws [`Refused`] with the server's body.
 * @param {string} path under /api/admin
 * @param {RequestInit} [init]
 * @returns {Promise<Response>}
 */
async function request(path, init = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY) ?? '';
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${token}`);
  const res = await fetch(`/api/admin${path}`, { ...init, headers });
  if (res.ok) return res;
  /** @type {ErrorBody} */
  let body;
  try {
    body = await res.json();
  } catch {
    body = { code: 'internal', message: `${res.status} ${res.statusText}` };
  }
  const err = new Refused(res.status, body);
  // A token the server no longer takes: ask again.
  if (body.code === 'bad_token') {
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin(err.words());
  }
  throw err;
}

/**
 * @template T
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<T>}
 */
async function api(path, init) {
  return (await request(path, init)).json();
}

/** @param {string|null} msg */
function showError(msg) {
  const e = $('error');
  e.textContent = msg ?? '';
  e.hidden = !msg;
}

/** `2026-11-30T19:15:04.123456Z` → `2026-11-30 19:15:04`, in UTC as the server gives it. */
/** @param {string} t */
const when = (t) => t.replace('T', ' ').replace(/\.\d+/, '').replace('Z', '');

/** @param {string} id */
const short = (id) => id.slice(0, 8);

/** A player's swatch: colour, letter and name. @param {Colour} c */
function swatch(c) {
  const s = document.createElement('span');
  const k = COLOURS[c];
  s.className = 'swatch';
  s.style.background = k.fill;
  s.style.color = k.ink;
  s.textContent = k.letter;
  s.title = cap(c);
  return s;
}

/**
 * An element with text and children.
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

/**
 * Asks before an action that changes a match; keyboard: Tab between the buttons, Esc cancels,
 * and Cancel has the focus so that Enter alone changes nothing.
 * @param {string} text
 * @param {string} ok
 * @returns {Promise<boolean>}
 */
function confirmAction(text, ok) {
  const d = /** @type {HTMLDialogElement} */ ($('confirm-dialog'));
  $('confirm-text').textContent = text;
  $('confirm-ok').textContent = ok;
  d.returnValue = '';
  d.showModal();
  button('confirm-cancel').focus();
  return new Promise((resolve) => d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true }));
}

// The pages.

function hideAll() {
  for (const id of ['login', 'list', 'match', 'moderation']) $(id).hidden = true;
}

/** @param {string} [msg] why the token is asked (again) */
function showLogin(msg) {
  hideAll();
  $('login').hidden = false;
  $('forget').hidden = true;
  $('where').textContent = '';
  showError(msg ?? null);
  input('token').focus();
}

$('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const t = input('token').value.trim();
  if (!t) return;
  sessionStorage.setItem(TOKEN_KEY, t);
  input('token').value = '';
  showError(null);
  route();
});

$('forget').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  showLogin();
});

window.addEventListener('hashchange', () => route());

/** Shows the page the URL's fragment names: `#match=ID[&seq=N]`, `#moderation[&account=ID]`
 * (`moderation.js`), else the list. */
function route() {
  if (!sessionStorage.getItem(TOKEN_KEY)) return showLogin();
  showError(null);
  $('forget').hidden = false;
  const p = new URLSearchParams(location.hash.slice(1));
  const id = p.get('match');
  if (p.has('moderation')) {
    hideAll();
    openModeration({ api, request, h, when, confirmAction, showError, errorWords }, p.get('account'));
  } else if (id) openMatch(id, p.has('seq') ? Number(p.get('seq')) : null);
  else openList();
}

// The list.

/** The cursors of the pages shown so far: `cursors[i]` opened page i (null: the first). */
/** @type {(string|null)[]} */
let cursors = [null];
/** @type {string|null} */
let nextCursor = null;
/** @type {number|null} */
let trailBefore = null;

/** `datetime-local` (read as UTC) → RFC 3339. @param {string} v */
const utc = (v) => (v ? `${v.length === 16 ? `${v}:00` : v}Z` : '');

function filterQuery() {
  const q = new URLSearchParams();
  const status = /** @type {HTMLSelectElement} */ ($('f-status')).value;
  const module = /** @type {HTMLSelectElement} */ ($('f-module')).value;
  if (status) q.set('status', status);
  if (module) q.set('module', module);
  if (input('f-from').value) q.set('from', utc(input('f-from').value));
  if (input('f-to').value) q.set('to', utc(input('f-to').value));
  q.set('limit', /** @type {HTMLSelectElement} */ ($('f-limit')).value);
  return q;
}

function openList() {
  hideAll();
  $('list').hidden = false;
  $('where').textContent = 'Matches';
  document.title = 'Matches — Carcassonne admin';
  cursors = [null];
  loadPage(0);
  loadTrail($('trail'), null, false);
}

/** @param {number} i the page's index in `cursors` */
async function loadPage(i) {
  const q = filterQuery();
  const c = cursors[i];
  if (c) q.set('cursor', c);
  const body = /** @type {HTMLElement} */ ($('matches').querySelector('tbody'));
  try {
    /** @type {MatchList} */
    const list = await api(`/matches?${q}`);
    cursors = cursors.slice(0, i + 1);
    nextCursor = list.next_cursor ?? null;
    body.replaceChildren(...list.matches.map(matchRow));
    if (list.matches.length === 0) body.append(h('tr', {}, [h('td', { colspan: '7' }, [i === 0 ? 'No match matches these filters.' : 'No more matches.'])]));
    $('page-no').textContent = `Page ${i + 1}`;
    button('next-page').disabled = !nextCursor;
    button('first-page').disabled = i === 0;
    $('matches').dataset.page = String(i);
  } catch (e) {
    showError(errorWords(e));
  }
}

/** @param {Summary} m */
function matchRow(m) {
  const tr = h('tr', { 'data-match': m.match_id });
  const link = h('a', { href: `#match=${m.match_id}`, title: m.match_id }, [short(m.match_id)]);
  const players = h('td', {}, m.players.flatMap((p) => [swatch(p.colour), `${p.name ? ` ${p.name}` : ''}${p.away_since ? ' away ' : ' '}`]));
  tr.append(
    h('td', {}, [link]),
    h('td', {}, [when(m.created_at)]),
    h('td', {}, [h('span', { class: `status status-${m.status}` }, [m.status])]),
    players,
    h('td', {}, [m.modules.join(', ') || 'base']),
    h('td', { class: 'seq' }, [String(m.seq)]),
    h('td', {}, [m.scores ? m.scores.join(' : ') : '–']),
    h('td', { class: 'owner' }, [m.owner ?? '–']),
  );
  return tr;
}

$('filters').addEventListener('submit', (e) => {
  e.preventDefault();
  cursors = [null];
  loadPage(0);
});
$('first-page').addEventListener('click', () => loadPage(0));
$('next-page').addEventListener('click', () => {
  if (!nextCursor) return;
  cursors.push(nextCursor);
  loadPage(cursors.length - 1);
});

/**
 * Fills an audit trail list (of one match, or all).
 * @param {HTMLElement} list
 * @param {string|null} matchId
 * @param {boolean} more the next page of the same list
 */
async function loadTrail(list, matchId, more) {
  const q = new URLSearchParams({ limit: '20' });
  if (matchId) q.set('match_id', matchId);
  if (more && trailBefore !== null) q.set('before', String(trailBefore));
  try {
    /** @type {ActionList} */
    const page = await api(`/actions?${q}`);
    const items = page.actions.map((a) => actionItem(a, !matchId));
    if (more) list.append(...items);
    else list.replaceChildren(...items);
    if (!more && items.length === 0) list.append(h('li', { class: 'none' }, ['Nothing yet.']));
    if (!matchId) {
      trailBefore = page.next_before ?? null;
      button('trail-more').hidden = trailBefore === null;
    }
  } catch (e) {
    showError(errorWords(e));
  }
}

$('trail-more').addEventListener('click', () => loadTrail($('trail'), null, true));

/** @param {Action} a @param {boolean} withMatch */
function actionItem(a, withMatch) {
  const detail = a.detail && typeof a.detail === 'object' && Object.keys(a.detail).length ? ` ${JSON.stringify(a.detail)}` : '';
  const li = h('li', { 'data-action': a.action, 'data-outcome': a.outcome }, [`${when(a.at)} · ${a.actor}: ${a.action}`]);
  if (withMatch && a.match_id) li.append(' of ', h('a', { href: `#match=${a.match_id}` }, [short(a.match_id)]));
  li.append(`${detail} → ${a.outcome === 'ok' ? 'done' : `refused (${a.outcome})`}`);
  return li;
}

// One match.

/** @type {Catalogue|null} */
let catalogue = null;
/** @type {Board|null} */
let board = null;
/** The match open now and what the page knows of it. */
/** @type {{id: string, summary: Summary, log: LogEntry[], seq: number, shown: number|null, views: Map<number, View>}|null} */
let current = null;
/** Bumped by every step, so that an older answer arriving late draws nothing. */
let want = 0;

async function ensureBoard() {
  if (board) return board;
  if (!catalogue) catalogue = /** @type {Catalogue} */ (await (await fetch('/api/tiles')).json());
  const designs = new Map(catalogue.tiles.map((t) => [t.id, t]));
  const nothing = () => {};
  board = new Board(/** @type {SVGSVGElement} */ (/** @type {unknown} */ ($('board'))), designs, {
    square: nothing, preview: nothing, meeple: nothing, tollhouse: nothing, pick: nothing,
  });
  return board;
}

/** @param {string} id @param {number|null} seq */
async function openMatch(id, seq) {
  hideAll();
  $('match').hidden = false;
  $('where').textContent = `Match ${short(id)}`;
  document.title = `Match ${short(id)} — Carcassonne admin`;
  $('m-id').textContent = id;
  $('secrets').replaceChildren();
  try {
    const [summary, log] = await Promise.all([api(`/matches/${id}`), wholeLog(id)]);
    await ensureBoard();
    const same = current?.id === id;
    current = { id, summary, log, seq: 0, shown: null, views: same && current ? current.views : new Map() };
    renderSummary();
    renderTimeline();
    loadTrail($('m-trail'), id, false);
    step(seq ?? summary.seq);
  } catch (e) {
    showError(errorWords(e));
  }
}

/** Every page of a match's log. @param {string} id @returns {Promise<LogEntry[]>} */
async function wholeLog(id) {
  /** @type {LogEntry[]} */
  const all = [];
  let after = 0;
  for (;;) {
    /** @type {MatchLog} */
    const page = await api(`/matches/${id}/log?after=${after}`);
    all.push(...page.commands);
    if (page.next_after == null) return all;
    after = page.next_after;
  }
}

/** @returns {Colour[]} */
const colours = () => current?.summary.players.map((p) => p.colour) ?? [];

function renderSummary() {
  if (!current) return;
  const m = current.summary;
  /** @type {[string, (Node|string)[]][]} */
  const rows = [
    ['Status', [h('span', { class: `status status-${m.status}`, id: 'm-status' }, [m.status])]],
    ['Created', [when(m.created_at)]],
    ['Updated', [when(m.updated_at)]],
    ['Rules', [m.rules_version]],
    ['Modules', [m.modules.join(', ') || 'base game', ...(m.map_id ? [` (map ${m.map_id})`] : [])]],
    ['Commands', [String(m.seq)]],
  ];
  if (m.scores) rows.push(['Final scores', m.players.flatMap((p, i) => [swatch(p.colour), ` ${m.scores?.[i]} `])]);
  $('m-summary').replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, [k]), h('dd', {}, v)]));
  const active = m.status === 'active';
  button('abort').disabled = !active;
  $('seats').replaceChildren(...m.players.map((p) => {
    const away = !!p.away_since;
    const b = h('button', { 'data-away-seat': String(p.seat) }, [away ? 'Mark back…' : 'Mark away…']);
    /** @type {HTMLButtonElement} */ (b).disabled = !active;
    b.addEventListener('click', () => markAway(p.seat, !away));
    const li = h('li', { 'data-seat': String(p.seat) }, [
      swatch(p.colour), ` ${cap(p.colour)} (seat ${p.seat})${p.name ? `: ${p.name}` : ''} `,
      away ? `away since ${when(p.away_since ?? '')} ` : 'present ', b,
    ]);
    // The account behind the seat, on the moderation screen (suspend, reset link).
    if (p.account) li.append(' ', h('a', { href: `#moderation&account=${p.account}`, 'data-account': p.account }, ['account…']));
    return li;
  }));
  const range = input('seq');
  range.max = String(m.seq);
}

/** Who sent a command: the player's colour, or the server on their behalf. @param {LogEntry} c */
function who(c) {
  const colour = colours()[c.seat];
  const name = colour ? cap(colour) : `seat ${c.seat}`;
  if (c.origin === 'server') return [h('span', { class: 'server-tag' }, ['server']), ` for ${name}`];
  return colour ? [swatch(colour), ` ${name}`] : [name];
}

function renderTimeline() {
  if (!current) return;
  const cs = colours();
  const items = [h('li', { 'data-seq': '0' }, [h('button', {}, [
    h('div', { class: 't-head' }, [h('span', { class: 't-seq' }, ['0']), 'the opening', h('span', { class: 't-time' }, [when(current.summary.created_at)])]),
  ])])];
  for (const c of current.log) {
    const lines = c.events
      .map((e, i) => eventWords(e, cs, c.events.slice(0, i)))
      .filter((l) => l !== null)
      .map((l) => h('li', {}, [/** @type {string} */ (l)]));
    const b = h('button', { title: `command ${c.command_id}` }, [
      h('div', { class: 't-head' }, [
        h('span', { class: 't-seq' }, [String(c.seq)]), ...who(c),
        h('span', { class: 't-time' }, [when(c.created_at).slice(11)]),
      ]),
      h('div', { class: 't-cmd' }, [commandWords(c.command)]),
      h('ul', { class: 't-events' }, lines),
    ]);
    items.push(h('li', { 'data-seq': String(c.seq), 'data-origin': c.origin }, [b]));
  }
  for (const li of items) {
    const s = Number(li.dataset.seq);
    li.querySelector('button')?.addEventListener('click', () => step(s));
  }
  $('timeline').replaceChildren(...items);
}

/** Shows the board at `seq` (clamped to the match): the stepper, the timeline, then the view. */
/** @param {number} seq */
async function step(seq) {
  if (!current) return;
  const n = clampSeq(seq, current.summary.seq);
  current.seq = n;
  input('seq').value = String(n);
  $('at-seq').textContent = String(n);
  showStep(stepButtons, n, current.summary.seq);
  for (const li of /** @type {NodeListOf<HTMLElement>} */ ($('timeline').querySelectorAll('li[data-seq]'))) {
    const s = Number(li.dataset.seq);
    if (s === n) {
      li.setAttribute('aria-current', 'step');
      li.scrollIntoView({ block: 'nearest' });
    } else li.removeAttribute('aria-current');
    li.classList.toggle('later', s > n);
  }
  history.replaceState(null, '', `#match=${current.id}&seq=${n}`);
  const ticket = ++want;
  const id = current.id;
  let view = current.views.get(n);
  if (!view) {
    // While the slider is dragged, ask only for the seq it rests on: each answer is a replay.
    await new Promise((r) => setTimeout(r, 60));
    if (ticket !== want) return;
    try {
      /** @type {MatchState} */
      const st = await api(`/matches/${id}/state?seq=${n}`);
      view = st.view;
      current?.views.set(n, view);
    } catch (e) {
      if (ticket === want) showError(errorWords(e));
      return;
    }
  }
  if (ticket !== want || current?.id !== id) return;
  drawAt(n, view);
}

/**
 * A player's large meeple, builder and pig in the supply (1) or on the board (0), in letters.
 * @param {import('./proto').PlayerView} p
 */
function figuresText(p) {
  return [
    p.large_meeples !== undefined && p.large_meeples !== null ? `L${p.large_meeples}` : '',
    p.builder !== undefined && p.builder !== null ? `B${p.builder}` : '',
    p.pig !== undefined && p.pig !== null ? `P${p.pig}` : '',
  ].filter(Boolean).join(' ');
}

/** @param {number} seq @param {View} view */
function drawAt(seq, view) {
  if (!current || !board) return;
  const cs = view.players.map((p) => p.colour);
  $('at-turn').textContent = view.finished
    ? 'Game over.'
    : `Turn ${view.turn}: ${cap(cs[view.active] ?? '')} · pile ${view.pile_size}${view.drawn ? ` · drawn ${view.drawn}` : ''}`;
  // The modules' public parts at that seq: tollhouses, The Messages' pawns, the France hands.
  const pawns = view.messages?.players ?? [];
  const hands = view.map?.hands ?? [];
  $('at-extra').textContent = [
    view.modules.tollkeepers ? 'Tollhouse' : '',
    pawns.length ? 'Pawns ● ◆' : '',
    hands.length ? 'Chips' : '',
    view.modules.inns_cathedrals || view.modules.traders_builders ? 'Figures L B P' : '',
    view.modules.traders_builders ? 'Goods W G C' : '',
  ].filter(Boolean).join(' · ');
  $('at-players').replaceChildren(...view.players.map((p, i) => h('tr', { 'data-player': p.colour, class: i === view.active && !view.finished ? 'active' : '' }, [
    h('td', {}, [swatch(p.colour), ` ${cap(p.colour)}`]),
    h('td', { class: 'score' }, [String(p.score)]),
    h('td', { class: 'meeples' }, [String(p.meeples)]),
    h('td', { class: 'extra' }, [[
      view.modules.tollkeepers ? (p.tollhouse ? `${p.tollhouse.value} at ${at(p.tollhouse.pos)}` : '–') : '',
      pawns[i] ? `● ${pawns[i].scoring} ◆ ${pawns[i].messenger}` : '',
      hands.length ? (hands[i] ?? []).map(chipWords).join(', ') || 'no chips' : '',
      figuresText(p),
      p.goods ? `W${p.goods.wine} G${p.goods.grain} C${p.goods.cloth}` : '',
    ].filter(Boolean).join(' · ')]),
  ])));
  if (view.messages) $('at-turn').append(` · ${view.messages.stack} dispatches in the stack`);
  const placing = view.decisions.find((d) => d.type === 'place_tile');
  board.render({
    view,
    legal: placing && placing.type === 'place_tile' ? placing.placements : [],
    selected: null,
    fits: false,
    targets: null,
    focusTarget: null,
    mine: false,
    placing: false,
  });
  current.shown = seq;
  // For tests and the curious: the seq and view the board shows.
  $('board').dataset.seq = String(seq);
  /** @type {any} */ (window).carcassonneAdmin = { seq, view };
}

input('seq').addEventListener('input', () => step(Number(input('seq').value)));
bindStepper(stepButtons, {
  at: () => current?.seq ?? 0,
  end: () => current?.summary.seq ?? 0,
  go: (n) => { if (current) step(n); },
}, () => !$('match').hidden && !!current && !(/** @type {HTMLDialogElement} */ ($('confirm-dialog'))).open, {
  zoom: (f) => board?.zoom(f),
  fit: () => board?.fit(),
});
$('zoom-in').addEventListener('click', () => board?.zoom(1.25));
$('zoom-out').addEventListener('click', () => board?.zoom(0.8));
$('zoom-fit').addEventListener('click', () => board?.fit());
window.addEventListener('resize', () => board?.fit());

/** Reloads the summary, the log and the trail after an action. */
async function refresh() {
  if (!current) return;
  const id = current.id;
  const [summary, log] = await Promise.all([api(`/matches/${id}`), wholeLog(id)]);
  if (current?.id !== id) return;
  current.summary = summary;
  current.log = log;
  renderSummary();
  renderTimeline();
  loadTrail($('m-trail'), id, false);
  step(current.seq);
}

$('refresh').addEventListener('click', () => refresh().catch((e) => showError(errorWords(e))));

$('abort').addEventListener('click', async () => {
  if (!current) return;
  const id = current.id;
  const ok = await confirmAction(
    `Abort match ${short(id)} for good? Its players can play no further move, and a restart does not resume it.`,
    'Abort the match',
  );
  if (!ok) return;
  try {
    await api(`/matches/${id}/abort`, { method: 'POST' });
    showError(null);
  } catch (e) {
    showError(errorWords(e));
  }
  await refresh().catch((e) => showError(errorWords(e)));
});

/** @param {number} seat @param {boolean} away */
async function markAway(seat, away) {
  if (!current) return;
  const id = current.id;
  const name = cap(colours()[seat] ?? `seat ${seat}`);
  const ok = await confirmAction(
    away ? `Mark ${name} away? Their clock will play for them.` : `Mark ${name} back?`,
    away ? `Mark ${name} away` : `Mark ${name} back`,
  );
  if (!ok) return;
  try {
    await api(`/matches/${id}/away`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seat, away }),
    });
    showError(null);
  } catch (e) {
    showError(errorWords(e));
  }
  await refresh().catch((e) => showError(errorWords(e)));
}

$('download').addEventListener('click', async () => {
  if (!current) return;
  const id = current.id;
  try {
    const res = await request(`/matches/${id}/scenario`);
    const blob = await res.blob();
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `match-${id}.json`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    $('download').dataset.downloaded = String(blob.size);
    showError(null);
  } catch (e) {
    showError(errorWords(e));
  }
  loadTrail($('m-trail'), id, false);
});

$('reveal').addEventListener('click', async () => {
  if (!current) return;
  const id = current.id;
  const out = $('secrets');
  try {
    /** @type {MatchSecrets} */
    const s = await api(`/matches/${id}/secrets`);
    out.replaceChildren(
      h('p', {}, [`Seed: `, h('code', { id: 'seed' }, [String(s.end.seed)])]),
      ...secretsOf('At the start (the pile after the first draw)', s.start, 'start'),
      ...secretsOf(`At the end (seq ${s.seq})`, s.end, 'end'),
    );
  } catch (e) {
    out.replaceChildren(h('p', { class: 'refused', 'data-refused': e instanceof Refused ? e.body.code : 'failed' }, [errorWords(e)]));
  }
  loadTrail($('m-trail'), id, false);
});

/** @param {string} title @param {Secrets} s @param {string} key */
function secretsOf(title, s, key) {
  /** @type {HTMLElement[]} */
  const out = [h('h3', {}, [title])];
  out.push(h('p', {}, [`Pile order (${s.pile.length} tiles, next first):`]));
  out.push(h('ol', { 'data-pile': key }, s.pile.map((t) => h('li', {}, [t]))));
  if (s.chips?.length) {
    out.push(h('p', { 'data-chips': key }, [`Face-down chips: ${s.chips.map((c) => `${c.grape.replace('_', ' ')} ${c.value} at ${at(c.pos)}`).join('; ')}`]));
  }
  if (s.dispatches) {
    out.push(h('p', { 'data-dispatches': key }, [`Dispatch stack, top first: ${s.dispatches.join(', ') || 'empty'}`]));
  }
  return out;
}

route();
