// Regenerates the figure tables of docs/performance.md from the bench results (bench/results/*.json,
// written by the bench scripts; see bench/results.mjs for their shape). A generated block sits
// between `<!-- bench:ID -->` and `<!-- /bench:ID -->`; everything outside the markers is prose and
// left alone. Each block ends with a stamp: the command that reproduces it, the date and the machine.
// Goals are data in the results; met / not met is computed here, never typed.
//
// Fails loudly on a marker no renderer knows, an unclosed or stray marker, a renderer with no
// marker in the doc, a results file or figure that is missing, and (unless --allow-quick) results
// of a --quick run.
//
//   node tools/perf-doc.mjs [--results DIR] [--doc FILE] [--out FILE] [--allow-quick] [--allow-missing] [--only ID,ID]
// (--allow-missing, for smoke runs that skipped suites: a block without results says so instead;
// --only: regenerate just these blocks, after running just their suites.)
import { readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// ---- numbers ---------------------------------------------------------------------------------

const en = (x, digits) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
/** A measured number: 3 significant-ish digits, thousands separated. */
export function num(x) {
  if (!Number.isFinite(x)) throw new Error(`not a number: ${x}`);
  const a = Math.abs(x);
  return en(x, a >= 100 ? 0 : a >= 10 ? 1 : 2);
}
/** A count: an integer, thousands separated. */
const int = (x) => {
  if (!Number.isInteger(x)) throw new Error(`not a count: ${x}`);
  return en(x, 0);
};
const times = (x) => `${num(x)}×`;
const withUnit = (x, unit) => (unit ? `${num(x)} ${unit}` : num(x));
/** "median (min–max)" */
const spread = (f) => `${num(f.median)} (${num(f.min)}–${num(f.max)})`;
const mmm = (f) => `${num(f.min)} / ${num(f.median)} / ${num(f.max)}`;

// ---- results ---------------------------------------------------------------------------------

/** Every bench/results/<suite>.json in `dir`, by suite. */
export function loadResults(dir) {
  const out = {};
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.json')) continue;
    const r = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    // Other JSON (the single latest.json of the earlier bench/run.mjs) is not a suite's results.
    if (typeof r.suite !== 'string') continue;
    if (`${r.suite}.json` !== f || typeof r.figures !== 'object') throw new Error(`${f}: a results file must be <suite>.json and hold figures`);
    out[r.suite] = r;
  }
  return out;
}

/** Reads figures for one block, recording which suites the block drew on (for its stamp). */
class Source {
  constructor(results, allowQuick) {
    this.results = results;
    this.allowQuick = allowQuick;
    this.used = new Set();
  }

  suite(name) {
    const r = this.results[name];
    if (!r) throw new Error(`missing result: no bench/results/${name}.json (run node bench/${name}.mjs, or ./build.sh bench)`);
    if (r.quick && !this.allowQuick) throw new Error(`bench/results/${name}.json is from a --quick run; rerun without --quick before it goes into the doc`);
    this.used.add(name);
    return r;
  }

  /** `fig('entries.entry')`: the figure, or an error naming what is missing. */
  fig(path) {
    const [suite, id] = path.split('.');
    const f = this.suite(suite).figures[id];
    if (!f) throw new Error(`missing result: bench/results/${suite}.json has no figure "${id}"`);
    return f;
  }
}

/** The goal's verdict, computed from the figure: 'met' or 'not met'. */
export function verdict(f) {
  const g = f.goal;
  if (!g) throw new Error(`figure "${f.name}" has no goal`);
  const v = f[g.of];
  if (!Number.isFinite(v) || !Number.isFinite(g.max)) throw new Error(`figure "${f.name}": goal on "${g.of}" has no number to test`);
  return v <= g.max ? 'met' : 'not met';
}
const status = (f) => (verdict(f) === 'met' ? '**met**' : '**not met**');

const table = (head, rows) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

// ---- blocks ----------------------------------------------------------------------------------

/** The major version of the Node a results file was measured under ('v24.22.3' → 24). */
function nodeMajor(results) {
  const m = /^v(\d+)\./.exec(results.node ?? '');
  if (!m) throw new Error(`bench/results/${results.suite}.json: no Node version in "${results.node}"`);
  return Number(m[1]);
}

