// @ts-check
// `runvil test [PATHS]`: runs every `*.test.json` under PATHS and reports each test (docs/testing.md).
// The format is read by test-spec.js; this module finds the files, runs the tests and reports.
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { scriptedModel } from '../models/scripted.js';
import { userInputPack, webPack } from '../packs/reference.js';
import { memoryStore } from '../stores/memory.js';
import { parseCommandLine } from './command-line.js';
import { lineDiff } from './diff.js';
import { SPEC_FORMS, roleSpecs, twiceMessage } from './model-specs.js';
import { exportedPacks } from './pack-module.js';
import { journalText, parseJournalText } from './journal.js';
import { parseTestFile } from './test-spec.js';

export const TEST_USAGE = `usage: runvil test [PATH]... [--jobs N] [--format text|json] [--update --model [ROLE=]SPEC...]

Runs every test in the *.test.json files under each PATH (a file or a directory, searched
recursively but for node_modules and dot-directories; default .), each a fresh run of its prompt
with scripted model replies or a recorded journal, and checks its result or error, store files and
tool calls. Prints one line per test, then what differed for each failure, then "N passed, N failed".

  --jobs N              run up to N tests at once (default: the number of CPUs); the report keeps
                        the order of the files and of the tests in each
  --format json         print one JSON object { passed, failed, tests: [{ name, file, ok, ms,
                        problems }] } instead
  --update              re-record the journal of every journal test from the live model --model
                        gives (the same --model specs runvil run takes) and check the new run; a
                        journal is written only when its new run meets the test's expect
  --model [ROLE=]SPEC   the live model for --update, for ROLE or for every role (repeatable)

Exit status: 0 when every test passed; 1 when one failed; 2 on usage errors and when no test file
is found.`;

/** Directories never searched for tests. */
const SKIPPED = (name) => name === 'node_modules' || name.startsWith('.');

/** The `*.test.json` files under `root` (a directory), sorted by path. */
async function findTests(root) {
  const found = [];
  const entries = await readdir(root, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = resolve(root, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED(entry.name)) found.push(...(await findTests(path)));
    } else if (entry.isFile() && entry.name.endsWith('.test.json')) found.push(path);
  }
  return found;
}

/** A path as the report shows it: relative to the working directory, with `/`. */
const shown = (path) => relative(process.cwd(), path).split(sep).join('/') || '.';

/**
 * The Packs a module exports, as `runvil run --pack` takes them: its default export (a Pack, an
 * array of Packs, or a function answering either) and every named export that is a Pack.
 * @param {string} path
 */
async function packsOf(path) {
  let module;
  try {
    module = await import(pathToFileURL(path).href);
  } catch (error) {
    throw new Problem('packs', `cannot load the Pack module '${shown(path)}': ${error.message}`);
  }
  let first = module.default;
  if (typeof first === 'function') {
    try {
      first = await first();
    } catch (error) {
      throw new Problem('packs', `the Pack module '${shown(path)}' failed making its Packs: ${error.message}`);
    }
  }
  const packs = exportedPacks(module, first);
  if (packs.length === 0) throw new Problem('packs', `the module '${shown(path)}' exports no Pack`);
  return packs;
}

/** Something that makes a test fail: `kind` names what (test, result, error, store, calls, ...). */
class Problem extends Error {
  /**
   * @param {string} kind
   * @param {string} message
   * @param {{ expected?: unknown, actual?: unknown, diff?: string[] }} [detail]
   */
  constructor(kind, message, detail = {}) {
    super(message);
    this.kind = kind;
    this.detail = detail;
  }
  toJSON() {
    return { kind: this.kind, message: this.message, ...this.detail };
  }
}

/** The outcome's error in one line: `Kind: message (line 3, ## Main)` (section: its heading). */
function errorText(error) {
  const where = [error.line !== undefined ? `line ${error.line}` : '', error.section ?? ''].filter(Boolean).join(', ');
  return `${error.kind}: ${error.message}${where ? ` (${where})` : ''}`;
}

/** Two texts that differ, as a line diff; two that only a final newline tells apart, said so. */
function textProblem(kind, what, expected, actual, detail) {
  const bare = (text) => text.replace(/\r?\n$/, '');
  if (bare(expected) === bare(actual)) {
    const which = bare(expected) === expected ? 'the actual' : 'the expected';
    return new Problem(kind, `${what} differs only in a final newline (${which} text ends with one)`, detail);
  }
  return new Problem(kind, `${what} differs (- expected, + actual)`, { ...detail, diff: lineDiff(expected, actual) });
}

