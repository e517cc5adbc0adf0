// @ts-check
// The heart of a run's journal: the answers it was given (replay, resume) and the ones the run
// gets live, handed to `record` in order. Each host part (journal/models.js, packs.js, store.js,
// the clock) asks it for a recorded answer by what asked for it, or settles a live one through it.
// A divergence from the journal, or an answer `record` could not take, stops the run through the
// ledger's signal.
import { keyOf, sameRequest, what } from './format.js';

/**
 * The ledger of one run.
 * @param {NonNullable<ReturnType<typeof import('./mode.js').journalMode>>} mode
 * @param {{ signal: AbortSignal, textOf: (error: unknown, who: string) => string }} run
 */
export function createLedger(mode, run) {
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
  // at once, uncatchable, as `Determinism`; the journal's finish says why).
  if (run.signal.aborted) controller.abort();
  else run.signal.addEventListener('abort', () => controller.abort(), { once: true });

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

  /** Resolves once every entry so far is with `record`; throws when `record` failed. */
  async function settled() {
    await queue;
    if (recordFailure) throw new Error(recordFailure);
  }

  function diverge(message) {
    divergence ??= message;
    controller.abort();
    return new Error(divergence);
  }

  /** The recorded entry under `key`, marked as asked for (a replay must ask for every one). */
  function take(key) {
    const entry = recorded.get(key);
    if (entry) used.add(key);
    return entry;
  }

  const where = (asked) =>
    `chain ${asked.chain} #${asked.seq}${asked.section !== undefined ? ` in section '${asked.section}'` : ''}`;

  /**
   * The recorded answer to `asked` (a model or tool call, a clock reading), or a divergence
   * (thrown). Live runs (resume) treat a missing answer as one to ask for (null).
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

  /** The next request number of `chain`. */
  function nextSeq(chain) {
    const seq = (seqs.get(chain) ?? 0) + 1;
    seqs.set(chain, seq);
    return seq;
  }

  /**
   * Settles a live answer: records it (the answer waits for `record`), unless the run was
   * cancelled. `fieldsOf(value)` answers the entry's answer fields and the value the engine gets,
   * or an error. `sending`, when given, is recorded before the call goes out.
   */
  async function settleLive(asked, call, fieldsOf, sending) {
    let value;
    let error;
    // Nothing goes out while an earlier entry is still on its way to `record`: a host that
    // persists entries never makes a call its log does not lead up to.
    await settled();
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

  return {
    add,
    settled,
    diverge,
    take,
    lookup,
    nextSeq,
    settleLive,
    /** Whether the `call` entry of the non-idempotent call `chain#seq` is in the journal. */
    wasSent: (key) => sent.has(key),
    /** The `call` entries of non-idempotent calls that went out and got no answer. */
    inFlight: () => [...sent].filter(([key]) => !recorded.has(key)).map(([, entry]) => entry),
    /** The keys of recorded answers the run has not asked for. */
    unused: () => [...recorded.keys()].filter((k) => !used.has(k)),
    recorded: (key) => recorded.get(key),
    entries,
    signal: controller.signal,
    get divergence() {
      return divergence;
    },
    get recordFailure() {
      return recordFailure;
    },
    get aborted() {
      return controller.signal.aborted;
    },
  };
}

/** @typedef {ReturnType<typeof createLedger>} Ledger */
