// The Runvil playground: the engine runs in a Web Worker (runvil/worker), the page keeps the editor,
// the models, the demo Pack, input.ask, the events timeline and the IndexedDB file browser.
import { createEngine, indexedDbStore, userInputPack, openAIChatModel, version } from './pkg/worker-client.js';
import { createEditor } from './editor.js';
import { demoModel, demoPack } from './demo.js';
import examples from './examples.js';

const $ = (id) => document.getElementById(id);
const STORE_NAME = 'playground';
const SETTINGS_KEY = 'runvil.playground.openai';
const DRAFT_KEY = 'runvil.playground.draft';
const MAX_EVENTS_SHOWN = 2000;

// ---- state --------------------------------------------------------------------------------

let engine = null;
let store = null;
let running = null; // { controller } while a run is in flight
let pendingAsk = null; // { resolve, reject } while input.ask waits

// ---- editor and examples --------------------------------------------------------------------

const editor = createEditor($('editor'), {
  doc: '',
  onRun: () => run(),
  onCancel: () => cancel(),
  onChange: () => saveDraft(),
});

for (const [i, example] of examples.entries()) {
  const option = document.createElement('option');
  option.value = String(i);
  option.textContent = `${example.name}: ${example.description}`;
  $('example').append(option);
}
$('example').addEventListener('change', () => {
  const example = examples[Number($('example').value)];
  if (!example) return;
  editor.value = example.source;
  $('args').value = example.args ?? '';
  editor.markError(null);
  saveDraft();
});

function saveDraft() {
  try {
    localStorage.setItem(DRAFT_KEY, JSON.stringify({ source: editor.value, args: $('args').value, seed: $('seed').value }));
  } catch { /* storage full or blocked: drafts are a convenience */ }
}
$('args').addEventListener('input', saveDraft);
$('seed').addEventListener('input', saveDraft);

// ---- sharing by URL -----------------------------------------------------------------------

function toBase64Url(bytes) {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const raw = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

async function transform(bytes, stream) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}

/** `#z=` deflate-raw + base64url of the JSON { source, args, seed }. */
async function shareLink() {
  const json = new TextEncoder().encode(JSON.stringify({ source: editor.value, args: $('args').value, seed: $('seed').value }));
  const packed = await transform(json, new CompressionStream('deflate-raw'));
  return `${location.origin}${location.pathname}#z=${toBase64Url(packed)}`;
}

async function fromLink(hash) {
  const m = /^#z=([A-Za-z0-9_-]+)$/.exec(hash);
  if (!m) return null;
  const json = await transform(fromBase64Url(m[1]), new DecompressionStream('deflate-raw'));
  return JSON.parse(new TextDecoder().decode(json));
}

