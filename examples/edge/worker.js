// The edge example as a Cloudflare Worker (README.md): app.js on the runvil/workerd entry.
import { createEngine, openAIChatModel } from 'runvil/workerd';
import { edgeApp } from './app.js';

const handle = edgeApp({ createEngine, openAIChatModel });

export default {
  async fetch(request, env, ctx) {
    const { response, done } = await handle(request, env);
    ctx.waitUntil(done); // the run goes on after this handler returns the streaming response
    return response;
  },
};
