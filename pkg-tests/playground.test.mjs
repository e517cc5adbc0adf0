// The playground (site/, built by tools/build-site.mjs) in real headless Chromium: how it loads
// (only the page's code in the page, the engine in the worker, compressed, the prompt readable
// before CodeMirror arrives), what a run shows (result, console, rounds, trace, store changes,
// errors at the section that raised them), input.ask, cancel, the editor's help, and that a
// person's work is never replaced silently (drafts, saved prompts, examples, share links). A
// missing Chromium is a failure, never a skip.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT } from './helpers.mjs';
import { serve } from './runtimes/serve.mjs';
import { launchChromium, tempProfile } from './browser/chromium.mjs';
import { startHttpServer } from './mcp-server.mjs';
import { buildSite } from '../tools/build-site.mjs';

let site;
let browser;
let profile;
let page;
const errors = [];
/** Every response the page and its worker got: { url, encoding } */
const loaded = [];

before(async () => {
  await buildSite();
  site = await serve(ROOT);
  profile = tempProfile();
  browser = await launchChromium(profile.dir);
  page = browser.page;
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('dialog', async (dialog) => {
    const plan = dialogPlan.shift() ?? { accept: true };
    dialogsSeen.push(dialog.message());
    await (plan.accept ? dialog.accept(plan.text) : dialog.dismiss());
    plan.resolve?.(dialog.message());
  });
  page.on('response', (response) => {
    loaded.push({ url: new URL(response.url()).pathname, encoding: response.headers()['content-encoding'] ?? null });
  });
  await page.setViewportSize({ width: 1200, height: 900 });
  await page.goto(`${site.url}/`);
  await page.waitForSelector('#output[data-state="ready"]', { timeout: 30_000 });
  await page.waitForFunction(() => window.playground.editorReady);
});

after(async () => {
  await browser?.close();
  profile?.remove();
  await site?.close();
});

/** What the next dialogs answer ({ accept, text }; accepted when none is planned), and what they said. */
const dialogPlan = [];
const dialogsSeen = [];

/** Answers the next dialog so (dismisses it with accept false); resolves with its message. */
function onDialog(accept, text) {
  return new Promise((resolve) => dialogPlan.push({ accept, text, resolve }));
}

/** Picks the gallery example called `name` (accepting the question if the editor holds edits). */
async function pick(name) {
  const value = await page.$eval('#example', (select, n) => [...select.options].find((o) => o.textContent.startsWith(`${n}:`))?.value, name);
  assert.ok(value, `no example ${name}`);
  await page.selectOption('#example', value);
  await page.waitForFunction((n) => window.playground.source.includes(`name: ${n}`), name);
}

/** Sets the editor's text (as typing would: it becomes the draft). */
async function setSource(text) {
  await page.evaluate((t) => window.playground.setSource(t), text);
}

async function runAndWait() {
  await page.click('#run');
  await page.waitForSelector('#run:not([disabled])');
  return { state: await page.getAttribute('#output', 'data-state'), text: await page.textContent('#output') };
}

/** Picks the gallery example called `name` and runs it with the Run button; resolves with the output. */
async function runExample(name, { args } = {}) {
  await pick(name);
  if (args !== undefined) await page.fill('#args', args);
  await page.fill('#seed', '7');
  return runAndWait();
}

