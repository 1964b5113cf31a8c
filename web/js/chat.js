// The chat at the table: what was said before the page opened (`GET /api/matches/{id}/chat`,
// as far back as the server keeps it; a player reads the table, a spectator both channels),
// then each line as it is said; scrolling to the top reads the page before. Lines are text,
// never HTML. Anyone but oneself can be muted for this page: the server stops sending their
// lines, the lines shown go, and the muted list offers to unmute.

import { cap } from './words.js';
import { historyHeaders } from './log.js';

/**
 * @typedef {import('./proto').ChatLine} ChatLine
 * @typedef {import('./proto').MatchChat} MatchChat
 * @typedef {import('./proto').Colour} Colour
 * @typedef {import('./log.js').Credentials} Credentials
 */

/** Lines per page read from the server. */
const PAGE = 100;

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * Who said a line, as a mute key: their account, else their seat.
 * @param {ChatLine} line
 */
export function speakerKey(line) {
  if (line.from.account_id) return `a:${line.from.account_id}`;
  if (line.from.seat !== undefined && line.from.seat !== null && line.match_id) return `s:${line.match_id}:${line.from.seat}`;
  return '';
}

/** A line's identity, to show a line read from the history and heard live once. @param {ChatLine} l */
const lineKey = (l) => `${l.at}|${l.channel}|${l.from.seat ?? ''}|${l.from.account_id ?? ''}|${l.text}`;

