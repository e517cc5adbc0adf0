// @ts-check
// `runvil check FILE...`: every static error of each prompt file, nothing run (docs/check.md).
import { readFile } from 'node:fs/promises';
import { userInputPack, webPack } from '../packs/reference.js';
import { parseCommandLine } from './command-line.js';

export const CHECK_USAGE = `usage: runvil check <prompt.md>... [--format text|json] [--pack MODULE]...

Checks each prompt without running it and prints every static error (frontmatter, Markdown
structure, Lua syntax in every block, placeholders, heading references of call/jump/require/
tasks.spawn/tasks.fanout/prompt.list), each with the message a run would give:
  FILE:LINE:COL: error: message       (or warning:)

  --format json         print one JSON array of { file, severity, kind, message, line, column,
                        section } instead
  --pack MODULE         also check uses: against the Packs the run would serve: the reference
                        Packs (user-input, web) and those MODULE exports (repeatable)

Exit status: 0 when no file has an error (warnings allowed); 1 when one has; 2 on usage errors.`;

/**
 * Runs `runvil check` with `argv` (after the command) and answers the exit status.
 * @param {string[]} argv
 * @param {typeof import('../index.d.ts').createEngine} createEngine
 * @param {(path: string) => Promise<any[]>} packsOf how `run` loads a `--pack` module
 */
export async function checkCommand(argv, createEngine, packsOf) {
  const parsed = parseCommandLine('check', CHECK_USAGE, argv, {
    format: { type: 'string', default: 'text' },
    pack: { type: 'string', multiple: true, default: [] },
  });
  if ('status' in parsed) return parsed.status;
  const { values, positionals: files, usage } = parsed;
  if (files.length === 0) return usage('missing prompt file');
  const sources = [];
  for (const file of files) {
    try {
      sources.push(await readFile(file, 'utf8'));
    } catch (error) {
      return usage(`cannot read prompt '${file}': ${error.message}`);
    }
  }
  let options;
  if (values.pack.length) {
    // The Packs `run` serves; check never calls a tool, so user-input's operator is never asked.
    const packs = [userInputPack({ ask: async () => '' }), webPack()];
    for (const path of values.pack) packs.push(...(await packsOf(path)));
    options = { packs };
  }
  const engine = await createEngine();
  const found = [];
  for (const [i, file] of files.entries()) {
    for (const diagnostic of await engine.check(sources[i], options)) found.push({ file, ...diagnostic });
  }
  if (values.format === 'json') {
    process.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
  } else {
    for (const d of found) process.stdout.write(`${d.file}:${d.line}:${d.column}: ${d.severity}: ${d.message}\n`);
  }
  return found.some((d) => d.severity === 'error') ? 1 : 0;
}