/** The start-up tables of one run of bench/startup.mjs (`suite`: the name it wrote its results as). */
function startupBlock(src, suite) {
  const code = (c) => `${num(c.value)} bytes of wasm code in ${num(c.functions)} functions (${c.turbofan} tiered up)`;
  const rows = ['import', 'create', 'first', 'sum', 'rss'].map((k) => {
    const f = src.fig(`${suite}.${k}`);
    return [f.name, `${spread(f)} ${f.unit}`, `${spread(f.peer)} ${f.unit}`, times(f.ratio), f.goal ? `${f.goal.text}: **${verdict(f)}**` : ''];
  });
  // The variant arms (bench/startup.mjs ARMS), each against the arm it varies.
  const variants = ['eager', 'webCrypto', 'untiered', 'wasmoonLoop'].map((name) => {
    const cell = (key) => {
      const f = src.fig(`${suite}.${name}-${key}`);
      return `${num(f.median)} (${num(f.peer.median)})`;
    };
    return [src.fig(`${suite}.${name}-first`).name, cell('create'), cell('first'), cell('rss')];
  });
  return `${table(['figure', 'Runvil', 'wasmoon', 'ratio of medians', 'goal'], rows)}\n\n` +
    `${table(['variant (median; in brackets, the arm it varies)', 'createEngine, ms', 'first run, ms', 'RSS added, MiB'], variants)}\n\n` +
    `${src.fig(`${suite}.sum`).runs} samples of each arm, median (min–max), each in a fresh Node process, the arms alternating. ` +
    'Each variant takes one cost out of Runvil\'s default arm, puts one in (the Web Crypto seed), or (the last) puts one into wasmoon\'s. ' +
    `The first result compiles ${code(src.fig(`${suite}.firstRunCode`))} in Runvil, ${code(src.fig(`${suite}.firstRunCode`).peer)} in wasmoon ` +
    '(`--trace-wasm-compilation-times`: Liftoff functions and their bytes of wasm code; functions tiered up to TurboFan before the child exited).';
}

