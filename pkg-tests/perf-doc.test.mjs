// tools/perf-doc.mjs: the generator that rewrites docs/performance.md's tables from bench results.
// Runs on the fixture results in pkg-tests/fixtures/perf-doc/ (two suites, numbers chosen so one
// goal is met and one is not); no benchmark runs, nothing is timed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, writeFileSync, rmSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { ROOT } from './helpers.mjs';
import { BLOCKS, renderDoc, loadResults, verdict } from '../tools/perf-doc.mjs';

const FIXTURES = join(ROOT, 'pkg-tests/fixtures/perf-doc');
const results = loadResults(FIXTURES);
const blocks = { entries: BLOCKS.entries, fanout: BLOCKS.fanout };
const DOC = `# Perf\n\nProse stays.\n\n<!-- bench:entries -->\nold table\n<!-- /bench:entries -->\n\nMiddle prose.\n\n<!-- bench:fanout -->\n<!-- /bench:fanout -->\n\nEnd.\n`;

const block = (text, id) => text.slice(text.indexOf(`<!-- bench:${id} -->`), text.indexOf(`<!-- /bench:${id} -->`));

test('the blocks between markers are replaced and the prose around them is kept', () => {
  const out = renderDoc(DOC, results, { blocks });
  assert.ok(!out.includes('old table'));
  assert.ok(out.startsWith('# Perf\n\nProse stays.\n\n<!-- bench:entries -->\n| figure | median (min, max) |'));
  assert.ok(out.includes('<!-- /bench:entries -->\n\nMiddle prose.\n\n<!-- bench:fanout -->\n'));
  assert.ok(out.endsWith('<!-- /bench:fanout -->\n\nEnd.\n'));
  assert.match(block(out, 'entries'), /\| Runvil section entry \| 250 µs \(200, 400\) \|/);
  assert.match(block(out, 'entries'), /\| a bare Lua state in wasm \(wasmoon\) \| 100 µs \(90\.0, 150\) \|/);
  assert.match(block(out, 'fanout'), /\| `call` \| 77\.0 µs \(72\.0, 91\.0\) \|/);
  assert.match(block(out, 'fanout'), /\| ideal \(latency × arms \/ concurrency\) \| 78\.1 ms \|/);
  assert.match(block(out, 'fanout'), /\| AI SDK 7 pool, CPU time per call \| 100 µs \(90\.0, 120\) \|/);
  assert.match(block(out, 'fanout'), /\| \*\*fanout \/ AI SDK pool\*\* \(goal: ≤ 1\.0× the AI SDK pool\) \| \*\*0\.77×\*\*: met \|/);
});

test('rendering is idempotent: the output rendered again is the same', () => {
  const once = renderDoc(DOC, results, { blocks });
  assert.equal(renderDoc(once, results, { blocks }), once);
});

test('each block is stamped with its command, date and machine', () => {
  const out = renderDoc(DOC, results, { blocks });
  const stamp = block(out, 'entries').split('\n').find((l) => l.startsWith('<sub>'));
  assert.ok(stamp.includes('`node bench/entries.mjs`'));
  assert.ok(stamp.includes('2026-12-01 10:00 UTC'));
  assert.ok(stamp.includes('Node v20.20.2, Test CPU @ 2.00GHz (2 cores), linux 6.1.0 x64'));
  assert.ok(stamp.includes('interleaved'));
  assert.ok(!block(out, 'entries').includes('bench/fanout.mjs'));
});

