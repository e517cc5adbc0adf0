// @ts-check
// indexedDbStore: the store bridge (docs/store.md) kept in the browser's IndexedDB, so a run's files
// survive reloads and browser restarts. One database per store name (`runvil-store:<name>`) with
// two object stores keyed by path: `files` (the bytes of each file) and `dirs` (directories kept
// without files).
//
// - A batch of changes is one readwrite transaction with strict durability; commit() resolves on
//   the transaction's `complete`, so every batch is on disk before engine.run resolves. A
//   transaction is all or nothing: a page closed mid-run leaves a prefix of the run's batches, and
//   a file is always one whole value, never torn.
// - A run holds the Web Lock `runvil-store:<name>` from open() to the end of the run (the engine
//   calls end() with the run's context), so two tabs, two workers or two runs in one page using one
//   store take turns instead of interleaving their batches.
// - Storage failures (quota, a connection the browser closed, an aborted transaction) reject with
//   an Error naming the store and the cause; the engine reports it as a `Vfs` error.
import { plural } from '../core/values.js';
import { storedZip } from './zip.js';
import { checkHostPath, checkPathString, fromBytes, toBytes, trackBatch } from './shared.js';

const FILES = 'files';
const DIRS = 'dirs';
const DB_VERSION = 1;

/** Rows sorted by path, in code-unit order (the same on every host). */
const byPath = (a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** The IndexedDB database (and Web Lock) name of the store called `name`. */
export function indexedDbStoreDatabaseName(name) {
  return `runvil-store:${name}`;
}

/** What went wrong with an IndexedDB request or transaction, in words a person can act on. */
function storageFailure(storeName, action, error) {
  const name = error?.name ?? 'Error';
  const detail = error?.message ? `${name}: ${error.message}` : name;
  if (name === 'QuotaExceededError') {
    return new Error(
      `IndexedDB store '${storeName}': ${action} failed: the browser's storage quota for this site is used up (${detail}); delete files or free site storage and run again`,
    );
  }
  if (name === 'InvalidStateError' || name === 'TransactionInactiveError') {
    return new Error(
      `IndexedDB store '${storeName}': ${action} failed: the database connection was closed (${detail}); the browser may be clearing site data`,
    );
  }
  return new Error(`IndexedDB store '${storeName}': ${action} failed (${detail})`);
}

function requestResult(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/**
 * Resolves when `tx` commits; rejects with its error (or an AbortError) when it aborts.
 * @param {IDBTransaction} tx
 * @returns {Promise<void>}
 */
function transactionDone(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error ?? new DOMException('the transaction was aborted', 'AbortError'));
    // A failed request's error event bubbles here and then aborts the transaction; onabort reports it.
  });
}

