// The edge example served by Deno (`deno serve --allow-net --allow-env server.js`) or Bun
// (`bun server.js`): the same app.js on the default entry, configured from the environment.
import { createEngine, openAIChatModel } from 'runvil';
import { edgeApp } from './app.js';

const handle = edgeApp({ createEngine, openAIChatModel });
const environment = globalThis.Deno ? Deno.env.toObject() : process.env;

export default {
  // Bun serves this object itself (on 127.0.0.1:PORT); `deno serve` takes --host and --port instead.
  port: Number(environment.PORT) || 8787,
  hostname: '127.0.0.1',
  async fetch(request) {
    return (await handle(request, environment)).response;
  },
};
