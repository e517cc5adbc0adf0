// @ts-check
// A journal's entries (docs/journal.md, "Format"): the header, the kinds, the key each answer is
// found by, how a journal is checked before a run reads it, and entries in words for messages.
import { describe, isObject } from '../values.js';

export const JOURNAL_VERSION = 1;
export const FORMAT = 'runvil-journal';
const KINDS = ['model', 'tool', 'clock', 'role', 'store-open', 'store-read', 'call', 'end'];
const CHAINED = ['model', 'tool', 'clock'];

/** The key an answer is recorded and found by. */
export function keyOf(entry) {
  if (CHAINED.includes(entry.kind)) return `${entry.chain}#${entry.seq}`;
  if (entry.kind === 'role') return `role ${entry.role}`;
  if (entry.kind === 'store-read') return `read ${entry.path}`;
  return entry.kind;
}

/** A Pack as the journal keeps it: what the engine reads of it (src/wasm/host.rs, pack_spec). */
export function packSpec(pack) {
  const spec = { name: pack.name };
  if (typeof pack.description === 'string') spec.description = pack.description;
  spec.tools = (pack.tools ?? []).map((t) => {
    const tool = { name: t.name };
    for (const key of ['description', 'trust', 'output']) if (typeof t[key] === 'string') tool[key] = t[key];
    if (typeof t.idempotent === 'boolean') tool.idempotent = t.idempotent;
    if (t.parameters !== undefined) tool.parameters = t.parameters;
    return tool;
  });
  if (typeof pack.prelude === 'string') spec.prelude = pack.prelude;
  if (typeof pack.unavailable === 'string' || isObject(pack.unavailable)) spec.unavailable = pack.unavailable;
  return spec;
}

