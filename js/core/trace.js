// @ts-check
// OpenTelemetry spans for one run (docs/providers.md, "Tracing"), built from the run's event
// stream and its model calls, with the GenAI semantic conventions' names.
//
// The package depends on no OpenTelemetry package: the host's Tracer is used through the few
// methods every Tracer has (`startSpan(name, options, context)`; a span's `setAttribute`,
// `setStatus`, `recordException`, `end`). A child is parented by the `context` argument: the API's
// `trace.setSpan(context, span)` stores the span under `Symbol.for('OpenTelemetry Context Key
// SPAN')` and every tracer reads it back with `context.getValue(key)`, so a small context object
// answering that key parents a span in any SDK. The run's own span gets no context argument: the
// tracer takes the host's active context, so a run started inside a host span nests under it.
//
// Whatever the tracer throws is dropped: tracing cannot change a run (as with onEvent).
import { now } from './clock.js';
import { describe, isObject } from './values.js';

const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');

/** SpanKind of @opentelemetry/api: INTERNAL 0, CLIENT 2. */
const SPAN_KIND = Object.freeze({ internal: 0, client: 2 });
/** SpanStatusCode of @opentelemetry/api. */
const STATUS_ERROR = 2;

/** A context in the shape of @opentelemetry/api's Context: immutable values by key. */
class SpanContext {
  /** @param {Map<symbol, unknown>} values */
  constructor(values) {
    this.values = values;
  }
  /** @param {symbol} key */
  getValue(key) {
    return this.values.get(key);
  }
  /** @param {symbol} key @param {unknown} value */
  setValue(key, value) {
    return new SpanContext(new Map(this.values).set(key, value));
  }
  /** @param {symbol} key */
  deleteValue(key) {
    const values = new Map(this.values);
    values.delete(key);
    return new SpanContext(values);
  }
}

/**
 * The `tracer` run option, checked: a Tracer (anything with `startSpan`). Throws a TypeError.
 * @param {unknown} tracer
 * @param {unknown} traceContent
 */
export function checkTracing(tracer, traceContent) {
  if (tracer !== undefined && !(isObject(tracer) && typeof (/** @type {any} */ (tracer).startSpan) === 'function')) {
    throw new TypeError(
      `engine.run: tracer must be an OpenTelemetry Tracer, an object with startSpan(name, options, context) (got ${describe(tracer)})`,
    );
  }
  if (traceContent !== undefined && typeof traceContent !== 'boolean') {
    throw new TypeError(`engine.run: traceContent must be a boolean (got ${describe(traceContent)})`);
  }
}

