// @ts-check
// The journal options of a run (`record`, `replay`, `resume`, `resumeInFlight`), checked, as the
// mode the run's journal works in.
import { describe } from '../values.js';
import { checkJournal } from './format.js';

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
