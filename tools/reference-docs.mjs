// Reads docs/reference.md into the editor's help data: one entry per declared name (the page's
// convention: a heading of level 2 or deeper that starts with a code span), with its signature,
// the first paragraphs under the heading as plain text, and its anchor; plus the names listed on
// `Lua's own:` lines. tools/build-site.mjs bundles the result into the playground's editor, so
// completion and hover say exactly what the reference says.
import { readFileSync } from 'node:fs';

/** GitHub's heading anchor: lowercase, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading) {
  return heading.toLowerCase().trim().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** Markdown prose to plain text: code spans, links and emphasis unwrapped. */
function plain(text) {
  return text
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/\*\*([^*]+)\*\*/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

const OWNERS = { err: 'error value', record: 'message record', model: 'model handle', tool: 'Tool object', pack: 'Pack object', task: 'task handle', result: 'task result' };

/**
 * @param {string} text docs/reference.md
 * @returns {{ name: string, signature: string, doc: string, anchor: string, global: boolean, unavailable: boolean, kind: string }[]}
 */
export function referenceEntries(text) {
  const lines = text.split('\n');
  const entries = [];
  let fence = false;
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*(`{3,}|~{3,})/.test(lines[i])) fence = !fence;
    if (fence) continue;
    const h = /^#{2,6}\s+`([^`]+)`(.*)$/.exec(lines[i]);
    const own = /^Lua's own:/.exec(lines[i]);
    if (h) {
      const signature = h[1].replace(/^messages:/, 'messages:');
      const name = /^[A-Za-z_]\w*(?:[.:][A-Za-z_]\w*)*/.exec(signature)[0].replace(/:/g, '.');
      const paragraphs = [];
      let para = [];
      for (let j = i + 1; j < lines.length && !/^#{1,6}\s/.test(lines[j]); j++) {
        if (/^\s*(`{3,}|~{3,})/.test(lines[j])) {
          // A code example ends the summary: hover text stays prose.
          break;
        }
        if (lines[j].trim() === '') {
          if (para.length) paragraphs.push(para.join(' '));
          para = [];
          if (paragraphs.length >= 2) break;
        } else if (!/^\s*\|/.test(lines[j])) para.push(lines[j]);
      }
      if (para.length && paragraphs.length < 2) paragraphs.push(para.join(' '));
      const owner = name.split('.')[0];
      entries.push({
        name,
        signature,
        doc: plain(paragraphs.join('\n\n')).slice(0, 700),
        anchor: anchorOf(lines[i].replace(/^#+\s+/, '')),
        global: !Object.hasOwn(OWNERS, owner),
        unavailable: /\(not available\)\s*$/.test(h[2]),
        kind: /\(/.test(signature) ? 'function' : name.includes('.') ? 'property' : 'variable',
      });
    } else if (own) {
      let para = lines[i].slice(own[0].length);
      while (i + 1 < lines.length && lines[i + 1].trim() !== '' && !/^#/.test(lines[i + 1])) para += ` ${lines[++i]}`;
      for (const m of para.matchAll(/`([^`]+)`/g)) {
        entries.push({ name: m[1], signature: m[1], doc: "Lua's own (the standard library, as in Lua 5.5).", anchor: 'luas-own-library', global: true, unavailable: false, kind: 'function' });
      }
    }
  }
  return entries;
}

export function readReference(path) {
  return referenceEntries(readFileSync(path, 'utf8'));
}
