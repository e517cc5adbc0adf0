// Tracing away from Node: the OpenTelemetry SDK (bundled by esbuild) records a run's spans in
// headless Chromium, with the engine in the page (runvil/browser) and in a Web Worker
// (runvil/worker, whose tracer stays in the page), and in workerd (runvil/workerd). A missing
// runtime is a failure, never a skip.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { build } from 'esbuild';
import { PKG, ROOT, serveWorkerd, writeWorkerdConfig } from './helpers.mjs';
import { launchChromium, tempProfile } from './browser/chromium.mjs';

/** The SDK pieces a host wires, plus the span summary both runtimes answer, as one ES module. */
const OTEL_MODULE = `
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
export function sdkTracer() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer('runtime-test'), spans: () => summary(exporter.getFinishedSpans()) };
}
/** Each span as [indented name, selected attributes, status code], parents before children. */
function summary(spans) {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const depth = (s) => {
    let d = 0;
    for (let p = s.parentSpanContext?.spanId; p && byId.has(p); p = byId.get(p).parentSpanContext?.spanId) d++;
    return d;
  };
  const ns = (t) => t[0] * 1e9 + t[1];
  const lines = [];
  const visit = (s) => {
    lines.push(['  '.repeat(depth(s)) + s.name, s.attributes['gen_ai.tool.call.id'] ?? s.attributes['runvil.chain'] ?? null, s.status.code]);
    spans.filter((c) => c.parentSpanContext?.spanId === s.spanContext().spanId)
      .sort((a, b) => ns(a.startTime) - ns(b.startTime) || String(a.attributes['runvil.chain']).localeCompare(String(b.attributes['runvil.chain'])))
      .forEach(visit);
  };
  spans.filter((s) => !byId.has(s.parentSpanContext?.spanId)).forEach(visit);
  return lines;
}
`;

const bundled = (
  await build({
    stdin: { contents: OTEL_MODULE, resolveDir: ROOT },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  })
).outputFiles[0].text;

const PROMPT = `# Traced

## Main

\`\`\`lua
tools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args) return 'grabbed ' .. args.value end)
messages:user('go')
local r = models.loop()
return r .. ' ' .. #tasks.fanout('### W', { 1, 2 })
\`\`\`

### W

\`\`\`lua
return models.infer('x')
\`\`\`
`;

/** The model both runtimes use (as source text, to cross into the page and the Worker). */
const MODEL = `async (request) => request.section === 'Main' && request.turn === 1
  ? { content: '', tool_calls: [{ id: 'c1', name: 'grab', arguments: { value: 'v' } }], finish_reason: 'tool_calls' }
  : { content: 'done', finish_reason: 'stop' }`;

const EXPECTED = [
  ['invoke_agent Traced', null, 0],
  ['  section Traced', '0', 0],
  ['  section Main', '0', 0],
  ['    chat', '0', 0],
  ['    execute_tool grab', 'c1', 0],
  ['    chat', '0', 0],
  ['    task ### W', null, 0],
  ['      section W', '0.0', 0],
  ['        chat', '0.0', 0],
  ['    task ### W', null, 0],
  ['      section W', '0.1', 0],
  ['        chat', '0.1', 0],
];

const PAGE = `<!doctype html><meta charset="utf-8"><title>trace</title>
<script type="module">
  import * as inPage from '/pkg/browser.js';
  import * as inWorker from '/pkg/worker-client.js';
  import { sdkTracer } from '/otel.js';
  window.traceRun = async (entry, source) => {
    const runvil = entry === 'worker' ? inWorker : inPage;
    const engine = await runvil.createEngine();
    const { tracer, spans } = sdkTracer();
    const times = [];
    const outcome = await engine.run(source, { tracer, models: { default: ${MODEL} }, onEvent: (e) => times.push(e.time) });
    engine.terminate?.();
    return { outcome, spans: spans(), times };
  };
  document.body.dataset.ready = 'yes';
</script><body></body>`;

const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm' };

const site = await new Promise((resolve) => {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (path === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    if (path === '/otel.js') return void res.writeHead(200, { 'content-type': TYPES['.js'] }).end(bundled);
    if (!path.startsWith('/pkg/') || path.includes('..')) return void res.writeHead(404).end();
    try {
      const body = readFileSync(join(PKG, path.slice('/pkg/'.length)));
      res.writeHead(200, { 'content-type': TYPES[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  server.listen(0, '127.0.0.1', () => {
    resolve({
      url: `http://127.0.0.1:${server.address().port}`,
      close: () => new Promise((done) => {
        server.close(done);
        server.closeAllConnections();
      }),
    });
  });
});

let browser;
const profile = tempProfile();
after(async () => {
  await browser?.close();
  profile.remove();
  await site.close();
});

async function page() {
  if (!browser) {
    browser = await launchChromium(profile.dir);
    browser.errors = [];
    browser.page.on('pageerror', (error) => browser.errors.push(error.message));
    await browser.page.goto(`${site.url}/`);
    await browser.page.waitForSelector('body[data-ready="yes"]', { state: 'attached', timeout: 30_000 });
  }
  return browser;
}

for (const entry of ['page', 'worker']) {
  test(`Chromium (${entry === 'page' ? 'runvil/browser' : 'runvil/worker'}): the SDK records the run's span tree`, { timeout: 120_000 }, async () => {
    const b = await page();
    const result = await b.page.evaluate(([e, source]) => window.traceRun(e, source), [entry, PROMPT]);
    assert.deepEqual(result.outcome, { ok: true, result: 'done 2', seed: result.outcome.seed });
    assert.deepEqual(result.spans, EXPECTED);
    assert.ok(result.times.every((t) => typeof t === 'number' && Math.abs(t - Date.now()) < 120_000));
    assert.deepEqual(b.errors, []);
  });
}

test('workerd (runvil/workerd): the SDK records the run\'s span tree', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'runvil-trace-workerd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'otel.js'), bundled);
  writeFileSync(
    join(dir, 'worker.js'),
    `import { createEngine } from 'runvil/workerd';
import { sdkTracer } from './otel.js';
export default {
  async fetch(request) {
    const engine = await createEngine();
    const { tracer, spans } = sdkTracer();
    const outcome = await engine.run(await request.text(), { tracer, models: { default: ${MODEL} } });
    return Response.json({ outcome, spans: spans() });
  },
};
`,
  );
  const config = writeWorkerdConfig(dir, { modules: { 'worker.js': join(dir, 'worker.js'), 'otel.js': join(dir, 'otel.js') } });
  const server = await serveWorkerd(t, config);
  const response = await fetch(`${server.url}/`, { method: 'POST', body: PROMPT });
  assert.equal(response.status, 200, server.log());
  const { outcome, spans } = await response.json();
  assert.equal(outcome.result, 'done 2', server.log());
  assert.deepEqual(spans, EXPECTED);
});
