// @ts-check
// RunvilStoreObject: the Durable Object behind durableObjectStore (durable.js). One object
// per workspace; its transactional key-value storage holds the workspace's files (layout in
// durable-layout.js, decisions in docs/store.md):
//
// - A file is a metadata entry `f:<path>` → { v, size, n } and n chunks `c:<v>:<i>` of at most
//   CHUNK_BYTES. A new version of a file gets a new id v, so its chunks never overwrite the chunks
//   the metadata points at: the metadata switch, in one transaction, is what makes the new
//   contents visible, and a file is never torn.
// - A batch is applied in one storage transaction: the metadata of every change, the chunks of the
//   writes small enough to travel inline, the deletion of the chunks the batch replaced. Bigger
//   writes are staged first (their chunks written under their new, still unreferenced version, in
//   transactions of at most TRANSACTION_BYTES, and recorded in `m:staged`), so a batch of any size
//   becomes visible at once, or not at all. Staged chunks no batch adopted (a run that died) are
//   deleted when the next run takes the workspace.
// - Runs take turns: begin() hands out a session (an RpcTarget) once the workspace's lease is free;
//   the lease is held until the session ends or is disposed — by the Worker when the run ends, or
//   by the runtime when the Worker's request goes away.
// - Listing reads metadata only; a file's contents are read when the run first reads it, in RPC
//   messages of at most TRANSACTION_BYTES.
import { DurableObject, RpcTarget } from 'cloudflare:workers';
import {
  CHUNK_BYTES,
  CHUNK_PREFIX,
  DIR_PREFIX,
  FILE_PREFIX,
  INLINE_BYTES,
  KEYS_PER_CALL,
  LIST_PAGE,
  STAGED_KEY,
  TRANSACTION_BYTES,
  VERSION_PATTERN,
  chunkCount,
  chunkKey,
  chunkOf,
  concatBytes,
  groups,
} from './durable-layout.js';
import { isRelativePath } from './shared.js';

const encoder = new TextEncoder();
const DELETE = Symbol('delete');

/** A store path as the engine hands them out (chapter 004: at most 1,024 bytes, relative, no . or ..). */
function checkPath(path) {
  if (!isRelativePath(path) || encoder.encode(path).byteLength > 1024) {
    throw new TypeError(`RunvilStoreObject: not a store path: ${JSON.stringify(path)}`);
  }
}

/** Reads many keys, KEYS_PER_CALL at a time; resolves with a Map of those present. */
async function getMany(storage, keys) {
  const found = new Map();
  for (const group of groups(keys, KEYS_PER_CALL)) {
    for (const [key, value] of await storage.get(group)) found.set(key, value);
  }
  return found;
}

/** Applies a key → value-or-DELETE map, KEYS_PER_CALL keys per call. */
async function writeMany(storage, writes) {
  const deletes = [];
  const puts = [];
  for (const [key, value] of writes) (value === DELETE ? deletes : puts).push([key, value]);
  for (const group of groups(deletes, KEYS_PER_CALL)) await storage.delete(group.map(([key]) => key));
  for (const group of groups(puts, KEYS_PER_CALL)) await storage.put(Object.fromEntries(group));
}

/** Lists every entry under `prefix`, a page at a time. */
async function* listAll(storage, prefix, page = LIST_PAGE) {
  let startAfter;
  for (;;) {
    const entries = await storage.list({ prefix, limit: page, ...(startAfter === undefined ? {} : { startAfter }) });
    for (const entry of entries) yield entry;
    if (entries.size < page) return;
    startAfter = [...entries.keys()].at(-1);
  }
}

/** The workspace's lease: one session holds it, the others wait in arrival order. */
class Lease {
  holder = null;
  waiting = [];

  acquire(session) {
    if (!this.holder) {
      this.holder = session;
      return Promise.resolve();
    }
    return new Promise((grant) => this.waiting.push({ session, grant }));
  }

  release(session) {
    if (this.holder !== session) {
      this.waiting = this.waiting.filter((w) => w.session !== session);
      return;
    }
    const next = this.waiting.shift();
    this.holder = next?.session ?? null;
    next?.grant();
  }
}

/** The files of one workspace in one object's storage. */
class Workspace {
  constructor(storage) {
    this.storage = storage;
    this.lease = new Lease();
  }

  async listing() {
    const files = [];
    const dirs = [];
    for await (const [key] of listAll(this.storage, FILE_PREFIX)) files.push(key.slice(FILE_PREFIX.length));
    for await (const [key] of listAll(this.storage, DIR_PREFIX)) dirs.push(key.slice(DIR_PREFIX.length));
    return { files, dirs };
  }

