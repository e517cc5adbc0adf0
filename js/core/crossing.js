// @ts-check
// What crosses into the engine from the host: model replies, tool results, store reads and the
// file data open() hands over are measured against the run's memory ceiling before they are
// copied into wasm memory. An answer whose size alone passes the ceiling could never be held, and
// copying it in would grow the instance's memory for good (a wasm memory never shrinks): it is
// refused here instead, and the engine ends the run with its memory ceiling error
// (docs/reliability.md, "Memory at the edge"). File data open() cannot hand over is left for
// read() to fetch, and be measured, on first use.
//
// The refusal is the rejection `{ tooLarge: bytes }`, a plain object (src/wasm/host.rs reads
// it); every other rejection reaching the engine is an Error (guard.js).

/** The UTF-8 length of `text`, counted only as far as needed to compare with `limit`. */
export function utf8Length(text, limit) {
  if (text.length * 3 <= limit) return -1; // surely within the limit; the engine counts exactly
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Throws the refusal when `text` (or bytes) is larger than `ceiling`; answers `value`. */
function checked(value, ceiling) {
  // Counted exactly whenever it may pass the ceiling, so the refusal names the real size.
  const bytes = typeof value === 'string' ? utf8Length(value, ceiling) : value.byteLength;
  if (bytes > ceiling) throw Object.freeze({ tooLarge: bytes });
  return value;
}

/**
 * A model reply as the engine reads it: its JSON text, once (the engine parses it and drops the
 * text), or `undefined` when it has none (the engine says the reply is not a JSON object). Throws
 * the refusal when the text is larger than `ceiling` (bytes). The run's model functions answer
 * this (model-calls.js).
 * @param {unknown} reply
 * @param {number} ceiling
 */
export function replyText(reply, ceiling) {
  let text;
  try {
    text = JSON.stringify(reply);
  } catch {
    return undefined;
  }
  return typeof text === 'string' ? checked(text, ceiling) : undefined;
}

/**
 * `open()`'s answer with the file data the ceiling cannot hold left out: in the files' order, a
 * file whose data would take the data kept before it past `ceiling` is listed without it, so the
 * engine asks `read()` for it on first use (the store's contract, docs/store.md), where it is
 * measured alone. Data past the ceiling could never be held, and copied in it would grow the
 * instance's memory for good. Anything else is passed on for the engine to judge.
 * @param {any} opened
 * @param {number} ceiling
 */
function listed(opened, ceiling) {
  if (opened === null || typeof opened !== 'object' || !Array.isArray(opened.files)) return opened;
  // No more than the UTF-8 bytes of the data kept so far (a text counts its UTF-16 length while
  // it surely fits), so a file is left out only when the data surely cannot be held.
  let held = 0;
  let changed = false;
  const files = opened.files.map((/** @type {any} */ file) => {
    const data = file !== null && typeof file === 'object' ? file.data : undefined;
    if (typeof data !== 'string' && !(data instanceof Uint8Array)) return file;
    const counted = typeof data === 'string' ? utf8Length(data, ceiling - held) : data.byteLength;
    const bytes = counted === -1 ? data.length : counted;
    if (held + bytes > ceiling) {
      changed = true;
      const rest = { ...file };
      delete rest.data;
      return rest;
    }
    held += bytes;
    return file;
  });
  return changed ? { ...opened, files } : opened;
}

/**
 * The bridge's Pack tools' `call`, the store's `read` and the file data its `open` hands over,
 * with every answer measured against `ceiling` (bytes) first; model replies are measured where
 * the model functions are composed (`replyText`). Changes `bridge` in place.
 * @param {any} bridge
 * @param {number} ceiling
 */
export function measureCrossings(bridge, ceiling) {
  const { packs, store } = bridge;
  if (packs !== undefined) {
    bridge.packs = packs.map((/** @type {any} */ pack) => ({
      ...pack,
      tools: pack.tools?.map((/** @type {any} */ tool) => ({
        ...tool,
        call: async (/** @type {unknown} */ args, /** @type {unknown} */ ctx) => {
          const answer = await tool.call(args, ctx);
          return typeof answer === 'string' ? checked(answer, ceiling) : answer;
        },
      })),
    }));
  }
  if (store !== undefined) {
    bridge.store = {
      ...store,
      open: async (/** @type {unknown[]} */ ...args) => listed(await store.open(...args), ceiling),
      read: async (/** @type {unknown[]} */ ...args) => {
        const data = await store.read(...args);
        return typeof data === 'string' || data instanceof Uint8Array ? checked(data, ceiling) : data;
      },
    };
  }
}
