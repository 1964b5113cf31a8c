// One match over the WebSocket (proto/README.md): take a seat or watch, keep the public view by
// applying diffs strictly in order, resubscribe with `since` on a gap or after a dropped
// connection, and send unanswered commands again with the same id (the server answers a repeated
// id with its first answer and applies nothing twice).

import { applyPatch } from './patch.js';

/**
 * @typedef {import('./proto').ServerMessage} ServerMessage
 * @typedef {import('./proto').ClientMessage} ClientMessage
 * @typedef {import('./proto').Command} Command
 * @typedef {import('./proto').MatchView} View
 * @typedef {import('./proto').Event} Event
 * @typedef {import('./proto').ErrorBody} ErrorBody
 * @typedef {'connecting'|'live'|'reconnecting'|'signed_out'|'refused'} Status
 * @typedef {{
 *   state: () => void,
 *   events: (events: Event[], seq: number, byServer?: import('./proto').ServerMove|null) => void,
 *   refused: (error: ErrorBody, command: Command|null) => void,
 *   status: (status: Status) => void,
 *   chat?: (line: import('./proto').ChatLine) => void,
 *   chatRemoved?: (id: number) => void,
 * }} Listener
 */

/** How long a command may stay unanswered on a live connection before it is sent again. */
const RESEND_MS = 4000;
/** The close code of a connection whose account session was revoked (`protocol::close`). */
const SESSION_REVOKED = 4002;

export class MatchClient {
  /**
   * @param {{ws: string, token?: string|null, matchId?: string|null, takeSeat?: boolean, inviteCode?: string|null}} opts
   * @param {Listener} listener
   */
  constructor(opts, listener) {
    this.url = opts.ws;
    this.token = opts.token ?? null;
    /** @type {string|null} */
    this.matchId = opts.matchId ?? null;
    /** Play the session's seat in `matchId` (a lobby match) rather than a seat token's. */
    this.takeSeat = opts.takeSeat ?? false;
    /** A private lobby's match is watched with its invite code. */
    this.inviteCode = opts.inviteCode ?? null;
    this.listener = listener;
    /** @type {WebSocket|null} */
    this.ws = null;
    /** @type {Status} */
    this.status = 'connecting';
    /** @type {number|null} the last seq applied */
    this.seq = null;
    /** @type {View|null} */
    this.view = null;
    /** @type {number|null} */
    this.seat = null;
    /** @type {Map<string, {command: Command, sent: number}>} sent, not yet answered */
    this.pending = new Map();
    this.counter = 0;
    // Ids must be unique per seat, and two tabs may hold the same seat.
    this.prefix = Math.random().toString(36).slice(2, 10);
    this.attempt = 0;
    /** @type {Map<string, {account_id?: string, match_id?: string, seat?: number}>} muted speakers, by key; sent again on every connection (a mute lasts as long as it) */
    this.mutes = new Map();
    /** @type {ReturnType<typeof setInterval>|null} */
    this.timer = null;
  }

  start() {
    this.open();
    this.timer = setInterval(() => this.resendStale(), 1000);
  }

