// The Worker pkg-tests/durable-store.test.mjs runs in workerd: runs prompts on durableObjectStore and
// reports what the workspace holds. Its object classes:
// - CheckedStoreObject: RunvilStoreObject on its real storage, wrapped to refuse any call past the
//   KV-backed backend's documented limits (workerd's local SQLite storage does not enforce them)
//   and to count transactions;
// - FailingStoreObject: its storage fails every transaction, as a full disk would;
// - NotAStoreObject: some other Durable Object class, bound by mistake.
import { DurableObject } from 'cloudflare:workers';
import { createEngine, durableObjectStore, RunvilStoreObject } from 'runvil/workerd';

/** The KV-backed storage's limits: value 128 KiB (+32 serialization bytes), key 2 KiB, 128 keys per call, 16 MiB per write. */
const LIMITS = { value: 131_072 + 32, key: 2048, keys: 128, transaction: 16 * 1024 * 1024 };

function valueBytes(value) {
  if (value instanceof Uint8Array) return value.buffer.byteLength; // a view stores its whole buffer
  return new TextEncoder().encode(JSON.stringify(value)).byteLength;
}

function checkedStorage(storage, stats, afterTransaction = async () => {}) {
  const fail = (message) => {
    stats.violations.push(message);
    throw new Error(`limit check: ${message}`);
  };
  const checkKeys = (keys) => {
    if (keys.length > LIMITS.keys) fail(`${keys.length} keys in one call`);
    stats.maxKeysPerCall = Math.max(stats.maxKeysPerCall, keys.length);
    for (const key of keys) if (new TextEncoder().encode(key).byteLength > LIMITS.key) fail(`a key of ${key.length} characters`);
  };
  const wrap = (target, tx) => ({
    get: (keys, options) => {
      checkKeys(Array.isArray(keys) ? keys : [keys]);
      return target.get(keys, options);
    },
    put: (keys, value, options) => {
      const entries = typeof keys === 'string' ? [[keys, value]] : Object.entries(keys);
      checkKeys(entries.map(([key]) => key));
      tx.keys?.push(...entries.map(([key]) => key));
      for (const [, v] of entries) {
        const bytes = valueBytes(v);
        if (bytes > LIMITS.value) fail(`a value of ${bytes} bytes`);
        stats.maxValue = Math.max(stats.maxValue, bytes);
        tx.bytes += bytes;
      }
      if (tx.bytes > LIMITS.transaction) fail(`${tx.bytes} bytes in one transaction`);
      return typeof keys === 'string' ? target.put(keys, value, options) : target.put(keys, value);
    },
    delete: (keys, options) => {
      checkKeys(Array.isArray(keys) ? keys : [keys]);
      return target.delete(keys, options);
    },
    list: (options) => target.list(options),
    transaction: async (body) => {
      const inner = { bytes: 0, keys: [] };
      const result = await target.transaction(async (txn) => {
        stats.transactions++;
        const value = await body(wrap(txn, inner));
        stats.maxTransactionBytes = Math.max(stats.maxTransactionBytes, inner.bytes);
        return value;
      });
      await afterTransaction(inner);
      return result;
    },
  });
  return wrap(storage, { bytes: 0 });
}

const newStats = () => ({ transactions: 0, maxValue: 0, maxKeysPerCall: 0, maxTransactionBytes: 0, violations: [] });

export class CheckedStoreObject extends RunvilStoreObject {
  #stats;

  constructor(ctx, env) {
    const stats = newStats();
    super(ctx, env, { storage: checkedStorage(ctx.storage, stats) });
    this.#stats = stats;
  }

  stats() {
    return this.#stats;
  }
}

/**
 * After each transaction that staged chunks (wrote `m:staged` and no file metadata), waits at the
 * test's gate `stage-<n>`: the test SIGKILLs workerd there, between a batch's staging and its apply.
 * The gate's fetch leaves the object only once the staged chunks are stored (the output gate).
 */
export class PausingStoreObject extends RunvilStoreObject {
  constructor(ctx, env) {
    let staged = 0;
    super(ctx, env, {
      storage: checkedStorage(ctx.storage, newStats(), async ({ keys }) => {
        if (keys.includes('m:staged') && !keys.some((key) => key.startsWith('f:'))) {
          await (await fetch(`${env.GATE_URL}/wait?name=stage-${++staged}`)).text();
        }
      }),
    });
  }
}

/** Its `reset()` aborts the object, as a deploy or an eviction would: its sessions go with it. */
export class ResettableStoreObject extends RunvilStoreObject {
  reset() {
    this.ctx.abort(new Error('reset by the test'));
  }
}

