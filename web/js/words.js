// Events, targets and errors in words, for the event log and for screen readers.

/**
 * @typedef {import('./proto').Event} Event
 * @typedef {import('./proto').Colour} Colour
 * @typedef {import('./proto').Pos} Pos
 * @typedef {import('./proto').Chip} Chip
 * @typedef {import('./proto').Grape} Grape
 */

/** Okabe–Ito colours, which colour-blind players can tell apart, and a letter for each. */
/** @type {Record<Colour, {fill: string, letter: string, ink: string}>} */
export const COLOURS = {
  red: { fill: '#D55E00', letter: 'R', ink: '#fff' },
  blue: { fill: '#0072B2', letter: 'B', ink: '#fff' },
  green: { fill: '#009E73', letter: 'G', ink: '#fff' },
  yellow: { fill: '#F0E442', letter: 'Y', ink: '#000' },
  black: { fill: '#222222', letter: 'K', ink: '#fff' },
  pink: { fill: '#CC79A7', letter: 'P', ink: '#000' },
};

/** Grape colours (P5, P7): each with a letter and a shape, so no one needs to tell the hues apart. */
/** @type {Record<Grape, {fill: string, letter: string, ink: string, name: string}>} */
export const GRAPES = {
  purple: { fill: '#6A3D9A', letter: 'P', ink: '#fff', name: 'purple' },
  light_blue: { fill: '#56B4E9', letter: 'B', ink: '#000', name: 'light blue' },
  orange: { fill: '#E69F00', letter: 'O', ink: '#000', name: 'orange' },
};

/** Every rule's refusal (`rule_code`), in the player's words. */
/** @type {Record<string, string>} */
export const REFUSALS = {
  game_over: 'The game is over.',
  unknown_player: 'There is no such player in this game.',
  not_your_turn: 'It is not your turn.',
  wrong_phase: 'That move does not fit now.',
  occupied: 'That square already holds a tile.',
  not_adjacent: 'A tile must touch a tile already on the board.',
  edge_mismatch: 'A side of the tile does not match its neighbour there.',
  no_meeple_left: 'You have no meeple left.',
  no_such_feature: 'The tile just placed has no such place for a meeple.',
  feature_occupied: 'Someone already has a meeple there.',
  module_off: 'That expansion is not played in this game.',
  not_a_crossroads: 'A tollhouse goes on a crossroads only.',
  crossroads_taken: 'That crossroads already has a tollhouse.',
  tollhouse_already_there: 'Your tollhouse already stands there.',
  dispatch_choice: 'The dispatch cannot be carried out that way.',
  unchanged: 'That is already your choice.',
  off_map: 'That square is not on the map.',
  print_mismatch: 'The tile must show what the map prints on that border.',
  not_a_wine: 'Those chips are no wine: one grape colour worth exactly 2.',
  sale_not_allowed: 'The tile just placed does not allow that sale.',
  no_sale: 'No wine sale is open to you now.',
  no_large_meeple_left: 'Your large meeple is already on the board.',
  figure_in_use: 'That figure already stands on the board.',
  figure_placement: 'The builder goes on a road or city, the pig in a field, where you already have a meeple.',
};

/** The server's other refusals (`code`), in the player's words. */
/** @type {Record<string, string>} */
export const ERRORS = {
  bad_token: 'This seat link is not valid: check that it was copied whole.',
  unknown_match: 'There is no such game (the link may be mistyped).',
  invite_required: 'This game is private: it is watched with its invite link.',
  not_your_seat: 'This seat is not yours.',
  spectator: 'Spectators cannot play.',
  not_active: 'The game is not being played any more.',
  aborted: 'The game was stopped.',
  busy: 'The server is busy: the move is sent again.',
  unavailable: 'The game cannot take moves now.',
  rate_limited: 'Too many at once: wait a moment and try again.',
  bad_chat: 'That message cannot be sent.',
  not_in_chat: 'Only the players, and spectators who entered with a name, can chat here.',
  internal: 'The server failed on that; nothing was changed.',
};

