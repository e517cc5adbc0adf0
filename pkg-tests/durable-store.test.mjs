// durableObjectStore: the store bridge kept in a Durable Object (RunvilStoreObject), run for real in
// workerd from npm on 127.0.0.1 with the objects' storage on a local disk directory, so that
// workerd can be restarted (and SIGKILLed) on the same data. The Worker is pkg-tests/durable/worker.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, PKG, freePort, mulberry32, fetchJson, serveWorkerd, tempDir, workerdPackageModules, writeWorkerdConfig } from './helpers.mjs';

const WORKER = join(ROOT, 'pkg-tests/durable/worker.js');
const CHUNK_BYTES = 128_000;


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

/** The workerd config: the test Worker and its objects (on `data/`), the gate server reachable. */
function writeConfig(dir, gateURL) {
  return writeWorkerdConfig(dir, {
    name: 'durable',
    modules: { 'worker.js': WORKER },
    durableObjects: {
      STORE: 'CheckedStoreObject',
      PAUSING: 'PausingStoreObject',
      RESETTABLE: 'ResettableStoreObject',
      FAILING: 'FailingStoreObject',
      NOTSTORE: 'NotAStoreObject',
    },
    text: { GATE_URL: gateURL },
    network: true,
  });
}

/** workerd on the config in `dir` (`args` added) until the test ends (or a test kills it). */
const serve = (t, dir, args = []) => serveWorkerd(t, join(dir, 'durable.capnp'), { args });

async function setup(t) {
  const dir = tempDir(t, 'durable');
  const gate = await gateServer(t);
  writeConfig(dir, gate.url);
  return { dir, gate, server: await serve(t, dir) };
}

/**
 * Runs `source` in the Worker (workspace `ws`, namespace `ns`); `onEvent` sees each run event as it
 * streams. Resolves with the outcome and the events.
 */
async function runPrompt(server, source, { ws = 'w', ns = 'STORE', query = '', onEvent } = {}) {
  const response = await fetch(`${server.url}/run?ws=${encodeURIComponent(ws)}&ns=${ns}${query}`, { method: 'POST', body: source });
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

const dump = (server, ws = 'w', ns = 'STORE') => fetchJson(server, `/dump?ws=${encodeURIComponent(ws)}&ns=${ns}`);
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
  const again = await serve(t, dir);
  const after = await dump(again);
  assert.deepEqual({ files: after.files, dirs: after.dirs }, expected);
  const third = await runPrompt(again, prompt(["return store.read('notes/a.txt') .. ' ' .. tostring(store.exists('gone/x.txt')) .. ' ' .. tostring(store.exists('gone'))"]));
  assert.equal(third.outcome.result, 'alpha beta gamma false true');
  // Another workspace is another object: empty.
  const other = await runPrompt(again, prompt(["return #store.glob('**')"]), { ws: 'other' });
  assert.equal(other.outcome.result, '0');
});

