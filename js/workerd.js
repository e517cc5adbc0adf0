/* @ts-self-types="./index.d.ts" */
// runvil/workerd: the entry point for Cloudflare Workers (workerd). workerd refuses to compile wasm
// from bytes at run time, so the module arrives as a wasm module binding of the bundled file.
import wasmModule from './runvil_bg.wasm';
import { loadModule } from './load.js';
import { makeEngine } from './engine.js';

export { memoryStore } from './store.js';
export { indexedDbStore, deleteIndexedDbStore } from './idb-store.js';
export { scriptedModel } from './models.js';
export { openAIChatModel, wireToolName } from './openai.js';
export { webPack, userInputPack, htmlToText, USER_INPUT_PRELUDE } from './packs.js';
export { version } from './version.js';

/**
 * @param {{ wasm?: WebAssembly.Module }} [options] defaults to the bundled module
 */
export async function createEngine(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('createEngine: options must be an object');
  const { wasm = wasmModule } = options;
  const module = await loadModule(wasm, import.meta.url);
  return makeEngine(module, { uiKind: 'edge' });
}
