// Runvil benchmarks: package size, cold start, per-section cost, and raw Lua speed against native
// lua5.4, wasmoon and fengari measured in the same run. Prints medians; see bench/README.md.
//
//   node bench/run.mjs [--quick]
import { readFileSync, writeFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { createEngine, memoryStore } from '../pkg/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const QUICK = process.argv.includes('--quick');
const RUNS = QUICK ? 3 : 5;
const SLOW_RUNS = QUICK ? 1 : 3; // fengari is ~30x slower than native

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const ms = (x) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;

async function sample(runs, fn) {
  const times = [];
  let value;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    value = await fn();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), value };
}

// The pure-Lua workload; valid Lua 5.3-5.5. The LCG uses floats (exact below 2^53) because fengari's
// integers are 32-bit; the checksum shows every VM did the same work.
const WORKLOAD = `
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local f = fib(27)
local parts = {}
for i = 1, 200000 do parts[i] = tostring(i % 97) end
local s = table.concat(parts, ",")
local seed, nums = 12345.0, {}
for i = 1, 200000 do
  seed = (seed * 16807.0) % 2147483647.0
  nums[i] = seed
end
table.sort(nums)
return string.format("%.0f", f + #s + nums[1] + nums[100000] + nums[200000])
`;

function sectionsPrompt(n) {
  let out = '# Sections\n';
  for (let k = 1; k <= n; k++) {
    out += `\n## S${k}\n\n\`\`\`lua\nvar.k${k} = ${k}\n\`\`\`\n\nValue {{ var.k${k} }}\n\n\`\`\`lua\nlocal p = prose\n\`\`\`\n`;
  }
  return out;
}

