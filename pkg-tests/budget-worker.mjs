// Runs prompts for budget.test.mjs in a worker thread, so that a block stuck in a synchronous
// loop (the defect the tests guard against) blocks this thread, not the test's: the test's timer
// still fires and terminates the worker. Not a test file. The module to load comes from
// workerData (the package by default, another build when comparing).
import { parentPort, workerData } from 'node:worker_threads';

const { createEngine } = await import(workerData?.pkg ?? '../pkg/index.js');
const engine = await createEngine();
parentPort.on('message', async ({ id, source, options = {}, abortAfterMs }) => {
  if (abortAfterMs !== undefined) {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), abortAfterMs);
    options = { ...options, signal: controller.signal };
  }
  const outcome = await engine.run(source, options);
  parentPort.postMessage({ id, outcome: { ok: outcome.ok, result: outcome.result, error: outcome.error && { kind: outcome.error.kind, message: outcome.error.message } } });
});
parentPort.postMessage({ ready: true });
