/* @ts-self-types="../index.d.ts" */
// @ts-check
// runvil for Node and Bun (export condition `node`; also `main`, so a file import of index.js works
// in Deno and in a page). The wasm is read from next to this file; when a bundle moved this code
// away from it (esbuild or bun build for a server), or Deno runs without --allow-read, the copy
// inlined in wasm-inline.js is used instead, so such builds need no recipe.
import { engineOptions, loadModule } from '../core/load.js';
import { makeEngine, hostUiKind } from '../core/engine.js';

export * from './public.js';
export { directoryStore } from '../stores/directory.js';

async function readFile(url) {
  const fs = await import('node:fs/promises');
  return fs.readFile(url);
}

/** ENOENT (moved by a bundler), or no read permission (Deno's NotCapable / PermissionDenied). */
function isUnreadable(error) {
  return (
    error?.code === 'ENOENT' ||
    error?.code === 'EACCES' ||
    error?.name === 'NotCapable' ||
    error?.name === 'PermissionDenied'
  );
}

async function inlineBytes() {
  const { wasmBytes } = await import('../wasm-inline.js');
  return wasmBytes();
}

async function defaultModule() {
  // A CommonJS bundle of this file has no import.meta.url at all.
  const here = import.meta.url;
  if (typeof here !== 'string') return loadModule(await inlineBytes(), '');
  const url = new URL('../runvil_bg.wasm', here);
  if (url.protocol !== 'file:') return loadModule(url, here); // a page importing index.js
  let bytes;
  try {
    bytes = await readFile(url);
  } catch (error) {
    if (!isUnreadable(error)) throw error;
    bytes = await inlineBytes();
  }
  return loadModule(bytes, here);
}

/** @type {typeof import('../index.d.ts').createEngine} */
export async function createEngine(options = {}) {
  const { wasm } = engineOptions(options);
  const module = wasm === undefined ? await defaultModule() : await loadModule(wasm, import.meta.url, { readFile });
  return makeEngine(module, { uiKind: hostUiKind() });
}
