// @ts-check
// The one batch a replayed or resumed run commits when it ends (docs/store.md, "Resuming a run").

const depth = (path) => path.split('/').length;

/**
 * A run's changes as one batch that takes any store holding a prefix of them (in any partition
 * into batches) to where the whole sequence takes it: every path the changes touch set to its
 * final state — deletions deepest first, then directories, then writes. A path deleted before it
 * was written again is deleted first too, so a directory the prefix left there gives way to the
 * file. Applying the batch twice leaves what applying it once does.
 * @param {any[]} changes
 */
export function finalState(changes) {
  const last = new Map();
  const deletedBefore = new Set();
  for (const change of changes) {
    if (change.op === 'delete') deletedBefore.add(change.path);
    last.set(change.path, change);
  }
  const present = [...last.values()].filter((c) => c.op !== 'delete').map((c) => `${c.path}/`);
  // A path deleted and then given a file below it is a directory again (made by the write).
  const holdsSomething = (path) => present.some((p) => p.startsWith(`${path}/`));
  const deletes = [...last.values()]
    .filter((c) => (c.op === 'delete' && !holdsSomething(c.path)) || (c.op === 'write' && deletedBefore.has(c.path)))
    .map((c) => ({ op: 'delete', path: c.path }));
  deletes.sort((a, b) => depth(b.path) - depth(a.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const mkdirs = [...last.values()].filter((c) => c.op === 'mkdir');
  mkdirs.sort((a, b) => depth(a.path) - depth(b.path));
  const writes = [...last.values()].filter((c) => c.op === 'write');
  return [...deletes, ...mkdirs, ...writes];
}
