// @ts-check
// The run's model functions as the bridge calls them (js/README.md, "Model events and usage";
// docs/reliability.md): each call gets `request.emit`, its reply's `usage` is added to the run's
// per-role totals and reported as a `model_usage` event, what the host's function throws becomes
// a plain Error with a model-safe message, and the reply crosses as its JSON text, measured against
// the run's memory ceiling (crossing.js).
//
// A fanout makes thousands of model calls a run, so each call pays for these in one function and
// one promise reaction; the run's optional parts (its tracer, its journal) are each a layer of
// their own, present only in a run that has them. What a call needs is composed once per role and
// run, and nothing is built for an observer the run does not have.
import { replyText } from './crossing.js';
import { guarded, thrownText } from './guard.js';
import { describe, isObject, isThenable } from './values.js';

const WHO = 'the model function';
const USAGE_KEYS = ['input_tokens', 'output_tokens', 'cached_tokens', 'reasoning_tokens'];

/**
 * @typedef {object} RunModels what the run's model calls share
 * @property {((event: object) => void) | undefined} deliver the run's event sink, when it has an
 *   observer (an `onEvent` or a tracer)
 * @property {Record<string, any>} totals the run's per-role usage totals (`outcome.usage`)
 * @property {number} ceiling the run's memory ceiling, in bytes
 * @property {{ resolverAnsweredPromise: boolean }} misuse set when a role resolver answers a promise
 */

/**
 * What a model function's throw reaches the engine as.
 * @param {unknown} error
 * @returns {never}
 */
function rethrown(error) {
  throw new Error(thrownText(error, WHO));
}

/**
 * The check every `request.emit` makes; throws the TypeError a model function's misuse gets.
 * @param {unknown} name
 */
function checkEventName(name) {
  if (
    typeof name !== 'string' ||
    !/^model_[a-z0-9_]+$/.test(name) ||
    name === 'model_turn_started' ||
    name === 'model_turn_completed'
  ) {
    throw new TypeError(
      `request.emit: a model function reports events named model_<name> (got ${describe(name)}${typeof name === 'string' ? ` '${name}'` : ''})`,
    );
  }
}

/**
 * `request.emit` of a run without an observer: the same check, and nothing to report to, so one
 * function serves every request.
 * @param {unknown} name
 */
function emitUnobserved(name) {
  checkEventName(name);
}

/**
 * `request.emit` of a run with an observer: events named after the request's round.
 * @param {any} request
 * @param {(event: object) => void} deliver
 */
function emitTo(request, deliver) {
  return (/** @type {unknown} */ name, /** @type {any} */ fields = {}) => {
    checkEventName(name);
    deliver({
      ...(isObject(fields) ? fields : {}),
      event: name,
      type: name,
      section: request.section,
      role: request.role,
      turn: request.turn,
    });
  };
}

/**
 * Adds a reply's usage, if it reports one, to the run's totals and tells the observer.
 * @param {unknown} reply
 * @param {any} request
 * @param {RunModels} run
 */
function countUsage(reply, request, run) {
  const usage =
    isObject(reply) && isObject(/** @type {any} */ (reply).usage) ? /** @type {any} */ (reply).usage : undefined;
  if (!usage) return;
  const role = String(request.role);
  const sum = (run.totals[role] ??= {
    calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    cached_tokens: 0,
    reasoning_tokens: 0,
  });
  sum.calls += 1;
  for (const key of USAGE_KEYS) if (Number.isFinite(usage[key]) && usage[key] >= 0) sum[key] += usage[key];
  run.deliver?.({
    event: 'model_usage',
    type: 'model_usage',
    section: request.section,
    role,
    turn: request.turn,
    usage: { ...usage },
    totals: { ...sum },
  });
}

/**
 * A model function as the bridge calls it. With `guard`, what `fn` throws or rejects with (and a
 * reply whose usage cannot be read) becomes a plain Error; without, `fn` is already guarded inside
 * (the journal's layer: it records the guarded answers).
 * @param {Function} fn
 * @param {RunModels} run
 * @param {boolean} guard
 */
function bridged(fn, run, guard) {
  const { deliver, ceiling } = run;
  if (!guard) {
    return function modelCall(/** @type {any} */ request) {
      request.emit = deliver === undefined ? emitUnobserved : emitTo(request, deliver);
      return Promise.resolve(fn(request)).then((reply) => {
        countUsage(reply, request, run);
        return replyText(reply, ceiling);
      });
    };
  }
  return function guardedModelCall(/** @type {any} */ request) {
    request.emit = deliver === undefined ? emitUnobserved : emitTo(request, deliver);
    let answer;
    try {
      answer = fn(request);
    } catch (error) {
      return Promise.reject(new Error(thrownText(error, WHO)));
    }
    return Promise.resolve(answer).then((reply) => {
      try {
        countUsage(reply, request, run);
      } catch (error) {
        rethrown(error);
      }
      // Outside the guard: the ceiling's refusal reaches the engine as it is (crossing.js).
      return replyText(reply, ceiling);
    }, rethrown);
  };
}

/** @param {Function} fn */
const guardModel = (fn) => (/** @type {unknown} */ request) => guarded(WHO, fn, undefined, [request]);

/**
 * `wrap` applied to each model function of a role map, or to each a resolver answers. A resolver
 * that throws, or answers anything but a function, binds no model to the role; one answering a
 * promise is the misuse engine.run reports (its rejection is handled here, so none reaches the
 * host as unhandled).
 * @param {any} models a role map or a resolver (role, spec) => modelFn
 * @param {(fn: Function) => Function} wrap
 * @param {RunModels['misuse']} misuse
 */
function eachModel(models, wrap, misuse) {
  if (typeof models === 'function') {
    return (/** @type {string} */ role, /** @type {unknown} */ spec) => {
      let fn;
      try {
        fn = models(role, spec);
      } catch {
        return undefined;
      }
      if (isThenable(fn)) {
        Promise.resolve(fn).catch(() => {});
        misuse.resolverAnsweredPromise = true;
        return undefined;
      }
      return typeof fn === 'function' ? wrap(fn) : undefined;
    };
  }
  return Object.fromEntries(Object.entries(models).map(([role, fn]) => [role, wrap(fn)]));
}

/**
 * The bridge's `models`: the host's role map or resolver, each model function composed once for
 * the run. Layers, outermost first: usage, emit, the guard and the reply's crossing; then the
 * tracer's `chat` span, when the run has a tracer. With a journal, the journal sits inside the
 * tracer and the guard inside the journal, so that it records and replays guarded answers and a
 * replayed reply reports its usage as the recorded one did (journal.js).
 * @param {any} models the host's `models` option (undefined in a replay without models)
 * @param {RunModels} run
 * @param {{ models: (models: any) => any } | undefined} trace
 * @param {{ models: (models: any) => any } | undefined} journal
 */
export function bridgeModels(models, run, trace, journal) {
  if (journal) {
    const journaled = journal.models(eachModel(models ?? {}, guardModel, run.misuse));
    return eachModel(trace ? trace.models(journaled) : journaled, (fn) => bridged(fn, run, false), run.misuse);
  }
  return eachModel(trace ? trace.models(models) : models, (fn) => bridged(fn, run, true), run.misuse);
}
