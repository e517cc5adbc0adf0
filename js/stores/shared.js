// @ts-check
// What the stores share (memoryStore, directoryStore, indexedDbStore, durableObjectStore and its
// object): a file's bytes in and out, the checks of store paths, and the batches a run still has
// in flight.

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A stored file as the engine and hosts take it: its text when the bytes are UTF-8, else the bytes
 * as a plain Uint8Array over the same memory (a Node Buffer becomes one; nothing is copied).
 * @param {Uint8Array} bytes
 * @returns {string | Uint8Array}
 */
export function fromBytes(bytes) {
  try {
    return utf8.decode(bytes);
  } catch {
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
}

/**
 * A host-given file content as bytes of its own (a copy: the host may reuse its buffer).
 * @param {string} what who checks, for the TypeError
 * @param {string} path
 * @param {unknown} value
 */
export function toBytes(what, path, value) {
  if (typeof value === 'string') return new TextEncoder().encode(value);
  if (value instanceof Uint8Array) return value.slice();
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  throw new TypeError(`${what}: the content of '${path}' must be a string, Uint8Array or ArrayBuffer`);
}

/**
 * The least a store asks of a path it is handed (read() is called by hosts too; the engine's paths
 * are valid already): a non-empty string.
 * @param {string} what
 * @param {unknown} path
 * @returns {asserts path is string}
 */
export function checkPathString(what, path) {
  if (typeof path !== 'string' || path === '') throw new TypeError(`${what}: a store path must be a non-empty string`);
}

/**
 * Whether `path` is relative and `/`-separated with no empty, `.` or `..` segment (chapter 004):
 * the part of the store path rule every store that maps paths onto its backend checks.
 * @param {unknown} path
 * @returns {path is string}
 */
export function isRelativePath(path) {
  return (
    typeof path === 'string' &&
    path !== '' &&
    !path.startsWith('/') &&
    path.split('/').every((s) => s !== '' && s !== '.' && s !== '..')
  );
}

/**
 * A host-given path must be a store path the engine would accept (chapter 004): relative,
 * `/`-separated, no empty, `.` or `..` segment, no backslash or control character.
 * @param {string} what
 * @param {unknown} path
 * @returns {asserts path is string}
 */
export function checkHostPath(what, path) {
  checkPathString(what, path);
  if (path.startsWith('/') || path.endsWith('/')) {
    throw new TypeError(`${what}: '${path}' must be relative and must not end with /`);
  }
  if (/[\\\u0000-\u001f\u007f]/.test(path)) {
    throw new TypeError(`${what}: '${path}' contains a backslash or a control character`);
  }
  if (!isRelativePath(path)) throw new TypeError(`${what}: '${path}' has an empty, '.' or '..' segment`);
}

/**
 * Keeps `batch` (a commit's promise) in `inFlight` until it settles, and returns it: a run's
 * `end()` awaits `Promise.all(inFlight)` before it lets another run in (a cancelled run stops
 * waiting for its batches; the store must not).
 * @template T
 * @param {Set<Promise<void>>} inFlight
 * @param {Promise<T>} batch
 */
export function trackBatch(inFlight, batch) {
  const settled = batch.then(
    () => {},
    () => {},
  );
  inFlight.add(settled);
  settled.then(() => inFlight.delete(settled));
  return batch;
}
