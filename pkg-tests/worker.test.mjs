// runvil/worker in real headless Chromium: the engine runs in a Web Worker and the page gets the
// whole engine.run API (models, Pack calls, input.ask, stores, onEvent, AbortSignal) over
// postMessage. A missing Chromium is a failure, never a skip.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT, luaPrompt } from './helpers.mjs';
import { serve } from './runtimes/serve.mjs';
import { launchChromium, tempProfile } from './browser/chromium.mjs';

const site = await serve(ROOT);
const profile = tempProfile();
const browser = await launchChromium(profile.dir);
after(async () => {
  await browser.close();
  profile.remove();
  await site.close();
});
const { page } = browser;
const errors = [];
page.on('pageerror', (error) => errors.push(error.message));
await page.goto(`${site.url}/pkg-tests/browser/worker.html`);
await page.waitForSelector('body[data-ready="yes"]', { state: 'attached', timeout: 30_000 });

test('the engine runs in a worker, and ui.kind reads browser there', async () => {
  const outcome = await page.evaluate((src) => engine.run(src, { seed: 1, args: 'x' }), luaPrompt("return ui.kind .. ' ' .. args .. ' ' .. tostring(ui.interactive)"));
  assert.deepEqual(outcome, { ok: true, result: 'browser x false', seed: '1' });
  assert.equal(await page.evaluate(() => engine.worker instanceof Worker), true);
  assert.equal(await page.evaluate(() => engine.engineVersion === runvil.version), true);
});

test('in a Web Worker of its own, each browser-side entry reads ui.kind browser (runvil/inline too)', async () => {
  const kinds = await page.evaluate(async (src) => {
    const kindIn = (entry) => new Promise((resolve, reject) => {
      const script = `import { createEngine } from '${location.origin}/pkg/${entry}';
        const engine = await createEngine();
        postMessage(await engine.run(${JSON.stringify(src)}, { seed: 1 }));`;
      const worker = new Worker(URL.createObjectURL(new Blob([script], { type: 'text/javascript' })), { type: 'module' });
      worker.onmessage = (event) => { worker.terminate(); resolve(event.data.ok ? event.data.result : event.data.error.message); };
      worker.onerror = (event) => { worker.terminate(); reject(new Error(`${entry}: ${event.message}`)); };
    });
    return Object.fromEntries(await Promise.all(['browser.js', 'inline.js', 'index.js'].map(async (e) => [e, await kindIn(e)])));
  }, luaPrompt('return ui.kind'));
  assert.deepEqual(kinds, { 'browser.js': 'browser', 'inline.js': 'browser', 'index.js': 'browser' });
});

test('models, Pack tools, onEvent and a page store cross over', async () => {
  const src = '---\nmodels:\n  default: {}\n---\n# W\n\n## Main\n\nSay hi.\n\n```lua\nlocal said = models.infer(prose)\nlocal n = tools.call("demo/double", { n = 21 })\nstore.write("out.txt", said .. " " .. n)\nreturn said .. " " .. n\n```\n';
  const result = await page.evaluate(async (src) => {
    const store = runvil.memoryStore();
    const events = [];
    const requests = [];
    const outcome = await engine.run(src, {
      seed: 2,
      signal: new AbortController().signal,
      store,
      models: { default: async (request) => { requests.push({ role: request.role, text: request.messages.at(-1).content, aborted: request.signal.aborted }); return { content: 'hello', finish_reason: 'stop' }; } },
      packs: [{ name: 'demo', description: 'd', tools: [{ name: 'double', description: 'doubles', parameters: { type: 'object' }, trust: 'trusted', call: async (args, ctx) => ({ doubled: args.n * 2, caller: ctx.caller, signal: ctx.signal instanceof AbortSignal }) }] }],
      onEvent: (e) => events.push(e.event),
    });
    return { outcome, requests, file: await store.read('out.txt'), events };
  }, src);
  assert.deepEqual(result.outcome, { ok: true, result: 'hello {"doubled":42,"caller":"script","signal":true}', seed: '2' });
  assert.deepEqual(result.requests, [{ role: 'default', text: 'Say hi.', aborted: false }]);
  assert.equal(result.file, 'hello {"doubled":42,"caller":"script","signal":true}');
  assert.equal(result.events[0], 'run_started');
  assert.equal(result.events.at(-1), 'run_finished');
  assert.ok(result.events.includes('section_started'));
});

test('input.ask is answered by the page; misuse rejects with the same TypeError', async () => {
  const outcome = await page.evaluate((src) => engine.run(src, {
    seed: 3, packs: [runvil.userInputPack({ ask: async () => 'from the page' })],
  }), '---\nuses: [user-input]\n---\n# A\n\n## Main\n\n```lua\nreturn "got " .. input.ask()\n```\n');
  assert.deepEqual(outcome, { ok: true, result: 'got from the page', seed: '3' });
  const misuse = await page.evaluate(async () => {
    try {
      await engine.run('# x', { models: { default: 'not a function' } });
      return 'resolved';
    } catch (error) {
      return `${error.constructor.name}: ${error.message}`;
    }
  });
  assert.equal(misuse, 'TypeError: engine.run: models.default must be a function (got a string)');
});

