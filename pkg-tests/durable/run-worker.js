// The Worker pkg-tests/durable-run.test.mjs runs in workerd: RunvilRunObject owning runs whose
// model is the test's local chat-completions server (it counts calls) and whose Pack is the
// fixture's (pkg-tests/durable/fixture.mjs); workspaces in RunvilStoreObject.
//   POST /runs?id=ID&args=A   (body: the prompt) starts the run ID; answers its status
//   GET  /runs/ID             the run's events and outcome, NDJSON (resumes an unfinished run)
//   GET  /runs/ID/status      its status (resumes an unfinished run)
//   POST /runs/ID/cancel      cancels it
//   GET  /runs/ID/files       the workspace's files and their text
import { RunvilRunObject, RunvilStoreObject, durableObjectStore, openAIChatModel } from 'runvil/workerd';
import { probePack } from './fixture.mjs';

export { RunvilStoreObject };

export class TestRunObject extends RunvilRunObject {
  models() {
    return { default: openAIChatModel({ baseURL: this.env.MODEL_URL, model: 'local', apiKey: 'test' }) };
  }

  packs() {
    return [probePack()];
  }
}

const json = (value, status = 200) => new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts[0] !== 'runs') return new Response('not found\n', { status: 404 });
    const id = parts[1] ?? url.searchParams.get('id');
    const run = env.RUNS.get(env.RUNS.idFromName(id));
    if (request.method === 'POST' && parts.length === 1) {
      return json(await run.start({ id, source: await request.text(), args: url.searchParams.get('args') ?? '' }));
    }
    if (parts[2] === 'status') return json(await run.status());
    if (parts[2] === 'cancel') return json(await run.cancel());
    if (parts[2] === 'journal') return json(await run.journal());
    if (parts[2] === 'files') {
      const store = durableObjectStore(env.RUNVIL_STORE, `run:${id}`);
      const files = {};
      for (const path of await store.list()) files[path] = new TextDecoder().decode(await store.readBytes(path));
      return json(files);
    }
    return run.fetch(request);
  },
};
