// @ts-check
// aiSdkModel: a Vercel AI SDK language model as a Runvil model function (`ModelFn` in index.d.ts), so
// every provider written for the AI SDK (Anthropic, Google, Mistral, Bedrock, Ollama, ...) plugs in.
// It speaks the provider specification's LanguageModelV2 (`doGenerate` / `doStream`, the shape the
// providers of AI SDK 5 implement) by structure alone: the package imports neither `ai` nor any
// provider.
//
// What it adds to one doGenerate (js/README.md, "aiSdkModel"), as openAIChatModel does for its
// protocol: the run's messages and tools in the specification's prompt and tool shapes, the role
// spec's options by name, retries of what the provider marks retryable (APICallError.isRetryable,
// honouring retry-after), a per-attempt timeout raced against the run's signal, finish reasons
// and errors as Model errors that say what happened, usage, text deltas as `model_delta` events
// with `stream: true`, and a call to a tool that was not offered answered inside the round.

import { isObject } from '../core/values.js';
import { cancelled, retryAfter, retryableStatus, retryOptions, retryOrThrow, withDeadline } from './retry.js';
import { TOOL_CHOICE_WORDS, askRepairingUnknownTools, nameMap, parseArguments } from './wire.js';

/**
 * Role spec keys and the call option each sets: the names openAIChatModel sends (so one prompt
 * serves both adapters) and the call options' own names.
 */
const CALL_OPTION = {
  temperature: 'temperature',
  max_tokens: 'maxOutputTokens',
  max_completion_tokens: 'maxOutputTokens',
  maxOutputTokens: 'maxOutputTokens',
  top_p: 'topP',
  topP: 'topP',
  top_k: 'topK',
  topK: 'topK',
  stop: 'stopSequences',
  stopSequences: 'stopSequences',
  presence_penalty: 'presencePenalty',
  presencePenalty: 'presencePenalty',
  frequency_penalty: 'frequencyPenalty',
  frequencyPenalty: 'frequencyPenalty',
  seed: 'seed',
  response_format: 'responseFormat',
  responseFormat: 'responseFormat',
  tool_choice: 'toolChoice',
  toolChoice: 'toolChoice',
  providerOptions: 'providerOptions',
  headers: 'headers',
};
/** Role spec keys that are Runvil's (`params` is merged into the call options verbatim). */
const RUNVIL_KEYS = new Set(['model', 'description', 'context', 'params']);
/** Call options the adapter sets itself. */
const OWNED = ['prompt', 'tools', 'abortSignal', 'includeRawChunks'];
const API_CALL_ERROR = Symbol.for('vercel.ai.error.AI_APICallError');

/** The role spec's value for a call option, in the specification's shape; undefined when it has none. */
function convertOption(name, value, names) {
  switch (name) {
    case 'stopSequences':
      if (typeof value === 'string') return [value];
      return Array.isArray(value) && value.every((s) => typeof s === 'string') ? value : undefined;
    case 'responseFormat':
      if (!isObject(value)) return undefined;
      if (value.type === 'text' || value.type === 'json') return value;
      if (value.type === 'json_object') return { type: 'json' };
      if (value.type === 'json_schema' && isObject(value.json_schema)) {
        const { schema, name: title, description } = value.json_schema;
        return {
          type: 'json',
          ...(schema !== undefined && { schema }),
          ...(title !== undefined && { name: title }),
          ...(description !== undefined && { description }),
        };
      }
      return undefined;
    case 'toolChoice': {
      // A tool named by its id (`web/search`), its wire name (`web_search`), or OpenAI's object.
      const named = (tool) => ({ type: 'tool', toolName: names.chosen(tool) });
      if (typeof value === 'string') return TOOL_CHOICE_WORDS.has(value) ? { type: value } : named(value);
      if (!isObject(value)) return undefined;
      if (TOOL_CHOICE_WORDS.has(value.type)) return { type: value.type };
      if (value.type === 'tool' && typeof value.toolName === 'string') return named(value.toolName);
      if (typeof value.function?.name === 'string') return named(value.function.name);
      return undefined;
    }
    case 'providerOptions':
    case 'headers':
      return isObject(value) ? value : undefined;
    default:
      return value;
  }
}

