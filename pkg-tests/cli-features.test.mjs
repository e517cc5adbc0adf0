// The CLI serving real prompts: a model per role, Packs from a module, the outcome as JSON, the
// requests as the model saw them, arguments from a file, log() lines and where a run failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PKG, ROOT } from './helpers.mjs';

const dir = mkdtempSync(join(tmpdir(), 'runvil-cli-features-'));
const file = (name, text) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const cli = (...args) =>
  new Promise((resolve) => {
    execFile(process.execPath, [join(PKG, 'cli.js'), ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout, stderr });
    });
  });

const TWO_ROLES = `---
models:
  writer: {}
  critic: {}
---
# Roles

## Draft

\`\`\`lua
models.use('writer')
log('drafting\\tnow')
var.draft = models.infer('write')
\`\`\`

## Review

\`\`\`lua
models.use('critic')
return var.draft .. ' / ' .. models.infer('review ' .. var.draft)
\`\`\`
`;

test('a model per role, log() lines on stderr, the outcome as JSON and the requests shown', async () => {
  const prompt = file('roles.md', TWO_ROLES);
  const writer = file(
    'writer.json',
    JSON.stringify([{ content: 'a draft', usage: { input_tokens: 3, output_tokens: 2 } }]),
  );
  const critic = file('critic.json', JSON.stringify(['fine']));
  const plain = await cli('run', prompt, '--model', `writer=script:${writer}`, '--model', `critic=script:${critic}`);
  assert.deepEqual(plain, { code: 0, stdout: 'a draft / fine\n', stderr: 'log Draft: drafting\tnow\n' });
  const json = await cli(
    'run',
    prompt,
    '--json',
    '--quiet',
    '--seed',
    '3',
    '--model',
    `writer=script:${writer}`,
    '--model',
    `critic=script:${critic}`,
  );
  assert.equal(json.code, 0);
  const outcome = JSON.parse(json.stdout);
  assert.deepEqual([outcome.ok, outcome.result, outcome.seed], [true, 'a draft / fine', '3']);
  assert.deepEqual(outcome.usage.writer, {
    calls: 1,
    input_tokens: 3,
    output_tokens: 2,
    cached_tokens: 0,
    reasoning_tokens: 0,
  });
  const shown = await cli(
    'run',
    prompt,
    '--quiet',
    '--show-requests',
    '--model',
    `writer=script:${writer}`,
    '--model',
    `critic=script:${critic}`,
  );
  assert.match(shown.stderr, /── model writer · Draft · round 1\n\{\n {2}"messages": \[/);
  assert.match(shown.stderr, /── model critic · Review · round 1\n/);
  // A role without a model is the run's requirement notice.
  const missing = await cli('run', prompt, '--model', `writer=script:${writer}`);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no model for role: critic/);
});

test('Packs from a module, arguments from a file, and where a failure happened', async () => {
  const pack = file(
    'pack.mjs',
    "export const shout = { name: 'shout', description: 'Loud.', tools: [{ name: 'up', description: 'Upper.', parameters: { type: 'object', properties: { text: { type: 'string' } } }, trust: 'trusted', call: async ({ text }) => text.toUpperCase() }] };\n",
  );
  const prompt = file(
    'pack.md',
    "---\nuses: [shout]\n---\n# P\n\n## Main\n\n```lua\nreturn tools.call('shout/up', { text = args })\n```\n",
  );
  const args = file('args.txt', 'from a file');
  assert.deepEqual(await cli('run', prompt, '--pack', pack, '--args-file', args), {
    code: 0,
    stdout: 'FROM A FILE\n',
    stderr: '',
  });
  const noPack = await cli('run', prompt, '--pack', args);
  assert.equal(noPack.code, 2);
  const failing = file('fail.md', "# F\n\n## Main\n\nprose\n\n```lua\nstore.write('', 'x')\n```\n");
  assert.deepEqual(await cli('run', failing), {
    code: 1,
    stdout: '',
    stderr: `Vfs: invalid path "": path is empty\n  at ${failing}:8 (## Main)\n`,
  });
});
