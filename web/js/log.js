// The event log: the whole match in words, from the first tile on. On joining, the page reads
// the match's history from the server (`GET /api/matches/{id}/log`, a page before the snapshot's
// seq), then adds each live diff's events; scrolling to the top reads the page before. A move
// the server made for a player (a deadline, a clock that ran out, a player away) says so.
// The log also keeps what the board marks: each player's last tile.

import { cap, eventWords } from './words.js';

/**
 * @typedef {import('./proto').LogEntry} LogEntry
 * @typedef {import('./proto').MatchLog} MatchLog
 * @typedef {import('./proto').ServerMove} ServerMove
 * @typedef {import('./proto').Colour} Colour
 * @typedef {import('./proto').Pos} Pos
 * @typedef {{token?: string|null, inviteCode?: string|null}} Credentials
 * @typedef {import('./words.js').Naming} Naming
 */

/** Moves per page read from the server. */
const PAGE = 200;

/**
 * The headers that prove the page may read a private match's history: its seat token or its
 * invite code (never in the URL); a player's session cookie goes by itself.
 * @param {Credentials} c
 * @returns {Record<string, string>}
 */
export function historyHeaders(c) {
  /** @type {Record<string, string>} */
  const h = {};
  if (c.token) h['x-seat-token'] = c.token;
  if (c.inviteCode) h['x-invite-code'] = c.inviteCode;
  return h;
}

/**
 * Why the server played, in words.
 * @param {ServerMove} why
 * @param {string} who
 */
export function serverMoveWords(why, who) {
  switch (why) {
    case 'clock':
      return `${who}'s clock ran out: the server plays for ${who}.`;
    case 'away':
      return `${who} is away: the server plays for ${who}.`;
    default:
      return `${who} did not answer in time: the server answers for ${who}.`;
  }
}

export class LogPanel {
  /**
   * @param {HTMLOListElement} list
   * @param {{matchId: () => string|null, colours: () => Colour[], credentials: Credentials, naming: Naming, changed: () => void}} opts
   */
  constructor(list, opts) {
    this.list = list;
    this.opts = opts;
    /** @type {Map<number, LogEntry>} every entry known, by seq */
    this.entries = new Map();
    /** @type {number|null} the newest seq shown */
    this.newest = null;
    /** @type {number|null} the page before the oldest shown, if any (null: the opening is shown) */
    this.before = null;
    /** Whether the first page was asked for. */
    this.started = false;
    this.syncing = false;
    this.loading = false;
    /** @type {Map<number, Pos>} each seat's last placed tile */
    this.lastTiles = new Map();
    /** Whether the list was drawn once (then it starts at the bottom, the newest). */
    this.rendered = false;
    list.addEventListener('scroll', () => {
      if (list.scrollTop < 40) void this.older();
    });
  }

  /**
   * After a snapshot at `seq`: reads what the log lacks up to it (the first time, one page).
   * @param {number} seq
   */
  async sync(seq) {
    // One read at a time: a diff that comes meanwhile is merged live, and the read's page
    // fills in before it.
    if (this.syncing || (this.newest !== null && this.newest >= seq)) return;
    this.syncing = true;
    try {
      const first = !this.started;
      this.started = true;
      const have = first ? -1 : (this.newest ?? -1);
      const page = await this.fetch(seq + 1, first ? PAGE : Math.min(PAGE, seq - have));
      if (!page) return;
      if (first) this.before = page.before ?? null;
      this.merge(page.entries);
    } finally {
      this.syncing = false;
    }
  }

  /** Reads the page before the oldest entry shown, keeping the scroll position. */
  async older() {
    if (this.before === null || this.loading) return;
    const page = await this.fetch(this.before, PAGE);
    if (!page) return;
    this.before = page.before ?? null;
    const height = this.list.scrollHeight;
    this.merge(page.entries);
    this.list.scrollTop += this.list.scrollHeight - height;
  }

  /**
   * @param {number} before
   * @param {number} limit
   * @returns {Promise<MatchLog|null>}
   */
  async fetch(before, limit) {
    const id = this.opts.matchId();
    if (!id || limit < 1) return null;
    this.loading = true;
    try {
      const res = await fetch(`/api/matches/${encodeURIComponent(id)}/log?before=${before}&limit=${limit}`, {
        headers: historyHeaders(this.opts.credentials),
      });
      return res.ok ? /** @type {MatchLog} */ (await res.json()) : null;
    } catch {
      return null;
    } finally {
      this.loading = false;
    }
  }

  /**
   * A live diff's events.
   * @param {number} seq
   * @param {import('./proto').Event[]} events
   * @param {ServerMove|null|undefined} byServer
   */
  live(seq, events, byServer) {
    /** @type {number|undefined} */
    let seat;
    for (const e of events) if ('player' in e && seat === undefined) seat = e.player;
    this.merge([{ seq, seat, by_server: byServer ?? undefined, events }], false);
  }

  /**
   * Adds entries: newer ones (a live diff) are appended, anything else redraws the list.
   * @param {LogEntry[]} entries
   * @param {boolean} [notify] tell the page (a live diff's own render follows anyway)
   */
  merge(entries, notify = true) {
    const fresh = entries.filter((e) => !this.entries.has(e.seq)).sort((a, b) => a.seq - b.seq);
    if (fresh.length === 0) return;
    const appended = this.newest !== null && fresh[0].seq > this.newest;
    for (const e of fresh) {
      this.entries.set(e.seq, e);
      if (this.newest === null || e.seq > this.newest) this.newest = e.seq;
    }
    const atBottom = this.list.scrollTop + this.list.clientHeight >= this.list.scrollHeight - 8;
    if (appended) {
      for (const entry of fresh) {
        for (const e of entry.events) if (e.type === 'tile_placed') this.lastTiles.set(e.player, e.pos);
      }
      this.list.append(...this.items(fresh));
    } else {
      this.lastTiles.clear();
      const ordered = [...this.entries.values()].sort((a, b) => a.seq - b.seq);
      for (const entry of ordered) {
        for (const e of entry.events) if (e.type === 'tile_placed') this.lastTiles.set(e.player, e.pos);
      }
      this.list.replaceChildren(...this.items(ordered));
    }
    if (atBottom || !this.rendered) this.list.scrollTop = this.list.scrollHeight;
    this.rendered = true;
    if (notify) this.opts.changed();
  }

  /**
   * The lines of some entries, in seq order.
   * @param {LogEntry[]} ordered
   */
  items(ordered) {
    const colours = this.opts.colours();
    /** @param {number} p */
    const who = (p) => cap(colours[p] ?? `player ${p + 1}`);
    /** @type {HTMLLIElement[]} */
    const items = [];
    for (const entry of ordered) {
      if (entry.by_server && entry.seat !== undefined && entry.seat !== null) {
        const li = document.createElement('li');
        li.className = 'by-server';
        li.dataset.byServer = entry.by_server;
        li.dataset.seq = String(entry.seq);
        li.textContent = serverMoveWords(entry.by_server, who(entry.seat));
        items.push(li);
      }
      for (const [i, e] of entry.events.entries()) {
        const line = eventWords(e, colours, entry.events.slice(0, i), this.opts.naming);
        if (!line) continue;
        const li = document.createElement('li');
        li.dataset.seq = String(entry.seq);
        if (entry.by_server) li.classList.add('server-played');
        li.textContent = line;
        items.push(li);
      }
    }
    return items;
  }
}
