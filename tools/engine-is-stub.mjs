// Exit 0 when pkg/ holds the TEMPORARY bridge stub (it evaluates the whole source as one Lua
// chunk), 1 when it holds the real engine. A bare `return` chunk is prose to the real engine
// (no section, no Lua block), so only the stub answers it. Delete with the stub.
import { createEngine } from '../pkg/index.js';

export async function engineIsStub(engine) {
  const outcome = await engine.run('return "runvil-stub-probe"', { seed: 1 });
  return outcome.ok && outcome.result === 'runvil-stub-probe';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exit((await engineIsStub(await createEngine())) ? 0 : 1);
}
