// Type declarations for the runvil package: the contract of its public API (what a host may rely
// on). Shared by the default entry (`runvil`) and the workerd entry (`runvil/workerd`).

/** The package version (equals the engine crate version). */
export const version: string;

// ---- host types -----------------------------------------------------------------------------
// These declarations need no DOM or Node lib (a project with `lib: ["es2022"]` alone compiles
// against them). Where the project's libs declare the real host type, it is used (so a request's
// signal can go straight to fetch); otherwise a structural stand-in with what runvil uses.

type GlobalValue<Name extends string> = typeof globalThis extends { [K in Name]: infer V } ? V : never;
type HostInstance<Name extends string, Fallback> = [GlobalValue<Name>] extends [never]
  ? Fallback
  : GlobalValue<Name> extends { prototype: infer I }
    ? I
    : Fallback;

/** An `AbortSignal` as far as runvil uses one. */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: any;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
/** The host's `AbortSignal` when its lib declares one, else `AbortSignalLike`. */
export type HostAbortSignal = HostInstance<'AbortSignal', AbortSignalLike>;

/** A `Blob` or `File` as far as `indexedDbStore`'s import reads one. */
export interface BlobLike {
  readonly size: number;
  arrayBuffer(): Promise<ArrayBuffer>;
}
/** The host's `Blob` when its lib declares one, else `BlobLike`. */
export type HostBlob = HostInstance<'Blob', BlobLike>;

/** A compiled `WebAssembly.Module` (opaque; TypeScript's own declaration is an empty interface too). */
export interface WasmModule {}

/** A `URL` as far as runvil reads one. */
export interface URLLike {
  readonly href: string;
}

/** A `fetch` as far as runvil's adapters call it; the host's own `fetch` fits. */
export type FetchLike = (input: string, init?: any) => Promise<any>;

/** What `createEngine` accepts as the wasm module; absent = the bundled `runvil_bg.wasm`. */
export type WasmSource = WasmModule | ArrayBuffer | ArrayBufferView | URLLike | string;

export interface CreateEngineOptions {
  /**
   * The escape hatch when the bundled module cannot be found (docs/packaging.md): a compiled
   * module, its bytes, or where to fetch it from (file: URLs only in Node, Bun and Deno).
   */
  wasm?: WasmSource;
}

/** Compiles the module once; the engine serves many runs, concurrently. */
export function createEngine(options?: CreateEngineOptions): Promise<Engine>;

export interface Engine {
  /**
   * Runs a prompt. Resolves for every outcome of the prompt itself, failures included; rejects only
   * on API misuse, with a TypeError that says what is wrong.
   */
  run(source: string, options?: RunOptions): Promise<Outcome>;
  /**
   * Every static error of a prompt, found without running anything (no block runs, no model or
   * tool is called), in source order; `[]` for a clean prompt. Each message is the one a run
   * reports for that error. Rejects only on API misuse, with a TypeError.
   */
  check(source: string, options?: CheckOptions): Promise<Diagnostic[]>;
  /** The version reported by the wasm module. */
  readonly engineVersion: string;
}

export interface CheckOptions {
  /**
   * The Packs the host would serve: a `uses:` entry none of them satisfies is a
   * `RequirementsUnmet` diagnostic, as the run reports it. Without it, Packs are not checked.
   */
  packs?: Pack[];
}

/** One static finding of `engine.check` (docs/check.md). */
export interface Diagnostic {
  /** `error`: a run reports it when it gets there; `warning`: almost surely wrong, though no run fails on it. */
  severity: 'error' | 'warning';
  kind: RunErrorKind;
  /** The run's message for this error, word for word. */
  message: string;
  /** 1-based file line. */
  line: number;
  /** 1-based column, in characters; 1 where only the line is known (Lua syntax errors). */
  column: number;
  /** The heading of the section it is in (`## Main`); null in the frontmatter, the H1 body and the shared library. */
  section: string | null;
}

