// @ts-check
// The command line's MCP servers (docs/providers.md, "MCP servers as Packs"): `--mcp NAME=URL`
// (Streamable HTTP), `--mcp "NAME=COMMAND ARGS"` (stdio) and the `mcpServers` of ./.mcp.json,
// each connected with the MCP TypeScript SDK and served as the Pack `mcp/NAME`. The SDK is an
// optional peer of the package: it is imported here, when a server is configured, and only here.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mcpPack, mcpSegment } from '../packs/mcp.js';
import { version } from '../version.js';

const SDK = '@modelcontextprotocol/sdk';

/** A server name: one segment of the Pack-id grammar (src/ids.rs), so `mcp/NAME` is a Pack name. */
const NAME = /^[a-z0-9._-]+$/;

/** How much of a stdio server's stderr is kept to explain its failure. */
const STDERR_TAIL = 2000;

/** A failure of the MCP setup, told as it is (`runvil: <message>`), ending the command with `exitCode`. */
export class McpSetupError extends Error {
  constructor(message, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/**
 * `text` split into words as a POSIX shell splits a simple command: blanks separate words, '...'
 * keeps everything literally, "..." keeps all but `\"`, `\\`, `\$` and `` \` ``, and a backslash
 * outside quotes keeps the next character. No expansion of any kind.
 */
export function splitCommandLine(text) {
  const words = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new Error('a single quote is not closed');
      word += text.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && '"\\$`'.includes(text[j + 1] ?? '')) j++;
        word += text[j];
      }
      if (j >= text.length) throw new Error('a double quote is not closed');
      inWord = true;
      i = j;
    } else if (c === '\\' && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/**
 * A `--mcp` value: `NAME=URL` (http: or https:) or `NAME=COMMAND ARGS`. Throws an Error saying
 * what is wrong (a usage error).
 */
export function parseMcpFlag(value) {
  const at = value.indexOf('=');
  if (at < 0) throw new Error(`--mcp takes NAME=URL or "NAME=COMMAND ARGS" (got '${value}')`);
  const name = value.slice(0, at);
  const rest = value.slice(at + 1).trim();
  if (!NAME.test(name)) {
    throw new Error(
      `--mcp: the server name '${name}' must be lowercase ASCII letters, digits, '-', '_' or '.' (it names the Pack mcp/NAME)`,
    );
  }
  if (rest === '') throw new Error(`--mcp ${name}= needs a URL or a command`);
  if (/^https?:\/\//i.test(rest)) {
    try {
      return { name, url: new URL(rest).href };
    } catch {
      throw new Error(`--mcp ${name}: '${rest}' is not a URL`);
    }
  }
  let words;
  try {
    words = splitCommandLine(rest);
  } catch (error) {
    throw new Error(`--mcp ${name}: ${error.message}`);
  }
  if (words.length === 0) throw new Error(`--mcp ${name}= needs a URL or a command`);
  const [command, ...args] = words;
  return { name, command, args };
}

/**
 * `${VAR}` and `${VAR:-default}` in a .mcp.json string, from the environment (the expansion other
 * agent hosts apply to command, args, env, url and headers). A variable that is not set and has no
 * default is an error.
 */
function expand(text, where) {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, variable, fallback) => {
    const value = process.env[variable];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new McpSetupError(`.mcp.json: ${where} uses \${${variable}}, which is not set`, 2);
  });
}

const isRecord = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A string map of .mcp.json (`env`, `headers`), expanded. */
function stringMap(value, where) {
  if (value === undefined) return undefined;
  if (!isRecord(value) || !Object.values(value).every((v) => typeof v === 'string')) {
    throw new McpSetupError(`.mcp.json: ${where} must be an object of strings`, 2);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v, `${where}.${k}`)]));
}

/** One `mcpServers` entry as a server description. */
function mcpJsonServer(key, entry) {
  const name = mcpSegment(key);
  const where = `mcpServers.${JSON.stringify(key)}`;
  if (name === '') throw new McpSetupError('.mcp.json: a server name is empty', 2);
  if (!isRecord(entry)) throw new McpSetupError(`.mcp.json: ${where} must be an object`, 2);
  const { type } = entry;
  if (type !== undefined && !['stdio', 'http', 'streamable-http', 'sse'].includes(type)) {
    throw new McpSetupError(
      `.mcp.json: ${where}.type must be "stdio", "http" or "sse" (got ${JSON.stringify(type)})`,
      2,
    );
  }
  if (typeof entry.url === 'string' && type !== 'stdio') {
    let url;
    try {
      url = new URL(expand(entry.url, `${where}.url`)).href;
    } catch (error) {
      if (error instanceof McpSetupError) throw error;
      throw new McpSetupError(`.mcp.json: ${where}.url is not a URL`, 2);
    }
    return { name, url, sse: type === 'sse', headers: stringMap(entry.headers, `${where}.headers`) };
  }
  if (typeof entry.command !== 'string' || entry.command === '') {
    throw new McpSetupError(`.mcp.json: ${where} needs a "command" (stdio) or a "url" (Streamable HTTP)`, 2);
  }
  const { args = [] } = entry;
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) {
    throw new McpSetupError(`.mcp.json: ${where}.args must be an array of strings`, 2);
  }
  if (entry.cwd !== undefined && typeof entry.cwd !== 'string')
    throw new McpSetupError(`.mcp.json: ${where}.cwd must be a string`, 2);
  return {
    name,
    command: expand(entry.command, `${where}.command`),
    args: args.map((a, i) => expand(a, `${where}.args[${i}]`)),
    env: stringMap(entry.env, `${where}.env`),
    cwd: entry.cwd === undefined ? undefined : expand(entry.cwd, `${where}.cwd`),
  };
}

