// The model adapters name a tool that a role spec's tool_choice gives by its id with the JS copy of
// the engine's wire-name rule (js/models/wire.js, engineWireName; the rule is `wire_name` in
// src/tools/catalog.rs). These tests hold the copy to what the engine itself offers models.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, openAIChatModel, aiSdkModel } from '../pkg/index.js';
import { engineWireName } from '../pkg/models/wire.js';

const engine = await createEngine();
const tool = (name) => ({ name, description: 'A tool.', parameters: { type: 'object', properties: {} }, trust: 'trusted', call: async () => 'ran' });
// Dots and dashes in Pack ids and tool names, an underscore tool, a digit.
const PACKS = [
  { name: 'my.pack', description: 'Dotted.', tools: [tool('a.b')] },
  { name: '-x', description: 'Dashed.', tools: [tool('_')] },
  { name: 'ab-9.x', description: 'Mixed.', tools: [tool('c.d.e'), tool('f_g')] },
];
const IDS = PACKS.flatMap((p) => p.tools.map((t) => `${p.name}/${t.name}`));

/** A prompt offering every tool of PACKS to one models.loop, its role spec `spec` (YAML flow). */
function prompt(spec = '{}') {
  const offer = `{ ${IDS.map((id) => JSON.stringify(id)).join(', ')} }`;
  return `---\nuses: [${PACKS.map((p) => JSON.stringify(p.name)).join(', ')}]\nmodels:\n  default: ${spec}\n---\n# T\n\n## Main\n\n\`\`\`lua\ntools.offer(${offer})\nmessages:user('go')\nreturn models.loop()\n\`\`\`\n`;
}

test('engineWireName gives every tool id the name the engine offers it by', async () => {
  let offered;
  const model = async (request) => {
    offered = request.tools.map((t) => t.name);
    return { content: 'done', finish_reason: 'stop' };
  };
  const outcome = await engine.run(prompt(), { packs: PACKS, models: { default: model } });
  assert.deepEqual({ ok: outcome.ok, result: outcome.result }, { ok: true, result: 'done' }, JSON.stringify(outcome.error));
  assert.deepEqual(offered, IDS.map(engineWireName));
  assert.deepEqual(offered, ['my_pack_a_b', '-x__', 'ab-9_x_c_d_e', 'ab-9_x_f_g']);
});

test('a tool_choice naming a tool by its id picks the tool the engine offered, in both adapters', async () => {
  for (const id of IDS) {
    const bodies = [];
    const fetch = async (url, init) => {
      bodies.push(JSON.parse(init.body));
      const message = { role: 'assistant', content: 'done' };
      return new Response(JSON.stringify({ choices: [{ index: 0, message, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } });
    };
    const openai = openAIChatModel({ baseURL: 'http://127.0.0.1:9/v1', model: 'm', fetch });
    assert.equal((await engine.run(prompt(`{ tool_choice: ${id} }`), { packs: PACKS, models: { default: openai } })).ok, true);
    const [body] = bodies;
    assert.equal(body.tool_choice.function.name, body.tools[IDS.indexOf(id)].function.name, id);

    const calls = [];
    const languageModel = {
      specificationVersion: 'v2', provider: 'test', modelId: 'm', supportedUrls: {},
      async doGenerate(options) {
        calls.push(options);
        return { content: [{ type: 'text', text: 'done' }], finishReason: 'stop', usage: {}, warnings: [] };
      },
      async doStream() { throw new Error('not used'); },
    };
    assert.equal((await engine.run(prompt(`{ tool_choice: ${id} }`), { packs: PACKS, models: { default: aiSdkModel(languageModel) } })).ok, true);
    assert.equal(calls[0].toolChoice.toolName, calls[0].tools[IDS.indexOf(id)].name, id);
  }
});