/** What the run's outcome and store fail of `expect`. */
async function compare(expect, outcome, store, calls) {
  const problems = [];
  const result = outcome.ok ? (outcome.result ?? null) : undefined;
  if ('result' in expect) {
    if (!outcome.ok) {
      problems.push(
        new Problem('result', `expected a result, the run failed: ${errorText(outcome.error)}`, {
          expected: expect.result,
          actual: { error: outcome.error },
        }),
      );
    } else if (result !== expect.result) {
      const detail = { expected: expect.result, actual: result };
      if (expect.result === null)
        problems.push(new Problem('result', 'expected no result (null), got a result', detail));
      else if (result === null) problems.push(new Problem('result', 'expected a result, got none (null)', detail));
      else {
        problems.push(textProblem('result', 'the result', expect.result, result, detail));
      }
    }
  } else if (outcome.ok) {
    problems.push(
      new Problem('error', 'expected the run to fail, it succeeded', { expected: expect.error, actual: { result } }),
    );
  } else {
    const { kind, contains } = expect.error;
    const wrong = [];
    if (kind !== undefined && outcome.error.kind !== kind) wrong.push(`kind ${kind}`);
    if (contains !== undefined && !outcome.error.message.includes(contains)) {
      wrong.push(`a message containing ${JSON.stringify(contains)}`);
    }
    if (wrong.length) {
      problems.push(
        new Problem('error', `expected an error with ${wrong.join(' and ')}, got ${errorText(outcome.error)}`, {
          expected: expect.error,
          actual: { error: outcome.error },
        }),
      );
    }
  }
  for (const [path, want] of Object.entries(expect.store ?? {})) {
    const have = (await store.read(path)) ?? null;
    if (have === want) continue;
    const detail = { path, expected: want, actual: have };
    if (want === null) problems.push(new Problem('store', `store file '${path}' should not exist`, detail));
    else if (have === null) problems.push(new Problem('store', `store file '${path}' is missing`, detail));
    else problems.push(textProblem('store', `store file '${path}'`, want, have, detail));
  }
  if (expect.calls) {
    const count = (ids) => ids.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map());
    const want = count(expect.calls);
    const have = count(calls);
    const difference = (x, y) =>
      [...x]
        .filter(([id, n]) => n > (y.get(id) ?? 0))
        .map(([id, n]) => `${id}${n - (y.get(id) ?? 0) > 1 ? ` ×${n - (y.get(id) ?? 0)}` : ''}`);
    const missing = difference(want, have);
    const unexpected = difference(have, want);
    if (missing.length || unexpected.length) {
      const parts = [
        missing.length ? `missing: ${missing.join(', ')}` : '',
        unexpected.length ? `unexpected: ${unexpected.join(', ')}` : '',
      ].filter(Boolean);
      problems.push(
        new Problem('calls', `the tool calls differ (${parts.join('; ')})`, {
          expected: [...expect.calls].sort(),
          actual: [...calls].sort(),
        }),
      );
    }
  }
  return problems;
}

/**
 * The run options' models: one scripted model per list of replies (`*` serving every role without
 * its own).
 */
function scriptedModels(replies) {
  const byRole = new Map();
  for (const [role, list] of Object.entries(replies)) {
    try {
      byRole.set(role, scriptedModel(list));
    } catch (error) {
      throw new Problem('test', `replies${role === '*' ? '' : `.${role}`}: ${error.message}`);
    }
  }
  return (role) => byRole.get(role) ?? byRole.get('*');
}

/**
 * Runs one test; answers its problems (none: it passed) and a note for the report line.
 * @param {import('./test-spec.js').TestSpec} test
 * @param {string} file the test file's absolute path
 * @param {{ createEngine: () => Promise<any>, update?: () => Promise<(role: string) => any> }} context
 */
