// @ts-check
// RunvilRunObject: a Durable Object that owns one run (docs/durable.md). It runs the prompt it was
// started with, appends each journal entry to its own storage before the answer goes on to the
// engine, keeps the run's workspace in a RunvilStoreObject (durableObjectStore), and resumes from
// its journal whenever it finds the run unfinished and not running — the isolate was evicted,
// restarted or killed — on the next call or alarm. A client attaches to a run by id (its events
// and outcome as NDJSON) and can cancel it.
//
// Storage of the object (its own keys; the workspace lives in the store object):
//   `r:meta`     { id, source, args, status: 'running' | 'ended', entries, outcome? }
//   `r:e:<n>`    journal entry n (zero-padded), as JSON text; one longer than a storage value
//                is `r:e:<n>` → { parts } and `r:e:<n>:<k>` the pieces
//
// The host supplies models, Packs and the store by overriding methods (models(run), packs(run),
// store(run)); the defaults have no model, no Pack and the workspace `run:<id>` in
// env.RUNVIL_STORE.
import { DurableObject } from 'cloudflare:workers';
import wasmModule from '../runvil_bg.wasm';
import { engineOptions, loadModule } from '../core/load.js';
import { makeEngine } from '../core/engine.js';
import { durableObjectStore } from './durable.js';

const META = 'r:meta';
const ENTRY = 'r:e:';
/** Characters per stored piece of an entry: at most 120,000 bytes serialized (two a character), under the 128 KiB value limit. */
const PIECE = 60_000;
const entryKey = (n) => `${ENTRY}${String(n).padStart(9, '0')}`;
const encoder = new TextEncoder();

let enginePromise;
function sharedEngine() {
  enginePromise ??= (async () => {
    const { wasm = wasmModule } = engineOptions({});
    return makeEngine(await loadModule(wasm, import.meta.url), { uiKind: 'edge' });
  })();
  return enginePromise;
}

export class RunvilRunObject extends DurableObject {
  /**
   * The run going on in this isolate: its promise, abort controller, events so far, listeners.
   * @type {{ controller: AbortController, events: any[], listeners: Set<any>, done: Promise<any> | undefined } | null}
   */
  #live = null;

  // --- what a host overrides --------------------------------------------------------------
  /**
   * The models of the run (engine.run's `models`).
   * @param {{ id: string, args: string }} _run
   */
  models(_run) {
    return {};
  }

  /** @param {{ id: string, args: string }} _run */
  packs(_run) {
    return [];
  }

  /**
   * The run's workspace: by default the workspace `run:<id>` of env.RUNVIL_STORE.
   * @param {{ id: string, args: string }} run
   */
  store(run) {
    return durableObjectStore(/** @type {any} */ (this.env).RUNVIL_STORE, `run:${run.id}`);
  }

  /** The engine (one per isolate by default). */
  engine() {
    return sharedEngine();
  }

  // --- RPC ----------------------------------------------------------------------------------
  /**
   * Starts the run `id` of `source` with `args`, unless it is already known: starting a run again
   * with the same prompt and args answers its status; with others, a TypeError.
   * @param {{ id: string, source: string, args?: string }} start
   */
  async start({ id, source, args = '' }) {
    if (typeof id !== 'string' || id === '')
      throw new TypeError('RunvilRunObject.start: id must be a non-empty string');
    if (typeof source !== 'string') throw new TypeError('RunvilRunObject.start: source must be the prompt text');
    if (typeof args !== 'string') throw new TypeError('RunvilRunObject.start: args must be a string');
    const meta = await this.ctx.storage.get(META);
    if (meta && (meta.source !== source || meta.args !== args || meta.id !== id)) {
      throw new TypeError(
        `RunvilRunObject.start: the run '${meta.id}' was started with another prompt or argument string`,
      );
    }
    if (!meta) await this.ctx.storage.put(META, { id, source, args, status: 'running', entries: 0 });
    await this.#ensure();
    return this.status();
  }

  /** The run's state: `running` (resumed here if no isolate runs it) or `ended` with its outcome. */
  async status() {
    const meta = await this.ctx.storage.get(META);
    if (!meta) return { status: 'unknown' };
    if (meta.status === 'running') await this.#ensure();
    return {
      id: meta.id,
      status: meta.status,
      entries: meta.entries,
      ...(meta.outcome ? { outcome: meta.outcome } : {}),
    };
  }

  /** Cancels the run: it ends `Cancelled` (recorded, so a later resume replays the cancellation). */
  async cancel() {
    const meta = await this.ctx.storage.get(META);
    if (!meta || meta.status !== 'running') return this.status();
    const live = await this.#ensure();
    live?.controller.abort();
    await live?.done;
    return this.status();
  }

  /** The run's journal: its header and entries so far. */
  async journal() {
    const meta = await this.ctx.storage.get(META);
    return meta ? this.#entries(meta.entries) : [];
  }