test('the host API imports, lists, reads and deletes files, taking its turn like a run', { timeout: 120_000 }, async (t) => {
  const { server } = await setup(t);
  const post = async (query, files) => {
    const response = await fetch(`${server.url}/host?ws=h${query}`, { method: 'POST', body: JSON.stringify(files) });
    const text = await response.text();
    assert.equal(response.status, 200, text + server.log());
    return JSON.parse(text);
  };
  assert.deepEqual(await post('', { 'docs/a.md': 'alpha', 'b.txt': 'x'.repeat(300_000) }),
    { files: { 'b.txt': 'x'.repeat(300_000), 'docs/a.md': 'alpha' }, missing: null, lease: { held: false, waiting: 0 } });
  const run = await runPrompt(server, prompt(["store.append('docs/a.md', ' beta')\nreturn #store.read('b.txt') .. ' ' .. store.read('docs/a.md')"]), { ws: 'h' });
  assert.equal(run.outcome.result, '300000 alpha beta');
  assert.deepEqual((await post('&delete=b.txt', {})).files, { 'docs/a.md': 'alpha beta' });
  clean((await dump(server, 'h')).verify);
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
  const stats = await fetchJson(server, '/stats?ws=big');
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
  const stats = await fetchJson(server, '/stats?ws=batch');
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

// ---- crashes -------------------------------------------------------------------------------------

const KILL_BLOCKS = 6;
const BIG = 12;
const SMALL = 30;

/** Block b rewrites every file (12 of 320,000 bytes: 6 inline, 6 staged; 30 small), adds new/b.txt and deletes new/(b-1).txt. */
function killBlock(b) {
  return `for i = 1, ${BIG} do store.write('big/' .. i .. '.txt', string.rep(string.format('%d:%d;', ${b}, i), 80000)) end
for i = 1, ${SMALL} do store.write('small/' .. i .. '.txt', string.format('small %d %d', ${b}, i)) end
store.write('new/${b}.txt', 'new ${b}')${b > 1 ? `\nstore.delete('new/${b - 1}.txt')` : ''}`;
}

/** The files after the first `j` batches (one per block). */
function stateAfter(j) {
  if (j === 0) return {};
  const files = {};
  for (let i = 1; i <= BIG; i++) files[`big/${i}.txt`] = entry(`${j}:${i};`.repeat(80000));
  for (let i = 1; i <= SMALL; i++) files[`small/${i}.txt`] = entry(`small ${j} ${i}`);
  files[`new/${j}.txt`] = entry(`new ${j}`);
  return Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1)));
}

const sorted = (files) => Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1)));

test('workerd SIGKILLed mid-run leaves a prefix of the batches and no torn file (seeded trials)', { timeout: 300_000 }, async (t) => {
  const seed = Number(process.env.RUNVIL_KILL_SEED ?? 20261201);
  const random = mulberry32(seed);
  const source = prompt(Array.from({ length: KILL_BLOCKS }, (_, i) => killBlock(i + 1)));
  const seen = [];
  for (let trial = 0; trial < 8; trial++) {
    const killAfter = Math.floor(random() * KILL_BLOCKS); // batches acknowledged before the kill is armed
    const delay = Math.floor(random() * 60); // then this many ms
    const { dir, server } = await setup(t);
    let acked = 0;
    let killing = null;
    const kill = () => {
      killing ??= new Promise((resolve) => setTimeout(resolve, delay)).then(async () => {
        const before = acked;
        await server.kill();
        return before;
      });
    };
    if (killAfter === 0) kill();
    const run = runPrompt(server, source, { ws: 'crash', onEvent: (e) => {
      if (e.event === 'section_finished' && /^B\d+$/.test(e.section)) {
        acked++;
        if (acked === killAfter) kill();
      }
    } }).catch((error) => ({ error }));
    const finished = await run;
    const ackedAtKill = killing ? await killing : acked;
    if (!killing) await server.kill(); // the run beat the kill: the whole run is the prefix
    const label = `trial ${trial} (seed ${seed}): kill after ${killAfter} batches + ${delay} ms`;

    const again = await serve(t, dir);
    const state = await dump(again, 'crash');
    const j = Array.from({ length: KILL_BLOCKS + 1 }, (_, k) => k).find((k) => JSON.stringify(sorted(state.files)) === JSON.stringify(stateAfter(k)));
    assert.notEqual(j, undefined, `${label}: the workspace is not the state after any number of batches: ${JSON.stringify(Object.keys(state.files)).slice(0, 300)}`);
    assert.ok(j >= ackedAtKill, `${label}: batch ${ackedAtKill} was acknowledged, the workspace holds ${j}`);
    assert.deepEqual(state.verify.problems, [], label);
    // The next run takes the workspace and sweeps what a dead run staged.
    const next = await runPrompt(again, prompt(["return #store.glob('**/*.txt')"]), { ws: 'crash' });
    assert.equal(next.outcome.result, String(Object.keys(state.files).length), label);
    const swept = await dump(again, 'crash');
    clean(swept.verify);
    const chunks = Object.values(stateAfter(j)).reduce((n, { size }) => n + Math.ceil(size / CHUNK_BYTES), 0);
    assert.equal(swept.verify.chunks, chunks, `${label}: ${JSON.stringify({ j, swept: swept.verify })}`);
    seen.push({ killAfter, delay, acked: ackedAtKill, holds: j, stagedLeft: state.verify.stagedVersions, runCompleted: Boolean(finished.outcome) });
    await again.kill();
  }
  t.diagnostic(JSON.stringify(seen));
});

