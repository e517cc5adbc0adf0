/* @ts-self-types="../index.d.ts" */
// @ts-check
// runvil for browsers, web workers and bundlers (export conditions `browser`, `worker`, `default`).
// No `node:` import anywhere in its graph. The wasm is located with
// `new URL('./runvil_bg.wasm', import.meta.url)`, the pattern Vite, webpack, Parcel and Rollup's
// URL plugins follow: they emit the file as an asset and rewrite the URL.
import { engineOptions, loadModule } from '../core/load.js';
import { makeEngine, hostUiKind } from '../core/engine.js';

export * from './public.js';

/**
 * Vite 7's dev server pre-bundles dependencies into node_modules/.vite/deps/ and leaves the wasm
 * behind (its dev server then answers that URL with the page). The package itself is still served
 * from node_modules/runvil/, so that is where the wasm is looked for next.
 */
function preBundledFallback(base) {
  const url = new URL(base);
  const match = /^(.*\/node_modules\/)\.vite\/deps[^/]*\/[^/]*$/.exec(url.pathname);
  return match ? new URL(`${match[1]}runvil/runvil_bg.wasm`, url) : undefined;
}

async function defaultModule() {
  try {
    return await loadModule(new URL('../runvil_bg.wasm', import.meta.url), import.meta.url);
  } catch (error) {
    const fallback = preBundledFallback(import.meta.url);
    if (!fallback) throw error;
    return loadModule(fallback, import.meta.url).catch(() => {
      throw error;
    });
  }
}

/** @type {typeof import('../index.d.ts').createEngine} */
export async function createEngine(options = {}) {
  const { wasm } = engineOptions(options);
  const module = wasm === undefined ? await defaultModule() : await loadModule(wasm, import.meta.url);
  return makeEngine(module, { uiKind: hostUiKind() });
}