test('loading: the page holds only its code, the worker the engine, every text response compressed', async () => {
  const paths = loaded.map((r) => r.url);
  // The package's modules are bundled: neither side fetches them one by one, nor twice.
  assert.deepEqual(paths.filter((p) => p.startsWith('/pkg/')), ['/pkg/runvil_bg.wasm']);
  assert.equal(paths.filter((p) => p === '/engine-worker.js').length, 1);
  assert.equal(paths.filter((p) => p === '/app.js').length, 1);
  // The page's bundle does not hold the engine graph (its wasm bindings are the worker's).
  const app = await (await fetch(`${site.url}/app.js`)).text();
  assert.ok(!app.includes('__wbindgen'), 'app.js holds the wasm bindings');
  assert.ok(app.length < 120_000, `app.js is ${app.length} bytes`);
  // Adapters the page has not used are not loaded: the OpenAI adapter, the MCP client.
  assert.ok(!paths.some((p) => /\/chunks\/(openai|mcp)-/.test(p)), paths.join(' '));
  for (const r of loaded.filter((x) => /\.(js|wasm|css|html)$|\/$/.test(x.url))) assert.ok(['br', 'gzip'].includes(r.encoding), `${r.url} came ${r.encoding ?? 'uncompressed'}`);
  for (const path of paths.filter((p) => p.endsWith('.js'))) {
    const code = await (await fetch(`${site.url}${path}`)).text();
    assert.ok(!code.includes('openAIChatModel: stream must be a boolean'), `${path} holds the OpenAI adapter`);
    assert.ok(!code.includes('mcpPack: client must be'), `${path} holds the MCP Pack`);
  }
  assert.match(await page.getAttribute('link[rel="preload"]', 'href'), /runvil_bg\.wasm$/);
});

test('loading: the prompt is readable and editable before the editor bundle arrives', async () => {
  const other = await browser.context.newPage();
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await other.route(/\/chunks\/editor-src-/, async (route) => { await held; await route.continue(); });
  await other.goto(`${site.url}/`);
  await other.waitForSelector('#editor textarea');
  assert.match(await other.inputValue('#editor textarea'), /^---\n/);
  assert.equal(await other.getAttribute('#editor', 'data-editor'), 'plain');
  await other.fill('#editor textarea', '# Typed early\n\n## Main\n\n```lua\nreturn "early"\n```\n');
  release();
  await other.waitForSelector('#editor[data-editor="rich"] .cm-editor');
  assert.equal(await other.evaluate(() => window.playground.source), '# Typed early\n\n## Main\n\n```lua\nreturn "early"\n```\n');
  await other.close();
  await page.reload();
  await page.waitForSelector('#output[data-state="ready"]');
  await page.waitForFunction(() => window.playground.editorReady);
});