test('workerd SIGKILLed between staging a batch and applying it: the batch is absent, its chunks are swept', { timeout: 120_000 }, async (t) => {
  const source = prompt(Array.from({ length: KILL_BLOCKS }, (_, i) => killBlock(i + 1)));
  for (const killAtStage of [1, 4]) {
    const { dir, server, gate } = await setup(t);
    for (let n = 1; n < killAtStage; n++) gate.reached(`stage-${n}`).then(() => gate.open(`stage-${n}`));
    const run = runPrompt(server, source, { ws: 'crash', ns: 'PAUSING' }).catch((error) => ({ error }));
    await gate.reached(`stage-${killAtStage}`); // batch killAtStage's chunks are stored, its apply not sent
    await server.kill();
    assert.ok((await run).error, 'the run died with workerd');
    const again = await serve(t, dir);
    const state = await dump(again, 'crash', 'PAUSING');
    assert.deepEqual(sorted(state.files), stateAfter(killAtStage - 1), `killed at stage ${killAtStage}`);
    assert.deepEqual(state.verify.problems, []);
    assert.equal(state.verify.stagedVersions, BIG - 6, 'the dead batch\'s staged files are recorded');
    // The next run sweeps them.
    const next = await runPrompt(again, prompt(["return 'next'"]), { ws: 'crash', ns: 'PAUSING' });
    assert.equal(next.outcome.result, 'next');
    clean((await dump(again, 'crash', 'PAUSING')).verify);
    await again.kill();
  }
});

// ---- two runs on one workspace -----------------------------------------------------------------

const USES_GATE = 'uses: [gate]';