export interface RunOptions {
  /** The run's argument string; default `''`. Must be well-formed Unicode (else a `Parse` outcome). */
  args?: string;
  /** Run seed: an integer (or bigint) in the u64 range or a decimal string; default random. */
  seed?: number | bigint | string;
  /** Role label -> model function, or a function choosing one per role. */
  models?: Record<string, ModelFn> | ((role: string, spec: ModelSpec) => ModelFn | undefined);
  /** The Packs this host serves (the Pack `subagents` is always present). */
  packs?: Pack[];
  /** Default: a fresh empty memory store. */
  store?: Store;
  /** Cancels the run (outcome kind `Cancelled`). */
  signal?: AbortSignalLike;
  /** Observer: every run event, in order. */
  onEvent?: (event: RunEvent) => void;
  limits?: Limits;
  /** Default: `{ kind: 'browser' | 'server' | 'edge', interactive: false }` by host. */
  ui?: { kind?: string; interactive?: boolean };
  /**
   * Keep the run's journal (docs/journal.md): `true` puts it on `outcome.journal`; a function gets
   * each entry as it is made, in order, and the run waits for its promise before it goes on.
   */
  record?: boolean | ((entry: JournalEntry) => void | Promise<void>);
  /** Replays a recorded journal: no model, tool or operator is called; `models`/`packs` are not needed. */
  replay?: Journal;
  /** Replays these entries (a journal's first ones), then goes on live with `models`, `packs`, `store`. */
  resume?: JournalEntry[];
  /**
   * A resume over a call of a tool marked `idempotent: false` that went out and got no answer:
   * `'refuse'` (the default) ends the run at once with a `Tool` error naming the tool, recording
   * nothing; `'retry'` makes the call again (docs/durable.md).
   */
  resumeInFlight?: 'refuse' | 'retry';
  /**
   * An OpenTelemetry `Tracer` (e.g. `trace.getTracer('app')` of `@opentelemetry/api`): the run is
   * traced as spans named by the GenAI semantic conventions (`invoke_agent`, `chat`,
   * `execute_tool`), docs/providers.md "Tracing". Whatever the tracer throws is ignored.
   */
  tracer?: TracerLike;
  /**
   * Record message contents on the spans: prompts and replies (`gen_ai.input.messages`,
   * `gen_ai.output.messages`), tool arguments and results. Default `false`: no contents.
   */
  traceContent?: boolean;
}

/**
 * What the run uses of an OpenTelemetry `Tracer`; any Tracer of `@opentelemetry/api` is one.
 * Children are parented through `context`, an object whose `getValue(key)` answers the parent
 * span for the API's span key (the run's own span gets no `context`: the host's active one).
 */
export interface TracerLike {
  startSpan(
    name: string,
    options: { kind: number; attributes: Record<string, unknown>; startTime: number },
    context?: TraceContextLike,
  ): SpanLike;
}

/** The span methods the run calls. */
export interface SpanLike {
  setAttribute(key: string, value: string | number | boolean | string[]): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): unknown;
  end(endTime?: number): unknown;
}

/** A context in the shape of `@opentelemetry/api`'s `Context`. */
export interface TraceContextLike {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): TraceContextLike;
  deleteValue(key: symbol): TraceContextLike;
}

/**
 * A run's journal: its header, then one entry per answer the run received from outside
 * (docs/journal.md). Plain JSON.
 */
export type Journal = [JournalHeader, ...JournalEntry[]];

export interface JournalHeader {
  journal: 'runvil-journal';
  version: 1;
  engine: string;
  /** Digests of the prompt (the whole, and each part), to detect a changed prompt. */
  source: { hash: string; parts: { name: string; hash: string }[] };
  args: string;
  seed: string;
  ui: { kind: string; interactive: boolean };
  limits?: RunOptions['limits'];
  /** The Packs as the run saw them, their tools without `call`. */
  packs: (Omit<Pack, 'tools'> & { tools: Omit<PackTool, 'call'>[] })[];
}

