// The Runvil playground: the engine runs in a Web Worker (engine-worker.js, the package's
// worker.js bundled), the page keeps the editor, the models, the demo Pack, input.ask, the run's
// views (console, rounds, trace, files), the diagnostics as one types, the runs' journals and the
// prompt library. Bundled by tools/build-site.mjs into site/app.js with only the page's part of
// the package (the engine graph stays in the worker).
import { createEngine } from '../pkg/worker-client.js';
import { indexedDbStore } from '../pkg/stores/idb.js';
import { userInputPack } from '../pkg/packs/reference.js';
import { version } from '../pkg/version.js';
import { createEditorShell } from './editor-shell.js';
import { demoModel, demoPack } from './demo.js';
import { shareLink, fromLink } from './share.js';
import { readDraft, writeDraft, samePrompt, savedPrompts, savedPrompt, savePrompt, deleteSavedPrompt, titleOf } from './library.js';
import { createRecorder, replayRecorder, tokenSummary } from './recorder.js';
import { createChecker } from './checker.js';
import { journalText, journalFileName, readJournalFile } from './journal-file.js';
import { createTrace } from './trace.js';
import { createConsole, renderRounds } from './views.js';
import { snapshot, changes } from './diff.js';
import examples from './examples.js';

// ---- start the engine first: the worker and the wasm load while the rest of the page does ----

const WASM_URL = new URL('./pkg/runvil_bg.wasm', location.href);

/** The compiled module, streamed as it downloads (index.html preloads the same URL). */
async function compileWasm() {
  const response = await fetch(WASM_URL);
  if (!response.ok) throw new Error(`fetching ${WASM_URL.pathname} failed: ${response.status}`);
  if (response.headers.get('content-type')?.startsWith('application/wasm')) return WebAssembly.compileStreaming(response);
  // A host that serves it without application/wasm: compiled whole (the package checks the bytes).
  return new Uint8Array(await response.arrayBuffer());
}
const wasmReady = compileWasm();

/** The worker starts now; its first messages wait here until createEngine listens. */
const worker = new Worker(new URL('./engine-worker.js', import.meta.url), { type: 'module', name: 'runvil engine' });
const early = [];
const hold = (event) => early.push(event);
worker.addEventListener('message', hold);

async function startEngine() {
  const wasm = await wasmReady;
  const starting = createEngine({ worker, wasm });
  // createEngine attached its listener synchronously: hand it what arrived before.
  worker.removeEventListener('message', hold);
  for (const event of early.splice(0)) worker.dispatchEvent(new MessageEvent('message', { data: event.data }));
  return starting;
}
const engineReady = startEngine();
const storeReady = indexedDbStore('playground');

// ---- state --------------------------------------------------------------------------------

const $ = (id) => document.getElementById(id);
const SETTINGS_KEY = 'runvil.playground.openai';
const OPEN_KEY = 'runvil.playground.open';

let engine = null;
let store = null;
let running = null; // { controller, recorder } while a run is in flight
let pendingAsk = null; // { resolve } while input.ask waits
let firstResult = true;
let modelCalls = 0; // calls of the page's model functions, all runs (a replay makes none)
let lastJournal = null; // { entries, name }: the journal of the run on screen
const mcpServers = []; // { url, pack, client }

/** What the editor shows: { kind: 'draft' | 'example' | 'saved' | 'shared', name, prompt } (prompt: as loaded). */
let opened = { kind: 'draft', name: '', prompt: null };

// ---- editor -------------------------------------------------------------------------------

const editor = createEditorShell($('editor'), {
  doc: '',
  onRun: () => run(),
  onCancel: () => cancel(),
  onChange: () => edited(),
});
const richEditor = () => import('./editor-src.js');

/** The line marks: the run's error and the check's diagnostics, drawn together. */
let runMark = [];
let diagnosticMarks = [];
function drawMarks(how = { scroll: false }) {
  editor.mark([...runMark, ...diagnosticMarks], how);
}

// ---- diagnostics as one types: engine.check with the Packs a run would get -------------------

const askPack = userInputPack({ ask: (ctx) => askInPage(ctx) });
/** The Packs of a run (and of its check): the page's own and the connected MCP servers'. */
const runPacks = () => [demoPack, askPack, ...mcpServers.map((s) => s.pack)];
let checkedSource = null;
const checker = createChecker({
  check: async (source) => (await engineReady).check(source, { packs: runPacks() }),
  show: (diagnostics) => showDiagnostics(diagnostics),
  fail: (error) => { if (engine) setStatus(`the prompt could not be checked: ${error.message}`); },
});

