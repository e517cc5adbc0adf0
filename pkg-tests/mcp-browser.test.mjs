// An MCP server as a Pack in a page: headless Chromium runs runvil's browser entry and the MCP SDK's
// client (bundled by esbuild for the browser) against server-everything's Streamable HTTP mode on
// another origin, so the calls cross CORS as a real page's would. A missing Chromium is a
// failure, never a skip.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join, normalize } from 'node:path';
import { build } from 'esbuild';
import { PKG, ROOT } from './helpers.mjs';
import { launchChromium, tempProfile } from './browser/chromium.mjs';
import { startHttpServer } from './mcp-server.mjs';

const mcp = await startHttpServer();

// The SDK's client and its Streamable HTTP transport as one browser module.
const bundled = await build({
  stdin: {
    contents: `export { Client } from '@modelcontextprotocol/sdk/client/index.js';
export { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';`,
    resolveDir: ROOT,
  },
  bundle: true,
  format: 'esm',
  platform: 'browser',
  write: false,
  logLevel: 'silent',
});

const PAGE = `<!doctype html><meta charset="utf-8"><title>MCP</title>
<script type="module">
  import * as runvil from '/pkg/browser.js';
  import * as sdk from '/mcp-client.js';
  window.runvil = runvil;
  window.sdk = sdk;
  document.body.dataset.ready = 'yes';
</script><body></body>`;

const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

/** The page, the SDK bundle and pkg/, on a loopback port of their own (another origin than the MCP server's). */
const site = await new Promise((resolve) => {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (path === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    if (path === '/mcp-client.js')
      return void res.writeHead(200, { 'content-type': TYPES['.js'] }).end(bundled.outputFiles[0].text);
    if (!path.startsWith('/pkg/') || path.includes('..')) return void res.writeHead(404).end();
    try {
      const body = await readFile(join(PKG, path.slice('/pkg/'.length)));
      res
        .writeHead(200, { 'content-type': TYPES[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream' })
        .end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  server.listen(0, '127.0.0.1', () => {
    const close = () =>
      new Promise((done) => {
        server.close(done);
        server.closeAllConnections();
      });
    resolve({ url: `http://127.0.0.1:${server.address().port}`, close });
  });
});

const profile = tempProfile();
const browser = await launchChromium(profile.dir);
after(async () => {
  await browser.close();
  profile.remove();
  await site.close();
  await mcp.close();
});
const { page } = browser;
const errors = [];
page.on('pageerror', (error) => errors.push(error.message));
await page.goto(`${site.url}/`);
await page.waitForSelector('body[data-ready="yes"]', { state: 'attached', timeout: 30_000 });

const PROMPT = `---
name: mcp-page
description: MCP tools in a page
runvil: 0
uses: [mcp/everything]
---

# MCP

## Main

\`\`\`lua
local w = tools.call('everything/get-structured-content', { location = 'New York' })
local ok, err = pcall(tools.call, 'everything/get-resource-reference', { resourceId = 0 })
return tools.call('everything/echo', { message = 'from the page' }) .. '|' .. w.conditions .. '|' .. err.kind .. ': ' .. tostring(err)
\`\`\`

## Slow

\`\`\`lua
return tools.call('everything/trigger-long-running-operation', { duration = 30, steps = 30 })
\`\`\`
`;

test(
  'Chromium: a page serves an MCP server over Streamable HTTP (CORS) as a Pack, and cancels a call',
  { timeout: 120_000 },
  async () => {
    const result = await page.evaluate(
      async ({ url, source }) => {
        const { runvil, sdk } = window;
        const client = new sdk.Client({ name: 'page', version: '1' });
        const transport = new sdk.StreamableHTTPClientTransport(new URL(url));
        const sent = [];
        const send = transport.send.bind(transport);
        transport.send = (message, options) => {
          sent.push(message.method);
          return send(message, options);
        };
        await client.connect(transport);
        const pack = await runvil.mcpPack(client, { name: 'mcp/everything', trust: 'trusted' });
        const engine = await runvil.createEngine();
        const done = await engine.run(source, { packs: [pack] });
        // ## Slow alone: the prompt without ## Main.
        const slow = `${source.slice(0, source.indexOf('## Main'))}${source.slice(source.indexOf('## Slow'))}`;
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 1000);
        const started = Date.now();
        const cancelled = await engine.run(slow, { packs: [pack], signal: controller.signal });
        const waited = Date.now() - started;
        const after = await engine.run(source.slice(0, source.indexOf('## Slow')), { packs: [pack] });
        const session = transport.sessionId;
        await transport.terminateSession();
        await client.close();
        return { done, cancelled: cancelled.error, waited, after: after.ok, session: typeof session, sent };
      },
      { url: mcp.url, source: PROMPT },
    );
    assert.equal(result.done.ok, true, JSON.stringify(result.done));
    assert.equal(
      result.done.result,
      'Echo: from the page|Cloudy|tool: tool call failure: Invalid resourceId: 0. Must be a finite positive integer.',
    );
    assert.equal(result.cancelled.kind, 'Cancelled');
    assert.ok(result.waited < 10_000, `the cancelled run took ${result.waited} ms`);
    assert.equal(result.after, true);
    // The session id crossed CORS (mcp-session-id is exposed), or no call after initialize would work.
    assert.equal(result.session, 'string');
    assert.ok(result.sent.includes('notifications/cancelled'), result.sent.join(' '));
    assert.deepEqual(errors, []);
  },
);
