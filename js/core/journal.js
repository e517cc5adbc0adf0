// @ts-check
// The journal of a run (docs/journal.md): every answer the run received from outside, so that the
// run can be replayed with no host parts, or resumed after the last answer it got.
//
// A run's requests are deterministic given its answers, so each answer is keyed by what asked for
// it: a model call, a tool call or a clock reading by its chain (`0`, `0.k`, ...) and its place in
// that chain's requests (`seq`, counted when the request is made); the store's listing once; a
// lazy store read by its path; a role's model binding by the role. Concurrent chains (fanout arms,
// tasks) then find their answers whatever order they ran in.
//
// The journal wraps the bridge's parts (models, packs, store, clock, conversations, signal) for
// one run; engine.js hooks it in and hands its outcome to `finish`. Its parts are in journal/:
// the entries' format and checks (format.js), the prompt's digest (digest.js), the options
// (mode.js), the ledger of answers every part goes through (ledger.js), the parts over it
// (models.js, packs.js, store.js with store-data.js and final-state.js) and the run (run.js).
export { JOURNAL_VERSION, checkJournal, journalSeed } from './journal/format.js';
export { digest, sourceDigest } from './journal/digest.js';
export { journalMode } from './journal/mode.js';
export { createJournal } from './journal/run.js';
export { finalState } from './journal/final-state.js';