/** Each block: (src) => markdown. The ids are the markers' names. */
export const BLOCKS = {
  summary(src) {
    const compute = src.fig('compute.geomean');
    const st = (k) => src.fig(`startup.${k}`);
    const on = (suite) => `Node ${nodeMajor(src.suite(suite))}`;
    // A start-up goal, one row per Node it was measured under.
    const perNode = (key, label, unit) => ['startup', 'startup-node24'].map((suite) => {
      const f = src.fig(`${suite}.${key}`);
      return [`${label}, ${on(suite)}`, ...pair(f, unit), f.goal.text, status(f)];
    });
    const entry = src.fig('entries.entry');
    const ph = [10, 1000, 10000].map((k) => src.fig(`rounds.placeholders${k}`));
    const phGrowth = src.fig('rounds.placeholderGrowth');
    const loops = [10, 100, 1000].map((n) => src.fig(`rounds.loop${n}`));
    const growth = src.fig('rounds.growth');
    const exponent = src.fig('rounds.exponent');
    const fan = src.fig('fanout.ratio');
    const ideal = src.fig('fanout.ideal');
    const wall = src.fig('fanout.wall');
    const sdk = src.fig('fanout.versusSdk');
    const pair = (f, unit) => [`${withUnit(f.peer.median, unit)}`, `${withUnit(f.median, unit)}`, times(f.ratio)];
    const rows = [
      ['Lua compute, geomean of 7 programs, time vs native lua5.4',
        `wasmoon ${times(compute.wasmoonToNative)}`, times(compute.runvilToNative), times(compute.value), compute.goal.text, status(compute)],
      [`first trivial run right after \`createEngine\`, ${on('startup')}`, ...pair(st('first'), 'ms'), 'see the sum', '—'],
      [`\`createEngine\` (fresh process), ${on('startup')}`, ...pair(st('create'), 'ms'), 'see the sum', '—'],
      ...perNode('sum', '`createEngine` + first run', 'ms'),
      ['one section entry vs a bare Lua state in wasm', ...pair(entry, 'µs'), entry.goal.text, status(entry)],
      ...perNode('rss', 'RSS added by one engine', 'MiB'),
      ['1,000 `{{ var.big.k1 }}` placeholders, `var.big` of 10 / 1,000 / 10,000 keys', '—',
        `${ph.map((f) => num(f.median)).join(' / ')} ms`, `10,000 − 10 keys: ${num(phGrowth.value)} ms (spread ${num(phGrowth.noise)} ms)`,
        phGrowth.goal.text, status(phGrowth)],
      ['`models.loop`, rounds 10 / 100 / 1,000, instant model, µs per round',
        `AI SDK ${loops.map((f) => num(f.peer.median)).join(' / ')} (exponent ${num(exponent.peer.value)})`,
        `${loops.map((f) => num(f.median)).join(' / ')} (exponent ${num(exponent.value)})`,
        `1,000 vs 10 rounds, per round: ${times(growth.value)} (AI SDK ${times(growth.peer.value)})`, growth.goal.text, status(growth)],
      ['fanout: 1,000 arms × one 5 ms model round, concurrency 64', `ideal ${num(ideal.value)} ms`,
        `${num(wall.median)} ms`, times(fan.median), fan.goal.text, status(fan)],
      ['the same 1,000 rounds: `tasks.fanout` vs AI SDK 7 `generateText` in a 64-wide promise pool',
        ...pair(sdk, 'ms'), sdk.goal.text, status(sdk)],
    ];
    return table(['figure', 'peer', 'Runvil', 'ratio', 'goal', 'status'], rows);
  },

  size(src) {
    const raw = src.fig('engine.wasmRaw');
    const gz = src.fig('engine.wasmGzip');
    return table(['measure', 'bytes'], [
      [raw.name, num(raw.value)],
      [gz.name, `**${num(gz.value)}**`],
      ['the line `build.sh` enforces (`WASM_GZIP_BUDGET`)', `${num(gz.budget)} (${num(gz.budget - gz.value)} left)`],
      [`goal: ${gz.goal.text}`, `${status(gz)} (${num(gz.value - gz.goal.max)} ${gz.value > gz.goal.max ? 'over' : 'under'})`],
    ]);
  },

  package(src) {
    const f = (id) => src.fig(`package.${id}`);
    const b = (x) => (x.gzip === undefined ? num(x.value) : `${num(x.value)}; ${num(x.gzip)} gzip`);
    return table(['measure', 'bytes'], ['tarball', 'unpacked', 'wasm', 'inline', 'js'].map((id) => [f(id).name, b(f(id))]));
  },

  engine(src) {
    const s = src.fig('engine.sections');
    const ops = src.fig('engine.storeOps');
    const calls = (f) => `${int(f.calls.open)} open, ${int(f.calls.read)} reads, ${int(f.calls.commit)} commits (${int(f.calls.changes)} changes)`;
    return table(['measure', 'median (min–max)'], [
      [s.name, `${spread(s)} µs`],
      [ops.name, `${spread(ops)} ops/s`],
      [src.fig('engine.appendBlock').name, calls(src.fig('engine.appendBlock'))],
      [src.fig('engine.writeReadBlock').name, calls(src.fig('engine.writeReadBlock'))],
    ]);
  },

  lua(src) {
    const ids = ['luaNative', 'luaRunvil', 'luaWasmoon', 'luaFengari'];
    const rows = ids.map((id) => {
      const f = src.fig(`engine.${id}`);
      return [f.name, String(f.runs), `${mmm(f)}`, times(f.ratio)];
    });
    return `${table(['VM', 'samples', 'ms min / median / max', 'ratio to native (medians)'], rows)}\n\nEvery VM returned the checksum ${src.fig('engine.luaRunvil').checksum}.`;
  },

  compute(src) {
    const programs = Object.entries(src.suite('compute').figures).filter(([id]) => id !== 'geomean');
    const rows = programs.map(([, f]) => [f.name, mmm(f.native), mmm(f.peer), mmm(f), times(f.wasmoonToNative), times(f.runvilToNative), times(f.ratio)]);
    const g = src.fig('compute.geomean');
    rows.push(['**geometric mean**', '', '', '', `**${times(g.wasmoonToNative)}**`, `**${times(g.runvilToNative)}**`, `**${times(g.value)}**`]);
    return `${table(['program', 'native lua5.4', 'wasmoon', 'runvil', 'wasmoon / native', 'runvil / native', 'runvil / wasmoon'], rows)}\n\n` +
      `${g.runs} interleaved samples per VM and program (ms min / median / max), ratios of medians; every VM returned the same checksum per program. ` +
      `Goal: ${g.goal.text}: **${verdict(g)}**.`;
  },

  turns(src) {
    const figs = Object.values(src.suite('turns').figures);
    const works = [...new Set(figs.map((f) => f.work))];
    const of = (work, kind) => figs.find((f) => f.work === work && f.name.endsWith(kind));
    return table(['busy block', 'longest wait of the event loop, ms min / median / max', '`abort()` to `Cancelled`, ms'],
      works.map((w) => [w, mmm(of(w, 'longest wait of the event loop')), mmm(of(w, 'abort() to Cancelled'))]));
  },

  entries(src) {
    const f = src.fig('entries.entry');
    return table(['figure', 'median (min, max)'], [
      ['Runvil section entry', `${num(f.median)} µs (${num(f.min)}, ${num(f.max)})`],
      [f.peer.name, `${num(f.peer.median)} µs (${num(f.peer.min)}, ${num(f.peer.max)})`],
      [`**ratio of the medians** (goal: ${f.goal.text})`, `**${times(f.ratio)}**: ${verdict(f)}`],
      ['ratio of each interleaved pair', `${times(f.ratioPairs.median)} (${times(f.ratioPairs.min)}, ${times(f.ratioPairs.max)})`],
    ]) + `\n\n${f.runs} interleaved samples of ${f.sections} entries each.`;
  },

  'native-entry'(src) {
    const f = src.fig('native.entry');
    return table(['figure', 'µs min / median / max'], [
      ['Runvil section entry (native)', mmm(f)],
      [f.peer.name, mmm(f.peer)],
      [`ratio (${f.ratioOf})`, times(f.ratio)],
    ]) + `\n\n${f.runs} interleaved samples.`;
  },

  startup: (src) => startupBlock(src, 'startup'),
  'startup-node24': (src) => startupBlock(src, 'startup-node24'),

  rounds(src) {
    const rows = [10, 100, 1000].map((n) => {
      const f = src.fig(`rounds.loop${n}`);
      return [int(n), spread(f), spread(f.peer), String(f.runs)];
    });
    const g = src.fig('rounds.growth');
    const e = src.fig('rounds.exponent');
    return `${table(['rounds', 'Runvil, µs per round', 'AI SDK, µs per round', 'samples'], rows)}\n\n` +
      `Per-round time at 1,000 rounds over that at 10 (medians): Runvil ${times(g.value)}, AI SDK ${times(g.peer.value)}; ` +
      `total time grows as rounds^${num(e.value)} (AI SDK rounds^${num(e.peer.value)}). Goal: ${g.goal.text}: **${verdict(g)}**.`;
  },

  placeholders(src) {
    const rows = [10, 1000, 10000].map((k) => {
      const f = src.fig(`rounds.placeholders${k}`);
      return [int(k), spread(f), spread(f.runMs), spread(f.baselineMs), String(f.runs)];
    });
    const g = src.fig('rounds.placeholderGrowth');
    return `${table(['keys in `var.big`', 'cost of the placeholders, ms', 'their section, ms', 'same section without them, ms', 'pairs'], rows)}\n\n` +
      `Cost at 10,000 keys less cost at 10 keys (medians): ${num(g.value)} ms; goal: ${g.goal.text} (${num(g.noise)} ms): **${verdict(g)}**.`;
  },

  fanout(src) {
    const f = (id) => src.fig(`fanout.${id}`);
    const r = f('ratio');
    return table(['figure', 'median (min, max)'], [
      [f('wall').name, `${num(f('wall').median)} ms (${num(f('wall').min)}, ${num(f('wall').max)})`],
      [f('ideal').name, `${num(f('ideal').value)} ms`],
      [`**ratio to ideal** (goal: ${r.goal.text})`, `**${times(r.median)}** (${times(r.min)}, ${times(r.max)}): ${verdict(r)}`],
      [f('perArm').name, `${num(f('perArm').median)} µs (${num(f('perArm').min)}, ${num(f('perArm').max)})`],
      [f('cpuPerArm').name, `${num(f('cpuPerArm').median)} µs (${num(f('cpuPerArm').min)}, ${num(f('cpuPerArm').max)})`],
      [f('cpuPerArm').peer.name, `${num(f('cpuPerArm').peer.median)} µs (${num(f('cpuPerArm').peer.min)}, ${num(f('cpuPerArm').peer.max)})`],
      [f('versusSdk').peer.name + ': wall time', `${num(f('versusSdk').peer.median)} ms (${num(f('versusSdk').peer.min)}, ${num(f('versusSdk').peer.max)})`],
      [`**fanout / AI SDK pool** (goal: ${f('versusSdk').goal.text})`, `**${times(f('versusSdk').ratio)}**: ${verdict(f('versusSdk'))}`],
      [f('rssPerArm').name, `${num(f('rssPerArm').value)} KiB`],
      [f('entry').name, `${num(f('entry').median)} µs (${num(f('entry').min)}, ${num(f('entry').max)})`],
      [f('call').name, `${num(f('call').median)} µs (${num(f('call').min)}, ${num(f('call').max)})`],
      [f('jump').name, `${num(f('jump').median)} µs (${num(f('jump').min)}, ${num(f('jump').max)})`],
    ]) + `\n\n${f('wall').runs} fanout runs; ${f('call').runs} interleaved samples of ${int(f('call').n)} calls, jumps and plain entries.`;
  },

  var(src) {
    const figs = Object.values(src.suite('native').figures).filter((f) => f.items !== undefined);
    if (!figs.length) throw new Error('missing result: bench/results/native.json has no var figures');
    return table(['N', 'min ms', 'median ms', 'max ms', 'median µs/item'],
      figs.map((f) => [int(f.items), num(f.min), num(f.median), num(f.max), num(f.usPerItem)])) + `\n\n${figs[0].runs} samples each.`;
  },

  'browser-store'(src) {
    const f = (id) => src.fig(`browser-store.${id}`);
    const a = f('batched');
    return table(['1,000 writes then 1,000 reads (100-byte files)', 'min', 'median', 'max', 'vs. batched (median)'],
      ['batched', 'strict', 'relaxed'].map((id) => [f(id).name, `${num(f(id).min)} ms`, `${num(f(id).median)} ms`, `${num(f(id).max)} ms`, times(f(id).ratio ?? 1)])) +
      `\n\n${a.runs} interleaved samples after one warm-up, each on a fresh database; headless Chromium ${a.chromium}.`;
  },

  'playground-load'(src) {
    const f = (id) => src.fig(`playground-load.${id}`);
    const first = f('first');
    return table(['first visit (empty cache), navigation start to', 'min', 'median', 'max', 'goal', 'status'], [
      ['engine ready (Run enabled)', `${num(f('ready').min)} ms`, `${num(f('ready').median)} ms`, `${num(f('ready').max)} ms`, '—', '—'],
      ['first result of `hello`', `${num(first.min)} ms`, `${num(first.median)} ms`, `${num(first.max)} ms`, first.goal.text, status(first)],
    ]) + `\n\n${first.runs} first visits, each in a fresh browser context; ${int(f('bytes').value)} bytes on the wire until the first result (the most of any visit).`;
  },

  playground(src) {
    const f = (id) => src.fig(`browser-store.${id}`);
    return table(['navigation start to', 'first load', 'later loads, median (min–max)'], [
      ['engine ready', `${num(f('firstLoadReady').value)} ms`, `${spread(f('laterReady'))} ms`],
      ['first result', `${num(f('firstLoadResult').value)} ms`, `${spread(f('laterResult'))} ms`],
    ]) + `\n\n${f('laterResult').runs} later loads of the same profile.`;
  },
};

