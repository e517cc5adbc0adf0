#!/usr/bin/env node
// runvil command line: run one prompt file and print its result.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createEngine, scriptedModel, version } from './index.js';

const USAGE = `usage: runvil run <prompt.md> [--args "..."] [--seed N] [--events] [--model-script replies.json]
       runvil --version | --help

Runs a Runvil prompt and prints its result text to stdout (nothing when the result is null).

  --args TEXT           the run's argument string (default: empty)
  --seed N              run seed, a decimal u64 (default: random); printed to stderr with --events
  --events              print every run event as one JSON line to stderr, in order, then a
                        last line {"event":"outcome","ok":...,"seed":"..."}
  --model-script FILE   JSON array of scripted replies (strings or reply objects), served to every
                        model role in order; the run fails when the script runs out

Exit status: 0 on success; 1 when the run fails (stderr: "<Kind>: <message>"); 2 on usage errors.`;

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

async function main(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        args: { type: 'string', default: '' },
        seed: { type: 'string' },
        events: { type: 'boolean', default: false },
        'model-script': { type: 'string' },
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
  if (values.seed !== undefined && !/^[0-9]+$/.test(values.seed)) usage(`--seed must be a decimal integer (got '${values.seed}')`);

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
  if (values['model-script'] !== undefined) {
    const replies = await readJson(values['model-script'], 'model script');
    if (!Array.isArray(replies)) usage('the model script must be a JSON array of replies');
    // One script serves every role, in call order: the simplest thing for demos and tests.
    const model = scriptedModel(replies);
    options.models = () => model;
  }
  if (values.events) options.onEvent = (event) => process.stderr.write(`${JSON.stringify(event)}\n`);

  const engine = await createEngine();
  let outcome;
  try {
    outcome = await engine.run(source, options);
  } catch (error) {
    // engine.run rejects only on API misuse: a bug here, not in the prompt.
    process.stderr.write(`runvil: internal error: ${error.stack ?? error}\n`);
    return 1;
  }
  if (values.events) process.stderr.write(`${JSON.stringify({ event: 'outcome', ok: outcome.ok, seed: outcome.seed })}\n`);
  if (!outcome.ok) {
    process.stderr.write(`${outcome.error.kind}: ${outcome.error.message}\n`);
    return 1;
  }
  if (outcome.result !== null && outcome.result !== undefined) {
    process.stdout.write(outcome.result.endsWith('\n') ? outcome.result : `${outcome.result}\n`);
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
