// @ts-check
// The journal's side of models: the role bindings and the model calls of a run, answered from the
// ledger or made live and recorded. A call is keyed by its chain and place there, and checked
// against what was recorded by its role, turn and a digest of its conversation.
import { isObject } from '../values.js';
import { digest } from './digest.js';
import { asJson, structuredCloneJson } from './format.js';

/**
 * The run's models and the conversation copies they read (bridge.conversations).
 * @param {import('./ledger.js').Ledger} ledger
 * @param {{ live: boolean }} mode
 */
export function journalModels(ledger, mode) {
  /** request object -> { chain, entry, digest, messages } from the conversation copies */
  const roundOf = new WeakMap();
  const conversationDigests = new Map();

  function conversations(inner) {
    return {
      request(id, base, appendedText, toolsText, role, specText, section, turn, chain, entry) {
        const request = inner.request(id, base, appendedText, toolsText, role, specText, section, turn);
        // A conversation only grows: its digest is chained over what each round appends.
        const previous = conversationDigests.get(id) ?? '';
        const next = digest(`${previous}\n${appendedText}\n${toolsText ?? ''}`);
        conversationDigests.set(id, next);
        roundOf.set(request, { chain, entry, digest: next, messages: request.messages.length });
        return request;
      },
      end(id) {
        conversationDigests.delete(id);
        inner.end(id);
      },
      get size() {
        return inner.size;
      },
    };
  }

  function modelAsked(request) {
    const round = roundOf.get(request);
    const chain = String(round?.chain ?? request.chain ?? '0');
    const messages = Array.isArray(request.messages) ? request.messages : [];
    return {
      kind: 'model',
      chain,
      seq: ledger.nextSeq(chain),
      entry: round?.entry ?? request.entry,
      section: String(request.section),
      role: String(request.role),
      turn: request.turn,
      request: {
        messages: round?.messages ?? messages.length,
        digest: round?.digest ?? digest(JSON.stringify({ messages, tools: request.tools ?? null })),
      },
    };
  }

  function modelFn(live) {
    return (request) => {
      const asked = modelAsked(request);
      const entry = ledger.lookup(asked);
      if (entry)
        return 'error' in entry
          ? Promise.reject(new Error(entry.error))
          : Promise.resolve(structuredCloneJson(entry.reply));
      return ledger.settleLive(
        asked,
        () => live(request),
        (value) => {
          const json = asJson(value, "the model's reply");
          return 'error' in json ? { error: json.error } : { fields: { reply: json.value }, value: json.value };
        },
      );
    };
  }

  /** The run's models: recorded bindings and replies first, the host's after (resume, record). */
  function models(hostModels) {
    return (role, spec) => {
      const entry = ledger.take(`role ${role}`);
      let bound;
      let live;
      if (entry) {
        bound = entry.bound;
        if (bound && mode.live) live = resolve(hostModels, role, spec);
      } else if (!mode.live) {
        ledger.diverge(
          `the run diverged from the journal: it asked for a model for role ${role}, which the journal does not name`,
        );
        return undefined;
      } else {
        live = resolve(hostModels, role, spec);
        if (live !== undefined && typeof live !== 'function') return live; // misuse, reported by engine.js
        bound = typeof live === 'function';
        ledger.add({ kind: 'role', role, bound }).catch(() => {});
      }
      if (!bound) return undefined;
      const missing = () => Promise.reject(new Error(`no model is bound to the role ${role}`));
      return modelFn(live ?? missing);
    };
  }

  return { models, conversations };
}

function resolve(hostModels, role, spec) {
  if (typeof hostModels === 'function') return hostModels(role, spec);
  return isObject(hostModels) && Object.hasOwn(hostModels, role) ? hostModels[role] : undefined;
}