  /**
   * GET: the run's events as NDJSON, one `{ event }` line each (from the start of the run, a
   * resumed run's replayed ones included), then `{ outcome }`.
   * @param {Request} _request
   */
  async fetch(_request) {
    const meta = await this.ctx.storage.get(META);
    if (!meta) return new Response('no such run\n', { status: 404 });
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    const line = (value) => writer.write(encoder.encode(`${JSON.stringify(value)}\n`)).catch(() => {});
    const live = meta.status === 'running' ? await this.#ensure() : null;
    if (!live) {
      line({ outcome: meta.outcome });
      writer.close().catch(() => {});
    } else {
      for (const event of live.events) line({ event });
      const listener = {
        event: (event) => line({ event }),
        end: (outcome) => {
          line({ outcome });
          writer.close().catch(() => {});
        },
      };
      live.listeners.add(listener);
    }
    return new Response(readable, { headers: { 'content-type': 'application/x-ndjson' } });
  }

  /** An alarm keeps an unfinished run going (and resumes it after the isolate was lost). */
  async alarm() {
    const meta = await this.ctx.storage.get(META);
    if (meta?.status !== 'running') return;
    const live = await this.#ensure();
    await live?.done;
  }

  // --- the run ------------------------------------------------------------------------------
  async #entries(count) {
    const keys = Array.from({ length: count }, (_, n) => entryKey(n));
    const entries = [];
    for (let i = 0; i < keys.length; i += 128) {
      const got = await this.ctx.storage.get(keys.slice(i, i + 128));
      for (const key of keys.slice(i, i + 128)) {
        const value = got.get(key);
        if (typeof value === 'string') entries.push(JSON.parse(value));
        else {
          const parts = await this.ctx.storage.get(Array.from({ length: value.parts }, (_, k) => `${key}:${k}`));
          entries.push(JSON.parse(Array.from({ length: value.parts }, (_, k) => parts.get(`${key}:${k}`)).join('')));
        }
      }
    }
    return entries;
  }

  /** The run in this isolate, started (fresh or resumed from storage) when there is none. */
  async #ensure() {
    if (this.#live) return this.#live;
    const meta = await this.ctx.storage.get(META);
    if (meta?.status !== 'running' || this.#live) return this.#live;
    /** @type {{ controller: AbortController, events: any[], listeners: Set<any>, done: Promise<any> | undefined }} */
    const live = { controller: new AbortController(), events: [], listeners: new Set(), done: undefined };
    this.#live = live;
    live.done = this.#run(meta, live).finally(() => {
      this.#live = null;
    });
    // Alarms keep the object going while the run does, and bring it back after an eviction.
    await this.ctx.storage.setAlarm(Date.now() + 1000);
    return live;
  }

  async #run(meta, live) {
    const storage = this.ctx.storage;
    const entries = await this.#entries(meta.entries);
    let count = meta.entries;
    let unrecorded = false;
    const run = { id: meta.id, args: meta.args };
    const record = async (entry) => {
      try {
        await persist(entry);
      } catch (error) {
        unrecorded = true; // the run stops; it did not end, and resumes later from what was stored
        throw error;
      }
    };
    const persist = async (entry) => {
      // The answer goes on only once its entry is stored; the object's output gate holds every
      // message out of it (model requests, store batches) until the write is durable.
      const text = JSON.stringify(entry);
      const key = entryKey(count);
      if (text.length <= PIECE) await storage.put({ [key]: text, [META]: { ...meta, entries: count + 1 } });
      else {
        const pieces = {};
        const parts = Math.ceil(text.length / PIECE);
        for (let k = 0; k < parts; k++) pieces[`${key}:${k}`] = text.slice(k * PIECE, (k + 1) * PIECE);
        for (const group of groupsOf(Object.entries(pieces), 100)) await storage.put(Object.fromEntries(group));
        await storage.put({ [key]: { parts }, [META]: { ...meta, entries: count + 1 } });
      }
      count++;
    };
    let outcome;
    try {
      const engine = await this.engine();
      outcome = await engine.run(meta.source, {
        args: meta.args,
        models: await this.models(run),
        packs: await this.packs(run),
        store: await this.store(run),
        signal: live.controller.signal,
        ...(entries.length ? { resume: entries } : {}),
        record,
        onEvent: (event) => {
          live.events.push(event);
          for (const l of live.listeners) l.event(event);
        },
      });
    } catch (error) {
      // engine.run rejects only on misuse (a bad option from an override): the run cannot go on.
      const message = error instanceof Error ? error.message : String(error);
      outcome = { ok: false, error: { kind: 'Cancelled', message: `the run could not start: ${message}` } };
    }
    if (!unrecorded) {
      await storage.put(META, { ...meta, entries: count, status: 'ended', outcome });
      await storage.deleteAlarm();
    }
    for (const l of live.listeners) l.end(outcome);
    return outcome;
  }
}

function* groupsOf(items, size) {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
