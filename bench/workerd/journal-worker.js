// The Worker bench/journal-workerd.mjs runs in workerd: the same prompt run three ways, each a
// request the bench times from outside (workerd's clocks stand still while a request computes).
//   POST /plain              engine.run, no journal
//   POST /record             engine.run with record: true (the journal kept in memory)
//   POST /durable?id=ID      a RunvilRunObject run: every entry put to Durable Object storage
//                            before its answer goes on; answers when the run's outcome streams
// The body is the prompt; the model answers at once.
import { RunvilRunObject, RunvilStoreObject, createEngine } from 'runvil/workerd';

export { RunvilStoreObject };

const model = async () => ({ content: 'ok' });

export class BenchRunObject extends RunvilRunObject {
  models() {
    return { default: model };
  }

  packs() {
    return [];
  }
}

let engine;
const json = (value) => new Response(JSON.stringify(value), { headers: { 'content-type': 'application/json' } });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const source = await request.text();
    if (url.pathname === '/plain' || url.pathname === '/record') {
      engine ??= await createEngine();
      const record = url.pathname === '/record';
      const outcome = await engine.run(source, { models: { default: model }, seed: 1, ...(record ? { record } : {}) });
      return json({ ok: outcome.ok, result: outcome.result, error: outcome.error });
    }
    if (url.pathname === '/durable') {
      const id = url.searchParams.get('id');
      const run = env.RUNS.get(env.RUNS.idFromName(id));
      await run.start({ id, source, args: '' });
      const stream = await run.fetch(new Request(`http://bench/runs/${id}`));
      const last = JSON.parse((await stream.text()).trim().split('\n').at(-1));
      return json({ ok: last.outcome?.ok, result: last.outcome?.result, error: last.outcome?.error });
    }
    return new Response('not found\n', { status: 404 });
  },
};