/** Answers keyed by chain and the place (`seq`) of the request in that chain. */
export type JournalEntry =
  | JournalHeader
  | ({
      kind: 'model';
      chain: string;
      seq: number;
      entry?: number;
      section: string;
      role: string;
      turn: number;
      request: { messages: number; digest: string };
    } & ({ reply: ModelResponse } | { error: string }))
  | ({ kind: 'tool'; chain: string; seq: number; entry?: number; section: string; tool: string; arguments: unknown } & (
      { output: string } | { error: string }
    ))
  | { kind: 'clock'; chain: string; seq: number; ms: number }
  /** A call of a tool marked `idempotent: false`, logged before it went out. */
  | { kind: 'call'; chain: string; seq: number; entry?: number; section: string; tool: string; arguments: unknown }
  | { kind: 'role'; role: string; bound: boolean }
  | {
      kind: 'store-open';
      listing: { files: { path: string; data?: JournalData }[]; dirs?: string[]; readOnly?: boolean };
    }
  | { kind: 'store-open'; error: string }
  | { kind: 'store-read'; path: string; data: JournalData }
  | { kind: 'store-read'; path: string; error: string }
  | { kind: 'end'; ok: true; result: string | null }
  | { kind: 'end'; ok: false; error: { kind: RunError['kind']; message: string } };

/** Store data in a journal: text as is, bytes as base64; `null` for no contents. */
export type JournalData = string | { base64: string } | null;

export interface Limits {
  instructions?: number;
  memoryBytes?: number;
  maxToolIterations?: number;
  fanoutConcurrency?: number;
  /** Section entries over the whole run (H1 pass, walk, calls, task arms); default 100000. */
  sectionEntries?: number;
}

export type RunErrorKind =
  | 'Lua'
  | 'Tool'
  | 'Model'
  | 'Vfs'
  | 'Determinism'
  | 'RequirementsUnmet'
  | 'Frontmatter'
  | 'Parse'
  | 'Limit'
  | 'Cancelled';

export interface RunError {
  kind: RunErrorKind;
  message: string;
  /** The heading of the section (or `# Title` of the H1 pass) the error ended, when one did. */
  section?: string;
  /**
   * 1-based file line: where a `Frontmatter` or `Parse` error is; for an error a block ended with,
   * the line Lua's message names, else the block's first line.
   */
  line?: number;
  /** 1-based column, for `Frontmatter` and `Parse` errors. */
  column?: number;
}

/** The run seed (decimal u64 string) is always reported, so a run can be repeated. */
export type Outcome =
  | {
      ok: true;
      result: string | null;
      seed: string;
      usage?: Record<string, UsageTotals>;
      journal?: Journal;
      [extra: string]: unknown;
    }
  | {
      ok: false;
      error: RunError;
      seed: string;
      usage?: Record<string, UsageTotals>;
      journal?: Journal;
      [extra: string]: unknown;
    };

/** Token counts a model reply reports (`ModelResponse.usage`). */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  /** Input tokens served from the provider's prompt cache, when it says. */
  cached_tokens?: number;
  /** Output tokens spent on reasoning, when it says. */
  reasoning_tokens?: number;
}

/**
 * A role's totals in `outcome.usage` (present when any reply of the run reported usage):
 * `calls` counts the replies that reported it.
 */
export interface UsageTotals {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
}

/** A run event, e.g. `{ event: 'tool_result', section, ... }`. */
export interface RunEvent {
  event: string;
  section?: string;
  /**
   * When the wrapper received the event: milliseconds since the epoch, with a fractional part
   * (sub-millisecond) where the host has `performance.now()`.
   */
  time: number;
  [field: string]: unknown;
}

// ---- models ---------------------------------------------------------------------------------

/** The frontmatter entry of a model role (e.g. `writer: {}`). */
export type ModelSpec = Record<string, unknown>;

export interface ToolCall {
  id: string;
  name: string;
  /** The JSON value the model sent. */
  arguments: unknown;
}

export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** The reasoning text the reply that made this assistant record carried (`ModelResponse.reasoning_content`). */
  reasoning_content?: string;
}

