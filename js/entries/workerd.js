/* @ts-self-types="../workerd.d.ts" */
// @ts-check
// runvil/workerd: the entry point for Cloudflare Workers (export condition `workerd`). workerd
// refuses to compile wasm from bytes at run time, so the module arrives as a wasm module binding of
// the bundled file (wrangler and workerd configs both turn a .wasm import into one).
import wasmModule from '../runvil_bg.wasm';
import { engineOptions, loadModule } from '../core/load.js';
import { makeEngine } from '../core/engine.js';

export * from './public.js';
// The Durable Object store works only here: a Durable Object namespace exists only in workerd.
export { durableObjectStore } from '../stores/durable.js';
export { RunvilStoreObject } from '../stores/durable-object.js';
export { RunvilRunObject } from '../stores/durable-run.js';

/**
 * `options.wasm` defaults to the bundled module (workerd compiles no bytes: pass a Module).
 * @type {typeof import('../workerd.d.ts').createEngine}
 */
export async function createEngine(options = {}) {
  const { wasm = wasmModule } = engineOptions(options);
  const module = await loadModule(wasm, import.meta.url);
  return makeEngine(module, { uiKind: 'edge' });
}
