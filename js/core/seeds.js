// @ts-check
// Where a run's default seed comes from: a CSPRNG in every runtime, since the seed makes the
// untrusted envelope's nonce, which a prompt's inputs must not be able to predict. Portable: the
// file system is handed in by an entry that has one (no `node:` import here).

/** A run seed drawn with crypto.getRandomValues, as a decimal u64 string. */
export function randomSeed() {
  return globalThis.crypto.getRandomValues(new BigUint64Array(1))[0].toString();
}

/** How many seeds one read of the system's random device gives. */
const SEEDS_PER_READ = 32;

/**
 * @typedef {object} SyncFs the synchronous calls of Node's `fs` that deviceSeeds reads with
 * @property {(path: string, flags: string) => number} openSync
 * @property {(fd: number, buffer: BigUint64Array) => number} readSync
 * @property {(fd: number) => void} closeSync
 */

/**
 * Seeds read from the kernel's CSPRNG (`/dev/urandom`), `SEEDS_PER_READ` at a time. Node loads
 * its whole Web Crypto implementation on the first `crypto.getRandomValues` (milliseconds of an
 * engine's first run, docs/performance.md "Start-up"); the device costs a few system calls. Where
 * the device cannot be read (Windows, Deno without read permission), every seed comes from
 * `randomSeed` instead.
 * @param {SyncFs} fs
 * @returns {() => string}
 */
export function deviceSeeds(fs) {
  const pool = new BigUint64Array(SEEDS_PER_READ);
  let left = 0;
  let usable = true;
  /** Fills the pool from the device; false when it cannot be read in full. */
  function refill() {
    let fd;
    try {
      fd = fs.openSync('/dev/urandom', 'r');
      return fs.readSync(fd, pool) === pool.byteLength;
    } catch {
      return false;
    } finally {
      if (fd !== undefined) {
        try {
          fs.closeSync(fd);
        } catch {
          /* the bytes were read; a failed close loses nothing */
        }
      }
    }
  }
  return () => {
    if (usable && left === 0) {
      usable = refill();
      left = usable ? pool.length : 0;
    }
    if (!usable) return randomSeed();
    left -= 1;
    const seed = pool[left];
    // A seed handed out is not kept.
    pool[left] = 0n;
    return seed.toString();
  };
}
