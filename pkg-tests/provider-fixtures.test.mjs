// The provider corpus: pkg-tests/fixtures/providers/*.json, one reply shape each, written by us from
// the providers' documented response shapes (never recorded from a live service). Each fixture
// names its provider and what it exercises, the answers the local server gives in order, and the
// expected outcome of a prompt run through openAIChatModel and through aiSdkModel over
// @ai-sdk/openai-compatible of each AI SDK major (the AI SDK path may expect something else, or be
// skipped with a reason). Fixture format: pkg-tests/fixtures/providers/README.md.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createEngine, openAIChatModel, aiSdkModel } from '../pkg/index.js';
import { localProvider } from './helpers.mjs';

/**
 * The AI SDK majors the corpus runs through, each with its own @ai-sdk/openai-compatible (installed
 * side by side: ai-sdk-versions.test.mjs), and the fixture field of its expectation: `aiSdk` from
 * AI SDK 5 on, `aiSdk6` (when given) from 6 on, `aiSdk7` from 7 on. AI SDK 7 needs Node >= 22.
 */
const NODE = Number(process.versions.node.split('.')[0]);
const SDKS = [
  { sdk: 5, compat: '@ai-sdk/openai-compatible', field: 'aiSdk' },
  { sdk: 6, compat: 'openai-compatible6', field: 'aiSdk6' },
  { sdk: 7, compat: 'openai-compatible7', field: 'aiSdk7', node: 22 },
];
for (const s of SDKS) {
  if (s.node && NODE < s.node) s.skip = `AI SDK ${s.sdk} needs Node >= ${s.node}; this is Node ${process.versions.node}: run tools/node24/node_modules/node24/bin/node --test pkg-tests/*.test.mjs`;
  else s.createOpenAICompatible = (await import(s.compat)).createOpenAICompatible;
}

const DIR = new URL('./fixtures/providers/', import.meta.url);
const fixtures = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort()
  .map((file) => ({ file, ...JSON.parse(readFileSync(new URL(file, DIR), 'utf8')) }));

/** The prompts a fixture can name: each ends in what its expectation compares. */
const BODY = {
  infer: 'return models.infer("hello")',
  loop: 'tools.offer_local("grab", "Grab a value", {}, function(args) return "grabbed " .. json.encode(args) end)\nmessages:user("go")\nreturn models.loop()',
  // The reply and the finish reason it ended with, or the error the loop raised.
  'loop-finish': 'messages:user("go")\nlocal ok, r = pcall(models.loop)\nif not ok then return r.kind .. "|" .. r.message end\nreturn r .. "|" .. sys.reply_finish_reason',
  // The reply and the model id it named.
  'loop-model': 'messages:user("hello")\nreturn models.loop() .. "|" .. sys.model',
};
const source = (f, spec) => `${spec ? `---\nmodels:\n  default: ${JSON.stringify(spec)}\n---\n` : ''}# T\n\n## Main\n\n\`\`\`lua\n${BODY[f.prompt]}\n\`\`\`\n`;

const requests = [];
const answers = [];
let provider;
before(async () => {
  provider = await localProvider((body, req, res) => {
    requests.push({ url: req.url, body });
    const a = answers.shift();
    if (!a) {
      res.writeHead(599, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { message: 'the fixture has no answer left' } }));
    }
    if (a.sse) {
      res.writeHead(a.status ?? 200, { 'content-type': 'text/event-stream', ...a.headers });
      for (const e of a.sse) res.write(typeof e === 'string' ? e : `data: ${JSON.stringify(e)}\n\n`);
      return res.end(a.done === false ? '' : 'data: [DONE]\n\n');
    }
    res.writeHead(a.status ?? 200, { 'content-type': typeof a.body === 'string' ? 'text/html; charset=utf-8' : 'application/json', ...a.headers });
    res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
  });
});
after(() => provider.close());

const engine = await createEngine();

/** Every key of `expected` is in `actual` with that value (recursively); arrays match element by element. */
function assertSubset(actual, expected, path) {
  if (expected === null || typeof expected !== 'object') return assert.deepEqual(actual, expected, path);
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual) && actual.length === expected.length, `${path}: ${JSON.stringify(actual)} is not an array of ${expected.length}`);
    return expected.forEach((e, i) => assertSubset(actual[i], e, `${path}[${i}]`));
  }
  assert.ok(actual !== null && typeof actual === 'object', `${path}: ${JSON.stringify(actual)} is not an object`);
  for (const [key, value] of Object.entries(expected)) assertSubset(actual[key], value, `${path}.${key}`);
}