  open() {
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.onmessage = (e) => {
      /** @type {ServerMessage} */
      let msg;
      try {
        msg = JSON.parse(String(e.data));
      } catch {
        return;
      }
      this.handle(msg);
    };
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (e.code === SESSION_REVOKED) {
        // Logged out (here or on another device): reconnecting would only be refused.
        this.setStatus('signed_out');
        return;
      }
      this.setStatus('reconnecting');
      const delay = Math.min(2000, 150 * 2 ** this.attempt++);
      setTimeout(() => this.open(), delay);
    };
  }

  /** @param {Status} s */
  setStatus(s) {
    if (this.status === s) return;
    this.status = s;
    this.listener.status(s);
  }

  /**
   * A chat message at this match (the server stores it and echoes it back; not a command).
   * @param {string} text
   * @returns {boolean} whether it was sent (the connection is open)
   */
  chat(text) {
    if (!this.matchId || !this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.send({ type: 'chat', match_id: this.matchId, text });
    return true;
  }

  /**
   * Stops (or restarts) this page's chat from a speaker: an account, or a seat of the match.
   * @param {string} key the speaker's key (see `speakerKey` in app.js)
   * @param {{account_id?: string, match_id?: string, seat?: number}} target
   * @param {boolean} on
   */
  mute(key, target, on) {
    if (on) this.mutes.set(key, target);
    else this.mutes.delete(key);
    this.send({ type: on ? 'mute' : 'unmute', ...target });
  }

  /** After a (re)connection: the server forgot this connection's mutes. */
  sendMutes() {
    for (const target of this.mutes.values()) this.send({ type: 'mute', ...target });
  }

  /** @param {ClientMessage} msg */
  send(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  subscribe() {
    if (!this.matchId) return;
    if (this.inviteCode && this.seat === null) {
      this.send({ type: 'watch', match_id: this.matchId, invite_code: this.inviteCode, since: this.seq });
    } else this.send({ type: 'subscribe', match_id: this.matchId, since: this.seq });
  }

  /**
   * Sends a command; it stays pending (and is sent again on reconnect) until answered.
   * @param {Command} command
   * @returns {string} its id
   */
  command(command) {
    const id = `${this.prefix}-${++this.counter}`;
    this.pending.set(id, { command, sent: Date.now() });
    this.send({ type: 'command', id, command });
    return id;
  }

  resendAll() {
    for (const [id, p] of this.pending) {
      p.sent = Date.now();
      this.send({ type: 'command', id, command: p.command });
    }
  }

  resendStale() {
    if (this.status !== 'live') return;
    const now = Date.now();
    for (const [id, p] of this.pending) {
      if (now - p.sent > RESEND_MS) {
        p.sent = now;
        this.send({ type: 'command', id, command: p.command });
      }
    }
  }

  /** @param {ServerMessage} msg */
  handle(msg) {
    switch (msg.type) {
      case 'welcome':
        this.attempt = 0;
        if (this.token) this.send({ type: 'auth', token: this.token });
        // The session cookie went with the upgrade request; the seat is the account's.
        else if (this.takeSeat && this.matchId) this.send({ type: 'take_seat', match_id: this.matchId });
        else {
          this.setStatus('live');
          this.sendMutes();
          this.subscribe();
        }
        break;
      case 'authenticated':
        this.seat = msg.seat;
        this.matchId = msg.match_id;
        this.setStatus('live');
        this.sendMutes();
        this.subscribe();
        this.resendAll();
        break;
      case 'snapshot':
        if (msg.match_id !== this.matchId) return;
        this.view = msg.view;
        this.seq = msg.seq;
        this.listener.state();
        break;
      case 'diff': {
        if (msg.match_id !== this.matchId || this.seq === null || !this.view) return;
        if (msg.seq <= this.seq) return; // already applied
        if (msg.seq !== this.seq + 1) {
          // A gap: ask for what we missed, from the last seq we applied.
          this.subscribe();
          return;
        }
        try {
          this.view = applyPatch(this.view, msg.patch);
        } catch {
          // Our copy is not the view the patch was made from: start again from a snapshot.
          this.seq = null;
          this.view = null;
          this.subscribe();
          return;
        }
        this.seq = msg.seq;
        this.listener.events(msg.events, msg.seq, msg.by_server);
        this.listener.state();
        break;
      }
      case 'ack':
        this.pending.delete(msg.id);
        break;
      case 'chat':
        if (msg.match_id === this.matchId) this.listener.chat?.(msg);
        break;
      case 'chat_removed':
        if (msg.match_id === this.matchId) this.listener.chatRemoved?.(msg.id);
        break;
      case 'error': {
        const p = msg.id ? this.pending.get(msg.id) : undefined;
        if (msg.id && p && msg.code === 'busy') return; // resent by the timer, same id
        if (msg.id) this.pending.delete(msg.id);
        // The seat token was refused: nothing to follow (the page says why).
        if (this.token && this.seat === null && !msg.id && msg.code === 'bad_token') this.setStatus('refused');
        if (this.takeSeat && this.seat === null && !msg.id) {
          // No seat for this session (logged out, or not a player here): watch instead.
          this.takeSeat = false;
          this.setStatus('live');
          this.subscribe();
        }
        this.listener.refused(msg, p ? p.command : null);
        break;
      }
    }
  }
}
