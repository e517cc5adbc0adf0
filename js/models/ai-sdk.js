// @ts-check
// aiSdkModel: a Vercel AI SDK language model as a Runvil model function (`ModelFn` in index.d.ts), so
// every provider written for the AI SDK (Anthropic, Google, Mistral, Bedrock, Ollama, ...) plugs in.
// It speaks the provider specification's LanguageModelV2, V3 and V4 (`doGenerate` / `doStream`, the
// shapes the providers of AI SDK 5, 6 and 7 implement) by structure alone: the package imports
// neither `ai` nor any provider. The model's `specificationVersion` says which it implements.
//
// What it adds to one doGenerate (js/README.md, "aiSdkModel"), as openAIChatModel does for its
// protocol: the run's messages and tools in the specification's prompt and tool shapes, the role
// spec's options by name, retries of what the provider marks retryable (APICallError.isRetryable,
// honouring retry-after), a per-attempt timeout raced against the run's signal, finish reasons
// and errors as Model errors that say what happened, usage, text deltas as `model_delta` events
// with `stream: true`, and a call to a tool that was not offered answered inside the round. What a
// reply holds that a Runvil reply cannot (files, sources, the provider's own tool calls, approval
// requests) is reported or refused, never dropped unsaid (docs/providers.md, "What is not kept").

import { isObject } from '../core/values.js';
import { cancelled, retryAfter, retryableStatus, retryOptions, retryOrThrow, withDeadline } from './retry.js';
import { TOOL_CHOICE_WORDS, askRepairingUnknownTools, nameMap, parseArguments } from './wire.js';

/** The specification versions aiSdkModel speaks (v2: the providers of AI SDK 5, v3: of 6, v4: of 7). */
const SPECIFICATIONS = new Set(['v2', 'v3', 'v4']);

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
  reasoning_effort: 'reasoning',
  reasoning: 'reasoning',
  providerOptions: 'providerOptions',
  headers: 'headers',
};
/** Call options a specification version added, with the version's number. */
const SINCE = { reasoning: 4 };
/** The reasoning levels of LanguageModelV4's `reasoning` call option. */
const REASONING_LEVELS = new Set(['provider-default', 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
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
    case 'reasoning':
      return REASONING_LEVELS.has(value) ? value : undefined;
    case 'providerOptions':
    case 'headers':
      return isObject(value) ? value : undefined;
    default:
      return value;
  }
}

/**
 * The call options of one request (without the prompt) for a model of specification `version`,
 * and what of the role spec was not sent.
 */
