/* @ts-self-types="./index.d.ts" */
// runvil: the default entry point (Node, Deno, Bun, browsers, bundlers).
import { loadModule } from './load.js';
import { makeEngine } from './engine.js';

export { memoryStore } from './store.js';
export { indexedDbStore, deleteIndexedDbStore } from './idb-store.js';
export { scriptedModel } from './models.js';
export { openAIChatModel, wireToolName } from './openai.js';
export { webPack, userInputPack, htmlToText, USER_INPUT_PRELUDE } from './packs.js';
export { version } from './version.js';

const DEFAULT_WASM = new URL('./runvil_bg.wasm', import.meta.url);

/**
 * @param {{ wasm?: WebAssembly.Module | ArrayBuffer | ArrayBufferView | URL | string }} [options]
 */
export async function createEngine(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('createEngine: options must be an object');
  const { wasm = DEFAULT_WASM } = options;
  const module = await loadModule(wasm, import.meta.url);
  return makeEngine(module, { uiKind: inBrowser() ? 'browser' : 'server' });
}

/** A page, or a worker a page started (Deno's workers also have WorkerGlobalScope, but are servers). */
function inBrowser() {
  if (typeof globalThis.document !== 'undefined') return true;
  return typeof globalThis.WorkerGlobalScope === 'function' && globalThis instanceof globalThis.WorkerGlobalScope
    && typeof globalThis.Deno === 'undefined' && typeof globalThis.process === 'undefined';
}
