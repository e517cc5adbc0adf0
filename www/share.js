// Share links: the prompt, its arguments and seed in the URL fragment (`#z=`, deflate-raw then
// base64url of the JSON { source, args, seed }), so a link needs no server and says nothing to one.

function toBase64Url(bytes) {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const raw = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

async function transform(bytes, stream) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}

/** The link that opens `prompt` ({ source, args, seed }) on this page. */
export async function shareLink(prompt) {
  const json = new TextEncoder().encode(JSON.stringify({ source: prompt.source, args: prompt.args, seed: prompt.seed }));
  const packed = await transform(json, new CompressionStream('deflate-raw'));
  return `${location.origin}${location.pathname}#z=${toBase64Url(packed)}`;
}

/** The prompt in `hash`, null when it holds none; throws when it holds a broken one. */
export async function fromLink(hash) {
  const m = /^#z=([A-Za-z0-9_-]+)$/.exec(hash);
  if (!m) return null;
  const json = await transform(fromBase64Url(m[1]), new DecompressionStream('deflate-raw'));
  const value = JSON.parse(new TextDecoder().decode(json));
  if (typeof value?.source !== 'string') throw new Error('the link holds no prompt');
  return { source: value.source, args: String(value.args ?? ''), seed: String(value.seed ?? '') };
}