function current() {
  return { source: editor.value, args: $('args').value, seed: $('seed').value };
}

/** True when the editor holds text that lives nowhere but the draft. */
function unsavedEdits() {
  return opened.kind === 'draft' && !samePrompt(current(), opened.prompt);
}

/**
 * An edit. Editing a prompt that is not the draft makes it the draft; the draft it replaces is
 * saved by name first when it is kept nowhere else, so no edit is ever lost.
 */
function edited() {
  if (loading) return;
  const now = current();
  if (now.source !== checkedSource) {
    checkedSource = now.source;
    // The editor drops its marks when the text changes: the run's place no longer holds.
    runMark = [];
    checker.schedule(now.source);
  }
  if (opened.kind !== 'draft') {
    if (samePrompt(now, opened.prompt)) return;
    keepDraft(readDraft(), now);
    opened = { kind: 'draft', name: '', prompt: null };
  }
  if (!writeDraft(now)) setStatus('this browser does not keep the draft (storage is full or blocked): save it by name or share it');
  rememberOpen();
  refreshLibrary();
}

/** Saves `old` (the draft an edit is about to replace) by name, unless it is kept already. */
async function keepDraft(old, now) {
  if (!old?.source.trim() || samePrompt(old, now) || (await isSaved(old))) return;
  const name = `${titleOf(old.source)} (kept ${new Date().toLocaleString('en-GB', { dateStyle: 'short', timeStyle: 'short' })})`;
  try {
    await savePrompt(name, old);
    setStatus(`your previous prompt was saved as “${name}”`);
    refreshLibrary();
  } catch { /* IndexedDB refused: the draft slot is all there is */ }
}
$('args').addEventListener('input', () => edited());
$('seed').addEventListener('input', () => edited());

async function isSaved(prompt) {
  try {
    return (await savedPrompts()).some((p) => samePrompt(p, prompt));
  } catch {
    return false;
  }
}

/** True while load() fills the editor: that is not an edit. */
let loading = false;

function load(kind, name, prompt) {
  loading = true;
  try {
    editor.value = prompt.source;
  } finally {
    loading = false;
  }
  $('args').value = prompt.args ?? '';
  $('seed').value = prompt.seed ?? '';
  opened = { kind, name, prompt: { source: prompt.source, args: prompt.args ?? '', seed: prompt.seed ?? '' } };
  if (kind === 'example') applyLimits(prompt.limits ?? {});
  checkedSource = prompt.source;
  checker.schedule(prompt.source, 0);
  rememberOpen();
  resetRunViews();
  refreshLibrary();
}

/** What is open survives a reload of the tab (sessionStorage), so a shared prompt is not lost to one. */
function rememberOpen() {
  try {
    sessionStorage.setItem(OPEN_KEY, JSON.stringify(opened.kind === 'draft' ? { kind: 'draft' } : opened));
  } catch { /* not kept: a reload opens the draft */ }
}

// ---- the prompt library: your prompt, saved prompts, examples --------------------------------

async function refreshLibrary() {
  $('delete-saved').hidden = opened.kind !== 'saved';
  const select = $('example');
  const draft = readDraft();
  let saved = [];
  try {
    saved = await savedPrompts();
  } catch { /* no IndexedDB: no saved prompts */ }
  const option = (value, text) => Object.assign(document.createElement('option'), { value, textContent: text });
  const options = [option('draft', draft ? `(your prompt) ${titleOf(draft.source)}` : '(your prompt)')];
  if (saved.length) {
    const group = document.createElement('optgroup');
    group.label = 'Saved in this browser';
    group.append(...saved.map((p) => option(`saved:${p.name}`, p.name)));
    options.push(group);
  }
  const group = document.createElement('optgroup');
  group.label = 'Examples';
  group.append(...examples.map((example, i) => option(`example:${i}`, `${example.name}: ${example.description}`)));
  options.push(group);
  select.replaceChildren(...options);
  select.value = opened.kind === 'draft' ? 'draft' : opened.kind === 'saved' ? `saved:${opened.name}` : opened.kind === 'example' ? `example:${examples.findIndex((e) => e.name === opened.name)}` : 'draft';
  if (opened.kind === 'shared') select.selectedIndex = -1;
}