export class FailingStoreObject extends RunvilStoreObject {
  constructor(ctx, env) {
    const storage = new Proxy(ctx.storage, {
      get(target, name) {
        if (name === 'transaction') return async () => { throw new Error('SQLITE_FULL: database or disk is full'); };
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    super(ctx, env, { storage });
  }
}

export class NotAStoreObject extends DurableObject {
  hello() {
    return 'hello';
  }
}

let engine;

/** A Pack whose tool waits until the test opens the gate named by its argument. */
function gatePack(env, object) {
  return {
    name: 'gate',
    description: 'Waits for the test.',
    tools: [{
      name: 'wait',
      description: 'Waits until the test opens a gate.',
      parameters: { type: 'object', properties: { name: { type: 'string' } } },
      trust: 'trusted',
      call: async ({ name }) => (await fetch(`${env.GATE_URL}/wait?name=${encodeURIComponent(name)}`)).text(),
    }, {
      name: 'reset',
      description: 'Resets the run\'s Durable Object (ResettableStoreObject).',
      parameters: { type: 'object', properties: {} },
      trust: 'trusted',
      call: async () => {
        await object().reset().catch(() => {}); // the call dies with the object
        return 'reset';
      },
    }],
  };
}

async function sha256(bytes) {
  return [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function json(value, status = 200) {
  return new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const workspace = url.searchParams.get('ws') ?? 'w';
    const binding = url.searchParams.get('ns') ?? 'STORE';
    const stub = () => env[binding].get(env[binding].idFromName(workspace));

    if (url.pathname === '/run') {
      // POST the prompt; answers NDJSON: each run event as it happens, then { outcome }.
      const source = await request.text();
      engine ??= await createEngine();
      const store = durableObjectStore(env[binding], workspace, { readOnly: url.searchParams.has('readOnly') });
      const controller = new AbortController();
      if (url.searchParams.get('cancelWhenWaiting')) {
        // Cancel this run once it waits for the workspace (the object says a run is waiting).
        ctx.waitUntil((async () => {
          while (!controller.signal.aborted && (await store.lease()).waiting === 0) await scheduler.wait(5);
          controller.abort();
        })());
      }
      const { readable, writable } = new TransformStream();
      const writer = writable.getWriter();
      const line = (value) => writer.write(new TextEncoder().encode(`${JSON.stringify(value)}\n`));
      const done = engine.run(source, {
        store,
        seed: 1,
        signal: controller.signal,
        packs: [gatePack(env, stub)],
        onEvent: (event) => { line({ event: event.event, section: event.section }); },
      }).then((outcome) => line({ outcome }), (error) => line({ outcome: { ok: false, error: { kind: 'Host', message: String(error) } } }))
        .finally(() => { controller.abort(); writer.close(); });
      ctx.waitUntil(done);
      return new Response(readable, { headers: { 'content-type': 'application/x-ndjson' } });
    }
    if (url.pathname === '/dump') {
      // Every file's size and SHA-256 (read through the store's host API), kept dirs, and the object's own check.
      const store = durableObjectStore(env[binding], workspace);
      const files = {};
      for (const path of await store.list()) {
        const bytes = await store.readBytes(path);
        files[path] = { size: bytes.byteLength, sha256: await sha256(bytes) };
      }
      const { dirs } = await stub().list();
      return json({ files, dirs: dirs.sort(), verify: await store.verify() });
    }
    if (url.pathname === '/stats') return json(await stub().stats());
    if (url.pathname === '/lease') return json(await stub().leaseState());
    if (url.pathname === '/host') {
      // The host API: import the posted files, delete ?delete=, answer list() and readBytes() of each.
      const store = durableObjectStore(env[binding], workspace);
      await store.import(await request.json());
      const gone = url.searchParams.getAll('delete');
      if (gone.length) await store.delete(...gone);
      const files = {};
      for (const path of await store.list()) files[path] = new TextDecoder().decode(await store.readBytes(path));
      return json({ files, missing: (await store.readBytes('no/such.txt')) ?? null, lease: await store.lease() });
    }
    if (url.pathname === '/construct') {
      // durableObjectStore with a binding the Worker does not have.
      try {
        durableObjectStore(env[url.searchParams.get('binding')], workspace);
        return json({ error: null });
      } catch (error) {
        return json({ error: { name: error.name, message: error.message } });
      }
    }
    return new Response('not found\n', { status: 404 });
  },
};
