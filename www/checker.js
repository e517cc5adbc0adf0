// Diagnostics as the person types: `engine.check` on the editor's text a moment after the last
// edit. Only the newest text's answer is shown (an older check still in flight is dropped when it
// comes back), and nothing here waits on the editor, so typing is never held up.

/**
 * @param {{ check: (source: string) => Promise<object[]>, show: (diagnostics: object[]) => void,
 *   fail?: (error: Error) => void, delay?: number }} options
 */
export function createChecker({ check, show, fail, delay = 300 }) {
  let timer = 0;
  let latest = 0; // the newest request's number: an answer for an older one is dropped
  let shown = 0; // the number of the request whose answer is on screen
  const waiting = [];

  async function now(source, n) {
    let answer;
    try {
      answer = { diagnostics: await check(source) };
    } catch (error) {
      answer = { error };
    }
    if (n !== latest) return;
    if (answer.error) fail?.(answer.error);
    else show(answer.diagnostics);
    shown = n;
    for (const resolve of waiting.splice(0)) resolve();
  }

  return {
    /** Checks `source` once `delay` ms pass without another call. */
    schedule(source, wait = delay) {
      const n = ++latest;
      clearTimeout(timer);
      timer = setTimeout(() => now(source, n), wait);
    },
    /** Resolves once the newest text's diagnostics are on screen. */
    idle() {
      return shown === latest ? Promise.resolve() : new Promise((resolve) => waiting.push(resolve));
    },
  };
}