test('the tools example runs; Rounds shows each round as sent and answered, the status its tokens', async () => {
  const out = await runExample('tools');
  assert.deepEqual(out, { state: 'done', text: 'script: 42\nmodel: The tool answered: Light rain, 18 °C in Lisbon' });
  await page.click('[data-tab="rounds"]');
  const heads = await page.$$eval('#rounds .round-head', (els) => els.map((el) => el.textContent));
  assert.equal(heads.length, 2);
  assert.match(heads[0], /^#1 · ## By the model · default · round 1 · \d+ ms · tool_calls$/);
  assert.match(heads[1], /^#2 · ## By the model · default · round 2 · \d+ ms · stop$/);
  await page.click('#rounds li:first-child summary.round-head');
  const first = await page.textContent('#rounds li:first-child');
  assert.match(first, /Tools offered \(1\): demo_weather/);
  assert.match(first, /"name": "demo_weather"/);
  assert.match(first, /"city": "Lisbon"/);
  // The second round was sent the tool's answer.
  await page.click('#rounds li:nth-child(2) summary.round-head');
  assert.match(await page.textContent('#rounds li:nth-child(2) .round-messages'), /toolLight rain, 18 °C in Lisbon/);
  await runExample('hello');
  assert.equal(await page.textContent('#tokens'), 'default 35 in / 24 out');
  assert.match(await page.textContent('#rounds .round-head'), /35 in \/ 24 out · stop$/);
});

test('the trace nests run › section › round › tool with times, filters by kind, and jumps to a section', async () => {
  await runExample('tools');
  await page.click('[data-tab="trace"]');
  const round = page.locator('#trace li[data-kind="section"] li[data-kind="model"]').first();
  assert.match(await round.locator('.trace-label').first().textContent(), /^round 1 · default$/);
  assert.match(await round.locator('.trace-meta').first().textContent(), /^\+\d+ ms · \d+ ms/);
  const inRound = await page.$$eval('#trace li[data-kind="model"] li[data-kind="tool"] > .trace-row .trace-label', (els) => els.map((el) => el.textContent));
  assert.deepEqual(inRound, ['assistant_tool_calls', 'demo/weather']);
  assert.equal(await page.locator('#trace li[data-kind="section"] > .trace-row button.trace-label', { hasText: '## By script' }).count(), 1);
  // 19 engine events and the 3 model_delta events of the streamed reply.
  assert.equal(await page.textContent('#event-count'), '22');
  // Filters: no tools.
  await page.uncheck('.trace-filters input[value="tool"]');
  assert.equal(await page.locator('#trace li[data-kind="tool"]').count(), 0);
  await page.check('.trace-filters input[value="tool"]');
  assert.ok((await page.locator('#trace li[data-kind="tool"]').count()) >= 2);
  // A section row puts the editor's cursor on its heading.
  await page.click('#trace button.trace-label:text-is("## By the model")');
  assert.equal(await page.textContent('.cm-activeLine'), '## By the model');
});

test('a long run keeps its last 2,000 events and says how many came before', async () => {
  await setSource('# Many\n\n## Main\n\n```lua\nfor i = 1, 3000 do log("line " .. i) end\nreturn "ok"\n```\n');
  await runAndWait();
  await page.click('[data-tab="trace"]');
  assert.match(await page.textContent('.trace-note'), /^The first 1,00\d events are not shown; these are the last 2,000\.$/);
  const leaves = await page.$$eval('#trace li[data-kind="log"] .trace-meta', (els) => els.map((el) => el.textContent));
  assert.match(leaves.at(-1), /line 3000$/);
  assert.equal(await page.textContent('#event-count'), String(3000 + 6));
});

test('log lines and streamed text reach the Result pane while the run goes on', async () => {
  await page.click('[data-tab="result"]');
  await setSource('---\nuses: [user-input]\n---\n# Stream\n\n## Main\n\nWrite a two-line poem about tides.\n\n```lua\nlocal poem = models.infer(prose)\nlog("Keep it?")\nreturn poem .. " / " .. input.ask()\n```\n');
  await page.click('#run');
  await page.waitForSelector('#ask:not([hidden])');
  // The run is waiting for the answer: what it streamed and logged is already on screen.
  assert.equal(await page.getAttribute('#output', 'data-state'), 'running');
  const lines = await page.$$eval('#console li', (els) => els.map((el) => el.textContent));
  assert.deepEqual(lines, ['## Main · default Tides, and a lamp left on in an empty room;\nI wrote it offline, but it rhymes in its way.', '## Main Keep it?']);
  assert.equal(await page.textContent('#ask-question'), 'Keep it?');
  await page.fill('#ask-input', 'yes');
  await page.press('#ask-input', 'Enter');
  await page.waitForSelector('#run:not([disabled])');
  assert.match(await page.textContent('#output'), / \/ yes$/);
});

test('input.ask shows the question and the section asking; the answers reach the run', async () => {
  await pick('ask');
  await page.click('#run');
  await page.waitForSelector('#ask:not([hidden])');
  assert.equal(await page.textContent('#ask-from'), '## Main asks:');
  assert.equal(await page.textContent('#ask-question'), 'What is your name?');
  await page.fill('#ask-input', 'Ada');
  await page.press('#ask-input', 'Enter');
  await page.waitForFunction(() => document.querySelector('#ask-question').textContent.startsWith('Hello Ada'));
  assert.equal(await page.textContent('#ask-question'), 'Hello Ada. Your favourite colour?');
  await page.fill('#ask-input', 'green');
  await page.click('#ask button[type="submit"]');
  await page.waitForSelector('#run:not([disabled])');
  assert.equal(await page.textContent('#output'), 'Hello Ada, green it is.');
});

test('long-loop runs until Cancel (Esc), and the page stays responsive', async (t) => {
  await pick('long-loop');
  // The example opens with an instruction budget past what anyone waits for.
  assert.equal(await page.inputValue('#limit-instructions'), '1000000000000');
  await page.evaluate(() => {
    window.longTasks = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.longTasks.push(Math.round(e.duration)); })
      .observe({ type: 'longtask' });
  });
  await page.click('#run');
  await page.waitForSelector('#output[data-state="running"]');
  await page.waitForTimeout(1500);
  assert.equal(await page.getAttribute('#output', 'data-state'), 'running', 'the loop ended by itself');
  await page.fill('#args', 'typed while running');
  assert.equal(await page.inputValue('#args'), 'typed while running');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#run:not([disabled])');
  assert.equal(await page.getAttribute('#output', 'data-state'), 'error');
  assert.match(await page.textContent('#output'), /^Cancelled: /);
  t.diagnostic(`main-thread long tasks during the loop: ${JSON.stringify(await page.evaluate(() => window.longTasks))}`);
});

