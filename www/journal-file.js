// A run's journal as a file: written as `runvil run --record` writes it (a JSON array, one entry a
// line), named after the prompt, and read back with the engine's own check of its shape, so a
// file that is not a journal is refused before anything on screen changes.
import { checkJournal } from '../pkg/core/journal.js';

/** The file's text: the CLI's format, so either side reads the other's journals. */
export const journalText = (entries) => `[\n${entries.map((e) => JSON.stringify(e)).join(',\n')}\n]\n`;

/** `<prompt-name>.journal.json`: the frontmatter's `name:`, else the title, as a safe file name. */
export function journalFileName(source) {
  const front = /^---\n([\s\S]*?)\n---\n/.exec(source)?.[1] ?? '';
  const name = /^name:\s*['"]?([^'"\n]+?)['"]?\s*$/m.exec(front)?.[1] ?? /^# +(.+)$/m.exec(source.slice(front.length))?.[1] ?? 'prompt';
  const safe = name.trim().toLowerCase().replace(/[^\p{L}\p{N}._-]+/gu, '-').replace(/^[-.]+|-+$/g, '').slice(0, 80);
  return `${safe || 'prompt'}.journal.json`;
}

/** The journal in `file`; throws an Error that says what is wrong with it (the engine's TypeError for a bad shape). */
export async function readJournalFile(file) {
  let value;
  try {
    value = JSON.parse(await file.text());
  } catch (error) {
    throw new Error(`${file.name} is not a journal: it is not JSON (${error.message})`);
  }
  checkJournal(value, 'replay');
  return value;
}
