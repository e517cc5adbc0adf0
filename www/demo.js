// The playground's offline demo model and demo Pack: deterministic (the same request always gets
// the same reply), no network, and able to call tools, so the language's model and tool features
// can be tried without a provider account.

/** FNV-1a over the text: a stable number for choosing among canned phrases. */
function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const OPENINGS = ['Here is my answer', 'Gladly', 'In short', 'Offline, but happy to help'];
const IMAGES = ['the river keeps its own slow time', 'a lamp left on in an empty room', 'salt on the wind, and gulls', 'the hum of a server at night'];

/** Arguments for `tool` from the user's text: quoted text or the last word for strings, numbers in order for numbers. */
function argumentsFor(tool, text) {
  const props = tool.parameters?.properties ?? {};
  const quoted = /"([^"]+)"|'([^']+)'/.exec(text);
  const words = text.match(/[\p{L}\p{N}-]+/gu) ?? [];
  const numbers = (text.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number);
  const args = {};
  for (const [name, schema] of Object.entries(props)) {
    if (schema.type === 'number' || schema.type === 'integer') args[name] = numbers.length ? numbers.shift() : 2;
    else if (schema.type === 'boolean') args[name] = true;
    else args[name] = quoted ? (quoted[1] ?? quoted[2]) : (words.at(-1) ?? name);
  }
  return args;
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Tells `text` to the run a few words at a time, as a streaming provider would (model_delta events). */
async function stream(request, text) {
  if (typeof request.emit !== 'function') return;
  const pieces = text.match(/\S+\s*/g) ?? [];
  for (let i = 0; i < pieces.length; i += 3) {
    await request.emit('model_delta', { text: pieces.slice(i, i + 3).join('') });
    await pause(4);
  }
}

/** A model function (runvil's ModelFn): answers text (streamed), or calls the offered tool the text names. */
export async function demoModel(request) {
  const reply = answer(request);
  if (reply.content) await stream(request, reply.content);
  return reply;
}

function answer(request) {
  const last = request.messages.at(-1);
  const tools = request.tools ?? [];
  if (last?.role === 'tool') {
    const results = [];
    for (let i = request.messages.length - 1; i >= 0 && request.messages[i].role === 'tool'; i--) results.unshift(request.messages[i].content);
    return { content: `The tool answered: ${results.join('; ')}`, finish_reason: 'stop', model: 'demo' };
  }
  const text = last?.content ?? '';
  const lower = text.toLowerCase();
  if (tools.length) {
    const named = tools.find((t) => lower.includes(t.name.toLowerCase()) || lower.includes(t.name.split('_').at(-1).toLowerCase()));
    const tool = named ?? tools[0];
    return {
      content: '',
      tool_calls: [{ id: `call_${hash(text + tool.name).toString(16)}`, name: tool.name, arguments: argumentsFor(tool, text) }],
      finish_reason: 'tool_calls',
      model: 'demo',
    };
  }
  const h = hash(text);
  const poem = /poem about ([\p{L}\p{N}][^.!?\n]*)/iu.exec(text);
  if (poem) {
    const subject = poem[1].trim();
    return { content: `${subject[0].toUpperCase()}${subject.slice(1)}, and ${IMAGES[h % IMAGES.length]};\nI wrote it offline, but it rhymes in its way.`, finish_reason: 'stop', model: 'demo', usage: { input_tokens: text.length, output_tokens: 24 } };
  }
  const words = text.split(/\s+/).filter(Boolean).length;
  const first = text.split(/(?<=[.!?])\s/)[0].slice(0, 120);
  return {
    content: `${OPENINGS[h % OPENINGS.length]}: you wrote ${words} word${words === 1 ? '' : 's'}, starting "${first}". (Demo model: pick an OpenAI-compatible endpoint for real answers.)`,
    finish_reason: 'stop',
    model: 'demo',
    usage: { input_tokens: text.length, output_tokens: 30 },
  };
}

/** The `demo` Pack: a weather report and an adder, both deterministic. */
export const demoPack = {
  name: 'demo',
  description: 'Deterministic demo tools for the playground.',
  tools: [
    {
      name: 'weather',
      description: "Today's weather in a city (made up, but always the same for a city).",
      parameters: { type: 'object', properties: { city: { type: 'string', description: 'The city.' } }, required: ['city'] },
      trust: 'trusted',
      call: ({ city }) => {
        if (typeof city !== 'string' || city === '') throw new Error('weather: missing city');
        const h = hash(city.toLowerCase());
        return `${['Sunny', 'Cloudy', 'Light rain', 'Windy'][h % 4]}, ${8 + (h % 20)} °C in ${city}`;
      },
    },
    {
      name: 'add',
      description: 'Adds two numbers.',
      parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      trust: 'trusted',
      output: 'structured',
      call: ({ a, b }) => {
        if (typeof a !== 'number' || typeof b !== 'number') throw new Error('add: a and b must be numbers');
        return { sum: a + b };
      },
    },
  ],
};
