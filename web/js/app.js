// The page: join a seat (a token in the URL's #fragment, never sent to the server in a URL),
// watch a match by id (/watch/ID), or create a test match; then play with the mouse or keyboard.

import { MatchClient } from './conn.js';
import { Board, FLASH_MS } from './board.js';
import { drawTile, el, segmentAnchor, titled } from './tiles.js';
import { COLOURS, DISPATCHES, GRAPES, cap, chipWords, playerNaming, refusalWords, targetWords, tileWords, wines } from './words.js';
import { cellAt } from './map.js';
import { countdown, decisionControls, deadlines, drawTrack, pawnsHtml, tick } from './messages.js';
import { clockSpan, clocks, isAway, tickClocks } from './clocks.js';
import { renderEnd } from './end.js';
import { LogPanel } from './log.js';
import { ChatPanel } from './chat.js';
import { TurnNotice } from './notify.js';
import { FIGURES, FIGURE_NAMES, doubleTurnControls, figureTargets, figuresHtml, goodsHtml } from './figures.js';

/**
 * @typedef {import('./tiles.js').Catalogue} Catalogue
 * @typedef {import('./proto').MatchView} View
 * @typedef {import('./proto').Pos} Pos
 * @typedef {import('./proto').Decision} Decision
 * @typedef {import('./proto').Command} Command
 * @typedef {import('./proto').Colour} Colour
 * @typedef {import('./proto').MatchCreated} MatchCreated
 * @typedef {import('./proto').Rotation} Rotation
 * @typedef {import('./proto').WineSale} WineSale
 */

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

const params = new URLSearchParams(location.hash.slice(1));
const watchPath = location.pathname.match(/^\/watch\/([0-9a-fA-F-]+)/);
const token = params.get('token');
const watchId = watchPath ? watchPath[1] : params.get('watch');
// A lobby match: the seat is the account's, taken with the session cookie (`take_seat`).
const seatMatch = params.get('match');
// A private lobby's match is watched with its invite code.
const inviteCode = params.get('code');

/** @type {Catalogue} */
const catalogue = await (await fetch('/api/tiles')).json();
const designs = new Map(catalogue.tiles.map((t) => [t.id, t]));

if (location.hash === '#tiles') showGallery();
else if (location.hash === '#test') showLobby();
else if (!token && !watchId && !seatMatch) (await import('./lobby.js')).showLobbies();
else play();

/** Every design of the catalogue with its id and the anchor of each segment: a reader can check
 * the drawing against `crates/carcassonne-rules/data/*.toml`. */
function showGallery() {
  $('lobby').hidden = true;
  $('game').hidden = true;
  $('status').textContent = '';
  const g = $('gallery');
  g.hidden = false;
  for (const t of catalogue.tiles) {
    const fig = document.createElement('figure');
    fig.dataset.tile = t.id;
    const svg = el('svg', { viewBox: '-52 -52 104 104', width: 120, height: 120, role: 'img' });
    svg.appendChild(drawTile(t));
    t.segments.forEach((seg, i) => {
      const [x, y] = segmentAnchor(t, i);
      svg.appendChild(el('g', { class: 'anchor', transform: `translate(${x},${y})` }, [
        el('circle', { r: 4 }),
        titled(`${seg.kind} ${i}`),
      ]));
    });
    const cap = document.createElement('figcaption');
    cap.textContent = `${t.id} ×${t.count}`;
    fig.append(svg, cap);
    g.append(fig);
  }
}

