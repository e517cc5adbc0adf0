// @ts-check
// engine.check: the static check of a prompt (docs/check.md). The module finds the diagnostics
// (checkPrompt in src/wasm/check.rs); this side checks the call and hands over what of each Pack
// the check reads (its name and whether it is unavailable), never its tools.
import { describe, isObject } from './values.js';

/** The options engine.check takes (index.d.ts, CheckOptions). */
const CHECK_OPTIONS = ['packs'];

/**
 * What engine.check checks first (the worker's too): `source` is a string and `options` an object
 * with known keys; answers the Packs as the module reads them (`undefined`: no Pack checks).
 * Throws a TypeError otherwise.
 * @returns {{ name: string, unavailable?: unknown }[] | undefined}
 */
export function checkCheckCall(source, options) {
  if (typeof source !== 'string')
    throw new TypeError(`engine.check: source must be a string (got ${describe(source)})`);
  if (options === undefined) return undefined;
  if (!isObject(options)) throw new TypeError(`engine.check: options must be an object (got ${describe(options)})`);
  for (const key of Object.keys(options)) {
    if (!CHECK_OPTIONS.includes(key)) {
      throw new TypeError(`engine.check: unknown option '${key}' (known: ${CHECK_OPTIONS.join(', ')})`);
    }
  }
  const { packs } = options;
  if (packs === undefined) return undefined;
  if (!Array.isArray(packs)) throw new TypeError(`engine.check: packs must be an array (got ${describe(packs)})`);
  return packs.map((pack, i) => {
    if (!isObject(pack) || typeof pack.name !== 'string') {
      throw new TypeError(`engine.check: packs[${i}] must be a Pack object with a string name`);
    }
    if (pack.tools !== undefined && !Array.isArray(pack.tools)) {
      throw new TypeError(`engine.check: packs[${i}].tools must be an array`);
    }
    return pack.unavailable === undefined ? { name: pack.name } : { name: pack.name, unavailable: pack.unavailable };
  });
}

/**
 * The check on one instance of the module: synchronous there, nothing runs.
 * @param {{ checkPrompt(source: string, packs: unknown): string }} bindings
 * @param {string} source
 * @param {{ name: string, unavailable?: unknown }[] | undefined} packs
 */
export function checkOn(bindings, source, packs) {
  // The module's JSON has its keys sorted; a diagnostic reads in the order index.d.ts gives.
  return JSON.parse(bindings.checkPrompt(source, packs)).map(({ severity, kind, message, line, column, section }) => ({
    severity,
    kind,
    message,
    line,
    column,
    section,
  }));
}
