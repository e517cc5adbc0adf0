// JSON values keep their shape across the boundary, since a prompt passes data between JS hosts
// and Lua and must get back what it sent: a structured tool's output crosses JS -> Lua, is stored
// in var, and comes back Lua -> JS through json.encode, unchanged. Values are drawn from a seeded generator so a failure reproduces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../pkg/index.js';
import { luaPrompt, mulberry32 } from './helpers.mjs';

const KEYS = ['a', 'b', '1', '2', '10', 'é', 'key with space', '', '日本', 'x"y', 'n'];
const STRINGS = ['', 'plain', 'é ü 日本 🎉', 'quote " and \\ backslash', 'line\nbreak\ttab', '{"not":"json"}', '0'];

function value(r, depth) {
  const pick = Math.floor(r() * (depth > 3 ? 6 : 9));
  switch (pick) {
    case 0: return null;
    case 1: return r() < 0.5;
    case 2: return Math.floor((r() - 0.5) * 2 ** 53);
    // Floats with short mantissas (eighths, scaled by powers of two); long mantissas have their
    // own test below.
    case 3: return (Math.floor((r() - 0.5) * 4096) / 8) * 2 ** Math.floor(r() * 40 - 20);
    case 4: return STRINGS[Math.floor(r() * STRINGS.length)];
    case 5: return Math.floor(r() * 3) - 1;
    case 6: return [];
    case 7: return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
    default: {
      const o = {};
      const n = Math.floor(r() * 4);
      for (let i = 0; i < n; i++) o[KEYS[Math.floor(r() * KEYS.length)]] = value(r, depth + 1);
      return o;
    }
  }
}

test('structured tool output survives JS -> Lua -> var -> JS unchanged', async () => {
  const r = mulberry32(20261130);
  const values = Array.from({ length: 300 }, () => value(r, 0));
  // Shapes that once lost theirs: empty containers, nested, and mixed with data.
  values.push({ items: [] }, { a: {}, b: [[]], c: [{}] }, [[], {}, [[]]], { list: [1, 2.5, -0.125], n: null });
  const engine = await createEngine();
  const pack = {
    name: 'rt',
    description: 'round trips',
    tools: [{
      name: 'value',
      description: 'returns the value at index i',
      parameters: { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] },
      trust: 'trusted',
      output: 'structured',
      // Wrapped: a structured tool's string answer is JSON text by contract, so scalars travel
      // inside an object.
      call: ({ i }) => ({ v: values[i] }),
    }],
  };
  const lua = `local out = {}
for i = 0, ${values.length - 1} do
  local v = tools.call('rt/value', { i = i }).v
  var.v = v
  out[#out + 1] = json.encode(var.v) .. '\\n' .. json.encode(v)
end
return table.concat(out, '\\n')`;
  const outcome = await engine.run(`---\nuses: [rt]\n---\n${luaPrompt(lua)}`, { packs: [pack] });
  assert.equal(outcome.ok, true, JSON.stringify(outcome.error));
  const lines = outcome.result.split('\n');
  assert.equal(lines.length, values.length * 2);
  values.forEach((v, i) => {
    assert.deepStrictEqual(JSON.parse(lines[2 * i]), v, `value ${i} through var: ${JSON.stringify(v)}`);
    assert.deepStrictEqual(JSON.parse(lines[2 * i + 1]), v, `value ${i}: ${JSON.stringify(v)}`);
  });
});

// Every finite double crosses JS -> Lua -> JS exactly: JSON text from JSON.stringify is parsed to the
// nearest double (serde_json's float_roundtrip feature; without it long mantissas came back one unit
// in the last place off), and json.encode writes digits that JSON.parse reads back as the same
// double. -0 is the one exception, and it is JSON's own: JSON.stringify(-0) is "0".
test('floats with long mantissas survive JS -> Lua -> JS', async () => {
  const r = mulberry32(20261201);
  const view = new DataView(new ArrayBuffer(8));
  const values = [-1.75916968844831e-9, 0.1 + 0.2, 1 / 3, 123456.789012345, 9.007199254740993e15, -9.223372032337203e85,
    Number.MIN_VALUE, -Number.MIN_VALUE, 2.2250738585072014e-308, 2.225073858507201e-308, Number.MAX_VALUE, -Number.MAX_VALUE,
    Number.EPSILON, 1e21, 1e22, 1e23, 2 ** 53, 2 ** 64, 2 ** 63, -(2 ** 63)];
  // Random bit patterns (every exponent), then random 17-digit decimals near 1.
  while (values.length < 2000) {
    view.setUint32(0, Math.floor(r() * 2 ** 32));
    view.setUint32(4, Math.floor(r() * 2 ** 32));
    const x = view.getFloat64(0);
    if (Number.isFinite(x) && !Object.is(x, -0)) values.push(x);
  }
  while (values.length < 4000) values.push(Number(`${Math.floor(r() * 1e17)}e${Math.floor(r() * 61) - 30}`));
  const engine = await createEngine();
  const pack = {
    name: 'rt', description: 'round trips',
    tools: [{ name: 'value', description: 'the values', parameters: { type: 'object', properties: {} }, trust: 'trusted', output: 'structured', call: () => values }],
  };
  const lua = "local v = tools.call('rt/value')\nvar.v = v\nreturn json.encode(v) .. '\\n' .. json.encode(var.v)";
  const outcome = await engine.run(`---\nuses: [rt]\n---\n${luaPrompt(lua)}`, { packs: [pack] });
  assert.equal(outcome.ok, true, JSON.stringify(outcome.error));
  const [direct, throughVar] = outcome.result.split('\n').map((line) => JSON.parse(line));
  values.forEach((x, i) => {
    assert.ok(Object.is(direct[i], x), `value ${i}: ${x} came back as ${direct[i]}`);
    assert.ok(Object.is(throughVar[i], x), `value ${i} through var: ${x} came back as ${throughVar[i]}`);
  });
});
