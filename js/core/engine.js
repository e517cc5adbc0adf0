// @ts-check
// The engine object: argument checking, defaults, and the wasm instance's life cycle.
// Everything here is shared by every entry point (index.js, workerd.js).
import { now } from './clock.js';
import { createConversations } from './conversations.js';
import { instancePool, instantiate } from './pool.js';
import { measureCrossings, utf8Length } from './crossing.js';
import { guarded, thrownText } from './guard.js';
import { bridgeModels } from './model-calls.js';
import { randomSeed } from './seeds.js';
import { MODEL_FUNCTION, describe, isObject, isThenable } from './values.js';

// What only some calls use is loaded by the first call that does (journal.js for record, replay
// and resume; trace.js for a tracer; check.js for engine.check), so an engine that never uses them
// never parses them (docs/performance.md, "Start-up").
/** @type {Promise<typeof import('./journal.js')> | undefined} */
let journalModule;
/** @type {Promise<typeof import('./trace.js')> | undefined} */
let traceModule;
/** @type {Promise<typeof import('./check.js')> | undefined} */
let checkModule;

/**
 * Which optional modules a run's options call for. Without any of their options a run needs
 * neither: no journal (journal.js would answer no mode) and no trace (nothing to check).
 * @param {Record<string, unknown>} checked the run's options, as checkRunCall answers them
 */
function wantedParts(checked) {
  const { record, replay, resume, resumeInFlight, tracer, traceContent } = checked;
  return {
    journal: [record, replay, resume, resumeInFlight].some((value) => value !== undefined),
    trace: tracer !== undefined || traceContent !== undefined,
  };
}

/**
 * The optional modules `wanted` names, loaded (each once per process).
 * @param {ReturnType<typeof wantedParts>} wanted
 */
async function loadParts(wanted) {
  return {
    journal: wanted.journal ? await (journalModule ??= import('./journal.js')) : undefined,
    trace: wanted.trace ? await (traceModule ??= import('./trace.js')) : undefined,
  };
}

/** @typedef {Awaited<ReturnType<typeof loadParts>>} OptionalParts */
/** @type {OptionalParts} */
const NO_PARTS = Object.freeze({ journal: undefined, trace: undefined });

const U64_MAX = (1n << 64n) - 1n;

/** A seed as a canonical decimal u64 string, or a TypeError. */
function normalizeSeed(seed) {
  let big;
  if (typeof seed === 'number') {
    // Beyond 2^53 a number has already lost digits: the caller must pass a string or bigint.
    if (!Number.isSafeInteger(seed) || seed < 0) {
      throw new TypeError(`engine.run: seed must be a non-negative safe integer or a decimal string (got ${seed})`);
    }
    big = BigInt(seed);
  } else if (typeof seed === 'bigint') {
    big = seed;
  } else if (typeof seed === 'string' && /^[0-9]+$/.test(seed)) {
    big = BigInt(seed);
  } else {
    throw new TypeError(
      `engine.run: seed must be an integer or a decimal string (got ${describe(seed)}${typeof seed === 'string' ? ` '${seed}'` : ''})`,
    );
  }
  if (big < 0n || big > U64_MAX) throw new TypeError(`engine.run: seed ${big} is outside the u64 range 0..${U64_MAX}`);
  return big.toString();
}

/**
 * What every engine.run checks first (the worker's too): `source` is a string and `options` an
 * object; answers the options (`{}` when absent). Throws a TypeError otherwise.
 */
export function checkRunCall(source, options) {
  if (typeof source !== 'string') throw new TypeError(`engine.run: source must be a string (got ${describe(source)})`);
  if (options === undefined) return {};
  if (!isObject(options)) throw new TypeError(`engine.run: options must be an object (got ${describe(options)})`);
  // A misspelt option (`model:`) would otherwise be a run without it.
  for (const key of Object.keys(options)) {
    if (!RUN_OPTIONS.includes(key)) {
      throw new TypeError(`engine.run: unknown option '${key}' (known: ${RUN_OPTIONS.join(', ')})`);
    }
  }
  return options;
}

