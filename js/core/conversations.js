// @ts-check
// The wrapper's copy of each models.loop conversation (docs/bridge.md, "Conversations").
//
// The engine's records are the truth; a conversation only grows. Sending the whole history
// across the wasm boundary every round (and parsing it here) made a loop of n rounds cost
// O(n^2); instead the engine sends the records appended since its last request and this copy
// rebuilds the request the model function has always received: the whole history.
//
// A model function may hold or change the request it gets. So that nothing it does can change
// what later rounds see, each record (and the tool list) is deeply frozen when it arrives, and
// each request gets its own `messages` and `tools` arrays (a model function may push, splice or
// sort them) and its own top-level object. Changing a record in place throws a TypeError in
// strict-mode code (every ES module) and is ignored elsewhere; a model function that needs to
// edit records copies them (`request.messages.map((m) => ({ ...m }))`), as the adapters do.

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) deepFreeze(value[key]);
    Object.freeze(value);
  }
  return value;
}

/** One run's conversations, keyed by the id the engine gives each section entry. */
export function createConversations() {
  /** id -> { messages: frozen records, tools: frozen tool list or undefined } */
  const open = new Map();
  return {
    /**
     * The request for the next round of conversation `id`.
     * @param {number} id the conversation
     * @param {number} base how many records the engine knows this copy holds
     * @param {string} appendedText JSON array of the records appended since the last request
     * @param {string | undefined} toolsText JSON of the round's tool list (`null`: none);
     *   `undefined` when it is the list the copy holds
     * @param {string} role
     * @param {string} specText JSON of the role's spec
     * @param {string} section
     * @param {number} turn
     * @param {string} chain the chain of the conversation's section entry (`0`, `0.1`, ...)
     * @param {number} entry the section entry's id (its `sys.id`)
     */
    request(id, base, appendedText, toolsText, role, specText, section, turn, chain, entry) {
      let copy = open.get(id);
      if (!copy) open.set(id, (copy = { messages: [], tools: undefined }));
      // The engine tracks what it shipped; a mismatch is an engine bug, not something to paper over.
      if (base !== copy.messages.length) {
        throw new Error(
          `conversation ${id} is out of step: the wrapper holds ${copy.messages.length} records, the engine expected ${base}`,
        );
      }
      for (const record of JSON.parse(appendedText)) copy.messages.push(deepFreeze(record));
      if (toolsText !== undefined) copy.tools = deepFreeze(JSON.parse(toolsText) ?? undefined);
      // The keys in the order of the engine's JSON for a whole request (models.infer's).
      const request = { chain, entry, messages: copy.messages.slice(), role, section, spec: JSON.parse(specText) };
      if (copy.tools) request.tools = copy.tools.slice();
      request.turn = turn;
      return request;
    },
    /** The conversation's section entry has ended: its copy goes. */
    end(id) {
      open.delete(id);
    },
    /** How many conversations are held (for tests). */
    get size() {
      return open.size;
    },
  };
}
