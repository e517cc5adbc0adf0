// Control flow and concurrency through the built package: arms really overlap on model latency,
// claims verdicts repeat under seeded latency orderings (real timers), cancellation mid-fanout
// leaves no task running, and the task events pair up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, memoryStore } from '../pkg/index.js';

const engine = await createEngine();

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A model that answers `reply <n>` after a latency the seeded generator picks. */
function latentModel(seed, maxMs) {
  let state = seed * 2654435761 + 1;
  let n = 0;
  return async () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    await sleep(state % (maxMs + 1));
    return { content: `reply ${n++}`, finish_reason: 'stop' };
  };
}

const fanoutPrompt = (worker, after) =>
  `# T\n\n## Main\n\n\`\`\`lua\ntasks.fanout('### W', { 'a', 'b', 'c' })\n${after}\n\`\`\`\n\n### W\n\n\`\`\`lua\nmodels.infer('x')\n${worker}\n\`\`\`\n`;

test('arms overlap: while one arm waits on its model, the others run', async () => {
  const src = `# T\n\n## Main\n\n\`\`\`lua\nlocal c = {}\nfor i = 1, 100 do c[i] = i end\nlocal rs = tasks.fanout('### W', c)\nreturn #rs .. ' ' .. rs[100].text\n\`\`\`\n\n### W\n\n\`\`\`lua\nreturn models.infer('x')\n\`\`\`\n`;
  // Overlap is shown by what is in flight at once, not by timing (the machine is noisy).
  let inFlight = 0;
  let most = 0;
  const model = async () => {
    inFlight++;
    most = Math.max(most, inFlight);
    await sleep(20);
    inFlight--;
    return { content: 'done', finish_reason: 'stop' };
  };
  const outcome = await engine.run(src, { models: { default: model } });
  assert.deepEqual([outcome.ok, outcome.result], [true, '100 done']);
  // Every arm up to the concurrency limit (64) waits on the model at the same time.
  assert.equal(most, 64);
});

test('claims verdicts and final stores repeat under 100 seeded latency orderings', async () => {
  const cases = [
    { src: fanoutPrompt("store.append('log.txt', item)", "return 'no conflict'"), verdict: 'Determinism' },
    { src: fanoutPrompt("store.write('out/' .. sys.index .. '.md', item)\nstore.glob('out/*')", "return 'no conflict'"), verdict: 'Determinism' },
    {
      src: fanoutPrompt(
        "store.write('r/' .. sys.index .. '.md', item)",
        "local p = {}\nfor i = 1, 3 do p[i] = store.read('r/' .. i .. '.md') end\nstore.write('all.md', table.concat(p, ','))\nreturn store.read('all.md')",
      ),
      verdict: 'a,b,c',
    },
  ];
  for (const { src, verdict } of cases) {
    let firstFiles = null;
    for (let seed = 0; seed < 100; seed++) {
      const store = memoryStore({});
      const outcome = await engine.run(src, { store, models: { default: latentModel(seed, 3) } });
      const got = outcome.ok ? outcome.result : outcome.error.kind;
      assert.equal(got, verdict, `seed ${seed}`);
      if (outcome.ok) {
        const snapshot = await store.open();
        // The listing's order is the order writes reached the backend (timing); the contents are
        // what must repeat.
        const files = JSON.stringify(
          snapshot.files.map((f) => [f.path, Buffer.from(f.data).toString()]).sort((a, b) => (a[0] < b[0] ? -1 : 1)),
        );
        firstFiles ??= files;
        assert.equal(files, firstFiles, `seed ${seed}: the final store differs`);
      } else {
        assert.match(outcome.error.message, /^store determinism violation: /);
      }
    }
  }
});

