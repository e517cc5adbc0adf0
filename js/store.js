// memoryStore: an in-memory file store for hosts.
//
// NOTE: the engine does not talk to stores yet (the store bridge is still to come, see
// docs/packaging.md). Until then this object is only what hosts read and list; engine.run
// accepts it and ignores it.

function checkPath(path, what) {
  if (typeof path !== 'string' || path === '') {
    throw new TypeError(`${what}: a store path must be a non-empty string`);
  }
}

function toContent(path, value) {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return value.slice();
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  throw new TypeError(`memoryStore: the content of '${path}' must be a string, Uint8Array or ArrayBuffer`);
}

/**
 * @param {Record<string, string | Uint8Array | ArrayBuffer>} [files]
 * @param {{ readOnly?: boolean }} [options]
 */
export function memoryStore(files = {}, { readOnly = false } = {}) {
  if (files === null || typeof files !== 'object') {
    throw new TypeError('memoryStore: files must be an object mapping paths to contents');
  }
  const entries = new Map();
  for (const [path, value] of Object.entries(files)) {
    checkPath(path, 'memoryStore');
    entries.set(path, toContent(path, value));
  }
  return {
    kind: 'memory',
    readOnly: Boolean(readOnly),
    /** The file's text, or undefined when it does not exist. Binary content is decoded as UTF-8. */
    async read(path) {
      checkPath(path, 'store.read');
      const value = entries.get(path);
      if (value === undefined || typeof value === 'string') return value;
      return new TextDecoder().decode(value);
    },
    /** Every file path, sorted (code-unit order, the same on every host). */
    async list() {
      return [...entries.keys()].sort();
    },
    // Used by the engine's store bridge once it exists; hosts normally do not call it.
    async write(path, contents) {
      checkPath(path, 'store.write');
      if (this.readOnly) throw new Error(`store is read-only: cannot write '${path}'`);
      entries.set(path, toContent(path, contents));
    },
  };
}
