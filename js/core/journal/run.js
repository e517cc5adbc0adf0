// @ts-check
// One run's journal: the ledger and the host parts wrapped over it (models, Packs, store, clock),
// the recorded header checked (or a new one written) when the run starts, and the outcome as the
// caller gets it when it ends.
import { changedPart, sourceDigest } from './digest.js';
import { FORMAT, JOURNAL_VERSION, asJson, packSpec, quote, what } from './format.js';
import { createLedger } from './ledger.js';
import { journalModels } from './models.js';
import { journalPacks } from './packs.js';
import { journalStore } from './store.js';

/**
 * One run's journal.
 * @param {NonNullable<ReturnType<typeof import('./mode.js').journalMode>>} mode
 * @param {{ source: string, args: string, seed: string, ui: object, limits?: object,
 *   packs?: any[], engineVersion: string, signal: AbortSignal,
 *   textOf: (error: unknown, who: string) => string }} run
 */
export function createJournal(mode, run) {
  const header = mode.given?.[0];
  const ledger = createLedger(mode, run);
  const { models, conversations } = journalModels(ledger, mode);
  const packs = journalPacks(ledger, mode, header?.packs);
  const { store, commitHeld } = journalStore(ledger, mode);

  /** The prompt's clock: a recorded reading, else the host's (recorded). Synchronous. */
  function clock(chain) {
    const asked = { kind: 'clock', chain: String(chain), seq: ledger.nextSeq(String(chain)) };
    let entry;
    try {
      entry = ledger.lookup(asked);
    } catch {
      return Date.now(); // the run is ending with the divergence already
    }
    if (entry) return entry.ms;
    const ms = Date.now();
    // A reading is synchronous: `record` gets it now, and the next answer waits for it.
    ledger.add({ ...asked, ms }).catch(() => {});
    return ms;
  }

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
    const inFlight = ledger.inFlight();
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
      await ledger.add(json.value).catch(() => {});
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
    let divergence = ledger.divergence;
    if (!divergence && !mode.live && (outcome.ok || outcome.error?.kind !== 'Cancelled')) {
      const unused = ledger.unused();
      if (unused.length) {
        const first = ledger.recorded(unused[0]);
        divergence = `the run ended with ${unused.length} recorded answer${unused.length === 1 ? '' : 's'} it never asked for (the first: ${what(first)}${first.chain ? ` at chain ${first.chain} #${first.seq}` : ''})`;
      }
    }
    const failure = divergence
      ? { kind: 'Determinism', message: divergence }
      : ledger.recordFailure
        ? { kind: 'Cancelled', message: ledger.recordFailure }
        : null;
    if (failure) {
      done = { ...outcome, ok: false, error: failure };
      delete done.result;
    }
    const end = done.ok
      ? { kind: 'end', ok: true, result: done.result ?? null }
      : { kind: 'end', ok: false, error: { kind: done.error.kind, message: done.error.message } };
    await ledger.add(end).catch(() => {});
    await ledger.settled().catch(() => {});
    if (mode.keep) done = { ...done, journal: ledger.entries };
    return done;
  }

  return { start, finish, models, packs, store, clock, conversations, signal: ledger.signal };
}
