// @ts-check
// MCP servers as Packs (docs/providers.md, "MCP servers as Packs"). `client` is a connected client
// of the official MCP TypeScript SDK (@modelcontextprotocol/sdk), over any transport, taken by
// structure: the package imports no MCP module. The server's tools are listed once, when the Pack
// is made; each becomes an ordinary Pack tool whose call is the server's `tools/call`.
import { describe, isObject } from '../core/values.js';

/** A call's limit when `timeoutMs` is not given: the SDK's own default request timeout. */
export const MCP_DEFAULT_TIMEOUT_MS = 60_000;

/** The longest delay setTimeout takes (a longer one fires at once). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A bound on `tools/list` pages, against a server whose cursors never end. */
const MAX_PAGES = 1000;

/** One segment of the name grammar of Pack ids and tool ids (src/ids.rs, `segment_error`). */
const SEGMENT = /^[a-z0-9._-]+$/;

/**
 * A name made to fit one segment of the Pack-id and tool-id grammar: ASCII letters lowercased,
 * every other character outside `[a-z0-9._-]` (each code point) replaced by `_`.
 * `get_Weather` → `get_weather`, `say hello` → `say_hello`, `café` → `caf_`.
 */
export function mcpSegment(text) {
  return Array.from(text.toLowerCase(), (c) => (/[a-z0-9._-]/.test(c) ? c : '_')).join('');
}

/** The Pack id of a server name: its last `/`-separated segment, fitted (`mcp-servers/everything` → `everything`). */
function serverPackId(serverName) {
  const last = serverName.split('/').filter(Boolean).at(-1) ?? '';
  return mcpSegment(last) || 'server';
}

/** Why `name` is not a Pack name as the Pack contract takes it (`id` or `vendor/id`), or undefined. */
function packNameError(name) {
  const segments = name.split('/');
  if (segments.length > 2) return 'it has more than two segments';
  if (segments.some((s) => !SEGMENT.test(s)))
    return "each segment must be lowercase ASCII letters, digits, '-', '_' or '.'";
  return undefined;
}

/** Bytes of base64 data (whitespace ignored). */
function base64Size(data) {
  const text = String(data).replace(/\s+/g, '');
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((text.length * 3) / 4) - padding);
}

const utf8 = new TextEncoder();

/** `image/png, 1234 bytes`: what a note says of binary or embedded data. */
function typeAndSize(mimeType, bytes) {
  const type = typeof mimeType === 'string' && mimeType ? mimeType : 'unknown type';
  return bytes === undefined ? type : `${type}, ${bytes} bytes`;
}

/**
 * One content block of a tool result as text: text as it is; an image, audio or a resource as a
 * short note of what it was, its MIME type and size (never its bytes); an embedded text resource
 * as its note and then its text.
 */
function blockText(block) {
  if (!isObject(block)) return `[${describe(block)} content]`;
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'image':
    case 'audio':
      return `[${block.type}: ${typeAndSize(block.mimeType, typeof block.data === 'string' ? base64Size(block.data) : undefined)}]`;
    case 'resource_link': {
      const size = typeof block.size === 'number' ? block.size : undefined;
      const about = typeof block.description === 'string' && block.description ? `: ${block.description}` : '';
      const name = typeof block.name === 'string' && block.name ? `${block.name}, ` : '';
      return `[resource link: ${name}${block.uri}, ${typeAndSize(block.mimeType, size)}${about}]`;
    }
    case 'resource': {
      const resource = isObject(block.resource) ? block.resource : {};
      if (typeof resource.text === 'string') {
        const note = `[resource: ${resource.uri}, ${typeAndSize(resource.mimeType ?? 'text/plain', utf8.encode(resource.text).length)}]`;
        return `${note}\n${resource.text}`;
      }
      const bytes = typeof resource.blob === 'string' ? base64Size(resource.blob) : undefined;
      return `[resource: ${resource.uri}, ${typeAndSize(resource.mimeType, bytes)}]`;
    }
    default:
      return `[${typeof block.type === 'string' ? block.type : 'unknown'} content]`;
  }
}

/** A result's `content` as text, one block after another, each on its own line(s). */
function contentText(content) {
  return Array.isArray(content) ? content.map(blockText).join('\n') : '';
}

/** What the server's answer to `tools/call` is to the engine: text, or (a structured tool) a JSON value. */
function toolAnswer(result, { structuredOutput, hasOutputSchema }) {
  if (!isObject(result))
    throw new Error(`the MCP server answered the call with ${describe(result)}, not a tool result`);
  if (result.isError)
    throw new Error(contentText(result.content) || 'the tool failed and the server said nothing more');
  if (hasOutputSchema && result.structuredContent !== undefined) {
    return structuredOutput ? result.structuredContent : JSON.stringify(result.structuredContent);
  }
  // The result shape of protocol version 2024-10-07, which the SDK still accepts.
  if (!('content' in result) && 'toolResult' in result) {
    return typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult ?? null);
  }
  return contentText(result.content);
}