/**
 * A refusal in words: the rule's (with its id, to look it up), or the server's code's; the
 * server's own message only for a refusal the page has no words for.
 * @param {import('./proto').ErrorBody} err
 */
export function refusalWords(err) {
  const rule = err.rule ? ` (rule ${err.rule})` : '';
  const words = (err.rule_code ? REFUSALS[err.rule_code] : undefined) ?? ERRORS[err.code];
  return words ? `${words}${rule}` : `The server refused: ${err.message}${rule}`;
}

/** "a" or "an", by the word's sound (its first letter). @param {string} word */
export const an = (word) => `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;

/**
 * A tile in words, from its design: "a tile with a city and a road".
 * @param {import('./tiles.js').TileDesign|undefined} d
 */
export function tileWords(d) {
  if (!d) return 'a tile';
  const n = (/** @type {string} */ kind) => d.segments.filter((x) => x.kind === kind).length;
  const count = (/** @type {number} */ k, /** @type {string} */ one, /** @type {string} */ many) =>
    k === 0 ? [] : [k === 1 ? `a ${one}` : `${['', '', 'two', 'three', 'four'][k] ?? k} ${many}`];
  const coat = d.segments.some((x) => x.coat);
  const parts = [
    ...count(n('monastery'), 'monastery', 'monasteries'),
    ...count(n('city'), coat ? 'city with a coat of arms' : 'city', 'cities'),
    ...count(n('road'), 'road', 'roads'),
  ];
  // Inns & Cathedrals, Traders & Builders: what the tile shows besides its features.
  const inns = (d.inns ?? []).length;
  if (inns) parts.push(inns === 1 ? 'an inn' : `${inns} inns`);
  if (d.segments.some((x) => x.cathedral)) parts.push('a cathedral');
  for (const x of d.segments) if (x.goods) parts.push(`${x.goods === 'grain' ? 'grain' : x.goods === 'wine' ? 'wine' : 'cloth'} for trade`);
  if (d.segments.some((x) => x.kind === 'field' && (x.halves ?? []).length === 0)) parts.push('an enclosed field');
  if (parts.length === 0) return 'a tile of fields';
  const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
  return `a tile with ${list}`;
}

/**
 * How the lines name places and tiles: the admin console names squares and tile ids (a
 * dispute is settled by them); the play page names neither (`PLAYER`).
 * @typedef {{at: (p: Pos) => string, tile: (id: string) => string}} Naming
 */

/** Squares as ` at x,y`, tiles by id. @type {Naming} */
export const EXACT = { at: (p) => ` at ${p.x},${p.y}`, tile: (id) => id };

/**
 * No squares (the board marks where), tiles by what they show.
 * @param {(id: string) => import('./tiles.js').TileDesign|undefined} design
 * @returns {Naming}
 */
export const playerNaming = (design) => ({ at: () => '', tile: (id) => tileWords(design(id)) });

/** The eight dispatches (M8–M15): what each one's action does. */
export const DISPATCHES = [
  '',
  'score your smallest road',
  'score your smallest city',
  'score your smallest monastery',
  'place an extra tile',
  '2 points per coat of arms in cities with your knights',
  '2 points per knight',
  '2 points per farmer',
  'score a meeple and take it back',
];

/** What a pawn moved for (M2, M17). @type {Record<import('./proto').ScoreReason, string>} */
export const REASONS = {
  feature: 'a feature', field: 'a field', toll: 'a toll', dispatch: 'a dispatch', chip: 'a chip', wine: 'a wine',
  goods: 'trade goods',
};

/** Each figure in words (the meeple, Inns & Cathedrals' large meeple, Traders & Builders' builder and pig). */
/** @type {Record<string, string>} */
export const FIGURE_WORDS = { meeple: 'a meeple', large_meeple: 'the large meeple', builder: 'the builder', pig: 'the pig' };

/** The goods in words (R5). @type {Record<string, string>} */
const GOODS_WORDS = { wine: 'wine', grain: 'grain', cloth: 'cloth' };

/**
 * Goods tokens in words: "1 wine and 2 cloth" (kinds with none left out).
 * @param {{wine: number, grain: number, cloth: number}} g
 */
export function goodsWords(g) {
  const parts = (['wine', 'grain', 'cloth']).filter((k) => /** @type {any} */ (g)[k] > 0).map((k) => `${/** @type {any} */ (g)[k]} ${GOODS_WORDS[k]}`);
  if (parts.length === 0) return 'no goods';
  return parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** The standing answers to the double turn (R9). @type {Record<string, string>} */
export const DOUBLE_TURN_PREFERENCES = { take: 'always takes', decline: 'always passes up' };

/** The standing preferences (M3). @type {Record<import('./proto').PawnPreference, string>} */
export const PREFERENCES = {
  scoring: 'always the scoring pawn',
  messenger: 'always the messenger',
  dark_in_my_turn: 'in their own turn the pawn that reaches a dark space, else the scoring pawn',
};

/** @param {Chip} c */
export const chipWords = (c) => `${GRAPES[c.grape].name} ${c.value}`;

/**
 * The wines a hand holds (P9): per grape, one 2-chip or two 1-chips.
 * @param {Chip[]} hand
 * @returns {Grape[]}
 */
export function wines(hand) {
  /** @type {Grape[]} */
  const out = [];
  for (const g of /** @type {Grape[]} */ (Object.keys(GRAPES))) {
    const vs = hand.filter((c) => c.grape === g).map((c) => c.value);
    if (vs.includes(2) || vs.filter((v) => v === 1).length >= 2) out.push(g);
  }
  return out;
}

/** @param {string} s */
export const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);

/** @param {Pos} p */
export const at = (p) => `${p.x},${p.y}`;

/** @type {Record<string, string>} */
const SIDE = { N: 'north', E: 'east', S: 'south', W: 'west' };

/**
 * `road:E` → "the road to the east".
 * @param {string} target
 */
export function targetWords(target) {
  const [kind, where] = target.split(':');
  if (kind === 'monastery') return 'the monastery';
  if (target === 'field:inner') return 'the enclosed field in the middle';
  if (kind === 'field') {
    const [side, half] = [where.charAt(0), where.charAt(1).toUpperCase()];
    return `the field on the ${SIDE[half]} half of the ${SIDE[side]} side`;
  }
  return `the ${kind} to the ${SIDE[where] ?? where}`;
}

/**
 * @param {Event} e
 * @param {Colour[]} colours seat → colour
 * @param {Event[]} [before] the events of the same diff before `e`
 * @param {Naming} [naming] how squares and tiles are named (default: exactly)
 * @returns {string|null} null for events not worth a line
 */
export function eventWords(e, colours, before = [], naming = EXACT) {
  const at = naming.at;
  const tile = naming.tile;
  /** @param {number} p */
  const who = (p) => cap(colours[p] ?? `player ${p + 1}`);
  /** @param {{player: number, count: number}[]} m */
  const owners = (m) => m.map((x) => who(x.player)).join(' and ');
  /** @param {number[]} w */
  const winners = (w) => w.map(who).join(' and ');
  switch (e.type) {
    case 'game_started':
      return `The game begins with ${e.pile} tiles in the pile.`;
    case 'start_tile_placed':
      return naming === EXACT
        ? `${e.tile} lies on the start square${at(e.pos)}, turned ${e.rotation}°.`
        : `The start tile, ${tile(e.tile)}, lies on the board.`;
    case 'turn_started':
      return null;
    case 'tile_drawn':
      return `${who(e.player)} draws ${tile(e.tile)}.`;
    case 'tile_discarded':
      return `${who(e.player)} discards ${tile(e.tile)}: it fits nowhere.`;
    case 'tile_placed':
      return naming === EXACT
        ? `${who(e.player)} places ${e.tile}${at(e.pos)}, turned ${e.rotation}°.`
        : `${who(e.player)} places the tile.`;
    case 'meeple_placed':
      return `${who(e.player)} puts ${FIGURE_WORDS[e.figure ?? 'meeple']} on ${targetWords(e.target)}${at(e.pos)}.`;
    case 'passed':
      return `${who(e.player)} places no meeple.`;
    case 'feature_scored': {
      // I7–I10: an inn or a cathedral set the rate (more when complete, nothing when not).
      const rate = e.inn ? ' with an inn' : e.cathedral ? ' with a cathedral' : '';
      const what = `${e.complete ? 'completed' : 'unfinished'} ${e.feature}${rate}`;
      if (e.winners.length === 0) return `The ${what}${at(e.pos)} scores for nobody.`;
      return `${owners(e.meeples.filter((m) => e.winners.includes(m.player)))}'s ${what}${at(e.pos)} scores ${e.points}.`;
    }
    case 'field_scored':
      if (e.winners.length === 0 || e.points === 0) return null;
      // R13: a winner with their pig in the field scores 4 a city instead.
      return `${winners(e.winners)}'s field${at(e.pos)} scores ${e.points} for ${e.cities} cities` +
        `${e.pigs?.length ? ` (${winners(e.pigs)} with the pig: ${4 * e.cities})` : ''}.`;
    case 'meeple_returned': {
      const f = e.figure ?? 'meeple';
      const name = f === 'large_meeple' ? 'large meeple' : f;
      return `${who(e.player)}'s ${name} returns from ${targetWords(e.target)}${at(e.pos)}.`;
    }
    case 'tollhouse_placed':
      return `${who(e.player)} builds a tollhouse${at(e.pos)} (toll ${e.value}).`;
    case 'tollhouse_moved':
      return naming === EXACT
        ? `${who(e.player)} moves the tollhouse from ${e.from.x},${e.from.y} to ${e.to.x},${e.to.y} (toll ${e.value}).`
        : `${who(e.player)} moves the tollhouse (toll ${e.value}).`;
    case 'toll_raised': {
      // The road's owners, when the same diff just scored that road: "Blue's road … paid".
      const road = before.findLast(
        (x) => x.type === 'feature_scored' && x.feature === 'road' && x.pos.x === e.road.x && x.pos.y === e.road.y,
      );
      const owners = road && road.type === 'feature_scored' && road.winners.length
        ? `${winners(road.winners)}'s road`
        : 'The road';
      return `${owners}${at(e.road)} paid ${who(e.player)}'s tollhouse ${e.points}${e.final ? ' at the end' : ''}.`;
    }
    case 'tollhouse_turned':
      return `${who(e.player)}'s tollhouse${at(e.pos)} turns from ${e.from} to ${e.to}.`;
    case 'chip_taken':
      return `${who(e.player)} takes ${an(GRAPES[e.chip.grape].name)} chip worth ${e.chip.value}${at(e.pos)}: +${e.points}.`;
    case 'wine_sold': {
      const grape = e.chips[0] ? GRAPES[e.chips[0].grape].name : '';
      const where = e.sale === 'abroad' ? 'abroad' : `to ${e.town ?? 'the town'}`;
      return `${who(e.player)} sells ${an(grape)} wine (${e.chips.map(chipWords).join(' + ')}) ${where}${at(e.pos)}: +${e.points}.`;
    }
    case 'pawn_moved': {
      const pawn = e.pawn === 'scoring' ? 'scoring pawn' : 'messenger';
      const darkSpace = e.to % 5 === 0 ? ', a dark space' : '';
      return `${who(e.player)}'s ${pawn} moves from ${e.from} to ${e.to} for ${REASONS[e.reason]}${darkSpace}.`;
    }
    case 'pawn_preference_set':
      return e.preference
        ? `${who(e.player)} will not be asked which pawn: ${PREFERENCES[e.preference]}.`
        : `${who(e.player)} will be asked which pawn to move.`;
    case 'dispatch_drawn':
      return `${who(e.player)} draws dispatch ${e.dispatch}: ${DISPATCHES[e.dispatch] ?? ''}.`;
    case 'dispatch_resolved': {
      if (!e.action) return `${who(e.player)} takes 2 points instead of dispatch ${e.dispatch}.`;
      const where = e.pos ? at(e.pos) : '';
      return `${who(e.player)} carries out dispatch ${e.dispatch} (${DISPATCHES[e.dispatch] ?? ''})${where}: +${e.points}.`;
    }
    case 'pawns_summed':
      return `${who(e.player)} adds up both pawns: ${e.score}.`;
    case 'game_ended':
      return `Game over. Final scores: ${e.scores.map((s, i) => `${who(i)} ${s}`).join(', ')}.`;
    default:
      return expansionWords(e, who, winners, at);
  }
  return null;
}

