// Types of the Node entry (`runvil` under the `node` condition, `runvil/node`): everything in
// index.d.ts, and directoryStore, which needs a file system.
export * from './index.js';
import type { Store } from './index.js';

export interface DirectoryStore extends Store {
  readonly kind: 'directory';
  readonly dir: string;
  readonly readOnly: boolean;
  list(): Promise<string[]>;
}

/**
 * A store on a directory (Node, Bun, Deno; exported by the Node entry only): a store path is the
 * file at that path under `dir`. Each committed batch is applied whole or not at all, even if the
 * process dies mid-batch (a journal beside the files, replayed by the next open()); each file is
 * replaced atomically (temporary file, fsync, rename). One process writes a directory at a time.
 */
export function directoryStore(dir: string, options?: { readOnly?: boolean }): DirectoryStore;
