// The lobby, the page's main entry (loaded only there, so the play page stays light): enter as a
// guest or with a registered name (the server sets an HttpOnly session cookie; this code never
// sees the token), list the open lobbies and the running public matches, create a lobby, and sit
// in one: colour, ready, kick and bots for the host, start; the player's own pages (my games,
// account, a reset link) are in `account.js`. Every view is a URL fragment
// (`#lobby=ID&code=INVITE`), and the page reloads when it changes, as the play page does. When the
// lobby starts, its followers move to `/#match=ID`, where the play page takes the account's seat.

import { COLOURS, cap } from './words.js';

/**
 * @typedef {import('./proto').Account} Account
 * @typedef {import('./proto').LobbyState} LobbyState
 * @typedef {import('./proto').LobbyList} LobbyList
 * @typedef {import('./proto').LobbyModules} LobbyModules
 * @typedef {import('./proto').ClockSettings} ClockSettings
 * @typedef {import('./proto').ErrorBody} ErrorBody
 * @typedef {import('./proto').ServerMessage} ServerMessage
 * @typedef {import('./proto').Colour} Colour
 */

/** The lobby errors in words; the server's message follows. */
const WORDS = /** @type {Record<string, string>} */ ({
  bad_name: 'That name cannot be used.',
  name_taken: 'That name is taken.',
  bad_password: 'That password is too weak.',
  bad_credentials: 'Wrong name or password.',
  unauthenticated: 'Enter as a guest or log in first.',
  unknown_session: 'Your session has ended; enter again.',
  unknown_lobby: 'There is no such lobby (it may have closed).',
  invite_required: 'This lobby is private: it needs its invite code.',
  seat_taken: 'That seat is taken.',
  colour_taken: 'That colour is taken.',
  not_host: 'Only the host may do that.',
  not_in_lobby: 'You are not in this lobby.',
  already_in_lobby: 'You are already in this lobby.',
  not_ready: 'Every seat must be taken and ready first.',
  lobby_started: 'This lobby has started.',
  bad_option: 'An option is not valid.',
});

const MODULE_NAMES = /** @type {Record<keyof LobbyModules, string>} */ ({
  tollkeepers: 'The Tollkeepers',
  messages: 'The Messages',
  france: 'France map',
  chips: 'France chips',
  inns_cathedrals: 'Inns & Cathedrals',
  traders_builders: 'Traders & Builders',
});

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

class Refused extends Error {
  /** @param {ErrorBody} body */
  constructor(body) {
    super(`${WORDS[body.code] ?? 'The server refused.'} (${body.message})`);
    this.body = body;
  }
}

/**
 * One REST call with the session cookie; throws [`Refused`] with the server's error.
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 */
async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  if (res.status === 204) return null;
  const json = await res.json().catch(() => ({ code: 'internal', message: `HTTP ${res.status}` }));
  if (!res.ok) throw new Refused(json);
  return json;
}

/** @param {LobbyModules} m */
function modulesWords(m) {
  const on = /** @type {(keyof LobbyModules)[]} */ (Object.keys(MODULE_NAMES)).filter((k) => m[k]);
  return on.length ? on.map((k) => MODULE_NAMES[k]).join(', ') : 'base game';
}

/** @param {ClockSettings|null|undefined} c */
function clockWords(c) {
  if (!c) return 'no clock';
  /** @param {number} ms */
  const t = (ms) => (ms % 86400000 === 0 ? `${ms / 86400000} d` : ms % 3600000 === 0 ? `${ms / 3600000} h` : ms % 60000 === 0 ? `${ms / 60000} min` : `${ms / 1000} s`);
  return `${t(c.bank_ms)} + ${t(c.increment_ms)}`;
}

/** @param {Colour|null|undefined} c */
function swatch(c) {
  if (!c) return h('span', { class: 'swatch empty', title: 'no colour' }, ['–']);
  const s = COLOURS[c];
  // Through the style object: the Content-Security-Policy refuses `style` attributes.
  const e = h('span', { class: 'swatch', title: cap(c) }, [s.letter]);
  e.style.background = s.fill;
  e.style.color = s.ink;
  return e;
}