async function runTest(test, file, context) {
  const base = dirname(file);
  const promptPath = resolve(base, test.prompt);
  let source;
  try {
    source = await readFile(promptPath, 'utf8');
  } catch (error) {
    throw new Problem(
      'test',
      `prompt: cannot read '${shown(promptPath)}': ${error.code === 'ENOENT' ? 'no such file' : error.message}`,
    );
  }
  const journalPath = test.journal === undefined ? undefined : resolve(base, test.journal);
  /** @type {any[] | undefined} */
  let recorded;
  if (journalPath !== undefined) {
    let text;
    try {
      text = await readFile(journalPath, 'utf8');
    } catch (error) {
      if (error.code !== 'ENOENT')
        throw new Problem('journal', `journal: cannot read '${shown(journalPath)}': ${error.message}`);
      if (!context.update) {
        throw new Problem(
          'journal',
          `journal: '${shown(journalPath)}' does not exist (record it with runvil test --update --model SPEC)`,
        );
      }
    }
    try {
      if (text !== undefined) {
        recorded = parseJournalText(text, shown(journalPath), (message) => {
          throw new Problem('journal', message);
        }).entries;
      }
    } catch (error) {
      // Re-recording replaces a journal that is not one; only a replay needs it whole.
      if (!context.update) throw error;
    }
  }

  const store = memoryStore({ ...test.store });
  const calls = [];
  let answered = 0;
  const answers = test.answers ?? [];
  const ask = async () => {
    if (answered >= answers.length) throw new Error(`the test has no operator answer left (${answered} used)`);
    return answers[answered++];
  };
  /** @type {Record<string, any>} */
  const options = {
    store,
    onEvent: (event) => {
      if (event.event === 'tool_call_succeeded' || event.event === 'tool_call_failed') calls.push(event.tool);
    },
  };
  const live = journalPath === undefined || context.update !== undefined;
  // A replay takes the recorded args and seed when the test names none; a live run takes the
  // test's, else (re-recording) the old journal's, else '' and 0, so that it is repeatable.
  const header = recorded?.[0] ?? {};
  const args = test.args ?? (live ? (typeof header.args === 'string' ? header.args : '') : undefined);
  const seed = test.seed ?? (live ? (typeof header.seed === 'string' ? header.seed : '0') : undefined);
  if (args !== undefined) options.args = args;
  if (seed !== undefined) options.seed = seed;
  if (live) {
    options.packs = [userInputPack({ ask }), webPack()];
    for (const path of test.packs) options.packs.push(...(await packsOf(resolve(base, path))));
    if (journalPath !== undefined && context.update) {
      options.models = await context.update();
      options.record = true;
    } else if (test.replies) options.models = scriptedModels(test.replies);
  } else options.replay = recorded;

  const engine = await context.createEngine();
  let outcome;
  try {
    outcome = await engine.run(source, options);
  } catch (error) {
    // engine.run rejects only on misuse: here, a journal that is not one, or a bad option.
    const message = String(error.message).replace(/^engine\.run: (replay: )?/, '');
    if (options.replay)
      throw new Problem('journal', `journal '${shown(/** @type {string} */ (journalPath))}': ${message}`);
    throw new Problem('test', message);
  }
  const problems = await compare(test.expect, outcome, store, calls);
  let note;
  if (journalPath !== undefined && context.update) {
    if (problems.length) note = 'journal not updated';
    else {
      await mkdir(dirname(journalPath), { recursive: true });
      await writeFile(journalPath, journalText(outcome.journal));
      note = 'journal recorded';
    }
  }
  return { problems, note };
}

/** The lines that say why a test failed. */
function problemLines(problem) {
  const lines = [`  ${problem.message}`];
  if (problem.detail.diff) lines.push(...problem.detail.diff.map((l) => `    ${l}`));
  else if (problem.kind === 'result' || problem.kind === 'store') {
    for (const [label, value] of [
      ['expected', problem.detail.expected],
      ['actual', problem.detail.actual],
    ]) {
      if (typeof value === 'string') lines.push(`    ${label}:`, ...value.split('\n').map((l) => `      ${l}`));
    }
  } else if (problem.kind === 'error' && problem.detail.actual?.result !== undefined) {
    const result = problem.detail.actual.result;
    lines.push(`    result:${result === null ? ' null' : ''}`);
    if (result !== null) lines.push(...result.split('\n').map((l) => `      ${l}`));
  }
  return lines;
}

