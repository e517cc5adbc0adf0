/* @ts-self-types="../worker-client.d.ts" */
// @ts-check
// runvil/worker: the whole engine.run API for a page, with the engine in a Web Worker, so a long
// Lua block never freezes the page and cancelling is a message away. Everything else (stores,
// models, Packs, version) is the default entry's, re-exported.
//
//   import { createEngine, indexedDbStore } from 'runvil/worker';
//   const engine = await createEngine();            // starts worker.js
//   await engine.run(source, { models, packs, store, onEvent, signal });
//   engine.terminate();                             // ends the worker
import { checkCheckCall } from '../core/check.js';
import { checkRunCall } from '../core/engine.js';
import { randomSeed } from '../core/seeds.js';
import { journalSeed } from '../core/journal.js';
import { engineOptions } from '../core/load.js';
import { Peer } from '../core/worker-rpc.js';
import { checkTracing, createRunTrace } from '../core/trace.js';
import { MODEL_FUNCTION } from '../core/values.js';

export * from './browser.js';

/**
 * What crosses for a store: an IndexedDB store by name (the worker opens it there), any other
 * store as its bridge methods, bound to it, called back in the page.
 */
function storeDescription(store) {
  if (store === undefined) return undefined;
  if (store && typeof store === 'object' && store.kind === 'indexeddb' && typeof store.name === 'string') {
    return { $indexedDb: store.name, readOnly: Boolean(store.readOnly) };
  }
  if (store && typeof store === 'object') {
    const bridge = {};
    for (const method of ['open', 'read', 'commit', 'end']) {
      if (typeof store[method] === 'function') bridge[method] = store[method].bind(store);
    }
    return bridge;
  }
  return store;
}

/**
 * A run's tracer stays in the page (its spans and exporter live here): the run's events and model
 * calls, which cross back to the page anyway, feed its spans. Takes `tracer` and `traceContent` out
 * of `options` (changing `onEvent` and `models` to feed the trace) and answers the trace, if any.
 */
function traceInPage(options) {
  const { tracer, traceContent } = options;
  delete options.tracer;
  delete options.traceContent;
  checkTracing(tracer, traceContent);
  if (tracer === undefined) return undefined;
  const trace = createRunTrace(tracer, { content: traceContent });
  const onEvent = options.onEvent;
  // Misuse is left for the worker's engine.run to refuse, with its own TypeError.
  if (onEvent !== undefined && typeof onEvent !== 'function') return trace;
  options.onEvent = (event) => {
    trace.event(event);
    return typeof onEvent === 'function' ? onEvent(event) : undefined;
  };
  const { models } = options;
  if ((typeof models === 'function' && !models[MODEL_FUNCTION]) || (models && typeof models === 'object')) {
    options.models = trace.models(options.models);
  }
  return trace;
}

/** Ends the run's trace, if it has one, with `outcome`; answers `outcome`. */
function finishTrace(trace, outcome) {
  trace?.finish(outcome);
  return outcome;
}

/**
 * `options.worker`: a Worker already running this package's worker.js (e.g. from a bundler);
 * default: a module worker started from worker.js next to this file. `wasm`: as for the default
 * entry.
 * @type {typeof import('../worker-client.d.ts').createEngine}
 */