export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface ModelRequest {
  role: string;
  spec: ModelSpec;
  /**
   * The whole conversation so far, in a fresh array each round. The records (and the tools) are
   * frozen and shared between rounds: copy a record before changing it (docs/bridge.md).
   */
  messages: Message[];
  /** Absent when the round offers no tools. Its own array each round; the tool objects are frozen. */
  tools?: ToolSpec[];
  section: string;
  turn: number;
  /** The chain of the section entry asking (`'0'` for the main walk and its calls, `'0.1'`, ... for tasks and fanout arms). */
  chain: string;
  /** The section entry's id (its `sys.id`), as the run's events name it. */
  entry: number;
  signal: HostAbortSignal;
  /**
   * Reports an event into the run's event stream (`onEvent`) as
   * `{ event: name, type: name, section, role, turn, ...fields }`; names must be `model_<name>`
   * (not `model_turn_started` / `model_turn_completed`). `openAIChatModel` and `aiSdkModel` report `model_retry`,
   * `model_unknown_tool` and (streaming) `model_delta`; `aiSdkModel` also `model_warning`.
   */
  emit?: (name: string, fields?: Record<string, unknown>) => void;
}

export interface ModelResponse {
  content: string;
  tool_calls?: ToolCall[];
  /** `content_filter`: the provider's filter cut the text short (the text so far is the reply). */
  finish_reason: 'stop' | 'tool_calls' | 'length' | 'content_filter';
  model?: string;
  /** Token counts; reported as a `model_usage` event and summed per role in `outcome.usage`. */
  usage?: Usage;
  /** Reasoning text; kept on the assistant record and sent back with it in later rounds. */
  reasoning_content?: string;
}

export type ModelFn = (request: ModelRequest) => Promise<ModelResponse>;

/** A reply for `scriptedModel`: a string means `{ content, finish_reason: 'stop' }`. */
export type ScriptedReply = string | ModelResponse;

/**
 * A model function answering each call with the next reply; when they run out it throws
 * `Error('scripted model has no reply left (N used)')`.
 */
export function scriptedModel(replies: ScriptedReply[]): ModelFn & { readonly used: number };

// ---- packs ----------------------------------------------------------------------------------

export type JsonSchema = Record<string, unknown>;

export interface ToolContext {
  signal: HostAbortSignal;
  section: string;
  caller: 'model' | 'script';
  callId?: string;
  /** The chain making the call: `0` for the main walk, `0.k` for a task or fanout arm, ... */
  chain?: string;
  /** The calling entry's `sys.id`. */
  entry?: number;
  [extra: string]: unknown;
}

export interface PackTool {
  /** Tool id within the Pack: `fetch` in Pack `web` is `web/fetch`, wire name `web_fetch`. */
  name: string;
  description: string;
  parameters: JsonSchema;
  /** Default `'untrusted'`. */
  trust?: 'trusted' | 'untrusted';
  /** Default `'plain'`. */
  output?: 'plain' | 'structured';
  /**
   * Default `true`: a call may be made twice (a resumed run makes a call again that was in flight
   * when its run stopped). `false`: the journal logs the call before it goes out, and a resume
   * over it unanswered is refused unless `resumeInFlight: 'retry'` (docs/durable.md).
   */
  idempotent?: boolean;
  /** Throw `new Error(modelSafeMessage)` to fail the call. */
  call: (args: any, ctx: ToolContext) => Promise<unknown> | unknown;
}

export interface Pack {
  /** A bare Pack id means `runvil/<id>`; `vendor/name` is another vendor's. */
  name: string;
  description: string;
  tools: PackTool[];
  /** Optional Lua prelude source. */
  prelude?: string;
  /** Set when the Pack cannot serve this run. */
  unavailable?: string | { needs: string; reason?: string };
}

// ---- stores ---------------------------------------------------------------------------------

/** A change the engine hands a store, in the run's order (docs/store.md). */
export type StoreChange =
  { op: 'write'; path: string; data: Uint8Array } | { op: 'mkdir'; path: string } | { op: 'delete'; path: string };

/** What a store holds when a run starts. `data` may be left out and served by read() on demand. */
export interface StoreListing {
  files: { path: string; data?: string | Uint8Array }[];
  dirs?: string[];
  readOnly?: boolean;
}