/** The message of whatever a call threw (an McpError's reads `MCP error <code>: <server's text>`). */
function thrownMessage(error) {
  const message = isObject(error) && typeof error.message === 'string' ? error.message : String(error);
  return message || 'no message';
}

function checkOptions(options) {
  if (options === undefined) return {};
  if (!isObject(options)) throw new TypeError(`mcpPack: options must be an object (got ${describe(options)})`);
  const { name, tools, trust, timeoutMs } = options;
  if (name !== undefined) {
    if (typeof name !== 'string') throw new TypeError(`mcpPack: name must be a string (got ${describe(name)})`);
    const why = packNameError(name);
    if (why) throw new TypeError(`mcpPack: name '${name}' is not a Pack name such as 'mcp/everything': ${why}`);
  }
  if (tools !== undefined && !(Array.isArray(tools) && tools.every((t) => typeof t === 'string'))) {
    throw new TypeError(`mcpPack: tools must be an array of tool names (got ${describe(tools)})`);
  }
  if (trust !== undefined && trust !== 'trusted' && trust !== 'untrusted') {
    throw new TypeError(
      `mcpPack: trust must be 'trusted' or 'untrusted' (got ${JSON.stringify(trust) ?? describe(trust)})`,
    );
  }
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS)) {
    throw new TypeError(
      `mcpPack: timeoutMs must be a number of milliseconds from 1 to ${MAX_TIMEOUT_MS} (got ${String(timeoutMs)})`,
    );
  }
  return options;
}

/** Every tool of the server, following `nextCursor` from page to page. */
async function listAllTools(client, server, timeoutMs) {
  const capabilities = typeof client.getServerCapabilities === 'function' ? client.getServerCapabilities() : undefined;
  if (isObject(capabilities) && capabilities.tools === undefined) return [];
  const all = [];
  const seen = new Set();
  let cursor;
  for (let page = 0; ; page++) {
    if (page === MAX_PAGES)
      throw new Error(`mcpPack: the MCP server ${server} listed more than ${MAX_PAGES} pages of tools`);
    let result;
    try {
      result = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
    } catch (error) {
      throw new Error(`mcpPack: could not list the tools of the MCP server ${server}: ${thrownMessage(error)}`);
    }
    if (!isObject(result) || !Array.isArray(result.tools)) {
      throw new Error(`mcpPack: the MCP server ${server} answered tools/list without a tools array`);
    }
    all.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === null || cursor === '') return all;
    if (seen.has(cursor))
      throw new Error(`mcpPack: the MCP server ${server} repeated the tools/list cursor ${JSON.stringify(cursor)}`);
    seen.add(cursor);
  }
}

/**
 * The call of one MCP tool: `tools/call` with the run's signal (cancelling the run sends the
 * server `notifications/cancelled`) and a limit of `timeoutMs`.
 */
function toolCall(client, { mcpName, server, timeoutMs, structuredOutput, hasOutputSchema }) {
  return async (args, ctx) => {
    const runSignal = ctx?.signal;
    if (runSignal?.aborted) throw new Error('the call was cancelled');
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onAbort = () => controller.abort(runSignal?.reason ?? new Error('the run was cancelled'));
    runSignal?.addEventListener('abort', onAbort, { once: true });
    // Settles the call when it is aborted, even on a client that would not.
    const stopped = new Promise((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
    });
    let result;
    try {
      const params = { name: mcpName, arguments: isObject(args) ? args : {} };
      // The SDK's own request timeout (60 s unless told) would cut a longer timeoutMs short; it
      // is set past ours, so that ours is the one that fires and its message the one reported.
      const options = { signal: controller.signal, timeout: Math.min(timeoutMs + 1000, MAX_TIMEOUT_MS) };
      result = await Promise.race([client.callTool(params, undefined, options), stopped]);
    } catch (error) {
      if (runSignal?.aborted) throw new Error('the call was cancelled');
      if (timedOut) throw new Error(`the MCP server ${server} did not answer within ${timeoutMs} ms`);
      throw new Error(`the MCP server ${server} failed the call: ${thrownMessage(error)}`);
    } finally {
      clearTimeout(timer);
      runSignal?.removeEventListener('abort', onAbort);
    }
    return toolAnswer(result, { structuredOutput, hasOutputSchema });
  };
}

