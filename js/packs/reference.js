// @ts-check
// The reference Packs of the language: runvil/web and runvil/user-input (chapter 002). Their
// services come from the host: a fetch function and a search provider for web, an operator for
// user-input. A Pack's failures are model-safe messages (what the model and the prompt read).

/** The runvil/user-input prelude, as the language reference gives it. */
export const USER_INPUT_PRELUDE = `local pack = ...
input = {}
function input.ask(...)
  if select('#', ...) > 0 then
    error("input.ask takes no arguments", 2)
  end
  return tools.call(pack .. "/ask")
end
`;

const NO_OPERATOR = 'no operator is attached to this host';

/**
 * runvil/user-input: `user-input/ask` waits for the operator's next message.
 * `options.ask` answers with the operator's text; it throws an Error whose message is safe to
 * show a model.
 * @type {typeof import('../index.d.ts').userInputPack}
 */
export function userInputPack({ ask } = {}) {
  if (ask !== undefined && typeof ask !== 'function') throw new TypeError('userInputPack: ask must be a function');
  return {
    name: 'user-input',
    description: 'Ask the operator and wait for the answer.',
    tools: [
      {
        name: 'ask',
        description: "Wait for the operator's next message and answer with its text.",
        parameters: { type: 'object', properties: {} },
        trust: 'trusted',
        output: 'plain',
        call: async (_args, ctx) => {
          // Not reached without `ask`: an unavailable Pack never joins a run (a declared one refuses it).
          if (!ask) throw new Error(NO_OPERATOR);
          return String(await ask(ctx));
        },
      },
    ],
    prelude: USER_INPUT_PRELUDE,
    unavailable: ask ? undefined : NO_OPERATOR,
  };
}

/**
 * Page text from HTML: scripts, styles and tags removed, common entities decoded, blank runs collapsed.
 * @type {typeof import('../index.d.ts').htmlToText}
 */
export function htmlToText(html) {
  const entities = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
  return html
    .replace(/<(script|style|noscript|template)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<\/(p|div|section|article|li|tr|h[1-6]|pre|blockquote)\s*>|<br\s*\/?>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e) => {
      if (e[0] === '#') {
        const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return Number.isFinite(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
      }
      return entities[e.toLowerCase()] ?? m;
    })
    .replace(/[ \t\f\v\r]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const NO_SEARCH_PROVIDER = 'web needs runvil/search-provider, and this host provides none';

/**
 * A runvil/web tool taking one string argument (`argument`: its name and description), with
 * untrusted plain text out: `missing` is the model-safe message when the argument is absent or
 * empty, `answer(value, ctx)` answers the call.
 * @returns {import('../index.d.ts').PackTool}
 */
function webTool({ name, description, argument: [key, about], missing, answer }) {
  return {
    name,
    description,
    parameters: { type: 'object', properties: { [key]: { type: 'string', description: about } }, required: [key] },
    trust: 'untrusted',
    output: 'plain',
    call: async (args, ctx) => {
      if (typeof args?.[key] !== 'string' || args[key] === '') throw new Error(missing);
      return answer(args[key], ctx);
    },
  };
}

/**
 * runvil/web: `web/fetch` (a page's text) and `web/search` (results from the host's provider).
 * Without a search provider the Pack reports that it needs `runvil/search-provider`.
 * @type {typeof import('../index.d.ts').webPack}
 */
export function webPack({ fetch = globalThis.fetch, search } = {}) {
  if (typeof fetch !== 'function') throw new TypeError('webPack: fetch must be a function');
  if (search !== undefined && typeof search !== 'function') throw new TypeError('webPack: search must be a function');
  return {
    name: 'web',
    description: 'Search the web and fetch pages.',
    tools: [
      webTool({
        name: 'fetch',
        description: 'Fetch a web page and return its text.',
        argument: ['url', 'The page address.'],
        missing: 'web_fetch: missing url argument',
        answer: async (url, ctx) => {
          let response;
          try {
            response = await fetch(url, { signal: ctx?.signal, redirect: 'follow' });
          } catch (error) {
            throw new Error(`web_fetch: could not fetch ${url}`);
          }
          if (!response.ok) throw new Error(`web_fetch: ${url} answered ${response.status}`);
          const body = await response.text();
          const type = response.headers.get('content-type') ?? '';
          return /html/i.test(type) ? htmlToText(body) : body;
        },
      }),
      webTool({
        name: 'search',
        description: 'Search the web and return a list of results (title, url, description).',
        argument: ['query', 'What to search for.'],
        missing: 'web_search: missing query argument',
        answer: async (query, ctx) => {
          // Not reached without `search`: the Pack is unavailable then (it needs a provider).
          if (!search) throw new Error(NO_SEARCH_PROVIDER);
          const results = await search(query, ctx);
          return JSON.stringify((results ?? []).map(({ title, url, description }) => ({ title, url, description })));
        },
      }),
    ],
    unavailable: search ? undefined : { needs: 'runvil/search-provider', reason: NO_SEARCH_PROVIDER },
  };
}