/** The store bridge: implement these to keep a run's files in your own backend. */
export interface Store {
  /** The listing, read once when a run starts. */
  open(): Promise<StoreListing>;
  /**
   * The file's text (a Uint8Array when it is not UTF-8), or undefined when it does not exist. The
   * engine asks only for files open() listed: undefined for one fails the run with `Vfs`
   * (docs/store.md), never an empty file.
   */
  read(path: string): Promise<string | Uint8Array | undefined>;
  /** Applies a batch of changes in order; every batch of a run lands before engine.run resolves. */
  commit(changes: StoreChange[]): Promise<void>;
  /** Every file path, sorted (for hosts). */
  list?(): Promise<string[]>;
}

export interface MemoryStore extends Store {
  readonly kind: 'memory';
  readonly readOnly: boolean;
  list(): Promise<string[]>;
}

/** An in-memory store, optionally seeded (bytes allowed) and read-only. */
export function memoryStore(
  files?: Record<string, string | Uint8Array | ArrayBuffer>,
  options?: { readOnly?: boolean },
): MemoryStore;

/**
 * A store kept in the browser's IndexedDB (database `runvil-store:<name>`): each batch of a run is
 * one strict-durability transaction, done before `engine.run` resolves; runs take turns through
 * the Web Lock of the same name. Storage failures reach the run as `Vfs` errors (docs/store.md).
 */
export interface IndexedDbStore extends Store {
  readonly kind: 'indexeddb';
  readonly name: string;
  readonly readOnly: boolean;
  /** True where the Web Locks API serializes runs across tabs and workers; false: within this page only. */
  readonly locksAcrossTabs: boolean;
  /** Called by the engine when a run ends: releases the run's lock. */
  end(run?: object): Promise<void>;
  list(): Promise<string[]>;
  /** Every file with its size in bytes, sorted by path. */
  entries(): Promise<{ path: string; size: number }[]>;
  /** The file's bytes, or undefined. */
  readBytes(path: string): Promise<Uint8Array | undefined>;
  /** Deletes files (and kept directories), in one transaction. */
  delete(...paths: string[]): Promise<void>;
  /** Deletes every file and directory. */
  clear(): Promise<void>;
  /** Adds or replaces files in one transaction (a File's path: its webkitRelativePath, else its name). */
  import(
    files:
      | Record<string, string | Uint8Array | ArrayBuffer>
      | Array<{ path: string; data: string | Uint8Array | ArrayBuffer } | HostBlob>,
  ): Promise<void>;
  /** The files (all, or the given paths) as a zip file with stored entries. */
  zip(paths?: string[]): Promise<Uint8Array>;
  /** Closes the database connection; the store cannot be used afterwards. */
  close(): void;
}

/** Opens (creating on first use) the IndexedDB store called `name`. Browsers and workers. */
export function indexedDbStore(
  name: string,
  options?: {
    /** Default: `globalThis.indexedDB` (an `IDBFactory`). */
    indexedDB?: IndexedDbFactory;
    readOnly?: boolean;
    /** What each batch's transaction asks for; default `'strict'` (on disk before the batch counts as done). */
    durability?: 'strict' | 'relaxed' | 'default';
  },
): Promise<IndexedDbStore>;

/** The part of `IDBFactory` the store uses (typed structurally, so non-DOM type checks pass). */
export interface IndexedDbFactory {
  open(name: string, version?: number): unknown;
  deleteDatabase(name: string): unknown;
}

/** Deletes the IndexedDB database behind the store called `name`. */
export function deleteIndexedDbStore(name: string, options?: { indexedDB?: IndexedDbFactory }): Promise<void>;

// ---- reference Packs ------------------------------------------------------------------------

/** The runvil/user-input prelude (defines `input.ask()`), as the language reference gives it. */
export const USER_INPUT_PRELUDE: string;

/** runvil/user-input: `user-input/ask` answers with the operator's next message (trusted). */
export function userInputPack(options?: { ask?: (ctx: ToolContext) => string | Promise<string> }): Pack;

/**
 * runvil/web: `web/fetch` (a page's text, untrusted) and `web/search` (results from `search`,
 * untrusted). Without `search` the Pack needs `runvil/search-provider`.
 */
export function webPack(options?: {
  fetch?: FetchLike;
  search?: (query: string, ctx: ToolContext) => Promise<Array<{ title: string; url: string; description?: string }>>;
}): Pack;