/** Shows an error (or clears it with `null`) in the lobby's alert line. @param {unknown} e */
function showError(e) {
  const box = $('lobby-error');
  box.hidden = e === null;
  box.textContent = e === null ? '' : e instanceof Error ? e.message : String(e);
}

/** Runs an action, showing what the server refused. @param {() => Promise<unknown>} f */
async function attempt(f) {
  try {
    showError(null);
    await f();
  } catch (e) {
    showError(e);
  }
}

export async function showLobbies() {
  $('status').textContent = '';
  const main = $('lobbies');
  main.hidden = false;
  const reset = new URLSearchParams(location.hash.slice(1)).get('reset');
  // A reset link needs no session: it is the proof.
  if (reset) return (await import('./account.js')).showReset(reset);
  /** @type {Account|null} */
  let me = null;
  // Asked of `/api/whoami`, which answers "no one" without an error (no failed request logged).
  try {
    /** @type {import('./proto').Whoami} */
    const who = await api('GET', '/api/whoami');
    me = who.account ?? null;
  } catch {
    me = null;
  }
  document.body.dataset.account = me ? me.name : '';
  const params = new URLSearchParams(location.hash.slice(1));
  const lobbyId = params.get('lobby');
  if (!me) return showEntry();
  $('whoami').replaceChildren(
    `${me.name}${me.kind === 'guest' ? ' (guest)' : ''} `,
    h('a', { href: '/#games', id: 'my-games' }, ['My games']),
    ' ',
    h('a', { href: '/#account', id: 'my-account' }, ['Account']),
    ' ',
    button('Log out', 'logout', () => attempt(async () => {
      await api('DELETE', '/api/sessions/current');
      location.reload();
    })),
  );
  if (lobbyId) return showRoom(me, lobbyId, params.get('code'));
  if (location.hash === '#games') return (await import('./account.js')).showMyGames();
  if (location.hash === '#account') return (await import('./account.js')).showAccount(me);
  return showList();
}

/** The bot levels a host may pick, by their names on the wire. */
const BOT_LEVELS = {
  random: 'random',
  easy: 'easy',
  medium: 'medium (thinks 0.2 s)',
  hard: 'hard (thinks 1 s)',
};

/**
 * @param {string} label
 * @param {string} id
 * @param {() => void} onClick
 */
function button(label, id, onClick) {
  const b = /** @type {HTMLButtonElement} */ (h('button', { type: 'button', id }, [label]));
  b.addEventListener('click', onClick);
  return b;
}

/** Not signed in: a display name as a guest, or a registered name and password. */
function showEntry() {
  $('entry').hidden = false;
  $('guest-name').focus();
  $('guest-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const name = /** @type {HTMLInputElement} */ ($('guest-name')).value;
    attempt(async () => {
      await api('POST', '/api/accounts/guest', { name });
      location.reload();
    });
  });
  /** @param {string} path */
  const signIn = (path) => attempt(async () => {
    const name = /** @type {HTMLInputElement} */ ($('login-name')).value;
    const password = /** @type {HTMLInputElement} */ ($('login-password')).value;
    await api('POST', path, { name, password });
    location.reload();
  });
  $('login-form').addEventListener('submit', (e) => {
    e.preventDefault();
    signIn('/api/sessions');
  });
  $('register').addEventListener('click', () => signIn('/api/accounts'));
}

