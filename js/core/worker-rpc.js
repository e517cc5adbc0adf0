// @ts-check
// The message protocol between a page and the engine's worker (runvil/worker). Both sides run one
// Peer over the worker's port. Values cross by structured clone, except:
//
//   - a function becomes { $fn: id }: the other side gets a stub that calls it back and resolves
//     with its answer (or rejects with an Error carrying its message);
//   - an AbortSignal becomes { $signal: id, aborted }: the other side gets a signal that aborts
//     when this one does.
//
// Everything a run hands across is registered in the run's scope and dropped when the run ends,
// so functions and signals of finished runs do not pile up.
import { isPlainObject } from './values.js';

function isSignal(value) {
  return typeof AbortSignal === 'function' && value instanceof AbortSignal;
}

/** An Error's message for the other side; what the engine would make of any other thrown value. */
function errorMessage(error) {
  if (error instanceof Error && typeof error.message === 'string') return error.message;
  if (typeof error === 'string') return error;
  return `a host function threw ${error === null ? 'null' : typeof error}, not an Error`;
}

export class Peer {
  /**
   * @param {{
   *   postMessage(message: unknown): void,
   *   addEventListener(type: 'message', fn: (e: MessageEvent) => void): void,
   * }} port
   * @param {{ onMessage?: (message: any) => void }} [options] told every message that is not the protocol's
   */
  constructor(port, { onMessage } = {}) {
    this.port = port;
    this.nextId = 1;
    /** id -> function this side exposes */
    this.functions = new Map();
    /** id -> { resolve, reject } of calls waiting for the other side */
    this.calls = new Map();
    /** id -> AbortController standing for a signal of the other side */
    this.remoteSignals = new Map();
    /** run id -> its scope, on both sides */
    this.scopes = new Map();
    this.onMessage = onMessage;
    port.addEventListener('message', (event) => this.receive(event.data));
  }

  post(message) {
    this.port.postMessage(message);
  }

  /** A scope collects what run `run` registered on this side; `release(scope)` drops it. */
  scope(run) {
    const scope = { run, functions: [], signals: [], cleanups: [] };
    this.scopes.set(run, scope);
    return scope;
  }

  release(scope) {
    this.scopes.delete(scope.run);
    for (const id of scope.functions) this.functions.delete(id);
    for (const id of scope.signals) this.remoteSignals.delete(id);
    for (const cleanup of scope.cleanups) cleanup();
  }

  /** `value` ready for postMessage: functions and signals replaced by handles registered in `scope`. */
  encode(value, scope, owner) {
    if (typeof value === 'function') {
      const id = this.nextId++;
      this.functions.set(id, owner === undefined ? value : value.bind(owner));
      scope.functions.push(id);
      return { $fn: id };
    }
    if (isSignal(value)) {
      const id = this.nextId++;
      if (!value.aborted) {
        const onAbort = () => this.post({ type: 'abort', signal: id });
        value.addEventListener('abort', onAbort, { once: true });
        scope.cleanups.push(() => value.removeEventListener('abort', onAbort));
      }
      return { $signal: id, aborted: value.aborted };
    }
    if (Array.isArray(value)) return value.map((item) => this.encode(item, scope));
    if (isPlainObject(value)) {
      const out = {};
      for (const [key, item] of Object.entries(value)) out[key] = this.encode(item, scope, value);
      return out;
    }
    return value;
  }

  /** The other side's handles turned back into callable stubs and live signals. */
  decode(value, scope) {
    if (Array.isArray(value)) return value.map((item) => this.decode(item, scope));
    if (isPlainObject(value)) {
      if (typeof value.$fn === 'number' && Object.keys(value).length === 1) {
        const id = value.$fn;
        return (...args) => this.call(id, args, scope);
      }
      if (typeof value.$signal === 'number' && typeof value.aborted === 'boolean' && Object.keys(value).length === 2) {
        const controller = new AbortController();
        if (value.aborted) controller.abort();
        else {
          this.remoteSignals.set(value.$signal, controller);
          scope.signals.push(value.$signal);
        }
        return controller.signal;
      }
      const out = {};
      for (const [key, item] of Object.entries(value)) out[key] = this.decode(item, scope);
      return out;
    }
    return value;
  }

  /** Calls function `fn` of the other side; its arguments may hold functions and signals. */
  call(fn, args, scope) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject, scope });
      this.post({ type: 'call', id, run: scope.run, fn, args: this.encode(args, scope) });
    });
  }

  async answer({ id, run, fn, args }) {
    const target = this.functions.get(fn);
    // What the call hands over lives as long as its run (a model function a `models` function
    // chose is called later); a call of an ended run gets a scope nobody keeps.
    const scope = this.scopes.get(run) ?? { run, functions: [], signals: [], cleanups: [] };
    try {
      if (!target) throw new Error('this function belongs to a run that has ended');
      const value = await target(...this.decode(args, scope));
      // Answers are plain data (model replies, tool results, store listings, bytes).
      this.post({ type: 'return', id, ok: true, value: this.encode(value, scope) });
    } catch (error) {
      this.post({ type: 'return', id, ok: false, message: errorMessage(error) });
    }
  }

  receive(message) {
    if (!message || typeof message !== 'object') return;
    switch (message.type) {
      case 'call':
        this.answer(message);
        return;
      case 'return': {
        const pending = this.calls.get(message.id);
        if (!pending) return;
        this.calls.delete(message.id);
        if (message.ok) pending.resolve(this.decode(message.value, pending.scope));
        else pending.reject(new Error(message.message));
        return;
      }
      case 'abort':
        this.remoteSignals.get(message.signal)?.abort();
        return;
      default:
        this.onMessage?.(message);
    }
  }
}
