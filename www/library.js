// The prompts a person keeps in this browser: the draft ("your prompt", in localStorage, written
// on every edit) and named saved prompts (IndexedDB, database `runvil-playground-prompts`). A
// prompt is { source, args, seed }.

const DRAFT_KEY = 'runvil.playground.draft';
const DB_NAME = 'runvil-playground-prompts';
const STORE = 'prompts';

export function readDraft() {
  try {
    const draft = JSON.parse(localStorage.getItem(DRAFT_KEY) ?? 'null');
    return typeof draft?.source === 'string' ? { source: draft.source, args: draft.args ?? '', seed: draft.seed ?? '' } : null;
  } catch {
    return null;
  }
}

export function writeDraft(prompt) {
  try {
    localStorage.setItem(DRAFT_KEY, JSON.stringify(prompt));
    return true;
  } catch {
    // Storage full or blocked: the caller says the draft is not kept.
    return false;
  }
}

export const samePrompt = (a, b) => Boolean(a && b) && a.source === b.source && (a.args ?? '') === (b.args ?? '') && (a.seed ?? '') === (b.seed ?? '');

let opening = null;

function database() {
  opening ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: 'name' });
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB could not be opened'));
  });
  opening.catch(() => { opening = null; });
  return opening;
}

async function transaction(mode, work) {
  const db = await database();
  return new Promise((resolve, reject) => {
    const tx = db.transaction(STORE, mode);
    const result = work(tx.objectStore(STORE));
    tx.oncomplete = () => resolve(result.result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error('the transaction was aborted'));
  });
}

/** The saved prompts, by name: [{ name, source, args, seed, saved }]. */
export async function savedPrompts() {
  const all = await transaction('readonly', (store) => store.getAll());
  return all.sort((a, b) => a.name.localeCompare(b.name));
}

export async function savedPrompt(name) {
  return (await transaction('readonly', (store) => store.get(name))) ?? null;
}

export async function savePrompt(name, prompt) {
  const clean = String(name).trim();
  if (!clean) throw new Error('a saved prompt needs a name');
  await transaction('readwrite', (store) => store.put({ name: clean, source: prompt.source, args: prompt.args ?? '', seed: prompt.seed ?? '', saved: new Date().toISOString() }));
  return clean;
}

export async function deleteSavedPrompt(name) {
  await transaction('readwrite', (store) => store.delete(name));
}

/** A name for `source`: its H1, else its frontmatter name, else "Untitled". */
export function titleOf(source) {
  const h1 = /^# +(.+)$/m.exec(source.replace(/^---\n[\s\S]*?\n---\n/, ''));
  const name = /^name:\s*(.+)$/m.exec(/^---\n([\s\S]*?)\n---\n/.exec(source)?.[1] ?? '');
  return (h1?.[1] ?? name?.[1] ?? 'Untitled').trim().slice(0, 60);
}