$('example').addEventListener('change', async () => {
  const value = $('example').value;
  let next;
  if (value === 'draft') next = { kind: 'draft', name: '', prompt: readDraft() ?? { source: '', args: '', seed: '' } };
  else if (value.startsWith('saved:')) next = { kind: 'saved', name: value.slice(6), prompt: await savedPrompt(value.slice(6)) };
  else {
    const example = examples[Number(value.slice(8))];
    next = example && { kind: 'example', name: example.name, prompt: example };
  }
  if (!next?.prompt) return refreshLibrary();
  if (unsavedEdits() && next.kind !== 'draft') {
    const label = next.kind === 'example' ? `the example “${next.name}”` : `“${next.name}”`;
    if (!confirm(`Open ${label} in place of your prompt?\n\nYour prompt stays under “(your prompt)” in this list; it is saved by name before anything else replaces it.`)) {
      return refreshLibrary();
    }
  }
  load(next.kind, next.name, next.prompt);
  setStatus(next.kind === 'draft' ? 'your prompt' : `opened ${next.kind === 'example' ? 'the example' : ''} ${next.name}`.replace(/\s+/g, ' '));
});

$('save').addEventListener('click', async () => {
  const suggested = opened.kind === 'saved' ? opened.name : titleOf(editor.value);
  const name = prompt('Save this prompt in this browser as:', suggested);
  if (name === null) return;
  try {
    const clean = await savePrompt(name, current());
    opened = { kind: 'saved', name: clean, prompt: current() };
    rememberOpen();
    await refreshLibrary();
    setStatus(`saved as “${clean}”`);
  } catch (error) {
    setStatus(`not saved: ${error.message}`);
  }
});

$('delete-saved').addEventListener('click', async () => {
  if (opened.kind !== 'saved' || !confirm(`Delete the saved prompt “${opened.name}”? The editor keeps its text as your prompt.`)) return;
  await deleteSavedPrompt(opened.name);
  writeDraft(current());
  opened = { kind: 'draft', name: '', prompt: current() };
  rememberOpen();
  refreshLibrary();
});

// ---- sharing: the link is copied, never left in the address bar -----------------------------

$('share').addEventListener('click', async () => {
  const link = await shareLink(current());
  const field = $('share-link');
  field.value = link;
  field.hidden = false;
  field.select();
  try {
    await navigator.clipboard.writeText(link);
    setStatus('share link copied to the clipboard');
  } catch {
    setStatus('share link: copy it from the field beside Share');
  }
});

// ---- model picker and limits --------------------------------------------------------------

function modelChoice() {
  return document.querySelector('input[name="model"]:checked').value;
}

function loadSettings() {
  try {
    const saved = JSON.parse(localStorage.getItem(SETTINGS_KEY) ?? 'null');
    if (saved) {
      $('base-url').value = saved.baseURL ?? '';
      $('api-key').value = saved.apiKey ?? '';
      $('model-id').value = saved.model ?? '';
      if (saved.use) document.querySelector('input[name="model"][value="openai"]').checked = true;
    }
  } catch { /* a broken entry is ignored */ }
  showModel();
}

function showModel() {
  const openai = modelChoice() === 'openai';
  $('openai-fields').hidden = !openai;
  $('model-name').textContent = openai ? ($('model-id').value || 'OpenAI-compatible') : 'demo (offline)';
  try {
    localStorage.setItem(SETTINGS_KEY, JSON.stringify({ use: openai, baseURL: $('base-url').value, apiKey: $('api-key').value, model: $('model-id').value }));
  } catch { /* not kept: fine */ }
}
for (const el of document.querySelectorAll('input[name="model"], #base-url, #api-key, #model-id')) el.addEventListener('input', showModel);

/** The run's models: every role goes to the chosen model, through the round recorder. */
async function models(recorder) {
  let fn = demoModel;
  if (modelChoice() === 'openai') {
    const baseURL = $('base-url').value.trim();
    const model = $('model-id').value.trim();
    if (!baseURL || !model) throw new Error('enter the endpoint\'s base URL and model name (Model settings), or pick the demo model');
    // The adapter is loaded only when it is used.
    const { openAIChatModel } = await import('../pkg/models/openai.js');
    fn = openAIChatModel({ baseURL, apiKey: $('api-key').value || undefined, model, stream: true });
  }
  return (role) => recorder.wrap(role, fn);
}

