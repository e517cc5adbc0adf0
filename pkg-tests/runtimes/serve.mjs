// A tiny static server for the playground: /pkg/* from pkg/, /pkg-tests/browser/* (test pages)
// from there, everything else from site/ (the built playground, tools/build-site.mjs). It answers
// as a host should (docs/playground.md, "Hosting"): brotli or gzip when the browser accepts them
// (each file compressed once, kept while its modification time holds: brotli at a fast level for the
// first answer, then at its best in the background for the next ones), `application/wasm` for
// the engine, and `no-cache` with an ETag, so a reload asks again but downloads only what changed.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { brotliCompress, gzip, constants } from 'node:zlib';
import { promisify } from 'node:util';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.png': 'image/png',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.json', '.wasm', '.ts', '.css', '.md']);
const brotli = (quality) => (body) => promisify(brotliCompress)(body, { params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
/** Per encoding: the fast compressor for a first answer and, where it differs, the best one. */
const compressors = {
  br: { fast: brotli(5), best: brotli(11) },
  gzip: { fast: (body) => promisify(gzip)(body, { level: 9 }) },
};

/** The encoding to answer with: brotli before gzip, when the request accepts it. */
function encodingFor(accept = '') {
  const offered = accept.split(',').map((p) => p.trim().split(';')[0]);
  return ['br', 'gzip'].find((e) => offered.includes(e)) ?? null;
}

/**
 * Starts the server on a free 127.0.0.1 port; resolves to { url, close, settled }: `settled()`
 * resolves once the background compressions started so far are done.
 */
export function serve(root) {
  /** `${file}\0${encoding}` -> { mtime, body: Promise<Buffer> } */
  const cache = new Map();
  const pending = new Set();
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (path.includes('..')) return void res.writeHead(400).end();
    const file = path.startsWith('/pkg/') || path.startsWith('/pkg-tests/browser/')
      ? join(root, path)
      : join(root, 'site', path.endsWith('/') ? `${path}index.html` : path);
    try {
      const info = await stat(file);
      const tag = `"${info.size.toString(36)}-${info.mtimeMs.toString(36)}"`;
      const ext = extname(file);
      const headers = { 'content-type': TYPES[ext] ?? 'application/octet-stream', 'cache-control': 'no-cache', etag: tag, vary: 'accept-encoding' };
      if (req.headers['if-none-match'] === tag) return void res.writeHead(304, headers).end();
      const encoding = COMPRESSIBLE.has(ext) ? encodingFor(req.headers['accept-encoding']) : null;
      if (!encoding) return void res.writeHead(200, headers).end(await readFile(file));
      const key = `${file}\0${encoding}`;
      let hit = cache.get(key);
      if (!hit || hit.mtime !== info.mtimeMs) {
        const raw = readFile(file);
        const { fast, best } = compressors[encoding];
        hit = { mtime: info.mtimeMs, body: raw.then(fast) };
        cache.set(key, hit);
        if (best) {
          const entry = hit;
          const better = raw.then(best).then((body) => { if (cache.get(key) === entry) entry.body = Promise.resolve(body); }, () => {});
          pending.add(better);
          better.finally(() => pending.delete(better));
        }
      }
      res.writeHead(200, { ...headers, 'content-encoding': encoding }).end(await hit.body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      // Keep-alive connections of a browser that is gone would hold close() open.
      const close = () => new Promise((done) => { server.close(done); server.closeAllConnections(); });
      const settled = () => Promise.all([...pending]);
      resolve({ url: `http://127.0.0.1:${port}`, close, settled });
    });
  });
}

// `node serve.mjs [root]`: serve the playground for a person to try (prints the URL).
if (import.meta.url === `file://${process.argv[1]}`) {
  const { url } = await serve(process.argv[2] ?? new URL('../..', import.meta.url).pathname);
  console.log(`playground: ${url}/`);
}
