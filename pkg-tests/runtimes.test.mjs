// Runtime smoke tests: examples/smoke.md must give the same exact result in headless Chromium (the
// playground page), workerd (the runvil/workerd entry) and Deno (the default entry). A missing
// runtime is a failure, never a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT, SMOKE_RESULT, WORKERD, smokeSource, serveWorkerd, tempDir, writeWorkerdConfig } from './helpers.mjs';
import { serve } from './runtimes/serve.mjs';
import { buildSite } from '../tools/build-site.mjs';

const BIN = join(ROOT, 'node_modules/.bin');
const CHROMIUM = '/usr/bin/chromium';
const FIXTURES = join(ROOT, 'pkg-tests/runtimes');
const source = smokeSource();

test('Chromium: the playground page runs the smoke prompt', { timeout: 120_000 }, async (t) => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing (apt package chromium; ./build.sh setup installs it)`);
  await buildSite();
  const site = await serve(ROOT);
  t.after(site.close);
  const profile = mkdtempSync(join(tmpdir(), 'runvil-chromium-'));
  // A fresh profile per run (playwright passes it as --user-data-dir).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  // One hook, so the profile goes only after the browser closed; its helper processes may still
  // be writing into it as they exit, so the removal retries.
  t.after(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  });
  const page = context.pages()[0] ?? await context.newPage();
  const errors = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${site.url}/`);
  await page.waitForSelector('#output[data-state="ready"]', { timeout: 30_000 });
  // The playground's editor is CodeMirror: the prompt goes in through its page hook.
  await page.evaluate((text) => window.playground.setSource(text), source);
  await page.fill('#args', '');
  await page.fill('#seed', '');
  await page.click('#run');
  await page.waitForSelector('#output[data-state="done"], #output[data-state="error"]', { timeout: 30_000 });
  assert.equal(await page.textContent('#output'), SMOKE_RESULT);
  assert.deepEqual(errors, []);
  // The playground runs the engine in a worker (runvil/worker), where ui.kind is 'browser' too.
  await page.evaluate(() => {
    window.playground.setSource('# K\n\n## Main\n\n```lua\nreturn ui.kind\n```\n');
    return window.playground.run();
  });
  assert.equal(await page.textContent('#output'), 'browser');
});

test('workerd: the runvil/workerd entry runs the smoke prompt', { timeout: 120_000 }, async (t) => {
  assert.ok(existsSync(WORKERD), `${WORKERD} is missing (npm dev dependency workerd)`);
  const config = writeWorkerdConfig(tempDir(t, 'workerd'), { modules: { 'worker.js': join(FIXTURES, 'worker.js') } });
  const server = await serveWorkerd(t, config);
  const response = await fetch(`${server.url}/`, { method: 'POST', body: source });
  assert.equal(await response.text(), SMOKE_RESULT, server.log());
  assert.equal(response.status, 200);
});

test('Deno: the default entry runs the smoke prompt', { timeout: 120_000 }, async (t) => {
  const deno = join(BIN, 'deno');
  assert.ok(existsSync(deno), `${deno} is missing (npm dev dependency deno)`);
  const dir = mkdtempSync(join(tmpdir(), 'runvil-deno-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const prompt = join(dir, 'smoke.md');
  writeFileSync(prompt, source);
  const { stdout } = await new Promise((resolve, reject) => {
    execFile(deno, ['run', '--no-config', '--no-lock', '--allow-read', join(FIXTURES, 'deno-smoke.mjs'), prompt],
      { env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' } },
      (error, out, err) => (error ? reject(new Error(`deno failed: ${err || error.message}`)) : resolve({ stdout: out })));
  });
  assert.equal(stdout, `${SMOKE_RESULT}\n`);
});

test('Deno: index.d.ts type-checks typical uses of the API (deno check, strict)', { timeout: 120_000 }, async () => {
  const deno = join(BIN, 'deno');
  assert.ok(existsSync(deno), `${deno} is missing (npm dev dependency deno)`);
  await new Promise((resolve, reject) => {
    execFile(deno, ['check', '--no-config', '--no-lock', join(FIXTURES, 'types-check.ts')],
      { env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' } },
      (error, _out, err) => (error ? reject(new Error(`deno check failed:\n${err}`)) : resolve()));
  });
});
