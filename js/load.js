// Turns the `wasm` option of createEngine into a compiled WebAssembly.Module.

function isBytes(value) {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

async function compileResponse(response, url) {
  if (!response.ok) throw new Error(`runvil: fetching ${url} failed: ${response.status} ${response.statusText}`);
  // Streaming compilation needs the application/wasm content type; fall back to bytes otherwise.
  if (typeof WebAssembly.compileStreaming === 'function'
      && response.headers.get('content-type')?.split(';')[0].trim() === 'application/wasm') {
    return WebAssembly.compileStreaming(response);
  }
  return WebAssembly.compile(await response.arrayBuffer());
}

/**
 * @param {WebAssembly.Module | ArrayBuffer | ArrayBufferView | URL | string} wasm
 * @param {string} base URL that relative strings resolve against
 * @returns {Promise<WebAssembly.Module>}
 */
export async function loadModule(wasm, base) {
  if (wasm instanceof WebAssembly.Module) return wasm;
  if (isBytes(wasm)) return WebAssembly.compile(wasm);
  if (typeof wasm === 'string' || wasm instanceof URL) {
    const url = new URL(wasm, base);
    if (url.protocol === 'file:') {
      // Node, Deno and Bun all provide node:fs; fetch() of file: URLs is not portable.
      const { readFile } = await import('node:fs/promises');
      return WebAssembly.compile(await readFile(url));
    }
    return compileResponse(await fetch(url), url.href);
  }
  throw new TypeError('createEngine: wasm must be a WebAssembly.Module, bytes (ArrayBuffer or typed array), a URL or a string');
}
