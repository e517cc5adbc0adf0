// Isolation of section entries through the built package (tests/isolation.rs natively): every
// fanout arm and every sequential section entry sees a pristine Lua state, whatever the entries
// before it did to theirs. The prompt (fixtures/isolation.md) has each entry observe its state,
// then pollute it every way a prompt can; arms that fail or are cancelled pollute too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createEngine } from '../pkg/index.js';

const engine = await createEngine();
const PROMPT = readFileSync(new URL('./fixtures/isolation.md', import.meta.url), 'utf8');
const CLEAN = PROMPT.replace('local POLLUTE = true', 'local POLLUTE = false');
// The same ceiling and budget as the native test: one observation fits, two entries' worth do not.
const limits = { memoryBytes: 4 << 20, instructions: 1_400_000 };
const PRISTINE =
  "nil|nil|7|ABC|abab|a,b|2|9223372036854775807|Hi|table|true|nil|2|nil|nil|nil|[1,2]|nil|function|nil|" +
  "function|nil|models has no field 'nope' (its fields: compact, default, get, infer, loop, need, use)|function|function|" +
  'function|function|function|false|lua|error value|true|nil|40';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A model answering after seeded latencies (0-4 ms), which reorder the arms. */
function latentModel(seed) {
  let state = seed * 2654435761 + 1;
  return async () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    await sleep(state % 5);
    return { content: 'r', finish_reason: 'stop' };
  };
}

async function observations(src, { seed = 7, latencySeed = 1, fanoutConcurrency } = {}) {
  const outcome = await engine.run(src, {
    seed,
    models: { default: latentModel(latencySeed) },
    limits: fanoutConcurrency ? { ...limits, fanoutConcurrency } : limits,
  });
  assert.equal(outcome.ok, true, JSON.stringify(outcome.error));
  const o = JSON.parse(outcome.result);
  return { ...o, seen: [...o.arms, ...o.seq] };
}

test('every arm and section entry sees a pristine state', async () => {
  assert.notEqual(CLEAN, PROMPT);
  const o = await observations(PROMPT);
  assert.equal(o.seen.length, 28);
  for (const [i, s] of o.seen.entries()) {
    const [fixed, seeded, keys] = s.split('#');
    assert.equal(fixed, PRISTINE, `observation ${i}`);
    assert.equal(seeded.split(' ').length, 3, `observation ${i}: ${s}`);
    assert.equal(new Set(keys.split(',')).size, 40, `observation ${i}: ${s}`);
  }
  assert.match(o.bad, /^false tasks\.fanout: arm 2 \(item "fail"\) failed: bad arm/);
});

test('what an entry sees does not depend on what ran before it', async () => {
  for (const setup of [{ latencySeed: 1 }, { latencySeed: 2, fanoutConcurrency: 1 }, { latencySeed: 3, fanoutConcurrency: 3 }]) {
    const polluted = await observations(PROMPT, setup);
    const clean = await observations(CLEAN, setup);
    assert.deepEqual(polluted.seen, clean.seen, JSON.stringify(setup));
  }
  // Each entry has a math.random sequence of its own (the pairs order, which the comparison
  // above includes, may repeat).
  const clean = await observations(CLEAN);
  assert.equal(new Set(clean.seen.map((s) => s.split('#')[1])).size, clean.seen.length);
});

test('the probes detect state left behind in one state', async () => {
  const at = PROMPT.indexOf('\n## Main');
  const withMain = (lua) => `${PROMPT.slice(0, at)}\n## Main\n\n\`\`\`lua\n${lua}\n\`\`\`\n`;
  const same = await engine.run(withMain("pollute()\nlocal ok, seen = pcall(observe)\nreturn tostring(ok) .. ' ' .. tostring(seen)"), { limits });
  assert.equal(same.ok, true);
  assert.ok(!same.result.includes(PRISTINE), same.result);
  const twice = await engine.run(withMain('observe()\nobserve()'), { limits });
  assert.equal(twice.error?.kind, 'Limit');
  assert.match(twice.error.message, /^instruction budget/);
  const kept = await engine.run(withMain("kept = {}\nfor i = 1, 12000 do kept[i] = string.rep('g', 200) .. i end\nobserve()"), { limits });
  assert.equal(kept.error?.kind, 'Limit');
  assert.match(kept.error.message, /memory ceiling/);
});

// table.sort's randomized pivot and math.randomseed() draw from the arm's own state
// (fixtures/sort-seed.md): an arm's draws do not depend on which arms were built before it ran.
const SORT_PROMPT = readFileSync(new URL('./fixtures/sort-seed.md', import.meta.url), 'utf8');

async function sortDraws(arms, { seed = 7, latencySeed = 1, fanoutConcurrency } = {}) {
  const outcome = await engine.run(SORT_PROMPT, {
    seed,
    args: String(arms),
    models: { default: latentModel(latencySeed) },
    limits: fanoutConcurrency ? { fanoutConcurrency } : {},
  });
  assert.equal(outcome.ok, true, JSON.stringify(outcome.error));
  return JSON.parse(outcome.result);
}

test('an arm draws from its own state seed, whichever arms ran around it', async () => {
  const alone = await sortDraws(1);
  const oneAtATime = await sortDraws(6, { fanoutConcurrency: 1 });
  assert.equal(oneAtATime[0], alone[0]);
  // Every arm has its own seed, so its own adversary order and random value; the equal-keys
  // sort never draws.
  const field = (i) => new Set(oneAtATime.map((s) => s.split('#')[i])).size;
  assert.deepEqual([field(0), field(1), field(2)], [6, 1, 6]);
  for (const setup of [{ latencySeed: 1 }, { latencySeed: 2 }, { latencySeed: 3, fanoutConcurrency: 3 }]) {
    assert.deepEqual(await sortDraws(6, setup), oneAtATime, JSON.stringify(setup));
  }
});
