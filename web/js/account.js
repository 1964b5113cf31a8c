// A player's own pages, reached from the lobby page's header: "My games" (`#games`: the
// matches where the account holds a seat, whose turn it is and the clock; live: the page follows
// its running matches over the WebSocket from their stored seq, so a move anywhere redraws the
// list at once, and asks again every half minute for new matches), "Account" (`#account`: change the password, download one's
// data, delete the account), and the page of an admin's reset link (`#reset=TOKEN`: set a new
// password; the token stays in the fragment, which no request carries).

import { COLOURS, cap } from './words.js';

/**
 * @typedef {import('./proto').Account} Account
 * @typedef {import('./proto').MyMatch} MyMatch
 * @typedef {import('./proto').MyMatches} MyMatches
 * @typedef {import('./proto').ErrorBody} ErrorBody
 * @typedef {import('./proto').ClockSettings} ClockSettings
 */

/** How often "My games" asks again, in milliseconds: for matches it does not follow yet. */
const POLL_MS = 30000;
/** A connection follows at most 16 matches (the server's limit). */
const MAX_FOLLOWED = 16;

/** The refusals of these pages in words; the server's message follows. */
const WORDS = /** @type {Record<string, string>} */ ({
  bad_password: 'That password cannot be used (8 to 256 bytes; guests have none).',
  bad_credentials: 'That password is wrong.',
  bad_reset: 'This link is used, expired or unknown: ask an admin for a new one.',
  unknown_session: 'Your session has ended; enter again.',
  unauthenticated: 'Enter as a guest or log in first.',
});

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** @param {string} id */
const field = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

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

