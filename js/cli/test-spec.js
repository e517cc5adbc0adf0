// @ts-check
// The `*.test.json` format of `runvil test` (docs/testing.md): reads a test file into its tests,
// each either ready to run or carrying the precise reason it cannot be (a failure of that test,
// never of the command).
import { describe, isObject } from '../core/values.js';

/** The keys a test may hold; all but `name` may also be given once for every test of a file. */
const TEST_KEYS = ['name', 'prompt', 'args', 'seed', 'replies', 'journal', 'answers', 'packs', 'store', 'expect'];
const SHARED_KEYS = [...TEST_KEYS.filter((k) => k !== 'name'), 'tests'];
const EXPECT_KEYS = ['result', 'error', 'store', 'calls'];
const ERROR_KEYS = ['kind', 'contains'];

/** A malformed part of a test file: `where` is the key path (`tests[1].expect.error.kind`). */
class SpecError extends Error {
  constructor(where, message) {
    super(where ? `${where}: ${message}` : message);
  }
}

/** `where` joined with a key: `expect` + `store` is `expect.store`. */
const at = (where, key) => (typeof key === 'number' ? `${where}[${key}]` : where ? `${where}.${key}` : key);

/**
 * The closest known key to a misspelt one, when close enough to be a likely typo.
 * @param {string} key
 * @param {string[]} known
 */
function closest(key, known) {
  const distance = (a, b) => {
    const row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      let diagonal = row[0];
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const next = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
        diagonal = row[j];
        row[j] = next;
      }
    }
    return row[b.length];
  };
  const best = known.map((k) => ({ k, d: distance(key.toLowerCase(), k) })).sort((x, y) => x.d - y.d)[0];
  return best && best.d <= Math.max(1, Math.floor(best.k.length / 3)) ? best.k : undefined;
}

function checkKeys(value, known, where) {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const near = closest(key, known);
    throw new SpecError(
      where,
      `unknown key '${key}'${near ? ` (did you mean '${near}'?)` : ''}; known keys: ${known.join(', ')}`,
    );
  }
}

function string(value, where) {
  if (typeof value !== 'string') throw new SpecError(where, `must be a string (got ${describe(value)})`);
  return value;
}

function stringArray(value, where) {
  if (!Array.isArray(value)) throw new SpecError(where, `must be an array of strings (got ${describe(value)})`);
  value.forEach((item, i) => string(item, at(where, i)));
  return value;
}

function fileMap(value, where, allowNull) {
  if (!isObject(value)) throw new SpecError(where, `must be an object of file path -> text (got ${describe(value)})`);
  for (const [path, text] of Object.entries(value)) {
    if (typeof text === 'string' || (allowNull && text === null)) continue;
    throw new SpecError(
      `${where}['${path}']`,
      `must be the file's text${allowNull ? ' or null (the file must not exist)' : ''} (got ${describe(text)})`,
    );
  }
  return value;
}

function replyList(value, where) {
  if (!Array.isArray(value)) throw new SpecError(where, `must be an array of replies (got ${describe(value)})`);
  value.forEach((reply, i) => {
    if (typeof reply !== 'string' && !isObject(reply)) {
      throw new SpecError(at(where, i), `a reply is a string or a reply object (got ${describe(reply)})`);
    }
  });
  return value;
}

/** `replies`: one list for every role, or a list per role (`*` for every role without its own). */
function replies(value, where) {
  if (Array.isArray(value)) return { '*': replyList(value, where) };
  if (!isObject(value)) {
    throw new SpecError(where, `must be an array of replies, or an object of role -> replies (got ${describe(value)})`);
  }
  return Object.fromEntries(Object.entries(value).map(([role, list]) => [role, replyList(list, at(where, role))]));
}

function seed(value, where) {
  if (typeof value === 'string' && /^[0-9]+$/.test(value)) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  throw new SpecError(where, `must be a non-negative integer or a decimal string (got ${JSON.stringify(value)})`);
}

function expectation(value, where) {
  if (!isObject(value)) throw new SpecError(where, `must be an object (got ${describe(value)})`);
  checkKeys(value, EXPECT_KEYS, where);
  const hasResult = Object.hasOwn(value, 'result');
  if (hasResult === Object.hasOwn(value, 'error')) {
    throw new SpecError(where, hasResult ? 'takes result or error, not both' : 'needs result or error');
  }
  /** @type {{ result?: string | null, error?: { kind?: string, contains?: string }, store?: Record<string, string | null>, calls?: string[] }} */
  const out = {};
  if (hasResult) {
    if (value.result !== null && typeof value.result !== 'string') {
      throw new SpecError(at(where, 'result'), `must be a string or null (got ${describe(value.result)})`);
    }
    out.result = value.result;
  } else {
    const error = value.error;
    const w = at(where, 'error');
    if (!isObject(error)) throw new SpecError(w, `must be an object { kind, contains } (got ${describe(error)})`);
    checkKeys(error, ERROR_KEYS, w);
    if (error.kind === undefined && error.contains === undefined)
      throw new SpecError(w, 'needs kind, contains or both');
    out.error = {};
    if (error.kind !== undefined) out.error.kind = string(error.kind, at(w, 'kind'));
    if (error.contains !== undefined) out.error.contains = string(error.contains, at(w, 'contains'));
  }
  if (value.store !== undefined) out.store = fileMap(value.store, at(where, 'store'), true);
  if (value.calls !== undefined) out.calls = stringArray(value.calls, at(where, 'calls'));
  return out;
}

