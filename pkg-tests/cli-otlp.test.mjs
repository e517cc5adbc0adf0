// `runvil run --otlp URL`: the run's spans go to a collector as one OTLP/HTTP JSON request when the
// run ends (a local HTTP server stands in for the collector and checks the body's shape); a
// collector that cannot be reached is a warning, never a different exit status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { PKG, freePort, luaPrompt } from './helpers.mjs';
import { createEngine, scriptedModel } from '../pkg/index.js';

const CLI = join(PKG, 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'runvil-cli-otlp-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function file(name, text) {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function cli(args, env = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout, stderr });
    });
  });
}

/** A collector: every request's method, path, headers and JSON body; answers `status`. */
async function collector(status = 200) {
  const requests = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => {
      text += c;
    });
    req.on('end', () => {
      requests.push({ method: req.method, path: req.url, headers: req.headers, body: JSON.parse(text) });
      res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{}' : '{"error":"no"}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, requests, close: () => new Promise((r) => server.close(r)) };
}

const toolPrompt = file(
  'tool.md',
  luaPrompt('tools.offer_local("grab", "Grab a value", {}, function() return "g" end)\nmessages:user("go")\nreturn models.loop()'),
);
const toolScript = file(
  'tool.replies.json',
  JSON.stringify([
    { content: '', tool_calls: [{ id: 'c1', name: 'grab', arguments: {} }], finish_reason: 'tool_calls', usage: { input_tokens: 7, output_tokens: 2 } },
    'done',
  ]),
);

const HEX = (n) => new RegExp(`^[0-9a-f]{${n}}$`);
const NANOS = /^[1-9][0-9]{18}$/;

/** An OTLP attribute list as a plain object (AnyValue unwrapped), checking each value has one kind. */
function attributes(list) {
  assert.ok(Array.isArray(list));
  return Object.fromEntries(
    list.map(({ key, value }) => {
      assert.equal(typeof key, 'string');
      const kinds = Object.keys(value);
      assert.equal(kinds.length, 1, `${key}: ${JSON.stringify(value)}`);
      const [kind] = kinds;
      if (kind === 'intValue') {
        assert.match(value.intValue, /^-?[0-9]+$/);
        return [key, Number(value.intValue)];
      }
      if (kind === 'arrayValue') return [key, value.arrayValue.values.map((v) => Object.values(v)[0])];
      assert.ok(['stringValue', 'boolValue', 'doubleValue'].includes(kind), kind);
      return [key, value[kind]];
    }),
  );
}

/** The spans of an ExportTraceServiceRequest, its shape checked on the way. */
function spansOf(body) {
  assert.deepEqual(Object.keys(body), ['resourceSpans']);
  assert.equal(body.resourceSpans.length, 1);
  const [rs] = body.resourceSpans;
  const resource = attributes(rs.resource.attributes);
  assert.equal(typeof resource['service.name'], 'string');
  assert.equal(rs.scopeSpans.length, 1);
  assert.equal(rs.scopeSpans[0].scope.name, 'runvil');
  const spans = rs.scopeSpans[0].spans;
  const traceIds = new Set();
  for (const s of spans) {
    assert.match(s.traceId, HEX(32));
    assert.match(s.spanId, HEX(16));
    if ('parentSpanId' in s) assert.match(s.parentSpanId, HEX(16));
    assert.match(s.startTimeUnixNano, NANOS);
    assert.match(s.endTimeUnixNano, NANOS);
    assert.ok(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano), s.name);
    assert.ok([1, 3].includes(s.kind), `${s.name} kind ${s.kind}`);
    assert.ok([0, 1, 2].includes(s.status.code));
    traceIds.add(s.traceId);
  }
  assert.equal(traceIds.size, 1, 'one trace');
  return spans.map((s) => ({ ...s, attributes: attributes(s.attributes) }));
}

test('--otlp URL posts the run\'s span tree as OTLP/HTTP JSON to URL/v1/traces', async () => {
  const c = await collector();
  try {
    const r = await cli(['run', toolPrompt, '--model-script', toolScript, '--otlp', c.url], {
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-team=lab',
    });
    assert.deepEqual(r, { code: 0, stdout: 'done\n', stderr: '' });
    assert.equal(c.requests.length, 1);
    const [req] = c.requests;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/v1/traces');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.equal(req.headers.authorization, 'Bearer abc');
    assert.equal(req.headers['x-team'], 'lab');
    const spans = spansOf(req.body);
    assert.equal(attributes(req.body.resourceSpans[0].resource.attributes)['service.name'], 'runvil');
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const line = (s) => {
      let depth = 0;
      for (let p = s.parentSpanId; p; p = byId.get(p)?.parentSpanId) depth++;
      return `${'  '.repeat(depth)}${s.name}`;
    };
    assert.deepEqual(spans.map(line), [
      'invoke_agent Test',
      '  section Test',
      '  section Main',
      '    chat',
      '    execute_tool grab',
      '    chat',
    ]);
    const [root, , main, chat, tool] = spans;
    assert.equal('parentSpanId' in root, false);
    assert.equal(root.attributes['gen_ai.operation.name'], 'invoke_agent');
    assert.equal(root.attributes['gen_ai.agent.name'], 'Test');
    assert.equal(main.attributes['runvil.entry'], 1);
    assert.equal(chat.kind, 3);
    assert.equal(chat.attributes['gen_ai.usage.input_tokens'], 7);
    assert.deepEqual(chat.attributes['gen_ai.response.finish_reasons'], ['tool_calls']);
    assert.equal(tool.kind, 1);
    assert.equal(tool.attributes['gen_ai.tool.call.id'], 'c1');
    assert.equal(root.status.code, 0);
  } finally {
    await c.close();
  }
});