test('two concurrent runs on one workspace take turns: the second waits for the first to end', { timeout: 120_000 }, async (t) => {
  const { server, gate } = await setup(t);
  const first = runPrompt(server, prompt([
    "store.append('log.txt', 'A')",
    "tools.call('gate/wait', { name = 'A' })",
    "store.append('log.txt', 'A')\nreturn store.read('log.txt')",
  ], USES_GATE), { ws: 'shared' });
  await gate.reached('A'); // the first run has committed its first batch and holds the workspace
  const second = runPrompt(server, prompt(["store.append('log.txt', 'B')\nreturn store.read('log.txt')"]), { ws: 'shared' });
  while ((await fetchJson(server, '/lease?ws=shared')).waiting === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  gate.open('A');
  assert.deepEqual((await first).outcome, { ok: true, result: 'AA', seed: '1' });
  assert.deepEqual((await second).outcome, { ok: true, result: 'AAB', seed: '1' });
  assert.deepEqual((await dump(server, 'shared')).files, { 'log.txt': entry('AAB') });
  assert.deepEqual(await fetchJson(server, '/lease?ws=shared'), { held: false, waiting: 0 });
});

test('a run cancelled while it waits for the workspace ends Cancelled and leaves the lease free', { timeout: 120_000 }, async (t) => {
  const { server, gate } = await setup(t);
  const holder = runPrompt(server, prompt(["store.write('a.txt', '1')", "tools.call('gate/wait', { name = 'H' })", "store.append('a.txt', '2')"], USES_GATE), { ws: 'c' });
  await gate.reached('H');
  const cancelled = await runPrompt(server, prompt(["store.write('a.txt', 'never')"]), { ws: 'c', query: '&cancelWhenWaiting=1' });
  assert.equal(cancelled.outcome.ok, false);
  assert.equal(cancelled.outcome.error.kind, 'Cancelled');
  gate.open('H');
  assert.equal((await holder).outcome.ok, true);
  // The next run gets the workspace: the cancelled run's turn came and was given straight back.
  const next = await runPrompt(server, prompt(["return store.read('a.txt')"]), { ws: 'c' });
  assert.deepEqual(next.outcome, { ok: true, result: '12', seed: '1' });
  assert.deepEqual(await fetchJson(server, '/lease?ws=c'), { held: false, waiting: 0 });
});

// ---- failures ------------------------------------------------------------------------------------

test('failures reach the run as Vfs errors; a missing binding is a TypeError at construction', { timeout: 120_000 }, async (t) => {
  const { server } = await setup(t);
  const failing = await runPrompt(server, prompt(["store.write('a.txt', 'x')\nreturn 'written'"]), { ns: 'FAILING' });
  assert.deepEqual(failing.outcome.error, {
    kind: 'Vfs',
    section: '## B1',
    line: 6,
    message: "store backend failure: Durable Object store 'w': committing a batch of 1 change failed (SQLITE_FULL: database or disk is full)",
  });
  assert.deepEqual((await dump(server, 'w', 'FAILING')).files, {}, 'the failed batch left nothing');
  const wrongClass = await runPrompt(server, prompt(["return 'ran'"]), { ns: 'NOTSTORE' });
  assert.deepEqual(wrongClass.outcome.error, {
    kind: 'Vfs',
    message: "store backend failure: Durable Object store 'w': opening the workspace failed: the namespace is not bound to RunvilStoreObject; "
      + 'export RunvilStoreObject from the Worker and bind the namespace to that class (The RPC receiver does not implement the method "begin".)',
  });
  // The object restarted under a run (ctx.abort, as a deploy or an eviction does): the run's next
  // batch fails; the batches before it stay, and the next run gets the workspace.
  const reset = await runPrompt(server, prompt(["store.write('a.txt', '1')", "tools.call('gate/reset')", "store.write('b.txt', '2')\nreturn 'never'"], USES_GATE), { ns: 'RESETTABLE' });
  assert.deepEqual(reset.outcome.error, {
    kind: 'Vfs',
    section: '## B3',
    line: 21,
    message: "store backend failure: Durable Object store 'w': committing a batch of 1 change failed: the Durable Object restarted while the run held the workspace "
      + '(a deploy, an eviction or a crash); the batches committed before are kept (The execution context which hosts this callback is no longer running.)',
  });
  const after = await runPrompt(server, prompt(["return store.read('a.txt') .. ' ' .. tostring(store.exists('b.txt'))"]), { ns: 'RESETTABLE' });
  assert.deepEqual(after.outcome, { ok: true, result: '1 false', seed: '1' });
  // A read-only store refuses changes and changes nothing.
  const readOnly = await runPrompt(server, prompt(["local ok, err = pcall(store.write, 'a.txt', 'new')\nreturn store.read('a.txt') .. ' ' .. err.reason"]), { ns: 'RESETTABLE', query: '&readOnly=1' });
  assert.deepEqual(readOnly.outcome, { ok: true, result: '1 permission_denied', seed: '1' });
  assert.deepEqual((await dump(server, 'w', 'RESETTABLE')).files, { 'a.txt': entry('1') });
  assert.deepEqual(await fetchJson(server, '/construct?binding=NOPE'), { error: {
    name: 'TypeError',
    message: 'durableObjectStore: namespace must be a Durable Object namespace binding (env.<NAME>, bound to RunvilStoreObject in wrangler.toml); got undefined',
  } });
});

// ---- types ---------------------------------------------------------------------------------------

test('types: runvil/workerd (and runvil under the workerd condition) type the store and the class with no Workers types', { timeout: 120_000 }, async (t) => {
  const { execFile } = await import('node:child_process');
  const { cpSync, symlinkSync } = await import('node:fs');
  const dir = tempDir(t, 'durable');
  mkdirSync(join(dir, 'node_modules'));
  cpSync(PKG, join(dir, 'node_modules/runvil'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules/typescript'), join(dir, 'node_modules/typescript'));
  writeFileSync(join(dir, 'worker.ts'), `import { createEngine, durableObjectStore, RunvilStoreObject, type DurableObjectStore } from 'runvil/workerd';
import { durableObjectStore as fromRoot } from 'runvil';

/** A namespace as @cloudflare/workers-types declares it, reduced to what matters. */
interface Namespace { idFromName(name: string): { toString(): string }; get(id: { toString(): string }): { fetch(url: string): Promise<unknown> } }

export { RunvilStoreObject };
export async function handle(env: { RUNVIL_STORE: Namespace }): Promise<string[]> {
  const store: DurableObjectStore = durableObjectStore(env.RUNVIL_STORE, 'workspace', { readOnly: false });
  await (await createEngine()).run('x', { store: fromRoot(env.RUNVIL_STORE, 'other') });
  const { held, waiting }: { held: boolean; waiting: number } = await store.lease();
  return [...(await store.list()), String(held), String(waiting), (await store.verify()).problems.join()];
}
`);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { module: 'esnext', moduleResolution: 'bundler', customConditions: ['workerd'], lib: ['es2022'], types: [], target: 'es2022', strict: true, noEmit: true, skipLibCheck: false },
    files: ['worker.ts'],
  }));
  const result = await new Promise((resolve) => execFile(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir }, (error, stdout, stderr) => resolve({ code: error?.code ?? 0, output: stdout + stderr })));
  assert.deepEqual(result, { code: 0, output: '' });
});