test('met and not met are computed from the goal and the data', () => {
  assert.equal(verdict(results.entries.figures.entry), 'not met'); // ratio 2.5 > 2
  assert.equal(verdict(results.fanout.figures.ratio), 'met'); // median 1.088 <= 1.2
  const out = renderDoc(DOC, results, { blocks });
  assert.match(block(out, 'entries'), /\*\*2\.50×\*\*: not met/);
  assert.match(block(out, 'fanout'), /\*\*1\.09×\*\* \(1\.02×, 1\.22×\): met/);
  // Change the data, and the verdicts follow.
  const better = structuredClone(results);
  better.entries.figures.entry.ratio = 1.9;
  better.fanout.figures.ratio.median = 1.3;
  const again = renderDoc(DOC, better, { blocks });
  assert.match(block(again, 'entries'), /\*\*1\.90×\*\*: met/);
  assert.match(block(again, 'fanout'), /\*\*1\.30×\*\* \(1\.02×, 1\.22×\): not met/);
  // A goal the figure has no number for is an error, not a verdict.
  assert.throws(() => verdict({ name: 'x', goal: { max: 1, of: 'value', text: '' } }), /goal on "value" has no number/);
});

test('an unknown marker fails loudly', () => {
  const doc = `${DOC}\n<!-- bench:nonesuch -->\n<!-- /bench:nonesuch -->\n`;
  assert.throws(() => renderDoc(doc, results, { blocks }), /unknown marker bench:nonesuch \(known: entries, fanout\)/);
});

test('unclosed, stray and nested markers fail loudly', () => {
  assert.throws(() => renderDoc(DOC.replace('<!-- /bench:fanout -->', ''), results, { blocks }), /bench:fanout is never closed/);
  assert.throws(() => renderDoc(`${DOC}<!-- /bench:entries -->\n`, results, { blocks }), /stray marker \/bench:entries/);
  const nested = DOC.replace('old table', '<!-- bench:fanout -->\n<!-- /bench:fanout -->');
  assert.throws(() => renderDoc(nested, results, { blocks }), /bench:fanout opens inside bench:entries/);
});

test('a block the doc lacks fails loudly', () => {
  const doc = DOC.replace(/<!-- bench:fanout -->\n<!-- \/bench:fanout -->/, '');
  assert.throws(() => renderDoc(doc, results, { blocks }), /the doc has no marker for: fanout/);
});

test('a missing result fails loudly', () => {
  const { fanout, ...onlyEntries } = results;
  assert.throws(() => renderDoc(DOC, onlyEntries, { blocks }), /block bench:fanout: missing result: no bench\/results\/fanout\.json/);
  const noCall = structuredClone(results);
  delete noCall.fanout.figures.call;
  assert.throws(() => renderDoc(DOC, noCall, { blocks }), /block bench:fanout: missing result: bench\/results\/fanout\.json has no figure "call"/);
});

test('results of a --quick run do not go into the doc unless allowed', () => {
  const quick = structuredClone(results);
  quick.entries.quick = true;
  assert.throws(() => renderDoc(DOC, quick, { blocks }), /entries\.json is from a --quick run/);
  const out = renderDoc(DOC, quick, { blocks, allowQuick: true });
  assert.match(block(out, 'entries'), /Quick run \(smoke\)/);
});

test('docs/performance.md has a marker for every block and no other (it fails only on results)', () => {
  const doc = readFileSync(join(ROOT, 'docs/performance.md'), 'utf8');
  // With no results at all, the first error must be a missing result, not a marker problem.
  assert.throws(() => renderDoc(doc, {}), /^Error: block bench:summary: missing result/);
});

test('the CLI exits non-zero on a doc that lacks blocks and writes nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'perf-doc-'));
  try {
    cpSync(FIXTURES, join(dir, 'results'), { recursive: true });
    writeFileSync(join(dir, 'doc.md'), DOC);
    // The CLI renders every block, so a doc with only two markers must fail on the others.
    assert.throws(
      () => execFileSync(process.execPath, [join(ROOT, 'tools/perf-doc.mjs'), '--results', join(dir, 'results'), '--doc', join(dir, 'doc.md'), '--out', join(dir, 'out.md')], { stdio: 'pipe' }),
      (e) => /the doc has no marker for: summary, size/.test(e.stderr.toString()),
    );
    assert.equal(readFileSync(join(dir, 'doc.md'), 'utf8'), DOC);
    assert.throws(() => readFileSync(join(dir, 'out.md')), /ENOENT/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