/** The open lobbies (with filters), the running public matches, and the create form. */
function showList() {
  $('browse').hidden = false;
  showWebhook();
  const module = /** @type {HTMLSelectElement} */ ($('filter-module'));
  const free = /** @type {HTMLSelectElement} */ ($('filter-free'));
  let shown = '';
  const refresh = async () => {
    const q = new URLSearchParams();
    if (module.value) q.set('module', module.value);
    if (free.value) q.set('free_seats', free.value);
    /** @type {LobbyList} */
    let list;
    try {
      list = await api('GET', `/api/lobbies?${q}`);
    } catch (e) {
      showError(e);
      return;
    }
    // Redraw only on a change, so that keyboard focus on a Join button is not lost every poll.
    const key = JSON.stringify(list);
    if (key === shown) return;
    shown = key;
    const rows = list.lobbies.map((l) => {
      const taken = l.seats.filter((s) => s.occupant).length;
      const join = button('Join', `join-${l.id}`, () => attempt(async () => {
        await api('POST', `/api/lobbies/${l.id}/join`, {});
        location.hash = `lobby=${l.id}`;
      }));
      join.dataset.lobby = l.id;
      join.setAttribute('aria-label', `Join ${l.name}`);
      return h('tr', { 'data-lobby': l.id }, [
        h('td', {}, [l.name]),
        h('td', {}, [modulesWords(l.modules) + (l.rated ? ' · rated' : '')]),
        h('td', {}, [`${taken} / ${l.seats.length}`]),
        h('td', {}, [clockWords(l.clock)]),
        h('td', {}, [join]),
      ]);
    });
    $('open-lobbies').replaceChildren(...rows);
    $('no-lobbies').hidden = rows.length > 0;
    $('lobby-table').hidden = rows.length === 0;
    const matches = list.matches.map((m) => h('li', { 'data-match': m.match_id }, [
      h('a', { href: `/watch/${m.match_id}` }, [`Watch ${m.name}`]),
      ` — ${m.players.join(', ')} · ${modulesWords(m.modules)}`,
    ]));
    $('running').replaceChildren(...matches);
    $('no-running').hidden = matches.length > 0;
    // The list is drawn (what follows no longer moves): tests wait for it before clicking.
    $('browse').dataset.loaded = 'true';
  };
  module.addEventListener('change', refresh);
  free.addEventListener('change', refresh);
  refresh();
  setInterval(refresh, 3000);

  const france = /** @type {HTMLInputElement} */ ($('new-france'));
  const chips = /** @type {HTMLInputElement} */ ($('new-chips'));
  const syncChips = () => {
    chips.disabled = !france.checked;
    if (!france.checked) chips.checked = false;
  };
  france.addEventListener('change', syncChips);
  syncChips();
  const priv = /** @type {HTMLInputElement} */ ($('new-private'));
  $('new-lobby').addEventListener('submit', (e) => {
    e.preventDefault();
    /** @param {string} id */
    const checked = (id) => /** @type {HTMLInputElement} */ ($(id)).checked;
    const [bank, increment] = /** @type {HTMLSelectElement} */ ($('new-clock')).value.split('+').map(Number);
    const meeples = /** @type {HTMLInputElement} */ ($('new-meeples')).value;
    const body = {
      name: /** @type {HTMLInputElement} */ ($('new-name')).value,
      seats: Number(/** @type {HTMLSelectElement} */ ($('new-seats')).value),
      modules: {
        tollkeepers: checked('new-tollkeepers'), messages: checked('new-messages'), france: france.checked, chips: chips.checked,
        inns_cathedrals: checked('new-inns-cathedrals'), traders_builders: checked('new-traders-builders'),
      },
      meeples: meeples ? Number(meeples) : null,
      clock: bank ? { bank_ms: bank, increment_ms: increment ?? 0 } : null,
      public: !priv.checked,
      rated: checked('new-rated'),
    };
    attempt(async () => {
      /** @type {LobbyState} */
      const l = await api('POST', '/api/lobbies', body);
      location.hash = l.invite_code ? `lobby=${l.id}&code=${encodeURIComponent(l.invite_code)}` : `lobby=${l.id}`;
    });
  });
  $('invite-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const v = /** @type {HTMLInputElement} */ ($('invite-link')).value.trim();
    const frag = v.includes('#') ? v.slice(v.indexOf('#') + 1) : v;
    if (new URLSearchParams(frag).get('lobby')) location.hash = frag;
    else showError('Paste the whole invite link (it ends with #lobby=…&code=…).');
  });
}

/**
 * The account's your-turn webhook: where it points (never its secret, which is shown once, right
 * after it is set), set or replace it, remove it.
 */
