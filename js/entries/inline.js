/* @ts-self-types="../index.d.ts" */
// @ts-check
// runvil/inline (and the `deno` export condition): the wasm travels inside the JavaScript, base64
// in wasm-inline.js, so nothing has to be located at run time. For bundlers without an asset
// pipeline (esbuild, bun build) and for Deno, which reads no file without --allow-read but may
// import modules. A third more to download than the .wasm itself (base64), so browsers get
// browser.js by default.
import { wasmBytes } from '../wasm-inline.js';
import { compileOwnBytes, engineOptions, holdingTheProcess, loadModule, releasableBytes } from '../core/load.js';
import { makeEngine, hostUiKind } from '../core/engine.js';

export * from './public.js';

/** @type {typeof import('../index.d.ts').createEngine} */
export async function createEngine(options = {}) {
  const { wasm } = engineOptions(options);
  const module = await holdingTheProcess(
    wasm === undefined || wasm === null
      ? compileOwnBytes(wasmBytes(releasableBytes), '')
      : loadModule(wasm, import.meta.url),
  );
  return makeEngine(module, { uiKind: hostUiKind() });
}
