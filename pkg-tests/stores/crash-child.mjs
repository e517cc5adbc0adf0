// Child of directory-store.test.mjs: runs `prompt` on directoryStore(dir) and dies by SIGKILL just
// before the file system's `killAt`-th rename (the store's commit points), as a crash would.
import fsp from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createEngine, directoryStore } from '../../pkg/index.js';

const [dir, killAt, promptFile] = process.argv.slice(2);
let renames = 0;
const rename = fsp.rename;
fsp.rename = async (...args) => {
  if (++renames === Number(killAt)) process.kill(process.pid, 'SIGKILL');
  return rename(...args);
};
const engine = await createEngine();
const outcome = await engine.run(readFileSync(promptFile, 'utf8'), { store: directoryStore(dir) });
process.stdout.write(JSON.stringify({ outcome, renames }));
