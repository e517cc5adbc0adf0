// @ts-check
// directoryStore(dir): the store bridge (docs/store.md) on a directory of a Node, Bun or Deno host.
// A store path is the file at that relative path under `dir`, so the files are plain files.
//
// Durability: every batch the engine commits is applied whole or not at all, even when the process
// dies in the middle (after a crash, a store holds the run's batches up to some point, never part
// of one):
//   1. the batch is written to a journal file beside the files (temporary name, fsync, rename);
//   2. each change is applied: a write goes to a temporary file in the target's directory, is
//      fsynced and renamed over the target, so a file is never torn;
//   3. the journal is removed.
// open() replays a journal it finds (a change is idempotent: whole contents, mkdir, delete), so a
// batch whose journal landed is completed; one whose journal did not land left nothing.
//
// Bookkeeping names end in '.', which no store path segment may (docs/store.md: rule
// unsafe_suffix), so they can never collide with a run's files; open() skips them.

import { fromBytes, isRelativePath } from './shared.js';

// node:fs is loaded on first use, not imported: index.js (which re-exports this) must still load
// where there is no node: module at all (a page importing index.js by URL).
let fs;
async function loadFs() {
  fs ??= (await import('node:fs/promises')).default;
}

/** `root/path` (store paths are '/'-separated; Node accepts '/' on every platform). */
const join = (root, path) => `${root.replace(/[\\/]+$/, '')}/${path}`;
const dirname = (path) => path.slice(0, path.lastIndexOf('/'));

const JOURNAL = '.runvil-journal.';
let tempCounter = 0;

const isBookkeeping = (name) => name.endsWith('.');
const tempName = (target) => join(dirname(target), `.${process.pid}-${++tempCounter}.runvil-tmp.`);

/** Writes `data` to `target` atomically: a temporary file beside it, fsynced, renamed over it. */
async function writeAtomic(target, data) {
  const temp = tempName(target);
  const handle = await fs.open(temp, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.rename(temp, target);
}

/** Makes a rename in `dir` durable (a directory fsync; not every platform allows it). */
async function syncDir(dir) {
  let handle;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    /* Windows cannot open directories; rename is as durable as it gets there */
  } finally {
    await handle?.close();
  }
}

function encodeJournal(changes) {
  return JSON.stringify(
    changes.map((c) =>
      c.op === 'write'
        ? {
            op: 'write',
            path: c.path,
            data: Buffer.from(c.data.buffer, c.data.byteOffset, c.data.byteLength).toString('base64'),
          }
        : { op: c.op, path: c.path },
    ),
  );
}

function decodeJournal(text) {
  return JSON.parse(text).map((c) => (c.op === 'write' ? { ...c, data: Buffer.from(c.data, 'base64') } : c));
}

/** A store path, and not one of the bookkeeping names. */
function checkPath(path, what) {
  if (!isRelativePath(path) || path.split('/').some(isBookkeeping)) {
    throw new TypeError(`${what}: not a store path: ${JSON.stringify(path)}`);
  }
}

async function applyChange(root, change) {
  checkPath(change.path, 'directoryStore.commit');
  const target = join(root, change.path);
  if (change.op === 'write') {
    await fs.mkdir(dirname(target), { recursive: true });
    await writeAtomic(target, change.data);
  } else if (change.op === 'mkdir') {
    await fs.mkdir(target, { recursive: true });
  } else if (change.op === 'delete') {
    // A file or an empty directory; already gone is fine (a replayed batch deletes twice), and so
    // is a path below a file (a resumed run's batch may delete `d/x` after the file `d` landed).
    await fs.rm(target, { force: true }).catch(async (error) => {
      if (error.code === 'ERR_FS_EISDIR' || error.code === 'EISDIR') await fs.rmdir(target);
      else if (error.code !== 'ENOTDIR') throw error;
    });
  } else {
    throw new TypeError(`directoryStore.commit: unknown change ${JSON.stringify(change.op)}`);
  }
}

/**
 * `dir`: the store's directory (created when missing).
 * @type {typeof import('../node.d.ts').directoryStore}
 */
export function directoryStore(dir, { readOnly = false } = {}) {
  if (typeof dir !== 'string' || dir === '') throw new TypeError('directoryStore: dir must be a directory path');
  const journal = join(dir, JOURNAL);
  // One commit at a time per store object: the journal holds one batch.
  let queue = Promise.resolve();

  /** Applies a batch in order, then makes its renames durable before the journal may go. */
  async function applyBatch(changes) {
    const touched = new Set([dir]);
    for (const change of changes) {
      await applyChange(dir, change);
      touched.add(dirname(join(dir, change.path)));
    }
    for (const each of touched) await syncDir(each);
  }

  /** Completes a batch a dead process left in the journal, and sweeps its temporary files. */
  async function recover() {
    let text;
    try {
      text = await fs.readFile(journal, 'utf8');
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
    if (text !== undefined) {
      await applyBatch(decodeJournal(text));
      await fs.rm(journal, { force: true });
    }
  }

  async function walk(prefix, files, dirs) {
    const entries = await fs.readdir(join(dir, prefix), { withFileTypes: true });
    for (const entry of entries) {
      const path = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (isBookkeeping(entry.name)) {
        // A dead writer's temporary file.
        if (entry.name !== JOURNAL && entry.isFile()) await fs.rm(join(dir, path), { force: true });
        continue;
      }
      if (entry.isDirectory()) {
        dirs.push(path);
        await walk(path, files, dirs);
      } else if (entry.isFile()) {
        files.push(path);
      }
    }
  }

  return {
    kind: 'directory',
    dir,
    readOnly: Boolean(readOnly),
    async open() {
      await loadFs();
      await fs.mkdir(dir, { recursive: true });
      if (!readOnly) await recover();
      const files = [];
      const dirs = [];
      await walk('', files, dirs);
      files.sort();
      dirs.sort();
      return { files: files.map((path) => ({ path })), dirs, readOnly: Boolean(readOnly) };
    },
    async read(path) {
      checkPath(path, 'directoryStore.read');
      await loadFs();
      try {
        return fromBytes(await fs.readFile(join(dir, path)));
      } catch (error) {
        if (error.code === 'ENOENT' || error.code === 'EISDIR') return undefined;
        throw error;
      }
    },
    async list() {
      await loadFs();
      const files = [];
      await walk('', files, []).catch((error) => {
        if (error.code !== 'ENOENT') throw error;
      });
      return files.sort();
    },
    commit(changes) {
      const run = queue.then(async () => {
        if (readOnly) throw new Error(`directoryStore: ${dir} is read-only`);
        if (!Array.isArray(changes) || changes.length === 0) return;
        await loadFs();
        await fs.mkdir(dir, { recursive: true });
        await writeAtomic(journal, encodeJournal(changes));
        await syncDir(dir);
        await applyBatch(changes);
        await fs.rm(journal, { force: true });
      });
      queue = run.catch(() => {});
      return run;
    },
  };
}
