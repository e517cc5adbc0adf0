// @ts-check
// How a journal names what it was recorded for: a short hash of text, and a prompt's digest by its
// parts, so that a replay of a changed prompt is refused naming the part that changed.

/** A 53-bit string hash as 14 hex digits (cyrb53): change detection, not security. */
export function digest(text, seed = 0) {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, '0');
}

/**
 * The source's digest and one digest per part (the frontmatter, the H1 body, each `##` section),
 * so that a changed prompt is reported by the part that changed. The split only names parts in
 * messages; the whole-source digest decides.
 */
export function sourceDigest(source) {
  /** @type {{ heading: string, lines: string[] }[]} */
  const parts = [];
  /** @type {{ heading: string, lines: string[] }} */
  let current = { heading: '', lines: [] };
  let fence = null;
  let inFront = source.startsWith('---\n') || source.startsWith('---\r\n');
  if (inFront) current.heading = 'the frontmatter';
  const lines = source.split('\n');
  for (const [i, line] of lines.entries()) {
    if (inFront && i > 0 && /^(---|\.\.\.)\s*$/.test(line)) {
      current.lines.push(line);
      parts.push(current);
      current = { heading: 'the body', lines: [] };
      inFront = false;
      continue;
    }
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (!inFront && marker) {
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
    }
    const heading = !inFront && fence === null && /^(#{1,2})\s+(.*)$/.exec(line);
    if (heading) {
      if (current.lines.length) parts.push(current);
      const title = heading[2].trim();
      current = { heading: heading[1] === '#' ? `the H1 body '${title}'` : `section '${title}'`, lines: [] };
    }
    current.lines.push(line);
  }
  parts.push(current);
  return {
    hash: digest(source),
    parts: parts.map((p) => ({ name: p.heading || 'the body', hash: digest(p.lines.join('\n')) })),
  };
}

/** What changed between a recorded source digest and the run's (null: nothing). */
export function changedPart(recorded, now) {
  if (recorded.hash === now.hash) return null;
  const was = recorded.parts ?? [];
  for (let i = 0; i < Math.max(was.length, now.parts.length); i++) {
    const a = was[i];
    const b = now.parts[i];
    if (!a) return `${b.name} was added`;
    if (!b) return `${a.name} was removed`;
    if (a.name !== b.name) return `${a.name} became ${b.name}`;
    if (a.hash !== b.hash) return `${a.name} changed`;
  }
  return 'its text changed';
}
