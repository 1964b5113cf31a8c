// The admin console's moderation screen (`/admin#moderation`, `#moderation&account=ID`): the
// players' reports (open or resolved) with their chat line's text, each resolved with a note;
// removing a chat line; an account's standing, suspended for a time or for good (with a
// reason) or lifted; and a one-time password reset link to hand to the player. Every action
// asks first and is written to the audit trail by the server.

/**
 * @typedef {import('./proto').Report} Report
 * @typedef {import('./proto').ReportList} ReportList
 * @typedef {import('./proto').AccountStanding} AccountStanding
 * @typedef {import('./proto').ResetLink} ResetLink
 */

/**
 * What the console lends this screen.
 * @typedef {object} Kit
 * @property {<T>(path: string, init?: RequestInit) => Promise<T>} api JSON from /api/admin
 * @property {(path: string, init?: RequestInit) => Promise<Response>} request a bare request
 * @property {(tag: string, attrs?: Record<string, string>, children?: (Node|string)[]) => HTMLElement} h
 * @property {(t: string) => string} when
 * @property {(text: string, ok: string) => Promise<boolean>} confirmAction
 * @property {(msg: string|null) => void} showError
 * @property {(e: unknown) => string} errorWords
 */

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

/** @type {Kit|null} */
let kit = null;
/** @type {string|null} the account shown */
let current = null;

/** @param {unknown} body */
const json = (body) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Opens the screen (the first time, wires its forms). @param {Kit} k @param {string|null} account */
export function openModeration(k, account) {
  const first = kit === null;
  kit = k;
  $('moderation').hidden = false;
  $('where').textContent = 'Moderation';
  document.title = 'Moderation — Carcassonne admin';
  if (first) wire();
  loadReports();
  if (account) {
    input('acc-id').value = account;
    loadAccount(account);
  }
}

function wire() {
  $('reports-filter').addEventListener('change', () => loadReports());
  $('acc-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const id = input('acc-id').value.trim();
    if (id) location.hash = `moderation&account=${id}`;
  });
  $('chat-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const id = input('chat-id').value.trim();
    if (id) removeLine(Number(id));
  });
  $('suspend').addEventListener('click', () => suspend());
  $('unsuspend').addEventListener('click', () => act('DELETE', 'suspension', 'Lift the suspension of', 'Lift'));
  $('reset-link').addEventListener('click', () => resetLink());
}

async function loadReports() {
  const k = /** @type {Kit} */ (kit);
  const status = /** @type {HTMLSelectElement} */ ($('reports-filter')).value;
  try {
    /** @type {ReportList} */
    const list = await k.api(`/reports?limit=100${status ? `&status=${status}` : ''}`);
    const rows = list.reports.map(reportRow);
    $('reports-body').replaceChildren(...rows);
    $('no-reports').hidden = rows.length > 0;
    $('moderation').dataset.loaded = 'true';
  } catch (e) {
    k.showError(k.errorWords(e));
  }
}

/** @param {Report} r */
function reportRow(r) {
  const k = /** @type {Kit} */ (kit);
  const { h } = k;
  const target = h('td');
  if (r.account) target.append(h('a', { href: `#moderation&account=${r.account}` }, [r.account_name ?? r.account.slice(0, 8)]));
  if (r.chat_id != null) target.append(` chat line ${r.chat_id}: `, h('q', {}, [r.chat_text ?? '(removed with its account)']));
  const tools = h('td');
  if (r.status === 'open') {
    if (r.chat_id != null) {
      const rm = h('button', { type: 'button', 'data-remove': String(r.chat_id) }, ['Remove the line']);
      rm.addEventListener('click', () => removeLine(/** @type {number} */ (r.chat_id)));
      tools.append(rm, ' ');
    }
    const note = /** @type {HTMLInputElement} */ (h('input', { 'aria-label': 'What was done', placeholder: 'what was done', id: `note-${r.id}`, maxlength: '500' }));
    const done = h('button', { type: 'button', 'data-resolve': String(r.id) }, ['Resolve']);
    done.addEventListener('click', () => resolve(r.id, note.value));
    tools.append(note, ' ', done);
  } else {
    tools.append(`resolved ${r.resolved_at ? k.when(r.resolved_at) : ''} by ${r.resolved_by ?? '?'}: ${r.resolution ?? ''}`);
  }
  return h('tr', { 'data-report': String(r.id), 'data-status': r.status }, [
    h('td', {}, [k.when(r.at)]),
    h('td', {}, [r.reporter_name ?? r.reporter.slice(0, 8)]),
    target,
    h('td', {}, [r.reason]),
    tools,
  ]);
}

