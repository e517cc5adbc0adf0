// Takes the playground screenshots shown in the README (docs/playground-*.png): headless Chromium,
// the built site, the demo model. Re-run after changing the playground:
//   node tools/screenshots.mjs
import { ROOT } from '../pkg-tests/helpers.mjs';
import { serve } from '../pkg-tests/runtimes/serve.mjs';
import { launchChromium, tempProfile } from '../pkg-tests/browser/chromium.mjs';
import { buildSite } from './build-site.mjs';
import { join } from 'node:path';

await buildSite();
const site = await serve(ROOT);
const profile = tempProfile();
const browser = await launchChromium(profile.dir);
const { page } = browser;
// Opening an example over edits asks first: the pictures always say yes.
page.on('dialog', (dialog) => dialog.accept());
const shot = (name) => page.screenshot({ path: join(ROOT, 'docs', `playground-${name}.png`) });

async function runExample(name) {
  const value = await page.$eval('#example', (select, n) => [...select.options].find((o) => o.textContent.startsWith(`${n}:`)).value, name);
  await page.selectOption('#example', value);
  await page.fill('#seed', '7');
  await page.click('#run');
  await page.waitForSelector('#run:not([disabled])');
}

try {
  await page.setViewportSize({ width: 1280, height: 820 });
  await page.goto(`${site.url}/`);
  await page.waitForSelector('#output[data-state="ready"]');
  await page.waitForFunction(() => window.playground.editorReady);
  await runExample('tools');
  await shot('result');
  await page.click('[data-tab="trace"]');
  await shot('events');
  await page.click('[data-tab="rounds"]');
  await page.click('#rounds li:first-child summary.round-head');
  await shot('rounds');
  await runExample('store');
  await page.click('[data-tab="files"]');
  await page.waitForSelector('#files li');
  await runExample('store');
  await page.click('[data-tab="files"]');
  await page.waitForSelector('.change');
  await page.$$eval('.change', (els) => els.forEach((d) => { d.open = true; }));
  await shot('files');
  await page.click('[data-tab="result"]');
  await page.evaluate(() => window.playground.setSource('# Oops\n\n## Main\n\n```lua\nlocal items = { 1, 2, 3 }\nreturn "total: " .. items\n```\n'));
  await page.click('#run');
  await page.waitForSelector('#run:not([disabled])');
  await shot('error');
  // A fresh page: the check's marks alone, with no run's result beside them.
  await page.reload();
  await page.waitForSelector('#output[data-state="ready"]');
  await page.waitForFunction(() => window.playground.editorReady);
  await page.evaluate(() => window.playground.setSource('# Typing\n\n## Main\n\n```lua\nlocal draft = call("## Drfat")\nreturn draft\n```\n\n## Draft\n\n```lua\nlocal words = { "a", "b" \nreturn table.concat(words, " ")\n```\n'));
  await page.evaluate(() => window.playground.checked());
  await shot('check');
  await page.setViewportSize({ width: 390, height: 844 });
  await runExample('hello');
  await page.screenshot({ path: join(ROOT, 'docs', 'playground-mobile.png'), fullPage: true });
  console.log('docs/playground-{result,events,rounds,files,error,check,mobile}.png written');
} finally {
  await browser.close();
  profile.remove();
  await site.close();
}