/** The options engine.run takes (index.d.ts, RunOptions). */
const RUN_OPTIONS = [
  'args',
  'seed',
  'models',
  'packs',
  'store',
  'signal',
  'onEvent',
  'limits',
  'ui',
  'record',
  'replay',
  'resume',
  'resumeInFlight',
  'tracer',
  'traceContent',
];

/** Index (UTF-16 code units) of the first lone surrogate, or -1. */
function loneSurrogateIndex(text) {
  if (typeof text.isWellFormed === 'function' && text.isWellFormed()) return -1;
  const m = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.exec(text);
  return m ? m.index : -1;
}

function isAbortSignal(value) {
  if (typeof AbortSignal === 'function' && value instanceof AbortSignal) return true;
  // Duck typing covers signals from another realm (e.g. a polyfill or an iframe).
  return isObject(value) && typeof value.aborted === 'boolean' && typeof value.addEventListener === 'function';
}

/**
 * Resolves on the next macrotask, so long Lua blocks let timers and abort events run.
 * @type {() => Promise<void>}
 */
export const yieldNow = (() => {
  if (typeof setImmediate === 'function') return () => new Promise((resolve) => setImmediate(resolve));
  if (typeof MessageChannel === 'function') {
    return () =>
      new Promise((resolve) => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => {
          channel.port1.close();
          resolve();
        };
        channel.port2.postMessage(null);
      });
  }
  return () => new Promise((resolve) => setTimeout(resolve, 0));
})();

const LIMIT_KEYS = ['instructions', 'memoryBytes', 'maxToolIterations', 'fanoutConcurrency', 'sectionEntries'];

function checkLimits(limits) {
  if (!isObject(limits)) throw new TypeError(`engine.run: limits must be an object (got ${describe(limits)})`);
  for (const [key, value] of Object.entries(limits)) {
    if (!LIMIT_KEYS.includes(key)) {
      throw new TypeError(`engine.run: unknown limit '${key}' (known: ${LIMIT_KEYS.join(', ')})`);
    }
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
      throw new TypeError(
        `engine.run: limits.${key} must be a positive integer (got ${typeof value === 'bigint' ? `${value}n` : String(value)})`,
      );
    }
    if (key === 'memoryBytes' && value > MAX_MEMORY_BYTES) {
      throw new TypeError(
        `engine.run: limits.memoryBytes must be at most ${MAX_MEMORY_BYTES} (1 GiB), what one engine instance can honour (got ${value})`,
      );
    }
  }
  return { ...limits };
}

/** The largest memory ceiling a run may ask for (docs/reliability.md). */
const MAX_MEMORY_BYTES = 2 ** 30;
/** The default memory ceiling (docs/language.md); what a run without limits.memoryBytes may hold. */
const DEFAULT_MEMORY_BYTES = 64 * 2 ** 20;
/** The engine's prompt size limit (src/parse/mod.rs), checked here before the copy into wasm. */
const MAX_PROMPT_BYTES = 16 * 2 ** 20;

function describeSafe(value) {
  try {
    return describe(value);
  } catch {
    return 'a value that could not be inspected';
  }
}

/** A tool's answer as the bridge takes it: text, or JSON text for any other JSON value. */
function toolAnswer(value) {
  if (typeof value === 'string' || value === undefined || value === null) return value ?? '';
  let text;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new Error(`the tool's output is not JSON (${thrownText(error, 'JSON.stringify')})`);
  }
  if (typeof text !== 'string') throw new Error(`the tool's output is not JSON (it is ${describeSafe(value)})`);
  return text;
}

function guardTool(tool) {
  const { call } = tool;
  return { ...tool, call: async (args, ctx) => toolAnswer(await guarded('the tool', call, tool, [args, ctx])) };
}

/**
 * The observer as the engine calls it: it cannot change the run, so what it throws, or a promise
 * it answers that rejects, is dropped here rather than reaching the host as unhandled.
 * @param {(event: object) => unknown} onEvent
 */