  /**
   * Up to TRANSACTION_BYTES of a file from chunk `from` on, or null when the file does not exist
   * (or, with `version`, is no longer that version). Only storage is awaited, so the object's input
   * gate keeps other calls out between reading the metadata and the chunks.
   */
  async read(path, version, from = 0) {
    checkPath(path);
    const meta = await this.storage.get(FILE_PREFIX + path);
    if (!meta || (version !== undefined && meta.v !== version)) return null;
    const count = Math.min(meta.n - from, Math.floor(TRANSACTION_BYTES / CHUNK_BYTES));
    const keys = Array.from({ length: Math.max(0, count) }, (_, i) => chunkKey(meta.v, from + i));
    const chunks = await getMany(this.storage, keys);
    const parts = keys.map((key, i) => {
      const chunk = chunks.get(key);
      if (!(chunk instanceof Uint8Array)) {
        throw new Error(`RunvilStoreObject: '${path}' is damaged: chunk ${from + i} of ${meta.n} is missing`);
      }
      return chunk;
    });
    return { v: meta.v, size: meta.size, n: meta.n, from, data: concatBytes(parts) };
  }

  /** Writes chunks of versions no metadata points at yet, recording them in `m:staged`. */
  async stage(session, parts) {
    if (!Array.isArray(parts)) throw new TypeError('RunvilStoreObject: stage() takes an array of chunks');
    let bytes = 0;
    for (const part of parts) {
      if (
        !VERSION_PATTERN.test(part?.v) ||
        !Number.isSafeInteger(part.index) ||
        part.index < 0 ||
        !(part.data instanceof Uint8Array) ||
        part.data.byteLength > CHUNK_BYTES
      ) {
        throw new TypeError(
          'RunvilStoreObject: a staged chunk needs a version id, an index and at most CHUNK_BYTES of bytes',
        );
      }
      bytes += part.data.byteLength;
    }
    if (bytes > TRANSACTION_BYTES) {
      throw new RangeError(`RunvilStoreObject: one stage() carries at most ${TRANSACTION_BYTES} bytes`);
    }
    await this.storage.transaction(async (txn) => {
      const record = (await txn.get(STAGED_KEY)) ?? {};
      const writes = new Map();
      for (const part of parts) {
        record[part.v] = Math.max(record[part.v] ?? 0, part.index + 1);
        session.staged.add(part.v);
        writes.set(
          chunkKey(part.v, part.index),
          part.data.byteLength === part.data.buffer.byteLength ? part.data : part.data.slice(),
        );
      }
      writes.set(STAGED_KEY, record);
      await writeMany(txn, writes);
    });
  }

  /** Applies one batch, in order, in one transaction (see the top of this file). */
  async apply(session, changes) {
    if (!Array.isArray(changes)) throw new TypeError('RunvilStoreObject: apply() takes an array of changes');
    let inline = 0;
    for (const change of changes) {
      checkPath(change?.path);
      if (change.op === 'write') {
        if (change.data instanceof Uint8Array) {
          inline += change.data.byteLength;
        } else if (!(
          VERSION_PATTERN.test(change.v) &&
          session.staged.has(change.v) &&
          Number.isSafeInteger(change.size) &&
          change.n === chunkCount(change.size)
        )) {
          throw new TypeError(`RunvilStoreObject: the write of '${change.path}' names no contents this session staged`);
        }
      } else if (change.op !== 'mkdir' && change.op !== 'delete') {
        throw new TypeError(`RunvilStoreObject: unknown change ${JSON.stringify(change.op)}`);
      }
    }
    if (inline > INLINE_BYTES) {
      throw new RangeError(
        `RunvilStoreObject: one apply() carries at most ${INLINE_BYTES} bytes inline; stage bigger writes first`,
      );
    }

    await this.storage.transaction(async (txn) => {
      const record = (await txn.get(STAGED_KEY)) ?? {};
      const touched = [...new Set(changes.filter((c) => c.op !== 'mkdir').map((c) => c.path))];
      const metas = await getMany(
        txn,
        touched.map((path) => FILE_PREFIX + path),
      );
      const current = new Map(touched.map((path) => [path, metas.get(FILE_PREFIX + path)]));
      const writes = new Map();
      const dropChunks = (meta) => {
        for (let i = 0; i < (meta?.n ?? 0); i++) writes.set(chunkKey(meta.v, i), DELETE);
      };
      for (const change of changes) {
        if (change.op === 'write') {
          let meta;
          if (change.data instanceof Uint8Array) {
            meta = { v: crypto.randomUUID(), size: change.data.byteLength, n: chunkCount(change.data.byteLength) };
            for (let i = 0; i < meta.n; i++) writes.set(chunkKey(meta.v, i), chunkOf(change.data, i));
          } else {
            if (record[change.v] !== change.n) {
              throw new Error(
                `RunvilStoreObject: the staged contents of '${change.path}' are incomplete (${record[change.v] ?? 0} of ${change.n} chunks)`,
              );
            }
            meta = { v: change.v, size: change.size, n: change.n };
            delete record[change.v];
          }
          dropChunks(current.get(change.path));
          current.set(change.path, meta);
          writes.set(FILE_PREFIX + change.path, meta);
        } else if (change.op === 'mkdir') {
          writes.set(DIR_PREFIX + change.path, 1);
        } else {
          dropChunks(current.get(change.path));
          current.set(change.path, undefined);
          writes.set(FILE_PREFIX + change.path, DELETE);
          writes.set(DIR_PREFIX + change.path, DELETE);
        }
      }
      writes.set(STAGED_KEY, Object.keys(record).length ? record : DELETE);
      await writeMany(txn, writes);
    });
    for (const change of changes) if (change.v) session.staged.delete(change.v);
  }