/**
 * The servers of `dir`/.mcp.json (`{ "mcpServers": { NAME: { command, args?, env?, cwd? } | { url,
 * headers?, type? } } }`), none when there is no such file. A name is fitted to the Pack-id grammar
 * as mcpPack fits names (`GitHub` serves as `mcp/github`).
 */
export async function readMcpJson(dir) {
  const path = join(dir, '.mcp.json');
  let text;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return [];
    throw new McpSetupError(`cannot read .mcp.json: ${error.message}`, 2);
  }
  let config;
  try {
    config = JSON.parse(text);
  } catch (error) {
    throw new McpSetupError(`.mcp.json is not JSON: ${error.message}`, 2);
  }
  if (!isRecord(config) || !isRecord(config.mcpServers ?? {})) {
    throw new McpSetupError('.mcp.json must be an object with an "mcpServers" object', 2);
  }
  const servers = Object.entries(config.mcpServers ?? {}).map(([key, entry]) => mcpJsonServer(key, entry));
  const seen = new Map();
  for (const [i, server] of servers.entries()) {
    const key = Object.keys(config.mcpServers)[i];
    if (seen.has(server.name)) {
      throw new McpSetupError(
        `.mcp.json: the servers ${JSON.stringify(seen.get(server.name))} and ${JSON.stringify(key)} would both be mcp/${server.name}`,
        2,
      );
    }
    seen.set(server.name, key);
  }
  return servers;
}

/**
 * The SDK's client and the transports `servers` use (each module takes a few hundred milliseconds
 * to load), or an McpSetupError saying how to install the SDK.
 */
async function loadSdk(servers) {
  // A specifier in a variable: bundlers and the type-check leave an optional peer alone.
  const load = (path) => import(`${SDK}/${path}`);
  const uses = (test) => servers.some(test);
  /** @type {any} */
  const none = {};
  try {
    const [client, stdio, http, sse] = await Promise.all([
      load('client/index.js'),
      uses((s) => !s.url) ? load('client/stdio.js') : none,
      uses((s) => s.url && !s.sse) ? load('client/streamableHttp.js') : none,
      uses((s) => s.url && s.sse) ? load('client/sse.js') : none,
    ]);
    return {
      Client: client.Client,
      StdioClientTransport: stdio.StdioClientTransport,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      SSEClientTransport: sse.SSEClientTransport,
    };
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes(SDK)) {
      throw new McpSetupError(`MCP servers need the MCP TypeScript SDK, which is not installed: npm i ${SDK}`);
    }
    throw new McpSetupError(`could not load the MCP TypeScript SDK (${SDK}): ${error?.message ?? error}`);
  }
}

/** How a server is reached, for messages: its URL, or its command line. */
function whereIs(server) {
  return (
    server.url ?? [server.command, ...server.args].map((w) => (/[\s'"]/.test(w) ? JSON.stringify(w) : w)).join(' ')
  );
}

/** Connects one server and makes its Pack; on failure, closes what it opened and throws. */
async function connect(sdk, server) {
  const client = new sdk.Client({ name: 'runvil', version });
  let transport;
  let stderr = '';
  if (server.url && server.sse) {
    transport = new sdk.SSEClientTransport(new URL(server.url), { requestInit: { headers: server.headers } });
  } else if (server.url) {
    transport = new sdk.StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: server.headers },
    });
  } else {
    transport = new sdk.StdioClientTransport({
      command: server.command,
      args: server.args,
      env: server.env,
      cwd: server.cwd,
      stderr: 'pipe',
    });
    // Kept to explain a server that fails; read all along, so a chatty server never blocks on a full pipe.
    transport.stderr?.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL);
    });
  }
  const close = async () => {
    if (typeof transport.terminateSession === 'function' && transport.sessionId)
      await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  };
  const fail = async (what, error) => {
    await close();
    const tail = stderr.trim() ? `\n${server.name}'s stderr ends:\n${stderr.trim()}` : '';
    return new McpSetupError(
      `MCP server ${server.name} (${whereIs(server)}) ${what}: ${error?.message ?? error}${tail}`,
    );
  };
  try {
    await client.connect(transport);
  } catch (error) {
    throw await fail(server.url ? 'could not be reached' : 'could not be started', error);
  }
  let pack;
  try {
    pack = await mcpPack(client, { name: `mcp/${server.name}` });
  } catch (error) {
    throw await fail('failed', error);
  }
  return { pack, close };
}

/**
 * Connects every server (at once) and answers their Packs and `close()`, which closes them all.
 * Any failure closes the ones that connected and throws an McpSetupError naming the server.
 */
export async function connectMcpServers(servers) {
  if (servers.length === 0) return { packs: [], close: async () => {} };
  const sdk = await loadSdk(servers);
  const settled = await Promise.allSettled(servers.map((server) => connect(sdk, server)));
  const connected = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const closeAll = async () => {
    await Promise.all(connected.map((c) => c.close()));
  };
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed?.status === 'rejected') {
    await closeAll();
    throw failed.reason instanceof McpSetupError
      ? failed.reason
      : new McpSetupError(String(failed.reason?.message ?? failed.reason));
  }
  return { packs: connected.map((c) => c.pack), close: closeAll };
}
