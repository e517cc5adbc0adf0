// The run the durable tests stop and resume (durable-kill, durable-resume, durable-run): its
// prompt, the model and the Pack that answer it, and what the uninterrupted run gives. The model
// answers from its request alone, so a resumed run asks what the first attempt asked and gets the
// same answers. No import: workerd loads it too (pkg-tests/durable/run-worker.js).
/** A fanout, a call, a tool loop, appends, and a path that is a directory and then a file. */
export const PROMPT = `---
uses: [probe]
---
# Durable

## Main

\`\`\`lua
store.write('d/x.txt', 'first')
store.append('log.txt', 'start;')
local intro = call('## Intro', args) .. call('## Loop')
local arms = tasks.fanout('### Arm', { 'a', 'b', 'c' })
local parts = {}
for _, r in ipairs(arms) do parts[#parts + 1] = r.text; store.append('log.txt', 'arm;') end
return intro .. '|' .. table.concat(parts, ',')
\`\`\`

### Arm

\`\`\`lua
local text = models.infer('arm ' .. item)
store.write('arms/' .. item .. '.txt', text)
\`\`\`

\`\`\`lua
store.append('arms/' .. item .. '.txt', ';')
return store.read('arms/' .. item .. '.txt')
\`\`\`

## Intro

\`\`\`lua
local said = models.infer('intro ' .. args)
store.delete('d/x.txt')
store.delete('d')
store.write('d', 'now a file: ' .. said)
store.append('log.txt', 'intro;')
return said
\`\`\`

## Loop

\`\`\`lua
tools.offer('probe/look')
messages:user('look it up')
local answer = models.loop()
store.write('loop.txt', answer)
store.delete('old.txt')
return answer
\`\`\`
`;

/** The argument string the tests run the prompt with. */
export const ARGS = 'go';

/** What the store holds before the run: `old.txt` the run deletes, `keep.txt` it never touches. */
export const SEED_FILES = { 'old.txt': 'old', 'keep.txt': 'kept' };

/** The uninterrupted run's result, with ARGS. */
export const RESULT = 're:intro gore:The text inside |re:arm a;,re:arm b;,re:arm c;';

/** The files the uninterrupted run leaves, with ARGS (besides SEED_FILES' keep.txt). */
export const WRITTEN = {
  'arms/a.txt': 're:arm a;',
  'arms/b.txt': 're:arm b;',
  'arms/c.txt': 're:arm c;',
  d: 'now a file: re:intro go',
  'log.txt': 'start;intro;arm;arm;arm;',
  'loop.txt': 're:The text inside ',
};

/** The model calls of the uninterrupted run. */
export const MODEL_CALLS = 6;

/**
 * The model's answer to a conversation whose last message is `last`: the loop's `look it up` gets a
 * call of probe/look, anything else `re:` and the start of its text.
 * @returns {{ call: { id: string, name: string, arguments: { q: string } } } | { text: string }}
 */
export function answer(last) {
  const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  if (last.role === 'user' && text === 'look it up') return { call: { id: 't1', name: 'probe_look', arguments: { q: 'x' } } };
  return { text: `re:${text.slice(0, 16)}` };
}

/** `answer` as a model function's reply to `request` (engine.run's model protocol). */
export function modelReply(request) {
  const made = answer(request.messages.at(-1));
  return 'call' in made
    ? { content: '', tool_calls: [made.call], finish_reason: 'tool_calls' }
    : { content: made.text, finish_reason: 'stop' };
}

/** `answer` as a chat-completions choice to the request `body` (what an OpenAI-compatible server sends). */
export function chatChoice(body) {
  const made = answer(body.messages.at(-1));
  const message = 'call' in made
    ? { role: 'assistant', content: null, tool_calls: [{ id: made.call.id, type: 'function', function: { name: made.call.name, arguments: JSON.stringify(made.call.arguments) } }] }
    : { role: 'assistant', content: made.text };
  return { index: 0, message, finish_reason: 'call' in made ? 'tool_calls' : 'stop' };
}

/**
 * The Pack `probe`: its tool `look` answers `found Q`, calling `onCall` first. `tool` adds to the
 * tool's fields (`idempotent: false`).
 */
export function probePack(onCall = () => {}, tool = {}) {
  return {
    name: 'probe',
    description: 'Looks things up.',
    tools: [{
      name: 'look',
      description: 'Look a thing up.',
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
      ...tool,
      call: async (a) => {
        onCall();
        return `found ${a.q}`;
      },
    }],
  };
}
