// RFC 6902 JSON Patch on plain JSON values, with RFC 6901 pointers: the server sends each seq's
// change of the public view as such a patch (proto/README.md, "Sequence numbers and diffs").

/** @typedef {import('./proto').PatchOp} PatchOp */

/**
 * The path's tokens, unescaped (`~1` is `/`, `~0` is `~`).
 * @param {string} path
 * @returns {string[]}
 */
export function tokens(path) {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new Error(`bad JSON pointer ${path}`);
  return path.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * @param {any} doc
 * @param {string[]} toks
 * @returns {any}
 */
function get(doc, toks) {
  let cur = doc;
  for (const t of toks) {
    if (cur === null || typeof cur !== 'object' || !(t in cur)) throw new Error(`no ${t} in document`);
    cur = cur[t];
  }
  return cur;
}

/**
 * @param {any} a
 * @param {any} b
 * @returns {boolean}
 */
function equal(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Applies `patch` to a deep copy of `doc` and returns it; throws (leaving `doc` as it was) when an
 * op does not apply, which means the client's copy is not the view the patch was made from.
 * @template T
 * @param {T} doc
 * @param {PatchOp[]} patch
 * @returns {T}
 */
export function applyPatch(doc, patch) {
  /** @type {{root: any}} */
  const box = { root: structuredClone(doc) };
  for (const op of patch) {
    const toks = ['root', ...tokens(op.path)];
    const key = /** @type {string} */ (toks.pop());
    const parent = get(box, toks);
    /** @param {any} value */
    const put = (value) => {
      if (Array.isArray(parent)) {
        const i = key === '-' ? parent.length : Number(key);
        if (!(i >= 0 && i <= parent.length)) throw new Error(`index ${key} out of range`);
        parent.splice(i, 0, value);
      } else {
        parent[key] = value;
      }
    };
    const take = () => {
      if (!(key in parent)) throw new Error(`nothing at ${op.path}`);
      const v = parent[key];
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
      return v;
    };
    switch (op.op) {
      case 'add':
        put(structuredClone(op.value));
        break;
      case 'remove':
        take();
        break;
      case 'replace':
        take();
        put(structuredClone(op.value));
        break;
      case 'move':
      case 'copy': {
        const from = ['root', ...tokens(op.from)];
        const fkey = /** @type {string} */ (from.pop());
        const fparent = get(box, from);
        const v = structuredClone(fparent[fkey]);
        if (op.op === 'move') {
          if (Array.isArray(fparent)) fparent.splice(Number(fkey), 1);
          else delete fparent[fkey];
        }
        put(v);
        break;
      }
      case 'test':
        if (!equal(parent[key], op.value)) throw new Error(`test failed at ${op.path}`);
        break;
      default:
        throw new Error('unknown patch op');
    }
  }
  return box.root;
}
