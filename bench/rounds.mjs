// Rounds and placeholders: what a models.loop round costs as the conversation grows, and what a
// placeholder costs as the value it reads from grows.
//  - models.loop for 10 / 100 / 1,000 rounds with an instant model that asks for one local tool
//    call per round, through the built package, against the same loop in the Vercel AI SDK
//    (generateText with MockLanguageModelV2 and one tool) in the same process. Samples are
//    interleaved (AB, BA, AB, ...; one unmeasured warm-up each). Per-round time = run time /
//    rounds; goal: 1,000 rounds cost at most 2x the per-round time of 10 rounds.
//  - 1,000 `{{ var.big.k1 }}` placeholders rendered once, `var.big` of 10 / 1,000 / 10,000 keys:
//    the time of the section that renders them minus the same section whose prose has no
//    placeholder (interleaved pairs). `var.big` is built in the H1 body, and the section is timed
//    from its section_started to its section_finished event (onEvent is called as they happen), so
//    the building (100 ms at 10,000 keys, with its noise) is in neither figure.
//
// Writes bench/results/rounds.json.
//
//   node bench/rounds.mjs [--quick]      (against the current pkg/; RUNVIL_PKG=dir for another build)
import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateText, tool, stepCountIs } from 'ai';
import { MockLanguageModelV2 } from 'ai/test';
import { z } from 'zod';
import { QUICK, stats, versus, interleaved as interleavedAll, writeResults, isMain } from './results.mjs';

const started = performance.now();
const ROUND_COUNTS = [10, 100, 1000];
// --quick: one sample at 1,000 rounds (the AI SDK takes about 10 s per 1,000-round loop).
const RUNS = { 10: QUICK ? 5 : 21, 100: QUICK ? 3 : 9, 1000: QUICK ? 1 : 5 };
const KEY_COUNTS = [10, 1000, 10000];
const PLACEHOLDER_RUNS = QUICK ? 3 : 7;

const pkg = process.env.RUNVIL_PKG ? pathToFileURL(`${resolve(process.env.RUNVIL_PKG)}/index.js`).href : '../pkg/index.js';
const { createEngine } = await import(pkg);
const engine = await createEngine();

function loopPrompt(rounds) {
  return `---\nmax_tool_iterations: ${rounds + 5}\n---\n# Loop\n\n## Main\n\n\`\`\`lua\n` +
    `tools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args) return 'grabbed ' .. args.value end)\n` +
    `messages:user('go')\nreturn models.loop()\n\`\`\`\n`;
}

async function runvilLoop(rounds) {
  let n = 0;
  const model = async () => (++n < rounds
    ? { content: '', tool_calls: [{ id: `c${n}`, name: 'grab', arguments: { value: 'x' } }], finish_reason: 'tool_calls' }
    : { content: 'done', finish_reason: 'stop' });
  const src = loopPrompt(rounds);
  const t0 = performance.now();
  const o = await engine.run(src, { seed: 1, models: { default: model } });
  const t = performance.now() - t0;
  if (!o.ok || o.result !== 'done' || n !== rounds) throw new Error(`runvil loop of ${rounds}: ${JSON.stringify(o)} after ${n} rounds`);
  return t;
}

const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
const grab = tool({ description: 'Grab a value', inputSchema: z.object({ value: z.string() }), execute: async ({ value }) => `grabbed ${value}` });

async function aiSdkLoop(rounds) {
  let n = 0;
  const model = new MockLanguageModelV2({
    doGenerate: async () => (++n < rounds
      ? { content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'grab', input: '{"value":"x"}' }], finishReason: 'tool-calls', usage, warnings: [] }
      : { content: [{ type: 'text', text: 'done' }], finishReason: 'stop', usage, warnings: [] }),
  });
  const t0 = performance.now();
  const r = await generateText({ model, prompt: 'go', tools: { grab }, stopWhen: stepCountIs(rounds + 5) });
  const t = performance.now() - t0;
  if (r.text !== 'done' || r.steps.length !== rounds) throw new Error(`AI SDK loop of ${rounds}: ${r.text} after ${r.steps.length} steps`);
  return t;
}

const interleaved = (runs, a, b) => interleavedAll(runs, [a, b]);

const us = (ms) => ms * 1000;
const cell = (s) => `${s.median.toFixed(0)} (${s.min.toFixed(0)}-${s.max.toFixed(0)})`;