export class ChatPanel {
  /**
   * @param {import('./conn.js').MatchClient} client
   * @param {Credentials} credentials
   */
  constructor(client, credentials) {
    this.client = client;
    this.credentials = credentials;
    this.list = $('chat-log');
    /** @type {Set<string>} the lines shown */
    this.seen = new Set();
    /** @type {number|null|undefined} the page before the oldest line shown (undefined: not read yet) */
    this.before = undefined;
    this.loading = false;
    this.list.addEventListener('scroll', () => {
      if (this.list.scrollTop < 30) void this.older();
    });
    $('chat-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const input = /** @type {HTMLInputElement} */ ($('chat-text'));
      const text = input.value.trim();
      if (text && client.chat(text)) input.value = '';
    });
  }

  /** The first page of the history, once the match is known. */
  async start() {
    if (this.before !== undefined) return;
    this.before = null;
    const page = await this.fetch(null);
    if (!page) return;
    this.before = page.before ?? null;
    this.prepend(page.chat);
    this.list.scrollTop = this.list.scrollHeight;
  }

  async older() {
    if (this.before === null || this.before === undefined || this.loading) return;
    const page = await this.fetch(this.before);
    if (!page) return;
    this.before = page.before ?? null;
    const height = this.list.scrollHeight;
    this.prepend(page.chat);
    this.list.scrollTop += this.list.scrollHeight - height;
  }

  /**
   * @param {number|null} before
   * @returns {Promise<MatchChat|null>}
   */
  async fetch(before) {
    const id = this.client.matchId;
    if (!id) return null;
    this.loading = true;
    try {
      const q = before === null ? `limit=${PAGE}` : `before=${before}&limit=${PAGE}`;
      const res = await fetch(`/api/matches/${encodeURIComponent(id)}/chat?${q}`, {
        headers: historyHeaders(this.credentials),
      });
      return res.ok ? /** @type {MatchChat} */ (await res.json()) : null;
    } catch {
      return null;
    } finally {
      this.loading = false;
    }
  }

  /** @param {ChatLine[]} lines oldest first */
  prepend(lines) {
    const items = lines.filter((l) => !this.seen.has(lineKey(l))).map((l) => this.item(l));
    this.list.prepend(...items);
  }

  /** A line said now. @param {ChatLine} line */
  live(line) {
    if (this.seen.has(lineKey(line))) return;
    this.list.append(this.item(line));
    this.list.scrollTop = this.list.scrollHeight;
  }

  /** @param {ChatLine} line */
  item(line) {
    this.seen.add(lineKey(line));
    const colours = this.client.view ? this.client.view.players.map((p) => p.colour) : [];
    const seat = line.from.seat;
    const who = line.from.name ?? (seat !== undefined && seat !== null ? cap(colours[seat] ?? 'a player') : 'someone');
    const li = document.createElement('li');
    li.dataset.channel = line.channel;
    if (line.id != null) li.dataset.chatId = String(line.id);
    const key = speakerKey(line);
    li.dataset.speaker = key;
    const b = document.createElement('b');
    b.textContent = line.channel === 'spectators' ? `${who} (watching): ` : `${who}: `;
    li.append(b, line.text); // text, never HTML
    const mine = seat !== undefined && seat !== null && seat === this.client.seat;
    if (!mine && key) {
      const m = document.createElement('button');
      m.type = 'button';
      m.className = 'mute';
      // Labelled, not worded: the line's text stays what was said (the word is drawn by CSS).
      m.setAttribute('aria-label', `Mute ${who}`);
      m.title = `Mute ${who}`;
      m.addEventListener('click', () => this.mute(line, who, true));
      li.append(m);
      if (line.id != null) {
        const r = document.createElement('button');
        r.type = 'button';
        r.className = 'report';
        r.setAttribute('aria-label', `Report ${who} or this line`);
        r.title = `Report this line of ${who}, or ${who}, to the admins`;
        r.addEventListener('click', () => this.openReport(li, /** @type {number} */ (line.id), line.from.account_id ?? null, who));
        li.append(r);
      }
    }
    return li;
  }

  /** An admin removed a line: it goes from the page. @param {number} id */
  removed(id) {
    this.list.querySelector(`li[data-chat-id="${id}"]`)?.remove();
  }

  /**
   * Opens (or closes) the report form under a line: the line itself, or its speaker when they
   * speak from an account; a reason the admins read. Sent with the session cookie (a page on a
   * seat token has none, and is told so).
   * @param {HTMLLIElement} li @param {number} chatId @param {string|null} accountId @param {string} who
   */
  openReport(li, chatId, accountId, who) {
    const open = li.querySelector('form.report-form');
    if (open) {
      open.remove();
      return;
    }
    const form = document.createElement('form');
    form.className = 'report-form';
    const what = document.createElement('select');
    what.name = 'what';
    what.setAttribute('aria-label', 'What to report');
    const options = [['line', 'this message']];
    if (accountId) options.push(['player', who]);
    for (const [value, label] of options) {
      const o = document.createElement('option');
      o.value = value;
      o.textContent = label;
      what.append(o);
    }
    const reason = document.createElement('input');
    reason.name = 'reason';
    reason.required = true;
    reason.maxLength = 500;
    reason.placeholder = 'Why? (the admins read it)';
    reason.setAttribute('aria-label', 'Why you report it');
    const send = document.createElement('button');
    send.type = 'submit';
    send.textContent = 'Send report';
    const status = document.createElement('span');
    status.className = 'report-status';
    status.setAttribute('role', 'status');
    form.append(what, reason, send, status);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const text = reason.value.trim();
      if (!text) return;
      const body = what.value === 'player' && accountId ? { account_id: accountId, reason: text } : { chat_id: chatId, reason: text };
      void this.report(body, form, status);
    });
    li.append(form);
    reason.focus();
  }

  /**
   * Sends a report; the form says how it went.
   * @param {{chat_id?: number, account_id?: string, reason: string}} body
   * @param {HTMLFormElement} form @param {HTMLElement} status
   */
  async report(body, form, status) {
    const res = await fetch('/api/reports', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    });
    if (res.ok || res.status === 409) {
      status.textContent = res.ok ? 'Reported: thank you.' : 'Already reported.';
      form.dataset.sent = 'true';
      const reason = /** @type {HTMLInputElement|null} */ (form.querySelector('input[name=reason]'));
      if (reason) reason.value = '';
    } else {
      status.textContent = res.status === 401 ? 'Log in to report.' : res.status === 429 ? 'Too many reports: try later.' : `Not reported (HTTP ${res.status}).`;
    }
  }

  /**
   * Mutes or unmutes a speaker.
   * @param {ChatLine} line
   * @param {string} who
   * @param {boolean} on
   */
  mute(line, who, on) {
    const key = speakerKey(line);
    const target = line.from.account_id
      ? { account_id: line.from.account_id }
      : { match_id: line.match_id ?? undefined, seat: line.from.seat ?? undefined };
    this.client.mute(key, target, on);
    const muted = $('chat-muted');
    muted.querySelector(`[data-speaker="${CSS.escape(key)}"]`)?.remove();
    if (on) {
      for (const li of this.list.querySelectorAll(`li[data-speaker="${CSS.escape(key)}"]`)) li.remove();
      const u = document.createElement('button');
      u.type = 'button';
      u.dataset.speaker = key;
      u.textContent = `unmute ${who}`;
      u.addEventListener('click', () => this.mute(line, who, false));
      muted.append(u);
    }
    muted.hidden = muted.children.length === 0;
  }
}
