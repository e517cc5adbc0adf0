// The package as its users get it: `npm pack` of pkg/, the tarball unpacked into throwaway
// projects, each built by a real bundler (the workspace's devDependencies) and run in its real
// runtime — Chromium for browser bundles, Node, Bun, Deno, workerd — running a prompt whose model
// calls a Pack's tool. A consumer that needs a recipe has it in docs/packaging.md, and the test
// follows exactly that recipe.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { ROOT, freePort, serveWorkerd } from './helpers.mjs';
import { ROOMS } from '../tools/make-package.mjs';
import {
  BIN, DEMO_BODY, DEMO_RESULT, PAGE_MAIN, demoModule, launchChromium, listFiles, packTarball, pageHtml, run, serveDir,
} from './packaging/consumers.mjs';

let pack;
let chromium;

before(async () => {
  pack = await packTarball();
  chromium = await launchChromium();
});

after(async () => {
  await chromium?.close();
  pack?.remove();
});

/** The files of a browser bundle must not mention node: modules (they would not resolve). */
function assertNoNodeImports(dir) {
  for (const file of listFiles(dir).filter((f) => /\.(m?js)$/.test(f))) {
    const text = readFileSync(join(dir, file), 'utf8');
    assert.doesNotMatch(text, /["']node:[a-z/_]+["']/, `${file} imports a node: module`);
  }
}

/** Serves `dir` and runs the demo page `page` in Chromium; returns what the page shows. */
async function demoInChromium(dir, page = 'index.html', options = {}) {
  const site = await serveDir(dir, options);
  try {
    return await chromium.demo(`${site.url}/${page}`);
  } finally {
    await site.close();
  }
}

function assertDemoRan(shown) {
  assert.deepEqual({ state: shown.state, text: shown.text, errors: shown.errors },
    { state: 'done', text: DEMO_RESULT, errors: [] });
}

// ---- the tarball -----------------------------------------------------------------------------

test('the tarball holds every entry of the export map and nothing from the workspace', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'pkg/package.json'), 'utf8'));
  const targets = new Set();
  const walk = (value) => (typeof value === 'string' ? targets.add(value.replace(/^\.\//, '')) : Object.values(value).forEach(walk));
  walk(manifest.exports);
  for (const target of targets) assert.ok(pack.files.includes(target), `${target} is exported but not packed`);
  assert.ok(pack.files.includes('cli.js') && pack.files.includes('package.json'));
  // Folders are the rooms of js/ (tools/make-package.mjs), nothing else; no test or dev file.
  assert.deepEqual(pack.files.filter((f) => (f.includes('/') && !ROOMS.includes(f.split('/')[0])) || f.endsWith('.test.mjs')), []);
  assert.deepEqual(pack.files.filter((f) => /(^|\/)(jsconfig\.json|ambient\.d\.ts)$/.test(f)), []);
});

test('no file that browser, worker or default conditions reach imports node:', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'pkg/package.json'), 'utf8'));
  const root = manifest.exports['.'];
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(join(ROOT, 'pkg', file), 'utf8');
    assert.doesNotMatch(text, /from\s+['"]node:|import\(\s*['"]node:/, `${file} imports node:`);
    for (const [, dep] of text.matchAll(/(?:from|import\()\s*['"](\.\.?\/[^'"]+\.js)['"]/g)) visit(posix.join(posix.dirname(file), dep));
  };
  for (const condition of ['browser', 'worker', 'default', 'workerd', 'deno']) visit(root[condition].slice(2));
  assert.ok(seen.has('core/load.js') && seen.has('core/engine.js'));
});

// ---- Node --------------------------------------------------------------------------------------

test('Node ESM: import from runvil', { timeout: 120_000 }, async () => {
  const dir = pack.project('node-esm', {
    'demo.js': demoModule(),
    'main.js': "import { runDemo } from './demo.js';\nconsole.log(await runDemo());\n",
  });
  const { stdout } = await run(process.execPath, ['main.js'], { cwd: dir });
  assert.equal(stdout, `${DEMO_RESULT}\n`);
});