/** @param {number} id @param {string} note */
async function resolve(id, note) {
  const k = /** @type {Kit} */ (kit);
  if (!note.trim()) return k.showError('Say what was done before resolving.');
  try {
    await k.request(`/reports/${id}/resolve`, json({ note }));
    k.showError(null);
    loadReports();
  } catch (e) {
    k.showError(k.errorWords(e));
  }
}

/** @param {number} id */
async function removeLine(id) {
  const k = /** @type {Kit} */ (kit);
  if (!(await k.confirmAction(`Remove chat line ${id} for everyone? It leaves the history too.`, 'Remove'))) return;
  try {
    await k.request(`/chat/${id}`, { method: 'DELETE' });
    k.showError(null);
    $('chat-said').textContent = `Chat line ${id} removed.`;
    loadReports();
  } catch (e) {
    k.showError(k.errorWords(e));
  }
}

/** @param {string} id */
async function loadAccount(id) {
  const k = /** @type {Kit} */ (kit);
  current = null;
  $('acc-panel').hidden = true;
  try {
    /** @type {AccountStanding} */
    const s = await k.api(`/accounts/${encodeURIComponent(id)}`);
    showStanding(s);
  } catch (e) {
    k.showError(k.errorWords(e));
  }
}

/** @param {AccountStanding} s */
function showStanding(s) {
  const k = /** @type {Kit} */ (kit);
  current = s.account;
  $('acc-panel').hidden = false;
  $('acc-name').textContent = `${s.name} (${s.kind})`;
  const sus = s.suspension;
  $('acc-standing').textContent = sus
    ? `Suspended since ${k.when(sus.since)} ${sus.until ? `until ${k.when(sus.until)}` : 'for good'}: ${sus.reason}`
    : `Not suspended · ${s.sessions} live session${s.sessions === 1 ? '' : 's'} · created ${k.when(s.created_at)}`;
  $('acc-panel').dataset.suspended = String(!!sus);
  $('unsuspend').hidden = !sus;
  $('reset-link').hidden = s.kind !== 'registered';
  $('reset-out').replaceChildren();
}

async function suspend() {
  const k = /** @type {Kit} */ (kit);
  if (!current) return;
  const reason = input('sus-reason').value.trim();
  if (!reason) return k.showError('Give a reason: the player reads it when they try to log in.');
  const secs = /** @type {HTMLSelectElement} */ ($('sus-for')).value;
  const length = /** @type {HTMLSelectElement} */ ($('sus-for')).selectedOptions[0]?.textContent ?? '';
  if (!(await k.confirmAction(`Suspend ${$('acc-name').textContent} ${secs ? `for ${length}` : 'for good'}? Their sessions end and the server plays their running matches.`, 'Suspend'))) return;
  try {
    /** @type {AccountStanding} */
    const s = await k.api(`/accounts/${current}/suspension`, json({ reason, seconds: secs ? Number(secs) : null }));
    k.showError(null);
    showStanding(s);
  } catch (e) {
    k.showError(k.errorWords(e));
  }
}

/** @param {string} method @param {string} path @param {string} ask @param {string} ok */
async function act(method, path, ask, ok) {
  const k = /** @type {Kit} */ (kit);
  if (!current || !(await k.confirmAction(`${ask} ${$('acc-name').textContent}?`, ok))) return;
  try {
    /** @type {AccountStanding} */
    const s = await k.api(`/accounts/${current}/${path}`, { method });
    k.showError(null);
    showStanding(s);
  } catch (e) {
    k.showError(k.errorWords(e));
  }
}

async function resetLink() {
  const k = /** @type {Kit} */ (kit);
  if (!current || !(await k.confirmAction(`Make a one-time password reset link for ${$('acc-name').textContent}?`, 'Make the link'))) return;
  try {
    /** @type {ResetLink} */
    const link = await k.api(`/accounts/${current}/password-reset`, { method: 'POST' });
    k.showError(null);
    const out = /** @type {HTMLInputElement} */ (k.h('input', { id: 'reset-url', readonly: '', size: '60', 'aria-label': 'The reset link' }));
    out.value = `${location.origin}${link.path}`;
    $('reset-out').replaceChildren('Hand this link to the player (once, until ', k.when(link.expires_at), '): ', out);
    out.select();
  } catch (e) {
    k.showError(k.errorWords(e));
  }
}
