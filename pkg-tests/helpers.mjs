// Shared by the package tests. Not a test file (node --test only picks *.test.mjs here).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../pkg/index.js';
import { engineIsStub } from '../tools/engine-is-stub.mjs';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const PKG = fileURLToPath(new URL('../pkg/', import.meta.url));

/** The exact result examples/smoke.md must produce, in every runtime. */
export const SMOKE_RESULT = 'smoke ok: 25,16,9,4,1 | Lua 5.5';

export const STUB = await engineIsStub(await createEngine());

// TEMPORARY, delete with the bridge stub: the stub evaluates a whole source as one Lua chunk, so
// a Markdown prompt is reduced to its ```lua blocks. The prompts used here keep all their logic in
// one `## Main` block, so both engines give the same result.
export function forEngine(markdown) {
  if (!STUB) return markdown;
  const blocks = [...markdown.matchAll(/^```lua[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1]);
  return blocks.join('\n');
}

/** A prompt whose `## Main` runs the given Lua; works with the stub and the real engine. */
export function luaPrompt(lua) {
  return forEngine(`# Test\n\n## Main\n\n\`\`\`lua\n${lua}\n\`\`\`\n`);
}

export function smokeSource() {
  return forEngine(readFileSync(new URL('../examples/smoke.md', import.meta.url), 'utf8'));
}
