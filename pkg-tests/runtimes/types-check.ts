// Type-checked by runtimes.test.mjs with `deno check`: typical uses of the public API must compile
// against pkg/index.d.ts (strict mode, so untyped callback parameters would fail).
import { createEngine, scriptedModel, memoryStore, version, type Outcome, type ModelFn, type Pack, type RunErrorKind } from '../../pkg/index.js';
const model: ModelFn = async (req) => ({ content: req.role + req.messages.length, finish_reason: 'stop' });
const pack: Pack = { name: 'web', description: 'd', tools: [{ name: 'fetch', description: 'f', parameters: {}, call: async (a, ctx) => ctx.section }] };
const engine = await createEngine({ wasm: new Uint8Array(0) });
const o: Outcome = await engine.run('x', { args: 'a', seed: 1n, models: { default: model, s: scriptedModel(['a', { content: '', finish_reason: 'length' }]) }, packs: [pack], store: memoryStore({ a: 'b' }), limits: { instructions: 5 }, onEvent: (e) => e.event });
if (!o.ok) { const k: RunErrorKind = o.error.kind; console.log(k); } else { const r: string | null = o.result; console.log(r, version); }
// The adapter's options, request.emit, reply usage and outcome.usage.
import { openAIChatModel, wireToolName, type UsageTotals } from '../../pkg/index.js';
const ai: ModelFn = openAIChatModel({ baseURL: 'http://127.0.0.1:1/v1', model: 'm', maxRetries: 1, timeoutMs: 10, retryDelayMs: 1, params: { seed: 1 }, onRetry: (i) => i.attempt + i.delay_ms, unknownToolRetries: 0, stream: true });
const counted: ModelFn = async (req) => { req.emit?.('model_note', { n: 1 }); return { content: wireToolName('x'), finish_reason: 'content_filter', usage: { input_tokens: 1, output_tokens: 2, cached_tokens: 0 }, reasoning_content: 'r' }; };
const totals: UsageTotals | undefined = o.usage?.default;
console.log(ai, counted, totals?.calls);
// aiSdkModel takes any object shaped like an AI SDK LanguageModelV2.
import { aiSdkModel, type AiSdkLanguageModel } from '../../pkg/index.js';
const lm: AiSdkLanguageModel = { specificationVersion: 'v2', provider: 'p', modelId: 'm', doGenerate: async (o: { prompt: unknown[] }) => o.prompt, doStream: async () => ({}) };
const viaSdk: ModelFn = aiSdkModel(lm, { stream: true, callOptions: { temperature: 0, providerOptions: { p: { x: 1 } } }, maxRetries: 1, onRetry: (i) => i.reason, unknownToolRetries: 0 });
console.log(viaSdk);
// The IndexedDB store and runvil/worker.
import { indexedDbStore, type IndexedDbStore } from '../../pkg/index.js';
import { createEngine as createWorkerEngine, memoryStore as workerMemoryStore, type WorkerEngine } from '../../pkg/worker-client.js';
const openIdb: (name: string) => Promise<IndexedDbStore> = (name) => indexedDbStore(name, { durability: 'strict' });
const startWorker: () => Promise<WorkerEngine> = () => createWorkerEngine({ wasm: 'runvil_bg.wasm' });
console.log(openIdb, startWorker, workerMemoryStore({ a: 'b' }).kind);