function callOptionsOf(request, defaults, names, version) {
  const spec = isObject(request.spec) ? request.spec : {};
  const options = { ...defaults, ...(isObject(spec.params) ? spec.params : {}) };
  const unsent = [];
  for (const [key, value] of Object.entries(spec)) {
    if (RUNVIL_KEYS.has(key) || value === undefined || value === null) continue;
    const name = CALL_OPTION[key];
    const known = name && !(SINCE[name] > Number(version.slice(1)));
    const converted = known ? convertOption(name, value, names) : undefined;
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

/**
 * The run's messages as the specification's prompt. The parts Runvil sends (system text, user
 * text, assistant text / reasoning / tool-call, tool-result with text output) are spelled the
 * same in V2, V3 and V4.
 */
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

/** A count the specification reports: a non-negative number, else undefined. */
const count = (v) => (Number.isFinite(v) && v >= 0 ? v : undefined);
/** The sum of the counts given, undefined when none is. */
function total(...values) {
  const given = values.map(count).filter((v) => v !== undefined);
  return given.length ? given.reduce((a, b) => a + b, 0) : undefined;
}

/**
 * The specification's usage as the reply's `usage` (js/README.md); undefined when it has no counts.
 * V2 is flat (`inputTokens`, `outputTokens`, `cachedInputTokens`, `reasoningTokens` numbers); V3
 * and V4 nest (`inputTokens: { total, noCache, cacheRead, cacheWrite }`, `outputTokens: { total,
 * text, reasoning }`). Read by shape, so a provider that answers in the other version's shape is
 * still counted.
 */
function usageOf(u) {
  if (!isObject(u)) return undefined;
  let input;
  let output;
  let cached;
  let reasoning;
  if (isObject(u.inputTokens) || isObject(u.outputTokens)) {
    const i = isObject(u.inputTokens) ? u.inputTokens : {};
    const o = isObject(u.outputTokens) ? u.outputTokens : {};
    // `total` counts every input token, cached ones (read or written) included, as OpenAI's
    // prompt_tokens does: without it, its parts add up to it.
    input = count(i.total) ?? total(i.noCache, i.cacheRead, i.cacheWrite);
    output = count(o.total) ?? total(o.text, o.reasoning);
    cached = count(i.cacheRead);
    reasoning = count(o.reasoning);
  } else {
    input = count(u.inputTokens);
    output = count(u.outputTokens);
    cached = count(u.cachedInputTokens);
    reasoning = count(u.reasoningTokens);
  }
  if (input === undefined && output === undefined) return undefined;
  const usage = { input_tokens: input ?? 0, output_tokens: output ?? 0 };
  if (cached !== undefined) usage.cached_tokens = cached;
  if (reasoning !== undefined) usage.reasoning_tokens = reasoning;
  return usage;
}

/** The unified finish reason: V2's string, or V3's and V4's `{ unified, raw }`. */
function finishOf(reason) {
  if (typeof reason === 'string') return reason;
  return isObject(reason) && typeof reason.unified === 'string' ? reason.unified : undefined;
}

/** A call warning as a `model_warning` message: V2's, V3's and V4's kinds. */
function warningText(w) {
  if (!isObject(w)) return String(w);
  const details = typeof w.details === 'string' && w.details ? `: ${w.details}` : '';
  switch (w.type) {
    case 'unsupported-setting': // V2
      return `the provider does not support the setting ${w.setting}${details}`;
    case 'unsupported-tool': // V2
      return `the provider does not support the tool ${w.tool?.name ?? w.tool?.id ?? ''}${details}`;
    case 'unsupported': // V3, V4
      return `the provider does not support ${w.feature}${details}`;
    case 'compatibility': // V3, V4
      return `the provider serves ${w.feature} in a compatibility mode${details}`;
    case 'deprecated': {
      // V4
      const why = typeof w.message === 'string' && w.message ? `: ${w.message}` : '';
      return `the provider deprecates ${w.setting}${why}`;
    }
    default:
      return typeof w.message === 'string' ? w.message : JSON.stringify(w).slice(0, 500);
  }
}

/**
 * The parts a reply is made of (replyOf), from a doGenerate result or a doStream stream, and what
 * of it a Runvil reply has no place for: the provider's own tool calls and results (by tool
 * name), files (by media type), sources and citations, provider-specific content (by kind),
 * approval requests, and parts of a type the adapter does not know.
 * @typedef {{ text: string, reasoning: string, calls: any[], finishReason: unknown, usage: unknown, modelId: unknown,
 *   providerTools: string[], providerCalls: Map<unknown, string>, files: string[], sources: string[], custom: string[],
 *   approvals: any[], unknown: string[] }} Parts
 */

/** @returns {Parts} */
function emptyParts() {
  return {
    text: '',
    reasoning: '',
    calls: [],
    finishReason: undefined,
    usage: undefined,
    modelId: undefined,
    providerTools: [],
    providerCalls: new Map(),
    files: [],
    sources: [],
    custom: [],
    approvals: [],
    unknown: [],
  };
}

/** A tool call's or result's tool name, for a message. */
const toolNameOf = (part) => (typeof part.toolName === 'string' && part.toolName ? part.toolName : '(unnamed)');

/** How a source is named in a warning: its URL, else its title. */
function sourceName(source) {
  if (!isObject(source)) return String(source);
  if (typeof source.url === 'string') return source.url;
  return JSON.stringify(source.title ?? source.filename ?? source.id ?? '');
}

/**
 * Notes in `got` a content part, or a stream part of the same type, that is not text: true when
 * it was one of those (`tool-call`, `tool-result`, `tool-approval-request`, `file`,
 * `reasoning-file`, `source`, `custom`).
 * @param {Parts} got
 */
function notePart(got, part) {
  switch (part.type) {
    case 'tool-call':
      // A call the provider ran itself (e.g. its web search) is not the host's to run.
      if (part.providerExecuted) {
        got.providerTools.push(toolNameOf(part));
        got.providerCalls.set(part.toolCallId, toolNameOf(part));
      } else {
        got.calls.push(part);
      }
      return true;
    case 'tool-result': // always the provider's own tool's (the host's results are the run's)
      got.providerTools.push(toolNameOf(part));
      return true;
    case 'tool-approval-request': // V3, V4
      got.approvals.push(part);
      return true;
    case 'file':
      got.files.push(String(part.mediaType));
      return true;
    case 'reasoning-file': // V4
      got.files.push(`${part.mediaType} (reasoning)`);
      return true;
    case 'source':
      got.sources.push(sourceName(part));
      return true;
    case 'custom': // V4
      got.custom.push(String(part.kind));
      return true;
    default:
      return false;
  }
}

/** A text part's (V4) or text-end stream part's citations, among the sources. */
function noteCitations(got, part) {
  if (!Array.isArray(part.citations)) return;
  for (const c of part.citations) got.sources.push(sourceName(c?.source));
}

/**
 * A doGenerate result as the parts a reply is made of.
 * @returns {Parts}
 */
function collect(result, warn) {
  if (!isObject(result)) throw new Error('the AI SDK model answered with something that is not a result object');
  const got = emptyParts();
  got.finishReason = result.finishReason;
  got.usage = result.usage;
  got.modelId = result.response?.modelId;
  for (const w of Array.isArray(result.warnings) ? result.warnings : []) warn(warningText(w));
  for (const part of Array.isArray(result.content) ? result.content : []) {
    if (!isObject(part)) continue;
    if (part.type === 'text') {
      if (typeof part.text === 'string') got.text += part.text;
      noteCitations(got, part);
    } else if (part.type === 'reasoning') {
      if (typeof part.text === 'string') got.reasoning += part.text;
    } else if (!notePart(got, part)) {
      got.unknown.push(String(part.type));
    }
  }
  return got;
}

/** Stream parts that carry nothing a reply keeps beyond what other parts carry. */
const STREAM_FRAMING = new Set([
  // A block's bounds: its deltas carry the text.
  'text-start',
  'reasoning-start',
  'reasoning-end',
  // A call's input in pieces: the tool-call part carries it whole.
  'tool-input-start',
  'tool-input-delta',
  'tool-input-end',
  // V4: a keep-alive (it renews timeoutMs, as every part does).
  'ping',
  // Only sent with includeRawChunks, which the adapter never asks for.
  'raw',
]);

/**
 * A doStream stream read to its end, text and reasoning told to `tell` as they come.
 * @returns {Promise<Parts>}
 */
async function readParts(stream, touch, tell, warn) {
  if (typeof stream?.getReader !== 'function') {
    throw new Error('the AI SDK model answered doStream without a readable stream');
  }
  const reader = stream.getReader();
  const got = emptyParts();
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
        case 'text-end': // V4: with the block's citations
          noteCitations(got, part);
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
        default:
          if (!STREAM_FRAMING.has(part.type) && !notePart(got, part)) got.unknown.push(String(part.type));
      }
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  }
}