function guardObserver(onEvent) {
  return (event) => {
    try {
      const answer = onEvent(event);
      if (isThenable(answer)) Promise.resolve(answer).catch(() => {});
    } catch {
      /* the observer cannot change the run */
    }
  };
}

/**
 * The run's event sink: each event gets its `time` (ms since the epoch, clock.js `now`) where the
 * wrapper receives it, goes to the run's trace, then to the host's observer.
 * @param {((event: object) => unknown) | undefined} onEvent
 * @param {ReturnType<typeof import('./trace.js').createRunTrace> | undefined} trace
 */
function observer(onEvent, trace) {
  const tell = onEvent === undefined ? undefined : guardObserver(onEvent);
  return (event) => {
    if (isObject(event)) event.time = now();
    trace?.event(event);
    tell?.(event);
  };
}

/**
 * The run's view of a host store. Every call also passes `run`, one object per run, as its last
 * argument, and `end(run)` is called once the run is over: a store that keeps per-run state (the
 * IndexedDB store holds a lock from open() to end()) can tell its runs apart (docs/store.md).
 */
function guardStore(store) {
  const run = {};
  const method =
    (name) =>
    (...args) =>
      guarded(`the store's ${name}()`, store[name], store, [...args, run]);
  const end = () => {
    if (typeof store.end !== 'function') return;
    // Nothing waits for it and nothing it throws can change the outcome.
    guarded("the store's end()", store.end, store, [run]).catch(() => {});
  };
  return { open: method('open'), read: method('read'), commit: method('commit'), end };
}

function checkUi(ui, defaultKind) {
  const base = { kind: defaultKind, interactive: false };
  if (ui === undefined) return base;
  if (!isObject(ui)) throw new TypeError(`engine.run: ui must be an object (got ${describe(ui)})`);
  if (ui.kind !== undefined && typeof ui.kind !== 'string') throw new TypeError('engine.run: ui.kind must be a string');
  if (ui.interactive !== undefined && typeof ui.interactive !== 'boolean') {
    throw new TypeError('engine.run: ui.interactive must be a boolean');
  }
  return { ...base, ...ui };
}

/**
 * Checks run options and builds the bridge options (docs/bridge.md). Throws TypeError on misuse.
 * Returns { bridge } or { outcome } when the run is answered without the engine.
 * @param {string} source
 * @param {Record<string, any>} checked the options as checkRunCall answers them
 * @param {OptionalParts} parts the optional modules these options call for (loadParts)
 * @param {{ uiKind: string, engineVersion?: string, drawSeed: () => string }} host
 */
