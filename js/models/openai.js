// @ts-check
// openAIChatModel: a model function (`ModelFn` in index.d.ts) that speaks the OpenAI-compatible
// chat-completions protocol with tools, over fetch. Works with any server that implements
// POST {baseURL}/chat/completions (hosted providers, local inference servers).
//
// What it does beyond one POST (js/README.md, "openAIChatModel"): bounded retries with exponential
// backoff and jitter (honouring retry-after-ms / retry-after), a per-attempt timeout, the role
// spec's request options passed through by name, tool names the protocol refuses shortened and
// mapped back, usage, reasoning_content sent back with tool-call turns, and every provider reply
// shape that has no usable answer (refusal, content filter, a 200 with an error body) turned into
// a Model error that says so; with `stream: true`, Server-Sent Events whose text pieces become
// `model_delta` run events.

import { isObject, markModel } from '../core/values.js';
import { retryAfter, retryableStatus, retryOptions, retryOrThrow, withDeadline } from './retry.js';
import { TOOL_CHOICE_WORDS, askRepairingUnknownTools, nameMap, parseArguments } from './wire.js';

/** Role spec keys sent as request fields of the same name (Runvil's own keys are not sent). */
const PASS_THROUGH = [
  'temperature',
  'top_p',
  'max_tokens',
  'max_completion_tokens',
  'seed',
  'stop',
  'n',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'user',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'reasoning_effort',
  'verbosity',
  'service_tier',
  'store',
  'metadata',
  'prediction',
  'top_k',
  'min_p',
  'repetition_penalty',
];

/** `{baseURL}/chat/completions`, keeping a query string (e.g. `?api-version=`) at the end. */
function endpoint(baseURL) {
  const q = baseURL.search(/[?#]/);
  const path = q < 0 ? baseURL : baseURL.slice(0, q);
  const query = q < 0 ? '' : baseURL.slice(q);
  return `${path.replace(/\/+$/, '')}/chat/completions${query}`;
}

function toWire(record, names) {
  if (record.role === 'tool') return { role: 'tool', tool_call_id: record.tool_call_id, content: record.content };
  const message = { role: record.role, content: record.content };
  if (record.tool_calls?.length) {
    message.tool_calls = record.tool_calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: names.wire(c.name), arguments: JSON.stringify(c.arguments ?? {}) },
    }));
    if (message.content === '') message.content = null;
    // Thinking-mode tool loops (DeepSeek) need the turn's reasoning back; other turns leave it out.
    if (typeof record.reasoning_content === 'string') message.reasoning_content = record.reasoning_content;
  }
  return message;
}

/** A message's text: a string, or the text parts of a content-part array (Mistral and others). */
function textOf(content) {
  if (typeof content === 'string') return { text: content };
  if (!Array.isArray(content)) return { text: '' };
  let text = '';
  let reasoning = '';
  for (const part of content) {
    if (typeof part === 'string') text += part;
    else if (isObject(part) && part.type === 'thinking') reasoning += textOf(part.thinking).text;
    else if (isObject(part) && typeof part.text === 'string' && (part.type === undefined || part.type === 'text')) {
      text += part.text;
    }
  }
  return { text, reasoning };
}

/** The provider's usage object as the reply's `usage` (js/README.md). */
function usageOf(u) {
  if (!isObject(u)) return undefined;
  const n = (v) => (Number.isFinite(v) && v >= 0 ? v : undefined);
  const usage = {
    input_tokens: n(u.prompt_tokens) ?? n(u.input_tokens) ?? 0,
    output_tokens: n(u.completion_tokens) ?? n(u.output_tokens) ?? 0,
  };
  const cached =
    n(u.prompt_tokens_details?.cached_tokens) ??
    n(u.input_tokens_details?.cached_tokens) ??
    n(u.prompt_cache_hit_tokens);
  if (cached !== undefined) usage.cached_tokens = cached;
  const reasoning = n(u.completion_tokens_details?.reasoning_tokens) ?? n(u.output_tokens_details?.reasoning_tokens);
  if (reasoning !== undefined) usage.reasoning_tokens = reasoning;
  return usage;
}

