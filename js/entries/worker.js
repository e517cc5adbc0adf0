// @ts-check
// The script a runvil/worker engine runs inside its Web Worker (started by worker-client.js).
// It owns the wasm engine; the page's models, Pack tools, store, onEvent and AbortSignal reach it
// as stubs over the Peer protocol (core/worker-rpc.js). An IndexedDB store is opened here directly, so
// a run's batches go from the worker to IndexedDB without crossing back to the page.
import { createEngine } from './browser.js';
import { indexedDbStore } from '../stores/idb.js';
import { Peer } from '../core/worker-rpc.js';

let engine = null;
/** run id -> { scope } of the runs in flight */
const runs = new Map();

const peer = new Peer(self, { onMessage: receive });

/** A `models` function (role, spec) => fn of the page: asked when the role's first request arrives. */
function remoteModelChooser(choose) {
  const chosen = new Map();
  return (role, spec) => async (request) => {
    if (!chosen.has(role)) chosen.set(role, choose(role, spec));
    const fn = await chosen.get(role);
    if (typeof fn !== 'function') throw new Error(`no model is bound to the role ${role}`);
    return fn(request);
  };
}

/** IndexedDB stores by name and mode, opened once in this worker. */
const idbStores = new Map();

function storeFor(description) {
  if (!description || typeof description.$indexedDb !== 'string') return description;
  const key = `${description.readOnly ? 'r' : 'w'}:${description.$indexedDb}`;
  if (!idbStores.has(key)) {
    const opening = indexedDbStore(description.$indexedDb, { readOnly: description.readOnly });
    // A failed open is not kept: the next run tries again (and reports its own failure).
    opening.catch(() => idbStores.delete(key));
    idbStores.set(key, opening);
  }
  return idbStores.get(key);
}

async function run({ id, source, options, modelsChooser }) {
  const scope = peer.scope(id);
  try {
    const decoded = peer.decode(options, scope);
    if (modelsChooser) decoded.models = remoteModelChooser(decoded.models);
    if (typeof decoded.onEvent === 'function') {
      // Events are told, not asked: nothing waits for the page, and its failures change nothing.
      const tell = decoded.onEvent;
      decoded.onEvent = (event) => {
        tell(event).catch(() => {});
      };
    }
    if (decoded.store !== undefined) {
      try {
        decoded.store = await storeFor(decoded.store);
      } catch (error) {
        peer.post({
          type: 'done',
          id,
          outcome: {
            ok: false,
            error: { kind: 'Vfs', message: `store backend failure: ${error.message}` },
            seed: String(decoded.seed),
          },
        });
        return;
      }
    }
    const outcome = await engine.run(source, decoded);
    peer.post({ type: 'done', id, outcome });
  } catch (error) {
    // engine.run rejects only on API misuse (a TypeError); the page rethrows it.
    peer.post({ type: 'rejected', id, name: error?.name ?? 'Error', message: error?.message ?? String(error) });
  } finally {
    peer.release(scope);
  }
}

/** engine.check for the page: the Packs arrive as the data the check reads. */
async function check({ id, source, packs }) {
  try {
    const outcome = await engine.check(source, packs === undefined ? undefined : { packs });
    peer.post({ type: 'done', id, outcome });
  } catch (error) {
    peer.post({ type: 'rejected', id, name: error?.name ?? 'Error', message: error?.message ?? String(error) });
  }
}

async function receive(message) {
  if (message.type === 'init') {
    try {
      engine = await createEngine(message.wasm === undefined ? {} : { wasm: message.wasm });
      peer.post({ type: 'ready', engineVersion: engine.engineVersion });
    } catch (error) {
      peer.post({ type: 'failed', message: error?.message ?? String(error) });
    }
  } else if (message.type === 'run') {
    run(message);
  } else if (message.type === 'check') {
    check(message);
  }
}

peer.post({ type: 'loaded' });
