// workerd smoke worker: POST a prompt source, get the run's result (or "<Kind>: <message>").
import { createEngine } from './pkg/workerd.js';

let engine;

export default {
  async fetch(request) {
    engine ??= await createEngine();
    const outcome = await engine.run(await request.text(), { seed: 1 });
    return outcome.ok
      ? new Response(outcome.result ?? '')
      : new Response(`${outcome.error.kind}: ${outcome.error.message}`, { status: 500 });
  },
};
