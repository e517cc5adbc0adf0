// The edge example's request handler, shared by the Worker (worker.js) and the Deno/Bun server
// (server.js): GET /run?q=<question> runs prompt.js once and streams the run's events as
// Server-Sent Events — one `event: <name>` per run event (its JSON as data), then `event: outcome`
// with { ok, result | error, seed }. The model is any OpenAI-compatible chat-completions server
// (OPENAI_BASE_URL, OPENAI_API_KEY, MODEL from `env`); the Pack `facts` is served right here.
import { prompt } from './prompt.js';

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

/**
 * @param {{ createEngine: Function, openAIChatModel: Function, storeFor?: (url: URL, env: object) => object | undefined }} runvil
 *   the entry this host imports, and where a run keeps its files (default: a fresh memory store per run)
 * @returns {(request: Request, env: Record<string, string>) => { response: Response, done: Promise<void> }}
 */
export function edgeApp({ createEngine, openAIChatModel, storeFor = () => undefined }) {
  /** One engine per isolate or process: compiling the module is the expensive part. */
  let engine;
  return async (request, env) => {
    const url = new URL(request.url);
    if (url.pathname !== '/run') return { response: new Response('GET /run?q=<question>\n', { status: 404 }), done: Promise.resolve() };
    engine ??= await createEngine();
    const model = openAIChatModel({ baseURL: env.OPENAI_BASE_URL, apiKey: env.OPENAI_API_KEY, model: env.MODEL });

    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    const encoder = new TextEncoder();
    const send = (event, data) => writer.write(encoder.encode(sse(event, data))).catch(() => {});
    // The response starts streaming now; the run writes into it as it goes.
    const done = engine.run(prompt, {
      args: url.searchParams.get('q') ?? '',
      store: storeFor(url, env),
      models: { default: model },
      packs: [facts],
      signal: request.signal,
      onEvent: (event) => send(event.event, event),
    }).then((outcome) => send('outcome', outcome), (error) => send('outcome', { ok: false, error: { kind: 'Host', message: String(error) } }))
      .finally(() => writer.close().catch(() => {}));
    return {
      response: new Response(readable, { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' } }),
      done,
    };
  };
}