async function main() {
  const results = { date: new Date().toISOString(), node: process.version, cpu: cpus()[0]?.model, cores: cpus().length };
  const wasmPath = join(ROOT, 'pkg/runvil_bg.wasm');
  const bytes = readFileSync(wasmPath);
  // gzip(1) -9 when present, to match the figure build.sh prints; zlib otherwise.
  let gzip9;
  try {
    gzip9 = execFileSync('gzip', ['-9c', wasmPath], { maxBuffer: 64 << 20 }).length;
  } catch {
    gzip9 = gzipSync(bytes, { level: 9 }).length;
  }
  results.wasm = { raw: bytes.length, gzip9 };
  console.log(`wasm size: ${bytes.length} bytes raw, ${results.wasm.gzip9} bytes gzip -9`);

  const engine = await createEngine();
  results.engine = `runvil ${engine.engineVersion}`;
  console.log(`engine: ${results.engine}`);

  // Cold start in a fresh process each time: V8 caches compiled wasm per process, so an
  // in-process loop would measure a warm compile.
  const cold = [];
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
      import { readFileSync } from 'node:fs';
      const bytes = readFileSync(${JSON.stringify(wasmPath)});
      const { createEngine } = await import(${JSON.stringify(join(ROOT, 'pkg/index.js'))});
      const t0 = performance.now();
      await createEngine({ wasm: bytes });
      console.log(performance.now() - t0);`]);
    cold.push(Number(out.toString().trim()));
  }
  results.coldStartMs = median(cold);
  console.log(`createEngine cold start (compile + instantiate, fresh process): ${ms(results.coldStartMs)}`);

  // Per-section cost: 200 sections, each a var write, a placeholder in prose, and a prose read.
  const prompt = sectionsPrompt(200);
  const r = await sample(RUNS, () => engine.run(prompt, { seed: 1 }));
  if (!r.value.ok) throw new Error(`section prompt failed: ${r.value.error.kind}: ${r.value.error.message}`);
  results.perSectionMs = r.ms / 200;
  console.log(`200-section prompt: ${ms(r.ms)} total, ${(results.perSectionMs * 1000).toFixed(1)} µs per section entry`);

  // Store: operations per second on 1,000 files in a memory store, and the backend traffic a
  // 1,000-operation block costs (the batching: one open, few commits).
  const STORE_OPS = `
local n = 0
for i = 1, 1000 do store.write('files/' .. i .. '.txt', 'line one\\nline two\\n') end
for i = 1, 1000 do store.append('files/' .. i .. '.txt', 'more\\n') end
for i = 1, 1000 do n = n + #store.read('files/' .. i .. '.txt') end
for i = 1, 50 do n = n + #store.glob('files/*.txt') end
return n`;
  const storeOps = 1000 + 1000 + 1000 + 50;
  const storeRun = await sample(RUNS, async () => {
    const o = await engine.run(`# Store\n\n## Main\n\n\`\`\`lua\n${STORE_OPS}\n\`\`\`\n`, { seed: 1, store: memoryStore() });
    if (!o.ok) throw new Error(`store workload failed: ${o.error.kind}: ${o.error.message}`);
    return o.result;
  });
  results.store = { opsPerSecond: Math.round(storeOps / (storeRun.ms / 1000)), ms: storeRun.ms, ops: storeOps };
  const traffic = { open: 0, read: 0, commit: 0, changes: 0 };
  const inner = memoryStore();
  const counting = {
    open: () => { traffic.open += 1; return inner.open(); },
    read: (p) => { traffic.read += 1; return inner.read(p); },
    commit: (c) => { traffic.commit += 1; traffic.changes += c.length; return inner.commit(c); },
  };
  await engine.run(`# Store\n\n## Main\n\n\`\`\`lua\nfor i = 1, 1000 do store.append('log.txt', i .. '\\n') end\n\`\`\`\n`, { seed: 1, store: counting });
  const mixed = { open: 0, read: 0, commit: 0, changes: 0 };
  const before = { ...traffic };
  await engine.run(`# Store\n\n## Main\n\n\`\`\`lua\nfor i = 1, 1000 do store.write('m/' .. (i % 100) .. '.txt', tostring(i)) store.read('m/' .. (i % 100) .. '.txt') end\n\`\`\`\n`, { seed: 1, store: counting });
  for (const k of Object.keys(mixed)) mixed[k] = traffic[k] - before[k];
  results.store.backendCalls = { appendBlock: before, writeReadBlock: mixed };
  console.log(`store: ${results.store.opsPerSecond} ops/s (${storeOps} ops: write/append/read on 1,000 files + 50 globs, ${ms(storeRun.ms)})`);
  console.log(`store backend calls for a 1,000-append block: ${JSON.stringify(before)}; 1,000 write+read over 100 files: ${JSON.stringify(mixed)}`);

  // A 100-round models.loop: an instant model that calls one local tool per round, then answers;
  // against the same loop in the Vercel AI SDK (generateText, a mock model, one tool).
  const ROUNDS = 100;
  const loopPrompt = `---\nmax_tool_iterations: ${ROUNDS + 5}\n---\n# Loop\n\n## Main\n\n\`\`\`lua\ntools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args) return 'grabbed ' .. args.value end)\nmessages:user('go')\nreturn models.loop()\n\`\`\`\n`;
  const instantModel = () => {
    let n = 0;
    return async () => (++n < ROUNDS
      ? { content: '', tool_calls: [{ id: `c${n}`, name: 'grab', arguments: { value: 'x' } }], finish_reason: 'tool_calls' }
      : { content: 'done', finish_reason: 'stop' });
  };
  const loopRun = await sample(RUNS, async () => {
    const o = await engine.run(loopPrompt, { seed: 1, models: { default: instantModel() } });
    if (!o.ok || o.result !== 'done') throw new Error(`loop workload failed: ${JSON.stringify(o)}`);
    return o.result;
  });
  const { generateText, tool, stepCountIs } = await import('ai');
  const { MockLanguageModelV2 } = await import('ai/test');
  const { z } = await import('zod');
  const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  const aiRun = await sample(RUNS, async () => {
    let n = 0;
    const model = new MockLanguageModelV2({
      doGenerate: async () => (++n < ROUNDS
        ? { content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'grab', input: '{"value":"x"}' }], finishReason: 'tool-calls', usage, warnings: [] }
        : { content: [{ type: 'text', text: 'done' }], finishReason: 'stop', usage, warnings: [] }),
    });
    const r = await generateText({
      model,
      prompt: 'go',
      tools: { grab: tool({ description: 'Grab a value', inputSchema: z.object({ value: z.string() }), execute: async ({ value }) => `grabbed ${value}` }) },
      stopWhen: stepCountIs(ROUNDS + 5),
    });
    if (r.text !== 'done' || r.steps.length !== ROUNDS) throw new Error(`AI SDK loop: ${r.text} after ${r.steps.length} steps`);
    return r.text;
  });
  results.loop = { rounds: ROUNDS, runvilMsPerRound: loopRun.ms / ROUNDS, aiSdkMsPerRound: aiRun.ms / ROUNDS, ratio: loopRun.ms / aiRun.ms };
  console.log(`models.loop, ${ROUNDS} rounds with one local tool call each: runvil ${(loopRun.ms / ROUNDS * 1000).toFixed(0)} µs/round, Vercel AI SDK generateText ${(aiRun.ms / ROUNDS * 1000).toFixed(0)} µs/round, ratio ${results.loop.ratio.toFixed(2)}`);

  // Pure Lua: the engine (a `## Main` prompt) against its peers.
  const lua = {};
  const engineSource = `# Lua\n\n## Main\n\n\`\`\`lua\n${WORKLOAD}\n\`\`\`\n`;
  lua.engine = await sample(RUNS, async () => {
    // Budget lifted: fib(27) and the 200k-element sort together spend more than the default 10M
    // units (a call spends its function's whole length; table.sort's comparisons count).
    const o = await engine.run(engineSource, { seed: 1, limits: { instructions: 1e15 } });
    if (!o.ok) throw new Error(`engine workload failed: ${o.error.kind}: ${o.error.message}`);
    return o.result;
  });

  const dir = mkdtempSync(join(tmpdir(), 'runvil-bench-'));
  try {
    const file = join(dir, 'work.lua');
    // Timed inside Lua with os.clock (CPU time), so process start-up is not counted.
    writeFileSync(file, `local function work()\n${WORKLOAD}\nend\nlocal t0 = os.clock()\nlocal r = work()\nio.write((os.clock() - t0) * 1000, " ", r)\n`);
    const native = [];
    let value;
    for (let i = 0; i < RUNS; i++) {
      const [t, v] = execFileSync('lua5.4', [file]).toString().split(' ');
      native.push(Number(t));
      value = v;
    }
    lua.native = { ms: median(native), value };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const { LuaFactory } = await import('wasmoon');
  const wasmoon = await new LuaFactory().createEngine();
  lua.wasmoon = await sample(RUNS, () => wasmoon.doString(WORKLOAD));
  wasmoon.global.close();

  const { lua: F, lauxlib, lualib, to_luastring } = (await import('fengari')).default;
  lua.fengari = await sample(SLOW_RUNS, () => {
    const L = lauxlib.luaL_newstate();
    lualib.luaL_openlibs(L);
    if (lauxlib.luaL_loadstring(L, to_luastring(WORKLOAD)) !== F.LUA_OK || F.lua_pcall(L, 0, 1, 0) !== F.LUA_OK) {
      throw new Error(`fengari: ${F.lua_tojsstring(L, -1)}`);
    }
    return F.lua_tojsstring(L, -1);
  });

  results.lua = {};
  console.log('\npure-Lua workload (fib(27) + 200k-piece table.concat + table.sort of 200k LCG floats):');
  for (const [name, r] of Object.entries(lua)) {
    const ratio = r.ms / lua.native.ms;
    results.lua[name] = { ms: r.ms, ratioToNative: ratio, checksum: String(r.value) };
    console.log(`  ${name.padEnd(8)} ${ms(r.ms).padStart(11)}   ${ratio.toFixed(2)}x native lua5.4   checksum ${r.value}`);
  }
  const sums = new Set(Object.values(results.lua).map((r) => r.checksum));
  if (sums.size !== 1) throw new Error(`the VMs disagree on the checksum: ${[...sums].join(', ')}`);

  // Lua compute against wasmoon, interleaved (bench/compute.mjs), and responsiveness under busy
  // blocks (bench/turns.mjs).
  const { runCompute, printCompute } = await import('./compute.mjs');
  results.compute = await runCompute({ runs: RUNS, createEngine });
  printCompute(results.compute);
  const { runTurns, printTurns } = await import('./turns.mjs');
  results.turns = await runTurns({ runs: RUNS, createEngine });
  printTurns(results.turns);

  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench/results/latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log('\nwritten: bench/results/latest.json');
}

await main();