const LIMIT_FIELDS = { instructions: 'limit-instructions', memoryMiB: 'limit-memory', maxToolIterations: 'limit-tools' };

function applyLimits(limits) {
  for (const [key, id] of Object.entries(LIMIT_FIELDS)) $(id).value = limits[key] ?? '';
  $('limits').open = Object.keys(limits).length > 0;
}

function positive(id, scale = 1) {
  const text = $(id).value.trim();
  if (text === '') return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${$(id).closest('label').textContent.trim()} must be a positive whole number`);
  return n * scale;
}

function limits() {
  const out = {
    instructions: positive('limit-instructions'),
    memoryBytes: positive('limit-memory', 2 ** 20),
    maxToolIterations: positive('limit-tools'),
  };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out;
}

// ---- MCP servers: their tools join the run as Packs ---------------------------------------

$('mcp-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const url = $('mcp-url').value.trim();
  if (!url) return;
  $('mcp-status').textContent = `connecting to ${url}…`;
  try {
    const { connectMcp } = await import('./mcp.js');
    const server = await connectMcp(url, { trusted: $('mcp-trusted').checked });
    mcpServers.push({ url, ...server });
    $('mcp-url').value = '';
    $('mcp-status').textContent = '';
    showMcp();
    checker.schedule(editor.value, 0);
  } catch (error) {
    $('mcp-status').textContent = `could not connect: ${error.message}`;
  }
});

function showMcp() {
  const list = $('mcp-list');
  list.replaceChildren();
  for (const server of mcpServers) {
    const li = document.createElement('li');
    li.append(`${server.pack.name} (${server.pack.tools.length} tools) · ${server.url} `);
    const off = document.createElement('button');
    off.type = 'button';
    off.textContent = 'Disconnect';
    off.addEventListener('click', async () => {
      mcpServers.splice(mcpServers.indexOf(server), 1);
      await server.close?.();
      showMcp();
      checker.schedule(editor.value, 0);
    });
    li.append(off);
    list.append(li);
  }
  $('mcp-count').textContent = mcpServers.length ? ` · ${mcpServers.length} MCP` : '';
}

// ---- input.ask in the page ----------------------------------------------------------------

let lastLog = new Map(); // section -> the latest log line since its last question

/** The question to show: the section's latest log line, else the model's words, else its prose. */
function questionFor(ctx) {
  const section = ctx?.section ?? '';
  if (lastLog.has(section)) return lastLog.get(section);
  if (ctx?.caller === 'model') {
    const round = running?.recorder.rounds.filter((r) => r.section === section).at(-1);
    const text = round?.reply?.content || round?.streamed;
    if (text) return text;
  }
  return proseOf(section);
}

/** The prose of the section named `name`: its lines before the first fence, without the heading. */
function proseOf(name) {
  const lines = editor.value.split('\n');
  const at = lines.findIndex((l) => new RegExp(`^#{1,6}\\s+${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`).test(l));
  if (at < 0) return '';
  const prose = [];
  for (const l of lines.slice(at + 1)) {
    if (/^(#{1,6}\s|\s*```)/.test(l)) break;
    prose.push(l);
  }
  return prose.join('\n').trim();
}

function askInPage(ctx) {
  return new Promise((resolve, reject) => {
    pendingAsk = { resolve };
    const question = questionFor(ctx);
    lastLog.delete(ctx?.section ?? '');
    $('ask-from').textContent = `${ctx?.section ? `## ${ctx.section}` : 'The prompt'} asks${ctx?.caller === 'model' ? ' (the model called user-input/ask)' : ''}:`;
    $('ask-question').textContent = question || '(no question given: the prompt calls input.ask() without a log line or prose before it)';
    $('ask-question').dataset.empty = question ? 'no' : 'yes';
    $('ask').hidden = false;
    $('ask-input').value = '';
    $('ask-input').focus();
    setStatus('waiting for your answer…');
    ctx?.signal?.addEventListener('abort', () => {
      if (pendingAsk?.resolve === resolve) closeAsk();
      reject(new Error('the run was cancelled'));
    }, { once: true });
  });
}

function closeAsk() {
  pendingAsk = null;
  $('ask').hidden = true;
}

$('ask').addEventListener('submit', (event) => {
  event.preventDefault();
  const answer = pendingAsk;
  if (!answer) return;
  closeAsk();
  setStatus('running…');
  answer.resolve($('ask-input').value);
});

// ---- the run's views ----------------------------------------------------------------------

const runConsole = createConsole($('console'));
const trace = createTrace($('trace-panel'), { onJump: (heading) => jumpToHeading(heading) });
let roundsFrame = 0;

function jumpToHeading(heading) {
  const lines = editor.value.split('\n');
  const at = lines.findIndex((l) => l.trimEnd() === heading);
  if (at >= 0) editor.goTo(at + 1);
}

function onEvent(event) {
  trace.add(event);
  const name = event.event ?? event.type;
  if (name === 'log') {
    runConsole.log(event.section, String(event.message ?? ''));
    lastLog.set(event.section ?? '', String(event.message ?? ''));
  } else if (name === 'model_delta' && typeof event.text === 'string') {
    runConsole.delta(`${event.section}|${event.turn}|${event.role}`, `## ${event.section ?? '?'} · ${event.role ?? 'model'}`, event.text);
  }
  $('event-count').textContent = String(trace.count());
}

function drawRounds() {
  roundsFrame = 0;
  const rounds = running?.recorder.rounds ?? lastRounds;
  renderRounds($('rounds'), rounds);
  $('rounds-empty').hidden = rounds.length > 0;
  $('round-count').textContent = rounds.length ? String(rounds.length) : '';
}
let lastRounds = [];

/** Every trace of a previous run goes: after a form error, an example switch, a new run. */
function resetRunViews() {
  runConsole.clear();
  trace.clear();
  lastRounds = [];
  drawRounds();
  $('event-count').textContent = '';
  $('tokens').textContent = '';
  $('changes').replaceChildren();
  $('error-info').hidden = true;
  $('journal-status').textContent = '';
  lastJournal = null;
  $('journal-download').disabled = true;
  runMark = [];
  drawMarks();
  if (engine && !running) show('ready', 'Ready: Run (Ctrl+Enter) to see the result here.');
  if (!running) setStatus(engine ? `runvil ${version} · engine in a worker` : 'loading the engine…');
}

// ---- tabs ---------------------------------------------------------------------------------

function showTab(name) {
  for (const tab of document.querySelectorAll('[role="tab"]')) tab.setAttribute('aria-selected', String(tab.dataset.tab === name));
  for (const panel of document.querySelectorAll('[data-panel]')) panel.hidden = panel.dataset.panel !== name;
  if (name === 'files') refreshFiles();
  if (name === 'trace' && trace.stale) trace.render();
}
for (const tab of document.querySelectorAll('[role="tab"]')) tab.addEventListener('click', () => showTab(tab.dataset.tab));

// ---- the file browser (IndexedDB) ---------------------------------------------------------

async function refreshFiles() {
  if (!store) return;
  const entries = await store.entries();
  const list = $('files');
  list.replaceChildren();
  for (const { path, size } of entries) {
    const li = document.createElement('li');
    const open = document.createElement('button');
    open.className = 'path';
    open.textContent = path;
    open.addEventListener('click', async () => {
      const content = await store.read(path);
      $('file-view').hidden = false;
      $('file-view').textContent = typeof content === 'string' ? content : `(${content.length} bytes, not UTF-8 text)`;
    });
    const sizeEl = document.createElement('span');
    sizeEl.className = 'size';
    sizeEl.textContent = `${size} B`;
    const del = document.createElement('button');
    del.textContent = 'Delete';
    del.setAttribute('aria-label', `Delete ${path}`);
    del.addEventListener('click', async () => { await store.delete(path); $('file-view').hidden = true; refreshFiles(); });
    li.append(open, sizeEl, del);
    list.append(li);
  }
  $('files-empty').hidden = entries.length > 0;
  $('file-count').textContent = entries.length ? String(entries.length) : '';
}

/** The last run's changes to the store, each file with its line diff. */
function showChanges(list) {
  const box = $('changes');
  box.replaceChildren();
  if (!list.length) return;
  const head = document.createElement('h3');
  head.textContent = `The last run changed ${list.length} file${list.length === 1 ? '' : 's'}`;
  box.append(head);
  for (const change of list) {
    const details = document.createElement('details');
    details.className = 'change';
    details.dataset.status = change.status;
    const sum = document.createElement('summary');
    sum.textContent = `${change.status} ${change.path}`;
    details.append(sum);
    if (change.lines) {
      const pre = document.createElement('pre');
      pre.className = 'diff';
      for (const line of change.lines) {
        const span = document.createElement('span');
        span.dataset.op = line.op;
        span.textContent = `${line.op} ${line.text}\n`;
        pre.append(span);
      }
      details.append(pre);
    }
    box.append(details);
  }
}

$('files-download').addEventListener('click', async () => {
  const zip = await store.zip();
  const url = URL.createObjectURL(new Blob([zip], { type: 'application/zip' }));
  const a = Object.assign(document.createElement('a'), { href: url, download: 'runvil-playground-files.zip' });
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
});
$('files-import').addEventListener('change', async (event) => {
  try {
    await store.import([...event.target.files]);
  } catch (error) {
    setStatus(`import failed: ${error.message}`);
  }
  event.target.value = '';
  refreshFiles();
});
$('files-clear').addEventListener('click', async () => {
  if (!confirm('Delete every file in the playground store?')) return;
  await store.clear();
  $('file-view').hidden = true;
  refreshFiles();
});

// ---- running ------------------------------------------------------------------------------

function setStatus(text) {
  $('status').textContent = text;
}

function show(state, text) {
  $('output').dataset.state = state;
  $('output').textContent = text;
}

/**
 * Where an error is: the `## Section:N:` its message starts with (the section that raised, even
 * inside a `call`), else the outcome's own section and line (frontmatter, the caller).
 */
export function errorPlace(error) {
  const m = /^(#{1,6} [^\n]*?):(\d+):/.exec(error.message ?? '');
  if (m) return { section: m[1], line: Number(m[2]) };
  return { section: error.section ?? null, line: Number.isInteger(error.line) ? error.line : null };
}

function showError(error) {
  show('error', `${error.kind}: ${error.message}`);
  const { section, line } = errorPlace(error);
  const info = $('error-info');
  info.replaceChildren();
  const where = [section, line ? `line ${line}` : null].filter(Boolean).join(', ');
  if (where) {
    info.append(`At ${where}.`);
    if (line) {
      const go = document.createElement('button');
      go.textContent = 'Show in editor';
      go.addEventListener('click', () => editor.goTo(line));
      info.append(go);
    }
    info.hidden = false;
  }
  runMark = line ? [{ line, severity: 'error', message: `${error.kind}: ${error.message}` }] : [];
  drawMarks({ scroll: true });
}

/**
 * Marks diagnostics in the editor and lists them under the result:
 * `{ severity: 'error' | 'warning' | 'info', kind, message, line, column, section }[]`.
 * An empty list clears them.
 */
export function showDiagnostics(diagnostics) {
  diagnosticMarks = diagnostics.map((d) => ({ line: d.line, severity: d.severity ?? 'error', message: `${d.kind ? `${d.kind}: ` : ''}${d.message}` }));
  drawMarks();
  const list = $('diagnostics');
  list.replaceChildren();
  for (const d of diagnostics) {
    const li = document.createElement('li');
    li.dataset.severity = d.severity ?? 'error';
    const go = document.createElement('button');
    go.type = 'button';
    go.className = 'link';
    go.textContent = [d.section, d.line ? `line ${d.line}${d.column ? `:${d.column}` : ''}` : null].filter(Boolean).join(', ') || 'prompt';
    go.addEventListener('click', () => editor.goTo(d.line));
    li.append(go, ` ${d.severity ?? 'error'}: ${d.message}`);
    list.append(li);
  }
  list.hidden = diagnostics.length === 0;
}

const NO_RESULT = 'The run finished without a result: no ```lua block returned a value.\n\n' +
  'A prompt\'s result is what a block returns (for example `return models.infer(prose)`); prose on its own is not sent to a model.';

/**
 * Runs the editor's prompt, recording its journal; or, given `replay` (a journal), plays that
 * journal's run again: its answers come from the journal, so no model, tool, operator or store is
 * asked, and the playground's files are left as they are.
 */
async function run({ replay, from } = {}) {
  if (!engine || running) return;
  const onRound = (round, phase) => {
    if (phase === 'started' && !round.replayed) modelCalls += 1;
    roundsFrame ||= requestAnimationFrame(drawRounds);
  };
  const recorder = replay ? replayRecorder(replay, { onRound }) : createRecorder({ onRound });
  let options;
  try {
    options = replay
      ? { replay, onEvent: replayEvents(recorder) }
      : {
          args: $('args').value,
          models: await models(recorder),
          packs: runPacks(),
          store,
          limits: limits(),
          onEvent,
          record: true,
        };
    const seed = $('seed').value.trim();
    if (seed !== '' && !replay) options.seed = seed;
  } catch (error) {
    resetRunViews();
    show('error', error.message);
    setStatus('not run: fix the settings above');
    return;
  }
  const controller = new AbortController();
  options.signal = controller.signal;
  resetRunViews();
  lastLog = new Map();
  running = { controller, recorder };
  $('run').disabled = true;
  $('cancel').disabled = false;
  $('journal-replay').disabled = true;
  show('running', replay ? 'replaying…' : 'running…');
  setStatus(replay ? `replaying ${from}…` : 'running…');
  let before = new Map();
  if (!replay) {
    try {
      before = await snapshot(store);
    } catch { /* no diff for this run */ }
  }
  const source = editor.value;
  const started = performance.now();
  let outcome;
  try {
    outcome = await engine.run(source, options);
  } catch (error) {
    outcome = { ok: false, error: { kind: 'Usage', message: error.message } };
  }
  if (replay) recorder.end(outcome);
  lastRounds = recorder.rounds;
  running = null;
  closeAsk();
  $('run').disabled = false;
  $('cancel').disabled = true;
  $('journal-replay').disabled = false;
  // A replay's journal is offered again under its file's name, unless it is not this prompt's.
  if (replay && outcome.error?.kind !== 'Determinism') lastJournal = { entries: replay, name: from };
  else if (!replay && outcome.journal) lastJournal = { entries: outcome.journal, name: journalFileName(source) };
  $('journal-download').disabled = !lastJournal;
  const ms = Math.round(performance.now() - started);
  if (!outcome.ok) showError(outcome.error);
  else if (outcome.result === null || outcome.result === undefined) show('empty', NO_RESULT);
  else show('done', typeof outcome.result === 'string' ? outcome.result : JSON.stringify(outcome.result, null, 2));
  const verb = replay ? 'replayed: ' : '';
  setStatus(`${verb}${outcome.ok ? 'done' : outcome.error.kind} in ${ms} ms · seed ${outcome.seed ?? '?'}`);
  if (replay) {
    $('journal-status').textContent = outcome.error?.kind === 'Determinism'
      ? `${from} does not fit this prompt: ${outcome.error.message}`
      : `replayed ${from}: the recorded outcome, no model called`;
  }
  $('tokens').textContent = tokenSummary(recorder.totals);
  if (firstResult) performance.mark('runvil-first-result');
  firstResult = false;
  trace.draw();
  drawRounds();
  if (replay) return;
  try {
    showChanges(changes(before, await snapshot(store)));
  } catch { /* the store could not be read back: no diff */ }
  refreshFiles();
}

/**
 * A replay's events: its rounds are matched to the journal's replies, and each reply's text is
 * told to the views as one `model_delta`, as the model streamed it when the run was recorded (a
 * journal keeps the engine's events' causes, not what a model function emitted itself).
 */
function replayEvents(recorder) {
  return (event) => {
    const finished = recorder.onEvent(event);
    const text = finished?.reply?.content;
    if (typeof text === 'string' && text) {
      onEvent({ event: 'model_delta', type: 'model_delta', section: event.section, role: finished.role, turn: event.turn, text, time: event.time });
    }
    onEvent(event);
  };
}

// ---- journals: every run's, to download; a downloaded one, to replay ------------------------

$('journal-download').addEventListener('click', () => {
  if (!lastJournal) return;
  const url = URL.createObjectURL(new Blob([journalText(lastJournal.entries)], { type: 'application/json' }));
  const a = Object.assign(document.createElement('a'), { href: url, download: lastJournal.name });
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
});

$('journal-replay').addEventListener('change', async (event) => {
  const [file] = event.target.files;
  event.target.value = '';
  if (!file || running) return;
  let journal;
  try {
    journal = await readJournalFile(file);
  } catch (error) {
    // Nothing on screen changes: the editor, the last run and its journal stay.
    $('journal-status').textContent = error.message;
    setStatus(`not replayed: ${file.name} is not a journal`);
    return;
  }
  await run({ replay: journal, from: file.name });
});

function cancel() {
  running?.controller.abort();
}

$('run').addEventListener('click', () => run());
$('cancel').addEventListener('click', () => cancel());
document.addEventListener('keydown', (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key === 'Enter') { event.preventDefault(); run(); }
  if (event.key === 'Escape' && running) cancel();
  if (event.key === '?' && !/^(INPUT|TEXTAREA)$/.test(document.activeElement?.tagName ?? '') && !document.activeElement?.closest('.cm-editor')) openHelp();
});
function openHelp() {
  $('help').showModal();
  fillReference();
}
$('help-open').addEventListener('click', openHelp);

/** The reference sheet, from the same generated data as the editor's hover docs. */
async function fillReference() {
  const list = $('help-reference');
  if (list.childElementCount) return;
  const { default: reference } = await import('runvil-reference');
  const draw = () => {
    const filter = $('help-filter').value.trim().toLowerCase();
    const engine = reference.filter((e) => e.global && !e.doc.startsWith("Lua's own"));
    // Names that match come alone; the text is searched when no name does.
    const named = engine.filter((e) => e.name.toLowerCase().includes(filter));
    const shown = named.length ? named : engine.filter((e) => e.doc.toLowerCase().includes(filter));
    list.replaceChildren();
    for (const entry of shown) {
      const dt = document.createElement('dt');
      dt.append(Object.assign(document.createElement('code'), { textContent: entry.signature }));
      const dd = document.createElement('dd');
      dd.textContent = entry.doc;
      list.append(dt, dd);
    }
  };
  $('help-filter').addEventListener('input', draw);
  draw();
}

// ---- start --------------------------------------------------------------------------------

async function initialPrompt() {
  if (location.hash.startsWith('#z=')) {
    // The link is read once: the address bar goes back to the page, so a reload keeps your work.
    const hash = location.hash;
    history.replaceState(null, '', location.pathname + location.search);
    try {
      const shared = await fromLink(hash);
      if (shared) return { kind: 'shared', name: titleOf(shared.source), prompt: shared, note: 'opened a shared prompt; yours is under “(your prompt)”' };
    } catch {
      return { ...fallbackPrompt(), note: 'the shared link could not be read (it may be cut short); showing your prompt' };
    }
  }
  try {
    const open = JSON.parse(sessionStorage.getItem(OPEN_KEY) ?? 'null');
    if (open?.kind && open.kind !== 'draft' && typeof open.prompt?.source === 'string') return open;
  } catch { /* nothing remembered */ }
  return fallbackPrompt();
}

function fallbackPrompt() {
  const draft = readDraft();
  if (draft?.source) return { kind: 'draft', name: '', prompt: draft };
  const first = examples.find((e) => e.name === 'hello') ?? examples[0];
  return { kind: 'example', name: first.name, prompt: first };
}

loadSettings();
const initial = await initialPrompt();
load(initial.kind, initial.name, initial.prompt);
if (initial.note) setStatus(initial.note);
// CodeMirror arrives after the engine's bytes: the textarea is usable meanwhile.
wasmReady
  .catch(() => {})
  .then(() => editor.upgrade(richEditor))
  .catch(() => setStatus('the rich editor could not load; the plain one works'));

try {
  [engine, store] = await Promise.all([engineReady, storeReady]);
  $('run').disabled = false;
  if (!running) {
    show('ready', `runvil ${version} ready: pick an example or write a prompt, then Run (Ctrl+Enter).`);
    if (!initial.note) setStatus(`runvil ${version} · engine in a worker`);
  }
  refreshFiles();
} catch (error) {
  show('error', `the engine could not start: ${error.message}`);
  setStatus('not ready');
}

// For tests and the console.
window.playground = {
  get source() { return editor.value; },
  setSource(text) { editor.value = text; edited(); },
  goTo: (line) => editor.goTo(line),
  run,
  cancel,
  showDiagnostics,
  /** Resolves once the diagnostics of the editor's text are on screen. */
  checked: () => checker.idle(),
  get modelCalls() { return modelCalls; },
  get editorReady() { return editor.ready; },
  get engine() { return engine; },
  get store() { return store; },
};