test('cancelling mid-fanout ends the run Cancelled and every started task reports its end', async () => {
  const controller = new AbortController();
  let calls = 0;
  const model = async () => {
    calls++;
    if (calls === 10) controller.abort();
    await sleep(5);
    return { content: 'r', finish_reason: 'stop' };
  };
  const events = [];
  const src = `# T\n\n## Main\n\n\`\`\`lua\nlocal c = {}\nfor i = 1, 40 do c[i] = i end\ntasks.fanout('### W', c)\nreturn 'finished'\n\`\`\`\n\n### W\n\n\`\`\`lua\nstore.write('out/' .. sys.index .. '.txt', models.infer('x'))\n\`\`\`\n`;
  const outcome = await engine.run(src, {
    models: { default: model },
    signal: controller.signal,
    limits: { fanoutConcurrency: 8 },
    onEvent: (e) => events.push(e),
  });
  assert.equal(outcome.ok, false);
  assert.equal(outcome.error.kind, 'Cancelled');
  const started = events.filter((e) => e.type === 'task_started').map((e) => e.id);
  const finished = events.filter((e) => e.type === 'task_finished').map((e) => e.id);
  assert.ok(started.length > 0 && started.length < 40, `${started.length} arms started`);
  assert.deepEqual([...finished].sort(), [...started].sort());
  // The engine is fine afterwards.
  const next = await engine.run('# T\n\n## M\n\n```lua\nreturn call("## N")\n```\n\n## N\n\n```lua\nreturn "next run"\n```\n');
  assert.equal(next.result, 'next run');
});

test('task ids are hierarchical and events carry them', async () => {
  const events = [];
  const src = `# T\n\n## Main\n\n\`\`\`lua\nlocal h = tasks.spawn('## Child')\nlocal r = tasks.join({ h })[1]\nreturn h.id .. ' ' .. r.text\n\`\`\`\n\n## Child\n\n\`\`\`lua\nlocal g = tasks.spawn('### Grand')\nreturn g.id .. ':' .. tasks.join({ g })[1].text\n\`\`\`\n\n### Grand\n\n\`\`\`lua\nreturn 'grand'\n\`\`\`\n`;
  const outcome = await engine.run(src, { onEvent: (e) => events.push(e) });
  assert.equal(outcome.result, '0.0 0.0.0:grand');
  const started = events.filter((e) => e.type === 'task_started').map((e) => [e.id, e.owner, e.target]);
  assert.deepEqual(started, [['0.0', '0', '## Child'], ['0.0.0', '0.0', '### Grand']]);
  const finished = events.filter((e) => e.type === 'task_finished').map((e) => [e.id, e.status]);
  assert.deepEqual(finished, [['0.0.0', 'done'], ['0.0', 'done']]);
});

// Arms that never wait: the fanout's block gives the event loop a turn every 10 ms, and a turn
// can come inside mlua's async-call loop right after the fanout answered Pending, while every
// arm it waits on finishes during the turn. The block must still be woken: it once waited
// forever with nothing left in the event loop (Node then exits with status 13, the run's
// promise never settled), near arm 450 of every run.
test('a fanout of 3,000 arms that never wait ends, through many event-loop turns', async () => {
  const src = `# T\n\n## Main\n\n\`\`\`lua\nlocal c = {}\nfor i = 1, 3000 do c[i] = i end\nlocal rs = tasks.fanout('### W', c)\nreturn #rs .. ' ' .. rs[3000].text\n\`\`\`\n\n### W\n\n\`\`\`lua\nreturn 'ok ' .. sys.index\n\`\`\`\n`;
  let timer;
  const stalled = new Promise((resolve) => {
    timer = setTimeout(() => resolve('stalled'), 60_000);
  });
  for (let i = 0; i < 3; i++) {
    const out = await Promise.race([engine.run(src), stalled]);
    assert.notEqual(out, 'stalled', `run ${i + 1} never ended`);
    assert.deepEqual([out.ok, out.result], [true, '3000 ok 3000'], JSON.stringify(out.error));
  }
  clearTimeout(timer);
});
