// @ts-check
// runvil command line: run one prompt file and print its result. The bin (entries/cli.js) calls
// main() with the Node entry's createEngine.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { openAIChatModel } from '../models/openai.js';
import { scriptedModel } from '../models/scripted.js';
import { userInputPack, webPack } from '../packs/reference.js';
import { directoryStore } from '../stores/directory.js';
import { version } from '../version.js';
import { checkCommand } from './check.js';
import { exportedPacks } from './pack-module.js';
import { journalOptions } from './journal.js';
import { SPEC_FORMS, roleSpecs, twiceMessage } from './model-specs.js';
import { testKillHooks } from './kill-hooks.js';
import { McpSetupError, connectMcpServers, parseMcpFlag, readMcpJson } from './mcp.js';
import { exportSpans, otlpHeaders, recordingTracer, tracesUrl } from './otlp.js';
import { progressReporter } from './progress.js';
import { testCommand } from './test.js';

const USAGE = `usage: runvil run <prompt.md> [--args "..." | --args-file FILE] [--seed N] [--events [jsonl]]
                  [--quiet] [--json] [--show-requests] [--store DIR] [--limit-... N]
                  [--model [ROLE=]openai:<model>|script:FILE|module:FILE[#EXPORT]]... [--model-script FILE]
                  [--pack MODULE]... [--mcp NAME=URL | --mcp "NAME=COMMAND ARGS"]... [--no-mcp-json]
                  [--record FILE | --journal FILE.jsonl [--fresh] [--retry-in-flight] | --replay FILE]
                  [--otlp URL]
       runvil check <prompt.md>... [--format text|json] [--pack MODULE]...
       runvil test [PATH]... [--jobs N] [--format text|json] [--update --model [ROLE=]SPEC...]
       runvil --version | --help

Runs a Runvil prompt and prints its result text to stdout (nothing when the result is null).
On a terminal, progress (section, model round, tool call) goes to stderr as the run goes.
runvil check prints every static error of each prompt without running it (runvil check --help).
runvil test runs the *.test.json tests under each PATH and reports each (runvil test --help).

  --args TEXT           the run's argument string (default: empty)
  --args-file FILE      the argument string is FILE's contents (- reads stdin to its end)
  --seed N              run seed, a decimal u64 (default: random); printed to stderr with --events
  --events [jsonl]      print every run event as one JSON line to stderr, in order, then a
                        last line {"event":"outcome","ok":...,"seed":"..."} (no progress lines)
  --quiet               no progress lines, log() lines or usage line
  --json                the whole outcome as one JSON object on stdout (result, error with its
                        section and line, seed, usage) instead of the result text
  --show-requests       each model round's request (messages and tools, as the model function
                        receives them) as JSON on stderr
  --store DIR           the run's store is the directory DIR (created when missing); its files
                        are plain files, each batch of changes lands whole even if runvil dies
  --limit-instructions N, --limit-memory-bytes N, --limit-tool-iterations N, --limit-fanout N,
  --limit-section-entries N
                        the run's limits (instructions, memoryBytes, maxToolIterations,
                        fanoutConcurrency, sectionEntries)
  --model [ROLE=]SPEC   the model for ROLE (repeatable), or for every role without one. SPEC is
                        openai:NAME (NAME at an OpenAI-compatible chat-completions server:
                        RUNVIL_OPENAI_BASE_URL, default https://api.openai.com/v1, and
                        OPENAI_API_KEY from the environment) or script:FILE (a JSON array of
                        scripted replies, strings or reply objects, answered in order; the run
                        fails when it runs out) or module:FILE[#EXPORT] (a model function a JS
                        module exports, default the default export)
  --model-script FILE   the same as --model script:FILE, for every role
  --pack MODULE         serve the Packs a JS module exports (repeatable): its default export (a
                        Pack, an array of Packs, or a function answering either) and every named
                        export that is a Pack (an object with a name and tools)
  --mcp NAME=URL        serve the MCP server at URL (Streamable HTTP) as the Pack mcp/NAME
  --mcp "NAME=COMMAND ARGS"
                        start COMMAND with ARGS and serve it (stdio) as the Pack mcp/NAME;
                        --mcp repeats. The servers of ./.mcp.json ({"mcpServers": {NAME:
                        {"command", "args", "env"} | {"url"}}}) are served too, --mcp winning
                        for a NAME both give. Needs the MCP SDK: npm i @modelcontextprotocol/sdk
  --no-mcp-json         do not read ./.mcp.json
  --record FILE         write the run's journal (every answer it got from outside) to FILE as
                        JSON when the run ends, however it ends
  --journal FILE.jsonl  append each journal entry to FILE as one JSON line as the run goes
                        (fsynced); when FILE already holds entries the run resumes from them
                        (answered calls are not made again), and when its run ended it is replayed.
                        A FILE recorded for another prompt or argument string is refused (exit 2)
  --fresh               with --journal: empty FILE first and start the run over (the store is
                        left as it is)
  --retry-in-flight     with --journal: resume even when a tool marked idempotent: false was
                        called and not answered when the run stopped (it is called again)
  --replay FILE         replay a journal (from --record or --journal): the same outcome, calling
                        no model, tool or operator (no --model needed)
  --otlp URL            trace the run (OpenTelemetry GenAI spans) and export them when it ends,
                        over OTLP/HTTP JSON to URL/v1/traces (URL is the collector's base, as in
                        OTEL_EXPORTER_OTLP_ENDPOINT; a URL ending in /v1/traces is used as is);
                        OTEL_EXPORTER_OTLP_HEADERS adds headers, OTEL_SERVICE_NAME names the
                        service (default runvil). A collector that cannot be reached is a
                        warning on stderr; the exit status stays the run's

The Packs user-input (its ask tool reads the operator's next line from this terminal) and web
(fetch; search needs a provider, so it reports none) are always served.
log() lines go to stderr as the run goes; on a terminal, so do progress lines and, at the end, the
tokens each model role used.

Exit status: 0 on success; 1 when the run fails (stderr: "<Kind>: <message>", then the file, line
and section where it happened when known) or an MCP server cannot be reached or started; 2 on usage
errors; 130 when interrupted (Ctrl-C cancels the run: its store changes so far are kept).`;

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

