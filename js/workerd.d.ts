// Types of the workerd entry (`runvil/workerd`, and `runvil` under the `workerd` condition):
// everything in index.d.ts, and the Durable Object store, which needs a Durable Object namespace.
// Structural stand-ins keep them standalone (no @cloudflare/workers-types needed).
export * from './index.js';
import type { ModelFn, ModelSpec, Pack, Outcome, RunEvent, Store, JournalEntry } from './index.js';

/** What durableObjectStore needs of a Durable Object namespace binding (`env.RUNVIL_STORE`). */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: any): unknown;
}

/** The storage invariants RunvilStoreObject checks (`verify()`; reads every chunk). */
export interface DurableStoreCheck {
  files: number;
  dirs: number;
  chunks: number;
  /** Versions staged by a batch that was not applied (swept by the next run). */
  stagedVersions: number;
  largestChunk: number;
  /** Empty when every file's chunks are there and no chunk is unreferenced. */
  problems: string[];
}

/**
 * A workspace kept in a Durable Object (one object per workspace name; docs/store.md). Each batch
 * is visible all at once or not at all; a run holds the workspace from open() until the engine
 * calls end(). Failures reach the run as `Vfs` errors.
 */
export interface DurableObjectStore extends Store {
  readonly kind: 'durable-object';
  readonly workspace: string;
  readonly readOnly: boolean;
  /** Called by the engine when a run ends: gives the workspace to the next run. */
  end(run?: object): Promise<void>;
  list(): Promise<string[]>;
  /** The file's bytes, or undefined. */
  readBytes(path: string): Promise<Uint8Array | undefined>;
  /** Adds or replaces files in one batch (it waits for a run holding the workspace). */
  import(
    files:
      | Record<string, string | Uint8Array | ArrayBuffer>
      | Array<{ path: string; data: string | Uint8Array | ArrayBuffer }>,
  ): Promise<void>;
  /** Deletes files (and kept directories) in one batch. */
  delete(...paths: string[]): Promise<void>;
  /** Whether a run holds the workspace and how many wait for it. */
  lease(): Promise<{ held: boolean; waiting: number }>;
  verify(): Promise<DurableStoreCheck>;
}

/**
 * The store of workspace `workspace` in the Durable Object namespace `namespace`, which must be
 * bound to RunvilStoreObject. Throws a TypeError when `namespace` is not a namespace binding.
 */
export function durableObjectStore(
  namespace: DurableObjectNamespaceLike,
  workspace: string,
  options?: { readOnly?: boolean },
): DurableObjectStore;

/** The part of a Durable Object's storage RunvilStoreObject uses (for `options.storage`). */
export interface DurableObjectStorageLike {
  get(key: string | string[]): Promise<any>;
  put(key: string | Record<string, unknown>, value?: unknown): Promise<void>;
  delete(key: string | string[]): Promise<any>;
  list(options?: { prefix?: string; limit?: number; startAfter?: string }): Promise<Map<string, any>>;
  transaction<T>(body: (txn: any) => Promise<T>): Promise<T>;
}

/**
 * The Durable Object class holding one workspace per object. Export it from your Worker
 * (`export { RunvilStoreObject } from 'runvil/workerd'`) and bind a namespace to it (wrangler.toml:
 * `[[durable_objects.bindings]]` and a `new_sqlite_classes` migration).
 */
export declare class RunvilStoreObject {
  /** `options.storage`: a storage to use instead of `ctx.storage` (a subclass's wrapper). */
  constructor(
    ctx: { storage: DurableObjectStorageLike },
    env: unknown,
    options?: { storage?: DurableObjectStorageLike },
  );
  /** Whether a run holds the workspace and how many wait for it. */
  leaseState(): { held: boolean; waiting: number };
  /** File paths and kept directories. */
  list(): Promise<{ files: string[]; dirs: string[] }>;
  verify(): Promise<DurableStoreCheck>;
}

/** A run a RunvilRunObject owns, as its overrides see it. */
export interface DurableRun {
  id: string;
  args: string;
}

/** A RunvilRunObject's answer to start(), status() and cancel(). */
export type DurableRunStatus =
  | { status: 'unknown' }
  | { id: string; status: 'running'; entries: number }
  | { id: string; status: 'ended'; entries: number; outcome: Outcome };

/**
 * A Durable Object that owns one run (docs/durable.md): it journals the run in its storage, keeps
 * the workspace in a RunvilStoreObject (default: workspace `run:<id>` of `env.RUNVIL_STORE`) and
 * resumes the run from its journal after the isolate was evicted, restarted or killed. Subclass it
 * to give the run models and Packs; `fetch` answers the run's events and outcome as NDJSON.
 */
export declare class RunvilRunObject {
  constructor(
    ctx: { storage: DurableObjectStorageLike & { setAlarm(ms: number): Promise<void>; deleteAlarm(): Promise<void> } },
    env: unknown,
  );
  protected readonly env: any;
  /** The run's models (engine.run's `models`). Default: none. */
  models(
    run: DurableRun,
  ):
    | Record<string, ModelFn>
    | ((role: string, spec: ModelSpec) => ModelFn | undefined)
    | Promise<Record<string, ModelFn>>;
  /** The run's Packs. Default: none. */
  packs(run: DurableRun): Pack[] | Promise<Pack[]>;
  /** The run's store. Default: durableObjectStore(env.RUNVIL_STORE, `run:${run.id}`). */
  store(run: DurableRun): Store | Promise<Store>;
  /** The engine (default: one per isolate). */
  engine(): Promise<{ run(source: string, options?: object): Promise<Outcome> }>;
  /** Starts run `id` (or answers the status of the run already started with this prompt and args). */
  start(start: { id: string; source: string; args?: string }): Promise<DurableRunStatus>;
  status(): Promise<DurableRunStatus>;
  /** Cancels the run: it ends `Cancelled`, recorded. */
  cancel(): Promise<DurableRunStatus>;
  /** The run's journal so far. */
  journal(): Promise<JournalEntry[]>;
  /** The run's events (`{ event }` lines, from its start) and then `{ outcome }`, NDJSON. */
  fetch(request?: unknown): Promise<{ status: number; headers: unknown; body: unknown }>;
  alarm(): Promise<void>;
}

/** One line of a RunvilRunObject's NDJSON stream. */
export type DurableRunLine = { event: RunEvent } | { outcome: Outcome };
