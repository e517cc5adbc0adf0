// @ts-check
// What the commands `runvil check` and `runvil test` do alike with their command line: parse it,
// print the usage text for --help, and report a usage error (`runvil NAME: message`, then the
// usage text, exit status 2).
import { parseArgs } from 'node:util';

/**
 * @typedef {{ values: Record<string, any>, positionals: string[], usage: (message: string) => 2 }} Parsed
 */

/**
 * Parses `argv` (after the command `name`) by `options` (parseArgs's; `--help`/`-h` is added, and
 * an option `format` must be `text` or `json`). Answers the parsed line with `usage`, which reports
 * a usage error and answers its exit status, or `{ status }` when the command is already done:
 * 0 after --help, 2 after a usage error.
 * @param {string} name
 * @param {string} usageText
 * @param {string[]} argv
 * @param {import('node:util').ParseArgsConfig['options']} options
 * @returns {Parsed | { status: number }}
 */
export function parseCommandLine(name, usageText, argv, options) {
  /** @param {string} message @returns {2} */
  const usage = (message) => {
    process.stderr.write(`runvil ${name}: ${message}\n${usageText}\n`);
    return 2;
  };
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { ...options, help: { type: 'boolean', short: 'h', default: false } },
    });
  } catch (error) {
    return { status: usage(error.message) };
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${usageText}\n`);
    return { status: 0 };
  }
  if ('format' in values && values.format !== 'text' && values.format !== 'json') {
    return { status: usage(`--format must be text or json (got '${values.format}')`) };
  }
  return { values, positionals, usage };
}
