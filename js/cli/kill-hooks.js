// @ts-check
// Test hooks for the kill tests (pkg-tests/durable-kill.test.mjs), not part of the CLI's
// interface: RUNVIL_TEST_KILL=<point>:<n>:<when> SIGKILLs this process at the n-th journal
// append or store commit it makes, so a test can stop a run exactly where a crash would hurt
// most. Points:
//   append:N:before   the answer arrived, its entry is not written (a reply lost with the process)
//   append:N:after    the entry is on disk, the answer has not reached the engine
//   commit:N:before   the batch has not gone to the store
//   commit:N:after    the batch is in the store, nothing after it happened
// Unset (every normal run), nothing is wrapped.

const POINT = /^(append|commit):([1-9][0-9]*):(before|after)$/;

/**
 * Wraps the run's `record` and `store.commit` to kill the process at the point `spec` names.
 * @param {string | undefined} spec
 * @param {{ record?: any, store?: any, [key: string]: any }} options
 */
export function testKillHooks(spec, options) {
  if (!spec) return;
  const point = POINT.exec(spec);
  if (!point) throw new Error(`RUNVIL_TEST_KILL must be append|commit:N:before|after (got '${spec}')`);
  const [, kind, nth, when] = point;
  const at = Number(nth);
  let count = 0;
  const kill = () => {
    process.kill(process.pid, 'SIGKILL');
    return new Promise(() => {}); // nothing runs on while the signal lands
  };
  const wrap =
    (fn) =>
    async (...args) => {
      const mine = ++count === at;
      if (mine && when === 'before') await kill();
      const answer = await fn(...args);
      if (mine && when === 'after') await kill();
      return answer;
    };
  if (kind === 'append' && typeof options.record === 'function') options.record = wrap(options.record);
  if (kind === 'commit' && options.store) {
    const store = options.store;
    options.store = {
      ...store,
      open: store.open.bind(store),
      read: store.read.bind(store),
      commit: wrap(store.commit.bind(store)),
    };
  }
}