test('a prose-only prompt says why it has no result', async () => {
  await setSource('# Prose\n\n## Main\n\nJust a paragraph, no block.\n');
  const out = await runAndWait();
  assert.equal(out.state, 'empty');
  assert.match(out.text, /^The run finished without a result: no ```lua block returned a value\./);
  assert.match(await page.textContent('#status'), /^done in \d+ ms/);
});

test('a form error or an example switch clears the previous run from the screen', async () => {
  await runExample('tools');
  await page.click('details.model summary');
  await page.check('input[name="model"][value="openai"]');
  await page.fill('#base-url', '');
  await page.click('#run');
  await page.waitForSelector('#output[data-state="error"]');
  assert.match(await page.textContent('#output'), /^enter the endpoint's base URL/);
  assert.equal(await page.textContent('#status'), 'not run: fix the settings above');
  assert.equal(await page.textContent('#round-count'), '');
  assert.equal(await page.textContent('#event-count'), '');
  await page.check('input[name="model"][value="demo"]');
  await page.click('details.model summary');
  await runExample('tools');
  await pick('hello');
  assert.equal(await page.getAttribute('#output', 'data-state'), 'ready');
  assert.equal(await page.textContent('#tokens'), '');
  assert.equal(await page.textContent('#event-count'), '');
  assert.doesNotMatch(await page.textContent('#status'), /done in/);
});

test('an error in a called section is placed there, and its marked line says why on hover', async () => {
  await page.click('[data-tab="result"]');
  await setSource('# Oops\n\n## Main\n\n```lua\nreturn call("## Helper")\n```\n\n## Helper\n\n```lua\nlocal x = 1\nerror("boom")\n```\n');
  await runAndWait();
  assert.equal(await page.textContent('#output'), 'Lua: ## Helper:13: boom');
  assert.match(await page.textContent('#error-info'), /^At ## Helper, line 13\./);
  assert.equal(await page.$$eval('.cm-mark-line', (els) => els.map((el) => el.textContent).join('|')), 'error("boom")');
  assert.equal(await page.getAttribute('.cm-mark-line', 'title'), 'Lua: ## Helper:13: boom');
  await page.hover('.cm-mark-line', { position: { x: 12, y: 6 } });
  await page.waitForSelector('.cm-mark-tooltip');
  assert.equal(await page.textContent('.cm-mark-tooltip'), 'Lua: ## Helper:13: boom');
});

test('diagnostics mark the editor and list under the result (the seam for a checker)', async () => {
  await setSource('# D\n\n## Main\n\n```lua\nreturn x\n```\n');
  // The check of this text (clean) comes first, so it does not clear what is shown below.
  await page.evaluate(() => window.playground.checked());
  await page.evaluate(() => window.playground.showDiagnostics([
    { severity: 'warning', kind: 'undefined_global', message: "global 'x' is never set", line: 6, column: 8, section: '## Main' },
  ]));
  assert.equal(await page.textContent('.cm-mark-line.cm-mark-warning'), 'return x');
  assert.equal(await page.textContent('#diagnostics li'), "## Main, line 6:8 warning: global 'x' is never set");
  await page.evaluate(() => window.playground.showDiagnostics([]));
  assert.equal(await page.locator('.cm-mark-line').count(), 0);
});

/** The marked lines as `text → title`, in order. */
const marks = () => page.$$eval('.cm-mark-line', (els) => els.map((el) => `${el.textContent} → ${el.title}`));

/** Puts the cursor at the end of 1-based `line` of the editor. */
async function endOfLine(line) {
  await page.evaluate((n) => window.playground.goTo(n), line);
  await page.keyboard.press('End');
}

test('diagnostics as you type: engine.check marks a Lua syntax error and a misspelt call at their lines; fixed, the marks go', async () => {
  await page.click('[data-tab="result"]');
  const clean = '# Typing\n\n## Main\n\n```lua\nlocal a = 1\nreturn a\n```\n\n## Helper\n\nSome prose.\n\n```lua\nlocal b = 2\n```\n\n## Late\n\n```lua\nlocal c = 3\n```\n';
  await setSource(clean);
  await page.evaluate(() => window.playground.checked());
  assert.equal(await page.locator('.cm-mark-line').count(), 0);
  // Typed as a person types: a misspelt call in ## Main (line 6), a syntax error in ## Late (line 21).
  await endOfLine(6);
  await page.keyboard.type("; call('## Nope')");
  await endOfLine(21);
  await page.keyboard.type(' local = 4');
  await page.evaluate(() => window.playground.checked());
  const source = await page.evaluate(() => window.playground.source);
  const expected = await page.evaluate((text) => window.playground.engine.check(text), source);
  assert.deepEqual(expected.map((d) => [d.kind, d.line]), [['Lua', 6], ['Lua', 21]]);
  assert.match(expected[0].message, /"## Nope"/);
  assert.deepEqual(await marks(), [
    `local a = 1; call('## Nope') → Lua: ${expected[0].message}`,
    `local c = 3 local = 4 → Lua: ${expected[1].message}`,
  ]);
  assert.deepEqual(await page.$$eval('#diagnostics li', (els) => els.map((el) => el.textContent)), expected.map((d) => `${d.section}, line ${d.line}:${d.column} error: ${d.message}`));
  // The message on hover.
  await page.hover('.cm-mark-line >> nth=1', { position: { x: 12, y: 6 } });
  await page.waitForSelector('.cm-mark-tooltip');
  assert.equal(await page.textContent('.cm-mark-tooltip'), `Lua: ${expected[1].message}`);
  // Fixed, the marks and the list go.
  await endOfLine(21);
  for (let i = 0; i < ' local = 4'.length; i++) await page.keyboard.press('Backspace');
  await endOfLine(6);
  await page.keyboard.press('Shift+Home');
  await page.keyboard.type("local a = call('## Helper')");
  await page.evaluate(() => window.playground.checked());
  assert.deepEqual(await marks(), []);
  assert.equal(await page.locator('#diagnostics').isHidden(), true);
});

test("diagnostics check uses: against the run's Packs", async () => {
  await setSource('---\nuses: [user-input, mcp/nowhere]\n---\n# Packs\n\n## Main\n\n```lua\nreturn 1\n```\n');
  await page.evaluate(() => window.playground.checked());
  const [mark] = await marks();
  assert.match(mark, /^uses: \[user-input, mcp\/nowhere\] → RequirementsUnmet: .*mcp\/nowhere/s);
  assert.doesNotMatch(mark, /user-input(?!, mcp)/);
});

/** Feeds `file` ({ name, text }) to "Replay journal…". */
async function replayFile(name, text) {
  await page.setInputFiles('#journal-replay', { name, mimeType: 'application/json', buffer: Buffer.from(text) });
}

/** The trace's rows as label · meta without times. */
const traceRows = () => page.$$eval('#trace .trace-row', (els) => els.map((el) => `${el.querySelector('.trace-label')?.textContent} · ${(el.querySelector('.trace-meta')?.textContent ?? '').replace(/\+?\d+ ms/g, 'T')}`));

test('journals: a run is recorded, downloaded as <name>.journal.json, and replays to the same result, rounds and trace with no model called', async () => {
  await runExample('tools');
  const recorded = {
    output: await page.textContent('#output'),
    tokens: await page.textContent('#tokens'),
    console: await page.$$eval('#console li', (els) => els.map((el) => el.textContent)),
    rounds: (await page.$$eval('#rounds .round-head', (els) => els.map((el) => el.textContent))).map((h) => h.replace(/ · \d+ ms/, '')),
  };
  await page.click('[data-tab="trace"]');
  const recordedTrace = await traceRows();
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#journal-download')]);
  assert.equal(download.suggestedFilename(), 'tools.journal.json');
  const chunks = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  const journal = JSON.parse(text);
  assert.equal(journal[0].journal, 'runvil-journal');
  assert.deepEqual(journal.filter((e) => e.kind === 'model').map((e) => e.reply.finish_reason), ['tool_calls', 'stop']);

  // The configured model is an endpoint that counts what it is asked; the demo model counts too.
  let asked = 0;
  await page.route('http://127.0.0.1:9/**', (route) => { asked += 1; return route.abort(); });
  await page.click('details.model summary');
  await page.check('input[name="model"][value="openai"]');
  await page.fill('#base-url', 'http://127.0.0.1:9/v1');
  await page.fill('#model-id', 'counted');
  const callsBefore = await page.evaluate(() => window.playground.modelCalls);
  try {
    await replayFile('tools.journal.json', text);
    await page.waitForFunction(() => /^replayed tools\.journal\.json/.test(document.querySelector('#journal-status').textContent));
    assert.equal(await page.textContent('#journal-status'), 'replayed tools.journal.json: the recorded outcome, no model called');
    assert.equal(asked, 0);
    assert.equal(await page.evaluate(() => window.playground.modelCalls), callsBefore);
    assert.equal(await page.textContent('#output'), recorded.output);
    assert.equal(await page.textContent('#tokens'), recorded.tokens);
    assert.match(await page.textContent('#status'), /^replayed: done in \d+ ms · seed 7$/);
    assert.deepEqual(await traceRows(), recordedTrace);
    await page.click('[data-tab="result"]');
    assert.deepEqual(await page.$$eval('#console li', (els) => els.map((el) => el.textContent)), recorded.console);
    await page.click('[data-tab="rounds"]');
    const heads = await page.$$eval('#rounds .round-head', (els) => els.map((el) => el.textContent));
    assert.deepEqual(heads.map((h) => h.replace(' · replayed', '')), recorded.rounds);
    assert.match(heads[0], /^#1 · ## By the model · default · round 1 · replayed · tool_calls$/);
    await page.click('#rounds li:first-child summary.round-head');
    const first = await page.textContent('#rounds li:first-child');
    assert.match(first, /1 message sent: the journal keeps the reply/);
    assert.match(first, /"name": "demo_weather"/);
    await page.click('#rounds li:nth-child(2) summary.round-head');
    assert.match(await page.textContent('#rounds li:nth-child(2) .round-reply'), /The tool answered: Light rain, 18 °C in Lisbon/);
    // The replayed journal can be saved again, under its own name.
    assert.equal(await page.isDisabled('#journal-download'), false);

    // A journal of another prompt: the replay's Determinism error, the editor untouched.
    await pick('hello');
    const hello = await page.evaluate(() => window.playground.source);
    await page.click('[data-tab="trace"]');
    await replayFile('tools.journal.json', text);
    await page.waitForFunction(() => /does not fit/.test(document.querySelector('#journal-status').textContent));
    assert.match(await page.textContent('#journal-status'), /^tools\.journal\.json does not fit this prompt: the prompt is not the one the journal recorded: /);
    assert.match(await page.textContent('#output'), /^Determinism: the prompt is not the one the journal recorded: /);
    assert.equal(await page.evaluate(() => window.playground.source), hello);
    assert.equal(await page.isDisabled('#journal-download'), true);

    // Files that are not journals: the engine's message; nothing on screen changes.
    const before = { output: await page.textContent('#output'), source: hello };
    await replayFile('notes.json', '{"not": "a journal"}');
    await page.waitForFunction(() => /a journal is an array/.test(document.querySelector('#journal-status').textContent));
    assert.equal(await page.textContent('#journal-status'), 'engine.run: replay: a journal is an array of entries, the first its header (got an object)');
    assert.equal(await page.textContent('#status'), 'not replayed: notes.json is not a journal');
    await replayFile('broken.json', '[{"journal": ');
    await page.waitForFunction(() => /^broken\.json is not a journal: it is not JSON/.test(document.querySelector('#journal-status').textContent));
    assert.deepEqual({ output: await page.textContent('#output'), source: await page.evaluate(() => window.playground.source) }, before);
  } finally {
    await page.unroute('http://127.0.0.1:9/**');
    await page.check('input[name="model"][value="demo"]');
    await page.click('details.model summary');
  }
});

test('the store example shows its files and what the run changed, line by line', async () => {
  const out = await runExample('store');
  assert.equal(out.state, 'done');
  assert.match(out.text, /^run number \d+; files: playground\/log\.md, playground\/runs\.txt/);
  await page.click('[data-tab="files"]');
  await page.waitForSelector('#files li');
  assert.deepEqual(await page.$$eval('#files .path', (els) => els.map((el) => el.textContent)), ['playground/log.md', 'playground/runs.txt']);
  const n = Number(/^run number (\d+)/.exec(out.text)[1]);
  await runExample('store');
  await page.click('[data-tab="files"]');
  assert.deepEqual(await page.$$eval('.change summary', (els) => els.map((el) => el.textContent)), ['changed playground/log.md', 'changed playground/runs.txt']);
  assert.deepEqual(await page.$$eval('.change:last-child .diff span', (els) => els.map((el) => el.textContent)), [`- ${n}\n`, `+ ${n + 1}\n`]);
  await page.reload();
  await page.waitForSelector('#output[data-state="ready"]');
  await page.waitForFunction(() => window.playground.editorReady);
  const again = await runExample('store');
  assert.match(again.text, new RegExp(`^run number ${n + 2};`));
});

test('the editor completes and explains Engine globals from docs/reference.md, and has a help sheet', async () => {
  await page.click('[data-tab="result"]');
  await setSource('# Help\n\n## Main\n\n```lua\nstore.wri\n```\n');
  await page.click('.cm-line:text-is("store.wri")');
  await page.keyboard.press('End');
  await page.keyboard.press('Control+Space');
  await page.waitForSelector('.cm-tooltip-autocomplete');
  const options = await page.$$eval('.cm-tooltip-autocomplete li', (els) => els.map((el) => el.textContent));
  assert.ok(options.some((o) => o.startsWith('write')), options.join(', '));
  await page.keyboard.press('Escape');
  await setSource('# Help\n\n## Main\n\n```lua\nstore.write("a", "b")\n```\n');
  const box = await page.locator('.cm-line:has-text("store.write")').boundingBox();
  // Over `write`: the hover names the whole dotted name.
  await page.mouse.move(box.x + 60, box.y + box.height / 2);
  await page.waitForSelector('.cm-help-tooltip');
  assert.match(await page.textContent('.cm-help-tooltip'), /^store\.write\(path, contents\)Creates or replaces the file with contents/);
  await page.click('#help-open');
  await page.waitForSelector('#help-reference dt');
  await page.fill('#help-filter', 'models.loop');
  const listed = await page.$$eval('#help-reference dt', (els) => els.map((el) => el.textContent));
  await page.click('#help .close');
  await page.waitForSelector('#help', { state: 'hidden' });
  assert.deepEqual(listed, ['models.loop()']);
});

test('dark mode follows the system', async () => {
  const other = await browser.context.newPage();
  await other.emulateMedia({ colorScheme: 'dark' });
  await other.goto(`${site.url}/`);
  await other.waitForSelector('#editor .cm-editor');
  const colours = await other.evaluate(() => [getComputedStyle(document.documentElement).backgroundColor, getComputedStyle(document.querySelector('.cm-editor')).backgroundColor]);
  assert.deepEqual(colours, ['rgb(15, 18, 22)', 'rgb(22, 26, 32)']);
  await other.close();
});

test('work is kept: picking an example asks first, and (your prompt) brings the edits back', async () => {
  await setSource('# Mine\n\n## Main\n\n```lua\nreturn "mine"\n```\n');
  const value = await page.$eval('#example', (select) => [...select.options].find((o) => o.textContent.startsWith('hello:')).value);
  const asked = onDialog(false);
  await page.selectOption('#example', value);
  assert.match(await asked, /in place of your prompt/);
  assert.equal(await page.evaluate(() => window.playground.source), '# Mine\n\n## Main\n\n```lua\nreturn "mine"\n```\n');
  await pick('hello');
  assert.match(await page.evaluate(() => window.playground.source), /^---\nname: hello/);
  await page.selectOption('#example', 'draft');
  assert.equal(await page.evaluate(() => window.playground.source), '# Mine\n\n## Main\n\n```lua\nreturn "mine"\n```\n');
});

test('work is kept: a prompt saved by name is listed after a reload and opens again', async () => {
  const named = onDialog(true, 'My mine');
  await page.click('#save');
  await named;
  await page.waitForFunction(() => [...document.querySelectorAll('#example option')].some((o) => o.value === 'saved:My mine'));
  await page.reload();
  await page.waitForSelector('#output[data-state="ready"]');
  await page.waitForFunction(() => window.playground.editorReady);
  await pick('hello');
  await page.selectOption('#example', 'saved:My mine');
  await page.waitForFunction(() => window.playground.source.includes('return "mine"'));
  assert.equal(await page.isHidden('#delete-saved'), false);
});

test('work is kept: Share copies a link and leaves the address bar; the link opens the prompt and a reload keeps it', async () => {
  await setSource('# Mine again\n\n## Main\n\n```lua\nreturn "draft"\n```\n');
  const draft = await page.evaluate(() => window.playground.source);
  await page.evaluate(() => window.playground.setSource('# Shared\n\n## Main\n\n```lua\nreturn "shared " .. args\n```\n'));
  await page.fill('#args', 'link');
  await page.fill('#seed', '42');
  await page.click('#share');
  await page.waitForFunction(() => document.querySelector('#share-link').value.includes('#z='));
  const link = await page.inputValue('#share-link');
  assert.equal(await page.evaluate(() => location.hash), '');
  // Back to the draft before the link is opened in this browser.
  await page.evaluate((d) => window.playground.setSource(d), draft);
  await page.fill('#args', '');
  await page.fill('#seed', '');
  const other = await browser.context.newPage();
  await other.goto(link);
  await other.waitForSelector('#output[data-state="ready"]');
  assert.equal(await other.evaluate(() => location.hash), '');
  assert.equal(await other.evaluate(() => window.playground.source), '# Shared\n\n## Main\n\n```lua\nreturn "shared " .. args\n```\n');
  assert.equal(await other.inputValue('#args'), 'link');
  assert.equal(await other.inputValue('#seed'), '42');
  await other.click('#run');
  await other.waitForSelector('#output[data-state="done"]');
  assert.equal(await other.textContent('#output'), 'shared link');
  // A reload shows the shared prompt again, and the draft was never replaced by it.
  await other.reload();
  await other.waitForSelector('#output[data-state="ready"]');
  assert.equal(await other.evaluate(() => window.playground.source), '# Shared\n\n## Main\n\n```lua\nreturn "shared " .. args\n```\n');
  await other.selectOption('#example', 'draft');
  assert.equal(await other.evaluate(() => window.playground.source), draft);
  await other.close();
});

test('an MCP server connected by URL lends its tools to the run', { timeout: 90_000 }, async () => {
  const mcp = await startHttpServer();
  try {
    await page.click('details.packs summary');
    await page.fill('#mcp-url', mcp.url);
    await page.check('#mcp-trusted');
    await page.click('#mcp-form button[type="submit"]');
    await page.waitForSelector('#mcp-list li', { timeout: 30_000 });
    assert.match(await page.textContent('#mcp-list li'), /^mcp\/everything \(\d+ tools\)/);
    await setSource("---\nuses: [mcp/everything]\n---\n# MCP\n\n## Main\n\n```lua\nreturn tools.call('everything/echo', { message = 'from the playground' })\n```\n");
    // The check is given the connected server's Pack, as the run is.
    await page.evaluate(() => window.playground.checked());
    assert.deepEqual(await marks(), []);
    const out = await runAndWait();
    assert.deepEqual(out, { state: 'done', text: 'Echo: from the playground' });
    await page.click('#mcp-list button');
    assert.equal(await page.locator('#mcp-list li').count(), 0);
    await page.waitForSelector('.cm-mark-line');
    assert.match((await marks())[0], /^uses: \[mcp\/everything\] → RequirementsUnmet: .*mcp\/everything/s);
  } finally {
    await mcp.close();
  }
  assert.deepEqual(errors, []);
});