/** `items` once each, in order, the first `max` of them and how many more there were. */
function listed(items, max = 10) {
  const once = [...new Set(items)];
  const more = once.length > max ? ` and ${once.length - max} more` : '';
  return once.slice(0, max).join(', ') + more;
}

/**
 * What a reply had that a Runvil reply has no place for, each kind as one `model_warning`
 * message (docs/providers.md, "What is not kept").
 * @param {Parts} got
 */
function unkept(got) {
  const said = [];
  const tools = listed(got.providerTools);
  if (tools) {
    said.push(
      `the provider ran its own tools (provider-executed, not the run's): ${tools}; their calls and results are not part of the reply, nor of the conversation sent back`,
    );
  }
  const files = listed(got.files);
  if (files) said.push(`the reply's files are not kept (a Runvil reply is text): ${files}`);
  const sources = listed(got.sources);
  if (sources) said.push(`the reply's sources are not kept (a Runvil reply is text): ${sources}`);
  const custom = listed(got.custom);
  if (custom) said.push(`the reply's provider-specific content is not kept: ${custom}`);
  const unknown = listed(got.unknown);
  if (unknown) said.push(`the reply had parts aiSdkModel does not know, not kept: ${unknown}`);
  return said;
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

/**
 * The reply (js-api.md) from the parts, or an Error with a model-safe message; what the parts had
 * that the reply has no place for is told to `warn`.
 * @param {Parts} got
 */
function replyOf(got, names, turn, modelId, warn) {
  if (got.approvals.length) {
    // The provider waits for an answer (a tool-approval-response) that a Runvil conversation cannot give.
    const tools = listed(got.approvals.map((a) => got.providerCalls.get(a.toolCallId) ?? `call ${a.toolCallId}`));
    throw new Error(
      `the provider asks for approval to run its own tool ${tools} (tool-approval-request); aiSdkModel cannot answer one: configure the provider's tool to run without approval`,
    );
  }
  for (const message of unkept(got)) warn(message);
  const finish = finishOf(got.finishReason);
  if (finish === 'error') throw new Error('the model provider ended the reply with an error (finish reason error)');
  const reply = { content: got.text, finish_reason: 'stop' };
  if (got.calls.length) {
    reply.tool_calls = got.calls.map((c, i) => ({
      id: typeof c.toolCallId === 'string' && c.toolCallId.trim() ? c.toolCallId : `call_${turn}_${i}`,
      name: names.name(typeof c.toolName === 'string' ? c.toolName : ''),
      arguments: parseArguments(c.input),
    }));
    reply.finish_reason = 'tool_calls';
  } else if (finish === 'content-filter') {
    if (!got.text) throw new Error("the provider's content filter withheld the reply (finish reason content-filter)");
    reply.finish_reason = 'content_filter';
  } else if (finish === 'length') {
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
 * `languageModel`: an AI SDK LanguageModelV2, V3 or V4 (e.g. `openai('gpt-4o')`, `anthropic(...)`).
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
  if (!SPECIFICATIONS.has(version)) {
    const given = typeof version === 'string' ? version : '(none given)';
    throw new TypeError(
      `aiSdkModel: the model implements the AI SDK language model specification ${given}; aiSdkModel speaks v2, v3 and v4 (the providers of AI SDK 5, 6 and 7)`,
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
      let failure;
      let retry;
      let wait;
      if ('value' in got) {
        const parts = stream ? got.value : collect(got.value, warn);
        if (finishOf(parts.finishReason) !== 'interrupted') return parts;
        // V4: the provider's stream ended without its end (a dropped connection): as a break.
        failure = "the model provider's answer ended before it was complete (finish reason interrupted)";
        retry = true;
      } else if ('timedOut' in got) {
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
    const { options: callOpts, unsent } = callOptionsOf(request, callOptions, names, version);
    // Nothing of the role spec is dropped silently.
    if (unsent.length) {
      warn(
        `role spec options not sent (not AI SDK ${version} call options, or values they cannot take; provider-specific ones go in providerOptions): ${unsent.join(', ')}`,
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
      return replyOf(got, names, request.turn ?? 0, languageModel.modelId, warn);
    });
  };
}
