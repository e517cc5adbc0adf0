// Shared by the package tests. Not a test file (node --test only picks *.test.mjs here).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const PKG = fileURLToPath(new URL('../pkg/', import.meta.url));

/** A fresh temporary directory named after `name`, removed when the test `t` ends. */
export function tempDir(t, name) {
  const dir = mkdtempSync(join(tmpdir(), `runvil-${name}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * The package's modules (its .js files, in its folders too, and the .wasm) as entries of a workerd
 * config's `modules` list, named `runvil/<path>` (the workerd entry `runvil/workerd`) and embedded
 * by their path relative to `dir`, the config's folder.
 */
export function workerdPackageModules(dir) {
  const files = (sub) => readdirSync(join(PKG, sub), { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? files(join(sub, entry.name)) : [join(sub, entry.name)]));
  return files('').filter((f) => f.endsWith('.js') || f.endsWith('.wasm')).map((file) => {
    const name = file === 'workerd.js' ? 'runvil/workerd' : `runvil/${file}`;
    return `(name = "${name}", ${file.endsWith('.wasm') ? 'wasm' : 'esModule'} = embed "${relative(dir, join(PKG, file))}")`;
  });
}

/**
 * Writes `dir/<name>.capnp`, a workerd config serving one Worker on the socket `http` (its address
 * is given on workerd's command line): its `modules` (module name -> file, embedded by its path
 * relative to `dir`; the first is the main module) then the package's (workerdPackageModules).
 * `durableObjects` binds names to Durable Object classes the modules export, kept in `dir/data`;
 * `text` binds names to text; `network` lets the Worker's fetch reach local addresses (a provider
 * on this machine). Answers the config's path.
 * @param {string} dir
 * @param {{ modules: Record<string, string>, durableObjects?: Record<string, string>,
 *   text?: Record<string, string>, network?: boolean, name?: string }} worker
 */
export function writeWorkerdConfig(dir, { modules, durableObjects = {}, text = {}, network = false, name = 'worker' }) {
  const classes = [...new Set(Object.values(durableObjects))];
  const services = ['(name = "main", worker = .main)'];
  if (classes.length) {
    mkdirSync(join(dir, 'data'), { recursive: true });
    services.push('(name = "data", disk = (path = "data", writable = true))');
  }
  if (network) services.push('(name = "net", network = (allow = ["public", "local", "private"]))');
  const bindings = [
    ...Object.entries(durableObjects).map(([binding, className]) => `(name = "${binding}", durableObjectNamespace = "${className}")`),
    ...Object.entries(text).map(([binding, value]) => `(name = "${binding}", text = ${JSON.stringify(value)})`),
  ];
  const fields = [
    `modules = [\n    ${[
      ...Object.entries(modules).map(([module, file]) => `(name = "${module}", esModule = embed "${relative(dir, file)}")`),
      ...workerdPackageModules(dir),
    ].join(',\n    ')},\n  ]`,
  ];
  if (classes.length) {
    fields.push(`durableObjectNamespaces = [\n    ${classes.map((c) => `(className = "${c}", uniqueKey = "runvil-${c}", enableSql = true)`).join(',\n    ')},\n  ]`);
    fields.push('durableObjectStorage = (localDisk = "data")');
  }
  if (bindings.length) fields.push(`bindings = [\n    ${bindings.join(',\n    ')},\n  ]`);
  if (network) fields.push('globalOutbound = "net"');
  fields.push('compatibilityDate = "2025-01-01"');
  const config = join(dir, `${name}.capnp`);
  writeFileSync(config, `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ ${services.join(', ')} ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const main :Workerd.Worker = (
  ${fields.join(',\n  ')},
);
`);
  return config;
}

/** The exact result examples/smoke.md must produce, in every runtime. */
export const SMOKE_RESULT = 'smoke ok: 25,16,9,4,1 | Lua 5.5';

/** A prompt whose `## Main` runs the given Lua. */
export function luaPrompt(lua) {
  return `# Test\n\n## Main\n\n\`\`\`lua\n${lua}\n\`\`\`\n`;
}

export function smokeSource() {
  return readFileSync(new URL('../examples/smoke.md', import.meta.url), 'utf8');
}

/**
 * A local HTTP server standing in for a chat-completions provider: every request's JSON body goes
 * to `onRequest(body, req, res)`, which answers it. Resolves with the `/v1` base URL and `close`.
 */
export async function localProvider(onRequest) {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => { text += c; });
    req.on('end', () => onRequest(JSON.parse(text), req, res));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseURL: `http://127.0.0.1:${server.address().port}/v1`, close: () => new Promise((r) => server.close(r)) };
}

/** A directory's files with their text, and its folders as `path/: true` (a store directory). */
export function tree(dir, prefix = '') {
  const out = {};
  for (const name of readdirSync(join(dir, prefix)).sort()) {
    const rel = prefix ? `${prefix}/${name}` : name;
    if (statSync(join(dir, rel)).isDirectory()) Object.assign(out, { [`${rel}/`]: true }, tree(dir, rel));
    else out[rel] = readFileSync(join(dir, rel), 'utf8');
  }
  return out;
}

/** mulberry32: a small seeded generator (floats in [0, 1)), so a failing trial re-runs from its seed. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An object every one of whose traps throws: what a hostile host hands the engine. */
export function throwingProxy() {
  return new Proxy({}, {
    get() { throw new Error('trap get'); },
    getPrototypeOf() { throw new Error('trap proto'); },
    has() { throw new Error('trap has'); },
    ownKeys() { throw new Error('trap keys'); },
    getOwnPropertyDescriptor() { throw new Error('trap desc'); },
  });
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Runs a server `command` in its own process group. Polls `ready()` until it answers without
 * throwing (a refused fetch is "not yet"), failing early if the server exits, and after 60 s.
 * Resolves with `{ value, log, kill }`: what `ready` answered, a function giving the server's
 * output so far, and one that SIGKILLs the whole group (npm's wrappers spawn the real binary: both
 * go together) and resolves once it is gone. The caller kills it; `startServer` does so for a test.
 */
export async function spawnServer(command, args, ready, options = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...options });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const log = () => output;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { child.kill('SIGKILL'); }
    }
    await exited;
  };
  try {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}:\n${output}`);
      try {
        return { value: await ready(), log, kill };
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    throw new Error(`${command} did not answer in 60 s:\n${output}`);
  } catch (error) {
    await kill();
    throw error;
  }
}

/**
 * `spawnServer` until the test `t` ends (no orphan keeps the suite waiting). Resolves with
 * `{ value, log }`.
 */
export async function startServer(t, command, args, ready, options = {}) {
  const { value, log, kill } = await spawnServer(command, args, ready, options);
  t.after(kill);
  return { value, log };
}

/** The workerd binary (npm dev dependency workerd). */
export const WORKERD = join(ROOT, 'node_modules/.bin/workerd');

/**
 * Serves the workerd `config` (writeWorkerdConfig) on a free 127.0.0.1 port, from the config's
 * folder (where its `data/` is), with `args` added to the command line. Resolves once a GET of `/`
 * answers, with `{ url, log, kill }` (spawnServer's); the caller kills it (a test: serveWorkerd).
 * @param {string} config
 * @param {{ args?: string[] }} [options]
 */
export async function startWorkerd(config, { args = [] } = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const { log, kill } = await spawnServer(
    WORKERD,
    ['serve', config, '--socket-addr', `http=127.0.0.1:${port}`, ...args],
    async () => {
      await (await fetch(`${url}/`)).text();
    },
    { cwd: dirname(config) },
  );
  return { url, log, kill };
}

/** startWorkerd until the test `t` ends (a test may kill it sooner: killing twice is harmless). */
export async function serveWorkerd(t, config, options) {
  const server = await startWorkerd(config, options);
  t.after(server.kill);
  return server;
}

/** The JSON `server` (startWorkerd's) answers at `path`; anything but a 200 fails with its log. */
export async function fetchJson(server, path, init) {
  const response = await fetch(`${server.url}${path}`, init);
  const text = await response.text();
  assert.equal(response.status, 200, `${path}: ${text}\n${server.log()}`);
  return JSON.parse(text);
}