test('Node CommonJS: require(runvil)', { timeout: 120_000 }, async () => {
  const dir = pack.project('node-cjs', {
    'main.cjs': `const { createEngine, scriptedModel } = require('runvil');\n(async () => {${DEMO_BODY}})().then(console.log);\n`,
  });
  const { stdout } = await run(process.execPath, ['main.cjs'], { cwd: dir });
  assert.equal(stdout, `${DEMO_RESULT}\n`);
});

// ---- esbuild -----------------------------------------------------------------------------------

test('esbuild --platform=node: the bundle runs away from node_modules (cjs and esm output)', { timeout: 120_000 }, async () => {
  const esbuild = await import('esbuild');
  const dir = pack.project('esbuild-node', {
    'demo.js': demoModule(),
    'main.js': "import { runDemo } from './demo.js';\nrunDemo().then(console.log);\n",
  });
  for (const format of ['cjs', 'esm']) {
    const outfile = join(dir, `dist/main.${format === 'cjs' ? 'cjs' : 'mjs'}`);
    await esbuild.build({ absWorkingDir: dir, entryPoints: ['main.js'], bundle: true, platform: 'node', format, outfile, logLevel: 'error' });
    // Deployed alone: no node_modules and no runvil_bg.wasm beside it.
    const deployed = join(pack.dir, `esbuild-node-deployed-${format}`);
    mkdirSync(deployed);
    cpSync(outfile, join(deployed, 'main' + (format === 'cjs' ? '.cjs' : '.mjs')));
    const { stdout } = await run(process.execPath, [join(deployed, `main.${format === 'cjs' ? 'cjs' : 'mjs'}`)], { cwd: deployed });
    assert.equal(stdout, `${DEMO_RESULT}\n`, format);
  }
});

/**
 * A bundler with no asset pipeline for `new URL(file, import.meta.url)` (esbuild, bun build):
 * `build(dir, out)` bundles main.js and inline-main.js of the project into `out`. Without a recipe
 * the page says clearly where it looked; the recipes of docs/packaging.md — import runvil/inline,
 * or copy runvil_bg.wasm next to the bundle — run the demo.
 */
async function noAssetPipeline(name, build) {
  const dir = pack.project(name, {
    'demo.js': demoModule(),
    'inline-demo.js': demoModule('runvil/inline'),
    'main.js': PAGE_MAIN,
    'inline-main.js': PAGE_MAIN.replace('./demo.js', './inline-demo.js'),
  });
  const out = join(dir, 'dist');
  await build(dir, out);
  writeFileSync(join(out, 'index.html'), pageHtml('./main.js'));
  writeFileSync(join(out, 'inline.html'), pageHtml('./inline-main.js'));
  assertNoNodeImports(out);
  // The default entry stays small: the inlined copy is only in the bundle that asked for it.
  assert.ok(readFileSync(join(out, 'main.js')).length < 200_000, 'the default browser bundle holds no inlined wasm');

  const missing = await demoInChromium(out);
  assert.equal(missing.state, 'error');
  assert.match(missing.text, /^runvil: fetching http:\/\/127\.0\.0\.1:\d+\/runvil_bg\.wasm failed: 404 Not Found — runvil_bg\.wasm is not served there/);

  // A host answering every unknown path with the page: the error says so.
  const html = await demoInChromium(out, 'index.html', { spa: true });
  assert.equal(html.state, 'error');
  assert.match(html.text, /^runvil: got HTML instead of runvil_bg\.wasm at http:\/\/127\.0\.0\.1:\d+\/runvil_bg\.wasm — /);

  assertDemoRan(await demoInChromium(out, 'inline.html'));

  cpSync(join(dir, 'node_modules/runvil/runvil_bg.wasm'), join(out, 'runvil_bg.wasm'));
  const copied = await demoInChromium(out);
  assertDemoRan(copied);
  assert.equal(copied.requests.filter((u) => u.endsWith('/runvil_bg.wasm')).length, 1);
}

test('esbuild --platform=browser: a clear 404 without the wasm; runs with it copied, or with runvil/inline', { timeout: 120_000 }, async () => {
  const esbuild = await import('esbuild');
  await noAssetPipeline('esbuild-browser', (dir, out) => esbuild.build({
    absWorkingDir: dir, entryPoints: ['main.js', 'inline-main.js'], bundle: true, platform: 'browser', format: 'esm', outdir: out, logLevel: 'error',
  }));
});