/** `f()`, or undefined when it throws: the tracer cannot change the run. */
function quietly(f) {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** JSON text of `value` for a content attribute, or undefined. */
function jsonText(value) {
  return quietly(() => (typeof value === 'string' ? value : JSON.stringify(value)));
}

/** A span of the host's tracer, every call guarded. */
class GuardedSpan {
  constructor(span) {
    this.span = span;
    this.ended = false;
  }
  set(attributes) {
    for (const [key, value] of Object.entries(attributes)) {
      if (value === undefined || value === null) continue;
      quietly(() => this.span.setAttribute(key, value));
    }
  }
  fail(type, message, exception) {
    this.set({ 'error.type': type });
    if (exception !== undefined) quietly(() => this.span.recordException(exception));
    quietly(() => this.span.setStatus({ code: STATUS_ERROR, message }));
  }
  end(time) {
    if (this.ended) return;
    this.ended = true;
    quietly(() => this.span.end(time));
  }
}

/**
 * The spans of one run on `tracer`: `event(e)` takes each run event (with its `time`), `models`
 * wraps the run's models so each model call is a `chat` span, `finish(outcome)` ends the run's span
 * and whatever is still open. `event` and `finish` never throw.
 * @param {any} tracer an OpenTelemetry Tracer
 * @param {{ content?: boolean }} [options] `content`: record prompts, replies, tool arguments and results
 */
export function createRunTrace(tracer, { content = false } = {}) {
  const startedAt = now();
  /** @type {GuardedSpan | null} */
  let root = null;
  let agentName = '';
  const runAttributes = {};
  /** entry id -> { span, chain } of the section entries open now */
  const entries = new Map();
  /** task (chain) id -> span */
  const tasks = new Map();
  /** `${entry}/${tool_call_id}` -> the tool calls the model asked for that are not over yet */
  const calls = new Map();
  /** A call that ended and waits for its tool_result (the result text follows its end event). */
  let ending = null;
  /** entry id -> time of the entry's last event (a script's tool call started after it) */
  const lastSeen = new Map();

  function start(name, kind, attributes, time, parent) {
    const given = Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined && v !== null));
    const options = { kind, attributes: given, startTime: time };
    const span = quietly(() =>
      parent
        ? tracer.startSpan(name, options, new SpanContext(new Map([[SPAN_KEY, parent.span]])))
        : tracer.startSpan(name, options),
    );
    if (!isObject(span)) return null;
    if (quietly(() => typeof span.then === 'function')) {
      // Not a span: a promise it rejects must not reach the host as unhandled.
      quietly(() => Promise.resolve(span).catch(() => {}));
      return null;
    }
    return new GuardedSpan(span);
  }

  /** The run's span, started (at the time engine.run was called) when first needed. */
  function ensureRoot() {
    root ??= start(
      agentName ? `invoke_agent ${agentName}` : 'invoke_agent',
      SPAN_KIND.internal,
      { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agentName || undefined, ...runAttributes },
      startedAt,
      null,
    );
    return root;
  }

  /** The span a section entry of `chain` nests under: the entry that called it, else its task. */
  function sectionParent(event) {
    const caller = entries.get(event.caller);
    if (caller && caller.chain === event.chain) return caller.span;
    return tasks.get(event.chain) ?? caller?.span ?? ensureRoot();
  }

  function flushEnding(event) {
    if (!ending) return;
    const { span, key, time } = ending;
    ending = null;
    if (event?.event === 'tool_result' && `${event.entry}/${event.tool_call_id}` === key) {
      if (content) span?.set({ 'gen_ai.tool.call.result': jsonText(event.content) });
      span?.set({ 'runvil.tool.trusted': event.trusted });
    }
    span?.end(time);
  }

  /**
   * When a call the model asked for started. A batch runs in order: each run of catalog (Pack)
   * calls at once, each local call alone once everything before it is over. So a local call starts
   * when the last call before it ended, a catalog call when the nearest local call before it ended
   * (or the batch arrived); a call still running is a catalog call beside this one.
   */
  function startOf(call) {
    const { batch } = call;
    let time = batch.time;
    for (const prior of batch.calls.slice(0, call.index)) {
      if (prior.end === undefined) continue;
      if (call.local || prior.local) time = Math.max(time, prior.end);
    }
    return time;
  }

  /** The span of a call the model asked for, started now that its start is known. */
  function callSpan(call, time) {
    const { batch, request } = call;
    return start(
      `execute_tool ${request.name}`,
      SPAN_KIND.internal,
      {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': request.name,
        'gen_ai.tool.call.id': request.id,
        'gen_ai.tool.type': 'function',
        'runvil.tool.caller': 'model',
        'gen_ai.tool.call.arguments': content ? jsonText(request.arguments) : undefined,
      },
      time,
      batch.parent,
    );
  }

  function toolEnded(event) {
    const key = `${event.entry}/${event.tool_call_id}`;
    const call = calls.get(key);
    calls.delete(key);
    let span;
    if (call) {
      // A local call's events name no catalog tool.
      call.local = event.tool === undefined;
      call.end = event.time;
      span = callSpan(call, startOf(call));
    } else {
      // A script's tools.call: no event marks its start, so its span starts at the entry's last event.
      span = start(
        `execute_tool ${event.alias}`,
        SPAN_KIND.internal,
        { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': event.alias, 'runvil.tool.caller': 'script' },
        lastSeen.get(event.entry) ?? event.time,
        entries.get(event.entry)?.span ?? ensureRoot(),
      );
    }
    span?.set({ 'runvil.tool.id': event.tool });
    if (event.event === 'tool_call_failed') {
      const message = typeof event.message === 'string' ? event.message : 'the tool call failed';
      span?.fail('tool_call_failed', message);
    }
    ending = { span, key, time: event.time };
  }

  function endEntryCalls(entryId, time, failed) {
    for (const [key, call] of calls) {
      if (!key.startsWith(`${entryId}/`)) continue;
      calls.delete(key);
      // A call the round never ran (another call of its batch ended the round first).
      const span = callSpan(call, call.batch.time);
      span?.set({ 'runvil.tool.ran': false });
      if (failed) span?.fail('not_run', 'the call did not run: its section entry failed first');
      span?.end(time);
    }
  }

  function event(e) {
    if (!isObject(e)) return;
    flushEnding(e);
    if (e.event === 'tool_result') return;
    const time = typeof e.time === 'number' ? e.time : now();
    switch (e.event) {
      case 'run_started':
        Object.assign(runAttributes, { 'runvil.execution': e.execution, 'runvil.seed': e.seed });
        break;
      case 'section_started': {
        if (e.entry === 0 && !root) {
          agentName = typeof e.section === 'string' ? e.section : '';
          ensureRoot();
        }
        const span = start(
          `section ${e.section}`,
          SPAN_KIND.internal,
          {
            'runvil.section.heading': e.heading,
            'runvil.chain': e.chain,
            'runvil.entry': e.entry,
            'runvil.caller': e.caller,
          },
          time,
          sectionParent(e),
        );
        entries.set(e.entry, { span, chain: e.chain });
        break;
      }
      case 'section_finished': {
        const entry = entries.get(e.entry);
        entries.delete(e.entry);
        endEntryCalls(e.entry, time, e.outcome === 'failed');
        entry?.span?.set({ 'runvil.section.outcome': e.outcome });
        if (e.outcome === 'failed') entry?.span?.fail('section_failed', 'the section entry failed');
        entry?.span?.end(time);
        break;
      }
      case 'task_started': {
        const parent = entries.get(e.entry)?.span ?? tasks.get(e.owner) ?? ensureRoot();
        const span = start(
          `task ${e.target}`,
          SPAN_KIND.internal,
          {
            'runvil.task.id': e.id,
            'runvil.task.owner': e.owner,
            'runvil.task.target': e.target,
            'runvil.entry': e.entry,
          },
          time,
          parent,
        );
        tasks.set(e.id, span);
        break;
      }
      case 'task_finished': {
        const span = tasks.get(e.id);
        tasks.delete(e.id);
        span?.set({ 'runvil.task.status': e.status });
        if (e.status === 'failed') span?.fail('task_failed', 'the task failed');
        span?.end(time);
        break;
      }
      case 'assistant_tool_calls': {
        // The calls' spans start once each call's start is known (startOf), at its end.
        /** @type {{ time: number, parent: GuardedSpan | null, calls: any[] }} */
        const batch = { time, parent: entries.get(e.entry)?.span ?? ensureRoot(), calls: [] };
        for (const request of Array.isArray(e.calls) ? e.calls : []) {
          if (!isObject(request)) continue;
          const call = { batch, index: batch.calls.length, request, local: false, end: undefined };
          batch.calls.push(call);
          calls.set(`${e.entry}/${request.id}`, call);
        }
        break;
      }
      case 'tool_call_succeeded':
      case 'tool_call_failed':
        toolEnded({ ...e, time });
        break;
      default:
        break;
    }
    if (e.entry !== undefined) lastSeen.set(e.entry, time);
  }

  /** A model function whose every call is a `chat` span under its section entry. */
  function traced(fn) {
    return function tracedModel(request) {
      const entry = isObject(request) ? entries.get(request.entry) : undefined;
      const spec = isObject(request) && isObject(request.spec) ? request.spec : {};
      const requested = typeof spec.model === 'string' ? spec.model : undefined;
      const span = start(
        requested ? `chat ${requested}` : 'chat',
        SPAN_KIND.client,
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': requested,
          'gen_ai.request.temperature': typeof spec.temperature === 'number' ? spec.temperature : undefined,
          'gen_ai.request.max_tokens': typeof spec.max_tokens === 'number' ? spec.max_tokens : undefined,
          'runvil.role': request?.role,
          'runvil.turn': request?.turn,
          'runvil.chain': request?.chain,
          'runvil.entry': request?.entry,
          'gen_ai.input.messages': content ? jsonText(request?.messages) : undefined,
        },
        now(),
        entry?.span ?? ensureRoot(),
      );
      let answer;
      try {
        answer = Promise.resolve(fn(request));
      } catch (error) {
        answer = Promise.reject(error);
      }
      return answer.then(
        (reply) => {
          if (span && isObject(reply)) {
            const usage = isObject(reply.usage) ? reply.usage : {};
            span.set({
              'gen_ai.response.model': typeof reply.model === 'string' ? reply.model : undefined,
              'gen_ai.response.id': typeof reply.id === 'string' ? reply.id : undefined,
              'gen_ai.usage.input_tokens': Number.isFinite(usage.input_tokens) ? usage.input_tokens : undefined,
              'gen_ai.usage.output_tokens': Number.isFinite(usage.output_tokens) ? usage.output_tokens : undefined,
              'gen_ai.response.finish_reasons':
                typeof reply.finish_reason === 'string' ? [reply.finish_reason] : undefined,
            });
            if (content) {
              const { content: text, tool_calls: toolCalls, finish_reason: finish } = reply;
              span.set({
                'gen_ai.output.messages': jsonText([
                  { role: 'assistant', content: text ?? null, tool_calls: toolCalls, finish_reason: finish },
                ]),
              });
            }
          }
          span?.end(now());
          return reply;
        },
        (error) => {
          const message =
            quietly(() => (error instanceof Error ? error.message : String(error))) ?? 'the model call failed';
          span?.fail('model_error', message, error instanceof Error ? error : message);
          span?.end(now());
          throw error;
        },
      );
    };
  }

  /** @param {any} models a role map or a resolver (role, spec) => modelFn */
  function models(models) {
    if (typeof models === 'function') {
      return (role, spec) => {
        const fn = models(role, spec);
        return typeof fn === 'function' ? traced(fn) : fn;
      };
    }
    return Object.fromEntries(
      Object.entries(models).map(([role, fn]) => [role, typeof fn === 'function' ? traced(fn) : fn]),
    );
  }

  /** The run is over: the run's span ends with its outcome, and so does anything left open. */
  function finish(outcome) {
    flushEnding(undefined);
    const time = now();
    const span = ensureRoot();
    const failed = !(isObject(outcome) && outcome.ok === true);
    for (const call of calls.values()) call.span?.end(time);
    for (const { span: open } of entries.values()) open?.end(time);
    for (const open of tasks.values()) open?.end(time);
    calls.clear();
    entries.clear();
    tasks.clear();
    if (span) {
      span.set({ 'runvil.seed': isObject(outcome) ? outcome.seed : undefined });
      if (failed) {
        const error = isObject(outcome) && isObject(outcome.error) ? outcome.error : {};
        const kind = typeof error.kind === 'string' ? error.kind : 'Error';
        span.fail(kind, typeof error.message === 'string' ? error.message : 'the run failed');
      } else if (content) {
        span.set({ 'gen_ai.output.messages': jsonText([{ role: 'assistant', content: outcome.result }]) });
      }
      span.end(time);
    }
  }

  // Neither may throw into the run: a bug here, or a tracer's, must not change the outcome.
  return {
    event: (e) => void quietly(() => event(e)),
    models,
    finish: (outcome) => void quietly(() => finish(outcome)),
  };
}
