// @ts-check
// scriptedModel: a model function that plays back canned replies, for tests and offline demos.
import { isObject, markModel } from '../core/values.js';

function normalizeReply(reply, index) {
  if (typeof reply === 'string') return { content: reply, finish_reason: 'stop' };
  if (isObject(reply)) return { ...reply };
  throw new TypeError(`scriptedModel: reply ${index} must be a string or a reply object`);
}

/**
 * `replies` are answered in order, one per model call.
 * @type {typeof import('../index.d.ts').scriptedModel}
 */
export function scriptedModel(replies) {
  if (!Array.isArray(replies)) throw new TypeError('scriptedModel: replies must be an array');
  // Validate up front so a bad script fails where it is written, not mid-run.
  const queue = replies.map(normalizeReply);
  let used = 0;
  const model = async (_request) => {
    if (used >= queue.length) throw new Error(`scripted model has no reply left (${used} used)`);
    return queue[used++];
  };
  Object.defineProperty(model, 'used', { get: () => used });
  return markModel(model);
}