export async function createEngine(options = {}) {
  let { worker, wasm } = engineOptions(options);
  if (wasm instanceof URL) wasm = wasm.href;
  else if (typeof wasm === 'string') wasm = new URL(wasm, globalThis.location?.href ?? import.meta.url).href;
  worker ??= new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'runvil engine' });

  const runs = new Map();
  let nextRun = 1;
  let fatal = null;
  let ready;
  const started = new Promise((resolve, reject) => {
    ready = { resolve, reject };
  });
  const peer = new Peer(worker, {
    onMessage(message) {
      if (message.type === 'loaded') peer.post({ type: 'init', wasm });
      else if (message.type === 'ready') ready.resolve(message.engineVersion);
      else if (message.type === 'failed') ready.reject(new Error(message.message));
      else if (message.type === 'done' || message.type === 'rejected') runs.get(message.id)?.(message);
    },
  });
  worker.addEventListener('error', (event) => {
    fatal = new Error(`runvil worker failed: ${event.message ?? 'the worker script could not run'}`);
    ready.reject(fatal);
    for (const finish of runs.values()) finish({ type: 'fatal' });
  });
  worker.start?.();
  const engineVersion = await started;

  async function run(source, runOptions) {
    runOptions = checkRunCall(source, runOptions);
    if (fatal) throw fatal;
    const id = nextRun++;
    const scope = peer.scope(id);
    const options = { ...runOptions };
    const trace = traceInPage(options);
    // The seed is chosen here when the caller gives none, so an outcome is known even for a run
    // the worker never answers (terminate()).
    // A replayed or resumed run's seed is its journal's (docs/journal.md).
    if (options.seed === undefined) options.seed = journalSeed(options) ?? randomSeed();
    if ('store' in options) options.store = storeDescription(options.store);
    const modelsChooser = typeof options.models === 'function';
    let message;
    try {
      message = { type: 'run', id, source, modelsChooser, options: peer.encode(options, scope) };
    } catch (error) {
      peer.release(scope);
      throw new TypeError(`engine.run: the options cannot be sent to the worker (${error?.message ?? error})`);
    }
    const settled = new Promise((resolve) => runs.set(id, (answer) => resolve({ ...answer, seed: options.seed })));
    try {
      peer.post(message);
    } catch (error) {
      runs.delete(id);
      peer.release(scope);
      throw new TypeError(`engine.run: the options cannot be sent to the worker (${error?.message ?? error})`);
    }
    const answer = await settled;
    runs.delete(id);
    peer.release(scope);
    if (answer.type === 'done') return finishTrace(trace, answer.outcome);
    if (answer.type === 'fatal') {
      // The run's spans end, failed, before the error reaches the caller.
      finishTrace(trace, { ok: false, error: { kind: 'Error', message: fatal.message }, seed: options.seed });
      throw fatal;
    }
    if (answer.type === 'terminated') {
      return finishTrace(trace, {
        ok: false,
        error: { kind: 'Cancelled', message: 'the engine worker was terminated' },
        seed: String(answer.seed),
      });
    }
    const ErrorType = answer.name === 'TypeError' ? TypeError : Error;
    throw new ErrorType(answer.message);
  }

  /** engine.check in the worker: only data crosses (the Packs' names and availability). */
  async function check(source, checkOptions) {
    const packs = checkCheckCall(source, checkOptions);
    if (fatal) throw fatal;
    const id = nextRun++;
    const settled = new Promise((resolve) => runs.set(id, resolve));
    try {
      peer.post({ type: 'check', id, source, packs });
    } catch (error) {
      runs.delete(id);
      throw new TypeError(`engine.check: the options cannot be sent to the worker (${error?.message ?? error})`);
    }
    const answer = await settled;
    runs.delete(id);
    if (answer.type === 'done') return answer.outcome;
    if (answer.type === 'fatal') throw fatal;
    if (answer.type === 'terminated') throw new Error('runvil worker: the engine was terminated');
    const ErrorType = answer.name === 'TypeError' ? TypeError : Error;
    throw new ErrorType(answer.message);
  }

  return Object.freeze({
    run,
    check,
    engineVersion,
    /** The Worker running the engine. */
    worker,
    /** Ends the worker at once; runs in flight end `Cancelled` (their last batch may not have landed). */
    terminate() {
      worker.terminate();
      fatal ??= new Error('runvil worker: the engine was terminated');
      for (const finish of runs.values()) finish({ type: 'terminated' });
    },
  });
}

/** The same as createEngine: named for pages that also import the default entry's createEngine. */
export const createWorkerEngine = createEngine;
