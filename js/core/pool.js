// @ts-check
// The wasm instances one engine runs on: how many, which run goes where, and when one is dropped
// (docs/reliability.md, "Load").
import { createBindings } from '../bindings.js';

/**
 * What the memory ceilings of the runs in flight on one instance may add up to. A wasm32 memory
 * holds at most 4 GiB and never shrinks; past this, a run goes to another instance (instancePool)
 * instead of letting the instance run out of memory (a trap that would fail every run on it).
 */
const INSTANCE_MEMORY_BUDGET = 3 * 2 ** 30;
/**
 * How many instances one engine spreads its runs over: 8 × 48 runs at the default ceiling. Past
 * it, runs wait for room, so a flood of runs costs the host the memory of at most this many.
 */
const MAX_INSTANCES = 8;
/** An idle instance whose memory grew past this is replaced, so the host gets the memory back. */
const RECYCLE_MEMORY_BYTES = 256 * 2 ** 20;

/** How many bytes the instance's wasm memory holds now (0 when it cannot be read). */
function memoryOf(instance) {
  try {
    return instance.exports?.memory?.buffer.byteLength ?? 0;
  } catch {
    return 0;
  }
}

/**
 * One live wasm instance with its own glue.
 * @typedef {object} Instance
 * @property {Set<(error: unknown) => void>} waiting fails every run still waiting on the instance
 *   when it traps: their Rust futures can never be polled again
 * @property {boolean} dead
 * @property {import('../bindings.js').Bindings} bindings
 * @property {{ memory: WebAssembly.Memory } | null} exports
 * @property {number} admitted the memory ceilings of the runs in flight (INSTANCE_MEMORY_BUDGET)
 * @property {number} running
 */

/**
 * A fresh instance of `module` with its own glue (Instance).
 * @param {WebAssembly.Module} module
 */
export async function instantiate(module) {
  /** @type {Instance} */
  const instance = {
    waiting: new Set(),
    dead: false,
    // Called back only once the instance runs, by when `instance` is there.
    bindings: createBindings({
      onTrap(error) {
        instance.dead = true;
        for (const fail of instance.waiting) fail(error);
        instance.waiting.clear();
      },
    }),
    exports: null,
    admitted: 0,
    running: 0,
  };
  instance.exports = await instance.bindings.instantiateModule(module);
  return instance;
}

/**
 * The instances an engine runs on. One wasm32 instance can honour memory ceilings adding up to
 * INSTANCE_MEMORY_BUDGET; a run goes to the oldest instance with room for its ceiling, and when
 * none has room a new instance is made for it (about 1.3 MiB and a few milliseconds each), up to
 * MAX_INSTANCES. Past that, runs wait in arrival order for room (a cancelled run leaves the queue)
 * rather than being turned away: each instance still never admits more than it can hold, so no
 * run can make the instance of another run run out of memory. An instance that trapped, or that
 * went idle with its memory grown past RECYCLE_MEMORY_BYTES, is dropped (wasm memory never shrinks;
 * dropping it gives the memory back); so is an idle instance other than the oldest.
 */
export function instancePool(module, first) {
  const instances = [first];
  /** Runs waiting for room, in arrival order: `wake(instance)` hands one an admitted instance,
   * `wake(null)` tells it to make one. */
  const queue = [];
  let creating = null;
  /** The largest wasm memory an instance had when a run on it ended (the memory test hook). */
  let peakMemory = memoryOf(first);

  const live = () => instances.filter((i) => !i.dead);
  const fits = (ceiling) => instances.find((i) => !i.dead && i.admitted + ceiling <= INSTANCE_MEMORY_BUDGET);
  const canGrow = () => live().length < MAX_INSTANCES;

  function take(instance, ceiling) {
    instance.admitted += ceiling;
    instance.running += 1;
    return instance;
  }

  /** Drops the idle instances that trapped or whose memory grew large, and, when no run waits,
   * the idle ones beyond the oldest live instance. */
  function tidy({ extras }) {
    const oldest = live()[0];
    for (const instance of [...instances]) {
      if (instance.running > 0) continue;
      const extra = extras && queue.length === 0 && instance !== oldest;
      if (instance.dead || extra || memoryOf(instance) > RECYCLE_MEMORY_BYTES) {
        instances.splice(instances.indexOf(instance), 1);
      }
    }
  }

  /** Makes one more instance; runs that need one at the same moment share it. */
  function grow() {
    creating ??= instantiate(module).then(
      (fresh) => {
        instances.push(fresh);
        creating = null;
      },
      (error) => {
        creating = null;
        throw error;
      },
    );
    return creating;
  }

  /** Hands room to the waiting runs, in order, while the first of them fits or may grow. */
  function drain() {
    while (queue.length) {
      const instance = fits(queue[0].ceiling);
      if (!instance && !canGrow()) break;
      const entry = queue.shift();
      entry.wake(instance ? take(instance, entry.ceiling) : null);
    }
  }

  /** An instance with `ceiling` bytes admitted for the caller, or `null` when `signal` aborted first. */
  async function admit(ceiling, signal) {
    for (;;) {
      tidy({ extras: false });
      const instance = fits(ceiling);
      if (instance) return take(instance, ceiling);
      if (canGrow()) {
        await grow();
        continue;
      }
      if (signal.aborted) return null;
      const handed = await new Promise((resolve) => {
        const onAbort = () => {
          queue.splice(queue.indexOf(entry), 1);
          resolve(null);
        };
        const entry = {
          ceiling,
          wake: (given) => {
            signal.removeEventListener('abort', onAbort);
            resolve(given);
          },
        };
        signal.addEventListener('abort', onAbort, { once: true });
        queue.push(entry);
      });
      if (handed) return handed;
      if (signal.aborted) return null;
    }
  }

  function release(instance, ceiling) {
    peakMemory = Math.max(peakMemory, memoryOf(instance));
    instance.admitted -= ceiling;
    instance.running -= 1;
    drain();
    tidy({ extras: true });
  }

  return {
    admit,
    release,
    /** How many instances serve the engine now (test and benchmark hook). */
    get size() {
      return instances.length;
    },
    /** The largest wasm memory, in bytes, an instance had when a run on it ended (test and
     * benchmark hook: wasm memory never shrinks, so this is the peak). */
    get peakMemory() {
      return peakMemory;
    },
    /** The oldest live instance, if any (the test hook traps it). */
    oldest() {
      return live()[0];
    },
  };
}