/**
 * The lines of Traders & Builders' events (R5–R9, R14).
 * @param {Event} e
 * @param {(p: number) => string} who
 * @param {(w: number[]) => string} winners
 * @param {(p: Pos) => string} at
 * @returns {string|null}
 */
function expansionWords(e, who, winners, at) {
  switch (e.type) {
    case 'goods_taken':
      return `${who(e.player)} takes ${goodsWords(e.goods)} from the completed city${at(e.pos)}.`;
    case 'double_turn_earned':
      return `${who(e.player)}'s builder earns a double turn${at(e.pos)}.`;
    case 'double_turn_started':
      return `${who(e.player)} takes the double turn.`;
    case 'double_turn_preference_set':
      return e.preference
        ? `${who(e.player)} ${DOUBLE_TURN_PREFERENCES[e.preference] ?? 'answers'} the double turn without being asked.`
        : `${who(e.player)} will be asked about each double turn.`;
    case 'goods_majority':
      if (!e.winners.length) return null;
      return `${winners(e.winners)} ${e.winners.length > 1 ? 'have' : 'has'} the most ${GOODS_WORDS[e.goods] ?? e.goods} (${e.tokens}): +${e.points}${e.winners.length > 1 ? ' each' : ''}.`;
  }
  return null;
}

/**
 * A command as its sender meant it, for the admin console's timeline ("places the tile at 1,0,
 * turned 90°"); its events say what came of it.
 * @param {import('./proto').Command} c
 */