// ---- the edge example --------------------------------------------------------------------------

test('examples/edge as a Worker with RUNVIL_STORE bound: each workspace keeps the questions asked', { timeout: 120_000 }, async (t) => {
  const { localProvider } = await import('./helpers.mjs');
  const provider = await localProvider((body, req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      id: 'x', object: 'chat.completion', model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Answered.' }, finish_reason: 'stop' }],
    }));
  });
  t.after(provider.close);
  const dir = tempDir(t, 'durable');
  const rel = (file) => relative(dir, file);
  const example = join(ROOT, 'examples/edge');
  const pkgModules = workerdPackageModules(dir).join(',\n    ');
  mkdirSync(join(dir, 'data'));
  // The example Worker, and beside it the test Worker reading the example's objects (/dump).
  writeFileSync(join(dir, 'durable.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "example", worker = .example),
    (name = "tests", worker = .tests),
    (name = "data", disk = (path = "data", writable = true)),
    (name = "net", network = (allow = ["public", "local", "private"])),
  ],
  sockets = [
    (name = "http", address = "127.0.0.1:0", http = (), service = "example"),
    (name = "dump", address = "127.0.0.1:0", http = (), service = "tests"),
  ],
);
const example :Workerd.Worker = (
  modules = [
    ${['worker.js', 'app.js', 'prompt.js'].map((file) => `(name = "${file}", esModule = embed "${rel(join(example, file))}")`).join(',\n    ')},
    ${pkgModules},
  ],
  durableObjectNamespaces = [ (className = "RunvilStoreObject", uniqueKey = "runvil-example-store", enableSql = true) ],
  durableObjectStorage = (localDisk = "data"),
  bindings = [
    (name = "OPENAI_BASE_URL", text = "${provider.baseURL}"),
    (name = "OPENAI_API_KEY", text = "test-key"),
    (name = "MODEL", text = "edge-model"),
    (name = "RUNVIL_STORE", durableObjectNamespace = "RunvilStoreObject"),
  ],
  globalOutbound = "net",
  compatibilityDate = "2025-01-01",
);
const tests :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "${rel(WORKER)}"),
    ${pkgModules},
  ],
  bindings = [ (name = "EXAMPLE", durableObjectNamespace = (className = "RunvilStoreObject", serviceName = "example")) ],
  compatibilityDate = "2025-01-01",
);
`);
  const dumpPort = await freePort();
  const server = await serve(t, dir, ['--socket-addr', `dump=127.0.0.1:${dumpPort}`]);
  for (const [q, workspace] of [['What is workerd?', 'a'], ['And runvil?', 'a'], ['Hello?', 'b']]) {
    const response = await fetch(`${server.url}/run?q=${encodeURIComponent(q)}&workspace=${workspace}`);
    const text = await response.text();
    assert.match(text, /event: outcome\ndata: \{"ok":true,"result":"Answered\."/, `${text}\n${server.log()}`);
  }
  const files = async (ws) => (await fetchJson({ url: `http://127.0.0.1:${dumpPort}`, log: server.log }, `/dump?ws=${ws}&ns=EXAMPLE`)).files;
  assert.deepEqual(await files('a'), { 'questions.md': entry('- What is workerd?\n- And runvil?\n') });
  assert.deepEqual(await files('b'), { 'questions.md': entry('- Hello?\n') });
});
