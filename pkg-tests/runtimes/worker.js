// workerd smoke worker: POST a prompt source, get the run's result (or "<Kind>: <message>").
// POST /too-large?bytes=N&ceiling=C runs models.infer against a model whose reply carries N bytes
// of text under a C-byte memory ceiling, on an engine of its own, and answers the outcome with how
// far the wasm memory grew (pkg-tests/edge-memory.test.mjs).
import { createEngine } from 'runvil/workerd';

let engine;

async function tooLarge(url) {
  const bytes = Number(url.searchParams.get('bytes'));
  const ceiling = Number(url.searchParams.get('ceiling'));
  const own = await createEngine();
  const memory = own[Symbol.for('runvil.memory')];
  const before = memory();
  const outcome = await own.run("# T\n\n## Main\n\n```lua\nreturn models.infer('x')\n```\n", {
    seed: 1,
    limits: { memoryBytes: ceiling },
    models: { default: async () => ({ content: 'x'.repeat(bytes) }) },
  });
  return Response.json({ outcome, growth: memory() - before });
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/too-large') return tooLarge(url);
    engine ??= await createEngine();
    const outcome = await engine.run(await request.text(), { seed: 1 });
    return outcome.ok
      ? new Response(outcome.result ?? '')
      : new Response(`${outcome.error.kind}: ${outcome.error.message}`, { status: 500 });
  },
};