// ---- webpack -----------------------------------------------------------------------------------

test('webpack 5 (target web): builds with no configuration beyond entry and output, runs in Chromium', { timeout: 180_000 }, async () => {
  const { default: webpack } = await import('webpack');
  const dir = pack.project('webpack', { 'src/demo.js': demoModule(), 'src/index.js': PAGE_MAIN });
  const out = join(dir, 'dist');
  const stats = await new Promise((resolve, reject) => {
    webpack({ mode: 'production', context: dir, entry: './src/index.js', output: { path: out, filename: 'main.js' }, target: 'web' },
      (error, result) => (error ? reject(error) : resolve(result)));
  });
  assert.deepEqual(stats.toJson({ all: false, errors: true }).errors.map((e) => e.message), []);
  writeFileSync(join(out, 'index.html'), pageHtml('./main.js'));
  assertNoNodeImports(out);
  assert.ok(listFiles(out).some((f) => f.endsWith('.wasm')), 'webpack emitted the wasm');
  assertDemoRan(await demoInChromium(out));
});

// ---- Vite --------------------------------------------------------------------------------------

function viteProject(name) {
  return pack.project(name, { 'index.html': pageHtml('/main.js'), 'main.js': PAGE_MAIN, 'demo.js': demoModule() });
}

// Vite 8 (rolldown) and Vite 7 (esbuild and Rollup): the versions in use today.
for (const [specifier, label] of [['vite', 'Vite 8'], ['vite7', 'Vite 7']]) {
  test(`${label} build: runs in Chromium`, { timeout: 180_000 }, async () => {
    const vite = await import(specifier);
    const dir = viteProject(`${specifier}-build`);
    await vite.build({ root: dir, configFile: false, logLevel: 'error', build: { outDir: join(dir, 'dist') } });
    const out = join(dir, 'dist');
    assertNoNodeImports(out);
    assert.ok(listFiles(out).some((f) => f.endsWith('.wasm')), 'Vite emitted the wasm');
    assertDemoRan(await demoInChromium(out));
  });

  test(`${label} dev server: answers the wasm, runs in Chromium`, { timeout: 180_000 }, async (t) => {
    const vite = await import(specifier);
    const dir = viteProject(`${specifier}-dev`);
    const server = await vite.createServer({ root: dir, configFile: false, logLevel: 'error', server: { host: '127.0.0.1', port: await freePort(), strictPort: true } });
    t.after(() => server.close());
    await server.listen();
    assertDemoRan(await chromium.demo(server.resolvedUrls.local[0]));
  });
}

// ---- Bun -----------------------------------------------------------------------------------------

/** Bun's binary from its platform package (npm installs bun with --ignore-scripts here). */
function bunBinary() {
  const oven = join(ROOT, 'node_modules/@oven');
  const candidates = existsSync(oven) ? readdirSync(oven).filter((d) => d.startsWith(`bun-${process.platform}-${process.arch}`)) : [];
  const found = candidates.map((d) => join(oven, d, 'bin/bun')).find(existsSync);
  assert.ok(found, `no bun binary under ${oven} (npm dev dependency bun)`);
  return found;
}

test('Bun runtime: import from runvil', { timeout: 120_000 }, async () => {
  const dir = pack.project('bun-run', {
    'demo.js': demoModule(),
    'main.js': "import { runDemo } from './demo.js';\nconsole.log(await runDemo());\n",
  });
  const { stdout } = await run(bunBinary(), ['main.js'], { cwd: dir, env: { BUN_INSTALL_CACHE_DIR: join(dir, '.bun-cache') } });
  assert.equal(stdout, `${DEMO_RESULT}\n`);
});

test('bun build --target=browser: a clear 404 without the wasm; runs with it copied, or with runvil/inline', { timeout: 120_000 }, async () => {
  await noAssetPipeline('bun-build', (dir, out) => run(bunBinary(), ['build', 'main.js', 'inline-main.js', '--target=browser', '--outdir', out], { cwd: dir }));
});

