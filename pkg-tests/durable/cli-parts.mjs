// The model and the Pack `runvil run` loads in pkg-tests/durable-kill.test.mjs (`--model
// module:...#model`, `--pack`): the fixture's, each call counted as a line in the file COUNT_FILE
// names, so that calls are counted across the processes a killed run takes.
import { appendFileSync } from 'node:fs';
import { modelReply, probePack } from './fixture.mjs';

const count = (what) => appendFileSync(process.env.COUNT_FILE, `${what} ${process.pid}\n`);

export async function model(request) {
  count('model');
  return modelReply(request);
}

export const probe = probePack(() => count('tool'));
