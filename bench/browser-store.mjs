// The IndexedDB store and the playground in headless Chromium:
//
// 1. 1,000 writes then 1,000 reads (distinct files, ~100 bytes each) in one run through
//    indexedDbStore (the engine batches: one read transaction, four write transactions), against
//    the same operations done one IndexedDB transaction each (put, then get) with the same strict
//    durability and, second baseline, the browser's default durability (what idb-keyval does).
//    Samples are interleaved (A, B, C, A, B, C, ...), each on a fresh database; min/median/max.
// 2. The playground's time from navigation start to the first result: a fresh page, wait for the
//    engine, run the hello example with the demo model; the `runvil-first-result` mark.
//
// Writes bench/results/browser-store.json.
//
//   node bench/browser-store.mjs [--quick] [--samples N]     (needs pkg/ built and Chromium installed)
import { performance } from 'node:perf_hooks';
import { ROOT } from '../pkg-tests/helpers.mjs';
import { serve } from '../pkg-tests/runtimes/serve.mjs';
import { launchChromium, tempProfile } from '../pkg-tests/browser/chromium.mjs';
import { buildSite } from '../tools/build-site.mjs';
import { QUICK, stats, writeResults } from './results.mjs';

const started = performance.now();
const samplesAt = process.argv.indexOf('--samples');
const samples = samplesAt > 0 ? Number(process.argv[samplesAt + 1]) : QUICK ? 3 : 9;
const figures = {};
const fmt = ({ min, median, max }) => `median ${median.toFixed(1)} ms (min ${min.toFixed(1)}, max ${max.toFixed(1)})`;

await buildSite();
const site = await serve(ROOT);
const profile = tempProfile();
const browser = await launchChromium(profile.dir);
const { page } = browser;
try {
  await page.goto(`${site.url}/pkg-tests/browser/idb.html`);
  await page.waitForSelector('body[data-ready="yes"]', { state: 'attached' });
  const PROMPT = "# B\n\n## Main\n\n```lua\nlocal body = string.rep('x', 100)\nfor i = 1, 1000 do store.write('f/' .. i .. '.txt', body) end\nlocal n = 0\nfor i = 1, 1000 do n = n + #store.read('f/' .. i .. '.txt') end\nreturn n\n```\n";
  const times = { batched: [], strict: [], relaxed: [] };
  for (let i = 0; i < samples + 1; i++) {
    const sample = await page.evaluate(async ({ src, i }) => {
      const out = {};
      // A: through the engine and indexedDbStore.
      const store = await runvil.indexedDbStore(`bench-a-${i}`);
      let t = performance.now();
      const outcome = await engine.run(src, { store, seed: 1 });
      out.batched = performance.now() - t;
      if (outcome.result !== '100000') throw new Error(JSON.stringify(outcome));
      store.close();
      // B, C: one transaction per operation.
      const body = new TextEncoder().encode('x'.repeat(100));
      for (const durability of ['strict', 'relaxed']) {
        const db = await new Promise((resolve, reject) => {
          const r = indexedDB.open(`bench-${durability}-${i}`, 1);
          r.onupgradeneeded = () => r.result.createObjectStore('files');
          r.onsuccess = () => resolve(r.result);
          r.onerror = () => reject(r.error);
        });
        const op = (mode, fn) => new Promise((resolve, reject) => {
          const tx = db.transaction('files', mode, { durability });
          const req = fn(tx.objectStore('files'));
          tx.oncomplete = () => resolve(req.result);
          tx.onabort = () => reject(tx.error);
        });
        t = performance.now();
        for (let k = 1; k <= 1000; k++) await op('readwrite', (s) => s.put(body, `f/${k}.txt`));
        let n = 0;
        for (let k = 1; k <= 1000; k++) n += (await op('readonly', (s) => s.get(`f/${k}.txt`))).length;
        out[durability] = performance.now() - t;
        if (n !== 100000) throw new Error(`baseline read ${n} bytes`);
        db.close();
      }
      return out;
    }, { src: PROMPT, i });
    if (i === 0) continue; // warm-up
    for (const key of Object.keys(times)) times[key].push(sample[key]);
  }
  const a = stats(times.batched);
  const b = stats(times.strict);
  const c = stats(times.relaxed);
  console.log(`1,000 writes + 1,000 reads, ${samples} interleaved samples each (Chromium ${browser.browser.version()}):`);
  console.log(`  indexedDbStore, one run (batched):          ${fmt(a)}`);
  console.log(`  one transaction per operation, strict:      ${fmt(b)}  -> ${(b.median / a.median).toFixed(1)}x the batched median`);
  console.log(`  one transaction per operation, default:     ${fmt(c)}  -> ${(c.median / a.median).toFixed(1)}x the batched median`);
  const chromium = browser.browser.version();
  figures.batched = { name: 'one run through `indexedDbStore` (1 read + 4 write transactions)', unit: 'ms', ...a, chromium, runs: samples };
  figures.strict = { name: 'one transaction per operation, strict durability', unit: 'ms', ...b, ratio: b.median / a.median, ratioOf: 'this median / the batched median', chromium, runs: samples };
  figures.relaxed = { name: 'one transaction per operation, default durability (as idb-keyval)', unit: 'ms', ...c, ratio: c.median / a.median, ratioOf: 'this median / the batched median', chromium, runs: samples };

  // The playground: navigation start to the first result, fresh page each time (same profile:
  // the HTTP cache is warm after the first; the first is reported apart).
  const loads = [];
  for (let i = 0; i < Math.max(3, Math.ceil(samples / 2)) + 1; i++) {
    const p = await browser.context.newPage();
    await p.goto(`${site.url}/`);
    await p.waitForSelector('#output[data-state="ready"]');
    const ready = await p.evaluate(() => performance.now());
    await p.evaluate(() => window.playground.run());
    const first = await p.evaluate(() => performance.getEntriesByName('runvil-first-result')[0].startTime);
    loads.push({ ready, first });
    await p.close();
  }
  const [cold, ...warm] = loads;
  console.log(`playground, navigation start to the first result (hello, demo model):`);
  console.log(`  first load:  engine ready ${cold.ready.toFixed(0)} ms, first result ${cold.first.toFixed(0)} ms`);
  console.log(`  later loads: engine ready ${fmt(stats(warm.map((l) => l.ready)))}; first result ${fmt(stats(warm.map((l) => l.first)))}`);
  figures.firstLoadReady = { name: 'playground, first load: engine ready', unit: 'ms', value: cold.ready };
  figures.firstLoadResult = { name: 'playground, first load: first result', unit: 'ms', value: cold.first };
  figures.laterReady = { name: 'playground, later loads: engine ready', unit: 'ms', ...stats(warm.map((l) => l.ready)), runs: warm.length };
  figures.laterResult = { name: 'playground, later loads: first result', unit: 'ms', ...stats(warm.map((l) => l.first)), runs: warm.length };
} finally {
  await browser.close();
  profile.remove();
  await site.close();
}
writeResults('browser-store', samplesAt > 0 ? `node bench/browser-store.mjs --samples ${samples}` : 'node bench/browser-store.mjs', figures, started);
