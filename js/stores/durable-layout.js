// @ts-check
// How a durable-object store lays a workspace out in the object's key-value storage, and the sizes
// both sides keep to (docs/store.md, "The Durable Object store"). Shared by the object
// (durable-object.js) and the Worker side (durable.js); no platform import.

/**
 * Bytes per stored chunk of a file. The KV-backed storage backend caps a value at 128 KiB
 * (131,072 bytes, counted after V8 serialization, which adds a few tag bytes); the SQLite backend
 * allows 2 MB. 128,000 keeps a margin under the smaller limit, so one layout works on both.
 */
export const CHUNK_BYTES = 128_000;
/** Keys per get/put/delete call (the KV-backed backend's limit on multi-key calls). */
export const KEYS_PER_CALL = 128;
/**
 * Bytes of file contents one storage transaction (and one RPC message) carries at most. The
 * KV-backed backend caps one write operation at 16 MiB and RPC messages are capped too; 4 MiB
 * leaves room for metadata and deletions.
 */
export const TRANSACTION_BYTES = 4 * 1024 * 1024;
/** File contents a commit's final transaction may carry inline; larger writes are staged first. */
export const INLINE_BYTES = 2 * 1024 * 1024;
/** Files listed per storage list() call. */
export const LIST_PAGE = 1000;

/** `f:<path>` → `{ v, size, n }`: a file's current version id, size and chunk count. */
export const FILE_PREFIX = 'f:';
/** `d:<path>` → 1: a directory kept without files. */
export const DIR_PREFIX = 'd:';
/** `c:<version>:<index>` → Uint8Array: one chunk of one version of a file. */
export const CHUNK_PREFIX = 'c:';
/** `m:staged` → `{ [version]: chunkCount }`: chunks written ahead of a commit not yet applied. */
export const STAGED_KEY = 'm:staged';

export const chunkKey = (version, index) => `${CHUNK_PREFIX}${version}:${index}`;

/** Version ids: random UUIDs, so the Worker can name a version before the object has seen it. */
export const VERSION_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** How many chunks hold `size` bytes (an empty file has none). */
export const chunkCount = (size) => Math.ceil(size / CHUNK_BYTES);

/** The `index`-th chunk of `bytes`, as a copy: a view would carry (and store) its whole buffer. */
export const chunkOf = (bytes, index) => bytes.slice(index * CHUNK_BYTES, (index + 1) * CHUNK_BYTES);

/** Concatenates byte arrays. */
export function concatBytes(parts, size) {
  const out = new Uint8Array(size ?? parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/** Splits `items` into groups of at most `size`. */
export function groups(items, size) {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
