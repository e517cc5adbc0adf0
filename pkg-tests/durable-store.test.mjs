// durableObjectStore: the store bridge kept in a Durable Object (RunvilStoreObject), run for real in
// workerd from npm on 127.0.0.1 with the objects' storage on a local disk directory, so that
// workerd can be restarted (and SIGKILLed) on the same data. The Worker is pkg-tests/durable/worker.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ROOT, PKG, freePort, mulberry32 } from './helpers.mjs';

const WORKER = join(ROOT, 'pkg-tests/durable/worker.js');
const WORKERD = join(ROOT, 'node_modules/.bin/workerd');
const CHUNK_BYTES = 128_000;

function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'runvil-durable-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A local server whose /wait?name=X answers once the test opens gate X. */
async function gateServer(t) {
  const gates = new Map();
  const gate = (name) => {
    if (!gates.has(name)) {
      let open;
      let reached;
      const opened = new Promise((resolve) => { open = resolve; });
      const arrived = new Promise((resolve) => { reached = resolve; });
      gates.set(name, { open, opened, reached, arrived });
    }
    return gates.get(name);
  };
  const server = createServer(async (req, res) => {
    const name = new URL(req.url, 'http://x').searchParams.get('name');
    const g = gate(name);
    g.reached();
    await g.opened;
    res.end(`gate ${name} opened`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    reached: (name) => gate(name).arrived,
    open: (name) => gate(name).open(),
  };
}

/** The workerd config: the test Worker, the package's files as runvil/<file>, objects on `data/`. */
function writeConfig(dir, gateURL) {
  const rel = (file) => relative(dir, file);
  const pkgModules = readdirSync(PKG).filter((f) => f.endsWith('.js') || f.endsWith('.wasm')).map((file) => {
    const name = file === 'workerd.js' ? 'runvil/workerd' : `runvil/${file}`;
    return `(name = "${name}", ${file.endsWith('.wasm') ? 'wasm' : 'esModule'} = embed "${rel(join(PKG, file))}")`;
  });
  mkdirSync(join(dir, 'data'), { recursive: true });
  const namespaces = ['CheckedStoreObject', 'FailingStoreObject', 'NotAStoreObject'];
  writeFileSync(join(dir, 'durable.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .main),
    (name = "data", disk = (path = "data", writable = true)),
    (name = "net", network = (allow = ["public", "local", "private"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const main :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "${rel(WORKER)}"),
    ${pkgModules.join(',\n    ')},
  ],
  durableObjectNamespaces = [
    ${namespaces.map((className) => `(className = "${className}", uniqueKey = "runvil-test-${className}", enableSql = true)`).join(',\n    ')},
  ],
  durableObjectStorage = (localDisk = "data"),
  bindings = [
    (name = "STORE", durableObjectNamespace = "CheckedStoreObject"),
    (name = "FAILING", durableObjectNamespace = "FailingStoreObject"),
    (name = "NOTSTORE", durableObjectNamespace = "NotAStoreObject"),
    (name = "GATE_URL", text = "${gateURL}"),
  ],
  globalOutbound = "net",
  compatibilityDate = "2025-01-01",
);
`);
  return join(dir, 'durable.capnp');
}

/**
 * Starts workerd on `dir`'s config (its own process group); resolves once it answers. `kill()`
 * SIGKILLs it and resolves when it is gone; the test's end kills it too.
 */
async function startWorkerd(t, dir) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(WORKERD, ['serve', join(dir, 'durable.capnp'), '--socket-addr', `http=127.0.0.1:${port}`], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { child.kill('SIGKILL'); }
    }
    await exited;
  };
  t.after(kill);
  for (const deadline = Date.now() + 60_000; ;) {
    if (child.exitCode !== null) throw new Error(`workerd exited with ${child.exitCode}:\n${output}`);
    try {
      const probe = await fetch(`${base}/`);
      await probe.text();
      if (probe.status === 404) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error(`workerd did not answer in 60 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { base, kill, log: () => output };
}

async function setup(t) {
  const dir = tempDir(t);
  const gate = await gateServer(t);
  writeConfig(dir, gate.url);
  return { dir, gate, server: await startWorkerd(t, dir) };
}

/**
 * Runs `source` in the Worker (workspace `ws`, namespace `ns`); `onEvent` sees each run event as it
 * streams. Resolves with the outcome and the events.
 */
async function runPrompt(server, source, { ws = 'w', ns = 'STORE', query = '', onEvent } = {}) {
  const response = await fetch(`${server.base}/run?ws=${encodeURIComponent(ws)}&ns=${ns}${query}`, { method: 'POST', body: source });
  assert.equal(response.status, 200, server.log());
  const events = [];
  let outcome;
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const item = JSON.parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      if (item.outcome) outcome = item.outcome;
      else {
        events.push(item);
        onEvent?.(item);
      }
    }
  }
  assert.ok(outcome, `the run streamed an outcome\n${server.log()}`);
  return { outcome, events };
}

async function getJSON(server, path) {
  const response = await fetch(`${server.base}${path}`);
  const text = await response.text();
  assert.equal(response.status, 200, `${path}: ${text}\n${server.log()}`);
  return JSON.parse(text);
}

const dump = (server, ws = 'w', ns = 'STORE') => getJSON(server, `/dump?ws=${encodeURIComponent(ws)}&ns=${ns}`);
const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const entry = (data) => ({ size: Buffer.byteLength(data), sha256: sha256(data) });

/** A prompt of `## Bn` sections, each running one Lua block. */
function prompt(blocks, frontmatter = '') {
  const head = frontmatter ? `---\n${frontmatter}\n---\n` : '';
  return `${head}# Test\n\n${blocks.map((lua, i) => `## B${i + 1}\n\n\`\`\`lua\n${lua}\n\`\`\`\n`).join('\n')}`;
}

function clean(verify) {
  assert.deepEqual(verify.problems, [], 'the object finds its storage consistent');
  assert.equal(verify.stagedVersions, 0, 'no staged chunk is left');
}

// ---- a workspace across runs and restarts ------------------------------------------------------

test('runs write, append, read and delete files across requests; a workerd restart keeps them', { timeout: 120_000 }, async (t) => {
  const { dir, server } = await setup(t);
  const first = await runPrompt(server, prompt([
    "store.write('notes/a.txt', 'alpha')\nstore.write('raw.bin', '\\255\\0\\1')\nstore.write('gone/x.txt', 'x')",
    "store.append('notes/a.txt', ' beta')\nreturn store.read('notes/a.txt')",
  ]));
  assert.deepEqual(first.outcome, { ok: true, result: 'alpha beta', seed: '1' });

  const second = await runPrompt(server, prompt([
    "store.append('notes/a.txt', ' gamma')\nstore.delete('gone/x.txt')\nlocal ok, err = pcall(store.read, 'raw.bin')\nreturn store.read('notes/a.txt') .. ' | ' .. err.reason .. ' | ' .. tostring(store.exists('gone'))",
  ]));
  assert.deepEqual(second.outcome, { ok: true, result: 'alpha beta gamma | not_utf8 | true', seed: '1' });
  const expected = {
    files: { 'notes/a.txt': entry('alpha beta gamma'), 'raw.bin': entry(Buffer.from([255, 0, 1])) },
    dirs: ['gone'],
  };
  const before = await dump(server);
  assert.deepEqual({ files: before.files, dirs: before.dirs }, expected);
  clean(before.verify);

  // workerd killed and started again on the same directory: everything is there.
  await server.kill();
  const again = await startWorkerd(t, dir);
  const after = await dump(again);
  assert.deepEqual({ files: after.files, dirs: after.dirs }, expected);
  const third = await runPrompt(again, prompt(["return store.read('notes/a.txt') .. ' ' .. tostring(store.exists('gone/x.txt')) .. ' ' .. tostring(store.exists('gone'))"]));
  assert.equal(third.outcome.result, 'alpha beta gamma false true');
  // Another workspace is another object: empty.
  const other = await runPrompt(again, prompt(["return #store.glob('**')"]), { ws: 'other' });
  assert.equal(other.outcome.result, '0');
});

// ---- sizes ---------------------------------------------------------------------------------------

/** Lua building every byte value 0..255 repeated `times`, and the same bytes in Node. */
const allBytesLua = (times) => `(function() local t = {} for i = 0, 255 do t[#t + 1] = string.char(i) end return table.concat(t):rep(${times}) end)()`;
const allBytes = (times) => Buffer.concat(Array.from({ length: times }, () => Buffer.from(Array.from({ length: 256 }, (_, i) => i))));

test('files larger than one storage value round-trip byte for byte, each value within the limit', { timeout: 120_000 }, async (t) => {
  const { server } = await setup(t);
  const text = Array.from({ length: 60_000 }, (_, i) => `line ${i}\n`).join(''); // 648,890 bytes: 6 chunks
  const first = await runPrompt(server, prompt([
    `store.write('big.bin', ${allBytesLua(1200)})\nlocal t = {} for i = 0, 59999 do t[#t + 1] = 'line ' .. i .. '\\n' end\nstore.write('big.txt', table.concat(t))`,
  ]), { ws: 'big' });
  assert.equal(first.outcome.ok, true, JSON.stringify(first.outcome));
  // A second run reads it back through the engine (across chunk boundaries) and copies it.
  const second = await runPrompt(server, prompt([
    `local s = store.read('big.txt')\nstore.write('copy.txt', s .. 'end')\nreturn #s .. ' ' .. s:sub(${CHUNK_BYTES - 5}, ${CHUNK_BYTES + 5}):gsub('\\n', '/')`,
  ]), { ws: 'big' });
  assert.deepEqual(second.outcome.result, `${text.length} ${text.slice(CHUNK_BYTES - 6, CHUNK_BYTES + 5).replaceAll('\n', '/')}`);
  const state = await dump(server, 'big');
  assert.deepEqual(state.files, { 'big.bin': entry(allBytes(1200)), 'big.txt': entry(text), 'copy.txt': entry(`${text}end`) });
  clean(state.verify);
  // 307,200 + 648,890 + 648,893 bytes in chunks of 128,000: 3 + 6 + 6 values.
  assert.equal(state.verify.chunks, 15);
  assert.equal(state.verify.largestChunk, CHUNK_BYTES);
  const stats = await getJSON(server, '/stats?ws=big');
  assert.deepEqual(stats.violations, []);
  assert.ok(stats.maxValue <= 131_072, `largest value ${stats.maxValue}`);
});

test('a batch larger than one transaction is staged, then made visible in one transaction', { timeout: 120_000 }, async (t) => {
  const { server } = await setup(t);
  // One block, one batch: 20 files of 400,000 bytes (8 MB). 5 travel inline (2 MiB budget); 15
  // are staged, 4 chunks each: 60 chunks, 32 per transaction: 2 stage transactions, then 1 apply.
  const lua = "for i = 1, 20 do store.write('f/' .. i .. '.txt', string.rep(string.format('%02d', i), 200000)) end\nreturn 'ok'";
  const run = await runPrompt(server, prompt([lua]), { ws: 'batch' });
  assert.deepEqual(run.outcome, { ok: true, result: 'ok', seed: '1' });
  const stats = await getJSON(server, '/stats?ws=batch');
  assert.deepEqual({ transactions: stats.transactions, violations: stats.violations }, { transactions: 3, violations: [] });
  assert.ok(stats.maxTransactionBytes <= 16 * 1024 * 1024 && stats.maxTransactionBytes > 2_000_000, `${stats.maxTransactionBytes}`);
  const state = await dump(server, 'batch');
  assert.deepEqual(state.files, Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`f/${k + 1}.txt`, entry(String(k + 1).padStart(2, '0').repeat(200_000))])));
  clean(state.verify);
  assert.equal(state.verify.chunks, 80);
  // Rewriting them replaces every chunk: the old versions' chunks are gone in the same transaction.
  const rewrite = await runPrompt(server, prompt(["for i = 1, 20 do store.write('f/' .. i .. '.txt', 'small ' .. i) end"]), { ws: 'batch' });
  assert.equal(rewrite.outcome.ok, true);
  const small = await dump(server, 'batch');
  clean(small.verify);
  assert.equal(small.verify.chunks, 20);
});
