// @ts-check
// The wrapper's clock: the `time` of every run event and of every trace span.

/**
 * Milliseconds since the epoch, with sub-millisecond precision where the host has
 * `performance.now()`.
 * @type {() => number}
 */
export const now = (() => {
  const perf = globalThis.performance;
  if (perf && typeof perf.now === 'function' && Number.isFinite(perf.timeOrigin)) {
    return () => perf.timeOrigin + perf.now();
  }
  return () => Date.now();
})();