async function check(f, model, expect, spec) {
  requests.length = 0;
  answers.length = 0;
  answers.push(...structuredClone(f.responses));
  const events = [];
  const outcome = await engine.run(source(f, spec), { models: { default: model }, onEvent: (e) => events.push(e) });
  const where = `${f.file}`;
  if ('result' in expect) assert.equal(outcome.result, expect.result, `${where}: ${JSON.stringify(outcome.error)}`);
  // The error carries the line of the block it ended (the first code line after the fence).
  const blockLine = source(f, spec).split('\n').indexOf('```lua') + 2;
  if (expect.error) assert.deepEqual(outcome.error, { section: '## Main', line: blockLine, ...expect.error }, where);
  if (expect.errorMatch) {
    assert.equal(outcome.error?.kind, 'Model', `${where}: ${JSON.stringify(outcome)}`);
    assert.match(outcome.error.message, new RegExp(expect.errorMatch), where);
  }
  assert.equal(requests.length, expect.requests ?? f.responses.length, `${where}: requests made`);
  for (const [i, sent] of (expect.sent ?? []).entries()) if (sent) assertSubset(requests[i], sent, `${where} request ${i}`);
  if ('usage' in expect) assert.deepEqual(outcome.usage, expect.usage ?? undefined, `${where}: usage`);
  if (expect.deltas) assert.deepEqual(events.filter((e) => e.event === 'model_delta').map((e) => e.text ?? { reasoning: e.reasoning }), expect.deltas, `${where}: deltas`);
  if (expect.retries !== undefined) assert.equal(events.filter((e) => e.event === 'model_retry').length, expect.retries, `${where}: retries`);
}

test('every fixture says which provider it stands for, what it exercises and what to expect', () => {
  assert.ok(fixtures.length >= 20, `${fixtures.length} fixtures`);
  for (const f of fixtures) {
    assert.match(f.file, /^[a-z0-9]+(-[a-z0-9]+)+\.json$/, f.file);
    for (const key of ['provider', 'exercises', 'source']) assert.equal(typeof f[key], 'string', `${f.file}: ${key}`);
    assert.ok(BODY[f.prompt], `${f.file}: prompt ${f.prompt}`);
    assert.ok(Array.isArray(f.responses) && f.responses.length, `${f.file}: responses`);
    assert.ok(f.expect && typeof f.expect === 'object', `${f.file}: expect`);
    for (const { field } of SDKS) {
      const ai = f[field];
      if (field !== 'aiSdk' && ai === undefined) continue; // as AI SDK 5
      assert.ok(ai === 'same' || (ai && typeof ai === 'object'), `${f.file}: ${field} is "same", an expectation or { skip }`);
    }
  }
});

for (const f of fixtures) {
  const options = { retryDelayMs: 1, ...f.options };
  test(`${f.file} (${f.provider}) through openAIChatModel: ${f.exercises}`, async () => {
    const baseURL = provider.baseURL + (f.query ? `/?${f.query}` : '');
    await check(f, openAIChatModel({ baseURL, apiKey: 'sk-fixture', model: f.model ?? 'test-model', stream: f.stream ?? false, ...options }), f.expect, f.spec);
  });
  for (const [i, s] of SDKS.entries()) {
    const own = SDKS.slice(0, i + 1).map(({ field }) => f[field]).findLast((e) => e !== undefined);
    const ai = own === 'same' ? f.expect : own;
    test(`${f.file} (${f.provider}) through aiSdkModel + openai-compatible (AI SDK ${s.sdk})`, { skip: s.skip ?? ai.skip }, async () => {
      const sdk = s.createOpenAICompatible({ name: 'fixture', baseURL: provider.baseURL, apiKey: 'sk-fixture', includeUsage: true, ...(f.query && { queryParams: Object.fromEntries(new URLSearchParams(f.query)) }) });
      await check(f, aiSdkModel(sdk.chatModel(f.model ?? 'test-model'), { stream: f.stream ?? false, ...options }), ai, ai.spec ?? f.spec);
    });
  }
}
