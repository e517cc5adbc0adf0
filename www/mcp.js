// Connecting an MCP server by URL (Streamable HTTP): the SDK's client, loaded only when a person
// connects one, and the server's tools as a Pack (the package's mcpPack) for the runs that follow.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mcpPack } from '../pkg/packs/mcp.js';

/** Resolves with { pack, client, close } for the server at `url`; its failures say what a person can fix. */
export async function connectMcp(url, { trusted = false } = {}) {
  let endpoint;
  try {
    endpoint = new URL(url);
  } catch {
    throw new Error(`${url} is not a URL (for example https://example.org/mcp)`);
  }
  if (!/^https?:$/.test(endpoint.protocol)) throw new Error('an MCP server is reached over http: or https:');
  const client = new Client({ name: 'runvil-playground', version: '1' });
  try {
    await client.connect(new StreamableHTTPClientTransport(endpoint));
  } catch (error) {
    const why = error?.message ?? String(error);
    const cors = endpoint.origin !== location.origin
      ? ` If the server runs, it must allow this page's origin (${location.origin}) by CORS: answer OPTIONS with Access-Control-Allow-Origin, Access-Control-Allow-Methods: GET, POST, DELETE and Access-Control-Allow-Headers: content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id, and expose mcp-session-id (Access-Control-Expose-Headers).`
      : '';
    throw new Error(`${why}.${cors}`);
  }
  const pack = await mcpPack(client, { trust: trusted ? 'trusted' : 'untrusted' });
  return { pack, client, close: () => client.close() };
}
