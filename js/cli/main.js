// @ts-check
// runvil command line: run one prompt file and print its result. The bin (entries/cli.js) calls
// main() with the Node entry's createEngine.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { openAIChatModel } from '../models/openai.js';
import { scriptedModel } from '../models/scripted.js';
import { userInputPack } from '../packs/reference.js';
import { directoryStore } from '../stores/directory.js';
import { version } from '../version.js';
import { progressReporter } from './progress.js';

const USAGE = `usage: runvil run <prompt.md> [--args "..."] [--seed N] [--events [jsonl]] [--quiet]
                  [--store DIR] [--limit-instructions N] [--limit-memory-bytes N]
                  [--limit-tool-iterations N] [--limit-fanout N]
                  [--model-script replies.json | --model openai:<model>]
       runvil --version | --help

Runs a Runvil prompt and prints its result text to stdout (nothing when the result is null).
On a terminal, progress (section, model round, tool call) goes to stderr as the run goes.

  --args TEXT           the run's argument string (default: empty)
  --seed N              run seed, a decimal u64 (default: random); printed to stderr with --events
  --events [jsonl]      print every run event as one JSON line to stderr, in order, then a
                        last line {"event":"outcome","ok":...,"seed":"..."} (no progress lines)
  --quiet               no progress lines on a terminal
  --store DIR           the run's store is the directory DIR (created when missing); its files
                        are plain files, each batch of changes lands whole even if runvil dies
  --limit-instructions N, --limit-memory-bytes N, --limit-tool-iterations N, --limit-fanout N,
  --limit-section-entries N
                        the run's limits (instructions, memoryBytes, maxToolIterations,
                        fanoutConcurrency, sectionEntries)
  --model-script FILE   JSON array of scripted replies (strings or reply objects), served to every
                        model role in order; the run fails when the script runs out
  --model openai:NAME   every model role runs on NAME at an OpenAI-compatible chat-completions
                        server: RUNVIL_OPENAI_BASE_URL (default https://api.openai.com/v1) and
                        OPENAI_API_KEY from the environment

The Pack user-input is served from this terminal: its ask tool reads the operator's next line.

Exit status: 0 on success; 1 when the run fails (stderr: "<Kind>: <message>"); 2 on usage errors;
130 when interrupted (Ctrl-C cancels the run: its store changes so far are kept).`;

/** --limit-<name> options and the engine limits they set. */
const LIMIT_OPTIONS = {
  'limit-instructions': 'instructions',
  'limit-memory-bytes': 'memoryBytes',
  'limit-tool-iterations': 'maxToolIterations',
  'limit-fanout': 'fanoutConcurrency',
  'limit-section-entries': 'sectionEntries',
};

/** `--events jsonl` is `--events` with its only format named. */
function normalizeArgv(argv) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--events=jsonl') out.push('--events');
    else if (argv[i] === '--events' && argv[i + 1] === 'jsonl') {
      out.push('--events');
      i++;
    } else out.push(argv[i]);
  }
  return out;
}

/**
 * Says what is wrong (and how to call runvil) on stderr, and exits with status 2.
 * @param {string} [message]
 * @returns {never}
 */
function usage(message) {
  if (message) process.stderr.write(`runvil: ${message}\n`);
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}

