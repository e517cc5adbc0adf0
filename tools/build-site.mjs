// Builds the playground into site/ (a static site, no CDN at run time):
//   www/index.html, www/style.css   copied
//   site/app.js (+ chunks/)         www/app.js and what it imports, bundled by esbuild: only the
//                                   page's part of the package; the editor (CodeMirror, with the
//                                   reference docs of docs/reference.md), the MCP client and the
//                                   OpenAI adapter are chunks loaded when first needed
//   site/engine-worker.js           the package's worker.js with the engine graph, one file
//   site/pkg/runvil_bg.wasm         the engine (from pkg/: run ./build.sh build first)
// The gallery (examples/) and the reference docs are generated modules bundled into app.js.
//
//   node tools/build-site.mjs [--serve]    (--serve: then serve it on 127.0.0.1 and print the URL)
import { build } from 'esbuild';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readReference } from './reference-docs.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SITE = join(ROOT, 'site');
const WWW = join(ROOT, 'www');

/**
 * The gallery's order, the argument string each example starts with, and the limits it opens
 * with (long-loop runs until cancelled: its instruction budget is set past what a person waits).
 */
const GALLERY = [
  ['hello', 'rivers'], ['substitution', 'Ada Lovelace'], ['tools', 'Lisbon'], ['store', 'first try'],
  ['fanout', ''], ['ask', ''], ['long-loop', '', { instructions: '1000000000000' }], ['smoke', ''],
];

function frontmatterField(source, key) {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(source);
  const line = m?.[1].split('\n').find((l) => l.startsWith(`${key}:`));
  return line ? line.slice(key.length + 1).trim().replace(/^"(.*)"$/, '$1') : '';
}

function examples() {
  return GALLERY.filter(([name]) => existsSync(join(ROOT, 'examples', `${name}.md`))).map(([name, args, limits]) => {
    const source = readFileSync(join(ROOT, 'examples', `${name}.md`), 'utf8');
    return { name, description: frontmatterField(source, 'description') || name, args, source, ...(limits && { limits }) };
  });
}

/** Generated modules the page imports by name: the gallery and the reference docs. */
const generated = {
  name: 'generated',
  setup(b) {
    b.onResolve({ filter: /^(\.\/examples\.js|runvil-reference)$/ }, (args) => ({ path: args.path, namespace: 'generated' }));
    b.onLoad({ filter: /.*/, namespace: 'generated' }, (args) => ({
      contents: `export default ${JSON.stringify(args.path === 'runvil-reference' ? readReference(join(ROOT, 'docs/reference.md')) : examples())};`,
      loader: 'js',
    }));
  },
};

const WORKER_CLIENT = join(ROOT, 'pkg/worker-client.js');
const REEXPORT = "export * from './browser.js';";

/**
 * The page takes createEngine from the worker client and the rest of the API from the modules that
 * define it: the client's re-export of the whole default entry would put every adapter (OpenAI,
 * MCP, the stores) into the page's first download, since code splitting follows imports, not use.
 */
const workerClientAlone = {
  name: 'worker-client-alone',
  setup(b) {
    b.onLoad({ filter: /worker-client\.js$/ }, (args) => {
      if (args.path !== WORKER_CLIENT) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(REEXPORT)) throw new Error(`${args.path} no longer says ${REEXPORT} (tools/build-site.mjs leaves it out of the page)`);
      return { contents: text.replace(REEXPORT, ''), loader: 'js' };
    });
  },
};

export async function buildSite() {
  if (!existsSync(join(ROOT, 'pkg/worker-client.js'))) throw new Error('pkg/ is not built (./build.sh build, or node tools/make-package.mjs ...)');
  rmSync(SITE, { recursive: true, force: true });
  mkdirSync(SITE, { recursive: true });
  for (const file of ['index.html', 'style.css']) cpSync(join(WWW, file), join(SITE, file));
  const common = { bundle: true, format: 'esm', minify: true, target: 'es2022', legalComments: 'eof', logLevel: 'warning', absWorkingDir: ROOT };
  await build({
    ...common,
    entryPoints: { app: join(WWW, 'app.js') },
    outdir: SITE,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [generated, workerClientAlone],
  });
  await build({ ...common, entryPoints: [join(ROOT, 'pkg/worker.js')], outfile: join(SITE, 'engine-worker.js') });
  mkdirSync(join(SITE, 'pkg'));
  cpSync(join(ROOT, 'pkg/runvil_bg.wasm'), join(SITE, 'pkg/runvil_bg.wasm'));
  return SITE;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const site = await buildSite();
  console.log(`site written: ${site}`);
  if (process.argv.includes('--serve')) {
    const { serve } = await import('../pkg-tests/runtimes/serve.mjs');
    const { url } = await serve(ROOT);
    console.log(`playground: ${url}/  (Ctrl+C stops it)`);
  }
}