function showLobby() {
  $('status').textContent = '';
  $('lobby').hidden = false;
  $('game').hidden = true;
  $('join-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const v = /** @type {HTMLInputElement} */ ($('join-token')).value.trim();
    if (v) go(`/#token=${encodeURIComponent(v)}`);
  });
  $('watch-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const v = /** @type {HTMLInputElement} */ ($('watch-id')).value.trim();
    if (v) go(`/watch/${encodeURIComponent(v)}`);
  });
  $('create-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const n = Number(/** @type {HTMLSelectElement} */ ($('create-players')).value);
    /** @type {Colour[]} */
    const all = ['red', 'blue', 'green', 'yellow', 'black', 'pink'];
    const tollkeepers = /** @type {HTMLInputElement} */ ($('create-tollkeepers')).checked;
    const france = /** @type {HTMLInputElement} */ ($('create-map')).checked;
    const messages = /** @type {HTMLInputElement} */ ($('create-messages')).checked;
    const innsCathedrals = /** @type {HTMLInputElement} */ ($('create-inns')).checked;
    const tradersBuilders = /** @type {HTMLInputElement} */ ($('create-traders')).checked;
    const map = france ? { map: 'france', chips: true } : undefined;
    const [bank, increment] = /** @type {HTMLSelectElement} */ ($('create-clock')).value.split('+').map(Number);
    const clock = bank ? { bank_ms: bank, increment_ms: increment ?? 0 } : undefined;
    const res = await fetch('/api/matches', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ players: all.slice(0, n), modules: { tollkeepers, messages, map, inns_cathedrals: innsCathedrals, traders_builders: tradersBuilders }, clock }),
    });
    const out = $('created');
    if (!res.ok) {
      out.textContent = `The server refused: ${(await res.json()).message}`;
      return;
    }
    /** @type {MatchCreated} */
    const created = await res.json();
    out.replaceChildren();
    for (const s of created.seats) {
      const a = document.createElement('a');
      a.href = `/#token=${s.token}`;
      a.target = '_blank';
      a.textContent = `Play ${cap(s.colour)}`;
      a.className = 'seat-link';
      out.append(a, ' ');
    }
    const w = document.createElement('a');
    w.href = `/watch/${created.match_id}`;
    w.target = '_blank';
    w.textContent = 'Watch';
    out.append(w);
  });
}

/** @param {string} url */
function go(url) {
  location.assign(url);
}
// The page is chosen by the URL's fragment (a seat token, `#tiles`): start afresh when it changes.
window.addEventListener('hashchange', () => location.reload());

