// @ts-check
// The journal of a run (docs/journal.md): every answer the run received from outside, so that the
// run can be replayed with no host parts, or resumed after the last answer it got.
//
// A run's requests are deterministic given its answers, so each answer is keyed by what asked for
// it: a model call, a tool call or a clock reading by its chain (`0`, `0.k`, ...) and its place in
// that chain's requests (`seq`, counted when the request is made); the store's listing once; a
// lazy store read by its path; a role's model binding by the role. Concurrent chains (fanout arms,
// tasks) then find their answers whatever order they ran in.
//
// This module wraps the bridge's parts (models, packs, store, clock, conversations, signal) for
// one run; engine.js hooks it in and hands its outcome to `finish`.
import { describe, isObject } from './values.js';

export const JOURNAL_VERSION = 1;
const FORMAT = 'runvil-journal';
const KINDS = ['model', 'tool', 'clock', 'role', 'store-open', 'store-read', 'call', 'end'];
const CHAINED = ['model', 'tool', 'clock'];

/** A 53-bit string hash as 14 hex digits (cyrb53): change detection, not security. */
export function digest(text, seed = 0) {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, '0');
}

/**
 * The source's digest and one digest per part (the frontmatter, the H1 body, each `##` section),
 * so that a changed prompt is reported by the part that changed. The split only names parts in
 * messages; the whole-source digest decides.
 */
