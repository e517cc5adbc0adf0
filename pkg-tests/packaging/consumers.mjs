// The throwaway consumer projects of packaging.test.mjs: the tarball unpacked into a project's
// node_modules, the demo every consumer runs, a static server and one Chromium for the pages.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { ROOT, PKG } from '../helpers.mjs';

export const BIN = join(ROOT, 'node_modules/.bin');

/** What every consumer's demo prints: the model called the Pack's tool, then answered. */
export const DEMO_RESULT = 'the sum is 5 | tool: 5';

/**
 * The demo as a function body with `createEngine` and `scriptedModel` in scope: a prompt that
 * offers the tool `calc/add` of a small Pack, a scripted model that calls it and then answers.
 */
export const DEMO_BODY = `
  const prompt = '---\\nuses: [calc]\\n---\\n# Demo\\n\\n## Main\\n\\n\`\`\`lua\\ntools.offer("calc/add")\\nmessages:user("add 2 and 3")\\nlocal answer = models.loop()\\nreturn answer .. " | tool: " .. messages[#messages - 1].content\\n\`\`\`\\n';
  const calc = {
    name: 'calc',
    description: 'Arithmetic.',
    tools: [{
      name: 'add',
      description: 'Add two numbers.',
      parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      trust: 'trusted',
      call: ({ a, b }) => String(a + b),
    }],
  };
  const model = scriptedModel([
    { content: '', tool_calls: [{ id: 'c1', name: 'calc_add', arguments: { a: 2, b: 3 } }], finish_reason: 'tool_calls' },
    'the sum is 5',
  ]);
  const engine = await createEngine();
  const outcome = await engine.run(prompt, { models: { default: model }, packs: [calc], seed: 1 });
  return outcome.ok ? outcome.result : outcome.error.kind + ': ' + outcome.error.message;
`;

/** An ES module exporting `runDemo()`, importing the package through `specifier`. */
export function demoModule(specifier = 'runvil') {
  return `import { createEngine, scriptedModel } from '${specifier}';\n\nexport async function runDemo() {${DEMO_BODY}}\n`;
}

/** A page script: runs the demo and shows its result (or the error) in #out, with data-state. */
export const PAGE_MAIN = `import { runDemo } from './demo.js';

const out = document.createElement('pre');
out.id = 'out';
document.body.append(out);
runDemo().then(
  (result) => { out.textContent = result; out.dataset.state = 'done'; },
  (error) => { out.textContent = String(error && error.message); out.dataset.state = 'error'; },
);
`;

export const pageHtml = (script) =>
  `<!doctype html>\n<html><head><meta charset="utf-8"><title>runvil consumer</title></head>\n<body><script type="module" src="${script}"></script></body></html>\n`;

export function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    execFile(command, args, { maxBuffer: 64 * 2 ** 20, timeout: 240_000, ...options, env: { ...process.env, NO_COLOR: '1', ...options.env } },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${command} ${args.join(' ')} failed (${error.code ?? error.signal}):\n${stdout}\n${stderr}`));
        else resolve({ stdout, stderr });
      });
  });
}

/** `npm pack` of pkg/ into a fresh temporary directory, unpacked once; `project()` copies it. */
export async function packTarball() {
  const dir = mkdtempSync(join(tmpdir(), 'runvil-packaging-'));
  const { stdout } = await run('npm', ['pack', PKG, '--pack-destination', dir, '--json', '--ignore-scripts'], { cwd: dir });
  const [info] = JSON.parse(stdout);
  const tarball = join(dir, info.filename);
  const unpacked = join(dir, 'unpacked');
  mkdirSync(unpacked);
  await run('tar', ['-xzf', tarball, '-C', unpacked]);
  return {
    dir,
    tarball,
    size: info.size,
    unpackedSize: info.unpackedSize,
    files: info.files.map((f) => f.path).sort(),
    /** A project named `name` with the package in node_modules/runvil and the given files. */
    project(name, files = {}) {
      const root = join(dir, name);
      mkdirSync(join(root, 'node_modules'), { recursive: true });
      cpSync(join(unpacked, 'package'), join(root, 'node_modules/runvil'), { recursive: true });
      writeFileSync(join(root, 'package.json'), JSON.stringify({ name, private: true, type: 'module', dependencies: { runvil: info.version } }, null, 2));
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(join(root, path, '..'), { recursive: true });
        writeFileSync(join(root, path), text);
      }
      return root;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
};

/**
 * A static server for a built site on 127.0.0.1. `spa: true` answers unknown paths with
 * index.html, as single-page-app hosts and dev servers do (the HTML-instead-of-wasm case).
 */
export function serveDir(root, { spa = false } = {}) {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (path.includes('..')) return void res.writeHead(400).end();
    const file = join(root, path.endsWith('/') ? `${path}index.html` : path);
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      if (spa) res.writeHead(200, { 'content-type': TYPES['.html'] }).end(await readFile(join(root, 'index.html')));
      else res.writeHead(404).end('not found');
    }
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      // Chromium keeps idle keep-alive connections open: close() alone would wait for them.
      const close = () => new Promise((done) => {
        server.close(done);
        server.closeAllConnections();
      });
      resolve({ url: `http://127.0.0.1:${server.address().port}`, close });
    });
  });
}

/** One headless Chromium (Debian's, driven by playwright-core) for every page of the suite. */
export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  const CHROMIUM = '/usr/bin/chromium';
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (apt package chromium; ./build.sh setup installs it)`);
  const profile = mkdtempSync(join(tmpdir(), 'runvil-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    /** Opens `url`, waits for the demo's #out to settle; `{ state, text, errors, requests }`. */
    async demo(url) {
      const page = await context.newPage();
      const errors = [];
      const requests = [];
      page.on('pageerror', (error) => errors.push(error.message));
      page.on('request', (request) => requests.push(request.url()));
      try {
        await page.goto(url);
        await page.waitForSelector('#out[data-state]', { timeout: 60_000 });
        const out = page.locator('#out');
        return { state: await out.getAttribute('data-state'), text: await out.textContent(), errors, requests };
      } finally {
        await page.close();
      }
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}

/** Every file under `dir` (relative paths), for asserting what a build emitted. */
export function listFiles(dir, prefix = '') {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(dir, join(prefix, entry.name)) : [join(prefix, entry.name)]);
}