/** The text of an HTML page: scripts, styles and tags removed, entities decoded. */
export function htmlToText(html: string): string;

// ---- MCP servers as Packs -------------------------------------------------------------------

/** A tool as an MCP server lists it (`tools/list`), as far as `mcpPack` reads one. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: { title?: string; [key: string]: unknown };
  execution?: { taskSupport?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** The per-request options `mcpPack` passes the client (the SDK's `RequestOptions`, in part). */
export interface McpRequestOptions {
  signal?: HostAbortSignal;
  timeout?: number;
}

/**
 * What `mcpPack` needs of an MCP client: a connected `Client` of the official MCP TypeScript SDK
 * (`@modelcontextprotocol/sdk/client/index.js`), over any transport, by structure; the package
 * depends on no MCP package.
 */
export interface McpClientLike {
  listTools(
    params?: { cursor?: string },
    options?: McpRequestOptions,
  ): Promise<{ tools: McpToolInfo[]; nextCursor?: string }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: McpRequestOptions,
  ): Promise<unknown>;
  /** The server's `serverInfo`: its `name` gives the default Pack name. */
  getServerVersion?(): { name: string; version?: string; title?: string } | undefined;
  /** A server whose capabilities have no `tools` is not asked for any. */
  getServerCapabilities?(): { tools?: object } | undefined;
}

export interface McpPackOptions {
  /**
   * The Pack's name as the Pack contract takes it: `mcp/everything` (vendor `mcp`, Pack id
   * `everything`: the prompt declares `uses: [mcp/everything]`). Default: `mcp/` and the last
   * `/`-segment of the server's name, lowercased, other characters outside `[a-z0-9._-]` as `_`.
   */
  name?: string;
  /** The tools to serve, by the server's names for them (or the Pack tool names they map to); default all. */
  tools?: string[];
  /** The trust of every tool's output; default `'untrusted'`. */
  trust?: 'trusted' | 'untrusted';
  /** Each call's limit (and the tool listing's); default 60000. */
  timeoutMs?: number;
}

/** A Pack tool made from an MCP tool: `mcpName` is the server's name for it. */
export interface McpPackTool extends PackTool {
  readonly mcpName: string;
}

/**
 * The tools of a connected MCP client as a Pack (listed once, pagination followed). Tool names
 * are lowercased, other characters outside `[a-z0-9._-]` become `_` (two tools meeting on one
 * name reject the promise); `inputSchema` is the tool's `parameters`. A result's text content is
 * the answer (images, audio and resources as a short note of type and size); `structuredContent`
 * of a tool with an `outputSchema` is a structured result (a JSON value to a script) when
 * trusted, its JSON text when untrusted. `isError` results and protocol errors fail the call with
 * the server's text; the run's signal cancels a call in flight (`notifications/cancelled`).
 */
export function mcpPack(client: McpClientLike, options?: McpPackOptions): Promise<Pack & { tools: McpPackTool[] }>;

// ---- provider adapters ----------------------------------------------------------------------

/** Retry options both model adapters take (`openAIChatModel`, `aiSdkModel`). */
export interface ModelRetryOptions {
  /** Retries after the first attempt; default 2. */
  maxRetries?: number;
  /** The first backoff (doubled each retry, jitter over its upper half); default 500. */
  retryDelayMs?: number;
  /** The longest backoff; default 8000. */
  maxRetryDelayMs?: number;
  /** A `retry-after` longer than this fails at once; default 60000. */
  maxRetryAfterMs?: number;
  /** Told before each retry wait (also reported as a `model_retry` run event). */
  onRetry?: (info: { attempt: number; delay_ms: number; reason: string }) => void;
  /** How often a reply calling a tool that was not offered is answered with an error and asked again; default 1. */
  unknownToolRetries?: number;
}