async function readJson(path, what) {
  let text;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    usage(`cannot read ${what} '${path}': ${error.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    usage(`${what} '${path}' is not JSON: ${error.message}`);
  }
}

/** Lines of stdin, read only when asked for; `null` once stdin has ended. */
function stdinLines() {
  let buffer = '';
  let ended = false;
  let started = false;
  const waiting = [];
  const flush = () => {
    while (waiting.length) {
      const i = buffer.indexOf('\n');
      if (i >= 0) {
        const line = buffer.slice(0, i).replace(/\r$/, '');
        buffer = buffer.slice(i + 1);
        waiting.shift()(line);
      } else if (ended) {
        const rest = buffer;
        buffer = '';
        waiting.shift()(rest === '' ? null : rest);
      } else return;
    }
  };
  const onData = (chunk) => {
    buffer += chunk;
    flush();
  };
  const onEnd = () => {
    ended = true;
    flush();
  };
  return {
    next() {
      if (!started) {
        started = true;
        process.stdin.setEncoding('utf8');
        process.stdin.on('data', onData).on('end', onEnd);
      }
      const answer = new Promise((resolve) => waiting.push(resolve));
      flush();
      return answer;
    },
    close() {
      if (started) {
        process.stdin.off('data', onData).off('end', onEnd);
        process.stdin.pause();
      }
    },
  };
}

/**
 * Runs the command line `argv` (without node and the script) and answers the exit status.
 * @param {string[]} argv
 * @param {typeof import('../index.d.ts').createEngine} createEngine the Node entry's
 */
export async function main(argv, createEngine) {
  let parsed;
  try {
    parsed = parseArgs({
      args: normalizeArgv(argv),
      allowPositionals: true,
      options: {
        args: { type: 'string', default: '' },
        seed: { type: 'string' },
        events: { type: 'boolean', default: false },
        quiet: { type: 'boolean', short: 'q', default: false },
        store: { type: 'string' },
        ...Object.fromEntries(Object.keys(LIMIT_OPTIONS).map((name) => [name, { type: 'string' }])),
        'model-script': { type: 'string' },
        model: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    usage(error.message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`runvil ${version}\n`);
    return 0;
  }
  const [command, file, ...extra] = positionals;
  if (command !== 'run') usage(command ? `unknown command '${command}'` : 'missing command');
  if (!file) usage('missing prompt file');
  if (extra.length) usage(`unexpected argument '${extra[0]}'`);
  if (values.seed !== undefined && !/^[0-9]+$/.test(values.seed)) {
    usage(`--seed must be a decimal integer (got '${values.seed}')`);
  }

  let source;
  try {
    source = await readFile(file, 'utf8');
  } catch (error) {
    usage(`cannot read prompt '${file}': ${error.message}`);
  }

  const options = {
    args: values.args,
    ui: { kind: 'cli', interactive: Boolean(process.stdin.isTTY) },
  };
  if (values.seed !== undefined) options.seed = values.seed;
  for (const [name, limit] of Object.entries(LIMIT_OPTIONS)) {
    if (values[name] === undefined) continue;
    if (!/^[1-9][0-9]*$/.test(values[name]) || !Number.isSafeInteger(Number(values[name]))) {
      usage(`--${name} must be a positive integer (got '${values[name]}')`);
    }
    (options.limits ??= {})[limit] = Number(values[name]);
  }
  if (values.store !== undefined) {
    if (values.store === '') usage('--store needs a directory');
    options.store = directoryStore(values.store);
  }
  if (values['model-script'] !== undefined) {
    const replies = await readJson(values['model-script'], 'model script');
    if (!Array.isArray(replies)) usage('the model script must be a JSON array of replies');
    // One script serves every role, in call order: the simplest thing for demos and tests.
    const model = scriptedModel(replies);
    options.models = () => model;
  }
  if (values.model !== undefined) {
    if (values['model-script'] !== undefined) usage('--model and --model-script cannot be used together');
    const match = /^openai:(.+)$/.exec(values.model);
    if (!match) usage(`--model must be openai:<model> (got '${values.model}')`);
    const model = openAIChatModel({
      baseURL: process.env.RUNVIL_OPENAI_BASE_URL || 'https://api.openai.com/v1',
      apiKey: process.env.OPENAI_API_KEY,
      model: match[1],
    });
    options.models = () => model;
  }
  // The operator is whoever sits at this terminal: one line of stdin answers one ask.
  const lines = stdinLines();
  const ask = async () => {
    if (process.stdin.isTTY) process.stderr.write('> ');
    const line = await lines.next();
    if (line === null) throw new Error("the operator's window closed");
    return line;
  };
  options.packs = [userInputPack({ ask })];
  if (values.events) options.onEvent = (event) => process.stderr.write(`${JSON.stringify(event)}\n`);
  else if (process.stderr.isTTY && !values.quiet) {
    options.onEvent = progressReporter((line) => process.stderr.write(`${line}\n`));
  }

  // Ctrl-C cancels the run (it ends Cancelled, its store changes so far committed); a second one
  // is Node's default and ends the process.
  const controller = new AbortController();
  options.signal = controller.signal;
  process.once('SIGINT', () => controller.abort());

  const engine = await createEngine();
  let outcome;
  try {
    outcome = await engine.run(source, options);
  } catch (error) {
    // engine.run rejects only on API misuse: a bug here, not in the prompt.
    process.stderr.write(`runvil: internal error: ${error.stack ?? error}\n`);
    return 1;
  }
  lines.close();
  process.removeAllListeners('SIGINT');
  if (values.events) {
    process.stderr.write(`${JSON.stringify({ event: 'outcome', ok: outcome.ok, seed: outcome.seed })}\n`);
  }
  if (!outcome.ok) {
    process.stderr.write(`${outcome.error.kind}: ${outcome.error.message}\n`);
    return outcome.error.kind === 'Cancelled' && controller.signal.aborted ? 130 : 1;
  }
  if (outcome.result !== null && outcome.result !== undefined) {
    process.stdout.write(outcome.result.endsWith('\n') ? outcome.result : `${outcome.result}\n`);
  }
  return 0;
}