/** An error object's message: `{ message }`, a string, or its JSON. */
function errorText(e) {
  if (typeof e === 'string') return e;
  if (isObject(e) && typeof e.message === 'string') return e.message;
  return JSON.stringify(e).slice(0, 500);
}

/**
 * One attempt: POST and read the whole body, within `timeoutMs` (for a stream: between chunks),
 * raced against the run's signal (so even a fetch that ignores its signal cannot keep the run
 * waiting). Answers `{ response, text }`, `{ response, data }` (a stream, assembled),
 * `{ failure }` (a network error or the timeout) or `{ failure, final }` (a stream that broke off
 * after its text was reported: not retried); throws when cancelled.
 */
async function attempt(fetch, url, init, signal, timeoutMs, onDelta) {
  const reported = { any: false };
  const got = await withDeadline(
    async (abortSignal, touch) => {
      let response;
      try {
        response = await fetch(url, { ...init, signal: abortSignal });
        if (
          onDelta &&
          response.ok &&
          /text\/event-stream/i.test(response.headers?.get?.('content-type') ?? '') &&
          response.body
        ) {
          return { response, data: await readStream(response.body, touch, onDelta, reported) };
        }
        return { response, text: await response.text() };
      } catch (error) {
        const why = error?.message ?? error;
        if (reported.any) return { failure: `the model provider's stream broke off (${why})`, final: true };
        if (response) return { failure: `the model provider's answer broke off (${why})` };
        return { failure: `the model provider could not be reached (${why})` };
      }
    },
    signal,
    timeoutMs,
  );
  if ('value' in got) return got.value;
  if ('error' in got) throw got.error; // not reached: the exchange answers its own failures
  const failure = `the model provider did not answer within ${timeoutMs} ms`;
  // Text already reported as deltas cannot be taken back: a stream stalled after it is final.
  return reported.any ? { failure: `the model provider's stream broke off (${failure})`, final: true } : { failure };
}

/**
 * Reads a chat-completions Server-Sent Events stream into the shape of a whole answer
 * (`{ model, usage, error, choices: [{ message, finish_reason }] }`), telling `onDelta` each
 * piece of text (`{ text }`) or reasoning (`{ reasoning }`) as it comes.
 */