test('bun build --target=node: the bundle runs away from node_modules', { timeout: 120_000 }, async () => {
  const dir = pack.project('bun-build-node', {
    'demo.js': demoModule(),
    'main.js': "import { runDemo } from './demo.js';\nconsole.log(await runDemo());\n",
  });
  const out = join(dir, 'dist');
  await run(bunBinary(), ['build', 'main.js', '--target=node', '--outdir', out], { cwd: dir });
  const deployed = join(pack.dir, 'bun-build-node-deployed');
  cpSync(out, deployed, { recursive: true });
  const { stdout } = await run(process.execPath, [join(deployed, 'main.js')], { cwd: deployed });
  assert.equal(stdout, `${DEMO_RESULT}\n`);
});

// ---- Deno ----------------------------------------------------------------------------------------

const DENO_ENV = { DENO_NO_UPDATE_CHECK: '1', DENO_NO_PROMPT: '1' };

test('Deno: bare runvil through node_modules (npm-style), no --allow-read', { timeout: 120_000 }, async () => {
  const dir = pack.project('deno-npm', {
    'demo.js': demoModule(),
    'main.js': "import { runDemo } from './demo.js';\nconsole.log(await runDemo());\n",
  });
  const { stdout } = await run(join(BIN, 'deno'), ['run', '--no-lock', '--node-modules-dir=manual', 'main.js'],
    { cwd: dir, env: { ...DENO_ENV, DENO_DIR: join(dir, '.deno') } });
  assert.equal(stdout, `${DEMO_RESULT}\n`);
});

test('Deno: a file import of the package entry, no --allow-read', { timeout: 120_000 }, async () => {
  const dir = pack.project('deno-file', {
    'demo.js': demoModule('./node_modules/runvil/index.js'),
    'main.js': "import { runDemo } from './demo.js';\nconsole.log(await runDemo());\n",
  });
  const { stdout } = await run(join(BIN, 'deno'), ['run', '--no-config', '--no-lock', 'main.js'],
    { cwd: dir, env: { ...DENO_ENV, DENO_DIR: join(dir, '.deno') } });
  assert.equal(stdout, `${DEMO_RESULT}\n`);
});

// ---- Cloudflare Worker: wrangler's bundle run in workerd ------------------------------------------

test('Cloudflare Worker: wrangler bundles it with no configuration for runvil, workerd runs it', { timeout: 240_000 }, async (t) => {
  const dir = pack.project('wrangler', {
    'src/demo.js': demoModule(),
    'src/worker.js': "import { runDemo } from './demo.js';\n\nexport default {\n  async fetch() {\n    return new Response(await runDemo());\n  },\n};\n",
    'wrangler.toml': 'name = "runvil-consumer"\nmain = "src/worker.js"\ncompatibility_date = "2025-01-01"\n',
  });
  const out = join(dir, 'dist');
  const { stdout, stderr } = await run(join(BIN, 'wrangler'), ['deploy', '--dry-run', '--outdir', out], {
    cwd: dir,
    env: { WRANGLER_SEND_METRICS: 'false', CI: '1', WRANGLER_LOG_PATH: join(dir, '.wrangler-logs'), XDG_CONFIG_HOME: join(dir, '.config') },
  });
  assert.doesNotMatch(stdout + stderr, /nodejs_compat|node:fs/, 'wrangler warns about node: imports');
  const files = listFiles(out);
  const wasm = files.filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, 1, `wrangler emitted one wasm module (${files.join(', ')})`);
  // workerd needs every module listed: the bundle and the wasm module it imports by that name.
  const config = join(dir, 'worker.capnp');
  writeFileSync(config, `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .w) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const w :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "dist/worker.js"),
    (name = "${wasm[0]}", wasm = embed "dist/${wasm[0]}"),
  ],
  compatibilityDate = "2025-01-01",
);
`);
  const server = await serveWorkerd(t, config);
  const response = await fetch(`${server.url}/`);
  assert.equal(await response.text(), DEMO_RESULT, server.log());
  assert.equal(response.status, 200);
});

// ---- TypeScript ----------------------------------------------------------------------------------

