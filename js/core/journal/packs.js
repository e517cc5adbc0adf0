// @ts-check
// The journal's side of Packs: each tool call answered from the ledger or made live and recorded;
// a non-idempotent call is recorded as sent before it goes out. A replay serves the Packs the
// journal's header recorded, whose tools only answer from it.
import { structuredCloneJson } from './format.js';

/**
 * The run's Packs: the host's (tools wrapped), or in replay the recorded specs (`recordedPacks`).
 * @param {import('./ledger.js').Ledger} ledger
 * @param {{ live: boolean }} mode
 * @param {any[] | undefined} recordedPacks
 */
export function journalPacks(ledger, mode, recordedPacks) {
  function toolFn(packName, toolName, live, idempotent) {
    const tool = `${packName}/${toolName}`;
    return (args, ctx) => {
      const chain = String(ctx?.chain ?? '0');
      const asked = {
        kind: 'tool',
        chain,
        seq: ledger.nextSeq(chain),
        entry: ctx?.entry,
        section: String(ctx?.section),
        tool,
        arguments: args,
      };
      const entry = ledger.lookup(asked);
      if (entry) return 'error' in entry ? Promise.reject(new Error(entry.error)) : Promise.resolve(entry.output);
      const sending =
        idempotent || ledger.wasSent(`${chain}#${asked.seq}`)
          ? undefined
          : { kind: 'call', chain, seq: asked.seq, entry: asked.entry, section: asked.section, tool, arguments: args };
      return ledger.settleLive(
        asked,
        () => live(args, ctx),
        (value) => ({ fields: { output: value }, value }),
        sending,
      );
    };
  }

  return (hostPacks) => {
    const specs = mode.live ? (hostPacks ?? []) : recordedPacks;
    const noTool = () => Promise.reject(new Error('the journal has no answer for this tool call'));
    return specs.map((pack) => {
      const out = mode.live ? { ...pack } : structuredCloneJson(pack);
      out.tools = (pack.tools ?? []).map((t) => ({
        ...(mode.live ? t : structuredCloneJson(t)),
        call: toolFn(pack.name, t.name, mode.live ? t.call : noTool, t.idempotent !== false),
      }));
      return out;
    });
  };
}