test('engine.check runs in the worker: diagnostics, Packs by name, misuse as a TypeError', async () => {
  const source = '---\nuses: [user-input]\n---\n# T\n\n```lua\nreturn call("## Nope")\n```\n';
  const found = await page.evaluate((src) => engine.check(src), source);
  assert.deepEqual(found, [
    {
      severity: 'error',
      kind: 'Lua',
      message: 'call: no section "## Nope" is visible from here; visible sections: []',
      line: 7,
      column: 13,
      section: null,
    },
  ]);
  const packs = await page.evaluate(
    (src) => engine.check(src, { packs: [runvil.userInputPack({ ask: async () => '' })] }),
    source.replace('call("## Nope")', '1'),
  );
  assert.deepEqual(packs, []);
  const misuse = await page.evaluate(() => engine.check(1).then(() => 'resolved', (e) => `${e.constructor.name}: ${e.message}`));
  assert.equal(misuse, 'TypeError: engine.check: source must be a string (got a number)');
});

test('an IndexedDB store is used from the worker and its files are there for the page', async () => {
  const result = await page.evaluate(async (src) => {
    const store = await runvil.indexedDbStore('from-worker');
    const outcome = await engine.run(src, { store, seed: 4 });
    return { outcome, files: await store.list(), text: await store.read('a/b.txt') };
  }, luaPrompt("store.write('a/b.txt', 'written in the worker')\nreturn #store.glob('**')"));
  assert.deepEqual(result, { outcome: { ok: true, result: '1', seed: '4' }, files: ['a/b.txt'], text: 'written in the worker' });
});

test('cancel stops an endless loop while the page stays responsive', async (t) => {
  await page.evaluate((src) => {
    window.longTasks.length = 0;
    window.controller = new AbortController();
    window.running = engine.run(src, { seed: 5, signal: window.controller.signal, limits: { instructions: 1e12 } });
  }, luaPrompt('while true do end'));
  // While the worker loops, the page answers: each evaluate needs the main thread.
  for (let i = 0; i < 5; i++) assert.equal(await page.evaluate((n) => n + 1, i), i + 1);
  assert.equal(await page.evaluate(() => Promise.race([window.running.then(() => 'ended'), new Promise((r) => setTimeout(r, 0, 'running'))])), 'running');
  const outcome = await page.evaluate(() => { window.controller.abort(); return window.running; });
  assert.equal(outcome.ok, false);
  assert.equal(outcome.error.kind, 'Cancelled');
  assert.equal(outcome.seed, '5');
  // Reported, not asserted (the machine is noisy): main-thread tasks over 50 ms during the run.
  const longTasks = await page.evaluate(() => window.longTasks.slice());
  t.diagnostic(`main-thread long tasks while the worker looped: ${longTasks.length} ${JSON.stringify(longTasks.map(Math.round))}`);
  // The engine is still usable afterwards.
  assert.deepEqual(await page.evaluate((src) => engine.run(src, { seed: 6 }), luaPrompt("return 'again'")), { ok: true, result: 'again', seed: '6' });
  assert.deepEqual(errors, []);
});

test('a worker engine records (true and a function), replays and resumes', async () => {
  const src = '# J\n\n## Main\n\n```lua\nreturn models.infer("a") .. models.infer("b") .. " " .. sys.now\n```\n';
  const got = await page.evaluate(async (src) => {
    let calls = 0;
    const models = { default: async (request) => { calls += 1; return { content: request.messages[0].content }; } };
    const recorded = await engine.run(src, { models, record: true });
    const kept = [];
    await engine.run(src, { models, seed: recorded.seed, record: async (entry) => { await new Promise((r) => setTimeout(r, 5)); kept.push(entry.kind ?? 'header'); } });
    const before = calls;
    const replayed = await engine.run(src, { replay: recorded.journal });
    const cut = recorded.journal.findIndex((e) => e.kind === 'model' && e.seq === 3);
    const resumed = await engine.run(src, { resume: recorded.journal.slice(0, cut), models });
    return { recorded: recorded.result, seed: recorded.seed, kept, replayed, calls: calls - before, resumedOk: resumed.ok, resumed: resumed.result };
  }, src);
  assert.deepEqual(got.kept, ['header', 'store-open', 'clock', 'role', 'model', 'model', 'clock', 'end']);
  assert.deepEqual(got.replayed, { ok: true, result: got.recorded, seed: got.seed });
  assert.equal(got.calls, 1, 'the replay made no call; the resume made the one its entries lacked');
  assert.equal(got.resumedOk, true);
  assert.match(got.resumed, /^ab /);
});
