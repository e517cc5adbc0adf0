// A Cloudflare Worker that runs examples/edge/prompt.md once per request and streams the run's
// events to the client as Server-Sent Events.
//
//   GET /run?q=<question>  ->  text/event-stream: one `event: <name>` per run event (its JSON as
//                              data), then `event: outcome` with { ok, result | error, seed }
//
// The model is any OpenAI-compatible chat-completions server (OPENAI_BASE_URL, OPENAI_API_KEY and
// MODEL from the Worker's environment); the Pack `facts` is served by the Worker itself.
import { createEngine, openAIChatModel } from 'runvil/workerd';
import prompt from './prompt.md';

/** One engine per isolate: compiling the module is the expensive part, runs are cheap. */
let engine;

const FACTS = {
  workerd: 'workerd is the open-source runtime behind Cloudflare Workers.',
  runvil: 'Runvil runs Markdown prompts with Lua blocks, compiled to WebAssembly.',
};

const facts = {
  name: 'facts',
  description: 'Short facts about a few topics.',
  tools: [{
    name: 'lookup',
    description: 'The fact known about a topic.',
    parameters: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
    trust: 'trusted',
    call: ({ topic }) => FACTS[String(topic).toLowerCase()] ?? `nothing is known about ${topic}`,
  }],
};

function sse(event, data) {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname !== '/run') return new Response('GET /run?q=<question>\n', { status: 404 });
    engine ??= await createEngine();
    const model = openAIChatModel({ baseURL: env.OPENAI_BASE_URL, apiKey: env.OPENAI_API_KEY, model: env.MODEL });

    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    const encoder = new TextEncoder();
    const send = (event, data) => writer.write(encoder.encode(sse(event, data))).catch(() => {});
    // The response starts streaming now; the run writes into it as it goes.
    const run = engine.run(prompt, {
      args: url.searchParams.get('q') ?? '',
      models: { default: model },
      packs: [facts],
      signal: request.signal,
      onEvent: (event) => send(event.event, event),
    }).then((outcome) => send('outcome', outcome), (error) => send('outcome', { ok: false, error: { kind: 'Host', message: String(error) } }))
      .finally(() => writer.close().catch(() => {}));
    ctx.waitUntil(run); // the run goes on after this handler returns the streaming response
    return new Response(readable, {
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' },
    });
  },
};