function prepareRun(source, checked, parts, { uiKind: defaultUiKind, engineVersion = '', drawSeed }) {
  const { models, packs, store, signal, onEvent, tracer, traceContent } = checked;
  // A replayed or resumed run takes what its journal recorded unless the caller says otherwise
  // (a different args or seed is then a divergence, docs/journal.md).
  const mode = parts.journal?.journalMode(checked) ?? null;
  const header = mode?.given?.[0];
  const { args = header?.args ?? '', seed = header?.seed, limits = header?.limits, ui = header?.ui } = checked;

  if (typeof args !== 'string') throw new TypeError(`engine.run: args must be a string (got ${describe(args)})`);
  const runSeed = seed === undefined ? drawSeed() : normalizeSeed(seed);
  if (typeof models === 'function' && models[MODEL_FUNCTION]) {
    throw new TypeError(
      'engine.run: models is a model function; pass it by role, e.g. { default: model } (a function in place of the role map is a resolver (role, spec) => modelFn)',
    );
  }
  if (models !== undefined && typeof models !== 'function' && !isObject(models)) {
    throw new TypeError(
      `engine.run: models must be an object mapping roles to model functions, or a function (role, spec) => modelFn (got ${describe(models)})`,
    );
  }
  if (isObject(models)) {
    for (const [role, fn] of Object.entries(models)) {
      if (typeof fn !== 'function') {
        throw new TypeError(`engine.run: models.${role} must be a function (got ${describe(fn)})`);
      }
    }
  }
  if (packs !== undefined && !Array.isArray(packs)) {
    throw new TypeError(`engine.run: packs must be an array (got ${describe(packs)})`);
  }
  for (const [i, pack] of (packs ?? []).entries()) {
    if (!pack || typeof pack !== 'object' || typeof pack.name !== 'string') {
      throw new TypeError(`engine.run: packs[${i}] must be a Pack object with a string name`);
    }
    if (pack.tools !== undefined && !Array.isArray(pack.tools)) {
      throw new TypeError(`engine.run: packs[${i}].tools must be an array`);
    }
    for (const [j, tool] of (pack.tools ?? []).entries()) {
      if (!tool || typeof tool.name !== 'string' || typeof tool.call !== 'function') {
        throw new TypeError(`engine.run: packs[${i}].tools[${j}] needs a string name and a call function`);
      }
    }
  }
  if (
    store !== undefined &&
    !(store && typeof store === 'object' && ['open', 'read', 'commit'].every((m) => typeof store[m] === 'function'))
  ) {
    throw new TypeError(
      `engine.run: store must be a store object with open(), read() and commit() (see docs/store.md) (got ${describe(store)})`,
    );
  }
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new TypeError(`engine.run: signal must be an AbortSignal (got ${describe(signal)})`);
  }
  if (onEvent !== undefined && typeof onEvent !== 'function') {
    throw new TypeError(`engine.run: onEvent must be a function (got ${describe(onEvent)})`);
  }
  parts.trace?.checkTracing(tracer, traceContent);

  // Host callbacks are guarded: whatever they throw or answer reaches the engine as a plain
  // Error with a string message, or a value the bridge can read (docs/reliability.md).
  // conversations: the run's copies of its models.loop conversations, so that each round ships
  // only its new records across the boundary (conversations.js).
  const bridge = {
    args,
    seed: runSeed,
    ui: checkUi(ui, defaultUiKind),
    yieldNow,
    conversations: createConversations(),
    clock: promptClock,
  };
  const usage = {};
  const misuse = { resolverAnsweredPromise: false };
  const trace = tracer === undefined ? undefined : parts.trace?.createRunTrace(tracer, { content: traceContent });
  const deliver = onEvent === undefined && trace === undefined ? undefined : observer(onEvent, trace);
  const checkedLimits = limits === undefined ? undefined : checkLimits(limits);
  const ceiling = checkedLimits?.memoryBytes ?? DEFAULT_MEMORY_BYTES;
  /** What the run's model calls share (model-calls.js). */
  const modelRun = { deliver, totals: usage, ceiling, misuse };
  if (models !== undefined) bridge.models = bridgeModels(models, modelRun, trace, undefined);
  if (deliver !== undefined) bridge.onEvent = deliver;
  // Model requests and tool calls always carry a signal (index.d.ts declares it on both), so a
  // host can hand it to fetch or read `.aborted` without a check: a run started without one gets
  // a signal that never aborts.
  bridge.signal = signal ?? new AbortController().signal;
  if (checkedLimits !== undefined) bridge.limits = checkedLimits;
  if (store !== undefined) bridge.store = guardStore(store);
  if (packs !== undefined) bridge.packs = packs.map((pack) => ({ ...pack, tools: pack.tools?.map(guardTool) }));
  let journal;
  if (mode && parts.journal) {
    // The journal sits between the guarded host parts and the engine: it records what they
    // answered, or answers in their place (js/core/journal.js). Model usage is observed outside
    // it, so a replayed reply reports its usage as the recorded one did.
    journal = parts.journal.createJournal(mode, {
      source,
      args,
      seed: runSeed,
      ui: bridge.ui,
      limits: bridge.limits,
      packs,
      engineVersion,
      signal: bridge.signal,
      textOf: thrownText,
    });
    bridge.signal = journal.signal;
    bridge.conversations = journal.conversations(bridge.conversations);
    bridge.clock = journal.clock;
    bridge.models = bridgeModels(models, modelRun, trace, journal);
    bridge.packs = journal.packs(bridge.packs);
    bridge.store = journal.store(bridge.store);
  }

  const bytes = utf8Length(source, MAX_PROMPT_BYTES);
  if (bytes > MAX_PROMPT_BYTES) {
    return {
      trace,
      outcome: {
        ok: false,
        error: {
          kind: 'Parse',
          message: `the prompt is ${bytes} bytes; the limit is ${MAX_PROMPT_BYTES} bytes (16 MiB)`,
        },
        seed: runSeed,
      },
    };
  }

  const bad = loneSurrogateIndex(args);
  if (bad >= 0) {
    return {
      trace,
      outcome: {
        ok: false,
        error: { kind: 'Parse', message: `the argument string is not valid Unicode: lone surrogate at index ${bad}` },
        seed: runSeed,
      },
    };
  }
  // Outermost, so that replayed answers are measured too (model replies: in bridgeModels).
  measureCrossings(bridge, ceiling);
  return { bridge, usage, misuse, journal, trace, ceiling };
}