/** `value` as JSON, or a TypeError-free failure text. */
export function asJson(value, what) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return { error: `${what} is not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (text === undefined) return { error: `${what} is not JSON (it is ${describe(value)})` };
  return { value: JSON.parse(text) };
}

/** A copy of JSON data (recorded answers are handed out as copies, so a host cannot change the journal). */
export function structuredCloneJson(value) {
  return JSON.parse(JSON.stringify(value));
}

/** A value in a message: its JSON, cut at 120 characters. */
export const quote = (value) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

/** What an entry asked for, in words (divergence messages). */
export function what(entry) {
  switch (entry.kind) {
    case 'model': {
      const n = entry.request?.messages;
      return `a model call (role ${entry.role}, turn ${entry.turn}, ${n ?? '?'} message${n === 1 ? '' : 's'})`;
    }
    case 'tool':
      return `a tool call ${entry.tool} with ${quote(entry.arguments)}`;
    case 'clock':
      return 'a clock reading';
    default:
      return `a ${entry.kind} entry`;
  }
}

/** Whether a recorded entry answers the request the run made now. */
export function sameRequest(recorded, asked) {
  if (recorded.kind !== asked.kind) return false;
  if (asked.kind === 'clock') return true;
  if (recorded.section !== asked.section) return false;
  if (asked.kind === 'model') {
    return (
      recorded.role === asked.role &&
      recorded.turn === asked.turn &&
      recorded.request?.digest === asked.request.digest &&
      recorded.request?.messages === asked.request.messages
    );
  }
  return recorded.tool === asked.tool && JSON.stringify(recorded.arguments) === JSON.stringify(asked.arguments);
}

/**
 * Checks a journal (for `replay`) or the entries so far (for `resume`): an array whose first entry
 * is the header, then well-formed entries with no key twice. Throws a TypeError naming the first
 * fault.
 * @param {unknown} journal
 * @param {'replay' | 'resume'} option
 */
export function checkJournal(journal, option) {
  /** @type {(why: string) => never} */
  const fail = (why) => {
    throw new TypeError(`engine.run: ${option}: ${why}`);
  };
  if (!Array.isArray(journal)) {
    fail(`a journal is an array of entries, the first its header (got ${describe(journal)})`);
  }
  if (journal.length === 0) {
    if (option === 'resume') return;
    fail('the journal is empty (it needs at least its header entry)');
  }
  const header = journal[0];
  if (!isObject(header) || header.journal !== FORMAT) {
    fail(`entry 0 is not a journal header (it needs journal: '${FORMAT}')`);
  }
  if (header.version !== JOURNAL_VERSION) {
    fail(`the journal is version ${quote(header.version)}; this engine reads version ${JOURNAL_VERSION}`);
  }
  if (typeof header.args !== 'string') fail('the header needs args, a string');
  if (typeof header.seed !== 'string' || !/^[0-9]+$/.test(header.seed)) fail('the header needs seed, a decimal string');
  if (!isObject(header.source) || typeof header.source.hash !== 'string') fail('the header needs source.hash');
  if (!Array.isArray(header.packs)) fail('the header needs packs, an array');
  for (const [i, pack] of header.packs.entries()) {
    if (!isObject(pack) || typeof pack.name !== 'string' || !Array.isArray(pack.tools)) {
      fail(`header.packs[${i}] needs a string name and a tools array`);
    }
    for (const [j, tool] of pack.tools.entries()) {
      if (!isObject(tool) || typeof tool.name !== 'string') fail(`header.packs[${i}].tools[${j}] needs a string name`);
    }
  }
  const seen = new Set();
  for (let i = 1; i < journal.length; i++) {
    const entry = journal[i];
    if (!isObject(entry)) fail(`entry ${i} is ${describe(entry)}, not an object`);
    if (!KINDS.includes(entry.kind)) {
      fail(`entry ${i} has an unknown kind ${quote(entry.kind)} (known: ${KINDS.join(', ')})`);
    }
    /** @type {string} */
    let key = entry.kind;
    if (CHAINED.includes(entry.kind) || entry.kind === 'call') {
      if (typeof entry.chain !== 'string' || !/^0(\.[0-9]+)*$/.test(entry.chain)) {
        fail(`entry ${i} (${entry.kind}) needs a chain id like '0' or '0.2' (got ${quote(entry.chain)})`);
      }
      if (!Number.isSafeInteger(entry.seq) || entry.seq < 1) {
        fail(`entry ${i} (${entry.kind}) needs seq, a positive integer (got ${quote(entry.seq)})`);
      }
      key = `${entry.kind === 'call' ? 'call ' : ''}${entry.chain}#${entry.seq}`;
    }
    if (entry.kind === 'call' && (typeof entry.tool !== 'string' || typeof entry.section !== 'string')) {
      fail(`entry ${i} (call) needs a string tool and section`);
    }
    if (entry.kind === 'clock' && !Number.isFinite(entry.ms)) fail(`entry ${i} (clock) needs ms, a finite number`);
    if (entry.kind === 'model') {
      if (typeof entry.role !== 'string' || typeof entry.section !== 'string' || !Number.isSafeInteger(entry.turn)) {
        fail(`entry ${i} (model) needs a string role and section and an integer turn`);
      }
      if (!('error' in entry) && !isObject(entry.reply)) fail(`entry ${i} (model) needs reply, an object, or error`);
    }
    if (entry.kind === 'tool') {
      if (typeof entry.tool !== 'string' || typeof entry.section !== 'string') {
        fail(`entry ${i} (tool) needs a string tool and section`);
      }
      if (!('error' in entry) && typeof entry.output !== 'string')
        fail(`entry ${i} (tool) needs output, a string, or error`);
    }
    if ('error' in entry && entry.kind !== 'end' && typeof entry.error !== 'string')
      fail(`entry ${i} (${entry.kind}): error must be a string`);
    if (entry.kind === 'role') {
      if (typeof entry.role !== 'string' || typeof entry.bound !== 'boolean') {
        fail(`entry ${i} (role) needs a string role and a boolean bound`);
      }
      key = `role ${entry.role}`;
    }
    if (entry.kind === 'store-open') {
      if (!('error' in entry) && !isObject(entry.listing)) fail(`entry ${i} (store-open) needs listing, an object`);
      key = 'store-open';
    }
    if (entry.kind === 'store-read') {
      if (typeof entry.path !== 'string') fail(`entry ${i} (store-read) needs a string path`);
      key = `read ${entry.path}`;
    }
    if (seen.has(key)) fail(`entry ${i} repeats ${key.replace('#', ' #')}`);
    seen.add(key);
  }
}

/** The seed a journal option carries, for a caller that must know it before the run (the worker). */
export function journalSeed(options) {
  const journal = options?.replay ?? options?.resume;
  const seed = Array.isArray(journal) && isObject(journal[0]) ? journal[0].seed : undefined;
  return typeof seed === 'string' ? seed : undefined;
}