// ---- the stamp and the document ----------------------------------------------------------------

const day = (iso) => iso.slice(0, 16).replace('T', ' ');

/** One line per block: what reproduces it, when, on what. */
export function stamp(results, used) {
  const rs = [...used].map((n) => results[n]);
  const cmds = rs.map((r) => `\`${r.command}\``).join(', ');
  const dates = [...new Set(rs.map((r) => day(r.date)))].sort();
  const machines = [...new Set(rs.map((r) => `Node ${r.node}, ${r.cpu} (${r.cores} cores), ${r.os}`))];
  const quick = rs.some((r) => r.quick) ? ' **Quick run (smoke): fewer samples, not for the record.**' : '';
  return `<sub>Generated by \`node tools/perf-doc.mjs\` from ${cmds} (all: \`./build.sh bench\`), ${dates.join(' to ')} UTC; ` +
    `${machines.join('; ')}. A shared, noisy machine: the ratios of samples interleaved in one process are the figures to trust, absolute times move between runs.${quick}</sub>`;
}

const OPEN = /<!-- bench:([A-Za-z0-9_-]+) -->/g;
const ANY = /<!-- (\/?)bench:([^ ]*) -->/g;

/**
 * Replaces every generated block of `doc`. Throws on an unknown, unclosed, nested or stray marker,
 * on a known block missing from the doc, and on missing or quick results.
 */