function play() {
  $('lobby').hidden = true;
  $('game').hidden = false;
  const ws = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;

  /** @type {{pos: Pos, rotation: Rotation}|null} */
  let selected = null;
  /** @type {string|null} keyboard focus among the targets of phase 2 */
  let focusTarget = null;
  /** @type {import('./figures.js').Figure} the figure the placement step puts (a meeple unless another is chosen) */
  let figure = 'meeple';
  /** Dispatch 4 (M11) is being carried out: the tile to place now is its extra tile. */
  let extraTile = false;
  /** Whether this page's player declined the standing preference offered at the start (M3). */
  let prefDeclined = false;
  const notice = new TurnNotice(
    /** @type {HTMLInputElement} */ ($('notify-sound')),
    /** @type {HTMLInputElement} */ ($('notify-browser')),
  );
  /** The Messages decision whose buttons were last shown, to focus its first button once. */
  let shownDecision = '';

  const credentials = { token, inviteCode };
  const client = new MatchClient({ ws, token, matchId: watchId ?? seatMatch, takeSeat: !!seatMatch, inviteCode }, {
    state: () => {
      // The whole history up to the view (once; after a fresh snapshot, what the log lacks).
      if (client.view && client.seq !== null) {
        void logPanel.sync(client.seq);
        void chat.start();
      }
      render();
    },
    events: (events, seq, byServer) => {
      logPanel.live(seq, events, byServer);
      flashScores(events);
      if (events.some((e) => e.type === 'tile_placed' || e.type === 'turn_started')) selected = null;
      for (const e of events) {
        if (e.type === 'dispatch_resolved' && e.dispatch === 4 && e.action) extraTile = true;
        else if (e.type === 'turn_started' || (e.type === 'tile_placed' && extraTile)) extraTile = false;
      }
      focusTarget = null;
      figure = 'meeple';
      showError(null);
      $('log').dataset.seq = String(seq);
    },
    refused: (err) => {
      // The "I'm back" command only needs to reach the server; its refusal (out of turn) is expected.
      if (err.id !== undefined && err.id === backId) return;
      showError(refusalWords(err));
    },
    chat: (line) => chat.live(line),
    chatRemoved: (id) => chat.removed(id),
    status: (s) => {
      document.body.dataset.status = s;
      $('status').textContent =
        s === 'live'
          ? 'connected'
          : s === 'reconnecting'
            ? 'reconnecting…'
            : s === 'signed_out'
              ? 'signed out: this session was revoked; log in again in the lobby'
              : s === 'refused'
                ? 'not joined'
                : 'connecting…';
    },
  });
  // For tests and the curious: the exact state the page shows.
  /** @type {any} */ (window).carcassonne = client;
  const logPanel = new LogPanel(/** @type {HTMLOListElement} */ ($('log')), {
    matchId: () => client.matchId,
    colours: () => (client.view ? client.view.players.map((p) => p.colour) : []),
    credentials,
    naming: playerNaming((id) => designs.get(id)),
    changed: () => render(),
  });
  const chat = new ChatPanel(client, credentials);

  const board = new Board(/** @type {SVGSVGElement} */ (/** @type {unknown} */ ($('board'))), designs, {
    square: (pos) => select(pos),
    preview: () => turn(1),
    meeple: (t) => pickTarget(t),
    tollhouse: (pos) => pickTarget(`tollhouse@${pos.x},${pos.y}`),
    pick: (key) => /** @type {HTMLButtonElement|null} */ ($('targets').querySelector(`[data-key="dispatch:${key}"]`))?.click(),
  });

  /** The id of the command sent by "I'm back" (any command from the seat clears the away mark). */
  /** @type {string|null} */
  let backId = null;
  /** Clicked "I'm back": the view lists the player as away until their next accepted command. */
  let cameBack = false;

  /** @type {Map<number, number>} the players who just scored, until when their score is marked */
  const scoredUntil = new Map();

  /**
   * What just scored, flashed on the board and beside the scores.
   * @param {import('./proto').Event[]} events
   */
  function flashScores(events) {
    const v = client.view;
    if (!v) return;
    /** @param {Pos} pos @param {number} points @param {number[]} players */
    const show = (pos, points, players) => {
      if (points <= 0 || players.length === 0) return;
      const colour = v.players[players[0]]?.colour;
      if (colour) board.flash(pos, `+${points}`, colour);
      for (const p of players) scoredUntil.set(p, Date.now() + FLASH_MS);
    };
    for (const e of events) {
      if (e.type === 'feature_scored' || e.type === 'field_scored') show(e.pos, e.points, e.winners);
      else if (e.type === 'toll_raised') show(e.road, e.points, [e.player]);
      else if (e.type === 'chip_taken' || e.type === 'wine_sold') show(e.pos, e.points, [e.player]);
    }
    unmarkLater();
  }
  /** @type {ReturnType<typeof setTimeout>|null} */
  let flashTimer = null;

  /** One redraw when the next score marks are due to go, however many scorings come meanwhile. */
  function unmarkLater() {
    if (scoredUntil.size === 0 || flashTimer !== null) return;
    const next = Math.min(...scoredUntil.values());
    flashTimer = setTimeout(() => {
      flashTimer = null;
      const now = Date.now();
      for (const [p, until] of scoredUntil) if (until <= now) scoredUntil.delete(p);
      render();
      unmarkLater();
    }, Math.max(0, next - Date.now()) + 50);
  }

  /** @param {string|null} msg */
  function showError(msg) {
    const e = $('error');
    e.textContent = msg ?? '';
    e.hidden = !msg;
  }

  /** @param {Command} c */
  function send(c) {
    showError(null);
    client.command(c);
  }

  /** The decision the page's seat may answer now, if any. */
  function myDecision() {
    const v = client.view;
    if (!v || client.seat === null) return null;
    return v.decisions.find((d) => d.player === client.seat) ?? null;
  }

  function legal() {
    const v = client.view;
    const d = v?.decisions.find((x) => x.type === 'place_tile');
    return d && d.type === 'place_tile' ? d.placements : [];
  }

  /** @param {Pos} pos */
  function rotationsAt(pos) {
    return legal().find((p) => p.pos.x === pos.x && p.pos.y === pos.y)?.rotations ?? [];
  }

  /** @param {Pos} pos */
  function select(pos) {
    const rots = rotationsAt(pos);
    /** @type {Rotation} */
    const keep = selected && rots.includes(selected.rotation) ? selected.rotation : rots[0] ?? 0;
    selected = { pos, rotation: keep };
    render();
  }

  /** Turns the drawn tile a quarter: every rotation may be tried, the fitting ones are marked. */
  /** @param {number} dir */
  function turn(dir) {
    if (!selected) {
      const first = legal()[0];
      if (!first) return;
      selected = { pos: first.pos, rotation: first.rotations[0] };
    } else selected.rotation = /** @type {Rotation} */ ((selected.rotation + 90 * dir + 360) % 360);
    render();
  }

  /** @param {number} dir */
  function cycleSquare(dir) {
    const l = legal();
    if (l.length === 0) return;
    const i = selected ? l.findIndex((p) => p.pos.x === selected?.pos.x && p.pos.y === selected?.pos.y) : -1;
    select(l[(i + dir + l.length) % l.length].pos);
  }

  /** A sale's key, for keyboard focus and the page's buttons. @param {WineSale} s */
  const saleKey = (s) => `sale@${s.sale}:${s.chips.map(chipWords).join('+')}`;

  /** @param {WineSale} s */
  function sell(s) {
    send({ type: 'sell_wine', sale: s.sale, chips: s.chips });
  }

  /** @param {number} dir */
  function cycleTarget(dir) {
    const d = myDecision();
    if (!d || (d.type !== 'place_follower' && d.type !== 'sell_wine')) return;
    const all = d.type === 'sell_wine'
      ? d.sales.map(saleKey)
      : [...figureTargets(d, figure), ...(d.tollhouse_targets ?? []).map((p) => `tollhouse@${p.x},${p.y}`)];
    if (all.length === 0) return;
    const i = focusTarget ? all.indexOf(focusTarget) : -1;
    focusTarget = all[(i + dir + all.length) % all.length];
    render();
  }

  /**
   * A meeple or tollhouse target picked (a click, a button): shown, and put only once confirmed.
   * @param {string|null} key
   */
  function pickTarget(key) {
    focusTarget = key;
    render();
  }

  /**
   * The figure the placement step puts (Inns & Cathedrals, Traders & Builders): its targets are
   * shown on the board; a picked target it cannot take is let go.
   * @param {import('./figures.js').Figure} f
   */
  function pickFigure(f) {
    figure = f;
    const d = myDecision();
    if (focusTarget && !focusTarget.startsWith('tollhouse@') && !(d && figureTargets(d, f).includes(focusTarget))) focusTarget = null;
    render();
  }

  function confirm() {
    const d = myDecision();
    if (!d) return;
    if (d.type === 'place_tile' && selected) {
      // A tile that does not fit there is not sent: the page says why beside the buttons.
      if (!rotationsAt(selected.pos).includes(selected.rotation)) return;
      send({ type: 'place_tile', pos: selected.pos, rotation: selected.rotation });
    } else if (d.type === 'place_follower' && focusTarget) {
      if (focusTarget.startsWith('tollhouse@')) {
        const [x, y] = focusTarget.slice(10).split(',').map(Number);
        send({ type: 'place_tollhouse', pos: { x, y } });
      } else if (figure === 'meeple') send({ type: 'place_meeple', target: focusTarget });
      else send({ type: 'place_meeple', target: focusTarget, figure });
    } else if (d.type === 'sell_wine' && focusTarget) {
      const s = d.sales.find((x) => saleKey(x) === focusTarget);
      if (s) sell(s);
    }
  }

  $('rotate-cw').addEventListener('click', () => turn(1));
  $('rotate-ccw').addEventListener('click', () => turn(-1));
  $('confirm').addEventListener('click', confirm);
  $('cancel').addEventListener('click', () => pickTarget(null));
  $('pass').addEventListener('click', () => send({ type: 'pass' }));
  $('zoom-in').addEventListener('click', () => board.zoom(1.25));
  $('zoom-out').addEventListener('click', () => board.zoom(0.8));
  $('zoom-fit').addEventListener('click', () => board.fit());
  $('double-pref').addEventListener('change', () => {
    const v = /** @type {HTMLSelectElement} */ ($('double-pref')).value;
    send({ type: 'set_double_turn_preference', preference: v === 'take' || v === 'decline' ? v : null });
  });
  $('pref').addEventListener('change', () => {
    const v = /** @type {HTMLSelectElement} */ ($('pref')).value;
    send({ type: 'set_pawn_preference', preference: v ? /** @type {import('./proto').PawnPreference} */ (v) : null });
  });
  // M3: the standing preference, offered at the start of a Messages game until set or declined.
  for (const b of /** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll('#pref-offer button'))) {
    b.addEventListener('click', () => {
      const choice = b.dataset.pref ?? '';
      if (choice) send({ type: 'set_pawn_preference', preference: /** @type {import('./proto').PawnPreference} */ (choice) });
      prefDeclined = true;
      render();
    });
  }
  setInterval(() => { tick(); tickClocks(); }, 1000);
  $('back').addEventListener('click', () => {
    showError(null);
    backId = client.command({ type: 'pass' });
    cameBack = true;
    render();
  });

  /** N among the buttons of a Messages decision: moves the keyboard focus. @param {number} dir */
  function cycleButtons(dir) {
    const bs = [...$('targets').querySelectorAll('button')];
    if (bs.length === 0) return;
    const i = bs.indexOf(/** @type {HTMLButtonElement} */ (document.activeElement));
    bs[(i + dir + bs.length) % bs.length].focus();
  }

  document.addEventListener('keydown', (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
    // A focused button answers Enter and Space itself.
    if (e.target instanceof HTMLButtonElement && (e.key === 'Enter' || e.key === ' ')) return;
    const d = myDecision();
    const k = e.key.toLowerCase();
    const msg = d?.type === 'choose_pawn' || d?.type === 'dispatch' || d?.type === 'chain_dispatch' || d?.type === 'double_turn';
    if (k === 'r') turn(e.shiftKey ? -1 : 1);
    else if (k === 'n' && msg) cycleButtons(e.shiftKey ? -1 : 1);
    else if (k === 'n') (d?.type === 'place_follower' || d?.type === 'sell_wine' ? cycleTarget : cycleSquare)(e.shiftKey ? -1 : 1);
    else if (k === 'f' && d?.type === 'place_follower') {
      // F: the next figure offered (large meeple, builder, pig).
      const offered = FIGURES.filter((f) => figureTargets(d, f).length > 0);
      if (offered.length) pickFigure(offered[(offered.indexOf(figure) + 1) % offered.length]);
    } else if (k === 'enter') confirm();
    else if (k === 'escape') pickTarget(null);
    else if (k === 's') send({ type: 'pass' });
    else if (k === '+' || k === '=') board.zoom(1.25);
    else if (k === '-') board.zoom(0.8);
    else if (k === '0') board.fit();
    else return;
    e.preventDefault();
  });
  window.addEventListener('resize', () => board.fit());

  function render() {
    const v = client.view;
    if (!v) return;
    const d = myDecision();
    const colours = v.players.map((p) => p.colour);
    // A lobby's match names its seats (an account's name, or a bot); else the colours do.
    const names = v.players.map((p, i) => v.names?.[i]?.name ?? cap(p.colour));
    const activeName = names[v.active] ?? '';
    const mine = d !== null;
    const you = client.seat !== null ? colours[client.seat] : null;
    const theirTurn = mine && client.seat !== v.active;
    notice.update(mine && !v.finished && client.seat !== null, theirTurn ? 'Your choice' : 'Your turn');
    document.title = notice.title(v.finished
      ? 'Game over — Carcassonne'
      : `${theirTurn ? 'Your choice' : mine ? 'Your turn' : `${activeName}'s turn`} — Carcassonne`);
    $('whoami').textContent = you ? `You play ${cap(you)}` : 'Watching';
    const turnLine = $('turn');
    turnLine.replaceChildren(v.finished ? 'Game over' : `Turn ${v.turn}: ${activeName}${client.seat === v.active ? ' (you)' : ''}`);
    // M3: another player's pawn choice lets the turn go on; the next turn waits for it.
    const held = heldBy(v);
    turnLine.dataset.held = String(held.length > 0);
    if (held.length) {
      const due = deadlines(v).filter((x) => held.includes(x.player)).map((x) => x.at);
      const whose = held.map((p) => names[p] ?? cap(colours[p] ?? '')).join(' and ');
      turnLine.append(` · the next turn waits for ${whose} to choose a pawn`);
      if (due.length) turnLine.append(', at most ', countdown(Math.max(...due)));
      turnLine.append('.');
    }
    $('pile').textContent = String(v.pile_size);
    $('discarded').textContent = v.discarded.length ? ` · ${v.discarded.length} discarded` : '';
    $('seq').textContent = String(client.seq);
    // What a page shows once it has a view (a refused link shows only the refusal).
    for (const id of ['chat', 'players-wrap', 'pile-row', 'events', 'zoom']) $(id).hidden = false;
    renderEnd($('end'), v, client.seat, names);
    $('replay-row').hidden = !v.finished;
    if (v.finished) $('replay-link').setAttribute('href', `/replay?match=${encodeURIComponent(client.matchId ?? '')}`);
    paint($('end'));

    const chips = !!v.map?.hands?.length;
    const pawns = v.messages?.players ?? [];
    const rows = v.players.map((p, i) => {
      const c = COLOURS[p.colour];
      const tr = document.createElement('tr');
      tr.dataset.player = p.colour;
      if (i === v.active && !v.finished) tr.className = 'active';
      const sw = `<span class="swatch" data-fill="${c.fill}" data-ink="${c.ink}">${c.letter}</span>`;
      const toll = p.tollhouse ? String(p.tollhouse.value) : '–';
      const scored = (scoredUntil.get(i) ?? 0) > Date.now() ? ' scored' : '';
      tr.innerHTML = `<td>${sw} <span class="name"></span></td><td class="score${scored}">${p.score}</td><td class="meeples">${p.meeples}</td>` +
        (v.modules.tollkeepers ? `<td class="toll">${toll}</td>` : '') +
        (pawns.length ? `<td class="pawns" data-scoring="${pawns[i]?.scoring}" data-messenger="${pawns[i]?.messenger}">${pawns[i] ? pawnsHtml(pawns[i]) : ''}</td>` : '');
      // A name is the player's own text: set as text, never as markup.
      const name = /** @type {HTMLElement} */ (tr.querySelector('.name'));
      name.textContent = names[i] + (v.names?.[i] ? ` (${cap(p.colour)})` : '');
      paint(tr);
      return tr;
    });
    const cs = clocks(v);
    rows.forEach((tr, i) => {
      const c = cs[i];
      if (!c) return;
      const td = document.createElement('td');
      td.append(clockSpan(c, isAway(v, i)));
      // Beside the score: on a narrow screen the clocks stay in view.
      tr.querySelector('.score')?.after(td);
    });
    $('clock-head').hidden = cs.length === 0;
    const away = client.seat !== null && isAway(v, client.seat);
    if (!away) cameBack = false;
    $('away-row').hidden = !away || cameBack || v.finished;
    $('toll-head').hidden = !v.modules.tollkeepers;
    $('chips-head').hidden = true;
    $('pawns-head').hidden = !pawns.length;
    // R9: the standing answer to the builder's double turn.
    const dpref = /** @type {HTMLSelectElement} */ ($('double-pref'));
    $('double-pref-row').hidden = !v.modules.traders_builders || client.seat === null || v.finished;
    if (client.seat !== null && document.activeElement !== dpref) dpref.value = v.players[client.seat]?.double_turn ?? '';
    // A hand of chips, the large meeple, builder and pig in the supply and the goods tokens go on
    // a line of their own under their player: the table stays narrow.
    const figures = !!(v.modules.inns_cathedrals || v.modules.traders_builders);
    $('players').replaceChildren(...rows.flatMap((tr, i) => {
      if (!chips && !figures) return [tr];
      const hand = document.createElement('tr');
      hand.className = 'hand-row';
      hand.dataset.player = v.players[i].colour;
      if (tr.classList.contains('active')) hand.classList.add('active');
      const p = v.players[i];
      const parts = [
        ...(chips ? [`<span class="chips">${handHtml(v.map?.hands?.[i] ?? [])}</span>`] : []),
        ...(figures ? [`<span class="figures">${figuresHtml(p)}</span>`] : []),
        ...(p.goods ? [`<span class="goods">${goodsHtml(p.goods)}</span>`] : []),
      ];
      hand.innerHTML = `<td class="${chips ? 'chips' : 'hand'}" colspan="${tr.cells.length}">${parts.join(' · ')}</td>`;
      paint(hand);
      return [tr, hand];
    }));

    // The drawn tile beside the board, in the chosen rotation.
    const drawn = $('drawn');
    drawn.replaceChildren();
    const dd = v.drawn ? designs.get(v.drawn) : undefined;
    const rot = selected ? selected.rotation : 0;
    if (dd) {
      const svg = el('svg', { viewBox: '-52 -52 104 104', width: 96, height: 96, role: 'img' });
      svg.appendChild(el('g', { transform: `rotate(${rot})` }, [drawTile(dd)]));
      drawn.appendChild(svg);
    }
    $('drawn-name').textContent = dd ? `${cap(tileWords(dd))}, turned ${rot}°` : 'no tile drawn';
    $('drawn-name').dataset.rotation = String(rot);

    const placing = d?.type === 'place_tile';
    const following = d?.type === 'place_follower';
    const selling = d?.type === 'sell_wine';
    const offMap = !!(placing && selected && v.map && cellAt(v.map.info, selected.pos) === '.');
    const fits = !!selected && rotationsAt(selected.pos).includes(selected.rotation);
    const confirmButton = /** @type {HTMLButtonElement} */ ($('confirm'));
    confirmButton.disabled = !((placing && selected && fits) || ((following || selling) && focusTarget));
    confirmButton.textContent = following && focusTarget
      ? (focusTarget.startsWith('tollhouse@') ? 'Build the tollhouse (Enter)' : `Put the ${FIGURE_NAMES[figure]} (Enter)`)
      : selling && focusTarget ? 'Sell (Enter)' : 'Place (Enter)';
    $('cancel').hidden = !((following || selling) && focusTarget);
    const msgControls = d ? decisionControls(d, client.seat === v.active, send) ?? doubleTurnControls(d, send) : null;
    /** @type {HTMLButtonElement} */ ($('pass')).disabled = !mine || d?.type === 'choose_pawn' || d?.type === 'dispatch';
    // A Messages decision has its own buttons: the tile controls step aside while it is open.
    // A spectator (no seat) gets no player's controls.
    $('hand').hidden = !!msgControls || v.finished || client.seat === null;
    const offered = following ? FIGURES.filter((f) => figureTargets(d, f).length > 0) : [];
    // A figure with no target (no meeple left, say) gives way to the first one offered.
    if (offered.length && !offered.includes(figure)) figure = offered[0];
    const fl = $('figures');
    // Shown when a figure other than the meeple is offered (or chosen).
    fl.hidden = !offered.some((f) => f !== 'meeple') && figure === 'meeple';
    fl.replaceChildren(...(fl.hidden ? [] : offered.map((f) => {
      const b = document.createElement('button');
      b.textContent = cap(FIGURE_NAMES[f]);
      b.dataset.figureChoice = f;
      b.setAttribute('aria-pressed', String(f === figure));
      b.onclick = () => pickFigure(f);
      return b;
    })));
    /** @type {HTMLButtonElement} */ ($('rotate-cw')).disabled = !placing;
    /** @type {HTMLButtonElement} */ ($('rotate-ccw')).disabled = !placing;
    $('fit-hint').textContent = placing && selected ? (offMap ? 'off the map' : fits ? 'fits here' : 'does not fit here') : '';
    $('hint').textContent = !mine
      ? (v.finished ? 'The game is over.' : waitingFor(v, colours))
      : msgControls
        ? msgControls.hint
      : placing
        ? `${extraTile ? 'Dispatch 4, the extra tile: p' : 'P'}ick a highlighted square (N cycles), turn the tile (R), place it (Enter).`
        : selling
          ? 'Sell a wine: pick a sale (click, or N and Enter), or Pass (S) to keep your chips.'
          : $('figures').hidden
            ? 'Click a circle for a meeple (or a T for the tollhouse), then confirm it (Enter); or Pass (S).'
            : `Choose the figure (F), click a circle for the ${FIGURE_NAMES[figure]}, then confirm it (Enter); or Pass (S).`;

    // Meeple and tollhouse targets as buttons too, for keyboards and screen readers.
    const tl = $('targets');
    const focusedKey = tl.contains(document.activeElement)
      ? /** @type {HTMLElement} */ (document.activeElement).dataset.key
      : undefined;
    tl.replaceChildren();
    if (msgControls && d) {
      tl.append(...msgControls.buttons);
      const own = deadlines(v).find((x) => x.player === client.seat);
      if (own) {
        const p = document.createElement('p');
        p.className = 'my-deadline';
        const dflt = d.type === 'choose_pawn' ? 'moves your scoring pawn' : d.type === 'dispatch' ? 'takes the 2 points' : 'answers for you';
        p.append('Answer within ', countdown(own.at), `, or the server ${dflt}.`);
        tl.append(p);
      }
      const id = JSON.stringify(d);
      const again = msgControls.buttons.find((b) => b.dataset.key === focusedKey);
      if (again) again.focus();
      else if (id !== shownDecision) msgControls.buttons[0]?.focus();
      shownDecision = id;
    } else shownDecision = '';
    if (following && d.type === 'place_follower') {
      // With more figures than the meeple to put, one button per figure chooses which the
      // circles on the board put; every figure's targets are buttons too.
      for (const f of FIGURES) {
        for (const t of figureTargets(d, f)) {
          const b = document.createElement('button');
          b.textContent = f === 'meeple' ? targetWords(t) : `${FIGURE_NAMES[f]}: ${targetWords(t)}`;
          if (f === 'meeple') b.dataset.targetButton = t;
          else b.dataset.figureButton = `${f} ${t}`;
          b.className = focusTarget === t && figure === f ? 'focus' : '';
          b.onclick = () => {
            figure = f;
            pickTarget(t);
          };
          tl.append(b);
        }
      }
      for (const p of d.tollhouse_targets ?? []) {
        const b = document.createElement('button');
        const key = `tollhouse@${p.x},${p.y}`;
        b.textContent = 'the tollhouse on this crossroads';
        b.dataset.tollButton = `${p.x},${p.y}`;
        b.className = focusTarget === key ? 'focus' : '';
        b.onclick = () => pickTarget(key);
        tl.append(b);
      }
    }
    if (selling && d.type === 'sell_wine') {
      const town = v.map?.info.towns.find((t) => t.pos.x === d.pos.x && t.pos.y === d.pos.y);
      for (const s of d.sales) {
        const b = document.createElement('button');
        const key = saleKey(s);
        const grape = s.chips[0] ? GRAPES[s.chips[0].grape].name : '';
        const where = s.sale === 'abroad' ? 'abroad' : `to ${town?.name ?? 'the town'}`;
        b.textContent = `Sell the ${grape} wine (${s.chips.map(chipWords).join(' + ')}) ${where}: +${s.points}`;
        b.dataset.sale = key;
        b.className = `sale${focusTarget === key ? ' focus' : ''}`;
        b.onclick = () => sell(s);
        tl.append(b);
      }
    }

    const follower = v.decisions.find((x) => x.type === 'place_follower');
    board.render({
      view: v,
      legal: legal(),
      selected: placing ? selected : null,
      fits,
      targets: follower && follower.type === 'place_follower'
        ? { pos: follower.pos, meeple: figureTargets(follower, mine ? figure : 'meeple'), tollhouse: follower.tollhouse_targets ?? [], figure: mine ? figure : 'meeple' }
        : null,
      focusTarget,
      mine,
      placing: !!placing,
      picks: d?.type === 'dispatch' && d.action ? (d.meeples ?? []).map((m) => `${m.pos.x},${m.pos.y} ${m.target}`) : [],
      lastTiles: [...logPanel.lastTiles].flatMap(([p, pos]) => {
        const colour = v.players[p]?.colour;
        return colour ? [{ pos, colour }] : [];
      }),
    });

    renderMessages(v, colours);

    document.body.dataset.finished = String(v.finished);
  }

  /**
   * The Messages panel: the track, the stack, everyone's pending deadlines, the preference.
   * @param {View} v
   * @param {Colour[]} colours
   */
  function renderMessages(v, colours) {
    $('map-legend').hidden = !v.map;
    const m = v.messages;
    $('messages').hidden = !m;
    if (!m) return;
    $('stack').textContent = String(m.stack);
    $('track').replaceChildren(drawTrack(v));
    $('deadlines').replaceChildren(...deadlines(v).map((x) => {
      const li = document.createElement('li');
      li.dataset.deadline = String(x.player);
      li.append(`${cap(colours[x.player] ?? `player ${x.player + 1}`)} has `, countdown(x.at), ' to choose.');
      return li;
    }));
    const pref = /** @type {HTMLSelectElement} */ ($('pref'));
    $('pref-row').hidden = client.seat === null || v.finished;
    $('pref-offer').hidden = client.seat === null || v.finished || prefDeclined
      || v.turn > v.players.length || !!m.players[client.seat]?.preference;
    if (client.seat !== null && document.activeElement !== pref) pref.value = m.players[client.seat]?.preference ?? '';
  }

  client.start();
}