$('share').addEventListener('click', async () => {
  const link = await shareLink();
  history.replaceState(null, '', link);
  try {
    await navigator.clipboard.writeText(link);
    setStatus('link copied to the clipboard');
  } catch {
    setStatus('the link is in the address bar');
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

/** The run's models: every role goes to the chosen model. */
function models() {
  if (modelChoice() !== 'openai') return () => demoModel;
  const baseURL = $('base-url').value.trim();
  const model = $('model-id').value.trim();
  if (!baseURL || !model) throw new Error('enter the endpoint\'s base URL and model name (Model settings), or pick the demo model');
  const fn = openAIChatModel({ baseURL, apiKey: $('api-key').value || undefined, model, stream: true });
  return () => fn;
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

// ---- input.ask in the page ----------------------------------------------------------------

function askInPage(ctx) {
  return new Promise((resolve, reject) => {
    pendingAsk = { resolve, reject };
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

// ---- the events timeline ------------------------------------------------------------------

let eventCount = 0;
let queued = [];
let frame = 0;

function kindOf(name) {
  if (name.startsWith('section_') || name.startsWith('task_') || name.startsWith('run_')) return 'section';
  if (name.startsWith('model_')) return 'model';
  if (name.startsWith('tool_')) return 'tool';
  if (name.startsWith('store_') || name.includes('commit')) return 'store';
  if (name === 'log' || name.startsWith('log')) return 'log';
  if (name.includes('error') || name.includes('failed')) return 'error';
  return 'other';
}

function summary(event) {
  const parts = [];
  for (const key of ['role', 'turn', 'tool', 'name', 'path', 'pattern', 'id', 'status', 'message', 'level', 'text']) {
    const value = event[key];
    if (value === undefined || value === null || typeof value === 'object') continue;
    const text = String(value);
    parts.push(`${key} ${text.length > 80 ? `${text.slice(0, 80)}…` : text}`);
  }
  return parts.join(' · ');
}

function renderEvent(event) {
  const li = document.createElement('li');
  const name = String(event.event ?? event.type ?? 'event');
  li.dataset.kind = kindOf(name);
  const head = document.createElement('div');
  head.innerHTML = '<span class="name"></span> <span class="meta"></span>';
  head.querySelector('.name').textContent = name;
  head.querySelector('.meta').textContent = [event.section, summary(event)].filter(Boolean).join(' · ');
  li.append(head);
  const rest = { ...event };
  delete rest.event;
  delete rest.type;
  delete rest.section;
  if (Object.keys(rest).length) {
    const details = document.createElement('details');
    const label = document.createElement('summary');
    label.textContent = 'details';
    const pre = document.createElement('pre');
    pre.textContent = JSON.stringify(rest, null, 2);
    details.append(label, pre);
    li.append(details);
  }
  return li;
}

/** Events arrive fast: they are drawn once per frame, so the page stays responsive. */
function addEvent(event) {
  eventCount += 1;
  if (eventCount <= MAX_EVENTS_SHOWN) queued.push(event);
  frame ||= requestAnimationFrame(flushEvents);
}

function flushEvents() {
  frame = 0;
  const list = $('events');
  const fragment = document.createDocumentFragment();
  for (const event of queued) fragment.append(renderEvent(event));
  queued = [];
  list.append(fragment);
  if (eventCount > MAX_EVENTS_SHOWN && !list.dataset.capped) {
    list.dataset.capped = 'yes';
    const li = document.createElement('li');
    li.textContent = `(only the first ${MAX_EVENTS_SHOWN} events are shown)`;
    list.append(li);
  }
  $('event-count').textContent = String(eventCount);
  $('events-empty').hidden = eventCount > 0;
}

function clearEvents() {
  eventCount = 0;
  queued = [];
  $('events').replaceChildren();
  delete $('events').dataset.capped;
  $('event-count').textContent = '';
  $('events-empty').hidden = false;
}

// ---- tabs ---------------------------------------------------------------------------------

function showTab(name) {
  for (const tab of document.querySelectorAll('[role="tab"]')) tab.setAttribute('aria-selected', String(tab.dataset.tab === name));
  for (const panel of document.querySelectorAll('[data-panel]')) panel.hidden = panel.dataset.panel !== name;
  if (name === 'files') refreshFiles();
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

/** The prompt line an error points at: `line` (frontmatter) or `## Section:N:` in the message. */
function errorLine(error) {
  if (Number.isInteger(error.line)) return error.line;
  const m = /:(\d+):/.exec(error.message ?? '');
  return m ? Number(m[1]) : null;
}

function showError(error) {
  show('error', `${error.kind}: ${error.message}`);
  const line = errorLine(error);
  const info = $('error-info');
  info.replaceChildren();
  const where = [error.section, line ? `line ${line}` : null].filter(Boolean).join(', ');
  if (where) {
    info.append(`At ${where}.`);
    if (line) {
      const go = document.createElement('button');
      go.textContent = 'Show in editor';
      go.addEventListener('click', () => { editor.markError(line, error.message); editor.focus(); });
      info.append(go);
    }
    info.hidden = false;
  }
  editor.markError(line, error.message);
}

async function run() {
  if (!engine || running) return;
  let options;
  try {
    options = {
      args: $('args').value,
      models: models(),
      packs: [demoPack, userInputPack({ ask: askInPage })],
      store,
      limits: limits(),
      onEvent: addEvent,
    };
    const seed = $('seed').value.trim();
    if (seed !== '') options.seed = seed;
  } catch (error) {
    show('error', error.message);
    return;
  }
  const controller = new AbortController();
  options.signal = controller.signal;
  running = { controller };
  clearEvents();
  editor.markError(null);
  $('error-info').hidden = true;
  $('run').disabled = true;
  $('cancel').disabled = false;
  show('running', 'running…');
  setStatus('running…');
  const started = performance.now();
  let outcome;
  try {
    outcome = await engine.run(editor.value, options);
  } catch (error) {
    outcome = { ok: false, error: { kind: 'Usage', message: error.message } };
  }
  running = null;
  closeAsk();
  $('run').disabled = false;
  $('cancel').disabled = true;
  const ms = Math.round(performance.now() - started);
  if (outcome.ok) show('done', outcome.result ?? '(no result)');
  else showError(outcome.error);
  setStatus(`${outcome.ok ? 'done' : outcome.error.kind} in ${ms} ms · seed ${outcome.seed ?? '?'}`);
  performance.mark('runvil-first-result');
  refreshFiles();
}

function cancel() {
  running?.controller.abort();
}

$('run').addEventListener('click', () => run());
$('cancel').addEventListener('click', () => cancel());
document.addEventListener('keydown', (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key === 'Enter') { event.preventDefault(); run(); }
  if (event.key === 'Escape' && running) cancel();
});

// ---- start --------------------------------------------------------------------------------

async function initialPrompt() {
  try {
    const shared = await fromLink(location.hash);
    if (shared) return shared;
  } catch {
    setStatus('the shared link could not be read; showing an example');
  }
  try {
    const draft = JSON.parse(localStorage.getItem(DRAFT_KEY) ?? 'null');
    if (draft?.source) return draft;
  } catch { /* no draft */ }
  const first = examples.find((e) => e.name === 'hello') ?? examples[0];
  return { source: first?.source ?? '# Hello\n', args: first?.args ?? '' };
}

loadSettings();
const initial = await initialPrompt();
editor.value = initial.source;
$('args').value = initial.args ?? '';
$('seed').value = initial.seed ?? '';

try {
  [engine, store] = await Promise.all([createEngine(), indexedDbStore(STORE_NAME)]);
  show('ready', `runvil ${version} ready: pick an example or write a prompt, then Run (Ctrl+Enter).`);
  setStatus(`runvil ${version} · engine in a worker`);
  $('run').disabled = false;
  refreshFiles();
} catch (error) {
  show('error', `the engine could not start: ${error.message}`);
  setStatus('not ready');
}

// For tests and the console.
window.playground = {
  get source() { return editor.value; },
  setSource(text) { editor.value = text; },
  run,
  cancel,
  get engine() { return engine; },
  get store() { return store; },
};