export async function runRounds() {
  const rounds = {};
  for (const n of ROUND_COUNTS) {
    const [rv, ai] = await interleaved(RUNS[n], () => runvilLoop(n), () => aiSdkLoop(n));
    rounds[n] = { runs: RUNS[n], runvilUsPerRound: stats(rv.map((t) => us(t) / n)), aiSdkUsPerRound: stats(ai.map((t) => us(t) / n)) };
  }
  const growth = (k) => rounds[1000][k].median / rounds[10][k].median;
  const exponent = (k) => Math.log((rounds[1000][k].median * 1000) / (rounds[10][k].median * 10)) / Math.log(100);
  const summary = {
    runvil: { perRound1000Over10: growth('runvilUsPerRound'), exponent: exponent('runvilUsPerRound') },
    aiSdk: { perRound1000Over10: growth('aiSdkUsPerRound'), exponent: exponent('aiSdkUsPerRound') },
  };

  const placeholders = {};
  for (const keys of KEY_COUNTS) {
    const setup = `var.big = {}\nfor i = 1, ${keys} do var.big['k' .. i] = i end`;
    const prompt = (prose) => `# P\n\n\`\`\`lua\n${setup}\n\`\`\`\n\n## Main\n\n${prose}\n\n\`\`\`lua\nreturn #prose\n\`\`\`\n`;
    const withPh = prompt('{{ var.big.k1 }} '.repeat(1000));
    const without = prompt('1 '.repeat(1000));
    const time = async (src) => {
      let started;
      let finished;
      const onEvent = (e) => {
        if (e.section !== 'Main') return;
        if (e.event === 'section_started') started = performance.now();
        else if (e.event === 'section_finished') finished = performance.now();
      };
      const o = await engine.run(src, { seed: 1, onEvent });
      if (!o.ok || o.result !== '2000') throw new Error(`placeholder run: ${JSON.stringify(o)}`);
      if (started === undefined || finished === undefined) throw new Error('placeholder run: no section_started/section_finished events for Main');
      return finished - started;
    };
    const [a, b] = await interleaved(PLACEHOLDER_RUNS, () => time(withPh), () => time(without));
    placeholders[keys] = { runs: PLACEHOLDER_RUNS, ms: stats(a.map((t, i) => t - b[i])), runMs: stats(a), baselineMs: stats(b) };
  }
  return { rounds, summary, placeholders };
}

export function printRounds({ rounds, summary, placeholders }) {
  console.log('models.loop, one local tool call per round, instant model: µs per round, median (min-max)');
  console.log(`  ${'rounds'.padEnd(8)} ${'runvil'.padStart(18)} ${'AI SDK'.padStart(18)}   samples`);
  for (const [n, r] of Object.entries(rounds)) {
    console.log(`  ${n.padEnd(8)} ${cell(r.runvilUsPerRound).padStart(18)} ${cell(r.aiSdkUsPerRound).padStart(18)}   ${r.runs}`);
  }
  for (const [who, s] of Object.entries(summary)) {
    console.log(`  ${who}: per-round time at 1,000 rounds / at 10 rounds = ${s.perRound1000Over10.toFixed(2)}; total time ~ rounds^${s.exponent.toFixed(2)}`);
  }
  console.log('\n1,000 {{ var.big.k1 }} placeholders: ms (their section minus the same section without them), median (min-max)');
  for (const [keys, p] of Object.entries(placeholders)) {
    const f = (s) => `${s.median.toFixed(2)} (${s.min.toFixed(2)}-${s.max.toFixed(2)})`;
    console.log(`  var.big of ${keys.padStart(5)} keys: ${f(p.ms)}   [section ${p.runMs.median.toFixed(1)} ms, without ${p.baselineMs.median.toFixed(1)} ms]`);
  }
}

/** The figures of bench/results/rounds.json. */
export function roundsFigures({ rounds, summary, placeholders }) {
  const figures = {};
  for (const [n, r] of Object.entries(rounds)) {
    const f = versus(`models.loop, ${Number(n).toLocaleString('en-US')} rounds: time per round`, 'µs',
      r.runvilUsPerRound.samples, 'Vercel AI SDK', r.aiSdkUsPerRound.samples);
    f.runs = r.runs;
    figures[`loop${n}`] = f;
  }
  figures.growth = {
    name: 'models.loop: per-round time at 1,000 rounds / at 10 rounds (medians)', unit: '×',
    value: summary.runvil.perRound1000Over10, peer: { name: 'Vercel AI SDK', value: summary.aiSdk.perRound1000Over10 },
    goal: { max: 2, of: 'value', text: '1,000 rounds ≤ 2× the per-round time of 10' },
  };
  figures.exponent = {
    name: 'models.loop: total time ~ rounds^k, k from the medians at 10 and 1,000 rounds', unit: '',
    value: summary.runvil.exponent, peer: { name: 'Vercel AI SDK', value: summary.aiSdk.exponent },
  };
  for (const [keys, p] of Object.entries(placeholders)) {
    figures[`placeholders${keys}`] = {
      name: `1,000 {{ var.big.k1 }} placeholders, var.big of ${Number(keys).toLocaleString('en-US')} keys (their section minus the same section without them)`,
      unit: 'ms', ...p.ms, runs: p.runs, runMs: p.runMs, baselineMs: p.baselineMs,
    };
  }
  // Placeholders cost the size of what they read: at 10,000 keys no more than at 10, up to the
  // noise of the runs they are the difference of (the spread of the baseline run at 10,000 keys).
  const small = placeholders[KEY_COUNTS[0]];
  const big = placeholders[KEY_COUNTS.at(-1)];
  const noise = big.baselineMs.max - big.baselineMs.min;
  figures.placeholderGrowth = {
    name: '1,000 placeholders: cost at 10,000 keys less cost at 10 keys (medians)', unit: 'ms',
    value: big.ms.median - small.ms.median, noise,
    goal: { max: noise, of: 'value', text: 'flat: within the spread (max − min) of the baseline run at 10,000 keys' },
  };
  return figures;
}

if (isMain(import.meta.url)) {
  const r = await runRounds();
  printRounds(r);
  writeResults('rounds', 'node bench/rounds.mjs', roundsFigures(r), started);
}
