// Reads spec-tests/*.cases (format: spec-tests/README.md), the same files the native runner
// (tests/spec_cases.rs) reads. Lines split on \n only: some cases hold raw \r, tabs and controls.
import { readFileSync, readdirSync } from 'node:fs';

const MARKERS = /^--- (result|result-none|error |error-contains )/;

export function parseCases(file, text) {
  let lines = text.split('\n');
  if (lines.at(-1) === '') lines = lines.slice(0, -1);
  const cases = [];
  let i = lines.findIndex((l) => l.startsWith('=== '));
  if (i < 0) return cases;
  while (i < lines.length) {
    const line = i + 1;
    const name = lines[i].slice(4).trim();
    i += 1;
    let args = '';
    let pending = null;
    for (;;) {
      const l = lines[i++];
      if (l === undefined) throw new Error(`${file}:${line}: case ${name}: no --- prompt line`);
      if (l === '--- prompt') break;
      if (l.startsWith('args: ')) args = l.slice(6);
      else if (l.startsWith('args-json: ')) args = JSON.parse(l.slice(11));
      else if (l.startsWith('pending: ')) pending = l.slice(9).trim();
      else if (l.trim() !== '') throw new Error(`${file}:${i}: case ${name}: unknown header line ${JSON.stringify(l)}`);
    }
    const promptStart = i;
    while (i < lines.length && !MARKERS.test(lines[i]) && !lines[i].startsWith('=== ')) i += 1;
    if (i >= lines.length || !MARKERS.test(lines[i])) throw new Error(`${file}:${line}: case ${name}: no expectation`);
    const prompt = `${lines.slice(promptStart, i).join('\n')}\n`;
    const marker = lines[i++];
    const bodyStart = i;
    while (i < lines.length && !lines[i].startsWith('=== ')) i += 1;
    const body = lines.slice(bodyStart, i);
    let expect;
    if (marker === '--- result') expect = { result: body.join('\n') };
    else if (marker === '--- result-none') expect = { result: null };
    else if (marker.startsWith('--- error-contains ')) {
      expect = { kind: marker.slice(19).trim(), contains: body.filter((l) => l !== '') };
    } else expect = { kind: marker.slice(10).trim(), message: body.join('\n') };
    cases.push({ file, line, name, args, pending, prompt, expect });
  }
  return cases;
}

export function loadCases() {
  const dir = new URL('../spec-tests/', import.meta.url);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cases'))
    .sort()
    .flatMap((f) => parseCases(`spec-tests/${f}`, readFileSync(new URL(f, dir), 'utf8')));
}
