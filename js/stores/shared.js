// What the durable stores (indexedDbStore, durableObjectStore) share: bytes in and out, the check
// of paths a host hands their host API, and the batches a run still has in flight.

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A stored file as the engine takes it: text when it is UTF-8, the bytes otherwise. */
export function fromBytes(bytes) {
  try {
    return utf8.decode(bytes);
  } catch {
    return bytes;
  }
}

/** A host-given file content as bytes of its own (a copy: the host may reuse its buffer). */
export function toBytes(what, path, value) {
  if (typeof value === 'string') return new TextEncoder().encode(value);
  if (value instanceof Uint8Array) return value.slice();
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  throw new TypeError(`${what}: the content of '${path}' must be a string, Uint8Array or ArrayBuffer`);
}

/**
 * A host-given path must be a store path the engine would accept (chapter 004): relative,
 * `/`-separated, no empty, `.` or `..` segment, no backslash or control character.
 */
export function checkHostPath(what, path) {
  if (typeof path !== 'string' || path === '') throw new TypeError(`${what}: a store path must be a non-empty string`);
  if (path.startsWith('/') || path.endsWith('/')) throw new TypeError(`${what}: '${path}' must be relative and must not end with /`);
  if (/[\\\u0000-\u001f\u007f]/.test(path)) throw new TypeError(`${what}: '${path}' contains a backslash or a control character`);
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') throw new TypeError(`${what}: '${path}' has an empty, '.' or '..' segment`);
  }
}

/**
 * Keeps `batch` (a commit's promise) in `inFlight` until it settles, and returns it: a run's
 * `end()` awaits `Promise.all(inFlight)` before it lets another run in (a cancelled run stops
 * waiting for its batches; the store must not).
 */
export function trackBatch(inFlight, batch) {
  const settled = batch.then(() => {}, () => {});
  inFlight.add(settled);
  settled.then(() => inFlight.delete(settled));
  return batch;
}