function showWebhook() {
  const state = $('webhook-state');
  const url = /** @type {HTMLInputElement} */ ($('webhook-url'));
  const remove = /** @type {HTMLButtonElement} */ ($('webhook-remove'));
  const refresh = async () => {
    try {
      /** @type {import('./proto').WebhookInfo} */
      const w = await api('GET', '/api/me/webhook');
      state.textContent = `Notices go to ${w.url} (since ${w.created_at}).`;
      remove.hidden = false;
    } catch {
      state.textContent = 'No webhook: your turns are shown only in this page.';
      remove.hidden = true;
    }
  };
  $('webhook-form').addEventListener('submit', (e) => {
    e.preventDefault();
    attempt(async () => {
      /** @type {import('./proto').WebhookCreated} */
      const w = await api('PUT', '/api/me/webhook', { url: url.value.trim() });
      await refresh();
      const secret = $('webhook-secret');
      secret.hidden = false;
      secret.textContent = `Its signing secret, shown this once: ${w.secret}`;
    });
  });
  remove.addEventListener('click', () => attempt(async () => {
    await api('DELETE', '/api/me/webhook');
    $('webhook-secret').hidden = true;
    await refresh();
  }));
  refresh();
}

/**
 * One lobby: its seats, live over the WebSocket. A visitor who is not seated sees a Join button
 * (with the invite code from the link for a private lobby).
 * @param {Account} me
 * @param {string} id
 * @param {string|null} code
 */
