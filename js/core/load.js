// @ts-check
// Turns the `wasm` option of createEngine into a compiled WebAssembly.Module. Portable: no `node:`
// import here (browser and worker builds include this file); an entry that can read files passes
// `readFile` for file: URLs.

/** Where a consumer reads what to do when the module is not where it was looked for. */
const HELP = 'see "Loading the wasm" in docs/packaging.md (or pass createEngine({ wasm }))';

function isBytes(value) {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

function asUint8Array(bytes) {
  if (bytes instanceof Uint8Array) return bytes;
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const hex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ');

/**
 * Compiles bytes, first checking they are a wasm module at all: a dev server or a host that rewrites
 * unknown paths answers a page, and the raw `expected magic word 00 61 73 6d` says nothing useful.
 */
async function compileBytes(bytes, where) {
  const view = asUint8Array(bytes);
  const magic = view.subarray(0, 4);
  if (!(magic.length === 4 && magic[0] === 0 && magic[1] === 0x61 && magic[2] === 0x73 && magic[3] === 0x6d)) {
    const head = new TextDecoder().decode(view.subarray(0, 256)).trimStart().toLowerCase();
    const name = where ? `runvil_bg.wasm at ${where}` : 'a WebAssembly module';
    if (head.startsWith('<')) {
      throw new Error(
        `runvil: got HTML instead of ${name} — a dev server or host answering unknown paths with a page? ${HELP}`,
      );
    }
    throw new Error(
      `runvil: expected ${name}, got ${view.length} bytes that are not one (they start ${hex(magic) || 'with nothing'}); ${HELP}`,
    );
  }
  return WebAssembly.compile(view);
}

/**
 * A buffer for bytes this package reads or decodes itself, whose memory `release` can give back:
 * any buffer where ArrayBuffer has `transfer`; where it has not (Node 20), a resizable one.
 * @param {number} length
 */
export function releasableBytes(length) {
  if (typeof (/** @type {any} */ (ArrayBuffer.prototype).transfer) === 'function') return new Uint8Array(length);
  return new Uint8Array(new ArrayBuffer(length, /** @type {any} */ ({ maxByteLength: length })));
}

/**
 * Gives back the memory of bytes this package read or decoded itself, once they are compiled: the
 * module keeps its own copy, and the read one (a megabyte) would otherwise stay resident until a
 * collection. `transfer(0)` detaches the buffer and frees its memory at once; where ArrayBuffer has
 * no `transfer` (Node 20) a resizable buffer (`releasableBytes`) is shrunk to nothing, which frees
 * it as well, and any other is left to the next collection. A view over part of a buffer (a pooled
 * Node Buffer) is left alone.
 * @param {Uint8Array} view
 */
function release(view) {
  const buffer =
    /** @type {ArrayBuffer & { transfer?: (length: number) => ArrayBuffer, resizable?: boolean, resize?: (length: number) => void }} */ (
      view.buffer
    );
  if (!(buffer instanceof ArrayBuffer) || view.byteOffset !== 0 || view.byteLength !== buffer.byteLength) return;
  if (typeof buffer.transfer === 'function') buffer.transfer(0);
  else if (buffer.resizable === true && typeof buffer.resize === 'function') buffer.resize(0);
}

/**
 * Compiles bytes this package read or decoded itself, then releases them (never a caller's bytes).
 * @param {ArrayBuffer | ArrayBufferView} bytes
 * @param {string} where
 */
export async function compileOwnBytes(bytes, where) {
  const view = asUint8Array(bytes);
  try {
    return await compileBytes(view, where);
  } finally {
    release(view);
  }
}

async function compileResponse(response, url) {
  if (!response.ok) {
    throw new Error(
      `runvil: fetching ${url} failed: ${response.status} ${response.statusText} — runvil_bg.wasm is not served there (a bundler that did not copy it next to the bundle?); ${HELP}`,
    );
  }
  // Streaming compilation needs the application/wasm content type; anything else is read whole and
  // checked (an HTML page served in its place is the common mistake).
  if (
    typeof WebAssembly.compileStreaming === 'function' &&
    response.headers.get('content-type')?.split(';')[0].trim() === 'application/wasm'
  ) {
    return WebAssembly.compileStreaming(response);
  }
  return compileOwnBytes(await response.arrayBuffer(), url);
}

/**
 * Waits for the module with a timer open. V8 compiles off the main thread, and a server runtime
 * does not always count that as pending work: under `--no-wasm-lazy-compilation` Node 24 exits a
 * script whose only work is `await createEngine()` before the module is there (an unsettled
 * top-level await), so the entries that may run as a server's main script keep it alive until it is.
 * @param {Promise<WebAssembly.Module>} compiling
 */
export async function holdingTheProcess(compiling) {
  const timer = setInterval(() => {}, 2 ** 30);
  try {
    return await compiling;
  } finally {
    clearInterval(timer);
  }
}

/**
 * @param {WebAssembly.Module | ArrayBuffer | ArrayBufferView | URL | string} wasm
 * @param {string} base URL that relative strings resolve against
 * @param {{ readFile?: (url: URL) => Promise<Uint8Array> }} [host] how this entry reads file: URLs
 * @returns {Promise<WebAssembly.Module>}
 */
export async function loadModule(wasm, base, { readFile } = {}) {
  if (wasm instanceof WebAssembly.Module) return wasm;
  if (isBytes(wasm)) return compileBytes(wasm, '');
  if (typeof wasm === 'string' || wasm instanceof URL) {
    const url = new URL(wasm, base);
    if (url.protocol === 'file:') {
      // fetch() of file: URLs is not portable: only an entry with file access can read them.
      if (!readFile) {
        throw new Error(
          `runvil: cannot read ${url.href} here: this entry (browser, worker) has no file access; pass the bytes or a WebAssembly.Module as createEngine({ wasm }), or import runvil through its Node entry`,
        );
      }
      return compileOwnBytes(await readFile(url), url.href);
    }
    let response;
    try {
      response = await fetch(url);
    } catch (error) {
      throw new Error(`runvil: fetching ${url.href} failed: ${error.message}; ${HELP}`, { cause: error });
    }
    return compileResponse(response, url.href);
  }
  throw new TypeError(
    'createEngine: wasm must be a WebAssembly.Module, bytes (ArrayBuffer or typed array), a URL or a string',
  );
}

/** The createEngine option check every entry shares. */
export function engineOptions(options) {
  if (options === null || typeof options !== 'object') throw new TypeError('createEngine: options must be an object');
  return options;
}
