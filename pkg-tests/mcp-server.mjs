// The reference MCP server, @modelcontextprotocol/server-everything (a devDependency), for the MCP
// tests (mcp.test.mjs, mcp-browser.test.mjs). Not a test file.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, freePort } from './helpers.mjs';

/** Its bin: `node SERVER stdio` serves stdio, `node SERVER streamableHttp` Streamable HTTP on $PORT. */
export const SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/**
 * The server in Streamable HTTP mode on a free port (it listens on every interface; the tests
 * reach it on 127.0.0.1), in its own process group: `close()` SIGKILLs it. Its CORS answers any
 * origin and exposes mcp-session-id, so a page of another origin can use it.
 */
export async function startHttpServer() {
  const port = await freePort();
  const child = spawn(process.execPath, [SERVER, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen in 60 s:\n${log}`)), 60_000);
    child.stderr.on('data', (d) => {
      log += d;
      if (/listening on port/.test(log)) {
        clearTimeout(timer);
        resolve(undefined);
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}:\n${log}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log: () => log,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
      await exited;
    },
  };
}
