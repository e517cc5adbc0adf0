// A tiny static server for the playground: /pkg/* from pkg/, /pkg-tests/browser/* (test pages)
// from there, everything else from site/ (the built playground, tools/build-site.mjs).
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';

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

/** Starts the server on a free 127.0.0.1 port; resolves to { url, close }. */
export function serve(root) {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (path.includes('..')) return void res.writeHead(400).end();
    const file = path.startsWith('/pkg/') || path.startsWith('/pkg-tests/browser/')
      ? join(root, path)
      : join(root, 'site', path.endsWith('/') ? `${path}index.html` : path);
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      // Keep-alive connections of a browser that is gone would hold close() open.
      const close = () => new Promise((done) => { server.close(done); server.closeAllConnections(); });
      resolve({ url: `http://127.0.0.1:${port}`, close });
    });
  });
}

// `node serve.mjs [root]`: serve the playground for a person to try (prints the URL).
if (import.meta.url === `file://${process.argv[1]}`) {
  const { url } = await serve(process.argv[2] ?? new URL('../..', import.meta.url).pathname);
  console.log(`playground: ${url}/`);
}