/**
 * A model function for any OpenAI-compatible chat-completions server (tools included). A role's
 * spec `model` overrides `model`; its request options (`temperature`, `top_p`, `max_tokens`,
 * `max_completion_tokens`, `seed`, `stop`, `tool_choice`, `response_format`, `reasoning_effort`,
 * ... see js/README.md) are sent by name, and its `params` object verbatim. Retries 408, 409,
 * 429, 5xx, network errors and timeouts with exponential backoff and jitter, honouring
 * `retry-after-ms` / `retry-after`; the run's signal cancels a request and a wait.
 */
export function openAIChatModel(
  options: {
    /** `.../v1`; a query string (e.g. `?api-version=...`) stays after `/chat/completions`. */
    baseURL: string;
    apiKey?: string;
    model: string;
    fetch?: FetchLike;
    headers?: Record<string, string>;
    /** Request fields sent with every request (a role spec's options override them). */
    params?: Record<string, unknown>;
    /** Each attempt's limit, headers and body included; default 600000 (10 minutes). */
    timeoutMs?: number;
    /** Server-Sent Events: text and reasoning pieces as `model_delta` run events; the reply is unchanged. */
    stream?: boolean;
  } & ModelRetryOptions,
): ModelFn;

/** The name a tool goes by on the wire: itself, or (over 64 characters or other characters) a stem and a hash. */
export function wireToolName(name: string): string;

/**
 * What `aiSdkModel` needs of a Vercel AI SDK language model: the provider specification's
 * LanguageModelV2, V3 or V4 (the providers of AI SDK 5, 6 and 7), by structure; the package does
 * not depend on `ai`.
 */
export interface AiSdkLanguageModel {
  /** `v2`: AI SDK 5 providers; `v3`: AI SDK 6; `v4`: AI SDK 7. */
  readonly specificationVersion: 'v2' | 'v3' | 'v4';
  readonly provider: string;
  readonly modelId: string;
  // `never`: any provider's own call options type fits (aiSdkModel passes AiSdkCallOptions).
  doGenerate(options: never): PromiseLike<unknown>;
  doStream(options: never): PromiseLike<unknown>;
}

/** The call options `aiSdkModel` passes (the specification's names); the prompt and tools are the run's. */
export interface AiSdkCallOptions {
  prompt: unknown[];
  tools?: Array<{ type: 'function'; name: string; description?: string; inputSchema: JsonSchema }>;
  toolChoice?: { type: 'auto' | 'none' | 'required' } | { type: 'tool'; toolName: string };
  abortSignal?: HostAbortSignal;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  responseFormat?: { type: 'text' } | { type: 'json'; schema?: JsonSchema; name?: string; description?: string };
  /** V4 only (AI SDK 7): how much the model reasons; a role spec's `reasoning_effort` or `reasoning`. */
  reasoning?: 'provider-default' | 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';
  headers?: Record<string, string | undefined>;
  providerOptions?: Record<string, Record<string, unknown>>;
  [option: string]: unknown;
}

/**
 * A model function over a Vercel AI SDK language model of specification v2, v3 or v4 (AI SDK 5, 6
 * or 7 providers; `doGenerate`, or `doStream` with `stream: true`). A role spec's options are
 * passed by the call options' names (`temperature`, `max_tokens` / `maxOutputTokens`, `top_p`,
 * `top_k`, `stop`, `seed`, `presence_penalty`, `frequency_penalty`, `response_format`,
 * `tool_choice`, `providerOptions`, `headers`, and for v4 `reasoning_effort` / `reasoning`; its
 * `params` verbatim); others are reported as a `model_warning` event, as are reply parts a Runvil
 * reply has no place for (files, sources, the provider's own tool calls); a provider's
 * tool-approval request is a `Model` error. Retries what the provider marks retryable
 * (`isRetryable`), honouring retry-after; the run's signal is the call's `abortSignal`.
 */
export function aiSdkModel(
  languageModel: AiSdkLanguageModel,
  options?: {
    /** `doStream`: text and reasoning pieces as `model_delta` run events; the reply is unchanged. */
    stream?: boolean;
    /** Call options sent with every call (a role spec's options override them). */
    callOptions?: Partial<AiSdkCallOptions>;
    /** Each attempt's limit (a stream: the longest silence between parts); default 600000. */
    timeoutMs?: number;
  } & ModelRetryOptions,
): ModelFn;