export function commandWords(c) {
  switch (c.type) {
    case 'place_tile':
      return `places the tile at ${at(c.pos)}, turned ${c.rotation}°`;
    case 'place_meeple':
      return `puts ${FIGURE_WORDS[c.figure ?? 'meeple']} on ${targetWords(c.target)}`;
    case 'place_tollhouse':
      return `builds a tollhouse at ${at(c.pos)}`;
    case 'pass':
      return 'passes';
    case 'choose_pawn':
      return `moves the ${c.pawn === 'scoring' ? 'scoring pawn' : 'messenger'}`;
    case 'set_pawn_preference':
      return c.preference ? `prefers ${PREFERENCES[c.preference]}` : 'wants to be asked which pawn';
    case 'dispatch_action':
      return c.meeple ? `carries out the dispatch on the meeple at ${at(c.meeple.pos)}` : 'carries out the dispatch';
    case 'dispatch_points':
      return 'takes 2 points instead of the dispatch';
    case 'draw_dispatch':
      return 'draws another dispatch';
    case 'sell_wine':
      return `sells ${c.chips.map(chipWords).join(' + ')} ${c.sale === 'abroad' ? 'abroad' : 'to the town'}`;
  }
  const x = /** @type {any} */ (c);
  if (x.type === 'take_double_turn') return 'takes the double turn';
  if (x.type === 'set_double_turn_preference') {
    return x.preference ? `${DOUBLE_TURN_PREFERENCES[x.preference] ?? 'answers'} the double turn unasked` : 'wants to be asked about the double turn';
  }
  return 'sends a command';
}