export function sourceDigest(source) {
  /** @type {{ heading: string, lines: string[] }[]} */
  const parts = [];
  /** @type {{ heading: string, lines: string[] }} */
  let current = { heading: '', lines: [] };
  let fence = null;
  let inFront = source.startsWith('---\n') || source.startsWith('---\r\n');
  if (inFront) current.heading = 'the frontmatter';
  const lines = source.split('\n');
  for (const [i, line] of lines.entries()) {
    if (inFront && i > 0 && /^(---|\.\.\.)\s*$/.test(line)) {
      current.lines.push(line);
      parts.push(current);
      current = { heading: 'the body', lines: [] };
      inFront = false;
      continue;
    }
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (!inFront && marker) {
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
    }
    const heading = !inFront && fence === null && /^(#{1,2})\s+(.*)$/.exec(line);
    if (heading) {
      if (current.lines.length) parts.push(current);
      const title = heading[2].trim();
      current = { heading: heading[1] === '#' ? `the H1 body '${title}'` : `section '${title}'`, lines: [] };
    }
    current.lines.push(line);
  }
  parts.push(current);
  return {
    hash: digest(source),
    parts: parts.map((p) => ({ name: p.heading || 'the body', hash: digest(p.lines.join('\n')) })),
  };
}

/** What changed between a recorded source digest and the run's (null: nothing). */
function changedPart(recorded, now) {
  if (recorded.hash === now.hash) return null;
  const was = recorded.parts ?? [];
  for (let i = 0; i < Math.max(was.length, now.parts.length); i++) {
    const a = was[i];
    const b = now.parts[i];
    if (!a) return `${b.name} was added`;
    if (!b) return `${a.name} was removed`;
    if (a.name !== b.name) return `${a.name} became ${b.name}`;
    if (a.hash !== b.hash) return `${a.name} changed`;
  }
  return 'its text changed';
}

// Store data: text as is, bytes as base64 (a journal is JSON).
function encodeData(data) {
  if (data === undefined || data === null) return null;
  if (typeof data === 'string') return data;
  if (data instanceof Uint8Array) {
    let binary = '';
    for (let i = 0; i < data.length; i += 0x8000) binary += String.fromCharCode(...data.subarray(i, i + 0x8000));
    return { base64: btoa(binary) };
  }
  return data; // not store data: the engine reports it as it would without a journal
}

function decodeData(data) {
  if (data === null) return undefined;
  if (isObject(data) && typeof data.base64 === 'string') {
    const binary = atob(data.base64);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }
  return data;
}

function encodeListing(listing) {
  if (!isObject(listing) || !Array.isArray(listing.files)) return listing;
  const files = listing.files.map((f) => {
    if (!isObject(f) || f.data === undefined) return f;
    return { ...f, data: encodeData(f.data) };
  });
  return { ...listing, files };
}

function decodeListing(listing) {
  if (!isObject(listing) || !Array.isArray(listing.files)) return listing;
  return {
    ...listing,
    files: listing.files.map((f) => (isObject(f) && f.data !== undefined ? { ...f, data: decodeData(f.data) } : f)),
  };
}

/** A Pack as the journal keeps it: what the engine reads of it (src/wasm/host.rs, pack_spec). */
function packSpec(pack) {
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
function asJson(value, what) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return { error: `${what} is not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (text === undefined) return { error: `${what} is not JSON (it is ${describe(value)})` };
  return { value: JSON.parse(text) };
}

const quote = (value) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

/** What an entry asked for, in words (divergence messages). */
function what(entry) {
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
function sameRequest(recorded, asked) {
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

/**
 * Checks the journal options of a run; answers null when the run keeps no journal.
 * @param {{ record?: unknown, replay?: unknown, resume?: unknown, resumeInFlight?: unknown }} options
 */
export function journalMode({ record, replay, resume, resumeInFlight }) {
  if (record !== undefined && typeof record !== 'boolean' && typeof record !== 'function') {
    throw new TypeError(
      `engine.run: record must be true or a function (entry) => void | Promise<void> (got ${describe(record)})`,
    );
  }
  if (replay !== undefined && resume !== undefined) {
    throw new TypeError(
      'engine.run: replay and resume exclude each other (resume replays its entries, then goes on live)',
    );
  }
  if (resumeInFlight !== undefined && resumeInFlight !== 'refuse' && resumeInFlight !== 'retry') {
    throw new TypeError(`engine.run: resumeInFlight must be 'refuse' or 'retry' (got ${describe(resumeInFlight)})`);
  }
  if (replay !== undefined) checkJournal(replay, 'replay');
  if (resume !== undefined) checkJournal(resume, 'resume');
  const journal = /** @type {any[] | undefined} */ (replay ?? resume);
  const recorder = typeof record === 'function' ? record : undefined;
  if (!journal && !record) return null;
  return {
    live: replay === undefined,
    option: replay !== undefined ? 'replay' : 'resume',
    given: journal && journal.length ? journal : undefined,
    keep: record === true,
    recorder,
    retryInFlight: resumeInFlight === 'retry',
  };
}

/**
 * One run's journal.
 * @param {NonNullable<ReturnType<typeof journalMode>>} mode
 * @param {{ source: string, args: string, seed: string, ui: object, limits?: object,
 *   packs?: any[], engineVersion: string, signal: AbortSignal,
 *   textOf: (error: unknown, who: string) => string }} run
 */
export function createJournal(mode, run) {
  const header = mode.given?.[0];
  /** key -> recorded entry, for the answers to give back */
  const recorded = new Map();
  /** `chain#seq` -> the `call` entry of a non-idempotent tool call that went out */
  const sent = new Map();
  for (const entry of mode.given?.slice(1) ?? []) {
    if (entry.kind === 'end') continue;
    if (entry.kind === 'call') sent.set(`${entry.chain}#${entry.seq}`, entry);
    else recorded.set(keyOf(entry), entry);
  }
  const used = new Set();
  /** The whole journal, for `record: true`: what was given (its end entry aside), then what follows. */
  const entries = mode.given ? mode.given.filter((e) => e.kind !== 'end') : [];
  const seqs = new Map();
  let divergence = null;
  let recordFailure = null;
  let queue = Promise.resolve();
  const controller = new AbortController();
  const endedCancelled = mode.given?.some((e) => e.kind === 'end' && e.error?.kind === 'Cancelled');

  // The run's signal: the caller's, and the journal's own for a divergence (which ends the run
  // at once, uncatchable, as `Determinism`; finish() says why).
  if (run.signal.aborted) controller.abort();
  else run.signal.addEventListener('abort', () => controller.abort(), { once: true });

  function keyOf(entry) {
    if (CHAINED.includes(entry.kind)) return `${entry.chain}#${entry.seq}`;
    if (entry.kind === 'role') return `role ${entry.role}`;
    if (entry.kind === 'store-read') return `read ${entry.path}`;
    return entry.kind;
  }

  /** Hands an entry to the journal; resolves once `record` has taken it (and every one before). */
  function add(entry) {
    entries.push(entry);
    if (!mode.recorder) return Promise.resolve();
    const recorder = mode.recorder;
    queue = queue.then(async () => {
      if (recordFailure) return;
      try {
        await recorder(entry);
      } catch (error) {
        recordFailure = `the run was stopped: the journal could not record an answer (${run.textOf(error, 'record')})`;
        // Acting on an answer that was not kept would break the promise `record` makes.
        controller.abort();
      }
    });
    return queue.then(() => {
      if (recordFailure) throw new Error(recordFailure);
    });
  }

  function diverge(message) {
    divergence ??= message;
    controller.abort();
    return new Error(divergence);
  }

  const where = (asked) =>
    `chain ${asked.chain} #${asked.seq}${asked.section !== undefined ? ` in section '${asked.section}'` : ''}`;

  /**
   * The recorded answer to `asked` ({ entry } or { missing: true }), or a divergence (thrown).
   * Live runs (resume) treat a missing answer as one to ask for.
   */
  function lookup(asked) {
    const key = keyOf(asked);
    const entry = recorded.get(key);
    if (!entry) {
      if (mode.live) return null;
      if (endedCancelled) {
        // The recorded run was cancelled before this answer came: so is the replay.
        controller.abort();
        throw new Error('the run was cancelled');
      }
      throw diverge(
        `the run diverged from the journal at ${where(asked)}: the journal has no answer for ${what(asked)}`,
      );
    }
    used.add(key);
    if (!sameRequest(entry, asked)) {
      throw diverge(
        `the run diverged from the journal at ${where(asked)}: the journal recorded ${what(entry)}${
          entry.kind === asked.kind && entry.section !== asked.section ? ` in section '${entry.section}'` : ''
        }, the run asked for ${what(asked)}${
          asked.kind === 'model' && entry.kind === 'model' && entry.request?.digest !== asked.request.digest
            ? ' with other messages'
            : ''
        } instead`,
      );
    }
    return entry;
  }

  function nextSeq(chain) {
    const seq = (seqs.get(chain) ?? 0) + 1;
    seqs.set(chain, seq);
    return seq;
  }

  /**
   * Settles a live answer: records it (the answer waits for `record`), unless the run was
   * cancelled. `fieldsOf(value)` answers the entry's answer fields and the value the engine gets,
   * or an error.
   */
  async function settleLive(asked, call, fieldsOf, sending) {
    let value;
    let error;
    // Nothing goes out while an earlier entry is still on its way to `record`: a host that
    // persists entries never makes a call its log does not lead up to.
    await queue;
    if (recordFailure) throw new Error(recordFailure);
    // A call that must not be made twice is logged as sent before it goes out, so a resume knows
    // it may have taken effect (mode.retryInFlight).
    if (sending) await add(sending);
    try {
      value = await call();
    } catch (thrown) {
      error = thrown instanceof Error ? thrown.message : String(thrown);
    }
    // An answer cut short by cancellation is not an answer from outside: a resume asks again.
    if (controller.signal.aborted) {
      if (error !== undefined) throw new Error(error);
      return value;
    }
    let fields;
    if (error === undefined) {
      const made = fieldsOf(value);
      if ('error' in made) error = made.error;
      else ({ fields, value } = made);
    }
    await add({ ...asked, ...(error !== undefined ? { error } : fields) });
    if (error !== undefined) throw new Error(error);
    return value;
  }

  // --- models -----------------------------------------------------------------------------
  /** request object -> { chain, entry, digest, messages } from the conversation copies */
  const roundOf = new WeakMap();
  const conversationDigests = new Map();

  function conversations(inner) {
    return {
      request(id, base, appendedText, toolsText, role, specText, section, turn, chain, entry) {
        const request = inner.request(id, base, appendedText, toolsText, role, specText, section, turn);
        // A conversation only grows: its digest is chained over what each round appends.
        const previous = conversationDigests.get(id) ?? '';
        const next = digest(`${previous}\n${appendedText}\n${toolsText ?? ''}`);
        conversationDigests.set(id, next);
        roundOf.set(request, { chain, entry, digest: next, messages: request.messages.length });
        return request;
      },
      end(id) {
        conversationDigests.delete(id);
        inner.end(id);
      },
      get size() {
        return inner.size;
      },
    };
  }

  function modelAsked(request) {
    const round = roundOf.get(request);
    const chain = String(round?.chain ?? request.chain ?? '0');
    const messages = Array.isArray(request.messages) ? request.messages : [];
    return {
      kind: 'model',
      chain,
      seq: nextSeq(chain),
      entry: round?.entry ?? request.entry,
      section: String(request.section),
      role: String(request.role),
      turn: request.turn,
      request: {
        messages: round?.messages ?? messages.length,
        digest: round?.digest ?? digest(JSON.stringify({ messages, tools: request.tools ?? null })),
      },
    };
  }

  function modelFn(live) {
    return (request) => {
      const asked = modelAsked(request);
      const entry = lookup(asked);
      if (entry)
        return 'error' in entry
          ? Promise.reject(new Error(entry.error))
          : Promise.resolve(structuredCloneJson(entry.reply));
      return settleLive(
        asked,
        () => live(request),
        (value) => {
          const json = asJson(value, "the model's reply");
          return 'error' in json ? { error: json.error } : { fields: { reply: json.value }, value: json.value };
        },
      );
    };
  }

  /** The run's models: recorded bindings and replies first, the host's after (resume, record). */
  function models(hostModels) {
    return (role, spec) => {
      const key = `role ${role}`;
      const entry = recorded.get(key);
      let bound;
      let live;
      if (entry) {
        used.add(key);
        bound = entry.bound;
        if (bound && mode.live) live = resolve(hostModels, role, spec);
      } else if (!mode.live) {
        diverge(
          `the run diverged from the journal: it asked for a model for role ${role}, which the journal does not name`,
        );
        return undefined;
      } else {
        live = resolve(hostModels, role, spec);
        if (live !== undefined && typeof live !== 'function') return live; // misuse, reported by engine.js
        bound = typeof live === 'function';
        add({ kind: 'role', role, bound }).catch(() => {});
      }
      if (!bound) return undefined;
      const missing = () => Promise.reject(new Error(`no model is bound to the role ${role}`));
      return modelFn(live ?? missing);
    };
  }

  function resolve(hostModels, role, spec) {
    if (typeof hostModels === 'function') return hostModels(role, spec);
    return isObject(hostModels) && Object.hasOwn(hostModels, role) ? hostModels[role] : undefined;
  }

  // --- packs ------------------------------------------------------------------------------
  function toolFn(packName, toolName, live, idempotent) {
    const tool = `${packName}/${toolName}`;
    return (args, ctx) => {
      const chain = String(ctx?.chain ?? '0');
      const asked = {
        kind: 'tool',
        chain,
        seq: nextSeq(chain),
        entry: ctx?.entry,
        section: String(ctx?.section),
        tool,
        arguments: args,
      };
      const entry = lookup(asked);
      if (entry) return 'error' in entry ? Promise.reject(new Error(entry.error)) : Promise.resolve(entry.output);
      const key = `${chain}#${asked.seq}`;
      const sending =
        idempotent || sent.has(key)
          ? undefined
          : { kind: 'call', chain, seq: asked.seq, entry: asked.entry, section: asked.section, tool, arguments: args };
      return settleLive(
        asked,
        () => live(args, ctx),
        (value) => ({ fields: { output: value }, value }),
        sending,
      );
    };
  }

  /** The run's Packs: the host's (tools wrapped), or in replay the recorded specs. */
  function packs(hostPacks) {
    const specs = mode.live ? (hostPacks ?? []) : header.packs;
    const noTool = () => Promise.reject(new Error('the journal has no answer for this tool call'));
    return specs.map((pack) => {
      const out = mode.live ? { ...pack } : structuredCloneJson(pack);
      out.tools = (pack.tools ?? []).map((t) => ({
        ...(mode.live ? t : structuredCloneJson(t)),
        call: toolFn(pack.name, t.name, mode.live ? t.call : noTool, t.idempotent !== false),
      }));
      return out;
    });
  }

  // --- store ------------------------------------------------------------------------------
  /** @type {any} */
  let storeHost;
  let storeEnded = false;
  let opened = false;
  /** @type {any[]} */
  const held = [];
  /** @param {{ open: Function, read: Function, commit: Function, end: Function } | undefined} host */
  function store(host) {
    const recordedOrLive = async (key, live, toEntry, fromEntry) => {
      const entry = recorded.get(key);
      if (entry) {
        used.add(key);
        if ('error' in entry) throw new Error(entry.error);
        return fromEntry(entry);
      }
      if (!mode.live || !live) {
        throw diverge(
          `the run diverged from the journal: the journal has no answer for the store's ${key.replace('read ', 'read of ')}`,
        );
      }
      let answer;
      try {
        answer = { value: await live() };
      } catch (error) {
        answer = { error: error instanceof Error ? error.message : String(error) };
      }
      if (controller.signal.aborted) {
        if ('error' in answer) throw new Error(answer.error);
        return answer.value;
      }
      const made = 'error' in answer ? { error: answer.error } : toEntry(answer.value);
      await add(made);
      if ('error' in answer) throw new Error(answer.error);
      return answer.value;
    };
    const hostLive = mode.live ? host : undefined;
    storeHost = host;
    return {
      open: () => {
        opened = true;
        return recordedOrLive(
          'store-open',
          hostLive ? () => hostLive.open() : mode.live ? async () => ({ files: [] }) : undefined,
          (listing) => ({ kind: 'store-open', listing: encodeListing(listing) }),
          (entry) => decodeListing(entry.listing),
        );
      },
      read: (path) =>
        recordedOrLive(
          `read ${path}`,
          hostLive ? () => hostLive.read(path) : undefined,
          (data) => ({ kind: 'store-read', path, data: encodeData(data) }),
          (entry) => decodeData(entry.data),
        ),
      commit: async (changes) => {
        if (!host) return; // replay without a store: the changes land nowhere
        if (mode.given) {
          // A replayed or resumed run holds its changes and commits them once, when it ends
          // (docs/store.md, "Resuming a run"): the store may already hold any prefix of the
          // recorded run's batches, and committing the batches again in order could fail halfway
          // or take the store back through older states.
          held.push(...changes);
          return;
        }
        // A batch goes out only once every entry before it is recorded: what a store holds
        // follows from the journal, so a resume reproduces it (a clock reading is handed to the
        // run before its entry is written).
        await queue;
        if (recordFailure) throw new Error(recordFailure);
        return host.commit(changes);
      },
      end: () => {
        if (mode.given && opened)
          storeEnded = true; // after the held batch (finish)
        else host?.end();
      },
    };
  }

  /** The held changes of a replayed or resumed run, committed as one batch (a Vfs failure text, or null). */
  async function commitHeld() {
    if (!storeHost || !mode.given) return null;
    const batch = finalState(held);
    held.length = 0;
    try {
      if (batch.length) await storeHost.commit(batch);
      return null;
    } catch (error) {
      return `store backend failure: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      if (storeEnded) storeHost.end();
    }
  }

  // --- clock ------------------------------------------------------------------------------
  /** The prompt's clock: a recorded reading, else the host's (recorded). Synchronous. */
  function clock(chain) {
    const asked = { kind: 'clock', chain: String(chain), seq: nextSeq(String(chain)) };
    let entry;
    try {
      entry = lookup(asked);
    } catch {
      return Date.now(); // the run is ending with the divergence already
    }
    if (entry) return entry.ms;
    const ms = Date.now();
    // A reading is synchronous: `record` gets it now, and the next answer waits for it.
    add({ ...asked, ms }).catch(() => {});
    return ms;
  }

  // --- the run ----------------------------------------------------------------------------
  /** Checks the recorded header against this run (replay, resume); a divergence message or null. */
  function checkHeader() {
    if (!header) return null;
    const now = sourceDigest(run.source);
    const changed = changedPart(header.source, now);
    if (changed) return `the prompt is not the one the journal recorded: ${changed}`;
    if (header.args !== run.args) {
      return `the run's argument string ${quote(run.args)} is not the one the journal recorded, ${quote(header.args)}`;
    }
    if (header.seed !== run.seed)
      return `the run's seed ${run.seed} is not the one the journal recorded, ${header.seed}`;
    return null;
  }

  /** @returns {Promise<{ kind: 'Determinism' | 'Tool', message: string } | null>} why the run cannot start */
  async function start() {
    const mismatch = checkHeader();
    if (mismatch) return { kind: 'Determinism', message: mismatch };
    const inFlight = [...sent].filter(([key]) => !recorded.has(key)).map(([, entry]) => entry);
    if (mode.live && inFlight.length && !mode.retryInFlight) {
      const first = inFlight[0];
      return {
        kind: 'Tool',
        message: `the run was not resumed: the tool ${first.tool} is not idempotent and its call (chain ${first.chain} #${first.seq} in section '${first.section}', with ${quote(first.arguments)}) went out without an answer when the run stopped${inFlight.length > 1 ? ` (and ${inFlight.length - 1} more)` : ''}; check whether it took effect, then resume with resumeInFlight: 'retry' to make it again`,
      };
    }
    if (!header) {
      const made = {
        journal: FORMAT,
        version: JOURNAL_VERSION,
        engine: run.engineVersion,
        source: sourceDigest(run.source),
        args: run.args,
        seed: run.seed,
        ui: run.ui,
        packs: (run.packs ?? []).map(packSpec),
      };
      if (run.limits) made.limits = run.limits;
      const json = asJson(made, 'a Pack spec');
      if ('error' in json) throw new TypeError(`engine.run: record: ${json.error}`);
      await add(json.value).catch(() => {});
    }
    return null;
  }

  /** The run's outcome as the caller gets it: a divergence as `Determinism`, the journal if kept. */
  async function finish(outcome) {
    let done = outcome;
    const storeFailure = await commitHeld();
    if (storeFailure && done.ok) {
      done = { ...done, ok: false, error: { kind: 'Vfs', message: storeFailure } };
      delete done.result;
    }
    if (!divergence && !mode.live && (outcome.ok || outcome.error?.kind !== 'Cancelled')) {
      const unused = [...recorded.keys()].filter((k) => !used.has(k));
      if (unused.length) {
        const first = recorded.get(unused[0]);
        divergence = `the run ended with ${unused.length} recorded answer${unused.length === 1 ? '' : 's'} it never asked for (the first: ${what(first)}${first.chain ? ` at chain ${first.chain} #${first.seq}` : ''})`;
      }
    }
    const failure = divergence
      ? { kind: 'Determinism', message: divergence }
      : recordFailure
        ? { kind: 'Cancelled', message: recordFailure }
        : null;
    if (failure) {
      done = { ...outcome, ok: false, error: failure };
      delete done.result;
    }
    const end = done.ok
      ? { kind: 'end', ok: true, result: done.result ?? null }
      : { kind: 'end', ok: false, error: { kind: done.error.kind, message: done.error.message } };
    await add(end).catch(() => {});
    await queue;
    if (mode.keep) done = { ...done, journal: entries };
    return done;
  }

  return { start, finish, models, packs, store, clock, conversations, signal: controller.signal };
}

/** A copy of JSON data (recorded answers are handed out as copies, so a host cannot change the journal). */
function structuredCloneJson(value) {
  return JSON.parse(JSON.stringify(value));
}

const depth = (path) => path.split('/').length;

/**
 * A run's changes as one batch that takes any store holding a prefix of them (in any partition
 * into batches) to where the whole sequence takes it: every path the changes touch set to its
 * final state — deletions deepest first, then directories, then writes. A path deleted before it
 * was written again is deleted first too, so a directory the prefix left there gives way to the
 * file. Applying the batch twice leaves what applying it once does.
 * @param {any[]} changes
 */
export function finalState(changes) {
  const last = new Map();
  const deletedBefore = new Set();
  for (const change of changes) {
    if (change.op === 'delete') deletedBefore.add(change.path);
    last.set(change.path, change);
  }
  const present = [...last.values()].filter((c) => c.op !== 'delete').map((c) => `${c.path}/`);
  // A path deleted and then given a file below it is a directory again (made by the write).
  const holdsSomething = (path) => present.some((p) => p.startsWith(`${path}/`));
  const deletes = [...last.values()]
    .filter((c) => (c.op === 'delete' && !holdsSomething(c.path)) || (c.op === 'write' && deletedBefore.has(c.path)))
    .map((c) => ({ op: 'delete', path: c.path }));
  deletes.sort((a, b) => depth(b.path) - depth(a.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const mkdirs = [...last.values()].filter((c) => c.op === 'mkdir');
  mkdirs.sort((a, b) => depth(a.path) - depth(b.path));
  const writes = [...last.values()].filter((c) => c.op === 'write');
  return [...deletes, ...mkdirs, ...writes];
}