export function renderDoc(doc, results, { allowQuick = false, allowMissing = false, blocks = BLOCKS, only = null } = {}) {
  // Check the marker structure first: open, close, open, close... with matching names.
  let open = null;
  for (const m of doc.matchAll(ANY)) {
    const [, slash, id] = m;
    if (!slash) {
      if (open) throw new Error(`marker bench:${id} opens inside bench:${open} (blocks do not nest)`);
      if (!Object.hasOwn(blocks, id)) throw new Error(`unknown marker bench:${id} (known: ${Object.keys(blocks).join(', ')})`);
      open = id;
    } else {
      if (open !== id) throw new Error(`stray marker /bench:${id}${open ? ` inside bench:${open}` : ''}`);
      open = null;
    }
  }
  if (open) throw new Error(`marker bench:${open} is never closed (<!-- /bench:${open} -->)`);
  const seen = new Set([...doc.matchAll(OPEN)].map((m) => m[1]));
  const absent = Object.keys(blocks).filter((id) => !seen.has(id));
  if (absent.length) throw new Error(`the doc has no marker for: ${absent.join(', ')}`);

  return doc.replace(/<!-- bench:([A-Za-z0-9_-]+) -->[\s\S]*?<!-- \/bench:\1 -->/g, (whole, id) => {
    // --only: the other blocks stay as they are (their suites were not run this time).
    if (only && !only.includes(id)) return whole;
    const src = new Source(results, allowQuick);
    let body;
    try {
      body = blocks[id](src);
    } catch (e) {
      // --allow-missing (smoke runs that skipped suites): say what is missing instead of failing.
      if (allowMissing && e.message.startsWith('missing result')) return `<!-- bench:${id} -->\n_Not measured in this run: ${e.message}._\n<!-- /bench:${id} -->`;
      throw new Error(`block bench:${id}: ${e.message}`);
    }
    return `<!-- bench:${id} -->\n${body}\n\n${stamp(results, src.used)}\n<!-- /bench:${id} -->`;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name, fallback) => {
    const i = args.indexOf(name);
    return i >= 0 ? resolve(args[i + 1]) : fallback;
  };
  const docPath = opt('--doc', join(ROOT, 'docs/performance.md'));
  const out = opt('--out', docPath);
  const results = loadResults(opt('--results', join(ROOT, 'bench/results')));
  const text = renderDoc(readFileSync(docPath, 'utf8'), results, {
    allowQuick: args.includes('--allow-quick'),
    allowMissing: args.includes('--allow-missing'),
    only: args.includes('--only') ? args[args.indexOf('--only') + 1].split(',') : null,
  });
  writeFileSync(out, text);
  console.log(`written: ${out}`);
}
