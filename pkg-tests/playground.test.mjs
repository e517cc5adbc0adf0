// The playground (site/, built by tools/build-site.mjs) in real headless Chromium: it loads, an
// example runs with the demo model and fills the events timeline, cancel stops an endless loop while
// the page stays responsive, an input.ask answer typed in the page reaches the run, the store
// browser shows the run's files, an error is marked at its line, and a shared link restores the
// prompt. A missing Chromium is a failure, never a skip.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT } from './helpers.mjs';
import { serve } from './runtimes/serve.mjs';
import { launchChromium, tempProfile } from './browser/chromium.mjs';
import { buildSite } from '../tools/build-site.mjs';

let site;
let browser;
let profile;
let page;
const errors = [];

before(async () => {
  await buildSite();
  site = await serve(ROOT);
  profile = tempProfile();
  browser = await launchChromium(profile.dir);
  page = browser.page;
  page.on('pageerror', (error) => errors.push(error.message));
  await page.setViewportSize({ width: 1200, height: 900 });
  await page.goto(`${site.url}/`);
  await page.waitForSelector('#output[data-state="ready"]', { timeout: 30_000 });
});

after(async () => {
  await browser?.close();
  profile?.remove();
  await site?.close();
});

/** Picks the gallery example called `name`. */
async function pick(name) {
  const value = await page.$eval('#example', (select, n) => [...select.options].find((o) => o.textContent.startsWith(`${n}:`))?.value, name);
  assert.ok(value, `no example ${name}`);
  await page.selectOption('#example', value);
}

/** Picks the gallery example called `name` and runs it with the Run button; resolves with the output. */
async function runExample(name, { args } = {}) {
  await pick(name);
  if (args !== undefined) await page.fill('#args', args);
  await page.fill('#seed', '7');
  await page.click('#run');
  await page.waitForSelector('#run:not([disabled])');
  return { state: await page.getAttribute('#output', 'data-state'), text: await page.textContent('#output') };
}

test('the tools example runs with the demo model and its events appear', async () => {
  const out = await runExample('tools');
  assert.deepEqual(out, { state: 'done', text: 'script: 42\nmodel: The tool answered: Light rain, 18 °C in Lisbon' });
  await page.click('[data-tab="events"]');
  await page.waitForSelector('#events li');
  const names = await page.$$eval('#events li .name', (els) => els.map((el) => el.textContent));
  assert.equal(names[0], 'run_started');
  assert.equal(names.at(-1), 'run_finished');
  for (const name of ['section_started', 'model_turn_started', 'model_turn_completed', 'tool_result']) {
    assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
  }
  assert.equal(await page.textContent('#event-count'), String(names.length));
});

test('an input.ask answer typed in the page reaches the run', async () => {
  await page.click('[data-tab="result"]');
  await pick('ask');
  await page.click('#run');
  await page.waitForSelector('#ask:not([hidden])');
  await page.fill('#ask-input', 'Ada');
  await page.press('#ask-input', 'Enter');
  await page.waitForSelector('#ask:not([hidden])');
  await page.fill('#ask-input', 'green');
  await page.click('#ask button[type="submit"]');
  await page.waitForSelector('#run:not([disabled])');
  assert.equal(await page.textContent('#output'), 'Hello Ada, green it is.');
});

test('cancel (Esc) stops an endless loop while the page stays responsive', async (t) => {
  await pick('long-loop');
  await page.evaluate(() => {
    window.longTasks = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.longTasks.push(Math.round(e.duration)); })
      .observe({ type: 'longtask' });
  });
  // Past the default instruction budget, so only the cancel can end it.
  await page.click('details.limits summary');
  await page.fill('#limit-instructions', '1000000000000');
  await page.click('#run');
  await page.waitForSelector('#output[data-state="running"]');
  // The page answers while the worker loops: typing into the arguments field works.
  await page.fill('#args', 'typed while running');
  assert.equal(await page.inputValue('#args'), 'typed while running');
  assert.equal(await page.getAttribute('#output', 'data-state'), 'running');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#run:not([disabled])');
  assert.equal(await page.getAttribute('#output', 'data-state'), 'error');
  assert.match(await page.textContent('#output'), /^Cancelled: /);
  await page.fill('#limit-instructions', '');
  await page.click('details.limits summary');
  t.diagnostic(`main-thread long tasks during the loop: ${JSON.stringify(await page.evaluate(() => window.longTasks))}`);
});

test('the store example leaves files the Files tab lists, and they persist across a reload', async () => {
  const out = await runExample('store');
  assert.equal(out.state, 'done');
  assert.match(out.text, /^run number \d+; files: playground\/log\.md, playground\/runs\.txt/);
  await page.click('[data-tab="files"]');
  await page.waitForSelector('#files li');
  assert.deepEqual(await page.$$eval('#files .path', (els) => els.map((el) => el.textContent)), ['playground/log.md', 'playground/runs.txt']);
  const before = Number(/^run number (\d+)/.exec(out.text)[1]);
  await page.reload();
  await page.waitForSelector('#output[data-state="ready"]');
  const again = await runExample('store');
  assert.match(again.text, new RegExp(`^run number ${before + 1};`));
});

test('an error shows its kind and location and marks the line in the editor', async () => {
  await page.click('[data-tab="result"]');
  await page.evaluate(() => window.playground.setSource('# Oops\n\n## Main\n\n```lua\nlocal x = 1\nerror("boom")\n```\n'));
  await page.click('#run');
  await page.waitForSelector('#run:not([disabled])');
  assert.equal(await page.textContent('#output'), 'Lua: ## Main:7: boom');
  assert.match(await page.textContent('#error-info'), /^At ## Main, line 7\./);
  assert.equal(await page.$$eval('.cm-error-line', (els) => els.map((el) => el.textContent).join('|')), 'error("boom")');
});

test('a shared link restores the prompt, its arguments and seed', async () => {
  await page.evaluate(() => window.playground.setSource('# Shared\n\n## Main\n\n```lua\nreturn "shared " .. args\n```\n'));
  await page.fill('#args', 'link');
  await page.fill('#seed', '42');
  await page.click('#share');
  await page.waitForFunction(() => location.hash.startsWith('#z='));
  const link = await page.evaluate(() => location.href);
  const other = await browser.context.newPage();
  await other.goto(link);
  await other.waitForSelector('#output[data-state="ready"]');
  assert.equal(await other.evaluate(() => window.playground.source), '# Shared\n\n## Main\n\n```lua\nreturn "shared " .. args\n```\n');
  assert.equal(await other.inputValue('#args'), 'link');
  assert.equal(await other.inputValue('#seed'), '42');
  await other.click('#run');
  await other.waitForSelector('#output[data-state="done"]');
  assert.equal(await other.textContent('#output'), 'shared link');
  await other.close();
  assert.deepEqual(errors, []);
});