/**
 * What an export says beyond ids and times: per span, its name, its parent's name, kind, status
 * code, and each attribute's key, value kind and value (an intValue as a number: the SDK writes
 * numbers, runvil the canonical decimal strings; OTLP JSON readers take both).
 */
function meaning(body) {
  const spans = body.resourceSpans[0].scopeSpans[0].spans;
  const names = new Map(spans.map((s) => [s.spanId, s.name]));
  return spans
    .map((s) => ({
      name: s.name,
      parent: names.get(s.parentSpanId) ?? null,
      kind: s.kind,
      status: s.status.code,
      attributes: s.attributes
        .map(({ key, value }) => {
          const [kind] = Object.keys(value);
          return [key, kind, kind === 'intValue' ? Number(value.intValue) : JSON.stringify(value[kind])];
        })
        .sort((a, b) => a[0].localeCompare(b[0])),
    }))
    .sort((a, b) => `${a.parent}/${a.name}`.localeCompare(`${b.parent}/${b.name}`) || a.attributes.length - b.attributes.length);
}

test("the export says what the OpenTelemetry SDK's own OTLP JSON encoder says for the same run", async () => {
  const c = await collector();
  let ours;
  try {
    const r = await cli(['run', toolPrompt, '--model-script', toolScript, '--otlp', c.url, '--seed', '9']);
    assert.equal(r.code, 0, r.stderr);
    ours = c.requests[0].body;
  } finally {
    await c.close();
  }
  // The same run in this process, traced by the SDK and encoded by @opentelemetry/otlp-transformer.
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const engine = await createEngine();
  const outcome = await engine.run(readFileSync(toolPrompt, 'utf8'), {
    seed: 9,
    tracer: provider.getTracer('runvil'),
    models: { default: scriptedModel(JSON.parse(readFileSync(toolScript, 'utf8'))) },
  });
  assert.equal(outcome.result, 'done');
  const theirs = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans())));
  assert.deepEqual(meaning(ours), meaning(theirs));
  // Every field runvil writes is one the SDK writes, with a value of the same JSON type.
  const sdkSpan = theirs.resourceSpans[0].scopeSpans[0].spans.find((s) => s.parentSpanId);
  for (const span of ours.resourceSpans[0].scopeSpans[0].spans) {
    for (const [key, value] of Object.entries(span)) {
      assert.ok(key in sdkSpan, `${key} is not an OTLP span field`);
      assert.equal(typeof value, typeof sdkSpan[key], key);
    }
  }
});

test('a failed run is exported too, its run span ERROR; a /v1/traces URL is used as it is', async () => {
  const c = await collector();
  try {
    const fail = file('fail.md', luaPrompt('error("boom")'));
    const r = await cli(['run', fail, '--otlp', `${c.url}/v1/traces`], { OTEL_SERVICE_NAME: 'trips' });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `Lua: ## Main:6: boom\n  at ${fail}:6 (## Main)\n`);
    assert.equal(c.requests[0].path, '/v1/traces');
    const resource = attributes(c.requests[0].body.resourceSpans[0].resource.attributes);
    assert.equal(resource['service.name'], 'trips');
    const spans = spansOf(c.requests[0].body);
    assert.deepEqual(spans[0].status, { code: 2, message: '## Main:6: boom' });
    assert.equal(spans[0].attributes['error.type'], 'Lua');
  } finally {
    await c.close();
  }
});

test('a collector that cannot be reached, or refuses, is a warning; the exit status is the run\'s', async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const ok = await cli(['run', toolPrompt, '--model-script', toolScript, '--otlp', url]);
  assert.equal(ok.code, 0);
  assert.equal(ok.stdout, 'done\n');
  assert.match(ok.stderr, new RegExp(`^runvil: warning: the trace was not exported to ${url}/v1/traces: fetch failed`));
  const failed = await cli(['run', file('f.md', luaPrompt('error("x")')), '--otlp', url]);
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /^runvil: warning: the trace was not exported/);
  const c = await collector(503);
  try {
    const refused = await cli(['run', toolPrompt, '--model-script', toolScript, '--otlp', c.url]);
    assert.equal(refused.code, 0);
    assert.equal(refused.stderr, `runvil: warning: the trace was not exported to ${c.url}/v1/traces: the collector answered 503: {"error":"no"}\n`);
  } finally {
    await c.close();
  }
});

test('--otlp needs an http(s) URL', async () => {
  for (const bad of ['collector:4318', 'ftp://x/']) {
    const r = await cli(['run', toolPrompt, '--otlp', bad]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, new RegExp(`^runvil: --otlp needs an http\\(s\\) URL \\(got '${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}'\\)`));
  }
});
