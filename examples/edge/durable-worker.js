// Durable runs on Cloudflare Workers (docs/durable.md): each run is owned by a Durable Object that
// journals it and resumes it if the isolate is lost. wrangler-durable.toml binds the classes.
//   POST /runs?args=...   (body: the prompt)   -> { id, status }
//   GET  /runs/<id>                           -> the run's events and outcome, NDJSON
//   POST /runs/<id>/cancel                    -> { status: 'ended', outcome }
import { RunvilRunObject, RunvilStoreObject, openAIChatModel } from 'runvil/workerd';

export { RunvilStoreObject };

/** The run object: models (and Packs, if any) come from the Worker's env, never from the journal. */
export class RunObject extends RunvilRunObject {
  models() {
    const model = openAIChatModel({
      baseURL: this.env.OPENAI_BASE_URL,
      apiKey: this.env.OPENAI_API_KEY,
      model: this.env.MODEL,
    });
    return { default: model };
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, root, given, action] = url.pathname.split('/');
    if (root !== 'runs') return new Response('not found\n', { status: 404 });
    const id = given || crypto.randomUUID();
    const run = env.RUNS.get(env.RUNS.idFromName(id));
    if (request.method === 'POST' && !given) {
      return Response.json(
        await run.start({ id, source: await request.text(), args: url.searchParams.get('args') ?? '' }),
      );
    }
    if (request.method === 'POST' && action === 'cancel') return Response.json(await run.cancel());
    return run.fetch(request); // attach: NDJSON events, then the outcome (resumes an unfinished run)
  },
};
