// @ts-check
// Retry timing shared by the provider adapters (openAIChatModel, aiSdkModel): which answers are
// worth another attempt, how long to wait (the server's retry-after, else exponential backoff with
// jitter), a wait the run's signal can cancel, and an attempt's deadline.

export const RETRY_DEFAULTS = {
  maxRetries: 2,
  timeoutMs: 600_000,
  retryDelayMs: 500,
  maxRetryDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

/** HTTP statuses another attempt may fix. */
export const retryableStatus = (s) => s === 408 || s === 409 || s === 429 || (s >= 500 && s <= 599);

/** The adapter's timing options, checked, over the defaults; `who` names the adapter in errors. */
export function retryTiming(options, who) {
  const timing = { ...RETRY_DEFAULTS };
  for (const key of Object.keys(RETRY_DEFAULTS)) {
    const v = options[key];
    if (v === undefined) continue;
    const ok =
      key === 'maxRetries'
        ? Number.isSafeInteger(v) && v >= 0
        : key === 'timeoutMs'
          ? v === Infinity || (Number.isFinite(v) && v > 0)
          : Number.isFinite(v) && v >= 0;
    if (!ok) {
      throw new TypeError(
        `${who}: ${key} must be a ${key === 'maxRetries' ? 'non-negative integer' : 'non-negative number of milliseconds'} (got ${v})`,
      );
    }
    timing[key] = v;
  }
  return timing;
}

/**
 * The options both adapters take about trying again, checked in this order (a TypeError naming
 * `who`): `onRetry`, `unknownToolRetries` (default 1) and the timing (retryTiming).
 */
export function retryOptions(options, who) {
  const { onRetry, unknownToolRetries = 1 } = options;
  if (onRetry !== undefined && typeof onRetry !== 'function') throw new TypeError(`${who}: onRetry must be a function`);
  if (!Number.isSafeInteger(unknownToolRetries) || unknownToolRetries < 0) {
    throw new TypeError(`${who}: unknownToolRetries must be a non-negative integer`);
  }
  return { onRetry, unknownToolRetries, timing: retryTiming(options, who) };
}

/** The wait the server asked for, in ms, or undefined; `headers` has `get(name)`. */
export function retryAfter(headers) {
  const ms = Number.parseFloat(headers?.get?.('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get?.('retry-after');
  if (!value) return undefined;
  const seconds = Number.parseFloat(value);
  if (/^\s*[0-9.]+\s*$/.test(value) && Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The n-th backoff (n from 1): drawn from the upper half of min(max, first * 2^(n-1)). */
export function backoff(n, timing) {
  const base = Math.min(timing.maxRetryDelayMs, timing.retryDelayMs * 2 ** (n - 1));
  return base / 2 + Math.random() * (base / 2);
}

export function cancelled() {
  return new Error('the model call was cancelled');
}

/**
 * Resolves after `ms`, or rejects when `signal` aborts first.
 * @param {number} ms
 * @param {AbortSignal} [signal]
 * @returns {Promise<void>}
 */
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelled());
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelled());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * After failed attempt `n` (from 1): throws the final error when `failure` is not retryable, the
 * retries are used up or the provider asked for a wait past `maxRetryAfterMs`; otherwise reports
 * the retry (`onRetry` and a `model_retry` event) and waits (the provider's `wait`, else the
 * backoff), rejecting if `signal` aborts meanwhile. Shared by both model adapters.
 */
export async function retryOrThrow({ n, failure, retry, wait, timing, onRetry, request, signal }) {
  const tries = n > 1 ? ` (after ${n} attempts)` : '';
  if (!retry || n > timing.maxRetries) throw new Error(failure + tries);
  if (wait !== undefined && wait > timing.maxRetryAfterMs) {
    throw new Error(
      `${failure}; the provider asked to retry after ${Math.ceil(wait / 1000)} s, longer than maxRetryAfterMs${tries}`,
    );
  }
  const delay = wait ?? backoff(n, timing);
  const info = { attempt: n + 1, delay_ms: Math.round(delay), reason: failure };
  try {
    onRetry?.(info);
  } catch {
    /* an observer cannot change the call */
  }
  request.emit?.('model_retry', info);
  await sleep(delay, signal);
}

/**
 * Runs `call(abortSignal, touch)` within `timeoutMs` (renewed by each `touch()`), raced against the
 * run's `signal`, so even a provider that ignores its abort signal cannot keep the run waiting;
 * `abortSignal` aborts at the deadline and on cancellation. Answers `{ value }`, `{ error }` (what
 * `call` threw) or `{ timedOut: true }`; throws `cancelled()` when `signal` aborts first.
 * @template T
 * @param {(abortSignal: AbortSignal, touch: () => void) => Promise<T>} call
 * @param {AbortSignal | undefined} signal
 * @param {number} timeoutMs
 * @returns {Promise<{ value: T } | { error: unknown } | { timedOut: true }>}
 */
export async function withDeadline(call, signal, timeoutMs) {
  const controller = new AbortController();
  let timer;
  /** @type {() => void} */
  let onAbort = () => {};
  let touch = () => {};
  /** @type {Promise<{ timedOut: true }>} */
  const stop = new Promise((resolve, reject) => {
    onAbort = () => {
      controller.abort();
      reject(cancelled());
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (Number.isFinite(timeoutMs)) {
      touch = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          controller.abort();
          resolve({ timedOut: true });
        }, timeoutMs);
      };
      touch();
    }
  });
  const work = (async () => {
    try {
      return { value: await call(controller.signal, () => touch()) };
    } catch (error) {
      return { error };
    }
  })();
  try {
    return await Promise.race([work, stop]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
