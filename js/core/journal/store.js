// @ts-check
// The journal's side of the store: the listing and lazy reads answered from the ledger or read
// live and recorded; batches committed only once the entries they follow from are recorded, or,
// in a replayed or resumed run, held and committed as one batch when the run ends.
import { finalState } from './final-state.js';
import { decodeData, decodeListing, encodeData, encodeListing } from './store-data.js';

/**
 * @param {import('./ledger.js').Ledger} ledger
 * @param {{ live: boolean, given?: any[] }} mode
 */
export function journalStore(ledger, mode) {
  /** @type {any} */
  let storeHost;
  let storeEnded = false;
  let opened = false;
  /** @type {any[]} */
  const held = [];

  const recordedOrLive = async (key, live, toEntry, fromEntry) => {
    const entry = ledger.take(key);
    if (entry) {
      if ('error' in entry) throw new Error(entry.error);
      return fromEntry(entry);
    }
    if (!mode.live || !live) {
      throw ledger.diverge(
        `the run diverged from the journal: the journal has no answer for the store's ${key.replace('read ', 'read of ')}`,
      );
    }
    let answer;
    try {
      answer = { value: await live() };
    } catch (error) {
      answer = { error: error instanceof Error ? error.message : String(error) };
    }
    if (ledger.aborted) {
      if ('error' in answer) throw new Error(answer.error);
      return answer.value;
    }
    const made = 'error' in answer ? { error: answer.error } : toEntry(answer.value);
    await ledger.add(made);
    if ('error' in answer) throw new Error(answer.error);
    return answer.value;
  };

  /** @param {{ open: Function, read: Function, commit: Function, end: Function } | undefined} host */
  function store(host) {
    const hostLive = mode.live ? host : undefined;
    storeHost = host;
    return {
      open: () => {
        opened = true;
        return recordedOrLive(
          'store-open',
          hostLive ? () => hostLive.open() : mode.live ? async () => ({ files: [] }) : undefined,
          (listing) => ({ kind: 'store-open', listing: encodeListing(listing) }),
          (entry) => decodeListing(entry.listing),
        );
      },
      read: (path) =>
        recordedOrLive(
          `read ${path}`,
          hostLive ? () => hostLive.read(path) : undefined,
          (data) => ({ kind: 'store-read', path, data: encodeData(data) }),
          (entry) => decodeData(entry.data),
        ),
      commit: async (changes) => {
        if (!host) return; // replay without a store: the changes land nowhere
        if (mode.given) {
          // A replayed or resumed run holds its changes and commits them once, when it ends
          // (docs/store.md, "Resuming a run"): the store may already hold any prefix of the
          // recorded run's batches, and committing the batches again in order could fail halfway
          // or take the store back through older states.
          held.push(...changes);
          return;
        }
        // A batch goes out only once every entry before it is recorded: what a store holds
        // follows from the journal, so a resume reproduces it (a clock reading is handed to the
        // run before its entry is written).
        await ledger.settled();
        return host.commit(changes);
      },
      end: () => {
        if (mode.given && opened)
          storeEnded = true; // after the held batch (commitHeld)
        else host?.end();
      },
    };
  }

  /** The held changes of a replayed or resumed run, committed as one batch (a Vfs failure text, or null). */
  async function commitHeld() {
    if (!storeHost || !mode.given) return null;
    const batch = finalState(held);
    held.length = 0;
    try {
      if (batch.length) await storeHost.commit(batch);
      return null;
    } catch (error) {
      return `store backend failure: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      if (storeEnded) storeHost.end();
    }
  }

  return { store, commitHeld };
}