/** All of stdin, as text. */
async function readStdin() {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk;
  return text;
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
 * The model a `--model` SPEC names: `openai:NAME` or `script:FILE`.
 * @param {string} spec
 * @param {string} flag how the option was given, for messages
 */
async function modelFor(spec, flag) {
  const openai = /^openai:(.+)$/.exec(spec);
  if (openai) {
    return openAIChatModel({
      baseURL: process.env.RUNVIL_OPENAI_BASE_URL || 'https://api.openai.com/v1',
      apiKey: process.env.OPENAI_API_KEY,
      model: openai[1],
    });
  }
  const script = /^script:(.+)$/.exec(spec);
  if (script) {
    const replies = await readJson(script[1], 'model script');
    if (!Array.isArray(replies)) usage(`${flag}: the model script must be a JSON array of replies`);
    try {
      return scriptedModel(replies);
    } catch (error) {
      usage(`${flag}: ${error.message}`);
    }
  }
  const module = /^module:([^#]+)(?:#(.+))?$/.exec(spec);
  if (module) {
    const [, path, name = 'default'] = module;
    let exports;
    try {
      exports = await import(pathToFileURL(resolve(path)).href);
    } catch (error) {
      usage(`${flag}: cannot load the module '${path}': ${error.message}`);
    }
    if (typeof exports[name] !== 'function') usage(`${flag}: '${path}' has no model function export '${name}'`);
    return exports[name];
  }
  usage(`${flag} must be ${SPEC_FORMS} (got '${spec}')`);
}

/**
 * The Packs a `--pack` module exports: its default export (a Pack, an array of them, or a function
 * answering either, awaited) and every named export that is a Pack.
 * @param {string} path
 */
async function packsOf(path) {
  let module;
  try {
    module = await import(pathToFileURL(resolve(path)).href);
  } catch (error) {
    usage(`--pack ${path}: cannot load the module: ${error.message}`);
  }
  let first = module.default;
  if (typeof first === 'function') first = await first();
  const packs = exportedPacks(module, first);
  if (packs.length === 0) usage(`--pack ${path}: the module exports no Pack (an object with a name and tools)`);
  return packs;
}

/** Where an error happened, as the line after `Kind: message`: `  at FILE:LINE (## Section)`. */
function whereText(file, error) {
  if (error.line !== undefined) return `  at ${file}:${error.line}${error.section ? ` (${error.section})` : ''}\n`;
  return error.section ? `  in ${error.section} (${file})\n` : '';
}

/** The tokens each role used, one line: `tokens: writer 1200 in / 300 out (2 calls), ...`. */
function usageLine(usage) {
  const roles = Object.entries(usage ?? {});
  if (roles.length === 0) return '';
  const parts = roles.map(([role, u]) => {
    const extra = [
      u.cached_tokens ? `${u.cached_tokens} cached` : '',
      u.reasoning_tokens ? `${u.reasoning_tokens} reasoning` : '',
    ]
      .filter(Boolean)
      .join(', ');
    return `${role} ${u.input_tokens} in / ${u.output_tokens} out${extra ? ` (${extra})` : ''}, ${u.calls} call${u.calls === 1 ? '' : 's'}`;
  });
  return `tokens: ${parts.join('; ')}\n`;
}

/**
 * Runs the command line `argv` (without node and the script) and answers the exit status.
 * @param {string[]} argv
 * @param {typeof import('../index.d.ts').createEngine} createEngine the Node entry's
 */
export async function main(argv, createEngine) {
  if (argv[0] === 'check') return checkCommand(argv.slice(1), createEngine, packsOf);
  if (argv[0] === 'test') return testCommand(argv.slice(1), createEngine, modelFor);
  let parsed;
  try {
    parsed = parseArgs({
      args: normalizeArgv(argv),
      allowPositionals: true,
      options: {
        args: { type: 'string' },
        'args-file': { type: 'string' },
        json: { type: 'boolean', default: false },
        'show-requests': { type: 'boolean', default: false },
        pack: { type: 'string', multiple: true, default: [] },
        seed: { type: 'string' },
        events: { type: 'boolean', default: false },
        quiet: { type: 'boolean', short: 'q', default: false },
        store: { type: 'string' },
        ...Object.fromEntries(Object.keys(LIMIT_OPTIONS).map((name) => [name, { type: 'string' }])),
        'model-script': { type: 'string' },
        model: { type: 'string', multiple: true, default: [] },
        mcp: { type: 'string', multiple: true },
        'no-mcp-json': { type: 'boolean', default: false },
        record: { type: 'string' },
        journal: { type: 'string' },
        fresh: { type: 'boolean', default: false },
        'retry-in-flight': { type: 'boolean', default: false },
        replay: { type: 'string' },
        otlp: { type: 'string' },
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
  let otlpUrl;
  if (values.otlp !== undefined) {
    try {
      otlpUrl = tracesUrl(values.otlp);
    } catch (error) {
      usage(error.message);
    }
  }

  let source;
  try {
    source = await readFile(file, 'utf8');
  } catch (error) {
    usage(`cannot read prompt '${file}': ${error.message}`);
  }

  if (values.args !== undefined && values['args-file'] !== undefined)
    usage('--args and --args-file cannot be used together');
  let args = values.args ?? '';
  if (values['args-file'] !== undefined) {
    const from = values['args-file'];
    try {
      args = from === '-' ? await readStdin() : await readFile(from, 'utf8');
    } catch (error) {
      usage(`cannot read --args-file '${from}': ${error.message}`);
    }
  }

  const options = {
    args,
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
  // Models by role: `--model ROLE=SPEC`, and `--model SPEC` or `--model-script FILE` for every
  // role without one of its own. One model serves every role it is bound to, in call order.
  const byRole = new Map();
  const specs = roleSpecs(values.model);
  if (values['model-script'] !== undefined) specs.push({ role: '*', spec: `script:${values['model-script']}` });
  for (const { role, spec } of specs) {
    if (byRole.has(role)) usage(twiceMessage(role));
    byRole.set(role, await modelFor(spec, role === '*' ? '--model' : `--model ${role}=`));
  }
  const showRequests = values['show-requests'];
  const shown = (model) => (request) => {
    const { messages, tools, role, section, turn } = request;
    process.stderr.write(
      `── model ${role} · ${section} · round ${turn}\n${JSON.stringify({ messages, tools }, null, 2)}\n`,
    );
    return model(request);
  };
  if (byRole.size) {
    options.models = (role) => {
      const model = byRole.get(role) ?? byRole.get('*');
      return model && showRequests ? shown(model) : model;
    };
  }
  // The operator is whoever sits at this terminal: one line of stdin answers one ask.
  const lines = stdinLines();
  const ask = async () => {
    if (process.stdin.isTTY) process.stderr.write('> ');
    const line = await lines.next();
    if (line === null) throw new Error("the operator's window closed");
    return line;
  };
  options.packs = [userInputPack({ ask }), webPack()];
  for (const path of values.pack) options.packs.push(...(await packsOf(path)));

  // MCP servers: ./.mcp.json's, then --mcp's (which win for a name both give), each as mcp/NAME.
  const servers = new Map();
  let mcp;
  try {
    // A replay calls no tool: it needs no server.
    const replaying = values.replay !== undefined;
    for (const server of values['no-mcp-json'] || replaying ? [] : await readMcpJson(process.cwd()))
      servers.set(server.name, server);
    const flagged = new Set();
    for (const value of replaying ? [] : (values.mcp ?? [])) {
      let server;
      try {
        server = parseMcpFlag(value);
      } catch (error) {
        usage(error.message);
      }
      if (flagged.has(server.name)) usage(`--mcp names the server '${server.name}' twice`);
      flagged.add(server.name);
      servers.set(server.name, server);
    }
    mcp = await connectMcpServers([...servers.values()]);
  } catch (error) {
    if (!(error instanceof McpSetupError)) throw error;
    process.stderr.write(`runvil: ${error.message}\n`);
    lines.close();
    return error.exitCode;
  }
  options.packs.push(...mcp.packs);
  const journal = await journalOptions(values, { source, args }, usage, (line) => process.stderr.write(`${line}\n`));
  Object.assign(options, journal.options);
  testKillHooks(process.env.RUNVIL_TEST_KILL, options);
  const writeLine = (line) => process.stderr.write(`${line}\n`);
  const progress = process.stderr.isTTY && !values.quiet ? progressReporter(writeLine) : undefined;
  if (values.events) options.onEvent = (event) => writeLine(JSON.stringify(event));
  else if (!values.quiet) {
    options.onEvent = (event) => {
      // log() lines are the prompt's own output to its author: shown piped or not.
      if (event.event === 'log') writeLine(`log ${event.section}: ${event.message}`);
      else progress?.(event);
    };
  }

  // Ctrl-C cancels the run (it ends Cancelled, its store changes so far committed); a second one
  // is Node's default and ends the process.
  const controller = new AbortController();
  options.signal = controller.signal;
  process.once('SIGINT', () => controller.abort());
  const tracer = otlpUrl === undefined ? undefined : recordingTracer();
  if (tracer) options.tracer = tracer;

  let engine;
  try {
    engine = await createEngine();
  } catch (error) {
    await mcp.close();
    throw error;
  }
  let outcome;
  try {
    outcome = await engine.run(source, options);
  } catch (error) {
    // A journal file that is not a journal is the caller's mistake, said as such.
    if (error instanceof TypeError && /^engine\.run: (replay|resume):/.test(error.message)) {
      await journal.finish(undefined);
      process.stderr.write(
        `runvil: ${error.message.replace(/^engine\.run: (replay|resume)/, (_, o) => `the journal (${o})`)}\n`,
      );
      return 2;
    }
    // engine.run rejects only on API misuse: a bug here, not in the prompt.
    process.stderr.write(`runvil: internal error: ${error.stack ?? error}\n`);
    await journal.finish(undefined);
    return 1;
  } finally {
    // Every server, whatever the outcome: an open client (a stdio child, an HTTP session) would
    // keep the process alive.
    await mcp.close();
  }
  lines.close();
  process.removeAllListeners('SIGINT');
  outcome = await journal.finish(outcome);
  if (tracer && otlpUrl) {
    const failed = await exportSpans(otlpUrl, tracer.spans, {
      serviceName: process.env.OTEL_SERVICE_NAME || 'runvil',
      version,
      headers: otlpHeaders(process.env),
    });
    if (failed) process.stderr.write(`runvil: warning: the trace was not exported to ${otlpUrl}: ${failed}\n`);
  }
  if (values.events) {
    process.stderr.write(`${JSON.stringify({ event: 'outcome', ok: outcome.ok, seed: outcome.seed })}\n`);
  }
  if (values.json) process.stdout.write(`${JSON.stringify(outcome)}\n`);
  if (process.stderr.isTTY && !values.quiet && !values.events) process.stderr.write(usageLine(outcome.usage));
  if (!outcome.ok) {
    process.stderr.write(`${outcome.error.kind}: ${outcome.error.message}\n${whereText(file, outcome.error)}`);
    return outcome.error.kind === 'Cancelled' && controller.signal.aborted ? 130 : 1;
  }
  if (!values.json && outcome.result !== null && outcome.result !== undefined) {
    process.stdout.write(outcome.result.endsWith('\n') ? outcome.result : `${outcome.result}\n`);
  }
  return 0;
}