/** Opens (creating on first use) the database behind a store. */
function openDatabase(idb, storeName) {
  return new Promise((resolve, reject) => {
    let request;
    try {
      request = idb.open(indexedDbStoreDatabaseName(storeName), DB_VERSION);
    } catch (error) {
      reject(storageFailure(storeName, 'opening the database', error));
      return;
    }
    request.onupgradeneeded = () => {
      const db = request.result;
      if (!db.objectStoreNames.contains(FILES)) db.createObjectStore(FILES);
      if (!db.objectStoreNames.contains(DIRS)) db.createObjectStore(DIRS);
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(storageFailure(storeName, 'opening the database', request.error));
    request.onblocked = () =>
      reject(
        new Error(
          `IndexedDB store '${storeName}': opening the database is blocked by another tab holding an older version open; close it and retry`,
        ),
      );
  });
}

/**
 * A lock manager for the runs of one store: the Web Locks API where the platform has it (across
 * tabs and workers of the origin), else a queue within this page only.
 */
function lockManager(lockName) {
  const locks = globalThis.navigator?.locks;
  if (locks && typeof locks.request === 'function') {
    return {
      shared: true,
      /** Resolves with a release function once the lock is held; `signal` gives up waiting. */
      acquire(signal) {
        return new Promise((resolve, reject) => {
          locks
            .request(lockName, { mode: 'exclusive', signal }, () => new Promise((release) => resolve(release)))
            .catch(reject);
        });
      },
    };
  }
  let tail = Promise.resolve();
  return {
    shared: false,
    acquire(signal) {
      return new Promise((resolve, reject) => {
        const previous = tail;
        let release;
        const held = new Promise((r) => {
          release = r;
        });
        tail = previous.then(() => held);
        previous.then(() => (signal?.aborted ? release() : resolve(release)));
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    },
  };
}

/**
 * `name`: the store's name, one IndexedDB database per name, shared by every tab.
 * `options.durability`: what each batch's transaction asks for; 'strict' (the default) flushes to
 * disk before the batch counts as done.
 * @type {typeof import('../index.d.ts').indexedDbStore}
 */
export async function indexedDbStore(
  name,
  { indexedDB: idb = globalThis.indexedDB, readOnly = false, durability = 'strict' } = {},
) {
  if (typeof name !== 'string' || name === '') throw new TypeError('indexedDbStore: name must be a non-empty string');
  if (!idb || typeof idb.open !== 'function') {
    throw new TypeError('indexedDbStore: this platform has no IndexedDB (pass options.indexedDB, or use memoryStore)');
  }
  let db = await openDatabase(idb, name);
  let closed = false;
  const watch = (connection) => {
    // Another tab deleting or upgrading the database: step aside; the next call reopens.
    connection.onversionchange = () => {
      connection.close();
      if (db === connection) db = null;
    };
    connection.onclose = () => {
      if (db === connection) db = null;
    };
  };
  watch(db);
  async function connection() {
    if (closed) throw new Error(`IndexedDB store '${name}' was closed by the host`);
    if (!db) {
      db = await openDatabase(idb, name);
      watch(db);
    }
    return db;
  }

  /** Runs `body(tx)` in one transaction over both object stores and resolves with its result once committed. */
  async function transact(mode, action, body) {
    const conn = await connection();
    let tx;
    try {
      // Strict durability: the batch is flushed to disk before `complete` (Chromium defaults to relaxed).
      tx = conn.transaction([FILES, DIRS], mode, mode === 'readwrite' ? { durability } : undefined);
    } catch (error) {
      throw storageFailure(name, action, error);
    }
    const done = transactionDone(tx);
    let result;
    try {
      result = body(tx.objectStore(FILES), tx.objectStore(DIRS));
    } catch (error) {
      try {
        tx.abort();
      } catch {
        /* already finished */
      }
      done.catch(() => {});
      throw storageFailure(name, action, error);
    }
    try {
      await done;
    } catch (error) {
      throw storageFailure(name, action, error);
    }
    return typeof result === 'function' ? result() : result;
  }

  const locks = lockManager(indexedDbStoreDatabaseName(name));
  /** Per-run state, keyed by the context object the engine passes to every call of one run. */
  const runs = new WeakMap();

  function checkWritable(what) {
    if (readOnly) throw new Error(`IndexedDB store '${name}' is read-only: ${what} is refused`);
  }

  /** Applies host changes under the store's lock, so they never interleave with a run's batches. */
  async function hostChange(action, changes) {
    checkWritable(action);
    const release = await locks.acquire();
    try {
      await applyBatch(action, changes);
    } finally {
      release();
    }
  }

  function applyBatch(action, changes) {
    return transact('readwrite', action, (files, dirs) => {
      for (const change of changes) {
        if (change.op === 'write') {
          files.put(change.data, change.path);
        } else if (change.op === 'mkdir') {
          dirs.put(true, change.path);
        } else if (change.op === 'delete') {
          files.delete(change.path);
          dirs.delete(change.path);
        } else {
          throw new TypeError(`unknown change ${JSON.stringify(change.op)}`);
        }
      }
    });
  }

  /** A file's bytes (a Uint8Array of their own), or undefined when it does not exist. */
  async function readFileBytes(path) {
    const bytes = await transact('readonly', `reading '${path}'`, (files) => {
      const request = files.get(path);
      return () => request.result;
    });
    return bytes === undefined ? undefined : new Uint8Array(bytes);
  }

  async function listFiles() {
    const keys = await transact('readonly', 'listing the files', (files) => {
      const request = files.getAllKeys();
      return () => request.result;
    });
    return keys.map(String).sort();
  }

  /** @type {import('../index.d.ts').IndexedDbStore} */
  const store = {
    kind: 'indexeddb',
    name,
    readOnly: Boolean(readOnly),
    /** Whether runs of this store are serialized across tabs (Web Locks) or only within this page. */
    locksAcrossTabs: locks.shared,

    // ---- the bridge (called by the engine) ----

    /** Takes the store's lock for the run (`run` is the engine's per-run context), then lists it. */
    async open(run) {
      if (run && typeof run === 'object') {
        const state = { abort: new AbortController(), release: null, ended: false, pending: new Set() };
        runs.set(run, state);
        const release = await locks.acquire(state.abort.signal);
        if (state.ended) release();
        else state.release = release;
      }
      return transact('readonly', 'opening the store', (files, dirs) => {
        const fileKeys = files.getAllKeys();
        const dirKeys = dirs.getAllKeys();
        return () => ({
          files: fileKeys.result.map((path) => ({ path: String(path) })),
          dirs: dirKeys.result.map(String),
          readOnly: Boolean(readOnly),
        });
      });
    },

    /** The file's text (a Uint8Array when it is not UTF-8), or undefined when it does not exist. */
    async read(path) {
      checkPathString('store.read', path);
      const bytes = await readFileBytes(path);
      return bytes === undefined ? undefined : fromBytes(bytes);
    },

    /** One batch: one strict-durability transaction, applied in order, resolved once on disk. */
    async commit(changes, run) {
      if (!Array.isArray(changes)) throw new TypeError('store.commit: changes must be an array');
      checkWritable('a commit');
      const state = run && runs.get(run);
      const pending = applyBatch(`committing a batch of ${plural(changes.length, 'change')}`, changes);
      if (!state) return pending;
      return trackBatch(state.pending, pending);
    },

    /** The run is over (called by the engine, whatever the outcome): release its lock. */
    async end(run) {
      const state = run && runs.get(run);
      if (!state || state.ended) return;
      state.ended = true;
      runs.delete(run);
      if (!state.release) {
        state.abort.abort(new Error(`IndexedDB store '${name}': the run ended while waiting for the store`));
        return;
      }
      await Promise.all(state.pending);
      state.release();
    },

    // ---- the host API ----

    /** Every file path, sorted (code-unit order). */
    list: listFiles,

    /** Every file with its size in bytes, sorted by path. */
    async entries() {
      const rows = await transact('readonly', 'listing the files', (files) => {
        const keys = files.getAllKeys();
        const values = files.getAll();
        return () => keys.result.map((path, i) => ({ path: String(path), size: values.result[i].byteLength }));
      });
      return rows.sort(byPath);
    },

    /** The file's bytes, or undefined. */
    readBytes: readFileBytes,

    /** Deletes files (and kept directories) by path, in one transaction. */
    async delete(...paths) {
      for (const path of paths) checkHostPath('store.delete', path);
      await hostChange(
        'deleting files',
        paths.map((path) => ({ op: 'delete', path })),
      );
    },

    /** Deletes every file and directory. */
    async clear() {
      checkWritable('clear');
      const release = await locks.acquire();
      try {
        await transact('readwrite', 'clearing the store', (files, dirs) => {
          files.clear();
          dirs.clear();
        });
      } finally {
        release();
      }
    },

    /**
     * Adds or replaces files in one transaction: an object mapping paths to contents, or an array of
     * `{ path, data }` or of `File`s (a File's path is its webkitRelativePath, else its name).
     */
    async import(files) {
      const list = [];
      if (Array.isArray(files)) {
        for (const item of files) {
          if (typeof Blob === 'function' && item instanceof Blob) {
            const file = /** @type {File} */ (item); // a Blob that is not a File has no path: refused below
            const path = file.webkitRelativePath || file.name;
            checkHostPath('store.import', path);
            list.push({ op: 'write', path, data: new Uint8Array(await item.arrayBuffer()) });
          } else {
            const { path, data } = /** @type {{ path?: unknown, data?: unknown }} */ (item ?? {});
            checkHostPath('store.import', path);
            list.push({ op: 'write', path, data: toBytes('store.import', path, data) });
          }
        }
      } else if (files && typeof files === 'object') {
        for (const [path, data] of Object.entries(files)) {
          checkHostPath('store.import', path);
          list.push({ op: 'write', path, data: toBytes('store.import', path, data) });
        }
      } else {
        throw new TypeError(
          'store.import: files must be an object mapping paths to contents or an array of { path, data } or File',
        );
      }
      await hostChange(`importing ${plural(list.length, 'file')}`, list);
    },

    /** The store's files (or the given ones) as a zip file (stored entries, UTF-8 names). */
    async zip(paths) {
      const rows = await transact('readonly', 'reading the files', (files) => {
        const keys = files.getAllKeys();
        const values = files.getAll();
        return () => keys.result.map((path, i) => ({ path: String(path), data: new Uint8Array(values.result[i]) }));
      });
      const wanted = paths ? new Set(paths) : null;
      const chosen = rows.filter((row) => !wanted || wanted.has(row.path)).sort(byPath);
      return storedZip(chosen);
    },

    /** Closes the connection; the store cannot be used afterwards. */
    close() {
      closed = true;
      db?.close();
      db = null;
    },
  };
  return store;
}

/**
 * Deletes the database behind the store called `name` (every file in it).
 * @type {typeof import('../index.d.ts').deleteIndexedDbStore}
 */
export function deleteIndexedDbStore(name, { indexedDB: idb = globalThis.indexedDB } = {}) {
  return new Promise((resolve, reject) => {
    const request = /** @type {IDBOpenDBRequest} */ (idb.deleteDatabase(indexedDbStoreDatabaseName(name)));
    request.onsuccess = () => resolve();
    request.onerror = () => reject(storageFailure(name, 'deleting the database', request.error));
    request.onblocked = () => {
      /* resolves once the other connections close (they step aside on versionchange) */
    };
  });
}
