// The edge example as a Cloudflare Worker (README.md): app.js on the runvil/workerd entry.
import { createEngine, openAIChatModel, durableObjectStore, RunvilStoreObject } from 'runvil/workerd';
import { edgeApp } from './app.js';

// The Durable Object keeping each workspace's files (wrangler.toml binds RUNVIL_STORE to it).
export { RunvilStoreObject };

const handle = edgeApp({
  createEngine,
  openAIChatModel,
  // GET /run?q=...&workspace=<name>: the run's files live in that workspace's object.
  storeFor: (url, env) => (env.RUNVIL_STORE ? durableObjectStore(env.RUNVIL_STORE, url.searchParams.get('workspace') ?? 'default') : undefined),
});

export default {
  async fetch(request, env, ctx) {
    const { response, done } = await handle(request, env);
    ctx.waitUntil(done); // the run goes on after this handler returns the streaming response
    return response;
  },
};
