// @ts-check
// What a host callback throws, as the engine takes it: a plain Error whose message is model-safe
// text (docs/reliability.md). Shared by the run's model functions, Pack tools and store.
import { describe } from './values.js';

/**
 * A JS value a host callback threw, as a model-safe message that never throws itself: a string
 * as is, an Error's string `message`, else a plain description (a Proxy's traps are not run).
 * @param {unknown} error
 * @param {string} who the callback, as the message names it (`the model function`)
 */
export function thrownText(error, who) {
  try {
    if (typeof error === 'string') return error;
    if (error instanceof Error) {
      const message = error.message;
      if (typeof message === 'string') return message;
      return `${who} threw an Error whose message is ${describe(message)}, not a string`;
    }
    return `${who} threw ${describe(error)}, not an Error`;
  } catch {
    return `${who} threw a value that could not be inspected`;
  }
}

/**
 * Calls `f` and settles with its answer; whatever it throws becomes `new Error(thrownText(...))`.
 * @param {string} who
 * @param {Function} f
 * @param {unknown} thisArg
 * @param {unknown[]} args
 */
export async function guarded(who, f, thisArg, args) {
  try {
    return await f.apply(thisArg, args);
  } catch (error) {
    throw new Error(thrownText(error, who));
  }
}
