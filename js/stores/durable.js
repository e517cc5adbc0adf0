// @ts-check
// durableObjectStore(namespace, workspace): the store bridge (docs/store.md) kept in a Durable
// Object, one object per workspace (RunvilStoreObject, durable-object.js), for Workers. The
// Worker talks to the object through its stub with JS RPC (workerd's native calls: structured
// values, Uint8Arrays included, and a session object whose lifetime is the run's lease).
//
// - open(run) asks the object for a session; the object answers once no other run holds the
//   workspace, so two runs on one workspace take turns instead of interleaving their batches.
//   end(run) (the engine calls it when the run is over) waits for batches still in flight and
//   ends the session.
// - commit(changes) sends a batch: writes too big to travel with it are staged first (chunks of
//   at most CHUNK_BYTES, TRANSACTION_BYTES per call), then one apply() makes the whole batch
//   visible in one storage transaction.
// - Failures (the object throwing, its storage failing, the object restarted under a run) reject
//   with `Durable Object store '<workspace>': <action> failed (<cause>)`; the run reports a `Vfs`.
import { CHUNK_BYTES, INLINE_BYTES, TRANSACTION_BYTES, chunkCount, chunkOf, concatBytes } from './durable-layout.js';
import { plural } from '../core/values.js';
import { checkHostPath, checkPathString, fromBytes, toBytes, trackBatch } from './shared.js';

/** What was passed instead of a namespace binding, for the TypeError that refuses it. */
function describeNamespace(value) {
  if (value === null) return 'null';
  if (typeof value !== 'object') {
    return typeof value === 'string' ? `the string ${JSON.stringify(value)}` : String(value);
  }
  return `an object without idFromName() and get() (${Object.keys(value).slice(0, 5).join(', ') || 'no keys'})`;
}

/** What went wrong talking to the object, in words a person can act on. */
function failure(workspace, action, error) {
  const message = error?.message ?? String(error);
  if (/does not implement the method|does not support RPC/.test(message)) {
    return new Error(
      `Durable Object store '${workspace}': ${action} failed: the namespace is not bound to RunvilStoreObject; export RunvilStoreObject from the Worker and bind the namespace to that class (${message})`,
    );
  }
  if (/no longer running|Durable Object reset|Network connection lost/i.test(message)) {
    return new Error(
      `Durable Object store '${workspace}': ${action} failed: the Durable Object restarted while the run held the workspace (a deploy, an eviction or a crash); the batches committed before are kept (${message})`,
    );
  }
  return new Error(`Durable Object store '${workspace}': ${action} failed (${message})`);
}

/**
 * What this side calls of RunvilStoreObject (durable-object.js) and of a StoreSession it hands out,
 * through their RPC stubs.
 * @typedef {{
 *   list(): Promise<{ files: string[], dirs: string[] }>,
 *   read(path: string, version?: string, from?: number): Promise<any>,
 * }} Reader
 * @typedef {Reader & {
 *   stage(parts: object[]): Promise<void>,
 *   apply(changes: object[]): Promise<void>,
 *   end(): Promise<void>,
 *   [Symbol.dispose]?: () => void,
 * }} Session
 * @typedef {Reader & {
 *   begin(): Promise<Session>,
 *   leaseState(): Promise<{ held: boolean, waiting: number }>,
 *   verify(): Promise<import('../workerd.d.ts').DurableStoreCheck>,
 * }} ObjectStub
 */

/** Gives a session's hold on the workspace back, whatever became of the session or the object. */
async function endSession(session) {
  try {
    await session.end();
  } catch {
    /* the session is gone already, or the object restarted and the lease went with it */
  }
  session[Symbol.dispose]?.();
}

/**
 * `namespace`: the Durable Object namespace bound to RunvilStoreObject (`env.RUNVIL_STORE`);
 * `workspace`: the workspace's name, one object per name.
 * @type {typeof import('../workerd.d.ts').durableObjectStore}
 */
