// Every prompt in examples/ runs from the CLI as examples/README.md says, with the exit status it
// gives there (0 unless the line says "exits N"), and so do the tests of examples/tests/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createReadStream, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PKG, ROOT } from './helpers.mjs';

const README = readFileSync(join(ROOT, 'examples/README.md'), 'utf8');
const block = /```sh\n([\s\S]*?)```/.exec(README)?.[1] ?? '';
const commands = block
  .split('\n')
  .filter((line) => line.startsWith('runvil run ') || line.startsWith('runvil test '))
  .map((line) => {
    const [command, comment = ''] = line.split(/\s+#\s+/);
    // Words, with "double-quoted" ones kept whole; `< FILE` feeds FILE to stdin.
    const words = [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]).slice(1);
    const at = words.indexOf('<');
    const stdin = at >= 0 ? words[at + 1] : undefined;
    const args = at >= 0 ? words.slice(0, at) : words;
    return { line, args, stdin, code: Number(/exits (\d+)/.exec(comment)?.[1] ?? 0) };
  });

function run({ args, stdin }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(PKG, 'cli.js'), ...args], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    if (stdin) createReadStream(join(ROOT, stdin)).pipe(child.stdin);
    else child.stdin.end();
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test('every prompt in examples/ has a command in examples/README.md', () => {
  const prompts = readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.md') && f !== 'README.md');
  for (const prompt of prompts) {
    assert.ok(
      commands.some((c) => c.args[1] === `examples/${prompt}`),
      `no command runs examples/${prompt}`,
    );
  }
});

for (const command of commands) {
  test(command.line, async () => {
    const { code, stdout, stderr } = await run(command);
    assert.equal(code, command.code, `stdout: ${stdout}\nstderr: ${stderr}`);
    if (code === 0) assert.notEqual(stdout.trim(), '', 'a result on stdout');
  });
}
