// Debian's Chromium for the browser tests, started as its own process group so a test can kill it
// outright (SIGKILL, as a crash or a closed laptop would) and start it again on the same profile.
// playwright-core drives it over the DevTools protocol.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--no-default-browser-check', '--disable-dev-shm-usage', '--remote-debugging-port=0'];

/** Resolves once no process of group `pgid` is left. */
async function groupGone(pgid) {
  for (;;) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A fresh profile folder; `remove()` retries, since Chromium's helpers may still be writing. */
export function tempProfile() {
  const dir = mkdtempSync(join(tmpdir(), 'runvil-chromium-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }) };
}

/**
 * Starts Chromium on `profile` and connects. Resolves with { browser, context, page, kill, close }:
 * `kill()` SIGKILLs the whole process group and waits for it to exit; `close()` closes cleanly.
 */
export async function launchChromium(profile) {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (apt package chromium; ./build.sh setup installs it)`);
  const child = spawn(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, 'about:blank'],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  const launcherExited = new Promise((resolve) => child.once('exit', resolve));
  // The launcher script exiting is not enough: the browser's processes must all be gone (and their
  // file locks released) before the next launch opens the same profile, or that launch may find
  // IndexedDB's backing store still locked.
  const exited = launcherExited.then(() => groupGone(child.pid));
  let log = '';
  const endpoint = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Chromium did not report its DevTools endpoint:\n${log}`)), 60_000);
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Chromium exited with ${code} before it listened:\n${log}`));
    });
  });
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    }
    await exited;
  };
  let browser;
  try {
    browser = await chromium.connectOverCDP(endpoint);
  } catch (error) {
    await kill();
    throw error;
  }
  const context = browser.contexts()[0];
  const page = context.pages()[0] ?? await context.newPage();
  const close = async () => {
    // The shutdown is asked of the browser process alone (CDP Browser.close; a SIGTERM to it if
    // that is not answered), which then ends its children in order. A signal to the whole group
    // also reached the process holding IndexedDB, which could die mid-write: the next launch then
    // found the backing store corrupt and wiped it (the kill test saw a store emptied after its
    // seventh batch had been committed, once in a few hundred trials; docs/store.md, "Crashes").
    try {
      const session = await browser.newBrowserCDPSession();
      await session.send('Browser.close');
    } catch { /* the connection may already be gone: the SIGTERM below */ }
    try {
      await browser.close(); // a CDP connection's close() only disconnects
    } catch { /* gone */ }
    const term = setTimeout(() => { try { process.kill(child.pid, 'SIGTERM'); } catch { /* gone */ } }, 5_000);
    const hard = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, 30_000);
    await exited;
    clearTimeout(term);
    clearTimeout(hard);
  };
  return { browser, context, page, kill, close };
}