  /** Deletes chunks staged by a session that ended without a batch adopting them. */
  async sweepStaged() {
    const record = await this.storage.get(STAGED_KEY);
    if (!record) return;
    await this.storage.transaction(async (txn) => {
      const writes = new Map([[STAGED_KEY, DELETE]]);
      for (const [version, count] of Object.entries(record)) {
        for (let i = 0; i < count; i++) writes.set(chunkKey(version, i), DELETE);
      }
      await writeMany(txn, writes);
    });
  }

  /**
   * Checks the workspace's invariants (reads every chunk: a diagnostic, not for hot paths): each
   * file's chunks are all there and add up to its size; no chunk is unreferenced.
   */
  async verify() {
    const metas = new Map();
    for await (const [key, meta] of listAll(this.storage, FILE_PREFIX)) metas.set(key.slice(FILE_PREFIX.length), meta);
    let dirs = 0;
    for await (const _ of listAll(this.storage, DIR_PREFIX)) dirs++;
    const staged = (await this.storage.get(STAGED_KEY)) ?? {};
    const sizes = new Map();
    for await (const [key, value] of listAll(this.storage, CHUNK_PREFIX, 32)) sizes.set(key, value.byteLength);
    const problems = [];
    const referenced = new Set();
    for (const [path, { v, size, n }] of metas) {
      let total = 0;
      for (let i = 0; i < n; i++) {
        const key = chunkKey(v, i);
        referenced.add(key);
        if (!sizes.has(key)) problems.push(`${path}: chunk ${i} of ${n} is missing`);
        total += sizes.get(key) ?? 0;
      }
      if (total !== size) problems.push(`${path}: its chunks hold ${total} bytes, its metadata says ${size}`);
    }
    for (const [version, count] of Object.entries(staged)) {
      for (let i = 0; i < count; i++) referenced.add(chunkKey(version, i));
    }
    const orphans = [...sizes.keys()].filter((key) => !referenced.has(key)).length;
    if (orphans) problems.push(`${orphans} chunk${orphans === 1 ? ' is' : 's are'} referenced by no file`);
    return {
      files: metas.size,
      dirs,
      chunks: sizes.size,
      stagedVersions: Object.keys(staged).length,
      largestChunk: Math.max(0, ...sizes.values()),
      problems,
    };
  }
}

/** One run's (or one host change's) hold on the workspace, handed to the Worker over RPC. */
class StoreSession extends RpcTarget {
  #workspace;
  #open = true;

  constructor(workspace) {
    super();
    this.#workspace = workspace;
    /** Versions this session staged and no batch has adopted yet. */
    this.staged = new Set();
  }

  #holder() {
    if (!this.#open || this.#workspace.lease.holder !== this) {
      throw new Error('this session no longer holds the workspace (it ended, or the Durable Object was restarted)');
    }
    return this.#workspace;
  }

  list() {
    return this.#holder().listing();
  }

  read(path, version, from) {
    return this.#holder().read(path, version, from);
  }

  stage(parts) {
    return this.#holder().stage(this, parts);
  }

  apply(changes) {
    return this.#holder().apply(this, changes);
  }

  /** Gives the workspace to the next waiting run. Chunks staged and not adopted are swept by it. */
  end() {
    if (!this.#open) return;
    this.#open = false;
    this.#workspace.lease.release(this);
  }

  [Symbol.dispose]() {
    this.end();
  }
}

/**
 * Export this class from your Worker and bind a Durable Object namespace to it (wrangler.toml:
 * `[[durable_objects.bindings]]` plus a `new_sqlite_classes` migration); `durableObjectStore(env.X,
 * workspace)` then keeps each workspace in its own object.
 *
 * `options.storage` (for subclasses): the storage to use instead of `ctx.storage`, e.g. a wrapper
 * that measures or checks the calls. It needs get, put, delete, list and transaction.
 */
export class RunvilStoreObject extends DurableObject {
  #workspace;

  constructor(ctx, env, options = {}) {
    super(ctx, env);
    this.#workspace = new Workspace(options.storage ?? ctx.storage);
  }

  /** Waits for the workspace's lease and answers a session holding it. */
  async begin() {
    const workspace = this.#workspace;
    const session = new StoreSession(workspace);
    await workspace.lease.acquire(session);
    try {
      await workspace.sweepStaged();
    } catch (error) {
      session.end();
      throw error;
    }
    return session;
  }

  /** File paths and kept directories (no lease: the object's input gate makes it one snapshot). */
  list() {
    return this.#workspace.listing();
  }

  /** Part of a file (see Workspace.read), without the lease. */
  read(path, version, from) {
    return this.#workspace.read(path, version, from);
  }

  /** Whether a session holds the workspace, and how many wait for it. */
  leaseState() {
    const { lease } = this.#workspace;
    return { held: lease.holder !== null, waiting: lease.waiting.length };
  }

  /** Checks the workspace's storage invariants (reads everything; for diagnostics and tests). */
  verify() {
    return this.#workspace.verify();
  }
}