/**
 * One REST call with the session cookie; throws an Error in words with the server's refusal.
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  if (res.status === 204) return null;
  /** @type {ErrorBody} */
  const json = await res.json().catch(() => ({ code: 'internal', message: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(`${WORDS[json.code] ?? 'The server refused.'} (${json.message})`);
  return json;
}

/** Shows a line in a form's status (`ok` or an error). @param {string} id @param {string} text @param {boolean} ok */
function say(id, text, ok) {
  const p = $(id);
  p.textContent = text;
  p.className = ok ? 'ok' : 'refused';
  p.hidden = false;
}

/** @param {ClockSettings|null|undefined} c */
function clockWords(c) {
  if (!c) return 'no clock';
  /** @param {number} ms */
  const t = (ms) => (ms % 86400000 === 0 ? `${ms / 86400000} d` : ms % 3600000 === 0 ? `${ms / 3600000} h` : ms % 60000 === 0 ? `${ms / 60000} min` : `${ms / 1000} s`);
  return `${t(c.bank_ms)} + ${t(c.increment_ms)}`;
}

/** "in 3 h 5 min", "in 40 s", or "now". @param {number} ms */
function inWords(ms) {
  if (ms <= 0) return 'now';
  const s = Math.round(ms / 1000);
  if (s < 60) return `in ${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `in ${m} min`;
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return `in ${hrs} h ${m % 60} min`;
  return `in ${Math.floor(hrs / 24)} d ${hrs % 24} h`;
}

/** 1 → "1st", 2 → "2nd"… @param {number} n */
const ordinal = (n) => `${n}${n === 1 ? 'st' : n === 2 ? 'nd' : n === 3 ? 'rd' : 'th'}`;

/** The players with their colours; the caller's seat marked. @param {MyMatch} m */
function playersCell(m) {
  return h('td', {}, m.players.flatMap((p) => {
    const k = COLOURS[p.colour];
    const s = h('span', { class: 'swatch', title: cap(p.colour) }, [k.letter]);
    s.style.background = k.fill;
    s.style.color = k.ink;
    return [s, ` ${p.name ?? `Seat ${p.seat + 1}`}${p.you ? ' (you)' : ''}${p.away ? ' (away)' : ''} `];
  }));
}

/** Whose turn, or the result. @param {MyMatch} m */
function standingWords(m) {
  if (m.status === 'finished') {
    const place = m.place ? `${m.place === 1 ? 'Won' : ordinal(m.place)}` : 'Over';
    return `${place} · ${(m.scores ?? []).join(' : ')}`;
  }
  if (m.status === 'ended') return 'Ended by an admin';
  if (m.your_turn) return 'Your turn';
  const p = m.players.find((x) => x.seat === m.turn);
  return p ? `${p.name ?? cap(p.colour)}'s turn` : 'Waiting';
}

/** @param {MyMatch} m @param {number} now */
function clockCell(m, now) {
  const parts = [clockWords(m.clock)];
  if (m.deadline_at) parts.push(`next deadline ${inWords(Date.parse(m.deadline_at) - now)}`);
  return h('td', { class: 'clock' }, [parts.join(' · ')]);
}

/** @param {MyMatch} m @param {number} now */
function row(m, now) {
  const href = m.status === 'running' ? `/#match=${m.match_id}` : `/watch/${m.match_id}`;
  const tr = h('tr', { 'data-match': m.match_id, 'data-status': m.status, 'data-your-turn': String(m.your_turn) }, [
    h('td', {}, [h('a', { href }, [m.status === 'running' ? (m.your_turn ? 'Play' : 'Open') : 'View'])]),
    playersCell(m),
    h('td', { class: 'turn' }, [standingWords(m)]),
    clockCell(m, now),
    h('td', {}, [m.modules.join(', ') || 'base game']),
    h('td', {}, [m.created_at.slice(0, 10)]),
  ]);
  if (m.your_turn) tr.classList.add('your-turn');
  return tr;
}

/**
 * Follows running matches over one WebSocket (with the session cookie: a player may follow their
 * own private matches), each from the seq the list gave, so that no snapshot is sent; calls
 * `moved` on every move of any of them. A revoked session reloads the page (the entry form).
 * @param {() => void} moved
 */
function follower(moved) {
  /** @type {Map<string, number>} match → the last seq seen */
  const seqs = new Map();
  /** @type {WebSocket|null} */
  let sock = null;
  let tries = 0;
  /** @param {unknown} msg */
  const send = (msg) => {
    if (sock && sock.readyState === WebSocket.OPEN) sock.send(JSON.stringify(msg));
  };
  const connect = () => {
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`);
    sock = ws;
    ws.onmessage = (e) => {
      /** @type {import('./proto').ServerMessage} */
      const msg = JSON.parse(String(e.data));
      if (msg.type === 'welcome') {
        tries = 0;
        for (const [match_id, since] of seqs) send({ type: 'subscribe', match_id, since });
      } else if (msg.type === 'diff' && seqs.has(msg.match_id)) {
        seqs.set(msg.match_id, Math.max(seqs.get(msg.match_id) ?? 0, msg.seq));
        moved();
      }
    };
    ws.onclose = (e) => {
      if (sock !== ws) return;
      if (e.code === 4002) {
        location.reload();
        return;
      }
      setTimeout(connect, Math.min(5000, 200 * 2 ** tries++));
    };
  };
  connect();
  return {
    /** The running matches to follow now, with their seqs. @param {MyMatch[]} running */
    follow(running) {
      const want = new Map(running.slice(0, MAX_FOLLOWED).map((m) => [m.match_id, m.seq]));
      for (const id of [...seqs.keys()]) {
        if (want.has(id)) continue;
        seqs.delete(id);
        send({ type: 'unsubscribe', match_id: id });
      }
      for (const [id, seq] of want) {
        if (seqs.has(id)) continue;
        seqs.set(id, seq);
        send({ type: 'subscribe', match_id: id, since: seq });
      }
    },
  };
}

/** "My games": the first page (of the chosen filter) and any further pages asked for, kept fresh. */
export function showMyGames() {
  $('games').hidden = false;
  document.title = 'My games — Carcassonne';
  const filter = /** @type {HTMLSelectElement} */ ($('games-filter'));
  /** @type {string|null} */
  let next = null;
  /** @type {MyMatch[]} */
  let more = [];
  let shown = '';
  const draw = (/** @type {MyMatch[]} */ first) => {
    const all = [...first, ...more.filter((m) => !first.some((f) => f.match_id === m.match_id))];
    // The countdowns move by the minute: redraw then too, else only on a change (a redraw
    // every poll would take the keyboard focus off a link).
    const key = `${Math.floor(Date.now() / 60000)}${JSON.stringify(all)}`;
    if (key === shown) return;
    shown = key;
    const now = Date.now();
    $('games-body').replaceChildren(...all.map((m) => row(m, now)));
    $('no-games').hidden = all.length > 0;
    const mine = all.filter((m) => m.your_turn).length;
    document.title = `${mine ? `(${mine}) ` : ''}My games — Carcassonne`;
    $('games').dataset.loaded = 'true';
  };
  const query = () => (filter.value ? `status=${filter.value}&` : '');
  /** @type {ReturnType<typeof setTimeout>|undefined} */
  let pushed;
  let pushes = 0;
  const live = follower(() => {
    // A burst of moves (a turn's tile, meeple, scoring) asks once.
    clearTimeout(pushed);
    pushed = setTimeout(() => {
      pushes += 1;
      $('games').dataset.pushes = String(pushes);
      refresh();
    }, 200);
  });
  const refresh = async () => {
    try {
      /** @type {MyMatches} */
      const page = await api('GET', `/api/me/matches?${query()}limit=20`);
      if (!more.length) next = page.next_cursor ?? null;
      $('games-more').hidden = !next;
      live.follow([...page.matches, ...more].filter((m) => m.status === 'running'));
      draw(page.matches);
      $('games-error').hidden = true;
    } catch (e) {
      say('games-error', e instanceof Error ? e.message : String(e), false);
    }
  };
  filter.addEventListener('change', () => {
    more = [];
    next = null;
    shown = '';
    refresh();
  });
  $('games-more').addEventListener('click', async () => {
    if (!next) return;
    try {
      /** @type {MyMatches} */
      const page = await api('GET', `/api/me/matches?${query()}limit=20&cursor=${encodeURIComponent(next)}`);
      more = [...more, ...page.matches];
      next = page.next_cursor ?? null;
      $('games-more').hidden = !next;
      shown = '';
      refresh();
    } catch (e) {
      say('games-error', e instanceof Error ? e.message : String(e), false);
    }
  });
  refresh();
  // Also asked now and then (a match started elsewhere, a deadline that moved); a hidden tab
  // asks when it is shown again.
  setInterval(() => {
    if (!document.hidden) refresh();
  }, POLL_MS);
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) refresh();
  });
}

/** "Account": password change, the data export, deletion. @param {Account} me */
export function showAccount(me) {
  $('account').hidden = false;
  document.title = 'Account — Carcassonne';
  $('account-name').textContent = `${me.name}${me.kind === 'guest' ? ' (a guest: no password to change)' : ''}`;
  $('password-form').hidden = me.kind === 'guest';
  $('delete-form').hidden = me.kind === 'guest';
  $('password-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const [old, fresh, again] = ['old-password', 'new-password', 'new-password-again'].map((id) => field(id).value);
    if (fresh !== again) return say('password-said', 'The two new passwords differ.', false);
    try {
      await api('PUT', '/api/me/password', { old_password: old, new_password: fresh });
      for (const id of ['old-password', 'new-password', 'new-password-again']) field(id).value = '';
      say('password-said', 'Password changed. Your other devices were logged out.', true);
    } catch (err) {
      say('password-said', err instanceof Error ? err.message : String(err), false);
    }
  });
  $('delete-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!field('delete-sure').checked) return say('delete-said', 'Tick the box to confirm.', false);
    try {
      await api('DELETE', '/api/me', { password: field('delete-password').value });
      location.assign('/#');
      location.reload();
    } catch (err) {
      say('delete-said', err instanceof Error ? err.message : String(err), false);
    }
  });
}

/** The page of a reset link: a new password, once. @param {string} token */
export function showReset(token) {
  $('reset').hidden = false;
  document.title = 'New password — Carcassonne';
  field('reset-password').focus();
  $('reset-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const [pw, again] = ['reset-password', 'reset-password-again'].map((id) => field(id).value);
    if (pw !== again) return say('reset-said', 'The two passwords differ.', false);
    try {
      await api('POST', '/api/password-resets', { token, password: pw });
      // The token leaves the address bar (and the history) once used.
      history.replaceState(null, '', '/');
      $('reset-form').hidden = true;
      say('reset-said', 'Your new password is set: log in with it.', true);
      const link = h('a', { href: '/', id: 'reset-login' }, ['Log in']);
      $('reset').append(h('p', {}, [link]));
    } catch (err) {
      say('reset-said', err instanceof Error ? err.message : String(err), false);
    }
  });
}
