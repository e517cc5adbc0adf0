/* @ts-self-types="../index.d.ts" */
// @ts-check
// runvil for Node and Bun (export condition `node`; also `main`, so a file import of index.js works
// in Deno and in a page). The wasm is read from next to this file; when a bundle moved this code
// away from it (esbuild or bun build for a server), or Deno runs without --allow-read, the copy
// inlined in wasm-inline.js is used instead, so such builds need no recipe.
import { compileOwnBytes, engineOptions, holdingTheProcess, loadModule, releasableBytes } from '../core/load.js';
import { makeEngine, hostUiKind } from '../core/engine.js';
import { deviceSeeds } from '../core/seeds.js';

export * from './public.js';
export { directoryStore } from '../stores/directory.js';

/**
 * `node:fs`, or undefined where the host has none (a page importing this file). Taken with
 * `process.getBuiltinModule` where there is one (Node 20.16 and later, Deno, Bun): a dynamic
 * import is a trip through Node's module loader, over a millisecond the first time.
 * @returns {Promise<typeof import('node:fs') | undefined>}
 */
async function nodeFs() {
  const host = globalThis.process;
  if (typeof host?.getBuiltinModule === 'function') return host.getBuiltinModule('node:fs');
  return import('node:fs').catch(() => undefined);
}

/** `node:fs`, or an error naming what could not be read without it. */
async function fsToRead(url) {
  const fs = await nodeFs();
  if (!fs) throw new Error(`runvil: cannot read ${url.href}: this host has no node:fs`);
  return fs;
}

async function readFile(url) {
  return (await fsToRead(url)).promises.readFile(url);
}

/**
 * Reads the package's own module into a buffer whose memory can be given back once it is compiled
 * (load.js, `releasableBytes`): on Node 20 that is a resizable buffer of exactly the file's size.
 */
async function readOwnModule(url) {
  const file = await (await fsToRead(url)).promises.open(url, 'r');
  try {
    const { size } = await file.stat();
    const bytes = releasableBytes(size);
    let filled = 0;
    while (filled < size) {
      const { bytesRead } = await file.read(bytes, filled, size - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled !== size) throw new Error(`runvil: ${url.href} changed while it was read (${filled} of ${size} bytes)`);
    return bytes;
  } finally {
    await file.close();
  }
}

/**
 * How this entry draws a run's default seed: from the system's random device in Node and Bun
 * (seeds.js says why), Web Crypto elsewhere. Deno asks for read permission instead of refusing,
 * and its Web Crypto costs nothing to load, so Deno keeps it.
 */
async function seedSource() {
  if (typeof (/** @type {any} */ (globalThis).Deno) !== 'undefined') return undefined;
  const fs = await nodeFs();
  return fs ? deviceSeeds(fs) : undefined;
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
  return wasmBytes(releasableBytes);
}

async function defaultModule() {
  // A CommonJS bundle of this file has no import.meta.url at all.
  const here = import.meta.url;
  if (typeof here !== 'string') return compileOwnBytes(await inlineBytes(), '');
  const url = new URL('../runvil_bg.wasm', here);
  if (url.protocol !== 'file:') return loadModule(url, here); // a page importing index.js
  let bytes;
  try {
    bytes = await readOwnModule(url);
  } catch (error) {
    if (!isUnreadable(error)) throw error;
    bytes = await inlineBytes();
  }
  return compileOwnBytes(bytes, '');
}

/** @type {typeof import('../index.d.ts').createEngine} */
export async function createEngine(options = {}) {
  const { wasm } = engineOptions(options);
  const module = await holdingTheProcess(
    wasm === undefined ? defaultModule() : loadModule(wasm, import.meta.url, { readFile }),
  );
  return makeEngine(module, { uiKind: hostUiKind(), drawSeed: await seedSource() });
}