export function durableObjectStore(namespace, workspace, { readOnly = false } = {}) {
  if (
    !namespace ||
    typeof namespace !== 'object' ||
    typeof namespace.idFromName !== 'function' ||
    typeof namespace.get !== 'function'
  ) {
    throw new TypeError(
      `durableObjectStore: namespace must be a Durable Object namespace binding (env.<NAME>, bound to RunvilStoreObject in wrangler.toml); got ${describeNamespace(namespace)}`,
    );
  }
  if (typeof workspace !== 'string' || workspace === '') {
    throw new TypeError('durableObjectStore: workspace must be a non-empty string');
  }
  const id = namespace.idFromName(workspace);
  /** A stub per use: stubs belong to the request that made them, and a store may outlive one. */
  const object = () => /** @type {ObjectStub} */ (namespace.get(id));

  async function call(action, f) {
    try {
      return await f();
    } catch (error) {
      throw failure(workspace, action, error);
    }
  }

  /** A whole file, read in parts of at most TRANSACTION_BYTES; undefined when it does not exist. */
  async function readWhole(source, path) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const first = await call(`reading '${path}'`, () => source.read(path));
      if (!first) return undefined;
      const parts = [first.data];
      let from = first.from + chunkCount(first.data.byteLength);
      let changed = false;
      while (from < first.n) {
        const next = await call(`reading '${path}'`, () => source.read(path, first.v, from));
        if (!next) {
          changed = true; // replaced while read outside a run: read the new version
          break;
        }
        parts.push(next.data);
        from += chunkCount(next.data.byteLength);
      }
      if (!changed) return concatBytes(parts, first.size);
    }
    throw failure(workspace, `reading '${path}'`, new Error('the file kept changing while it was read'));
  }

  /** Sends one batch: staged parts first, then one apply. */
  async function sendBatch(session, action, changes) {
    const applied = [];
    const staged = [];
    let inline = 0;
    for (const change of changes) {
      if (change?.op === 'write') {
        const data = toBytes('store.commit', change.path, change.data);
        if (inline + data.byteLength <= INLINE_BYTES) {
          inline += data.byteLength;
          applied.push({ op: 'write', path: change.path, data });
        } else {
          const v = crypto.randomUUID();
          const n = chunkCount(data.byteLength);
          for (let index = 0; index < n; index++) staged.push({ v, index, data: chunkOf(data, index) });
          applied.push({ op: 'write', path: change.path, v, size: data.byteLength, n });
        }
      } else if (change?.op === 'mkdir' || change?.op === 'delete') {
        applied.push({ op: change.op, path: change.path });
      } else {
        throw new TypeError(`store.commit: unknown change ${JSON.stringify(change?.op)}`);
      }
    }
    const perCall = Math.floor(TRANSACTION_BYTES / CHUNK_BYTES);
    for (let i = 0; i < staged.length; i += perCall) {
      const part = staged.slice(i, i + perCall);
      await call(action, () => session.stage(part));
    }
    await call(action, () => session.apply(applied));
  }

  /** Runs a host change in a session of its own (it waits for runs like a run does). */
  async function hostChange(action, changes) {
    if (readOnly) throw new Error(`Durable Object store '${workspace}' is read-only: ${action} is refused`);
    const session = await call(action, () => object().begin());
    try {
      await sendBatch(session, action, changes);
    } finally {
      await endSession(session);
    }
  }

  /** Per-run state, keyed by the context object the engine passes to every call of one run. */
  const runs = new WeakMap();

  /** @type {import('../workerd.d.ts').DurableObjectStore} */
  const store = {
    kind: 'durable-object',
    workspace,
    readOnly: Boolean(readOnly),

    // ---- the bridge (called by the engine) ----

    /** Waits for the workspace (its lease), then lists it. */
    async open(run) {
      const stub = object();
      /** @type {Reader} the run's session once it holds the workspace, else the object */
      let source = stub;
      if (run && typeof run === 'object') {
        const state = { session: null, ended: false, pending: new Set() };
        runs.set(run, state);
        const session = await call('opening the workspace', () => stub.begin());
        if (state.ended) {
          // The run was cancelled while it waited: give the workspace straight back.
          await endSession(session);
          throw new Error(`Durable Object store '${workspace}': the run ended while waiting for the workspace`);
        }
        state.session = session;
        source = session;
      }
      const { files, dirs } = await call('listing the workspace', () => source.list());
      return { files: files.map((path) => ({ path })), dirs, readOnly: Boolean(readOnly) };
    },

    /** The file's text (bytes when it is not UTF-8), or undefined when it does not exist. */
    async read(path, run) {
      checkPathString('store.read', path);
      const session = run && runs.get(run)?.session;
      const bytes = await readWhole(session ?? object(), path);
      return bytes === undefined ? undefined : fromBytes(bytes);
    },

    /** One batch, visible all at once or not at all; resolves once the object has stored it. */
    async commit(changes, run) {
      if (!Array.isArray(changes)) throw new TypeError('store.commit: changes must be an array');
      if (readOnly) throw new Error(`Durable Object store '${workspace}' is read-only: a commit is refused`);
      const state = run && runs.get(run);
      const action = `committing a batch of ${plural(changes.length, 'change')}`;
      if (!state?.session) return hostChange(action, changes);
      return trackBatch(state.pending, sendBatch(state.session, action, changes));
    },

    /** The run is over (called by the engine, whatever the outcome): give the workspace back. */
    async end(run) {
      const state = run && runs.get(run);
      if (!state || state.ended) return;
      state.ended = true;
      runs.delete(run);
      if (!state.session) return; // still waiting: open() gives the session back when it comes
      await Promise.all(state.pending);
      await endSession(state.session);
    },

    // ---- the host API ----

    /** Every file path, sorted (code-unit order). */
    async list() {
      const { files } = await call('listing the workspace', () => object().list());
      return files.sort();
    },

    /** The file's bytes, or undefined. */
    readBytes(path) {
      checkHostPath('store.readBytes', path);
      return readWhole(object(), path);
    },

    /** Adds or replaces files in one batch: an object mapping paths to contents, or `{ path, data }`s. */
    async import(files) {
      const list = Array.isArray(files)
        ? files.map((f) => [f?.path, f?.data])
        : files && typeof files === 'object'
          ? Object.entries(files)
          : null;
      if (!list) {
        throw new TypeError(
          'store.import: files must be an object mapping paths to contents or an array of { path, data }',
        );
      }
      const changes = list.map(([path, data]) => {
        checkHostPath('store.import', path);
        return { op: 'write', path, data: toBytes('store.import', path, data) };
      });
      await hostChange(`importing ${plural(changes.length, 'file')}`, changes);
    },

    /** Deletes files (and kept directories) by path, in one batch. */
    async delete(...paths) {
      for (const path of paths) checkHostPath('store.delete', path);
      await hostChange(
        `deleting ${plural(paths.length, 'path')}`,
        paths.map((path) => ({ op: 'delete', path })),
      );
    },

    /** Whether a run holds the workspace and how many wait for it. */
    lease() {
      return call('asking for the lease', () => object().leaseState());
    },

    /** Checks the workspace's storage invariants (reads every chunk: for diagnostics). */
    verify() {
      return call('verifying the workspace', () => object().verify());
    },
  };
  return store;
}