/** The call options of one request (without the prompt), and what of the role spec was not sent. */
function callOptionsOf(request, defaults, names) {
  const spec = isObject(request.spec) ? request.spec : {};
  const options = { ...defaults, ...(isObject(spec.params) ? spec.params : {}) };
  const unsent = [];
  for (const [key, value] of Object.entries(spec)) {
    if (RUNVIL_KEYS.has(key) || value === undefined || value === null) continue;
    const name = CALL_OPTION[key];
    const converted = name && convertOption(name, value, names);
    if (converted === undefined) {
      unsent.push(key);
    } else if (name === 'providerOptions' && isObject(options.providerOptions)) {
      // Per provider: the spec's options over the host's.
      const merged = { ...options.providerOptions };
      for (const [provider, opts] of Object.entries(converted)) {
        merged[provider] = { ...(isObject(merged[provider]) ? merged[provider] : {}), ...opts };
      }
      options.providerOptions = merged;
    } else {
      options[name] = converted;
    }
  }
  for (const key of OWNED) delete options[key];
  if (request.tools?.length) {
    options.tools = request.tools.map((t) => ({
      type: 'function',
      name: names.wire(t.name),
      description: t.description,
      inputSchema: t.parameters,
    }));
  } else {
    delete options.toolChoice; // nothing to choose from
  }
  return { options, unsent };
}

/** The run's messages as the specification's prompt. */
function promptOf(messages, names) {
  const toolNames = new Map(); // tool call id -> the wire name it was called by
  const prompt = [];
  for (const m of messages) {
    const text = typeof m.content === 'string' ? m.content : '';
    if (m.role === 'system') {
      prompt.push({ role: 'system', content: text });
    } else if (m.role === 'user') {
      prompt.push({ role: 'user', content: [{ type: 'text', text }] });
    } else if (m.role === 'assistant') {
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
      const content = [];
      // Thinking-mode tool loops (DeepSeek through openai-compatible) need the turn's reasoning back.
      if (calls.length && typeof m.reasoning_content === 'string' && m.reasoning_content) {
        content.push({ type: 'reasoning', text: m.reasoning_content });
      }
      if (text || !calls.length) content.push({ type: 'text', text });
      for (const c of calls) {
        const toolName = names.wire(c.name);
        toolNames.set(c.id, toolName);
        content.push({ type: 'tool-call', toolCallId: c.id, toolName, input: c.arguments ?? {} });
      }
      prompt.push({ role: 'assistant', content });
    } else if (m.role === 'tool') {
      const part = {
        type: 'tool-result',
        toolCallId: m.tool_call_id,
        toolName: toolNames.get(m.tool_call_id) ?? '',
        output: { type: 'text', value: text },
      };
      // The results of one turn's calls go in one tool message, as the AI SDK itself sends them.
      const last = prompt.at(-1);
      if (last?.role === 'tool') last.content.push(part);
      else prompt.push({ role: 'tool', content: [part] });
    }
  }
  return prompt;
}

/** The specification's usage as the reply's `usage` (js/README.md); undefined when it has no counts. */
function usageOf(u) {
  if (!isObject(u)) return undefined;
  const n = (v) => (Number.isFinite(v) && v >= 0 ? v : undefined);
  const input = n(u.inputTokens);
  const output = n(u.outputTokens);
  if (input === undefined && output === undefined) return undefined;
  const usage = { input_tokens: input ?? 0, output_tokens: output ?? 0 };
  if (n(u.cachedInputTokens) !== undefined) usage.cached_tokens = u.cachedInputTokens;
  if (n(u.reasoningTokens) !== undefined) usage.reasoning_tokens = u.reasoningTokens;
  return usage;
}

function warningText(w) {
  if (!isObject(w)) return String(w);
  const details = typeof w.details === 'string' && w.details ? `: ${w.details}` : '';
  if (w.type === 'unsupported-setting') return `the provider does not support the setting ${w.setting}${details}`;
  if (w.type === 'unsupported-tool') {
    return `the provider does not support the tool ${w.tool?.name ?? w.tool?.id ?? ''}${details}`;
  }
  return typeof w.message === 'string' ? w.message : JSON.stringify(w).slice(0, 500);
}

/**
 * The parts a reply is made of (replyOf), from a doGenerate result or a doStream stream.
 * @typedef {object} Parts
 * @property {string} text
 * @property {string} reasoning
 * @property {any[]} calls the tool-call parts
 * @property {unknown} finishReason
 * @property {unknown} usage
 * @property {unknown} modelId
 */

/**
 * A doGenerate result as the parts a reply is made of.
 * @returns {Parts}
 */
