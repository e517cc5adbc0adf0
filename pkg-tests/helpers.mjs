// Shared by the package tests. Not a test file (node --test only picks *.test.mjs here).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const PKG = fileURLToPath(new URL('../pkg/', import.meta.url));

/** The exact result examples/smoke.md must produce, in every runtime. */
export const SMOKE_RESULT = 'smoke ok: 25,16,9,4,1 | Lua 5.5';

/** A prompt whose `## Main` runs the given Lua. */
export function luaPrompt(lua) {
  return `# Test\n\n## Main\n\n\`\`\`lua\n${lua}\n\`\`\`\n`;
}

export function smokeSource() {
  return readFileSync(new URL('../examples/smoke.md', import.meta.url), 'utf8');
}

/**
 * A local HTTP server standing in for a chat-completions provider: every request's JSON body goes
 * to `onRequest(body, req, res)`, which answers it. Resolves with the `/v1` base URL and `close`.
 */
export async function localProvider(onRequest) {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => { text += c; });
    req.on('end', () => onRequest(JSON.parse(text), req, res));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseURL: `http://127.0.0.1:${server.address().port}/v1`, close: () => new Promise((r) => server.close(r)) };
}
