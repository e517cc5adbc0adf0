// tools/check-links.mjs on a tiny repository made in a temp dir: what resolves passes, each kind of
// broken reference is listed as file:line, and the exit status says which. Needs no pkg/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const TOOL = fileURLToPath(new URL('../tools/check-links.mjs', import.meta.url));

function repo(files) {
  const root = mkdtempSync(join(tmpdir(), 'runvil-links-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const check = (root) => spawnSync(process.execPath, [TOOL, '--root', root], { encoding: 'utf8' });

const TREE = {
  '.gitignore': '/pkg\n',
  'src/lib.rs': '',
  'src/lua/values.rs': '',
  'spec-tests/001.cases': '',
  'docs/store.md': '# The store\n\n## Decisions the chapter left open\n\n## Claims\n\n## Claims\n',
};

test('links, anchors and repository paths that resolve pass', (t) => {
  const root = repo({
    ...TREE,
    'README.md': [
      '# Project',
      '',
      'See [the store](docs/store.md), [its decisions](docs/store.md#decisions-the-chapter-left-open),',
      '[the second Claims](docs/store.md#claims-1) and [below](#usage). Code: `src/lua/values.rs`,',
      '`src/lua/`, `spec-tests/*.cases`, `docs/store.md#claims`, `node tools/x.mjs` is not ours to',
      'check (no tools/ here), nor are `pkg/index.d.ts` (ignored), `web/search` or `/v1`.',
      '',
      '```sh',
      'cat src/missing.rs   # a fenced block is an example, not a reference',
      '```',
      '',
      '## Usage',
    ].join('\n'),
  });
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const r = check(root);
  assert.equal(r.stderr, '');
  assert.equal(r.status, 0);
  assert.match(r.stdout, /links OK: 2 docs/);
});

test('each broken reference is listed as file:line: reference, and the exit status is 1', (t) => {
  const root = repo({
    ...TREE,
    'README.md': '# Project\n\nA [gone link](docs/gone.md) and `src/lua/gone.rs`.\n',
    'docs/guide.md': [
      '# Guide',
      '',
      '[a missing anchor](store.md#no-such-heading), [out](../../elsewhere.md),',
      '`../shared/spec/DECISIONS.md`, `spec-tests/*.json` and [here](#nowhere).',
      `\`${'/' + tmpdir().split('/')[1]}/somewhere/else.md\``,
    ].join('\n'),
  });
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const r = check(root);
  assert.equal(r.status, 1);
  const lines = r.stderr.trim().split('\n').slice(1);
  assert.deepEqual(lines.map((l) => l.replace(/ \(.*\)$/, '')), [
    'README.md:3: src/lua/gone.rs',
    'README.md:3: docs/gone.md',
    'docs/guide.md:3: store.md#no-such-heading',
    'docs/guide.md:3: ../../elsewhere.md',
    'docs/guide.md:4: ../shared/spec/DECISIONS.md',
    'docs/guide.md:4: spec-tests/*.json',
    'docs/guide.md:4: #nowhere',
    `docs/guide.md:5: /${tmpdir().split('/')[1]}/somewhere/else.md`,
  ]);
  assert.match(r.stderr, /store\.md#no-such-heading \(no heading makes #no-such-heading in docs\/store\.md\)/);
  assert.match(r.stderr, /\.\.\/\.\.\/elsewhere\.md \(outside the repository\)/);
});
