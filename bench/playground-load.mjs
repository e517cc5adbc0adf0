// The playground's load on a slow phone: navigation start to the first result of the `hello`
// example (the demo model), in headless Chromium with DevTools throttling as its "Slow 4G" preset
// (562.5 ms round trip, 180,000 B/s down, 84,375 B/s up) and the CPU slowed 4×. Each sample is a
// fresh browser context (an empty HTTP cache: a first visit), served by the playground's own
// server (compressed, as a host should). Writes bench/results/playground-load.json.
//
//   node bench/playground-load.mjs [--quick] [--samples N] [--no-throttle]
import { ROOT, QUICK, stats, writeResults, isMain } from './results.mjs';
import { serve } from '../pkg-tests/runtimes/serve.mjs';
import { launchChromium, tempProfile } from '../pkg-tests/browser/chromium.mjs';
import { buildSite } from '../tools/build-site.mjs';
import { performance } from 'node:perf_hooks';

export const SLOW_4G = { offline: false, latency: 562.5, downloadThroughput: 180_000, uploadThroughput: 84_375 };
export const CPU_SLOWDOWN = 4;
const GOAL_MS = 5000;

/** One first visit: resolves with { ready, first, bytes } (ms from navigation start; bytes on the wire until the first result). */
export async function firstVisit(browser, url, { throttle = true } = {}) {
  const context = await browser.browser.newContext();
  try {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    let bytes = 0;
    cdp.on('Network.loadingFinished', (e) => { bytes += e.encodedDataLength; });
    if (throttle) {
      await cdp.send('Network.emulateNetworkConditions', SLOW_4G);
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });
    }
    await page.goto(`${url}/`, { waitUntil: 'commit', timeout: 120_000 });
    await page.waitForSelector('#run:not([disabled])', { timeout: 120_000 });
    const ready = await page.evaluate(() => performance.now());
    await page.click('#run');
    await page.waitForFunction(() => performance.getEntriesByName('runvil-first-result').length > 0, null, { timeout: 120_000 });
    const first = await page.evaluate(() => performance.getEntriesByName('runvil-first-result')[0].startTime);
    const state = await page.getAttribute('#output', 'data-state');
    if (state !== 'done') throw new Error(`the hello example ended ${state}: ${await page.textContent('#output')}`);
    return { ready, first, bytes };
  } finally {
    await context.close();
  }
}

if (isMain(import.meta.url)) {
  const started = performance.now();
  const at = process.argv.indexOf('--samples');
  const samples = at > 0 ? Number(process.argv[at + 1]) : QUICK ? 2 : 5;
  const throttle = !process.argv.includes('--no-throttle');
  await buildSite();
  const site = await serve(ROOT);
  const profile = tempProfile();
  const browser = await launchChromium(profile.dir);
  const loads = [];
  try {
    // One unthrottled visit first: the server compresses each file once (at its best in the
    // background) and keeps it.
    await firstVisit(browser, site.url, { throttle: false });
    await site.settled();
    for (let i = 0; i < samples; i++) {
      const load = await firstVisit(browser, site.url, { throttle });
      console.log(`  visit ${i + 1}: engine ready ${load.ready.toFixed(0)} ms, first result ${load.first.toFixed(0)} ms, ${load.bytes} bytes`);
      loads.push(load);
    }
  } finally {
    await browser.close();
    profile.remove();
    await site.close();
  }
  const conditions = throttle ? 'Slow 4G, CPU 4× slower' : 'no throttling';
  const figures = {
    ready: { name: `first visit, ${conditions}: engine ready`, unit: 'ms', ...stats(loads.map((l) => l.ready)), runs: loads.length },
    first: {
      name: `first visit, ${conditions}: first result of hello`,
      unit: 'ms',
      ...stats(loads.map((l) => l.first)),
      runs: loads.length,
      goal: { max: GOAL_MS, of: 'median', text: `≤ ${GOAL_MS / 1000} s` },
    },
    bytes: { name: 'bytes on the wire from navigation to the first result', unit: 'B', value: Math.max(...loads.map((l) => l.bytes)) },
  };
  writeResults('playground-load', process.argv.slice(2).length ? `node bench/playground-load.mjs ${process.argv.slice(2).join(' ')}` : 'node bench/playground-load.mjs', figures, started);
}
