// @ts-check
// `runvil run --otlp URL`: a small Tracer that keeps the run's spans, and their export as one
// OTLP/HTTP request (JSON encoding) when the run is over. No OpenTelemetry package is needed: the
// engine uses a Tracer through `startSpan` and a few span methods (js/core/trace.js), which this
// one implements.

const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');
/** How long the export may take before runvil gives up on the collector. */
const EXPORT_TIMEOUT_MS = 10_000;

const hex = (bytes) =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');

/** Milliseconds since the epoch (fractions kept) as OTLP's decimal nanoseconds string. */
function nanos(ms) {
  const whole = Math.floor(ms);
  return (BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6))).toString();
}

const now = () => performance.timeOrigin + performance.now();

/** An attribute value as OTLP's AnyValue. */
function anyValue(value) {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValue) } };
  return { stringValue: String(value) };
}

const keyValues = (attributes) => Object.entries(attributes).map(([key, value]) => ({ key, value: anyValue(value) }));

/** One span as the Tracer below keeps it. */
class RecordedSpan {
  constructor(name, options, parent) {
    this.traceId = parent?.traceId ?? hex(16);
    this.spanId = hex(8);
    this.parentSpanId = parent?.spanId;
    this.name = name;
    // OTLP numbers kinds from 1 (INTERNAL); the API from 0.
    this.kind = (Number.isInteger(options?.kind) ? options.kind : 0) + 1;
    this.start = typeof options?.startTime === 'number' ? options.startTime : now();
    this.end_ = undefined;
    this.attributes = { ...(options?.attributes ?? {}) };
    this.status = { code: 0 };
    this.events = [];
  }
  setAttribute(key, value) {
    this.attributes[key] = value;
    return this;
  }
  setAttributes(attributes) {
    Object.assign(this.attributes, attributes);
    return this;
  }
  setStatus(status) {
    this.status = { code: status.code, ...(status.message ? { message: status.message } : {}) };
    return this;
  }
  recordException(exception, time) {
    const message = exception instanceof Error ? exception.message : String(exception);
    const type = exception instanceof Error ? exception.name : 'Error';
    this.events.push({
      time: typeof time === 'number' ? time : now(),
      name: 'exception',
      attributes: { 'exception.type': type, 'exception.message': message },
    });
  }
  end(time) {
    this.end_ ??= typeof time === 'number' ? time : now();
  }
  /** The span in OTLP JSON. */
  toOtlp() {
    return {
      traceId: this.traceId,
      spanId: this.spanId,
      ...(this.parentSpanId ? { parentSpanId: this.parentSpanId } : {}),
      name: this.name,
      kind: this.kind,
      startTimeUnixNano: nanos(this.start),
      endTimeUnixNano: nanos(this.end_ ?? now()),
      attributes: keyValues(this.attributes),
      events: this.events.map((e) => ({
        timeUnixNano: nanos(e.time),
        name: e.name,
        attributes: keyValues(e.attributes),
      })),
      status: this.status,
    };
  }
}

/** A Tracer that keeps every span it starts; `spans` lists them in start order. */
export function recordingTracer() {
  /** @type {RecordedSpan[]} */
  const spans = [];
  return {
    spans,
    startSpan(name, options, context) {
      const parent = context?.getValue?.(SPAN_KEY);
      const span = new RecordedSpan(name, options, parent instanceof RecordedSpan ? parent : undefined);
      spans.push(span);
      return span;
    },
  };
}

/**
 * Where `--otlp URL` posts: as for OTEL_EXPORTER_OTLP_ENDPOINT, URL is the collector's base and the
 * traces path `v1/traces` is appended; a URL already ending in `/v1/traces` is used as it is.
 * Throws a TypeError for a URL that is not http(s).
 * @param {string} given
 */
export function tracesUrl(given) {
  let url;
  try {
    url = new URL(given);
  } catch {
    throw new TypeError(`--otlp needs an http(s) URL (got '${given}')`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`--otlp needs an http(s) URL (got '${given}')`);
  if (!url.pathname.endsWith('/v1/traces')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.href;
}

/**
 * Request headers from OTEL_EXPORTER_OTLP_HEADERS / OTEL_EXPORTER_OTLP_TRACES_HEADERS
 * (`key=value,key2=value2`, values URL-encoded), as the OpenTelemetry exporters read them.
 * @param {Record<string, string | undefined>} env
 */
export function otlpHeaders(env) {
  /** @type {Record<string, string>} */
  const headers = {};
  for (const list of [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS]) {
    for (const pair of (list ?? '').split(',')) {
      const at = pair.indexOf('=');
      if (at <= 0) continue;
      try {
        headers[decodeURIComponent(pair.slice(0, at).trim()).toLowerCase()] = decodeURIComponent(
          pair.slice(at + 1).trim(),
        );
      } catch {
        /* a malformed pair is skipped, as the exporters do */
      }
    }
  }
  return headers;
}

/** The OTLP/HTTP JSON body (an ExportTraceServiceRequest) for `spans`. */
export function otlpBody(spans, { serviceName, version }) {
  return {
    resourceSpans: [
      {
        resource: { attributes: keyValues({ 'service.name': serviceName, 'service.version': version }) },
        scopeSpans: [{ scope: { name: 'runvil', version }, spans: spans.map((s) => s.toOtlp()) }],
      },
    ],
  };
}

/**
 * Posts the spans to the collector; answers `null`, or why it failed (never throws: the run's exit
 * status does not depend on the collector).
 * @param {string} url the traces URL (tracesUrl)
 * @param {RecordedSpan[]} spans
 * @param {{ serviceName: string, version: string, headers?: Record<string, string> }} options
 */
export async function exportSpans(url, spans, { serviceName, version, headers = {} }) {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(otlpBody(spans, { serviceName, version })),
      signal: AbortSignal.timeout(EXPORT_TIMEOUT_MS),
    });
    // The body is read so the connection is released; its text says why a collector refused.
    const text = await response.text().catch(() => '');
    if (!response.ok) return `the collector answered ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
    return null;
  } catch (error) {
    const cause = error?.cause?.message ?? error?.cause?.code;
    return `${error?.message ?? error}${cause ? ` (${cause})` : ''}`;
  }
}
