// What a run did to the store: a snapshot of the text files before and after, and a line diff of
// each file that changed. Files over MAX_BYTES are compared by size only.

const MAX_FILES = 500;
const MAX_BYTES = 256 * 1024;

/** path -> { size, text | null } of the store's files (at most MAX_FILES). */
export async function snapshot(store) {
  const out = new Map();
  if (!store) return out;
  const entries = (await store.entries()).slice(0, MAX_FILES);
  for (const { path, size } of entries) {
    let text = null;
    if (size <= MAX_BYTES) {
      const content = await store.read(path);
      text = typeof content === 'string' ? content : null;
    }
    out.set(path, { size, text });
  }
  return out;
}

/** Lines of `a` and `b` as [{ op: ' ' | '-' | '+', text }] (LCS; large files fall back to whole replacement). */
export function lineDiff(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  if (x.length * y.length > 4_000_000) return [...x.map((text) => ({ op: '-', text })), ...y.map((text) => ({ op: '+', text }))];
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push({ op: ' ', text: x[i] }); i++; j++; }
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ op: '-', text: x[i++] });
    else out.push({ op: '+', text: y[j++] });
  }
  while (i < n) out.push({ op: '-', text: x[i++] });
  while (j < m) out.push({ op: '+', text: y[j++] });
  return out;
}

/** The changes from `before` to `after`: [{ path, status: 'added' | 'deleted' | 'changed', lines }]. */
export function changes(before, after) {
  const out = [];
  for (const [path, file] of after) {
    const old = before.get(path);
    if (!old) out.push({ path, status: 'added', lines: file.text === null ? null : lineDiff('', file.text).filter((l) => l.op !== '-') });
    else if (old.text !== file.text || old.size !== file.size) {
      out.push({ path, status: 'changed', lines: old.text === null || file.text === null ? null : lineDiff(old.text, file.text) });
    }
  }
  for (const path of before.keys()) if (!after.has(path)) out.push({ path, status: 'deleted', lines: null });
  return out.sort((a, b) => a.path.localeCompare(b.path));
}
