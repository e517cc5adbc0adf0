// @ts-check
// What a `--pack` module offers (`runvil run`, `runvil check`, and a test's `packs`).

/** Whether `value` looks like a Pack object (the shape engine.run checks). */
const isPack = (value) =>
  value !== null && typeof value === 'object' && typeof value.name === 'string' && Array.isArray(value.tools);

/**
 * The Packs a module exports: `made`, what its default export gave (a Pack or an array of them,
 * already called and awaited when it was a function), and every named export that is a Pack.
 * @param {Record<string, unknown>} module
 * @param {unknown} made
 */
export function exportedPacks(module, made) {
  const found = [
    ...(Array.isArray(made) ? made : [made]),
    ...Object.entries(module)
      .filter(([k]) => k !== 'default')
      .map(([, v]) => v),
  ];
  return found.filter(isPack);
}