function collect(result, warn) {
  if (!isObject(result)) throw new Error('the AI SDK model answered with something that is not a result object');
  /** @type {Parts} */
  const got = {
    text: '',
    reasoning: '',
    calls: [],
    finishReason: result.finishReason,
    usage: result.usage,
    modelId: result.response?.modelId,
  };
  for (const w of Array.isArray(result.warnings) ? result.warnings : []) warn(warningText(w));
  for (const part of Array.isArray(result.content) ? result.content : []) {
    if (!isObject(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') got.text += part.text;
    else if (part.type === 'reasoning' && typeof part.text === 'string') got.reasoning += part.text;
    // A call the provider ran itself (e.g. its web search) is not the host's to run.
    else if (part.type === 'tool-call' && !part.providerExecuted) got.calls.push(part);
  }
  return got;
}

/**
 * A doStream stream read to its end, text and reasoning told to `tell` as they come.
 * @returns {Promise<Parts>}
 */
async function readParts(stream, touch, tell, warn) {
  if (typeof stream?.getReader !== 'function') {
    throw new Error('the AI SDK model answered doStream without a readable stream');
  }
  const reader = stream.getReader();
  /** @type {Parts} */
  const got = { text: '', reasoning: '', calls: [], finishReason: undefined, usage: undefined, modelId: undefined };
  try {
    for (;;) {
      const { value: part, done } = await reader.read();
      if (done) return got;
      touch();
      if (!isObject(part)) continue;
      switch (part.type) {
        case 'text-delta':
          if (typeof part.delta === 'string' && part.delta) {
            got.text += part.delta;
            tell({ text: part.delta });
          }
          break;
        case 'reasoning-delta':
          if (typeof part.delta === 'string' && part.delta) {
            got.reasoning += part.delta;
            tell({ reasoning: part.delta });
          }
          break;
        case 'tool-call':
          if (!part.providerExecuted) got.calls.push(part);
          break;
        case 'response-metadata':
          if (typeof part.modelId === 'string') got.modelId = part.modelId;
          break;
        case 'stream-start':
          for (const w of Array.isArray(part.warnings) ? part.warnings : []) warn(warningText(w));
          break;
        case 'finish':
          got.finishReason = part.finishReason;
          got.usage = part.usage;
          break;
        case 'error':
          throw part.error ?? new Error('the stream reported an error');
        default: // text-start/-end, tool-input-*, sources, files, raw: nothing a reply keeps
      }
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  }
}

/**
 * What a thrown error (or a stream's error part) says: the Model error text, whether another
 * attempt may help (the provider's own `isRetryable`) and the wait its headers asked for.
 */
function failureOf(error) {
  const message =
    typeof error?.message === 'string'
      ? error.message
      : typeof error === 'string'
        ? error
        : (JSON.stringify(error) ?? String(error)).slice(0, 500);
  if (isObject(error) && (error[API_CALL_ERROR] === true || error.name === 'AI_APICallError')) {
    const headers = isObject(error.responseHeaders) ? error.responseHeaders : {};
    const header = (name) => {
      const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
      return key === undefined ? undefined : headers[key];
    };
    const wait = retryAfter({ get: (name) => headers[name] ?? header(name) });
    const status = error.statusCode;
    if (Number.isInteger(status) && status >= 200 && status < 300) {
      // A success status whose body the provider could not read: a 200 with an error body
      // (OpenRouter) says why; anything else is the provider's reading error.
      let body;
      try {
        body = JSON.parse(error.responseBody);
      } catch {
        /* not JSON */
      }
      if (isObject(body) && body.error !== undefined && !Array.isArray(body.choices)) {
        const why =
          isObject(body.error) && typeof body.error.message === 'string'
            ? body.error.message
            : JSON.stringify(body.error).slice(0, 500);
        return {
          text: `the model provider answered with an error: ${why}`,
          retry: retryableStatus(Number(body.error?.code)),
          wait,
        };
      }
      return { text: `the model provider's answer could not be read (${message})`, retry: false };
    }
    const text = Number.isInteger(status)
      ? `the model provider answered ${status}: ${message}`
      : `the model provider could not be reached (${message})`;
    return { text, retry: error.isRetryable === true, wait };
  }
  // A provider's error object inside a stream (`{ message, code }`), not an Error.
  if (isObject(error) && !(error instanceof Error)) {
    return {
      text: `the model provider answered with an error: ${message}`,
      retry: retryableStatus(Number(error.code)),
    };
  }
  const name = typeof error?.name === 'string' && error.name.startsWith('AI_') ? ` (${error.name})` : '';
  return { text: `the AI SDK model failed${name}: ${message}`, retry: error?.isRetryable === true };
}

/** The reply (`ModelResponse` in index.d.ts) from the parts, or an Error with a model-safe message. */
function replyOf(got, names, turn, modelId) {
  if (got.finishReason === 'error') {
    throw new Error('the model provider ended the reply with an error (finish reason error)');
  }
  const reply = { content: got.text, finish_reason: 'stop' };
  if (got.calls.length) {
    reply.tool_calls = got.calls.map((c, i) => ({
      id: typeof c.toolCallId === 'string' && c.toolCallId.trim() ? c.toolCallId : `call_${turn}_${i}`,
      name: names.name(typeof c.toolName === 'string' ? c.toolName : ''),
      arguments: parseArguments(c.input),
    }));
    reply.finish_reason = 'tool_calls';
  } else if (got.finishReason === 'content-filter') {
    if (!got.text) throw new Error("the provider's content filter withheld the reply (finish reason content-filter)");
    reply.finish_reason = 'content_filter';
  } else if (got.finishReason === 'length') {
    reply.finish_reason = 'length';
  }
  if (got.reasoning) reply.reasoning_content = got.reasoning;
  const model = typeof got.modelId === 'string' && got.modelId ? got.modelId : modelId;
  if (typeof model === 'string' && model) reply.model = model;
  const usage = usageOf(got.usage);
  if (usage) reply.usage = usage;
  return reply;
}

/**
 * `languageModel`: an AI SDK LanguageModelV2 (e.g. `openai('gpt-4o')`, `anthropic(...)`).
 * @type {typeof import('../index.d.ts').aiSdkModel}
 */
export function aiSdkModel(languageModel, options = {}) {
  if (typeof languageModel === 'string') {
    throw new TypeError(
      `aiSdkModel: pass the provider's model object (e.g. openai('${languageModel}')), not a model id string`,
    );
  }
  if (!isObject(languageModel)) {
    throw new TypeError(
      'aiSdkModel: languageModel must be an AI SDK language model (an object with doGenerate and doStream)',
    );
  }
  const version = languageModel.specificationVersion;
  if (version !== 'v2') {
    throw new TypeError(
      `aiSdkModel: the model implements the AI SDK language model specification ${typeof version === 'string' ? version : '(none given)'}; aiSdkModel speaks v2, the specification of the AI SDK 5 providers`,
    );
  }
  if (!isObject(options)) throw new TypeError('aiSdkModel: options must be an object');
  const { stream = false, callOptions = {} } = options;
  if (typeof stream !== 'boolean') throw new TypeError('aiSdkModel: stream must be a boolean');
  if (typeof languageModel.doGenerate !== 'function') {
    throw new TypeError('aiSdkModel: the model has no doGenerate method');
  }
  if (stream && typeof languageModel.doStream !== 'function') {
    throw new TypeError('aiSdkModel: stream: true needs a model with a doStream method');
  }
  if (!isObject(callOptions)) throw new TypeError('aiSdkModel: callOptions must be an object');
  const { onRetry, unknownToolRetries, timing } = retryOptions(options, 'aiSdkModel');
  // The declarations type the two methods' options `never`, so that any provider's model fits;
  // they are called with the call options this adapter builds.
  const model =
    /** @type {{ doGenerate(options: object): PromiseLike<unknown>, doStream(options: object): PromiseLike<any> }} */ (
      languageModel
    );

  /** One call with its retries: the reply's parts, or an Error with a model-safe message. */
  async function call(callOpts, request, warn) {
    const signal = request.signal;
    for (let n = 1; ; n++) {
      const reported = { any: false };
      const tell = (piece) => {
        reported.any = true;
        request.emit?.('model_delta', piece);
      };
      const got = await withDeadline(
        async (abortSignal, touch) => {
          const opts = { ...callOpts, abortSignal };
          if (!stream) return model.doGenerate(opts);
          const result = await model.doStream(opts);
          touch();
          return readParts(result?.stream, touch, tell, warn);
        },
        signal,
        timing.timeoutMs,
      );
      if ('value' in got) return stream ? got.value : collect(got.value, warn);
      let failure;
      let retry;
      let wait;
      if ('timedOut' in got) {
        failure = `the model provider did not answer within ${timing.timeoutMs} ms`;
        retry = true;
      } else {
        if (signal?.aborted) throw cancelled();
        ({ text: failure, retry, wait } = failureOf(got.error));
      }
      // Text already shown as deltas cannot be taken back: a stream broken after it is final.
      if (reported.any) throw new Error(`the model provider's stream broke off (${failure})`);
      await retryOrThrow({ n, failure, retry, wait, timing, onRetry, request, signal });
    }
  }

  return async function aiSdkModelFn(request) {
    const names = nameMap();
    const warn = (message) => request.emit?.('model_warning', { message });
    const { options: callOpts, unsent } = callOptionsOf(request, callOptions, names);
    // Nothing of the role spec is dropped silently.
    if (unsent.length) {
      warn(
        `role spec options not sent (not AI SDK call options, or values they cannot take; provider-specific ones go in providerOptions): ${unsent.join(', ')}`,
      );
    }
    const wanted = request.spec?.model;
    if (typeof wanted === 'string' && wanted && wanted !== languageModel.modelId) {
      warn(
        `the role asks for model ${wanted}; aiSdkModel serves the model it was given (${languageModel.modelId}); pick models per role with engine.run's models function`,
      );
    }
    const messages = [...(request.messages ?? [])];
    return askRepairingUnknownTools(request, unknownToolRetries, async (records) => {
      messages.push(...records);
      const got = await call({ ...callOpts, prompt: promptOf(messages, names) }, request, warn);
      return replyOf(got, names, request.turn ?? 0, languageModel.modelId);
    });
  };
}
