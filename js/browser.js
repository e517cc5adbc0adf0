/* @ts-self-types="./index.d.ts" */
// runvil for browsers, web workers and bundlers (export conditions `browser`, `worker`, `default`).
// No `node:` import anywhere in its graph. The wasm is located with
// `new URL('./runvil_bg.wasm', import.meta.url)`, the pattern Vite, webpack, Parcel and Rollup's
// URL plugins follow: they emit the file as an asset and rewrite the URL.
import { engineOptions, loadModule } from './load.js';
import { makeEngine } from './engine.js';

export * from './public.js';

/**
 * @param {{ wasm?: WebAssembly.Module | ArrayBuffer | ArrayBufferView | URL | string }} [options]
 */
export async function createEngine(options = {}) {
  const { wasm = new URL('./runvil_bg.wasm', import.meta.url) } = engineOptions(options);
  const module = await loadModule(wasm, import.meta.url);
  return makeEngine(module, { uiKind: typeof globalThis.document === 'undefined' ? 'server' : 'browser' });
}
