// Durability under faults (docs/reliability.md): a store backend that fails at seeded points
// (throws, rejects, never settles, quota errors, applies a batch and then rejects) and runs
// aborted at seeded points. After every trial the backend holds a prefix of the batches the run
// handed it (so no file is torn: every file is as some complete batch left it), nothing is
// committed after a commit failed, a run that succeeded left exactly what a clean run leaves,
// and a run that failed reports Vfs or Cancelled. docs/store.md describes the bridge and its
// batching (a block's changes go out when it ends, however it ended).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../pkg/index.js';
import { mulberry32 } from './helpers.mjs';

const engine = await createEngine();
const TRIALS = 1000;

// Five blocks, five batches: block 3 queues 300 changes, which go out as 256 + 44; block 5 only reads. `seed.txt` is
// listed by open() without data, so the first read of it is a backend read().
const PROMPT = `# Faults

## Main

\`\`\`lua
store.write('a.txt', 'one')
store.append('seed.txt', '+1')
\`\`\`

\`\`\`lua
store.append('a.txt', ' two')
store.write('d/b.txt', 'bee')
\`\`\`

\`\`\`lua
for i = 1, 300 do store.write('many/' .. i .. '.txt', 'n' .. i) end
\`\`\`

\`\`\`lua
store.delete('d/b.txt')
store.append('a.txt', ' three')
\`\`\`

\`\`\`lua
return store.read('a.txt') .. '|' .. store.read('seed.txt')
\`\`\`
`;
const SEED_FILES = { 'seed.txt': 'seeded' };

const text = (data) => (typeof data === 'string' ? data : new TextDecoder().decode(data));

function apply(files, batch) {
  for (const c of batch) {
    if (c.op === 'write') files.set(c.path, text(c.data));
    else if (c.op === 'delete') files.delete(c.path);
  }
}

const snapshot = (files) => JSON.stringify([...files].sort(([a], [b]) => (a < b ? -1 : 1)));

// The states a correct engine may leave: the seed files plus the first k batches of a clean run.
async function referenceStates() {
  const files = new Map(Object.entries(SEED_FILES));
  const batches = [];
  const store = {
    open: async () => ({ files: Object.keys(SEED_FILES).map((path) => ({ path })) }),
    read: async (path) => SEED_FILES[path],
    commit: async (changes) => { batches.push(changes.map((c) => ({ ...c }))); },
  };
  const o = await engine.run(PROMPT, { store });
  assert.deepEqual([o.ok, o.result], [true, 'one two three|seeded+1']);
  const states = [snapshot(files)];
  for (const b of batches) {
    apply(files, b);
    states.push(snapshot(files));
  }
  return { states, batches: batches.length };
}

const FAULTS = ['throw', 'reject', 'hang', 'quota', 'applied-then-reject', 'non-error'];

// A backend that answers well until its planned fault; it applies a batch all at once, in order.
function faultyStore(random, controller, log) {
  const files = new Map(Object.entries(SEED_FILES));
  const handed = []; // every batch the engine handed to commit(), in order
  let commitFailed = false;
  let calls = 0;
  const faultAt = Math.floor(random() * 10); // the call that fails (0: open); past the run: none
  const fault = FAULTS[Math.floor(random() * FAULTS.length)];
  const abortAtCall = random() < 0.3 ? Math.floor(random() * 10) : -1;
  function step(name, work) {
    const n = calls++;
    if (n === abortAtCall) controller.abort();
    if (n !== faultAt) return work();
    log.fault = `${fault} in ${name} (call ${n})`;
    switch (fault) {
      case 'throw': throw new Error(`${name} exploded`);
      case 'reject': return Promise.reject(new Error(`${name} rejected`));
      case 'hang':
        setTimeout(() => controller.abort(), 1);
        return new Promise(() => {});
      case 'quota': {
        const e = new Error('The quota has been exceeded.');
        e.name = 'QuotaExceededError';
        return Promise.reject(e);
      }
      case 'applied-then-reject':
        return Promise.resolve(work()).then(() => { throw new Error(`${name} acknowledged nothing`); });
      case 'non-error': return Promise.reject({ code: 507 });
    }
  }
  const store = {
    open: () => step('open', async () => ({ files: Object.keys(SEED_FILES).map((path) => ({ path })) })),
    read: (path) => step('read', async () => SEED_FILES[path]),
    commit: (changes) => {
      assert.ok(!commitFailed, `${log.fault}: commit() called again after a commit failed`);
      handed.push(changes.map((c) => ({ ...c })));
      try {
        const p = step('commit', async () => apply(files, changes));
        if (log.fault?.startsWith(`${fault} in commit`)) commitFailed = true;
        return p;
      } catch (e) {
        commitFailed = true;
        throw e;
      }
    },
  };
  return { store, files, handed };
}

test(`${TRIALS} seeded trials: the backend holds a prefix of the run's batches`, async () => {
  const { states, batches } = await referenceStates();
  assert.equal(batches, 5);
  const seen = { ok: 0, Vfs: 0, Cancelled: 0 };
  const prefixes = new Array(states.length).fill(0);
  for (let trial = 1; trial <= TRIALS; trial++) {
    const random = mulberry32(trial);
    const controller = new AbortController();
    const log = {};
    const { store, files, handed } = faultyStore(random, controller, log);
    // Some runs are also aborted on a timer, wherever the run happens to be.
    if (random() < 0.2) setTimeout(() => controller.abort(), Math.floor(random() * 3));
    const o = await engine.run(PROMPT, { store, signal: controller.signal });
    const where = `trial ${trial} (${log.fault ?? 'no fault'}${controller.signal.aborted ? ', aborted' : ''})`;
    if (o.ok) {
      assert.equal(o.result, 'one two three|seeded+1', where);
      seen.ok++;
    } else {
      assert.ok(['Vfs', 'Cancelled'].includes(o.error.kind), `${where}: ${o.error.kind}: ${o.error.message}`);
      if (o.error.kind === 'Vfs') assert.match(o.error.message, /^store backend failure: /, where);
      else assert.equal(o.error.message, 'the run was cancelled', where);
      seen[o.error.kind]++;
    }
    const own = new Map(Object.entries(SEED_FILES));
    const ownStates = [snapshot(own)];
    for (const b of handed) {
      apply(own, b);
      ownStates.push(snapshot(own));
    }
    const k = ownStates.indexOf(snapshot(files));
    assert.ok(k >= 0, `${where}: the backend holds something that is not a prefix of the batches handed to it`);
    if (o.ok) assert.equal(snapshot(files), states[batches], `${where}: a successful run left what a clean run leaves`);
    prefixes[Math.min(k, batches)]++;
  }
  // Every kind of ending and every prefix length happened, so the trials covered the run.
  assert.ok(seen.ok > 0 && seen.Vfs > 0 && seen.Cancelled > 0, JSON.stringify(seen));
  assert.ok(prefixes.every((n) => n > 0), JSON.stringify(prefixes));
  console.log(`# fault trials: ${JSON.stringify(seen)}; prefix lengths 0..${batches}: ${JSON.stringify(prefixes)}`);
  // The engine is alive and the next run is correct (a fresh memory store: no seed.txt).
  assert.equal((await engine.run(PROMPT)).result, 'one two three|+1');
});