/** Ends the run's trace, if it has one, with `outcome`; answers `outcome`. */
function finishTrace(trace, outcome) {
  trace?.finish(outcome);
  return outcome;
}

/** The clock the prompt sees (`sys.now`, the run's start), by chain: the host's, unless a journal answers. */
const promptClock = () => Date.now();

function instanceFailed(error, seed) {
  const detail = error instanceof Error ? error.message : String(error);
  return {
    ok: false,
    error: { kind: 'Limit', message: `the engine instance failed (${detail}); a fresh instance serves the next run` },
    seed,
  };
}

/** An error reading engine.run's options as the caller gets it: a TypeError (misuse) either way. */
function optionsMisuse(error) {
  if (error instanceof TypeError) return error;
  // An option whose getters or proxy traps throw: still misuse, said as such.
  return new TypeError(`engine.run: the options could not be read (${thrownText(error, 'reading them')})`);
}

/**
 * @param {WebAssembly.Module} module compiled once; every instance is made from it
 * @param {{ uiKind: string, drawSeed?: () => string }} defaults `drawSeed`: how this entry draws a
 *   run's default seed (seeds.js; Web Crypto's `randomSeed` unless the entry has a cheaper CSPRNG)
 */
export async function makeEngine(module, { uiKind, drawSeed = randomSeed }) {
  const first = await instantiate(module); // instantiation errors surface from createEngine itself
  const engineVersion = first.bindings.engineVersion();
  const pool = instancePool(module, first);
  const host = { uiKind, engineVersion, drawSeed };

  async function run(source, options) {
    let checked;
    let wanted;
    try {
      checked = checkRunCall(source, options);
      wanted = wantedParts(checked);
    } catch (error) {
      throw optionsMisuse(error);
    }
    // No await when nothing optional is wanted: the options are read as engine.run is called.
    const parts = wanted.journal || wanted.trace ? await loadParts(wanted) : NO_PARTS;
    let prepared;
    try {
      prepared = prepareRun(source, checked, parts, host);
    } catch (error) {
      throw optionsMisuse(error);
    }
    const { trace } = prepared;
    if (prepared.outcome) return finishTrace(trace, prepared.outcome);
    const { bridge, usage, misuse, ceiling, journal } = prepared;
    if (journal) {
      const refused = await journal.start();
      if (refused) {
        bridge.store?.end();
        return finishTrace(trace, { ok: false, error: refused, seed: bridge.seed });
      }
    }
    /** The outcome as the caller gets it: the journal's part added, then the trace ended with it. */
    const finish = async (/** @type {any} */ outcome) =>
      finishTrace(trace, journal ? await journal.finish(outcome) : outcome);

    let instance;
    try {
      instance = await pool.admit(ceiling, bridge.signal);
    } catch (error) {
      return finish(instanceFailed(error, bridge.seed));
    }
    if (instance === null) {
      bridge.store?.end();
      return finish({ ok: false, error: { kind: 'Cancelled', message: 'the run was cancelled' }, seed: bridge.seed });
    }
    /** @type {(error: unknown) => void} */
    let onFail = () => {};
    const failed = new Promise((resolve) => {
      onFail = (error) => resolve(instanceFailed(error, bridge.seed));
    });
    instance.waiting.add(onFail);
    let done;
    try {
      const outcome = await Promise.race([instance.bindings.runPrompt(source, bridge), failed]);
      done = { ...outcome, seed: outcome.seed ?? bridge.seed };
      // Per-role token totals, when any model reply reported usage.
      if (Object.keys(usage).length) done.usage = usage;
    } catch (error) {
      // The bridge never rejects for prompt failures: a throw means the instance is unusable.
      instance.dead = true;
      done = instanceFailed(error, bridge.seed);
    } finally {
      bridge.store?.end();
      instance.waiting.delete(onFail);
      pool.release(instance, ceiling);
    }
    if (misuse.resolverAnsweredPromise) {
      finishTrace(trace, done);
      throw new TypeError(
        'engine.run: models is a function, so it was called as a role resolver (role, spec) => modelFn, and it answered a Promise: it looks like a model function; pass it by role, e.g. { default: model }',
      );
    }
    return finish(done);
  }

  /** engine.check (docs/check.md): on an instance with room for a run's default ceiling. */
  async function check(source, options) {
    const { checkCheckCall, checkOn } = await (checkModule ??= import('./check.js'));
    let packs;
    try {
      packs = checkCheckCall(source, options);
    } catch (error) {
      if (error instanceof TypeError) throw error;
      throw new TypeError(`engine.check: the options could not be read (${thrownText(error, 'reading them')})`);
    }
    const instance = await pool.admit(DEFAULT_MEMORY_BYTES, new AbortController().signal);
    if (instance === null) throw new Error('engine.check: no engine instance could be had');
    try {
      return checkOn(instance.bindings, source, packs);
    } catch (error) {
      // The module never throws for a prompt: a throw means the instance is unusable.
      instance.dead = true;
      throw new Error(`engine.check: the engine instance failed (${thrownText(error, 'checking')})`);
    } finally {
      pool.release(instance, DEFAULT_MEMORY_BYTES);
    }
  }

  // Test hooks, not part of the public API: debugTrap traps the oldest instance on purpose (a
  // stand-in for an engine bug), so the recovery path can be tested against the real module;
  // instances says how many instances serve the engine; memory the largest wasm memory (bytes) an
  // instance had when a run on it ended; bridgeKeys lists the option keys the
  // module reads and bridgeOf the keys this wrapper sends for `options`, so a test holds the two
  // (and docs/bridge.md) to one list.
  const debugTrap = () => {
    const instance = pool.oldest();
    if (!instance) throw new Error('no live instance to trap');
    instance.bindings.debugTrap();
  };
  return Object.freeze({
    run,
    check,
    engineVersion,
    [Symbol.for('runvil.debugTrap')]: debugTrap,
    [Symbol.for('runvil.instances')]: () => pool.size,
    [Symbol.for('runvil.memory')]: () => pool.peakMemory,
    [Symbol.for('runvil.bridgeKeys')]: () => first.bindings.bridgeKeys(),
    [Symbol.for('runvil.bridgeOf')]: (/** @type {any} */ options) => {
      const checked = checkRunCall('', options);
      const { bridge } = /** @type {any} */ (prepareRun('', checked, NO_PARTS, host));
      return { run: Object.keys(bridge), limits: LIMIT_KEYS, ui: Object.keys(bridge.ui) };
    },
  });
}

/**
 * The ui kind a browser-side entry reports: `browser` in a page or in a worker a page started
 * (Deno's workers also have WorkerGlobalScope, but are servers), else `server`.
 */
export function hostUiKind() {
  if (typeof globalThis.document !== 'undefined') return 'browser';
  const inWorker =
    typeof globalThis.WorkerGlobalScope === 'function' &&
    globalThis instanceof globalThis.WorkerGlobalScope &&
    typeof globalThis.Deno === 'undefined' &&
    typeof globalThis.process === 'undefined';
  return inWorker ? 'browser' : 'server';
}
