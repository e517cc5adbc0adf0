// @ts-check
// What the model adapters (openai.js, ai-sdk.js) do alike between a run's request and a provider:
// tool names on the wire and back, tool call arguments, the usage of a round of several calls,
// and the answer to a call of a tool that was not offered.

/** The tool_choice words every protocol knows; anything else names a tool. */
export const TOOL_CHOICE_WORDS = new Set(['auto', 'none', 'required']);

/** What OpenAI accepts as a function name. */
const PROTOCOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The name the engine offers tool `id` by: `/` and `.` become `_` (the rule of `wire_name` in
 * src/tools/catalog.rs; `web/search` is `web_search`). A name already on the wire stays as it is.
 */
export function engineWireName(id) {
  return id.replace(/[/.]/g, '_');
}

/** FNV-1a over UTF-16 code units, 32 bits, as 8 hex digits. */
function fnv1a(text, basis) {
  let h = basis >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * The name a tool goes by on the wire: itself when the protocol accepts it, else a stem of it
 * (characters outside [A-Za-z0-9_-] become '_') and a 64-bit hash of the whole name, 64
 * characters at most. Deterministic, so a name means the same in every round and every run.
 * @type {typeof import('../index.d.ts').wireToolName}
 */
export function wireToolName(name) {
  if (PROTOCOL_NAME.test(name)) return name;
  const hash = fnv1a(name, 0x811c9dc5) + fnv1a(name, 0x01000193);
  return `${name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64 - hash.length - 1)}_${hash}`;
}

/** One request's tool names as the wire spells them, and back. */
export function nameMap() {
  const back = new Map();
  const wire = (name) => {
    const w = wireToolName(name);
    back.set(w, name);
    return w;
  };
  return {
    wire,
    name: (w) => back.get(w) ?? w,
    /** The tool a role spec's tool_choice names by its id (`web/search`) or wire name (`web_search`). */
    chosen: (name) => wire(engineWireName(name)),
  };
}

/**
 * The model's arguments text as JSON; no text means no arguments; text that is not JSON stays text
 * (the engine refuses it).
 */
export function parseArguments(value) {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'string') return value;
  if (value.trim() === '') return {};
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** Two replies' usage as one: a round that took several provider calls (an unknown-tool repair)
 * reports what all of them used. */
export function addUsage(a, b) {
  if (!a || !b) return a ?? b;
  const sum = { ...a };
  for (const [key, value] of Object.entries(b)) sum[key] = (sum[key] ?? 0) + value;
  return sum;
}

/**
 * A round's reply from `ask(records)`, repairing calls of tools that were not offered: while the
 * reply calls one (and `retries` allow), the model is told so inside the round (the engine would
 * end the loop: 002, "out_of_scope_tool") and asked again, `records` then holding the turn and an
 * answer to each of its calls (every call of a turn needs one), to append to the conversation
 * sent. The reply's usage is the sum of every ask's.
 * @param {{ tools?: { name: string }[], emit?: (name: string, fields: object) => void }} request
 * @param {number} retries
 * @param {(records: object[]) => Promise<any>} ask
 */
export async function askRepairingUnknownTools(request, retries, ask) {
  const offered = new Set((request.tools ?? []).map((t) => t.name));
  let usage;
  let records = [];
  for (let repairs = 0; ; repairs++) {
    const reply = await ask(records);
    usage = addUsage(usage, reply.usage);
    if (usage) reply.usage = usage;
    const unknown = (reply.tool_calls ?? []).filter((c) => !offered.has(c.name));
    if (!unknown.length || repairs >= retries) return reply;
    const list = JSON.stringify([...offered]);
    request.emit?.('model_unknown_tool', { names: unknown.map((c) => c.name), attempt: repairs + 1 });
    records = [
      {
        role: 'assistant',
        content: reply.content,
        tool_calls: reply.tool_calls,
        reasoning_content: reply.reasoning_content,
      },
      ...reply.tool_calls.map((c) => ({
        role: 'tool',
        tool_call_id: c.id,
        content: offered.has(c.name)
          ? 'not run: another call of this turn named a tool that is not offered; call again with offered tools only'
          : `error: there is no tool named ${JSON.stringify(c.name)}; the tools offered are ${list}`,
      })),
    ];
  }
}