/**
 * M3: the players whose pawn choice holds the next turn: the active player has nothing left to
 * do in this turn and another player's pawn choice is still open (it must be settled before the
 * turn passes on).
 * @param {View} v
 * @returns {number[]}
 */
function heldBy(v) {
  if (v.finished || v.decisions.some((d) => d.player === v.active)) return [];
  return [...new Set(v.decisions.filter((d) => d.type === 'choose_pawn').map((d) => d.player))];
}

/**
 * Whom the page waits for: the active player, or the players with a Messages decision open.
 * @param {View} v
 * @param {Colour[]} colours
 */
function waitingFor(v, colours) {
  const who = [...new Set(v.decisions.map((d) => d.player))].map((p) => cap(colours[p] ?? ''));
  const d = v.decisions.find((x) => x.type === 'dispatch');
  const what = d && d.type === 'dispatch' ? ` (dispatch ${d.dispatch}: ${DISPATCHES[d.dispatch] ?? ''})` : '';
  const pawns = heldBy(v).length ? ' to choose a pawn before the next turn' : '';
  return `Waiting for ${who.length ? who.join(' and ') : cap(colours[v.active] ?? '')}${what}${pawns}.`;
}

/**
 * Colours the swatches and chips under `root` from their `data-fill` and `data-ink`: through the
 * style object, since the Content-Security-Policy refuses style attributes in markup.
 * @param {HTMLElement} root
 */
function paint(root) {
  for (const e of root.querySelectorAll('[data-fill]')) {
    const el = /** @type {HTMLElement} */ (e);
    el.style.background = el.dataset.fill ?? '';
    el.style.color = el.dataset.ink ?? '';
  }
}

/**
 * A player's face-up chips, and the wines they make (P9), with letters as well as colours.
 * @param {import('./proto').Chip[]} hand
 */
function handHtml(hand) {
  if (hand.length === 0) return '–';
  const chips = hand.map((c) => {
    const g = GRAPES[c.grape];
    return `<span class="hand-chip" data-grape="${c.grape}" title="${g.name} chip worth ${c.value}" data-fill="${g.fill}" data-ink="${g.ink}">${g.letter}${c.value}</span>`;
  }).join('');
  const w = wines(hand).map((g) => `<span class="wine" data-wine="${g}">${GRAPES[g].name} wine</span>`).join(' ');
  return chips + (w ? ` ${w}` : '');
}
