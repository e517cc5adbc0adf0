// openAIChatModel: a model function (js-api.md, Models) that speaks the OpenAI-compatible
// chat-completions protocol with tools, over fetch. Works with any server that implements
// POST {baseURL}/chat/completions (hosted providers, local inference servers).

function toWire(record) {
  if (record.role === 'tool') return { role: 'tool', tool_call_id: record.tool_call_id, content: record.content };
  const message = { role: record.role, content: record.content };
  if (record.tool_calls?.length) {
    message.tool_calls = record.tool_calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) },
    }));
    if (message.content === '') message.content = null;
  }
  return message;
}

/** The model's arguments text as JSON; text that is not JSON stays text (the engine refuses it). */
function parseArguments(text) {
  if (typeof text !== 'string') return text ?? {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * @param {{ baseURL: string, apiKey?: string, model: string, fetch?: typeof globalThis.fetch,
 *           headers?: Record<string, string> }} options
 */
export function openAIChatModel({ baseURL, apiKey, model, fetch = globalThis.fetch, headers = {} } = {}) {
  if (typeof baseURL !== 'string' || baseURL === '') throw new TypeError('openAIChatModel: baseURL must be a non-empty string');
  if (typeof model !== 'string' || model === '') throw new TypeError('openAIChatModel: model must be a non-empty string');
  if (typeof fetch !== 'function') throw new TypeError('openAIChatModel: fetch must be a function');
  const url = `${baseURL.replace(/\/+$/, '')}/chat/completions`;

  return async function openAIModel(request) {
    const spec = request.spec ?? {};
    const body = { model: typeof spec.model === 'string' ? spec.model : model, messages: request.messages.map(toWire) };
    if (typeof spec.temperature === 'number') body.temperature = spec.temperature;
    if (typeof spec.max_tokens === 'number') body.max_tokens = spec.max_tokens;
    if (request.tools) {
      body.tools = request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
    }
    let response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...headers },
        body: JSON.stringify(body),
        signal: request.signal,
      });
    } catch (error) {
      if (request.signal?.aborted) throw error;
      throw new Error(`the model provider could not be reached (${error.message})`);
    }
    const text = await response.text();
    if (!response.ok) {
      let detail = text.slice(0, 500);
      try {
        detail = JSON.parse(text).error?.message ?? detail;
      } catch { /* keep the text */ }
      throw new Error(`the model provider answered ${response.status}: ${detail}`);
    }
    let data;
    try {
      data = JSON.parse(text);
    } catch {
      throw new Error('the model provider answered with something that is not JSON');
    }
    const choice = data.choices?.[0];
    if (!choice?.message) throw new Error('the model provider answered with no choice');
    const m = choice.message;
    const reply = { content: typeof m.content === 'string' ? m.content : '', finish_reason: choice.finish_reason ?? 'stop' };
    if (typeof data.model === 'string') reply.model = data.model;
    if (Array.isArray(m.tool_calls) && m.tool_calls.length) {
      reply.tool_calls = m.tool_calls.map((c) => ({ id: c.id, name: c.function?.name, arguments: parseArguments(c.function?.arguments) }));
    }
    return reply;
  };
}
