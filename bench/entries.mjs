// One section entry against a bare Lua state, both in wasm, in the same process (goal: an entry
// at most 2x a bare state, since every section, call, task and fanout arm makes one).
//  - Runvil: a 200-section prompt whose sections each hold one block that falls through
//    (`local x = k`), through the built package: wall time / entries. Each entry is a fresh,
//    sandboxed Lua 5.5 state with the Engine globals, as in every run.
//  - bare: wasmoon's Lua 5.4 in wasm driven through its raw C API: luaL_newstate, luaL_openlibs,
//    load and run the same one-line chunk, lua_close.
// Samples interleaved (ABAB, alternating which goes first), one unmeasured warm-up each;
// min / median / max, the ratio of the medians and of each sample pair.
// Writes bench/results/entries.json.
//
//   node bench/entries.mjs [--quick]
import { performance } from 'node:perf_hooks';
import { LuaFactory } from 'wasmoon';
import { createEngine } from '../pkg/index.js';
import { QUICK, isMain, stats, versus, interleaved, writeResults } from './results.mjs';

export const SECTIONS = 200;

/** The prompt: `SECTIONS` sections, each one block that falls through (`local x = k`). */
export function entriesPrompt() {
  let src = '# Entries\n';
  for (let k = 1; k <= SECTIONS; k++) src += `\n## S${k}\n\n\`\`\`lua\nlocal x = ${k}\n\`\`\`\n`;
  return src;
}

/** wasmoon's side: `SECTIONS` bare states through its raw C API, each running the same chunk. */
export function bareStates(lua) {
  for (let k = 1; k <= SECTIONS; k++) {
    const L = lua.luaL_newstate();
    lua.luaL_openlibs(L);
    if (lua.luaL_loadstring(L, `local x = ${k}`) !== 0 || lua.lua_pcallk(L, 0, 0, 0, 0, null) !== 0) {
      throw new Error('the bare state failed to run its chunk');
    }
    lua.lua_close(L);
  }
}

async function main() {
  const started = performance.now();
  const RUNS = QUICK ? 5 : 11;

  const engine = await createEngine();
  const src = entriesPrompt();

  async function runvilEntry() {
    const t0 = performance.now();
    const out = await engine.run(src);
    const t = performance.now() - t0;
    if (out.error) throw new Error(`the entries prompt failed: ${JSON.stringify(out.error)}`);
    return (t * 1000) / (SECTIONS + 1); // the H1 pass is an entry too
  }

  const lua = await new LuaFactory().getLuaModule();
  function bareState() {
    const t0 = performance.now();
    bareStates(lua);
    return ((performance.now() - t0) * 1000) / SECTIONS;
  }

  const [entry, bare] = await interleaved(RUNS, [runvilEntry, async () => bareState()]);
  const figure = versus('one section entry', 'µs', entry, 'a bare Lua state in wasm (wasmoon)', bare,
    { max: 2, of: 'ratio', text: '≤ 2× a bare Lua state' });
  figure.ratioPairs = stats(entry.map((e, i) => e / bare[i]));
  figure.runs = RUNS;
  figure.sections = SECTIONS;
  const fmt = ({ min, median, max }, unit, digits = 0) =>
    `${median.toFixed(digits)} ${unit} (min ${min.toFixed(digits)}, max ${max.toFixed(digits)})`;
  console.log(`section entry vs a bare Lua state, both in wasm (${RUNS} interleaved samples of ${SECTIONS})`);
  console.log(`  runvil entry         ${fmt(figure, 'µs')}`);
  console.log(`  bare state (wasmoon) ${fmt(figure.peer, 'µs')}`);
  console.log(`  ratio of medians     ${figure.ratio.toFixed(2)}x; of pairs ${fmt(figure.ratioPairs, 'x', 2)}`);
  writeResults('entries', 'node bench/entries.mjs', { entry: figure }, started);
}

if (isMain(import.meta.url)) await main();
