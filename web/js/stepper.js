// Stepping through a match's seqs, as the admin console and the replay page both do: the seq a
// request asks for clamped to the match, the first/previous/next/last buttons enabled for the
// seq shown, and the keys (Home, ←, →, End; `+`, `-` and `0` zoom the board) that step.

/**
 * A seq asked for (any number) as one of the match's: 0 to `end`; not a number: the end.
 * @param {number} seq @param {number} end
 */
export function clampSeq(seq, end) {
  return Math.max(0, Math.min(end, Math.round(Number.isFinite(seq) ? seq : end)));
}

/**
 * @typedef {{first: HTMLButtonElement, prev: HTMLButtonElement, next: HTMLButtonElement, last: HTMLButtonElement}} StepButtons
 * @typedef {{at: () => number, end: () => number, go: (seq: number) => void}} Steps
 */

/** Enables the buttons that lead somewhere from `seq` of `end`. @param {StepButtons} b @param {number} seq @param {number} end */
export function showStep(b, seq, end) {
  b.first.disabled = b.prev.disabled = seq === 0;
  b.last.disabled = b.next.disabled = seq === end;
}

/**
 * Wires the buttons and the keys. `active()` says whether the keys step now (a stepper on
 * screen, no dialog open); keys typed into a field never step.
 * @param {StepButtons} b
 * @param {Steps} s
 * @param {() => boolean} active
 * @param {{zoom: (f: number) => void, fit: () => void}|null} [board] zoomed by `+`, `-`, `0`
 */
export function bindStepper(b, s, active, board = null) {
  b.first.addEventListener('click', () => s.go(0));
  b.prev.addEventListener('click', () => s.go(s.at() - 1));
  b.next.addEventListener('click', () => s.go(s.at() + 1));
  b.last.addEventListener('click', () => s.go(s.end()));
  document.addEventListener('keydown', (e) => {
    if (!active()) return;
    const t = e.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement) return;
    if (e.key === 'ArrowLeft') s.go(s.at() - 1);
    else if (e.key === 'ArrowRight') s.go(s.at() + 1);
    else if (e.key === 'Home') s.go(0);
    else if (e.key === 'End') s.go(s.end());
    else if (board && (e.key === '+' || e.key === '=')) board.zoom(1.25);
    else if (board && e.key === '-') board.zoom(0.8);
    else if (board && e.key === '0') board.fit();
    else return;
    e.preventDefault();
  });
}
