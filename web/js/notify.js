// The "your turn" notice of the play page: when a decision comes to wait for the player, the tab's
// title is marked, and, as the player chose in the page's settings (kept in this browser), a short
// sound plays and the browser shows a notification (only once the browser allowed it, and only
// while the page is not in front, so a player looking at the board is not told twice). The
// choices are kept in localStorage; nothing goes to the server.

const KEY = 'carcassonne.notify';

/** @typedef {{sound: boolean, notification: boolean}} Choices */

/** @returns {Choices} */
function load() {
  try {
    const v = JSON.parse(localStorage.getItem(KEY) ?? '{}');
    return { sound: v.sound === true, notification: v.notification === true };
  } catch {
    return { sound: false, notification: false };
  }
}

export class TurnNotice {
  /**
   * @param {HTMLInputElement} soundBox the settings' sound toggle
   * @param {HTMLInputElement} notifyBox the settings' notification toggle
   */
  constructor(soundBox, notifyBox) {
    this.choices = load();
    this.waiting = false;
    /** Notices given (sounds, notifications), counted for tests and the curious. */
    this.counts = { sounds: 0, notifications: 0 };
    /** @type {AudioContext|null} */
    this.audio = null;
    this.soundBox = soundBox;
    this.notifyBox = notifyBox;
    soundBox.checked = this.choices.sound;
    notifyBox.checked = this.choices.notification && 'Notification' in window && Notification.permission === 'granted';
    soundBox.addEventListener('change', () => {
      this.choices.sound = soundBox.checked;
      this.save();
    });
    notifyBox.addEventListener('change', async () => {
      if (!notifyBox.checked || !('Notification' in window)) {
        this.choices.notification = false;
        notifyBox.checked = false;
      } else {
        // Asked on the player's own click, as browsers require.
        const answer = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
        this.choices.notification = answer === 'granted';
        notifyBox.checked = this.choices.notification;
      }
      this.save();
    });
  }

  save() {
    localStorage.setItem(KEY, JSON.stringify(this.choices));
    document.body.dataset.notify = `${this.choices.sound ? 'sound' : ''}${this.choices.notification ? ' notification' : ''}`.trim();
  }

  /** The title with the mark when a decision waits. @param {string} title */
  title(title) {
    return this.waiting ? `● ${title}` : title;
  }

  /**
   * Called on every render: `waiting` says whether a decision of the player waits now.
   * @param {boolean} waiting
   * @param {string} what the words of the notice ("Your turn", "Your choice")
   */
  update(waiting, what) {
    const began = waiting && !this.waiting;
    this.waiting = waiting;
    if (!began) return;
    const away = document.visibilityState !== 'visible' || !document.hasFocus();
    if (this.choices.sound) this.beep();
    if (this.choices.notification && away && 'Notification' in window && Notification.permission === 'granted') {
      const n = new Notification(`${what} — Carcassonne`, { body: 'A decision waits for you.', tag: 'carcassonne-turn' });
      n.onclick = () => window.focus();
      this.counts.notifications += 1;
    }
    document.body.dataset.notices = `${this.counts.sounds}/${this.counts.notifications}`;
  }

  /** A short two-tone chime (Web Audio; no file to fetch). */
  beep() {
    try {
      this.audio ??= new AudioContext();
      const ctx = this.audio;
      for (const [i, f] of [660, 880].entries()) {
        const o = ctx.createOscillator();
        const g = ctx.createGain();
        o.frequency.value = f;
        g.gain.value = 0.08;
        o.connect(g).connect(ctx.destination);
        o.start(ctx.currentTime + i * 0.15);
        o.stop(ctx.currentTime + i * 0.15 + 0.12);
      }
      this.counts.sounds += 1;
    } catch {
      // No audio device: the title still says it.
    }
  }
}
