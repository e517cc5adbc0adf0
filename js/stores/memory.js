// @ts-check
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
import { checkPathString, fromBytes, toBytes } from './shared.js';

/** @type {typeof import('../index.d.ts').memoryStore} */
export function memoryStore(files = {}, { readOnly = false } = {}) {
  if (files === null || typeof files !== 'object') {
    throw new TypeError('memoryStore: files must be an object mapping paths to contents');
  }
  const entries = new Map();
  const dirs = new Set();
  for (const [path, value] of Object.entries(files)) {
    checkPathString('memoryStore', path);
    entries.set(path, toBytes('memoryStore', path, value));
  }
  return {
    kind: 'memory',
    readOnly: Boolean(readOnly),
    /** The file's text (a Uint8Array when it is not UTF-8), or undefined when it does not exist. */
    async read(path) {
      checkPathString('store.read', path);
      const bytes = entries.get(path);
      if (bytes === undefined) return undefined;
      const value = fromBytes(bytes);
      // The store keeps its bytes: a caller gets a copy of its own.
      return typeof value === 'string' ? value : value.slice();
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
        if (change.op === 'write') entries.set(change.path, toBytes('memoryStore', change.path, change.data));
        else if (change.op === 'mkdir') dirs.add(change.path);
        else if (change.op === 'delete') {
          entries.delete(change.path);
          dirs.delete(change.path);
        } else {
          throw new TypeError(`memoryStore.commit: unknown change ${JSON.stringify(/** @type {any} */ (change).op)}`);
        }
      }
    },
  };
}
