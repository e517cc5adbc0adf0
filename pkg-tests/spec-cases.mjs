// Reads spec-tests/*.cases (format: spec-tests/README.md), the same files the native runner
// (tests/spec_cases.rs) reads. Lines split on \n only: some cases hold raw \r, tabs and controls.
import { readFileSync, readdirSync } from 'node:fs';

const MARKERS = /^--- (result|result-none|error |error-contains )/;
/** Sections that may follow the result or error section, in any order, each at most once. */
const TRAILERS = new Set(['--- files', '--- requests', '--- events', '--- events-absent']);

/** `<role> = <JSON array of replies>` (a `model:` header line). */
function parseModelLine(text, where) {
  const at = text.indexOf(' = ');
  if (at < 0) throw new Error(`${where}: model: expected \`<role> = <JSON array>\`, got ${JSON.stringify(text)}`);
  const replies = JSON.parse(text.slice(at + 3));
  if (!Array.isArray(replies)) throw new Error(`${where}: model: the replies must be a JSON array`);
  return [text.slice(0, at).trim(), replies];
}

/** One JSON object per non-empty line (the `--- requests`, `--- events`, `--- events-absent` sections). */
function parseJsonLines(lines, what, where) {
  return lines.filter((l) => l.trim() !== '').map((l) => {
    const value = JSON.parse(l);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${where}: ${what}: each line must be a JSON object, got ${l}`);
    return value;
  });
}

/** `<path> = <value>`: the path is everything before the first ` = `. */
function splitEntry(line, what, where) {
  const at = line.indexOf(' = ');
  if (at < 0) throw new Error(`${where}: ${what}: expected \`<path> = <value>\`, got ${JSON.stringify(line)}`);
  return [line.slice(0, at), line.slice(at + 3)];
}

function parseHex(text, where) {
  const digits = text.replace(/\s+/g, '');
  if (digits.length % 2 !== 0 || /[^0-9a-fA-F]/.test(digits)) throw new Error(`${where}: bad hex bytes ${JSON.stringify(text)}`);
  const bytes = new Uint8Array(digits.length / 2);
  for (let k = 0; k < bytes.length; k += 1) bytes[k] = parseInt(digits.slice(2 * k, 2 * k + 2), 16);
  return bytes;
}

function parseJsonText(text, where) {
  const value = JSON.parse(text);
  if (typeof value !== 'string') throw new Error(`${where}: expected a JSON string literal, got ${text}`);
  return value;
}

export function parseCases(file, text) {
  let lines = text.split('\n');
  if (lines.at(-1) === '') lines = lines.slice(0, -1);
  const cases = [];
  let i = lines.findIndex((l) => l.startsWith('=== '));
  if (i < 0) return cases;
  // Preamble: `status: target` makes every case of the file a target case (reported, not failing).
  const target = lines.slice(0, i).some((l) => l.trim() === 'status: target');
  while (i < lines.length) {
    const line = i + 1;
    const name = lines[i].slice(4).trim();
    i += 1;
    let args = '';
    let pending = null;
    const files = new Map(); // path -> string | Uint8Array, in header order
    let readOnly = false;
    const models = {}; // role -> replies (`model:`)
    const packs = []; // Pack descriptions (`pack:`)
    let ui;
    for (;;) {
      const l = lines[i++];
      const where = `${file}:${i}: case ${name}`;
      if (l === undefined) throw new Error(`${file}:${line}: case ${name}: no --- prompt line`);
      if (l === '--- prompt') break;
      if (l.startsWith('args: ')) args = l.slice(6);
      else if (l.startsWith('args-json: ')) args = JSON.parse(l.slice(11));
      else if (l.startsWith('pending: ')) pending = l.slice(9).trim();
      else if (l.startsWith('file: ') || l.startsWith('file-bytes: ')) {
        const bytes = l.startsWith('file-bytes: ');
        const [path, value] = splitEntry(l.slice(bytes ? 12 : 6), bytes ? 'file-bytes:' : 'file:', where);
        if (files.has(path)) throw new Error(`${where}: file ${JSON.stringify(path)} is seeded twice`);
        files.set(path, bytes ? parseHex(value, where) : parseJsonText(value, where));
      } else if (l.startsWith('read-only: ')) {
        const v = l.slice(11).trim();
        if (v !== 'true' && v !== 'false') throw new Error(`${where}: read-only: expected true or false, got ${JSON.stringify(v)}`);
        readOnly = v === 'true';
      } else if (l.startsWith('model: ')) {
        const [role, replies] = parseModelLine(l.slice(7), where);
        if (role in models) throw new Error(`${where}: model: role ${role} is scripted twice`);
        models[role] = replies;
      } else if (l.startsWith('pack: ')) {
        packs.push(JSON.parse(l.slice(6)));
      } else if (l.startsWith('ui: ')) {
        ui = JSON.parse(l.slice(4));
      } else if (l.startsWith('#') || l.trim() === '') {
        // a comment or a blank header line
      } else throw new Error(`${where}: unknown header line ${JSON.stringify(l)}`);
    }
    const promptStart = i;
    while (i < lines.length && !MARKERS.test(lines[i]) && !lines[i].startsWith('=== ')) i += 1;
    if (i >= lines.length || !MARKERS.test(lines[i])) throw new Error(`${file}:${line}: case ${name}: no expectation`);
    const prompt = `${lines.slice(promptStart, i).join('\n')}\n`;
    const marker = lines[i++];
    const bodyStart = i;
    while (i < lines.length && !lines[i].startsWith('=== ') && !TRAILERS.has(lines[i])) i += 1;
    const body = lines.slice(bodyStart, i);
    let expectFiles = null;
    let expectRequests = null;
    let expectEvents = null;
    let absentEvents = null;
    while (i < lines.length && TRAILERS.has(lines[i]) && lines[i] !== '--- files') {
      const section = lines[i];
      const where = `${file}:${i + 1}: case ${name}`;
      const start = (i += 1);
      while (i < lines.length && !lines[i].startsWith('=== ') && !TRAILERS.has(lines[i])) i += 1;
      const items = parseJsonLines(lines.slice(start, i), section, where);
      if (section === '--- requests' && expectRequests === null) expectRequests = items;
      else if (section === '--- events' && expectEvents === null) expectEvents = items;
      else if (section === '--- events-absent' && absentEvents === null) absentEvents = items;
      else throw new Error(`${where}: ${section} appears twice`);
    }
    if (i < lines.length && lines[i] === '--- files') {
      i += 1;
      expectFiles = [];
      for (; i < lines.length && !lines[i].startsWith('=== ') && !TRAILERS.has(lines[i]); i += 1) {
        if (lines[i] === '') continue;
        const where = `${file}:${i + 1}: case ${name}`;
        const [path, value] = splitEntry(lines[i], '--- files', where);
        const data = value.startsWith('bytes: ') ? parseHex(value.slice(7), where) : parseJsonText(value, where);
        const last = expectFiles.at(-1);
        if (last && Buffer.compare(Buffer.from(last.path), Buffer.from(path)) >= 0) {
          throw new Error(`${where}: --- files must be sorted by path, without repeats`);
        }
        expectFiles.push({ path, data });
      }
    }
    let expect;
    if (marker === '--- result') expect = { result: body.join('\n') };
    else if (marker === '--- result-none') expect = { result: null };
    else if (marker.startsWith('--- error-contains ')) {
      expect = { kind: marker.slice(19).trim(), contains: body.filter((l) => l !== '') };
    } else expect = { kind: marker.slice(10).trim(), message: body.join('\n') };
    const needsStore = files.size > 0 || readOnly || expectFiles !== null;
    // Sections after `--- files` (the other trailers may come before or after it).
    while (i < lines.length && TRAILERS.has(lines[i])) {
      const section = lines[i];
      const where = `${file}:${i + 1}: case ${name}`;
      const start = (i += 1);
      while (i < lines.length && !lines[i].startsWith('=== ') && !TRAILERS.has(lines[i])) i += 1;
      const items = section === '--- files' ? null : parseJsonLines(lines.slice(start, i), section, where);
      if (section === '--- requests' && expectRequests === null) expectRequests = items;
      else if (section === '--- events' && expectEvents === null) expectEvents = items;
      else if (section === '--- events-absent' && absentEvents === null) absentEvents = items;
      else throw new Error(`${where}: ${section} appears twice (or --- files after --- files)`);
    }
    cases.push({
      file, line, name, args, pending, prompt, expect, files, readOnly, expectFiles, needsStore,
      target, models, packs, ui, expectRequests, expectEvents, absentEvents,
    });
  }
  return cases;
}

/** `path = "json text"`, or `path = bytes: hex` for contents that are not UTF-8: one listing line. */
export function showFile(path, data) {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  try {
    return `${path} = ${JSON.stringify(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes))}`;
  } catch {
    return `${path} = bytes: ${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ')}`;
  }
}

export function loadCases() {
  const dir = new URL('../spec-tests/', import.meta.url);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cases'))
    .sort()
    .flatMap((f) => parseCases(`spec-tests/${f}`, readFileSync(new URL(f, dir), 'utf8')));
}