async function showRoom(me, id, code) {
  $('room').hidden = false;
  const q = code ? `?invite_code=${encodeURIComponent(code)}` : '';
  /** @type {LobbyState|null} */
  let lobby = null;
  try {
    lobby = await api('GET', `/api/lobbies/${id}${q}`);
  } catch (e) {
    showError(e);
  }
  /** @type {WebSocket|null} */
  let ws = null;
  let attempt_ = 0;
  const follow = () => {
    const sock = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`);
    ws = sock;
    sock.onmessage = (e) => {
      /** @type {ServerMessage} */
      const msg = JSON.parse(String(e.data));
      if (msg.type === 'welcome') {
        attempt_ = 0;
        sock.send(JSON.stringify({ type: 'subscribe_lobby', lobby_id: id }));
      } else if (msg.type === 'lobby' && msg.lobby.id === id) {
        if (!lobby || msg.lobby.version >= lobby.version) render(msg.lobby);
      } else if (msg.type === 'lobby_closed' && msg.lobby_id === id) {
        location.hash = '';
      } else if (msg.type === 'error' && msg.code === 'not_in_lobby' && lobby && seatOf(lobby)) {
        // Kicked: the pushes stop, so show the lobby as it is now, without us.
        showError('The host removed you from this lobby.');
        api('GET', `/api/lobbies/${id}${q}`).then(render, showError);
      }
    };
    sock.onclose = (e) => {
      if (ws !== sock) return;
      // The session was revoked (logged out elsewhere): start again at the log-in.
      if (e.code === 4002) {
        location.reload();
        return;
      }
      setTimeout(follow, Math.min(2000, 150 * 2 ** attempt_++));
    };
  };
  /** After an action: the answer is the new state; followers of a private lobby join now. @param {LobbyState|null} l */
  const after = (l) => {
    if (!l) return;
    render(l);
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'subscribe_lobby', lobby_id: id }));
  };
  /** @param {string} action @param {unknown} [body] */
  const act = (action, body = {}) => attempt(async () => after(await api('POST', `/api/lobbies/${id}/${action}`, body)));

  /** @type {Map<number, {key: string, row: HTMLElement}>} the rows shown, by seat */
  const rowCache = new Map();

  /** Our seat in `l`, if any. @param {LobbyState} l */
  function seatOf(l) {
    return l.seats.find((s) => s.occupant && s.occupant.kind === 'player' && s.occupant.account_id === me.id);
  }

  /** @param {LobbyState} l */
  function render(l) {
    lobby = l;
    const mine = seatOf(l);
    if (l.status === 'started' && l.match_id) {
      // Players take their seat; anyone else who follows the lobby watches.
      location.assign(mine ? `/#match=${l.match_id}` : `/watch/${l.match_id}${code ? `#code=${encodeURIComponent(code)}` : ''}`);
      return;
    }
    const host = l.host === me.id;
    document.title = `${l.name} — Carcassonne lobby`;
    $('room-name').textContent = l.name;
    $('room-about').textContent = `${modulesWords(l.modules)} · ${clockWords(l.clock)}${l.meeples ? ` · ${l.meeples} meeples` : ''} · ${l.public ? 'public' : 'private'}${l.rated ? ' · rated' : ''}`;
    const invite = $('room-invite');
    invite.hidden = !l.invite_code;
    if (l.invite_code) {
      const link = `${location.origin}/#lobby=${l.id}&code=${encodeURIComponent(l.invite_code)}`;
      invite.replaceChildren('Invite code ', h('code', { id: 'invite-code' }, [l.invite_code]), ' · link ', h('input', { id: 'room-link', readonly: '', value: link, size: '40', 'aria-label': 'Invite link' }));
    }
    const used = new Set(l.seats.map((s) => s.colour).filter(Boolean));
    const rows = l.seats.map((s) => {
      const o = s.occupant;
      // A row is rebuilt only when what it shows changed: a push about another seat must not
      // replace the button under the pointer (or the keyboard focus).
      const key = JSON.stringify([s, l.host, s === mine, host, !!mine, s === mine ? [...used] : null]);
      const old = rowCache.get(s.seat);
      if (old && old.key === key) return old.row;
      const who = !o ? 'free' : o.kind === 'bot' ? `Bot (${BOT_LEVELS[o.level ?? 'random']})` : `${o.name}${l.host === o.account_id ? ' (host)' : ''}${o.account_id === me.id ? ' — you' : ''}`;
      const cells = [h('td', {}, [swatch(s.colour)]), h('td', {}, [who]), h('td', {}, [o ? (s.ready ? '✔ ready' : '… not ready') : ''])];
      const tools = h('td');
      if (s === mine) {
        const sel = /** @type {HTMLSelectElement} */ (h('select', { id: 'my-colour', 'aria-label': 'Your colour' }));
        for (const c of /** @type {Colour[]} */ (Object.keys(COLOURS))) {
          if (c !== s.colour && used.has(c)) continue;
          const opt = /** @type {HTMLOptionElement} */ (h('option', { value: c }, [`${COLOURS[c].letter} ${cap(c)}`]));
          opt.selected = c === s.colour;
          sel.append(opt);
        }
        sel.addEventListener('change', () => act('colour', { colour: sel.value }));
        tools.append(sel, ' ', button(s.ready ? 'Not ready' : 'Ready', 'ready', () => act('ready', { ready: !s.ready })));
      } else if (host && o) {
        tools.append(button(o.kind === 'bot' ? 'Remove bot' : 'Kick', `kick-${s.seat}`, () => act('kick', { seat: s.seat })));
      } else if (host && !o) {
        const level = /** @type {HTMLSelectElement} */ (h('select', { id: `bot-level-${s.seat}`, 'aria-label': 'Bot level' }));
        for (const [value, name] of Object.entries(BOT_LEVELS)) {
          const opt = /** @type {HTMLOptionElement} */ (h('option', { value }, [name]));
          opt.selected = value === 'easy';
          level.append(opt);
        }
        tools.append(level, ' ', button('Add bot', `bot-${s.seat}`, () => act('bot', { seat: s.seat, level: level.value })));
      }
      if (!mine && !o) tools.append(' ', button('Sit here', `sit-${s.seat}`, () => act('join', { seat: s.seat, invite_code: code })));
      cells.push(tools);
      const row = h('tr', { 'data-seat': String(s.seat) }, cells);
      rowCache.set(s.seat, { key, row });
      return row;
    });
    const body = $('seats');
    rows.forEach((r, i) => {
      const at = body.children[i];
      if (!at) body.append(r);
      else if (at !== r) at.replaceWith(r);
    });
    while (body.children.length > rows.length) body.lastElementChild?.remove();
    const start = /** @type {HTMLButtonElement} */ ($('start'));
    start.hidden = !host;
    start.disabled = !l.seats.every((s) => s.occupant && s.ready);
    $('leave').hidden = !mine;
  }

  $('start').addEventListener('click', () => attempt(async () => {
    await api('POST', `/api/lobbies/${id}/start`);
  }));
  $('leave').addEventListener('click', () => attempt(async () => {
    await api('POST', `/api/lobbies/${id}/leave`);
    location.hash = '';
  }));
  if (lobby) render(lobby);
  follow();
}