/** Typical uses of the API that need no host lib. */
const TYPES_COMMON = `import { createEngine, scriptedModel, memoryStore, webPack, openAIChatModel, type ModelFn, type Pack, type Outcome, type AbortSignalLike } from 'runvil';
import { createEngine as createWorkerdEngine } from 'runvil/workerd';
import { createEngine as createInlineEngine } from 'runvil/inline';

const model: ModelFn = async (request) => {
  const aborted: boolean = request.signal.aborted;
  return { content: request.role + String(aborted), finish_reason: 'stop' };
};
const pack: Pack = { name: 'calc', description: 'd', tools: [{ name: 'add', description: 'a', parameters: {}, call: (args, ctx) => ctx.section + String(ctx.signal.aborted) }] };
export async function demo(signal?: AbortSignalLike): Promise<string> {
  const engine = await createEngine({ wasm: new Uint8Array(8) });
  await createWorkerdEngine();
  await createInlineEngine({ wasm: 'https://example.invalid/runvil_bg.wasm' });
  const outcome: Outcome = await engine.run('x', { models: { default: model, s: scriptedModel(['a']) }, packs: [pack, webPack({ fetch: async () => ({}) })], store: memoryStore({ a: 'b' }), signal, seed: 1n });
  openAIChatModel({ baseURL: 'http://127.0.0.1:1/v1', model: 'm' });
  return outcome.ok ? outcome.result ?? '' : outcome.error.kind;
}
`;

/** Uses that meet the host's own types (a DOM or Node lib): its signal, fetch and WebAssembly.Module. */
const TYPES_HOST = `import { createEngine, webPack, type ModelFn } from 'runvil';

const model: ModelFn = async (request) => {
  const response = await fetch('http://127.0.0.1:1/', { signal: request.signal });
  return { content: await response.text(), finish_reason: 'stop' };
};
export async function host(url: URL): Promise<unknown> {
  const controller = new AbortController();
  const engine = await createEngine({ wasm: url });
  webPack({ fetch });
  return engine.run('x', { models: { default: model }, signal: controller.signal });
}
`;

/** WebAssembly's types come with the DOM lib (@types/node 20 has none). */
const TYPES_DOM = `import { createEngine } from 'runvil';

export async function compiled(module: WebAssembly.Module, bytes: ArrayBuffer) {
  await createEngine({ wasm: await WebAssembly.compile(bytes) });
  return createEngine({ wasm: module });
}
`;

/** The Node entry's own export: through the `node` condition (node16/nodenext) and runvil/node. */
const TYPES_NODE = `import { directoryStore, createEngine } from 'runvil';
import { directoryStore as fromSubpath, type DirectoryStore } from 'runvil/node';

export async function stored(): Promise<string[]> {
  const store: DirectoryStore = directoryStore('data', { readOnly: false });
  await (await createEngine()).run('x', { store: fromSubpath('other') });
  return store.list();
}
`;

const TSCONFIGS = {
  'bundler + DOM lib': { module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'dom'], types: [], host: true, dom: true },
  'bundler + es2022 only': { module: 'esnext', moduleResolution: 'bundler', lib: ['es2022'], types: [] },
  'node16 + Node lib only': { module: 'node16', moduleResolution: 'node16', lib: ['es2022'], types: ['node'], host: true, node: true },
  'nodenext + es2022 only': { module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022'], types: [], node: true },
  'nodenext + Node lib only': { module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022'], types: ['node'], host: true, node: true },
};

test('types stand alone: tsc --strict under bundler, node16 and nodenext, with a DOM lib, a Node lib or neither', { timeout: 180_000 }, async () => {
  const dir = pack.project('typescript', { 'common.ts': TYPES_COMMON, 'host.ts': TYPES_HOST, 'dom.ts': TYPES_DOM, 'node.ts': TYPES_NODE });
  const failures = [];
  for (const [name, { host, dom, node, ...options }] of Object.entries(TSCONFIGS)) {
    const config = join(dir, `tsconfig.${name.replace(/[^a-z0-9]+/gi, '-')}.json`);
    writeFileSync(config, JSON.stringify({
      compilerOptions: { ...options, target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, typeRoots: [join(ROOT, 'node_modules/@types')] },
      files: ['common.ts', ...(host ? ['host.ts'] : []), ...(dom ? ['dom.ts'] : []), ...(node ? ['node.ts'] : [])],
    }));
    try {
      await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', config], { cwd: dir });
    } catch (error) {
      failures.push(`${name}: ${error.message}`);
    }
  }
  assert.deepEqual(failures, []);
});