async function readStream(body, touch, onDelta, reported) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  /** @type {{ model?: string, usage?: object, error?: unknown, choices: object[] }} */
  const out = { choices: [] };
  let content = '';
  let reasoningContent = '';
  let refusal = '';
  // A call's arguments are text pieces, or an object a provider sent whole.
  /** @type {{ id: string, type: 'function', function: { name: string, arguments: any } }[]} */
  const toolCalls = [];
  let finish = null;
  let buffer = '';
  let data = [];
  const tell = (piece) => {
    reported.any = true;
    onDelta(piece);
  };
  const take = (text) => {
    if (text === '[DONE]') return;
    let chunk;
    try {
      chunk = JSON.parse(text);
    } catch {
      throw new Error('a stream event is not JSON');
    }
    if (!isObject(chunk)) return;
    if (chunk.error) out.error = chunk.error;
    if (typeof chunk.model === 'string') out.model = chunk.model;
    if (isObject(chunk.usage)) out.usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isObject(choice)) return;
    if (choice.error) out.error = choice.error;
    if (choice.finish_reason) finish = choice.finish_reason;
    const delta = isObject(choice.delta) ? choice.delta : {};
    const { text: piece, reasoning } = textOf(delta.content);
    if (piece) {
      content += piece;
      tell({ text: piece });
    }
    const thinking = (typeof delta.reasoning_content === 'string' ? delta.reasoning_content : '') + (reasoning ?? '');
    if (thinking) {
      reasoningContent += thinking;
      tell({ reasoning: thinking });
    }
    if (typeof delta.refusal === 'string') refusal += delta.refusal;
    const calls = Array.isArray(delta.tool_calls)
      ? delta.tool_calls
      : isObject(delta.function_call)
        ? [{ index: 0, function: delta.function_call }]
        : [];
    for (const c of calls) {
      const i = Number.isInteger(c.index) ? c.index : toolCalls.length;
      const slot = (toolCalls[i] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      if (typeof c.id === 'string') slot.id ||= c.id;
      if (typeof c.function?.name === 'string') slot.function.name += c.function.name;
      if (typeof c.function?.arguments === 'string') slot.function.arguments += c.function.arguments;
      else if (isObject(c.function?.arguments)) slot.function.arguments = c.function.arguments;
    }
  };
  const line = (text) => {
    if (text === '') {
      if (data.length) take(data.join('\n'));
      data = [];
    } else if (text.startsWith('data:')) {
      data.push(text.slice(text[5] === ' ' ? 6 : 5));
    }
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    touch();
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      line(buffer.slice(0, end).replace(/\r$/, ''));
      buffer = buffer.slice(end + 1);
    }
  }
  line(buffer);
  line('');
  if (out.error && reported.any) throw new Error(`the provider reported an error: ${errorText(out.error)}`);
  // The keys in the order of a whole answer's message; the empty ones left out.
  /** @type {Record<string, unknown>} */
  const message = { role: 'assistant', content };
  if (reasoningContent) message.reasoning_content = reasoningContent;
  if (refusal) message.refusal = refusal;
  const calls = toolCalls.filter(Boolean);
  if (calls.length) message.tool_calls = calls;
  if (!out.error || content || calls.length) out.choices.push({ index: 0, message, finish_reason: finish });
  return out;
}

function requestBody(request, model, defaults, names) {
  const spec = isObject(request.spec) ? request.spec : {};
  const body = { model: typeof spec.model === 'string' && spec.model ? spec.model : model };
  const options = { ...defaults, ...(isObject(spec.params) ? spec.params : {}) };
  for (const key of PASS_THROUGH) if (spec[key] !== undefined && spec[key] !== null) options[key] = spec[key];
  // The adapter owns these: the model chosen above, the conversation, the tools, no streaming.
  for (const key of ['model', 'messages', 'tools', 'stream', 'stream_options']) delete options[key];
  Object.assign(body, options);
  if (request.tools?.length) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: names.wire(t.name), description: t.description, parameters: t.parameters },
    }));
    const choice = body.tool_choice;
    if (typeof choice === 'string' && !TOOL_CHOICE_WORDS.has(choice)) {
      body.tool_choice = { type: 'function', function: { name: names.chosen(choice) } };
    } else if (isObject(choice) && typeof choice.function?.name === 'string') {
      body.tool_choice = { ...choice, function: { ...choice.function, name: names.chosen(choice.function.name) } };
    }
  } else {
    // Without tools these fields are refused by the protocol.
    delete body.tool_choice;
    delete body.parallel_tool_calls;
  }
  body.messages = request.messages.map((m) => toWire(m, names));
  return body;
}