/**
 * One test from its own keys over the file's shared ones.
 * @param {Record<string, unknown>} own
 * @param {Record<string, unknown>} shared
 * @param {string} where
 */
function testOf(own, shared, where) {
  const merged = { ...shared, ...own };
  const w = (key) => (Object.hasOwn(own, key) ? at(where, key) : key);
  if (merged.prompt === undefined)
    throw new SpecError(where, 'needs prompt (the prompt file, relative to the test file)');
  if (merged.expect === undefined) throw new SpecError(where, 'needs expect');
  if (merged.replies !== undefined && merged.journal !== undefined) {
    throw new SpecError(where, 'takes replies or journal, not both');
  }
  const test = {
    prompt: string(merged.prompt, w('prompt')),
    args: merged.args === undefined ? undefined : string(merged.args, w('args')),
    seed: merged.seed === undefined ? undefined : seed(merged.seed, w('seed')),
    replies: merged.replies === undefined ? undefined : replies(merged.replies, w('replies')),
    journal: merged.journal === undefined ? undefined : string(merged.journal, w('journal')),
    answers: merged.answers === undefined ? undefined : stringArray(merged.answers, w('answers')),
    packs: merged.packs === undefined ? [] : stringArray(merged.packs, w('packs')),
    store: merged.store === undefined ? {} : fileMap(merged.store, w('store'), false),
    expect: expectation(merged.expect, w('expect')),
  };
  if (test.prompt === '') throw new SpecError(w('prompt'), 'must name a file');
  if (test.journal === '') throw new SpecError(w('journal'), 'must name a file');
  return test;
}

/**
 * @typedef {ReturnType<typeof testOf>} TestSpec
 * @typedef {{ name?: string, test?: TestSpec, error?: string }} ParsedTest
 */

/**
 * The tests of a test file's text: one test (an object with `prompt`), or `{ tests: [...] }` with
 * a unique `name` on each and keys shared by all at the top. A test that cannot run carries
 * `error`; a file that cannot be read as tests at all is one such test.
 * @param {string} text
 * @returns {ParsedTest[]}
 */
export function parseTestFile(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return [{ error: `not JSON: ${error.message}` }];
  }
  if (!isObject(data)) {
    return [
      {
        error: `a test file is one test object or { "tests": [...] } (got ${describe(data)}${Array.isArray(data) ? '; put it under "tests"' : ''})`,
      },
    ];
  }
  if (!Object.hasOwn(data, 'tests')) {
    try {
      checkKeys(data, [...TEST_KEYS, 'tests'], '');
      return [{ test: testOf(data, {}, '') }];
    } catch (error) {
      return [{ error: error.message }];
    }
  }
  const { tests, ...shared } = data;
  try {
    checkKeys(data, SHARED_KEYS, '');
    if (!Array.isArray(tests)) throw new SpecError('tests', `must be an array of tests (got ${describe(tests)})`);
    if (tests.length === 0) throw new SpecError('tests', 'is empty');
  } catch (error) {
    return [{ error: error.message }];
  }
  const seen = new Set();
  return tests.map((own, i) => {
    const where = `tests[${i}]`;
    let name = isObject(own) && typeof own.name === 'string' && own.name !== '' ? own.name : undefined;
    const repeated = name !== undefined && seen.has(name);
    if (name !== undefined) seen.add(name);
    // A test without a usable name is still reported, by its place.
    if (name === undefined || repeated) name = `#${i + 1}`;
    try {
      if (!isObject(own)) throw new SpecError(where, `must be a test object (got ${describe(own)})`);
      checkKeys(own, TEST_KEYS, where);
      if (own.name === undefined || own.name === '' || typeof own.name !== 'string') {
        throw new SpecError(at(where, 'name'), 'needs a non-empty string name');
      }
      if (repeated) throw new SpecError(at(where, 'name'), `'${own.name}' names an earlier test too`);
      return { name, test: testOf(own, shared, where) };
    } catch (error) {
      return { name, error: error.message };
    }
  });
}
