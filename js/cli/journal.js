// @ts-check
// `runvil run`'s journal flags (docs/journal.md, "On the command line"):
//
//   --record FILE          the whole journal as JSON in FILE when the run ends (any outcome)
//   --journal FILE.jsonl   a durable log: each entry appended as one JSON line as the run goes
//                          (fsynced); a file that already holds entries of this prompt and
//                          argument string is resumed from, and one whose run ended is replayed;
//                          a log of another run is refused
//   --fresh                with --journal: the log is emptied first, and the run starts over
//   --replay FILE          replays a journal (either format): no model, tool or operator is called
import { open, readFile, truncate, writeFile } from 'node:fs/promises';
import { sourceDigest } from '../core/journal.js';

/**
 * Entries from a journal file: a JSON array (what --record writes) or JSON lines (what --journal
 * appends). A last line cut short by a crash is not an entry: `torn` says where the good part
 * ends, so an append can go on from there.
 * @param {string} text
 * @param {string} path
 * @param {(message: string) => never} usage
 */
export function parseJournalText(text, path, usage) {
  if (/^\s*\[/.test(text)) {
    try {
      return { entries: JSON.parse(text), torn: undefined };
    } catch (error) {
      usage(`the journal '${path}' is not JSON: ${error.message}`);
    }
  }
  const entries = [];
  let offset = 0;
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    const last = i === lines.length - 1;
    if (line.trim() !== '') {
      try {
        entries.push(JSON.parse(line));
      } catch (error) {
        // Only the last line may be torn (a write the process did not finish).
        if (last) return { entries, torn: { at: Buffer.byteLength(text.slice(0, offset)), line: i + 1 } };
        usage(`the journal '${path}' line ${i + 1} is not JSON: ${error.message}`);
      }
    }
    offset += line.length + 1;
  }
  return { entries, torn: undefined };
}

/** Reads a journal file; `undefined` when it does not exist. */
async function readJournal(path, usage) {
  let text = '';
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return undefined;
    usage(`cannot read the journal '${path}': ${error.message}`);
  }
  return parseJournalText(text, path, usage);
}

/** The journal file as JSON: an array, one entry a line. */
export const journalText = (entries) => `[\n${entries.map((e) => JSON.stringify(e)).join(',\n')}\n]\n`;

/**
 * Why a --journal log is not one of this run (null: it is): another prompt or argument string.
 * @param {any} header
 * @param {{ source: string, args: string }} run
 */
function otherRun(header, run) {
  if (header?.journal !== 'runvil-journal') return null; // not a journal: engine.run says what is wrong
  if (header.source?.hash !== sourceDigest(run.source).hash) return 'it was recorded for another prompt';
  if (header.args !== run.args) {
    return `it was recorded with the argument string ${JSON.stringify(header.args)}, not ${JSON.stringify(run.args)}`;
  }
  return null;
}

/**
 * The run options the flags ask for, and what to do when the run has ended.
 * @param {{ record?: string, journal?: string, replay?: string, fresh?: boolean, 'retry-in-flight'?: boolean }} values
 * @param {{ source: string, args: string }} run
 * @param {(message: string) => never} usage
 * @param {(line: string) => void} warn
 */
export async function journalOptions(values, run, usage, warn) {
  const { record, journal, replay, fresh } = values;
  /** @type {{ record?: any, replay?: any[], resume?: any[], resumeInFlight?: 'retry' }} */
  const options = {};
  let log;
  if (replay !== undefined && journal !== undefined) usage('--replay and --journal cannot be used together');
  if (replay !== undefined && record !== undefined) usage('--replay and --record cannot be used together');
  if (fresh && journal === undefined) usage('--fresh needs --journal (it empties the log to start over)');
  if (values['retry-in-flight'] && journal === undefined) usage('--retry-in-flight needs --journal');
  for (const [flag, path] of [
    ['--record', record],
    ['--journal', journal],
    ['--replay', replay],
  ]) {
    if (path === '') usage(`${flag} needs a file`);
  }
  if (replay !== undefined) {
    const read = await readJournal(replay, usage);
    if (!read) usage(`cannot read the journal '${replay}': no such file`);
    if (read.torn)
      warn(`runvil: the journal '${replay}' ends in a torn line (${read.torn.line}); replaying what precedes it`);
    options.replay = read.entries;
  }
  /** Everything the run's journal holds, for --record with --journal. */
  let all = [];
  if (journal !== undefined) {
    if (fresh) await writeFile(journal, '');
    const read = await readJournal(journal, usage);
    const entries = read?.entries ?? [];
    const other = entries.length ? otherRun(entries[0], run) : null;
    if (other) {
      usage(
        `the journal '${journal}' is not of this run: ${other}; pass --fresh to start over (the log is emptied; the store is left as it is), or give another --journal file`,
      );
    }
    if (values['retry-in-flight']) options.resumeInFlight = 'retry';
    if (read?.torn) {
      warn(`runvil: the journal '${journal}' ends in a torn line (${read.torn.line}); resuming from what precedes it`);
      await truncate(journal, read.torn.at);
    }
    if (entries.length && entries.at(-1)?.kind === 'end') {
      // The logged run finished: running it again gives its outcome again, with no call.
      options.replay = entries;
    } else {
      if (entries.length) options.resume = entries;
      all = [...entries];
      log = await open(journal, 'a');
      const handle = log;
      options.record = async (entry) => {
        all.push(entry);
        await handle.write(`${JSON.stringify(entry)}\n`);
        await handle.datasync();
      };
    }
  } else if (record !== undefined) {
    options.record = true;
  }

  /** Writes --record's file, closes the log; the outcome loses its journal (printed with --json otherwise). */
  async function finish(outcome) {
    const { journal: kept, ...rest } = outcome ?? {};
    await log?.close();
    if (record !== undefined) {
      const entries = kept ?? (all.length ? all : (options.replay ?? []));
      try {
        await writeFile(record, journalText(entries));
      } catch (error) {
        warn(`runvil: cannot write the journal '${record}': ${error.message}`);
      }
    }
    return rest;
  }
  return { options, replaying: options.replay !== undefined, finish };
}
