// @ts-check
// How the package tells the kinds of values it is handed apart, and names them in its messages.

/**
 * A value's kind in words, for a TypeError that says what a caller passed: `null`, `an array`,
 * `an object`, `a string`, ...
 */
export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Any object but null and arrays (an options bag, a reply, a spec; instances of classes too). */
export function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A value `await` would adopt: an object with a `then` method. */
export function isThenable(value) {
  return isObject(value) && typeof (/** @type {any} */ (value).then) === 'function';
}

/** An object literal or `Object.create(null)`: what can be taken apart key by key and rebuilt. */
export function isPlainObject(value) {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** `1 file`, `2 files`. */
/**
 * The mark the package's model functions carry (scriptedModel, openAIChatModel), so engine.run can
 * tell a model function passed where the role map goes from a role resolver.
 */
export const MODEL_FUNCTION = Symbol.for('runvil.modelFunction');

/**
 * Marks `fn` as a model function (see MODEL_FUNCTION).
 * @template {Function} F
 * @param {F} fn
 * @returns {F}
 */
export function markModel(fn) {
  Object.defineProperty(fn, MODEL_FUNCTION, { value: true });
  return fn;
}

export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