/** Runs `work` over `items`, at most `limit` at once; `onDone(i, value)` in the order of `items`. */
async function inOrder(items, limit, work, onDone) {
  const results = new Array(items.length);
  const done = new Array(items.length).fill(false);
  let next = 0;
  let reported = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]);
      done[i] = true;
      while (reported < items.length && done[reported]) {
        onDone(reported, results[reported]);
        reported++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Runs `runvil test` with `argv` (after the command) and answers the exit status.
 * @param {string[]} argv
 * @param {() => Promise<any>} createEngine
 * @param {(spec: string, flag: string) => Promise<any>} modelFor how `run` reads a `--model` SPEC
 */
export async function testCommand(argv, createEngine, modelFor) {
  const parsed = parseCommandLine('test', TEST_USAGE, argv, {
    jobs: { type: 'string' },
    format: { type: 'string', default: 'text' },
    update: { type: 'boolean', default: false },
    model: { type: 'string', multiple: true, default: [] },
  });
  if ('status' in parsed) return parsed.status;
  const { values, positionals, usage } = parsed;
  let jobs = availableParallelism();
  if (values.jobs !== undefined) {
    if (!/^[1-9][0-9]*$/.test(values.jobs)) return usage(`--jobs must be a positive integer (got '${values.jobs}')`);
    jobs = Number(values.jobs);
  }
  if (values.update && values.model.length === 0) return usage('--update needs --model (the live model to record)');
  if (!values.update && values.model.length) return usage('--model is only for --update (tests script their models)');

  // `--model ROLE=SPEC` for one role, `--model SPEC` for every role without one, as in `run`. Each
  // re-recorded test gets models of its own, so a script: model answers every test from its start.
  const specs = roleSpecs(values.model);
  const wrong = specs.find((s) => !/^(openai|script|module):./.test(s.spec));
  if (wrong) return usage(`--model must be ${SPEC_FORMS} (got '${wrong.spec}')`);
  const roles = specs.map((s) => s.role);
  const twice = roles.find((role, i) => roles.indexOf(role) !== i);
  if (twice) return usage(twiceMessage(twice));
  const liveModels = async () => {
    const byRole = new Map();
    for (const { role, spec } of specs)
      byRole.set(role, await modelFor(spec, role === '*' ? '--model' : `--model ${role}=`));
    return (role) => byRole.get(role) ?? byRole.get('*');
  };
  // Read once now, so that a bad spec is a usage error before any test runs.
  if (values.update) await liveModels();

  const files = [];
  for (const path of positionals.length ? positionals : ['.']) {
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      return usage(`cannot read '${path}': ${error.code === 'ENOENT' ? 'no such file or directory' : error.message}`);
    }
    for (const file of info.isDirectory() ? await findTests(path) : [resolve(path)]) {
      if (!files.includes(file)) files.push(file);
    }
  }
  if (files.length === 0) {
    return usage(`no test files (*.test.json) under ${(positionals.length ? positionals : ['.']).join(', ')}`);
  }

  // Every test of every file, in order; a file that cannot be read is one failing test.
  const tests = [];
  for (const file of files) {
    const label = shown(file).replace(/\.test\.json$/, '');
    let text;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      tests.push({ file, label, error: `cannot read the test file: ${error.message}` });
      continue;
    }
    for (const parsed of parseTestFile(text)) {
      tests.push({ file, label: parsed.name ? `${label}/${parsed.name}` : label, ...parsed });
    }
  }

  const context = { createEngine, update: values.update ? liveModels : undefined };
  const json = values.format === 'json';
  const results = await inOrder(
    tests,
    jobs,
    async (t) => {
      const started = performance.now();
      let problems;
      let note;
      if (t.error) problems = [new Problem('test', `${shown(t.file)}: ${t.error}`)];
      else {
        try {
          ({ problems, note } = await runTest(t.test, t.file, context));
        } catch (error) {
          // Whatever goes wrong fails this test alone: a Pack module that throws, an engine that
          // cannot start.
          problems = [
            error instanceof Problem ? error : new Problem('test', `internal error: ${error.stack ?? error}`),
          ];
        }
      }
      return { problems, note, ms: Math.round(performance.now() - started) };
    },
    (i, r) => {
      if (json) return;
      const extra = [`${r.ms} ms`, r.note].filter(Boolean).join(', ');
      process.stdout.write(`${r.problems.length ? 'FAIL' : 'ok  '} ${tests[i].label} (${extra})\n`);
    },
  );
  const failed = results.filter((r) => r.problems.length).length;
  const passed = results.length - failed;
  if (json) {
    const report = {
      passed,
      failed,
      tests: tests.map((t, i) => ({
        name: t.label,
        file: shown(t.file),
        ok: results[i].problems.length === 0,
        ms: results[i].ms,
        ...(results[i].note ? { note: results[i].note } : {}),
        problems: results[i].problems,
      })),
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    for (const [i, r] of results.entries()) {
      if (!r.problems.length) continue;
      process.stdout.write(`\nFAIL ${tests[i].label}\n${r.problems.flatMap(problemLines).join('\n')}\n`);
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
  }
  return failed ? 1 : 0;
}