/**
 * A Pack of the tools of a connected MCP client.
 * @type {typeof import('../index.d.ts').mcpPack}
 */
export async function mcpPack(client, options) {
  if (!isObject(client) || typeof client.listTools !== 'function' || typeof client.callTool !== 'function') {
    throw new TypeError(
      `mcpPack: client must be a connected MCP client (a Client of @modelcontextprotocol/sdk, with listTools and callTool; got ${describe(client)})`,
    );
  }
  const { name, tools: allow, trust = 'untrusted', timeoutMs = MCP_DEFAULT_TIMEOUT_MS } = checkOptions(options);
  const info = typeof client.getServerVersion === 'function' ? client.getServerVersion() : undefined;
  /** @type {(key: 'name' | 'title' | 'version') => string} */
  const about = (key) => (isObject(info) && typeof info?.[key] === 'string' ? info[key] : '');
  const serverName = about('name') || 'server';
  const server = JSON.stringify(serverName);
  const packName = name ?? `mcp/${serverPackId(serverName)}`;
  const packId = packName.split('/').at(-1);

  const listed = await listAllTools(client, server, timeoutMs);
  const byName = new Map();
  for (const tool of listed) {
    if (!isObject(tool) || typeof tool.name !== 'string' || tool.name === '') {
      throw new Error(`mcpPack: the MCP server ${server} listed a tool without a name`);
    }
    if (byName.has(tool.name))
      throw new Error(`mcpPack: the MCP server ${server} listed the tool ${JSON.stringify(tool.name)} twice`);
    byName.set(tool.name, tool);
  }

  let chosen = [...byName.values()];
  if (allow !== undefined) {
    const wanted = new Set(allow);
    for (const entry of wanted) {
      if (!byName.has(entry) && !chosen.some((t) => mcpSegment(t.name) === entry)) {
        const known = [...byName.keys()].join(', ') || 'none';
        throw new Error(
          `mcpPack: tools names ${JSON.stringify(entry)}, which the MCP server ${server} does not have (its tools: ${known})`,
        );
      }
    }
    chosen = chosen.filter((t) => wanted.has(t.name) || wanted.has(mcpSegment(t.name)));
  }
  // A tool only a task-augmented call can run (execution.taskSupport 'required'): callTool refuses it.
  const needsTask = (t) => isObject(t.execution) && t.execution.taskSupport === 'required';
  const refused = chosen.find((t) => needsTask(t) && allow !== undefined);
  if (refused) {
    throw new Error(
      `mcpPack: the tool ${JSON.stringify(refused.name)} of the MCP server ${server} runs only as an MCP task, which mcpPack does not call`,
    );
  }
  chosen = chosen.filter((t) => !needsTask(t));

  // Two tools may not share a tool id, nor the wire name the engine makes of it ('/' and '.' become '_').
  const taken = new Map();
  for (const tool of chosen) {
    const mapped = mcpSegment(tool.name);
    const wire = `${packId}/${mapped}`.replace(/[/.]/g, '_');
    const other = taken.get(wire);
    if (other !== undefined) {
      const clash =
        other.mapped === mapped
          ? `would both be the tool ${packId}/${mapped}`
          : `would share the wire name ${wire} (as ${packId}/${other.mapped} and ${packId}/${mapped})`;
      throw new Error(
        `mcpPack: the tools ${JSON.stringify(other.name)} and ${JSON.stringify(tool.name)} of the MCP server ${server} ` +
          `${clash}; leave one out with the tools option`,
      );
    }
    taken.set(wire, { name: tool.name, mapped });
  }

  const trusted = trust === 'trusted';
  const version = about('version') ? ` ${about('version')}` : '';
  return {
    name: packName,
    description: `The tools of the MCP server ${about('title') || serverName}${version}.`,
    tools: chosen.map((tool) => {
      const hasOutputSchema = isObject(tool.outputSchema);
      // A structured result reaches a script as a table only when trusted: the engine parses a
      // structured tool's text as JSON, and an untrusted tool's text is its envelope (002).
      const structuredOutput = hasOutputSchema && trusted;
      const text = (v) => (typeof v === 'string' ? v : '');
      return {
        name: mcpSegment(tool.name),
        description: text(tool.description) || text(tool.title) || text(tool.annotations?.title) || tool.name,
        parameters: isObject(tool.inputSchema) ? tool.inputSchema : { type: 'object', properties: {} },
        trust,
        output: structuredOutput ? 'structured' : 'plain',
        mcpName: tool.name,
        call: toolCall(client, { mcpName: tool.name, server, timeoutMs, structuredOutput, hasOutputSchema }),
      };
    }),
  };
}
