// Type-checked by runtimes.test.mjs with `deno check`: typical uses of the public API must compile
// against pkg/index.d.ts (strict mode, so untyped callback parameters would fail).
import { createEngine, scriptedModel, memoryStore, version, type Outcome, type ModelFn, type Pack, type RunErrorKind } from '../../pkg/index.js';
const model: ModelFn = async (req) => ({ content: req.role + req.messages.length, finish_reason: 'stop' });
const pack: Pack = { name: 'web', description: 'd', tools: [{ name: 'fetch', description: 'f', parameters: {}, call: async (a, ctx) => ctx.section }] };
const engine = await createEngine({ wasm: new Uint8Array(0) });
const o: Outcome = await engine.run('x', { args: 'a', seed: 1n, models: { default: model, s: scriptedModel(['a', { content: '', finish_reason: 'length' }]) }, packs: [pack], store: memoryStore({ a: 'b' }), limits: { instructions: 5 }, onEvent: (e) => e.event });
if (!o.ok) { const k: RunErrorKind = o.error.kind; console.log(k); } else { const r: string | null = o.result; console.log(r, version); }
