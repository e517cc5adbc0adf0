// Stores: the bridge a host implements so the engine can keep a run's files in its backend, and
// memoryStore, the in-memory implementation. The interface (docs/store.md):
//
//   open()          -> { files: [{ path, data? }], dirs?: [path], readOnly?: boolean }
//                      the listing, read once when a run starts; `data` (string or Uint8Array) may
//                      be given up front, else the engine asks read() on first use
//   read(path)      -> string | Uint8Array | undefined
//   commit(changes) -> void; changes in the run's order, apply them in order (ideally atomically):
//                      { op: 'write', path, data: Uint8Array } | { op: 'mkdir', path } | { op: 'delete', path }
//   list()          -> sorted file paths (for hosts)
//
// Text files read back as strings; a file whose bytes are not UTF-8 reads back as a Uint8Array,
// so nothing is lost.

const utf8 = new TextDecoder('utf-8', { fatal: true });

function checkPath(path, what) {
  if (typeof path !== 'string' || path === '') {
    throw new TypeError(`${what}: a store path must be a non-empty string`);
  }
}

function toBytes(path, value) {
  if (typeof value === 'string') return new TextEncoder().encode(value);
  if (value instanceof Uint8Array) return value.slice();
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  throw new TypeError(`memoryStore: the content of '${path}' must be a string, Uint8Array or ArrayBuffer`);
}

function fromBytes(bytes) {
  try {
    return utf8.decode(bytes);
  } catch {
    return bytes.slice();
  }
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
  const dirs = new Set();
  for (const [path, value] of Object.entries(files)) {
    checkPath(path, 'memoryStore');
    entries.set(path, toBytes(path, value));
  }
  return {
    kind: 'memory',
    readOnly: Boolean(readOnly),
    /** The file's text (a Uint8Array when it is not UTF-8), or undefined when it does not exist. */
    async read(path) {
      checkPath(path, 'store.read');
      const bytes = entries.get(path);
      return bytes === undefined ? undefined : fromBytes(bytes);
    },
    /** Every file path, sorted (code-unit order, the same on every host). */
    async list() {
      return [...entries.keys()].sort();
    },
    async open() {
      return {
        files: [...entries].map(([path, data]) => ({ path, data: data.slice() })),
        dirs: [...dirs],
        readOnly: this.readOnly,
      };
    },
    async commit(changes) {
      for (const change of changes) {
        if (change.op === 'write') entries.set(change.path, toBytes(change.path, change.data));
        else if (change.op === 'mkdir') dirs.add(change.path);
        else if (change.op === 'delete') {
          entries.delete(change.path);
          dirs.delete(change.path);
        } else throw new TypeError(`memoryStore.commit: unknown change ${JSON.stringify(change.op)}`);
      }
    },
  };
}