/** The provider's answer as a reply (`ModelResponse` in index.d.ts), or an Error with a model-safe message. */
function replyOf(data, names, turn) {
  if (!isObject(data)) throw new Error('the model provider answered with something that is not a JSON object');
  const choice = Array.isArray(data.choices) ? data.choices[0] : undefined;
  if (data.error && !choice) throw new Error(`the model provider answered with an error: ${errorText(data.error)}`);
  if (choice?.error) throw new Error(`the model provider answered with an error: ${errorText(choice.error)}`);
  if (!isObject(choice?.message)) throw new Error('the model provider answered with no choice');
  const m = choice.message;
  const { text, reasoning } = textOf(m.content);
  let finish = choice.finish_reason ?? 'stop';
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
  if (!calls.length && isObject(m.function_call)) calls.push({ function: m.function_call }); // the legacy shape
  const reply = { content: text, finish_reason: 'stop' };
  if (calls.length) {
    reply.tool_calls = calls.map((c, i) => ({
      id: typeof c.id === 'string' && c.id.trim() ? c.id : `call_${turn}_${i}`,
      name: names.name(c.function?.name ?? ''),
      arguments: parseArguments(c.function?.arguments),
    }));
    reply.finish_reason = 'tool_calls';
  } else if (typeof m.refusal === 'string' && m.refusal && !text) {
    throw new Error(`the model refused: ${m.refusal}`);
  } else if (finish === 'content_filter') {
    if (!text) throw new Error("the provider's content filter withheld the reply (finish_reason content_filter)");
    reply.finish_reason = 'content_filter';
  } else if (finish === 'length' || finish === 'model_length') {
    reply.finish_reason = 'length';
  }
  const thinking = typeof m.reasoning_content === 'string' && m.reasoning_content ? m.reasoning_content : reasoning;
  if (thinking) reply.reasoning_content = thinking;
  if (typeof data.model === 'string') reply.model = data.model;
  const usage = usageOf(data.usage);
  if (usage) reply.usage = usage;
  return reply;
}

/**
 * (The default `{}` is for JavaScript callers without options: they get the TypeError on baseURL.)
 * @type {typeof import('../index.d.ts').openAIChatModel}
 */
export function openAIChatModel(options = /** @type {any} */ ({})) {
  const { baseURL, apiKey, model, fetch = globalThis.fetch, headers = {}, params = {}, stream = false } = options;
  if (typeof stream !== 'boolean') throw new TypeError('openAIChatModel: stream must be a boolean');
  if (typeof baseURL !== 'string' || baseURL === '') {
    throw new TypeError('openAIChatModel: baseURL must be a non-empty string');
  }
  if (typeof model !== 'string' || model === '') {
    throw new TypeError('openAIChatModel: model must be a non-empty string');
  }
  if (typeof fetch !== 'function') throw new TypeError('openAIChatModel: fetch must be a function');
  if (!isObject(params)) throw new TypeError('openAIChatModel: params must be an object');
  const { onRetry, unknownToolRetries, timing } = retryOptions(options, 'openAIChatModel');
  const url = endpoint(baseURL);

  /** One request with its retries: the parsed answer, or an Error with a model-safe message. */
  async function exchange(body, request) {
    const init = {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        ...headers,
      },
      body: JSON.stringify(body),
    };
    const signal = request.signal;
    const onDelta = stream ? (piece) => request.emit?.('model_delta', piece) : undefined;
    for (let n = 1; ; n++) {
      const got = await attempt(fetch, url, init, signal, timing.timeoutMs, onDelta);
      let failure = got.failure;
      let retry = failure !== undefined && !got.final;
      let wait;
      if (got.response) {
        const { response } = got;
        const text = got.text ?? '';
        let data = got.data;
        try {
          data ??= JSON.parse(text);
        } catch {
          /* below */
        }
        if (!response.ok) {
          const detail = isObject(data) && data.error ? errorText(data.error) : text.slice(0, 500);
          failure = `the model provider answered ${response.status}: ${detail}`;
          const should = response.headers?.get?.('x-should-retry');
          retry = should === 'true' || (should !== 'false' && retryableStatus(response.status));
          wait = retryAfter(response.headers);
        } else if (data === undefined) {
          failure = 'the model provider answered with something that is not JSON';
        } else if (isObject(data) && data.error && !data.choices?.length && retryableStatus(Number(data.error.code))) {
          failure = `the model provider answered with an error: ${errorText(data.error)}`;
          retry = true;
        } else {
          return data;
        }
      }
      await retryOrThrow({ n, failure, retry, wait, timing, onRetry, request, signal });
    }
  }

  return markModel(async function openAIModel(request) {
    const names = nameMap();
    const body = requestBody(request, model, params, names);
    if (stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return askRepairingUnknownTools(request, unknownToolRetries, async (records) => {
      body.messages.push(...records.map((record) => toWire(record, names)));
      return replyOf(await exchange(body, request), names, request.turn ?? 0);
    });
  });
}
