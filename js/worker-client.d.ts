// Types of runvil/worker: the default entry's API, with createEngine starting the engine in a
// Web Worker (docs/worker.md).
export * from './index.d.ts';
import type { Engine, WasmSource } from './index.d.ts';

export interface WorkerEngine extends Engine {
  /** The Worker running the engine. */
  readonly worker: Worker;
  /** Ends the worker at once; runs in flight end `Cancelled`. */
  terminate(): void;
}

export interface CreateWorkerEngineOptions {
  /** A Worker already running this package's worker.js (e.g. made by a bundler); default: one started here. */
  worker?: Worker;
  /** What the worker loads the engine from (a URL or string is resolved against the page). */
  wasm?: WasmSource;
}

/** Starts a worker running the engine; the page gets the whole `engine.run` API. */
export function createEngine(options?: CreateWorkerEngineOptions): Promise<WorkerEngine>;
/** The same function, for pages that also import the default entry. */
export const createWorkerEngine: typeof createEngine;
